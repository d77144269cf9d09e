/// @file
/// @brief The single-pass tile skeleton the device-wide scans and compactions are written on: one
///        tile of Block x Items elements per block, held in shared memory (detail::warp_stage);
///        load -> per-thread totals -> block exclusive scan of the totals -> the tile's prefix
///        (decoupled look-back, or a reservation) -> finish. Each algorithm supplies the steps'
///        bodies; the skeleton fixes their order, the tile's geometry and the shared memory.
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/type_traits>

#include <tilewise/block/scan.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/warp_stage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/maybe.cuh>

namespace tilewise::detail {

/// Block-wide exclusive scan of the thread totals (empty before thread 0) and their aggregate.
template <unsigned Block, class T, class Op>
struct totals_scan {
  static constexpr bool known = has_identity<Op, T>;
  using value_t               = maybe_t<Op, T>;
  using scan_t = block::exclusive_scan<cuda::std::conditional_t<known, T, value_t>, Block>;
  using temp_storage = typename scan_t::temp_storage;

  TILEWISE_DEVICE static value_t run(temp_storage& tmp, T total, Op& op, T& aggregate) {
    auto const block = cooperative_groups::this_thread_block();
    if constexpr (known) {
      return {scan_t{tmp}(block, total, op, identity<kind_v<Op, T>, T>(), aggregate)};
    } else {
      value_t agg;
      value_t const r = scan_t{tmp}(block, value_t{total, true}, maybe_op<T, Op>{op}, value_t{total, false}, agg);
      aggregate       = agg.value;
      return r;
    }
  }
};

/// This block's tile of a launch over n elements, and this warp's segment of it: elements
/// [seg, seg + count) of the input, count <= 32 * Items.
template <unsigned Block, unsigned Items>
struct tile_span {
  static constexpr long long size = static_cast<long long>(Block) * Items;
  long long index;  ///< the tile (blockIdx.x)
  long long base;   ///< its first element
  unsigned warp;
  long long seg;    ///< this warp's first element
  unsigned count;   ///< this warp's elements
  bool whole;       ///< the tile has all `size` elements

  TILEWISE_DEVICE explicit tile_span(long long n)
      : index(blockIdx.x), base(index * size), warp(threadIdx.x / 32),
        seg(base + static_cast<long long>(warp) * 32 * Items) {
    long long const left = n - seg;
    count                = left <= 0 ? 0u : left >= 32 * Items ? 32u * Items : static_cast<unsigned>(left);
    whole                = n - base >= size;
  }
};

/// The skeleton: `Total` per thread combined by `Op` (the block scan's operator), the tile of T in
/// `stage`. run() calls, in order and on every thread:
/// - `load(stage, tile)`: fill this warp's stage (warp_stage::load);
/// - `totals(stage, tile) -> Total`: this thread's total;
/// - the block exclusive scan of the totals: `before` (maybe_t; empty on thread 0) and the tile's
///   `aggregate`;
/// - `prefix(tile, aggregate) -> P`: the combination of the earlier tiles (block-collective: the
///   look-back, detail::look_back_prefix, or a reservation), on every thread; it may change
///   `aggregate` (an exclusive scan's tile 0 folds in `init`);
/// - `finish(stage, tile, prefix, before, aggregate)`: the tile's results.
template <unsigned Block, unsigned Items, class T, class Total, class Op>
struct single_pass {
  static_assert(Block % 32 == 0, "whole warps");
  using tile_t       = tile_span<Block, Items>;
  using stage_t      = warp_stage<T, Items>;
  using scan_t       = totals_scan<Block, Total, Op>;
  using before_t     = typename scan_t::value_t;
  using scan_storage = typename scan_t::temp_storage;

  /// `stages`: Block / 32 warp stages and `scan_tmp`, in shared memory (two arrays of their own,
  /// so that each keeps its own alignment).
  template <class Load, class Totals, class Prefix, class Finish>
  TILEWISE_DEVICE static void run(stage_t* stages, scan_storage& scan_tmp, long long n, Op& op, Load&& load,
                                  Totals&& totals, Prefix&& prefix, Finish&& finish) {
    tile_t const tile(n);
    stage_t& stage = stages[tile.warp];
    load(stage, tile);
    Total aggregate;
    before_t const before = scan_t::run(scan_tmp, totals(stage, tile), op, aggregate);
    auto const p          = prefix(tile, aggregate);
    finish(stage, tile, p, before, aggregate);
  }
};

}  // namespace tilewise::detail
