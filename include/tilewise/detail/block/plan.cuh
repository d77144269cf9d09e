/// @file
/// @brief How a block primitive joins its tile totals: one or two barriers or raking, and how many
///        lanes share the combine, chosen per shape from the block tuning table.
#pragma once

#include <cuda/std/bit>

#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

/// Lanes that share a combine of `units` items of `unit_bytes` each: every lane folds at most
/// `lane_bytes` (at least one unit), a power of two no larger than `cap`.
constexpr unsigned combine_lanes(unsigned units, unsigned unit_bytes, unsigned cap, unsigned lane_bytes) {
  unsigned const per_lane = lane_bytes / unit_bytes > 0 ? lane_bytes / unit_bytes : 1;
  unsigned const lanes    = cuda::std::bit_ceil((units + per_lane - 1) / per_lane);
  return lanes < cap ? lanes : cap;
}

/// The strategy of one primitive: one or two barriers, and how many lanes share the combine.
/// `raking` (scans, two barriers): the combine sees every thread as a tile of its own: each
/// thread stores its value, warp 0 scans them all (`lanes` lanes, each a contiguous run of
/// BlockSize / lanes values in registers) and stores every prefix back in place; no shuffles
/// outside warp 0, and W does not matter.
struct block_plan {
  bool one_barrier;
  unsigned lanes;
  bool raking = false;
};

template <class T, unsigned BlockSize, unsigned W>
struct block_plans {
  using shape = block_shape<BlockSize, W>;
  static constexpr block_tuning tune = block_tuned;

  static constexpr block_plan reduce_one{
    true, combine_lanes(shape::tiles, sizeof(T), shape::lane_cap, tune.reduce_one_barrier_lane_bytes)};
  static constexpr block_plan reduce_two{
    false, combine_lanes(shape::tiles, sizeof(T), shape::lane_cap, tune.reduce_two_barrier_lane_bytes)};
  /// One barrier: lane l of each warp takes warp l's totals (a single lane for a few warps).
  static constexpr block_plan scan_one{
    true, shape::warps <= 4 ? 1u : (cuda::std::bit_ceil(shape::warps) < shape::lane_cap ? cuda::std::bit_ceil(shape::warps)
                                                                                         : shape::lane_cap)};
  static constexpr block_plan scan_two{
    false, combine_lanes(shape::tiles, sizeof(T), shape::lane_cap, tune.scan_two_barrier_lane_bytes)};
  /// Raking: the 32 lanes of warp 0 each take BlockSize / 32 values (whole warps only).
  static constexpr bool can_rake = BlockSize % 32 == 0;
  static constexpr block_plan scan_rake{false, 32, true};

  static constexpr block_plan reduce = shape::tiles <= tune.reduce_one_barrier_max_tiles ? reduce_one : reduce_two;
  static constexpr block_plan scan   = shape::warps >= tune.scan_one_barrier_min_warps ||
                                           shape::warps <= tune.scan_one_barrier_max_warps
                                         ? scan_one
                                       : can_rake && shape::warps <= tune.scan_raking_max_warps ? scan_rake
                                                                                                : scan_two;
};

}  // namespace tilewise::detail
