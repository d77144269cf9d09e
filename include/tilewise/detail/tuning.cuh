/// @file
/// @brief Every tuning value of tilewise: one designated-initializer table per algorithm and
///        compute capability. The values and the measurements that chose them: docs/tuning.md.
///        A device-wide algorithm's table is the `value` of a type (`reduce_sm90::value`): kernels
///        are templated on it, and nvcc's host stubs cannot name a class-type template argument.
#pragma once

namespace tilewise::detail {

/// The table of the architecture a device pass compiles for: `sm90` on sm_90 and newer (where the
/// values were measured, on an H200), `fallback` below. The host pass gets `sm90`; tables whose
/// host-visible values (launch shapes) differ between the two must not use this.
template <class Table>
__host__ __device__ constexpr Table const& for_arch(Table const& sm90, Table const& fallback) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  return fallback;
#else
  (void)fallback;
  return sm90;
#endif
}

// ---- tile scope -----------------------------------------------------------------------------------

struct tile_tuning {
  /// Smallest tile width whose integer reductions use one `redux.sync` (sm_80 and newer) instead of
  /// log2(W) shuffles; coalesced groups always use it.
  unsigned redux_min_width;
};

inline constexpr tile_tuning tile_sm90{.redux_min_width = 16};
/// Not measured: the sm_90 value (`redux.sync` exists from sm_80 on; below, shuffles always).
inline constexpr tile_tuning tile_fallback{.redux_min_width = 16};
inline constexpr tile_tuning tile_tuned = for_arch(tile_sm90, tile_fallback);

// ---- block scope ----------------------------------------------------------------------------------

/// How a block primitive joins its tile totals (detail::block_plans turns these into a plan).
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
  /// sequentially in registers before the lanes join their chunks with shuffles.
  unsigned reduce_two_barrier_lane_bytes;
  unsigned scan_two_barrier_lane_bytes;
  /// Two-barrier scans of at most this many warps (whole warps only) rake: warp 0 scans all
  /// BlockSize values, whatever W (0: never).
  unsigned scan_raking_max_warps;
};

inline constexpr block_tuning block_sm90{
  .reduce_one_barrier_max_tiles  = 2,
  .scan_one_barrier_min_warps    = 32,
  .scan_one_barrier_max_warps    = 2,
  .reduce_one_barrier_lane_bytes = 32,
  .reduce_two_barrier_lane_bytes = 128,
  .scan_two_barrier_lane_bytes   = 64,
  .scan_raking_max_warps         = 31,
};
/// Not measured: the sm_90 values (the plans shape temp_storage, which host code may size).
inline constexpr block_tuning block_fallback = block_sm90;
inline constexpr block_tuning block_tuned    = block_sm90;

// ---- grid scope -----------------------------------------------------------------------------------

struct grid_reduce_tuning {
  /// Grids of at least this many blocks spin on a published result (last-block way, result word or
  /// copy line) instead of on the arrival words.
  unsigned last_block_min_blocks;
};

inline constexpr grid_reduce_tuning grid_reduce_sm90{.last_block_min_blocks = 512};
/// Not measured: the sm_90 value.
inline constexpr grid_reduce_tuning grid_reduce_fallback{.last_block_min_blocks = 512};
inline constexpr grid_reduce_tuning grid_reduce_tuned = for_arch(grid_reduce_sm90, grid_reduce_fallback);

// ---- device reduce --------------------------------------------------------------------------------

struct reduce_tuning {
  unsigned block;          ///< threads per block
  unsigned unroll;         ///< 16-byte vectors (or elements) in flight per thread
  long long chunk_bytes;   ///< grid = one block per chunk_bytes of input ...
  unsigned min_waves;      ///< ... at least this many waves (occupancy x SMs) ...
  unsigned max_waves;      ///< ... and at most this many
};

struct reduce_sm90 {
  static constexpr reduce_tuning value{
    .block = 512, .unroll = 4, .chunk_bytes = 512 << 10, .min_waves = 1, .max_waves = 64};
};
/// Not measured: the sm_90 values (the launch shape is chosen on the host).
using reduce_fallback = reduce_sm90;
using reduce_tuned    = reduce_sm90;

}  // namespace tilewise::detail
