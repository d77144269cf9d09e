/// @file
/// @brief Tuning of the tile scope: one small constexpr table per compute capability.
#pragma once

namespace tilewise::detail {

struct tile_tuning {
  /// Smallest tile width whose integer reductions use one `redux.sync` instead of
  /// log2(W) shuffles (coalesced groups always use it). Measured by bench/tile_bench.
  unsigned redux_min_width;
};

/// sm_80 and newer (`redux.sync` exists from sm_80 on).
inline constexpr tile_tuning tile_tuning_sm80{16};

}  // namespace tilewise::detail

namespace tilewise::detail {

struct histogram_tuning {
  /// tile::histogram groups equal bins with match_any only when at least this many lanes of a
  /// 32-lane tile share one bin with the tile's first lane (scaled by W / 32 for narrower tiles);
  /// below it plain atomics are cheaper. Measured by bench/tile_ops_bench.
  unsigned match_min_share_of_32;
};

inline constexpr histogram_tuning histogram_tuning_sm90{8};

}  // namespace tilewise::detail
