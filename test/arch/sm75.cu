// Must compile for sm_75 (Turing), below the sm_80 features tilewise uses when it can (redux.sync
// in tile::reduce, cp.async in the device scans' loads): every such use needs its fallback. The
// CTest compiles this file with -arch=sm_75; nothing runs.
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/tilewise.cuh>

namespace cg = cooperative_groups;

__global__ void tile_and_block(int const* in, int* out) {
  auto const tile = cg::tiled_partition<32>(cg::this_thread_block());
  int const v     = in[threadIdx.x];
  using block_scan = tilewise::block::exclusive_scan<int, 256>;
  __shared__ block_scan::temp_storage tmp;
  out[threadIdx.x] = tilewise::tile::reduce(tile, v, cuda::std::plus<>{}) +
                     block_scan{tmp}(cg::this_thread_block(), v, cuda::std::plus<>{}, 0);
}

// The device-wide calls instantiate their kernels: scans of 1-, 4- and 8-byte values (16-byte
// loads of aligned raw pointers), a scan through a converting input, and reduce.
cudaError_t device_calls(void* temp, std::size_t& bytes, signed char const* c, int const* i, double const* d,
                         signed char* oc, int* oi, double* od, long long n) {
  cudaError_t e = tilewise::device::inclusive_scan(temp, bytes, c, oc, n, cuda::std::plus<>{});
  e = e != cudaSuccess ? e : tilewise::device::inclusive_scan(temp, bytes, i, oi, n, cuda::std::plus<>{});
  e = e != cudaSuccess ? e : tilewise::device::exclusive_scan(temp, bytes, d, od, n, cuda::std::plus<>{}, 0.0);
  e = e != cudaSuccess ? e : tilewise::device::exclusive_scan(temp, bytes, c, oi, n, cuda::std::plus<>{}, 0);
  e = e != cudaSuccess ? e : tilewise::device::reduce(temp, bytes, d, od, n, cuda::std::plus<>{}, 0.0);
  return e;
}
