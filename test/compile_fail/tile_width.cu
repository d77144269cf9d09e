// Must NOT compile: a tile width that is not a power of two, or wider than one warp.
// The CTest passes only if the compiler prints tilewise's rule; the CONTROL build (W = 8)
// must compile, which proves the failure comes from W alone.
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

#ifndef BAD_WIDTH
#  define BAD_WIDTH 3
#endif
#ifdef CONTROL
constexpr unsigned width = 8;
#else
constexpr unsigned width = BAD_WIDTH;
#endif

__device__ int use(cooperative_groups::thread_block_tile<width, cooperative_groups::thread_block> const& tile, int v) {
  return tilewise::tile::reduce(tile, v, cuda::std::plus<>{}) + tilewise::tile::inclusive_scan(tile, v, cuda::std::plus<>{});
}
