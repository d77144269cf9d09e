// Kernels whose PTX check_ptx.cmake inspects: every `probe_redux_*` kernel must contain
// `redux.sync` (integer <= 32-bit reductions with plus/min/max/and/or/xor), every
// `probe_shfl_*` kernel must not (types and ops redux.sync cannot do).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cuda/functional>
#include <cuda/std/cstdint>
#include <cuda/std/functional>

#include <tilewise/tile/reduce.cuh>

namespace cg = cooperative_groups;

template <unsigned W, class T, class Op>
__device__ void probe(T const* in, T* out) {
  auto const tile = cg::tiled_partition<W>(cg::this_thread_block());
  out[threadIdx.x] = tilewise::tile::reduce(tile, in[threadIdx.x], Op{});
}

#define PROBE(NAME, W, T, OP) \
  extern "C" __global__ void NAME(T const* in, T* out) { probe<W, T, OP>(in, out); }

PROBE(probe_redux_plus_i32, 32, int, cuda::std::plus<>)
PROBE(probe_redux_plus_u32, 32, unsigned, cuda::std::plus<unsigned>)
PROBE(probe_redux_min_i32, 32, int, cuda::minimum<>)
PROBE(probe_redux_max_u32, 32, unsigned, cuda::maximum<>)
PROBE(probe_redux_and_u32, 32, unsigned, cuda::std::bit_and<>)
PROBE(probe_redux_or_i32, 32, int, cuda::std::bit_or<>)
PROBE(probe_redux_xor_u32, 32, unsigned, cuda::std::bit_xor<>)
PROBE(probe_redux_cg_plus_i32, 32, int, cg::plus<int>)
PROBE(probe_redux_cg_less_i32, 32, int, cg::less<int>)
PROBE(probe_redux_plus_i32_w16, 16, int, cuda::std::plus<>)
PROBE(probe_redux_max_i8, 32, cuda::std::int8_t, cuda::maximum<>)
PROBE(probe_shfl_plus_f32, 32, float, cuda::std::plus<>)
PROBE(probe_shfl_plus_i64, 32, long long, cuda::std::plus<>)
PROBE(probe_shfl_plus_long_on_int, 32, int, cuda::std::plus<long long>)

extern "C" __global__ void probe_redux_coalesced_plus_i32(int const* in, int* out) {
  if (in[threadIdx.x] > 0) {
    out[threadIdx.x] = tilewise::tile::reduce(cg::coalesced_threads(), in[threadIdx.x], cuda::std::plus<>{});
  }
}
