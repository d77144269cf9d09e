// Must NOT compile: a tile width that is not a power of two, or wider than one warp.
// The CTest passes only if the compiler prints tilewise's rule; the CONTROL build (W = 8)
// must compile, which proves the failure comes from W alone.
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/tilewise.cuh>

#ifndef BAD_WIDTH
#  define BAD_WIDTH 3
#endif
#ifdef CONTROL
constexpr unsigned width = 8;
#else
constexpr unsigned width = BAD_WIDTH;
#endif

__device__ int use(cooperative_groups::thread_block_tile<width, cooperative_groups::thread_block> const& tile, int v,
                   int* out, unsigned* cursor) {
  tilewise::tile::histogram(tile, cursor, v);
  return tilewise::tile::reduce(tile, v, cuda::std::plus<>{}) + tilewise::tile::inclusive_scan(tile, v, cuda::std::plus<>{}) +
         tilewise::tile::compact(tile, v > 0, v, out) + tilewise::tile::compact_append(tile, v > 0, v, out, cursor) +
         tilewise::tile::atomic_add(tile, out, v) + tilewise::tile::match_any(tile, v) +
         tilewise::tile::reduce_by_key(tile, v, v, cuda::std::plus<>{}).value;
}
