/// @file
/// @brief How a block primitive joins its tile totals: one or two barriers or raking, and how many
///        lanes share the combine, chosen per shape from the block tuning table.
#pragma once

#include <cuda/std/bit>

#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

// ---- tuning -------------------------------------------------------------------------------------

/// How a block primitive joins its tile totals. Measured by bench/block_bench (H200, blocks of
/// 128..1024): in a kernel that keeps the multiprocessor full, shuffles and shared-memory
/// accesses (one path, about one warp-wide 32-bit access per clock; a 16-byte broadcast load
/// costs four) bound the time, so a combine repeated by every warp, plus the phase bookkeeping of
/// the one-barrier exchange, costs more than the second barrier it saves. Two barriers won every
/// reduction measured (also at 128 threads, by 6-14 %) and the scans below 1024 threads; one
/// barrier won the scans of 1024 threads (1.26-1.55x CUB, where two blocks per multiprocessor
/// leave latency exposed). Blocks of one or two tiles / warps (not measured) keep one barrier.
/// Raking (scans, predicted, to be confirmed by the `ours raking` column of bench/block_bench):
/// the two-barrier scan with every thread a tile of its own, cub::BlockScan's default algorithm:
/// per call and block 4 * warps + 5 shared-memory / shuffle operations (warps x 32-bit) where
/// tiles of 32 lanes cost 7 * warps + 5 (a 5-shuffle tile scan in every warp).
struct block_tuning {
  /// One barrier (every warp combines the totals itself) for reductions of at most this many
  /// tiles; two barriers (warp 0 combines, everyone reads its result) above.
  unsigned reduce_one_barrier_max_tiles;
  /// One barrier for scans of at least this many warps, or of at most `scan_one_barrier_max_warps`.
  unsigned scan_one_barrier_min_warps;
  unsigned scan_one_barrier_max_warps;
  /// One-barrier reduce: bytes of tile totals one lane folds in registers before the lanes of a
  /// warp join their parts with shuffles.
  unsigned reduce_one_barrier_lane_bytes;
  /// Two barriers: bytes of tile totals each lane of warp 0 folds (reduce) or scans (scan)
  /// sequentially in registers before the lanes join their chunks with shuffles (one lane alone
  /// when everything fits: a register tree beats shuffles on latency).
  unsigned reduce_two_barrier_lane_bytes;
  unsigned scan_two_barrier_lane_bytes;
  /// Two-barrier scans of at most this many warps (whole warps only) rake: warp 0 scans all
  /// BlockSize values, whatever W (0: never).
  unsigned scan_raking_max_warps;
};

/// sm_80 and newer (measured on sm_90, except scan_raking_max_warps: see above).
inline constexpr block_tuning block_tuning_sm80{2, 32, 2, 32, 128, 64, 31};

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
  static constexpr block_tuning tune = block_tuning_sm80;

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
