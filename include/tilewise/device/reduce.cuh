/// @file
/// @brief device::reduce: host-launched reduction of num_items elements in ONE kernel launch,
///        bitwise run-to-run deterministic (floating point included) for a given num_items.
///
/// How (detail::reduce_kernel): a grid of at most one wave of blocks (occupancy x SMs) splits
/// the input into equal contiguous ranges; each thread folds its part of its block's range in
/// registers (16-byte loads when the input is a raw pointer; an unaligned head is peeled off),
/// the block reduces the thread values (block::reduce) and publishes the block's value as a
/// record in temp storage (detail::tile_status). The block with the highest index then waits for
/// the records of all the others, folds them in block order and writes `init op total`. No
/// float atomics, no second kernel, no clearing of temp storage (records carry a launch epoch).
#pragma once

#include <cooperative_groups.h>

#include <cuda/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/block/reduce.cuh>
#include <tilewise/detail/block/plan.cuh>
#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/block/storage.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/look_back.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/device/warp_stage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// How the input is split: `head` elements before the first 16-byte boundary (raw pointers),
/// then `units` vectors of `vec_elems` (or single elements), `per_block` units per block, then
/// the `tail` elements after the last whole vector.
struct reduce_split {
  long long units;
  long long per_block;
  unsigned head;
  unsigned tail;
  unsigned vec_elems;
  unsigned blocks;
};

template <class Tuning, class InIt, class OutIt, class T, class Op>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.block)
  reduce_kernel(InIt in, OutIt out, long long n, Op op, T init, reduce_split split, tile_status<T> status) {
  constexpr unsigned B = Tuning::value.block;
  constexpr unsigned U = Tuning::value.unroll;
  using value_t        = maybe_t<Op, T>;
  constexpr bool known = has_identity<Op, T>;
  using block_reduce_t = block::reduce<cuda::std::conditional_t<known, T, value_t>, B>;
  __shared__ typename block_reduce_t::temp_storage tmp;

  auto const block   = cg::this_thread_block();
  unsigned const t   = threadIdx.x;
  unsigned const b   = blockIdx.x;
  long long const lo = static_cast<long long>(b) * split.per_block;
  long long const hi = lo + split.per_block < split.units ? lo + split.per_block : split.units;
  accumulator<T, Op> a;

  using in_value = iter_value_t<InIt>;
  constexpr unsigned V = vec_elems<in_value>;
  if constexpr (V > 1 && cuda::std::is_pointer_v<InIt>) {  // as split_reduce decided
    if (split.vec_elems == V) {  // 16-byte vectors from in + head
      using vec_t    = vec<in_value, V>;
      vec_t const* p = reinterpret_cast<vec_t const*>(in + split.head);
      long long k    = lo + t;
      for (; k + (U - 1) * B < hi; k += U * B) {
        vec_t v[U];
#pragma unroll
        for (unsigned u = 0; u < U; ++u) {
          v[u] = p[k + u * B];
        }
#pragma unroll
        for (unsigned u = 0; u < U; ++u) {
#pragma unroll
          for (unsigned i = 0; i < V; ++i) {
            a.add(T(v[u].e[i]), op);
          }
        }
      }
      for (; k < hi; k += B) {
        vec_t const v = p[k];
#pragma unroll
        for (unsigned i = 0; i < V; ++i) {
          a.add(T(v.e[i]), op);
        }
      }
    }
  }
  if (split.vec_elems == 1) {  // single elements from in + head
    long long k = lo + t;
    for (; k + (U - 1) * B < hi; k += U * B) {
      T v[U];
#pragma unroll
      for (unsigned u = 0; u < U; ++u) {
        v[u] = T(in[split.head + k + u * B]);
      }
#pragma unroll
      for (unsigned u = 0; u < U; ++u) {
        a.add(v[u], op);
      }
    }
    for (; k < hi; k += B) {
      a.add(T(in[split.head + k]), op);
    }
  }
  // The head (before the first vector) goes to block 0, the tail to the last block.
  if (b == 0 && t < split.head) {
    a.add(T(in[t]), op);
  }
  if (b == split.blocks - 1 && t < split.tail) {
    a.add(T(in[n - split.tail + t]), op);
  }

  value_t mine;
  if constexpr (known) {
    mine = {block_reduce_t{tmp}(block, a.acc.value, op)};
  } else {
    mine = block_reduce_t{tmp}(block, a.acc, maybe_op<T, Op>{op});
  }
  if (b + 1 < split.blocks) {
    if (t == 0) {  // "partial" marks a block without elements (none by construction)
      status.publish(b, mine.has() ? status_inclusive : status_partial, mine.value);
    }
    return;
  }
  // The last block: fold the records of blocks [0, blocks - 1) in order, thread t taking a
  // contiguous run of them, then its own value.
  unsigned const others = split.blocks - 1;
  unsigned const per    = (others + B - 1) / B;
  accumulator<T, Op> r;
  for (unsigned j = t * per; j < others && j < (t + 1) * per; ++j) {
    status_entry<T> const e = status.wait(j);
    if (tile_status<T>::is_inclusive(e)) {
      r.add(e.value, op);
    }
  }
  value_t all;
  if constexpr (known) {
    all = {block_reduce_t{tmp}(block, r.acc.value, op)};
  } else {
    all = block_reduce_t{tmp}(block, r.acc, maybe_op<T, Op>{op});
  }
  if (t == 0) {
    all  = join<Op, T>(all, mine, op);
    *out = all.has() ? T(op(init, all.value)) : init;
  }
}

/// The split of num_items over at most `blocks_max` blocks: every block gets at least one
/// round of `block * unroll` units, so small inputs use few blocks.
template <class Tuning, class InIt>
reduce_split split_reduce(InIt in, long long n, long long blocks_max) {
  using in_value = iter_value_t<InIt>;
  reduce_split s{};
  s.vec_elems = 1;
  if constexpr (vec_elems<in_value> > 1 && std::is_pointer_v<InIt>) {
    constexpr unsigned V    = vec_elems<in_value>;
    auto const addr         = reinterpret_cast<std::uintptr_t>(in);
    if (addr % sizeof(in_value) == 0) {
      long long const head = static_cast<long long>(((16 - addr % 16) % 16) / sizeof(in_value));
      if (n >= head + V) {
        s.vec_elems = V;
        s.head      = static_cast<unsigned>(head);
        s.units     = (n - head) / V;
        s.tail      = static_cast<unsigned>(n - head - s.units * V);
      }
    }
  }
  if (s.vec_elems == 1) {
    s.units = n;
  }
  long long const round = static_cast<long long>(Tuning::value.block) * Tuning::value.unroll;
  long long blocks      = cuda::ceil_div(s.units, round);
  blocks                = blocks < 1 ? 1 : blocks > blocks_max ? blocks_max : blocks;
  s.per_block           = cuda::ceil_div(s.units, blocks);
  s.blocks              = static_cast<unsigned>(s.units == 0 ? 1 : cuda::ceil_div(s.units, s.per_block));
  return s;
}

template <class Tuning, class InIt, class OutIt, class T, class Op>
cudaError_t dispatch_reduce(void* temp, std::size_t& temp_bytes, InIt in, OutIt out, long long num_items, Op op,
                            T init, cudaStream_t stream) {
  if (num_items < 0) {
    return cudaErrorInvalidValue;
  }
  auto const kernel = reduce_kernel<Tuning, InIt, OutIt, T, Op>;
  static resident_cache cache;
  int wave = 0;
  TILEWISE_RETURN_IF_ERROR(cache.get(kernel, Tuning::value.block, 0, wave));
  long long const chunks =
    cuda::ceil_div(num_items * static_cast<long long>(sizeof(iter_value_t<InIt>)), Tuning::value.chunk_bytes);
  long long const fewest     = static_cast<long long>(wave) * Tuning::value.min_waves;
  long long const most       = static_cast<long long>(wave) * Tuning::value.max_waves;
  long long const blocks_max = chunks < fewest ? fewest : chunks > most ? most : chunks;
  reduce_split const split   = split_reduce<Tuning>(in, num_items, blocks_max);
  temp_layout layout;
  tile_status_parts<T> const records(layout, split.blocks);
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query) {
    return cudaSuccess;
  }
  if ((num_items > 0 && null_pointer(in)) || null_pointer(out)) {
    return cudaErrorInvalidValue;
  }
  tile_status<T> status;
  TILEWISE_RETURN_IF_ERROR(records.prepare(temp, stream, status));  // clears the tags when captured
  kernel<<<split.blocks, Tuning::value.block, 0, stream>>>(in, out, num_items, op, init, split, status);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Reduction: `*out = init op in[0] op ... op in[num_items - 1]`.
/// @tparam InputIt  random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                  iterators); elements are converted to T
/// @tparam OutputIt iterator to one T in device memory
/// @tparam T        the accumulator type (that of `init`), any trivially copyable type
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the first input element
/// @param out        where the result is written (one T, in device memory)
/// @param num_items  number of elements, 0 <= num_items (64-bit); 0 writes `init`
/// @param op         associative and commutative binary functor on T
/// @param init       combined on the left of the reduction; the result when num_items == 0
/// @param stream     the stream of the launch
/// @return cudaSuccess, cudaErrorInvalidValue for a null pointer, a negative num_items or too
///         small a `temp_bytes`, or the launch's error
/// @note Asynchronous in `stream`; never synchronizes; one kernel launch. For a fixed num_items
///       on one GPU the order of combination is fixed, so floating-point results are bitwise
///       identical from run to run. `temp` needs no initialisation: any contents will do
///       (compute-sanitizer's initcheck is told so through NVTX, and stays quiet).
template <class InputIt, class OutputIt, class Op, class T>
cudaError_t reduce(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items, Op op,
                   T init, cudaStream_t stream = 0) {
  // Contiguous iterators (thrust::device_ptr, device_vector's iterators) go in as the raw pointers
  // they wrap, so the kernel takes its vector path.
  return detail::dispatch_reduce<detail::reduce_tuned>(temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in),
                                                           thrust::try_unwrap_contiguous_iterator(out), num_items, op,
                                                           init, stream);
}

}  // namespace tilewise::device

#include <tilewise/detail/device/extern_reduce.cuh>
