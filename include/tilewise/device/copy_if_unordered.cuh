/// @file
/// @brief device::copy_if_unordered: stream compaction of num_items elements whose output order
///        is unspecified (the same multiset as device::copy_if's), without a look-back.
///
/// How: device::copy_if's kernel (detail::select_kernel: the tile staged in shared memory, row
/// ballots, the block scan of the counts, kept items stored row by row), with the tile's offset
/// reserved by one atomic add per block on a cursor in temp storage (detail::reserve_any_order)
/// instead of the look-back: no tile waits for another's count. Within a tile the order is kept;
/// tiles land in the order their atomics do. The block that finishes last writes the count.
#pragma once

#include <cstddef>
#include <cstdint>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/gpu_word.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/device/copy_if.cuh>

namespace tilewise::detail {

/// Any order: one atomic add per block on a cursor reserves the tile's output range. The cursor
/// lives in temp storage and needs no clearing: block 0 sets it (and the count of blocks done) and
/// then publishes the launch's epoch with release; every other block waits for that epoch
/// (acquire) before its atomics. Blocks wait only for block 0, which is dispatched first. The
/// block whose add of "blocks done" completes the grid reads the cursor and writes the count.
template <class Offset>
struct reserve_any_order {
  using offset_t = Offset;
  struct temp_storage {
    unsigned long long base;
    unsigned long long total;
    bool last;
  };
  unsigned long long* words;  ///< [0] the cursor, [1] blocks done, [2] the epoch they were set in
  unsigned long long epoch;

  static constexpr std::size_t bytes = 3 * sizeof(unsigned long long);

  TILEWISE_DEVICE reservation<Offset> run(temp_storage& tmp, long long tile, unsigned count) const {
    if (threadIdx.x == 0) {
      unsigned long long base = 0, total = count;
      bool last                = gridDim.x == 1;
      if (tile == 0) {
        gpu_word::store_relaxed(words, count);
        gpu_word::store_relaxed(words + 1, 1);
        gpu_word::store_release(words + 2, epoch);
      } else {
        for (unsigned k = 0; gpu_word::load_acquire(words + 2) != epoch; ++k) {
          tile_status<Offset>::back_off(k);
        }
        base = gpu_word::add_relaxed(words, count);
        // acq_rel: the last add sees every block's cursor add (each came before its own add here)
        last = gpu_word::add_acq_rel(words + 1, 1) == gridDim.x - 1u;
        if (last) {
          total = gpu_word::load_relaxed(words);
        }
      }
      tmp = {base, total, last};
    }
    __syncthreads();
    return {Offset(tmp.base), Offset(tmp.total), threadIdx.x == 0 && tmp.last};
  }
};

/// The seam of the unordered compaction (as dispatch_copy_if).
template <class Tuning, class InIt, class Keep, class OutIt, class NumIt>
cudaError_t dispatch_copy_if_unordered(void* temp, std::size_t& temp_bytes, InIt in, Keep keep, OutIt out,
                                       NumIt num_out, long long num_items, cudaStream_t stream) {
  long long tiles = 0;
  TILEWISE_RETURN_IF_ERROR((select_tiles<Tuning, InIt, Keep>(num_items, tiles)));
  temp_layout layout;
  std::size_t const words = layout.add(reserve_any_order<unsigned>::bytes);
  bool launch             = false;
  TILEWISE_RETURN_IF_ERROR(select_checks(temp, temp_bytes, layout, in, keep, out, num_out, num_items, stream, launch));
  if (!launch) {
    return cudaSuccess;
  }
  auto* const w = temp_layout::at<unsigned long long>(temp, words);
  TILEWISE_RETURN_IF_ERROR(prepare_tagged_part(w, reserve_any_order<unsigned>::bytes, stream));
  unsigned const grid = static_cast<unsigned>(tiles);
  if (narrow_offsets(num_items)) {
    select_kernel<Tuning><<<grid, Tuning::value.block, 0, stream>>>(in, keep, out, num_out, num_items,
                                                                    reserve_any_order<unsigned>{w, next_epoch()});
  } else {
    select_kernel<Tuning><<<grid, Tuning::value.block, 0, stream>>>(
      in, keep, out, num_out, num_items, reserve_any_order<unsigned long long>{w, next_epoch()});
  }
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Compaction in any order: copies the elements `pred` accepts to out[0, count) (the same
///        multiset as copy_if, order unspecified) and writes count to `*num_selected_out`.
/// @tparam InputIt       random-access iterator over any trivially copyable T
/// @tparam OutputIt      random-access output iterator accepting T
/// @tparam NumSelectedIt random-access output iterator to an integer type
/// @tparam Pred          unary predicate on T, callable on the device
/// @param temp             device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes       size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in               the elements in[0, num_items)
/// @param out              the kept elements, out[0, count), in any order; must not overlap the input
/// @param num_selected_out where the count goes (device memory)
/// @param num_items        number of elements, 0 <= num_items (64-bit)
/// @param pred             keeps in[i] when pred(in[i]) is true
/// @param stream           the stream the work is queued in
/// @return cudaSuccess, cudaErrorInvalidValue for a null `num_selected_out`, a null `in` or `out`
///         with num_items > 0, a negative num_items or too small a `temp_bytes`, or the launch's
///         error
/// @note Asynchronous in `stream`; never synchronizes; one kernel launch (a memset before it
///       inside stream capture). The order may differ from run to run. num_items == 0 writes 0
///       to `*num_selected_out` and nothing else; out[count, num_items) is never written.
template <class InputIt, class OutputIt, class NumSelectedIt, class Pred>
cudaError_t copy_if_unordered(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out,
                              NumSelectedIt num_selected_out, std::int64_t num_items, Pred pred,
                              cudaStream_t stream = 0) {
  return detail::dispatch_copy_if_unordered<detail::copy_if_tuned>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), detail::keep_if<Pred>{pred},
    thrust::try_unwrap_contiguous_iterator(out), thrust::try_unwrap_contiguous_iterator(num_selected_out), num_items,
    stream);
}

}  // namespace tilewise::device
