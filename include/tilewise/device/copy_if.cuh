/// @file
/// @brief device::copy_if and device::copy_flagged: stable stream compaction of num_items
///        elements, CUB-style two-phase calls, in a single pass over the data.
///
/// How (detail::select_kernel, on the single-pass skeleton detail::single_pass): one block per
/// tile. Each warp copies its segment into shared memory (detail::warp_stage; copy_flagged stages
/// the flags beside it), evaluates the predicate row by row (row m: the segment's items
/// [32 m, 32 m + 32), one per lane) and keeps each row's ballot (detail::row_masks); the block
/// scans the per-thread counts, the tile's output offset comes from the decoupled look-back over
/// the counts (detail::look_back_prefix), and each warp stores its kept items row by row from
/// shared memory: lane l of row m writes to the row's offset plus the popc of the ballot below l,
/// so every store writes one contiguous run. The last tile writes the count.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/look_back.cuh>
#include <tilewise/detail/device/single_pass.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/device/warp_stage.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

/// The compaction's tuning table (detail::copy_if_tuning) resolved for values of type T, with a
/// stage of 1-byte flags beside the values when `Flagged`.
template <class Tuning, class T, bool Flagged>
struct select_params {
  static constexpr copy_if_tuning table = Tuning::value;
  static constexpr unsigned block       = table.block;
  static constexpr unsigned per_tile    = unsigned(table.tile_bytes / (table.block * sizeof(T)));
  static constexpr unsigned plain       = per_tile > 0 ? per_tile : 1u;
  static constexpr unsigned with_flags  = unsigned(table.flagged_tile_bytes / (table.block * (sizeof(T) + 1)));
  static constexpr unsigned flagged     = with_flags >= 16 ? with_flags / 16 * 16 : with_flags > 0 ? with_flags : 1u;
  static constexpr unsigned items       = sizeof(T) > 8 ? table.wide_items
                                          : Flagged     ? (flagged < plain ? flagged : plain)
                                                        : plain;
  static constexpr unsigned min_blocks = sizeof(T) > 8 ? 0u : table.min_blocks;
  static_assert(block % 32 == 0 && items > 0);
};

/// copy_if's selection: the items `pred` accepts.
template <class Pred>
struct keep_if {
  static constexpr bool flagged = false;
  using stage_t                 = char;  // no flags
  Pred pred;
  bool null() const { return false; }
};

/// copy_flagged's selection: in[i] where flags[i] converts to true. The flags are staged as they
/// are when of 1 byte (`cp.async` from a raw pointer), converted to bool otherwise.
template <class FlagIt>
struct keep_flagged {
  static constexpr bool flagged = true;
  using flag_t                  = iter_value_t<FlagIt>;
  using stage_t                 = cuda::std::conditional_t<sizeof(flag_t) == 1, flag_t, bool>;
  FlagIt flags;
  bool null() const { return null_pointer(flags); }
};

/// Which items of a warp's segment are kept, as the ballots of its rows (row m: the items
/// [32 m, 32 m + 32), item 32 m + l on lane l): lane l holds those of rows l, l + 32, ... (word k:
/// row 32 k + l; rows past Items: 0).
template <unsigned Items>
struct row_masks {
  static constexpr unsigned words = (Items + 31) / 32;
  unsigned w[words];

  /// The ballots of a segment of `count` items: kept(m) says whether the lane's item of row m
  /// (item 32 m + lane) is kept, m a constant of the unrolled loop; it is called for the items
  /// below `count` only. A whole segment (every tile's but the last) takes no bound per row.
  template <class Kept>
  TILEWISE_DEVICE void build(unsigned count, Kept&& kept) {
    unsigned const lane = threadIdx.x % 32;
    if (count == 32 * Items) {
      rows(kept);
    } else {
      rows([&](unsigned m) { return 32 * m + lane < count && kept(m); });
    }
  }
  /// Kept items of this lane's rows.
  TILEWISE_DEVICE unsigned count() const {
    unsigned c = 0;
#pragma unroll
    for (unsigned k = 0; k < words; ++k) {
      c += __popc(w[k]);
    }
    return c;
  }
  /// The ballot of row m, on every lane (warp-collective).
  TILEWISE_DEVICE unsigned row(unsigned m) const { return __shfl_sync(0xFFFFFFFFu, w[m / 32], m % 32); }

 private:
  /// One ballot per row of keep(m), kept by lane m mod 32.
  template <class Keep>
  TILEWISE_DEVICE void rows(Keep&& keep) {
    unsigned const lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned k = 0; k < words; ++k) {
      w[k] = 0;
    }
#pragma unroll
    for (unsigned m = 0; m < Items; ++m) {
      unsigned const b = __ballot_sync(0xFFFFFFFFu, keep(m));
      if (lane == m % 32) {
        w[m / 32] = b;
      }
    }
  }
};

/// Stores the kept items of a warp's stage to out[base, base + kept), in order, row by row: a
/// kept lane of row m writes to the row's offset plus the number of kept lanes below it, so each
/// warp-wide store writes one contiguous run. The offsets are Offset arithmetic (32-bit while the
/// counts fit: one wide multiply-add per address). `WarpCompact` first moves the kept items to the
/// front of the stage (in place, row by row: an item only moves down, onto items already read)
/// and stores whole rows. Warp-collective.
template <bool WarpCompact, unsigned Items, class T, class OutIt, class Offset>
TILEWISE_DEVICE void store_kept(warp_stage<T, Items>& stage, row_masks<Items> const& masks, OutIt out, Offset base) {
  unsigned const lane_off = stage.lane_offset();
  unsigned const lane     = threadIdx.x % 32;
  unsigned const below    = (1u << lane) - 1u;
  if constexpr (!WarpCompact) {
#pragma unroll
    for (unsigned m = 0; m < Items; ++m) {  // base: row m's first place
      unsigned const b = masks.row(m);
      T const x        = stage.row_item(lane_off, m);  // read before the test: the form measured (design page)
      if ((b >> lane) & 1u) {
        out[base + Offset(__popc(b & below))] = x;
      }
      base += Offset(__popc(b));
    }
  } else {
    OutIt const o = out + base;
    unsigned at = 0;
#pragma unroll
    for (unsigned m = 0; m < Items; ++m) {
      unsigned const b = masks.row(m);
      bool const kept  = (b >> lane) & 1u;
      T const x        = stage.row_item(lane_off, m);
      __syncwarp();
      if (kept) {
        stage.item(at + __popc(b & below)) = x;
      }
      at += __popc(b);
    }
    stage.store(o, at);
  }
}

/// Where a tile's kept items go: `base` (output offset), and on the one thread of the grid whose
/// `last` is true, the `total` count to write.
template <class Offset>
struct reservation {
  Offset base;
  Offset total;
  bool last;
};

/// Stable: the tile's offset is the count of the tiles before it, by decoupled look-back over
/// Offset records; the last tile writes the total.
template <class Tuning, class Offset>
struct reserve_in_order {
  using offset_t     = Offset;
  using op_t         = cuda::std::plus<>;
  using prefix_t     = look_back_prefix<Tuning, Offset, op_t>;
  using temp_storage = typename prefix_t::temp_storage;
  tile_status<Offset> status;

  TILEWISE_DEVICE reservation<Offset> run(temp_storage& tmp, long long tile, unsigned count) const {
    op_t op;
    Offset const base = prefix_t::run(tmp, status, tile, Offset(count), make_maybe<op_t, Offset>(Offset(0), true), op).value;
    return {base, Offset(base + count), threadIdx.x == 0 && tile == gridDim.x - 1};
  }
};

/// One tile per block on the single-pass skeleton: stage the tile (and the flags), the row ballots
/// and per-thread counts, the block scan of the counts, the tile's offset from `reserve` (look-back
/// or an atomic reservation), then the kept items stored row by row from shared memory.
template <class Tuning, class InIt, class Keep, class OutIt, class NumIt, class Reserve>
TILEWISE_KERNEL void __launch_bounds__(select_params<Tuning, iter_value_t<InIt>, Keep::flagged>::block,
                                       select_params<Tuning, iter_value_t<InIt>, Keep::flagged>::min_blocks)
  select_kernel(InIt in, Keep keep, OutIt out, NumIt num_out, long long n, Reserve reserve) {
  using T            = iter_value_t<InIt>;
  using params       = select_params<Tuning, T, Keep::flagged>;
  constexpr unsigned B = params::block;
  constexpr unsigned I = params::items;
  using count_op     = cuda::std::plus<unsigned>;
  using pass_t       = single_pass<B, I, T, unsigned, count_op>;
  using tile_t       = typename pass_t::tile_t;
  using stage_t      = typename pass_t::stage_t;
  using offset_t     = typename Reserve::offset_t;
  using flag_stage_t = cuda::std::conditional_t<Keep::flagged, warp_stage<typename Keep::stage_t, I>, char>;

  __shared__ stage_t stages[B / 32];
  __shared__ flag_stage_t flag_stages[Keep::flagged ? B / 32 : 1];
  __shared__ typename pass_t::scan_storage scan_tmp;
  __shared__ typename Reserve::temp_storage reserve_tmp;

  count_op op;
  row_masks<I> masks;
  pass_t::run(
    stages, scan_tmp, n, op,
    [&](stage_t& stage, tile_t const& tile) {
      if constexpr (Keep::flagged) {  // the flags' loads go out while the values' are in flight
        stage.load(in + tile.seg, tile.count, T{},
                   [&] { flag_stages[tile.warp].load(keep.flags + tile.seg, tile.count, {}); });
      } else {
        stage.load(in + tile.seg, tile.count, T{});
      }
    },
    [&](stage_t& stage, tile_t const& tile) {
      if constexpr (Keep::flagged) {
        auto& flags             = flag_stages[tile.warp];
        unsigned const lane_off = flags.lane_offset();
        masks.build(tile.count, [&](unsigned m) { return bool(flags.row_item(lane_off, m)); });
      } else {
        unsigned const lane_off = stage.lane_offset();
        masks.build(tile.count, [&](unsigned m) { return bool(keep.pred(stage.row_item(lane_off, m))); });
      }
      return masks.count();
    },
    [&](tile_t const& tile, unsigned& aggregate) { return reserve.run(reserve_tmp, tile.index, aggregate); },
    [&](stage_t& stage, tile_t const&, reservation<offset_t> const& r, typename pass_t::before_t const& before,
        unsigned) {
      unsigned const warp_base = __shfl_sync(0xFFFFFFFFu, before.value, 0);  // kept by the earlier warps
      store_kept<params::table.warp_compact>(stage, masks, out, offset_t(r.base + warp_base));
      if (r.last) {
        *num_out = r.total;
      }
    });
}

/// num_items == 0: the count is 0.
template <class NumIt>
TILEWISE_KERNEL void select_none_kernel(NumIt num_out) {
  *num_out = 0;
}

/// The grid of a compaction of num_items: one block per tile (count_tiles).
template <class Tuning, class InIt, class Keep>
cudaError_t select_tiles(long long num_items, long long& tiles) {
  using params = select_params<Tuning, iter_value_t<InIt>, Keep::flagged>;
  return count_tiles(num_items, static_cast<long long>(params::block) * params::items, tiles);
}

/// The host steps every compaction takes once its parts of temp storage are in `layout`: the
/// two-phase size check, null pointers (cudaErrorInvalidValue: `num_out` always, the others when
/// there is work) and num_items == 0 (writes the count 0). `launch`: whether the kernel is next.
template <class InIt, class Keep, class OutIt, class NumIt>
cudaError_t select_checks(void* temp, std::size_t& temp_bytes, temp_layout const& layout, InIt in, Keep const& keep,
                          OutIt out, NumIt num_out, long long num_items, cudaStream_t stream, bool& launch) {
  launch     = false;
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query) {
    return cudaSuccess;
  }
  if (null_pointer(num_out) || (num_items > 0 && (any_null(in, out) || keep.null()))) {
    return cudaErrorInvalidValue;
  }
  if (num_items == 0) {
    select_none_kernel<<<1, 1, 0, stream>>>(num_out);
    return cudaPeekAtLastError();
  }
  launch = true;
  return cudaSuccess;
}

/// Offsets of the compactions: 32-bit while every count fits, 64-bit beyond.
inline bool narrow_offsets(long long num_items) { return num_items <= 0xFFFFFFFFll; }

template <class Tuning, class Offset, class InIt, class Keep, class OutIt, class NumIt>
cudaError_t dispatch_copy_if_as(void* temp, std::size_t& temp_bytes, InIt in, Keep keep, OutIt out, NumIt num_out,
                                long long num_items, cudaStream_t stream) {
  long long tiles = 0;
  TILEWISE_RETURN_IF_ERROR((select_tiles<Tuning, InIt, Keep>(num_items, tiles)));
  temp_layout layout;
  tile_status_parts<Offset> const parts(layout, tiles);
  bool launch = false;
  TILEWISE_RETURN_IF_ERROR(select_checks(temp, temp_bytes, layout, in, keep, out, num_out, num_items, stream, launch));
  if (!launch) {
    return cudaSuccess;
  }
  reserve_in_order<Tuning, Offset> reserve;
  TILEWISE_RETURN_IF_ERROR(parts.prepare(temp, stream, reserve.status));
  select_kernel<Tuning><<<static_cast<unsigned>(tiles), Tuning::value.block, 0, stream>>>(in, keep, out, num_out,
                                                                                          num_items, reserve);
  return cudaPeekAtLastError();
}

/// The seam of the stable compactions: `Tuning` is a type whose `value` is a
/// detail::copy_if_tuning (the public calls: detail::copy_if_tuned); `keep` a keep_if or
/// keep_flagged.
template <class Tuning, class InIt, class Keep, class OutIt, class NumIt>
cudaError_t dispatch_copy_if(void* temp, std::size_t& temp_bytes, InIt in, Keep keep, OutIt out, NumIt num_out,
                             long long num_items, cudaStream_t stream) {
  if (narrow_offsets(num_items)) {
    return dispatch_copy_if_as<Tuning, unsigned>(temp, temp_bytes, in, keep, out, num_out, num_items, stream);
  }
  return dispatch_copy_if_as<Tuning, unsigned long long>(temp, temp_bytes, in, keep, out, num_out, num_items, stream);
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Stable compaction: copies the elements `pred` accepts, in order, to out[0, count) and
///        writes count to `*num_selected_out`.
/// @tparam InputIt       random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                       iterators) over any trivially copyable T
/// @tparam OutputIt      random-access output iterator accepting T
/// @tparam NumSelectedIt random-access output iterator to an integer type (a device pointer,
///                       thrust::device_ptr, a device_vector iterator)
/// @tparam Pred          unary predicate on T, callable on the device (device lambdas included)
/// @param temp             device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes       size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in               the elements in[0, num_items)
/// @param out              the kept elements, out[0, count); must not overlap the input
/// @param num_selected_out where the count goes (device memory)
/// @param num_items        number of elements, 0 <= num_items (64-bit)
/// @param pred             keeps in[i] when pred(in[i]) is true
/// @param stream           the stream the work is queued in
/// @return cudaSuccess, cudaErrorInvalidValue for a null `num_selected_out`, a null `in` or `out`
///         with num_items > 0, a negative num_items or too small a `temp_bytes`, or the launch's
///         error
/// @note Asynchronous in `stream`; never synchronizes; one kernel launch (a memset before it
///       inside stream capture). The results are in device memory when the stream gets there;
///       num_items == 0 writes 0 to `*num_selected_out` and nothing else; out[count, num_items)
///       is never written. `temp` needs no initialisation.
template <class InputIt, class OutputIt, class NumSelectedIt, class Pred>
cudaError_t copy_if(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, NumSelectedIt num_selected_out,
                    std::int64_t num_items, Pred pred, cudaStream_t stream = 0) {
  return detail::dispatch_copy_if<detail::copy_if_tuned>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), detail::keep_if<Pred>{pred},
    thrust::try_unwrap_contiguous_iterator(out), thrust::try_unwrap_contiguous_iterator(num_selected_out), num_items,
    stream);
}

/// @brief Stable compaction by flags: copies in[i] for every i with `flags[i]` true (converted to
///        bool), in order, to out[0, count) and writes count to `*num_selected_out`.
/// @tparam InputIt       random-access iterator over any trivially copyable T
/// @tparam FlagIt        random-access iterator over values convertible to bool (uint8_t, bool,
///                       int ...)
/// @tparam OutputIt      random-access output iterator accepting T
/// @tparam NumSelectedIt random-access output iterator to an integer type
/// @param temp             device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes       size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in               the elements in[0, num_items)
/// @param flags            flags[0, num_items): which elements are kept
/// @param out              the kept elements, out[0, count); must not overlap the input
/// @param num_selected_out where the count goes (device memory)
/// @param num_items        number of elements, 0 <= num_items (64-bit)
/// @param stream           the stream the work is queued in
/// @return as copy_if; a null `flags` with num_items > 0 is cudaErrorInvalidValue too
/// @note As copy_if: asynchronous, never synchronizes, one launch, nothing written past the count.
template <class InputIt, class FlagIt, class OutputIt, class NumSelectedIt>
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, InputIt in, FlagIt flags, OutputIt out,
                         NumSelectedIt num_selected_out, std::int64_t num_items, cudaStream_t stream = 0) {
  using flag_it = decltype(thrust::try_unwrap_contiguous_iterator(flags));
  return detail::dispatch_copy_if<detail::copy_if_tuned>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in),
    detail::keep_flagged<flag_it>{thrust::try_unwrap_contiguous_iterator(flags)},
    thrust::try_unwrap_contiguous_iterator(out), thrust::try_unwrap_contiguous_iterator(num_selected_out), num_items,
    stream);
}

}  // namespace tilewise::device

#include <tilewise/detail/device/extern_copy_if.cuh>
