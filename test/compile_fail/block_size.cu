// Must NOT compile: a block size that is not a multiple of the tile width W (BAD_BLOCK = 100 with
// W = 8), or one outside [1, 1024]. The CTest passes only if the compiler prints tilewise's rule;
// the CONTROL build (BlockSize = 96) must compile, which proves the failure comes from BlockSize.
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>

#ifndef BAD_BLOCK
#  define BAD_BLOCK 100
#endif
#ifdef CONTROL
constexpr unsigned block_size = 96;
#else
constexpr unsigned block_size = BAD_BLOCK;
#endif

__global__ void use(int* out) {
  using reduce = tilewise::block::reduce<int, block_size, 8>;
  using scan   = tilewise::block::inclusive_scan<int, block_size, 8>;
  __shared__ typename reduce::temp_storage reduce_tmp;
  __shared__ typename scan::temp_storage scan_tmp;
  auto const block = cooperative_groups::this_thread_block();
  int const v      = int(threadIdx.x);
  out[threadIdx.x] = reduce{reduce_tmp}(block, v, cuda::std::plus<>{}) + scan{scan_tmp}(block, v, cuda::std::plus<>{});
}
