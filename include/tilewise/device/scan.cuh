/// @file
/// @brief device::inclusive_scan and device::exclusive_scan: host-launched prefix scans over
///        num_items elements, CUB-style two-phase calls, in a single pass over the data.
///
/// How (detail::scan_kernel, on the single-pass skeleton detail::single_pass): one block per tile
/// of `block * items` elements. Each warp copies its segment into shared memory with coalesced
/// loads (16-byte `cp.async` when possible), where every thread owns `items` consecutive elements
/// (detail::warp_stage); a thread folds its elements, the block scans the thread totals, the
/// block finds the prefix of all earlier tiles by decoupled look-back (detail::look_back_prefix),
/// every thread rewrites its elements as their prefixes in place, and the warp stores the segment
/// back coalesced. The tile never sits in registers, so more tiles are in flight per
/// multiprocessor. Each element is read once and written once. Tiles only wait for tiles with
/// lower indices.
#pragma once

#include <cuda/std/cstdint>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/look_back.cuh>
#include <tilewise/detail/device/single_pass.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

/// The device scan's tuning table (detail::device_scan_tuning, docs/tuning.md#device-scan)
/// resolved for values of type T under Op.
template <class Tuning, class T, class Op>
struct scan_params {
  static constexpr device_scan_tuning table = Tuning::value;
  static constexpr unsigned block           = table.block;
  static constexpr unsigned items           = table.items != 0 ? table.items
                                              : sizeof(T) <= 8 ? unsigned(table.tile_bytes / (table.block * sizeof(T)))
                                                               : table.wide_items;
  static constexpr unsigned min_blocks = sizeof(T) > 8                             ? table.min_blocks_wide
                                         : sizeof(T) == 8 && !has_identity<Op, T> ? table.min_blocks_flagged8
                                                                                   : table.min_blocks;
  static_assert(items > 0 && block % 32 == 0);
};

/// One tile per block on the single-pass skeleton; `Exclusive` seeds tile 0 with `init`. The tile
/// stays in shared memory (detail::warp_stage) from load to store; the registers hold only the
/// thread's running values. Out-of-range elements of the last tile are copies of its first element
/// and are never written.
template <class Tuning, bool Exclusive, class InIt, class OutIt, class T, class Op>
TILEWISE_KERNEL void __launch_bounds__(scan_params<Tuning, T, Op>::block, scan_params<Tuning, T, Op>::min_blocks)
  scan_kernel(InIt in, OutIt out, long long n, Op op, T init, tile_status<T> status) {
  using params   = scan_params<Tuning, T, Op>;
  using pass_t   = single_pass<params::block, params::items, T, T, Op>;
  using prefix_t = look_back_prefix<Tuning, T, Op>;
  using value_t  = typename prefix_t::value_t;
  using tile_t   = typename pass_t::tile_t;
  using stage_t  = typename pass_t::stage_t;

  __shared__ stage_t stages[params::block / 32];
  __shared__ typename pass_t::scan_storage scan_tmp;
  __shared__ typename prefix_t::temp_storage prefix_tmp;

  pass_t::run(
    stages, scan_tmp, n, op,
    [&](stage_t& stage, tile_t const& tile) {
      // The fill in its own statement: as load()'s argument, ptxas spilled 20 bytes (int64).
      T const fill = tile.whole ? T{} : T(in[tile.base]);
      stage.load(in + tile.seg, tile.count, fill);
    },
    [&](stage_t& stage, tile_t const&) { return stage.fold(op); },
    [&](tile_t const& tile, T& aggregate) {
      if constexpr (Exclusive) {
        if (tile.index == 0) {  // tile 0 knows its inclusive prefix, the others their aggregate
          aggregate = op(init, aggregate);
        }
      }
      return prefix_t::run(prefix_tmp, status, tile.index, aggregate,
                           make_maybe<Op, T>(Exclusive ? init : aggregate, Exclusive), op);
    },
    [&](stage_t& stage, tile_t const& tile, value_t const& prefix, value_t const& before, T const&) {
      maybe_t<Op, T> running = join<Op, T>(prefix, before, op);
      if constexpr (Exclusive) {  // always present: tile 0 starts from init
        stage.transform([&](T const& x) {
          T const y = running.value;
          running   = make_maybe<Op, T>(T(op(running.value, x)), true);
          return y;
        });
      } else {
        stage.transform([&](T const& x) {
          T const y = join_right<Op, T>(running, x, op);
          running   = make_maybe<Op, T>(y, true);
          return y;
        });
      }
      stage.store(out + tile.seg, tile.count);
    });
}

/// Shared by both scans: argument checks, the temp-storage layout, the launch. `Tuning` is a type
/// whose `value` is a detail::device_scan_tuning (the public calls: detail::device_scan_tuned);
/// the host sizes the grid from its shape.
template <class Tuning, bool Exclusive, class InIt, class OutIt, class T, class Op>
cudaError_t dispatch_scan(void* temp, std::size_t& temp_bytes, InIt in, OutIt out, long long num_items, Op op,
                          T init, cudaStream_t stream) {
  using params = scan_params<Tuning, T, Op>;
  long long tiles = 0;
  TILEWISE_RETURN_IF_ERROR(count_tiles(num_items, static_cast<long long>(params::block) * params::items, tiles));
  temp_layout layout;
  tile_status_parts<T> const parts(layout, tiles);
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query || num_items == 0) {
    return cudaSuccess;
  }
  if (any_null(in, out)) {
    return cudaErrorInvalidValue;
  }
  tile_status<T> status;
  TILEWISE_RETURN_IF_ERROR(parts.prepare(temp, stream, status));
  scan_kernel<Tuning, Exclusive>
    <<<static_cast<unsigned>(tiles), params::block, 0, stream>>>(in, out, num_items, op, init, status);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Inclusive prefix scan: `out[i] = in[0] op in[1] op ... op in[i]` for i < num_items.
/// @tparam InputIt  random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                  iterators); the scan runs in its value type T (any trivially copyable type)
/// @tparam OutputIt random-access output iterator accepting T; may equal `in` (in-place)
/// @tparam Op       associative binary functor on T; need not be commutative
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the elements in[0, num_items)
/// @param out        the prefixes out[0, num_items)
/// @param num_items  number of elements, 0 <= num_items (64-bit)
/// @param op         the scan's operator
/// @param stream     the stream the work is queued in
/// @return cudaSuccess, cudaErrorInvalidValue for null pointers with num_items > 0, a negative
///         num_items or too small a `temp_bytes`, or the launch's error
/// @note Asynchronous in `stream`; never synchronizes. One kernel launch (a memset before it
///       inside stream capture); num_items == 0 writes nothing. `temp` needs no initialisation:
///       any contents will do (compute-sanitizer's initcheck is told so through NVTX).
template <class InputIt, class OutputIt, class Op>
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, cudaStream_t stream = 0) {
  using T = detail::iter_value_t<InputIt>;
  // Contiguous iterators (thrust::device_ptr, device_vector's iterators) go in as the raw pointers
  // they wrap, so the kernel takes its vector paths.
  return detail::dispatch_scan<detail::device_scan_tuned, false>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), thrust::try_unwrap_contiguous_iterator(out),
    num_items, op, T{}, stream);
}

/// @brief Exclusive prefix scan: `out[0] = init`, `out[i] = init op in[0] op ... op in[i-1]`.
/// @tparam InputIt  random-access iterator over values convertible to T
/// @tparam OutputIt random-access output iterator accepting T; may equal `in` (in-place)
/// @tparam Op       associative binary functor on T; need not be commutative
/// @tparam T        the scan's value type (that of `init`); the elements are converted to it
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the elements in[0, num_items)
/// @param out        the prefixes out[0, num_items)
/// @param num_items  number of elements, 0 <= num_items (64-bit)
/// @param op         the scan's operator
/// @param init       the value before the first element
/// @param stream     the stream the work is queued in
/// @return as inclusive_scan
/// @note As inclusive_scan: asynchronous, never synchronizes, one launch.
template <class InputIt, class OutputIt, class Op, class T>
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, T init, cudaStream_t stream = 0) {
  return detail::dispatch_scan<detail::device_scan_tuned, true>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), thrust::try_unwrap_contiguous_iterator(out),
    num_items, op, init, stream);
}

}  // namespace tilewise::device

#include <tilewise/detail/device/extern_scan.cuh>
