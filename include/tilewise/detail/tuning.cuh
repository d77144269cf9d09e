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

// ---- device scan ----------------------------------------------------------------------------------

/// The sleeps of the decoupled look-back (detail::look_back_prefix; copy_if's tables use it too).
struct look_back_tuning {
  unsigned first_delay_ns;        ///< sleep before the first window (0: none)
  unsigned poll_delay_ns;         ///< sleep between polls of an incomplete window (0: tile_status::back_off)
  unsigned delay_min_tiles;       ///< grids of fewer tiles sleep neither (0: every grid sleeps)
  unsigned long_delay_ns;         ///< grids of at least long_delay_min_tiles tiles sleep this long
  unsigned long_delay_min_tiles;  ///< before the first window instead (long_delay_ns 0: no such tier)
};

/// device::inclusive_scan / exclusive_scan (detail::scan_kernel): one tile of block x items per
/// block, held in shared memory from load to store.
struct device_scan_tuning {
  unsigned block;                ///< threads per block
  unsigned tile_bytes;           ///< values of up to 8 bytes: items = tile_bytes / (block * sizeof(T))
  unsigned wide_items;           ///< items per thread of larger values
  unsigned items;                ///< non-zero: items per thread of every T (instead of the two above)
  unsigned min_blocks;           ///< __launch_bounds__' blocks per SM (a register cap; 0: ptxas' choice)
  unsigned min_blocks_flagged8;  ///< the same for 8-byte values under an op without a known identity
  unsigned min_blocks_wide;      ///< the same for values larger than 8 bytes
  look_back_tuning look_back;
};

struct device_scan_sm90 {
  static constexpr device_scan_tuning value{
    .block               = 256,
    .tile_bytes          = 32768,
    .wide_items          = 4,
    .items               = 0,
    .min_blocks          = 6,
    .min_blocks_flagged8 = 5,
    .min_blocks_wide     = 0,
    .look_back           = {.first_delay_ns       = 1245,
                            .poll_delay_ns        = 648,
                            .delay_min_tiles      = 1024,
                            .long_delay_ns        = 2500,
                            .long_delay_min_tiles = 2048}};
};
/// A table without its register caps: the fallback of the tables below, whose shapes and sleeps
/// are the sm_90 ones (older SMs hold fewer threads, so the caps measured there do not carry over).
__host__ __device__ constexpr device_scan_tuning without_register_caps(device_scan_tuning t) {
  t.min_blocks = t.min_blocks_flagged8 = t.min_blocks_wide = 0;
  return t;
}
/// Not measured: the sm_90 table without register caps.
struct device_scan_fallback {
  static constexpr device_scan_tuning value = without_register_caps(device_scan_sm90::value);
};
/// The table of the target being compiled (the shape, which the host sizes grids from, is equal).
struct device_scan_tuned {
  static constexpr device_scan_tuning value = for_arch(device_scan_sm90::value, device_scan_fallback::value);
};

// ---- copy_if --------------------------------------------------------------------------------------

/// device::copy_if, copy_flagged, copy_if_unordered (detail::select_kernel): one tile of block x
/// items per block, held in shared memory (flags beside it); kept items stored from there by rows.
struct copy_if_tuning {
  unsigned block;       ///< threads per block
  unsigned tile_bytes;  ///< values of up to 8 bytes: items = tile_bytes / (block * sizeof(T))
  unsigned wide_items;  ///< items per thread of larger values
  unsigned min_blocks;  ///< __launch_bounds__' blocks per SM for values of up to 8 bytes (0: none)
  /// copy_flagged, values of up to 8 bytes: bytes of a tile's values and 1-byte flags together
  /// (items: a multiple of 16 when at least 16, at most copy_if's)
  unsigned flagged_tile_bytes;
  bool warp_compact;  ///< compact a warp's kept items in its stage first, then store whole rows
  look_back_tuning look_back;
};

struct copy_if_sm90 {
  static constexpr copy_if_tuning value{.block              = 256,
                                        .tile_bytes         = 32768,
                                        .wide_items         = 4,
                                        .min_blocks         = 6,
                                        .flagged_tile_bytes = 40960,
                                        .warp_compact       = false,
                                        .look_back          = device_scan_sm90::value.look_back};
};
__host__ __device__ constexpr copy_if_tuning without_register_caps(copy_if_tuning t) {
  t.min_blocks = 0;
  return t;
}
/// Not measured: the sm_90 table without register caps.
struct copy_if_fallback {
  static constexpr copy_if_tuning value = without_register_caps(copy_if_sm90::value);
};
/// The table of the target being compiled (the shape is equal).
struct copy_if_tuned {
  static constexpr copy_if_tuning value = for_arch(copy_if_sm90::value, copy_if_fallback::value);
};

// ---- histogram_even -------------------------------------------------------------------------------

/// device::histogram_even: which bins go where (detail::plan_histogram) and the kernels' shape.
/// Values and measurements: docs/design/histogram_even.md.
struct histogram_even_tuning {
  unsigned block;              ///< threads per block
  unsigned vectors;            ///< 16-byte loads (or single samples) in flight per thread ...
  unsigned min_blocks;         ///< ... and __launch_bounds__' blocks per SM (a register cap) ...
  unsigned byte_vectors;       ///< ... and the same two for 1-byte samples
  unsigned byte_min_blocks;
  unsigned copies_bytes;       ///< shared memory the copies of a block's bins may take ...
  unsigned max_copies;         ///< ... in at most this many copies (a power of two, at most 32)
  unsigned min_blocks_per_sm;  ///< a block's share of bins leaves room for this many blocks per SM
  unsigned narrow_block;       ///< 16-bit shared counters (bins beyond one pass of 32-bit ones): one
                               ///< block of this many threads per SM, all of its shared memory ...
  unsigned narrow_vectors;     ///< ... and 16-byte loads in flight per thread ...
  unsigned narrow_ahead;       ///< ... and, if 1, the next round's loads issued before a round is counted
  unsigned max_shared_passes;  ///< most passes over the input with one block's 16-bit bins (one range
                               ///< each); beyond them the table strategy, or where it cannot run ...
  unsigned max_cluster;        ///< ... the largest thread-block cluster tried for distributed bins ...
  unsigned max_passes;         ///< ... in at most this many passes (one cluster-wide bin range each)
  unsigned table_block;        ///< the table strategy (a hash table of bins per block, misses to the
                               ///< output): one block of this many threads per SM ...
  unsigned table_vectors;      ///< ... 16-byte loads in flight per thread ...
  unsigned table_slots;        ///< ... a table of this many slots (a power of two) ...
  unsigned table_probes;       ///< ... tried from a bin's home before the sample goes to the output ...
  unsigned table_probe_reads;  ///< ... each a CAS (0) or a read, and a CAS only at a free slot (1) ...
  unsigned table_vote_rounds;  ///< ... a vote every this many rounds: the block stops using its table
  unsigned table_bypass_at;    ///< ... when most threads' samples missed it this often (percent)
};

struct histogram_even_sm90 {
  static constexpr histogram_even_tuning value{.block             = 512,
                                               .vectors           = 4,
                                               .min_blocks        = 2,
                                               .byte_vectors      = 4,
                                               .byte_min_blocks   = 4,
                                               .copies_bytes      = 32768,
                                               .max_copies        = 32,
                                               .min_blocks_per_sm = 2,
                                               .narrow_block      = 1024,
                                               .narrow_vectors    = 4,
                                               .narrow_ahead      = 0,
                                               .max_shared_passes = 6,
                                               .max_cluster       = 16,
                                               .max_passes        = 8,
                                               .table_block       = 1024,
                                               .table_vectors     = 4,
                                               .table_slots       = 16384,
                                               .table_probes      = 8,
                                               .table_probe_reads = 0,
                                               .table_vote_rounds = 2,
                                               .table_bypass_at   = 60};
};
__host__ __device__ constexpr histogram_even_tuning without_register_caps(histogram_even_tuning t) {
  t.min_blocks = t.byte_min_blocks = 1;
  return t;
}
/// The shape of the 16-bit shared-counter kernel: `narrow_block` threads with `narrow_vectors`
/// loads each, one block per SM.
__host__ __device__ constexpr histogram_even_tuning narrow_shape(histogram_even_tuning t) {
  t.block      = t.narrow_block;
  t.vectors    = t.narrow_vectors;
  t.min_blocks = 1;
  return t;
}
/// The shape of the table kernel: `table_block` threads with `table_vectors` loads each, one block
/// per SM.
__host__ __device__ constexpr histogram_even_tuning table_shape(histogram_even_tuning t) {
  t.block      = t.table_block;
  t.vectors    = t.table_vectors;
  t.min_blocks = 1;
  return t;
}
/// Not measured: the sm_90 table without register caps; the host sizes grids from the shape,
/// which is equal.
struct histogram_even_fallback {
  static constexpr histogram_even_tuning value = without_register_caps(histogram_even_sm90::value);
};
struct histogram_even_tuned {
  static constexpr histogram_even_tuning value = for_arch(histogram_even_sm90::value, histogram_even_fallback::value);
};

// ---- group_by -------------------------------------------------------------------------------------

/// device::group_by (detail::group_by_spill_kernel, group_by_scatter_kernel,
/// group_by_bucket_kernel). Values and the measurements behind them: docs/design/group_by.md.
struct group_by_tuning {
  unsigned block;                ///< threads per block of the first pass (pre-aggregation)
  unsigned items;                ///< pairs per thread and round of the table passes
  unsigned min_blocks;           ///< __launch_bounds__' blocks per SM of the first pass (a register cap)
  unsigned table_bytes;          ///< shared memory of a first-pass block's hash table ...
  unsigned table_slots;          ///< ... of at most this many slots (a power of two)
  unsigned table_probes;         ///< first-pass table slots tried before a pair is spilled
  unsigned probe_reads;          ///< 1: a probe reads a slot's key and CASes only a free slot (both
                                 ///< table passes); 0: every probe is a CAS
  unsigned home_miss_percent;    ///< first pass: the pairs of a round probe their home slots all at
                                 ///< once until most threads see this many % miss there (0: never)
  unsigned peer_min;             ///< lanes holding lane 0's key that make a warp pre-aggregate with
                                 ///< match_any (tile::reduce_by_key), values combined by atomics
                                 ///< (0: never); all lanes: one tile::reduce ...
  unsigned locked_peer_min;      ///< ... and the same for values combined under a slot's lock
  unsigned chunks;               ///< the input splits into about this many chunks (whole rounds):
                                 ///< the unit of the spill records and of the partition pass's blocks
  unsigned bypass_rounds;        ///< first-pass rounds per vote on bypassing the table ...
  unsigned bypass_miss_percent;  ///< ... taken when most threads' inserts missed it this often
  unsigned bypass_rounds_max;    ///< a vote after rounds without a miss doubles the rounds to the next, up to this
  unsigned scatter_block;        ///< threads per block of the partition pass
  unsigned scatter_items;        ///< pairs per thread of a partition tile (fewer for wide values:
                                 ///< part_scatter_items)
  unsigned scatter_min_blocks;   ///< __launch_bounds__' blocks per SM of the partition pass
  unsigned scatter_ahead;        ///< 1: both passes that scatter load a tile's successor while it is
                                 ///< written out (into the registers it leaves); 0: after
  unsigned bucket_block;         ///< threads per block of the bucket pass
  unsigned bucket_min_blocks;    ///< __launch_bounds__' blocks per SM of the bucket pass
  unsigned bucket_scatter_items; ///< pairs per thread of a tile of the bucket pass's split into sub-parts
  unsigned bucket_table_bytes;   ///< shared memory of a bucket block's hash table ...
  unsigned bucket_table_slots;   ///< ... of at most this many slots (a power of two)
  unsigned bucket_probes;        ///< bucket-table slots tried before a pair waits for the next round
  unsigned bucket_fill_percent;  ///< a part whose estimated keys fill its table beyond this is split
};

struct group_by_sm90 {
  static constexpr group_by_tuning value{.block                = 1024,
                                         .items                = 4,
                                         .min_blocks           = 1,
                                         .table_bytes          = 160 << 10,
                                         .table_slots          = 16384,
                                         .table_probes         = 8,
                                         .probe_reads          = 0,
                                         .home_miss_percent    = 10,
                                         .peer_min             = 0,
                                         .locked_peer_min      = 8,
                                         .chunks               = 2048,
                                         .bypass_rounds        = 2,
                                         .bypass_miss_percent  = 60,
                                         .bypass_rounds_max    = 16,
                                         .scatter_block        = 1024,
                                         .scatter_items        = 16,
                                         .scatter_min_blocks   = 1,
                                         .scatter_ahead        = 1,
                                         .bucket_block         = 1024,
                                         .bucket_min_blocks    = 1,
                                         .bucket_scatter_items = 8,
                                         .bucket_table_bytes   = 160 << 10,
                                         .bucket_table_slots   = 16384,
                                         .bucket_probes        = 32,
                                         .bucket_fill_percent  = 62};
};
/// Not measured: the sm_90 values (the host sizes the grid and shared memory from them).
using group_by_fallback = group_by_sm90;
using group_by_tuned    = group_by_sm90;

// ---- distributed calls ----------------------------------------------------------------------------

/// The passes of tilewise::dist beside the device calls: the scans' prefix fix-up and group_by's
/// owner count and scatter (grid-stride loops). Not measured yet (docs/tuning.md#distributed-calls).
struct dist_tuning {
  unsigned block;          ///< threads per block
  unsigned blocks_per_sm;  ///< the grid: at most this many blocks per SM (fewer for small shards)
};
inline constexpr dist_tuning dist_tuned{.block = 256, .blocks_per_sm = 8};

}  // namespace tilewise::detail
