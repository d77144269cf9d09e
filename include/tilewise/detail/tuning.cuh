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

