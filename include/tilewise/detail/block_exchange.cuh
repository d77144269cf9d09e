/// @file
/// @brief Internals of the block scope (block::reduce, block::inclusive_scan,
///        block::exclusive_scan): the compile-time rules, the tuning that picks one or two
///        barriers per shape, the caller-owned shared memory that carries the tile totals, and
///        the register folds and lane views the combine steps use.
///
/// Reuse without a barrier between calls, for both plans:
/// - two barriers: a call's tile totals are read (by warp 0) before its second barrier and the
///   next call writes them after it; warp 0 writes the results after the first barrier of a call,
///   when every thread has read the previous call's results (before reaching that barrier);
///   Raking does the same in place (one slot per thread, block_storage<..., Raking>): a thread
///   writes its slot before the first barrier and reads it after the second, warp 0 rewrites
///   every slot between the two;
/// - one barrier (exchange): the totals go to one of two buffers, chosen by a phase bit that
///   every thread keeps in its own byte of the storage (no other thread touches that byte). A
///   call reads its phase `p`, the tile leaders write buffer `p`, every thread meets the others at
///   one `__syncthreads_count(p)`, reads buffer `p` and stores `p ^ 1` for its next call. The next
///   call writes the other buffer; the call after that writes buffer `p` again only after passing
///   the next call's barrier, which no thread reaches before it has finished reading `p`.
///   Shared memory starts with arbitrary contents, so the phases of a fresh storage may disagree:
///   the barrier's count says so (neither 0 nor BlockSize), and that call alone moves every total
///   to buffer 0 behind a second barrier; from then on all threads agree.
#pragma once

#include <cooperative_groups.h>

#include <nv/target>

#include <cuda/std/bit>
#include <cuda/std/type_traits>

#include <cassert>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/tile_io.cuh>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

// ---- compile-time rules ---------------------------------------------------------------------------

template <unsigned BlockSize>
inline constexpr bool valid_block_size = BlockSize >= 1 && BlockSize <= 1024;

template <class T, unsigned BlockSize, unsigned W>
inline constexpr bool valid_block_args = valid_tile_width<W> && valid_block_size<BlockSize> && BlockSize % W == 0 &&
                                         cuda::std::is_trivially_copyable_v<T>;

/// The compile-time rules of every block primitive, each with a message that names the rule.
template <class T, unsigned BlockSize, unsigned W>
struct check_block_args {
  static_assert(valid_tile_width<W>,
                "tilewise::block: tile width W must be a power of two no larger than 32 (1, 2, 4, 8, 16 or 32)");
  static_assert(valid_block_size<BlockSize>, "tilewise::block: BlockSize must lie in [1, 1024]");
  static_assert(W == 0 || BlockSize % W == 0, "tilewise::block: BlockSize must be a multiple of the tile width W");
  static_assert(cuda::std::is_trivially_copyable_v<T>,
                "tilewise::block: T must be trivially copyable (values are shuffled word by word)");
  static constexpr bool value = valid_block_args<T, BlockSize, W>;
};

/// Debug builds check that the launch has exactly BlockSize threads.
template <unsigned BlockSize>
TILEWISE_DEVICE void check_block_launch() {
#ifndef NDEBUG
  assert(blockDim.x * blockDim.y * blockDim.z == BlockSize);
#endif
}

// ---- shape of a block ---------------------------------------------------------------------------

template <unsigned BlockSize, unsigned W>
struct block_shape {
  static constexpr unsigned width = W == 0 ? 1 : W;  // W == 0 only in a program already rejected
  static constexpr unsigned tiles = BlockSize / width > 0 ? BlockSize / width : 1;
  static constexpr unsigned warps = (BlockSize + 31) / 32;
  /// Tiles of one full warp (all tiles when the block is smaller than a warp).
  static constexpr unsigned tiles_per_warp = (BlockSize < 32 ? BlockSize : 32) / width > 0
                                               ? (BlockSize < 32 ? BlockSize : 32) / width
                                               : 1;
  /// Widest group of lanes that every warp of the block holds whole (the last warp may be partial:
  /// its size is a multiple of the lowest set bit of BlockSize).
  static constexpr unsigned lane_cap = (BlockSize & (0u - BlockSize)) < 32 ? (BlockSize & (0u - BlockSize)) : 32;
};

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

// ---- caller-owned storage -------------------------------------------------------------------------

template <class T, unsigned N>
inline constexpr unsigned padded = (N + vec_elems<T> - 1) / vec_elems<T> * vec_elems<T>;

template <class T>
inline constexpr unsigned storage_align = alignof(T) > 16 ? unsigned(alignof(T)) : 16u;

/// Where the k-th value of a buffer of slots sits: at k (`Row == 0`), or with one unused element
/// after every `Row` values (raking). With Row = one 128-byte row of T, the stores and loads of
/// one warp (32 consecutive values) and the raking loads (lane i reads value i * K + j at step j)
/// touch every bank once per 128 bytes: 4-byte T with K = 1..32, 8-byte T with K = 1..16
/// (CUB pads each raking segment instead, which leaves the warps' own accesses 2-way conflicted
/// on some banks).
template <unsigned Row>
struct slot_layout {
  static constexpr bool contiguous = Row == 0;
  __host__ __device__ static constexpr unsigned at(unsigned k) { return Row == 0 ? k : k + k / Row; }
};
using contiguous_slots = slot_layout<0>;
template <class T>
using raking_slots = slot_layout<(sizeof(T) <= 16 && 128 % sizeof(T) == 0) ? unsigned(128 / sizeof(T)) : 0u>;

/// Scratch of a block primitive. Raw bytes, so that T needs no default constructor to live in
/// `__shared__`; every array is padded to whole 16-byte vectors.
/// One barrier: two buffers of `Slots` tile totals and one phase byte per thread.
/// Two barriers: `Slots` tile totals and `Slots + 1` results of warp 0's combine.
/// Raking: `Slots` (= BlockSize) values and the total in raking_slots, the results in place.
template <class T, unsigned Slots, unsigned BlockSize, bool OneBarrier, bool Raking = false>
struct block_storage;

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, true> {
  static constexpr unsigned stride = padded<T, Slots>;

  alignas(storage_align<T>) unsigned char slots[2 * stride * sizeof(T)];
  unsigned char phase[BlockSize];

  TILEWISE_DEVICE T* buffer(unsigned p) { return reinterpret_cast<T*>(slots) + p * stride; }
};

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, false> {
  alignas(storage_align<T>) unsigned char total_bytes[padded<T, Slots> * sizeof(T)];
  alignas(storage_align<T>) unsigned char result_bytes[padded<T, Slots + 1> * sizeof(T)];

  TILEWISE_DEVICE T* totals() { return reinterpret_cast<T*>(total_bytes); }
  TILEWISE_DEVICE T* results() { return reinterpret_cast<T*>(result_bytes); }
};

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, false, true> {
  alignas(storage_align<T>) unsigned char bytes[padded<T, raking_slots<T>::at(Slots) + 1> * sizeof(T)];

  TILEWISE_DEVICE T* totals() { return reinterpret_cast<T*>(bytes); }
  TILEWISE_DEVICE T* results() { return totals(); }  // in place: every lane of warp 0 reads its run first
};

/// The storage of a plan (`plan.one_barrier`, `plan.raking`): per tile (W lanes), or per thread when
/// raking. (Plain bools: GCC 12 crashes on a block_plan template argument of an alias template.)
template <class T, unsigned BlockSize, unsigned W, bool OneBarrier, bool Raking>
using plan_storage = block_storage<T, Raking ? BlockSize : block_shape<BlockSize, W>::tiles, BlockSize, OneBarrier, Raking>;

/// One call's view of the exchange: the phase is read on entry; the tile leaders write their
/// totals to `write_buffer()`; `publish` is the barrier and returns the buffer to read.
/// `Tracked == false` is for the benchmark only: the caller supplies a phase that every thread
/// agrees on and alternates itself, and the barrier is a plain `__syncthreads()` (it prices the
/// phase bookkeeping).
template <class T, class Storage, unsigned BlockSize, bool Tracked = true>
struct exchange {
  Storage& s;
  unsigned rank;
  unsigned p;

  TILEWISE_DEVICE exchange(Storage& storage, unsigned thread_rank, unsigned given_phase = 0)
      : s(storage), rank(thread_rank), p(Tracked ? storage.phase[thread_rank] & 1u : given_phase & 1u) {}

  TILEWISE_DEVICE T* write_buffer() { return s.buffer(p); }

  /// The one barrier. `leader`, `slot`, `total`: this thread's contribution, written again only
  /// when the phases disagree (fresh storage). Returns the buffer that holds every tile total.
  TILEWISE_DEVICE T const* publish(bool leader, unsigned slot, T const& total) {
    if constexpr (!Tracked) {
      __syncthreads();
      return s.buffer(p);
    } else {
      unsigned const same = unsigned(__syncthreads_count(int(p)));
      if (same != 0 && same != BlockSize) {  // every thread sees the same count, so all come here
        if (leader && p != 0) {
          s.buffer(0)[slot] = total;
        }
        __syncthreads();
        p = 0;
      }
      s.phase[rank] = static_cast<unsigned char>(p ^ 1u);
      return s.buffer(p);
    }
  }
};

// ---- lanes: the tile layer's algorithms on warp-aligned groups of lanes --------------------------

/// A warp-aligned group of C lanes when the whole warp is known to take part (every thread of a
/// block calls a block primitive, and full warps hold 32 threads): the shuffles name the full
/// warp as a constant. tile_lanes decides that at run time (`__activemask()`), and a shuffle
/// mask that is not a constant makes the compiler check it with MATCH.ANY + REDUX before every
/// group of shuffles, a few hundred cycles.
template <unsigned C>
struct converged_lanes : tile_lanes<C> {
  TILEWISE_DEVICE converged_lanes() { this->mask = 0xFFFFFFFFu; }
};

/// Lanes of a block primitive: converged when every warp of the block is full.
template <unsigned BlockSize, unsigned C>
using block_lanes = cuda::std::conditional_t<BlockSize % 32 == 0, converged_lanes<C>, tile_lanes<C>>;


// ---- values that may be empty ---------------------------------------------------------------------

/// Whether Op has an identity element tilewise knows (then "empty" is the identity and the
/// combine needs no flags or branches).
template <class Op, class T>
inline constexpr bool has_identity = kind_v<Op, T> != op_kind::other;

/// An optional partial result: the identity stands for "empty" when Op has one.
template <class T, bool Known>
struct maybe;
template <class T>
struct maybe<T, true> {
  T value;
  TILEWISE_DEVICE static constexpr bool has() { return true; }
};
template <class T>
struct maybe<T, false> {
  T value;
  bool present;
  TILEWISE_DEVICE bool has() const { return present; }
};

template <class Op, class T>
using maybe_t = maybe<T, has_identity<Op, T>>;

template <class Op, class T>
TILEWISE_DEVICE maybe_t<Op, T> make_maybe(T const& v, bool present) {
  if constexpr (has_identity<Op, T>) {
    return {present ? v : identity<kind_v<Op, T>, T>()};
  } else {
    return {v, present};
  }
}

/// `a op b` where either side may be empty.
template <class Op, class T>
TILEWISE_DEVICE maybe_t<Op, T> join(maybe_t<Op, T> const& a, maybe_t<Op, T> const& b, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return {T(op(a.value, b.value))};
  } else {
    return {a.present && b.present ? T(op(a.value, b.value)) : (a.present ? a.value : b.value),
            a.present || b.present};
  }
}

/// `a op x` (x present).
template <class Op, class T>
TILEWISE_DEVICE T join_right(maybe_t<Op, T> const& a, T const& x, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return op(a.value, x);
  } else {
    return a.present ? T(op(a.value, x)) : x;
  }
}

/// `x op a` (x present).
template <class Op, class T>
TILEWISE_DEVICE T join_left(T const& x, maybe_t<Op, T> const& a, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return op(x, a.value);
  } else {
    return a.present ? T(op(x, a.value)) : x;
  }
}

// ---- register folds -----------------------------------------------------------------------------

/// In-order balanced fold of x[Lo, Hi) (a register array, indices resolved at compile time).
template <unsigned Lo, unsigned Hi, class T, class Op>
TILEWISE_DEVICE T tree_fold(T const* x, Op& op) {
  if constexpr (Hi - Lo == 1) {
    return x[Lo];
  } else {
    constexpr unsigned mid = Lo + cuda::std::bit_ceil((Hi - Lo + 1) / 2);  // left part a power of two
    constexpr unsigned m   = mid < Hi ? mid : Lo + (Hi - Lo) / 2;
    return op(tree_fold<Lo, m>(x, op), tree_fold<m, Hi>(x, op));
  }
}

/// In-order fold of x[0, n), 0 <= n <= K, empty when n == 0. Identities replace the missing
/// elements of known ops (a balanced tree); other ops fold sequentially under predicates.
template <unsigned K, class T, class Op>
TILEWISE_DEVICE maybe_t<Op, T> prefix_fold(T const* x, unsigned n, Op& op) {
  if constexpr (has_identity<Op, T>) {
    T masked[K];
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      masked[i] = i < n ? x[i] : identity<kind_v<Op, T>, T>();
    }
    return {tree_fold<0, K>(masked, op)};
  } else {
    T acc = x[0];
#pragma unroll
    for (unsigned i = 1; i < K; ++i) {
      if (i < n) {
        acc = op(acc, x[i]);
      }
    }
    return {acc, n > 0};
  }
}

// ---- loads from the exchange buffer ---------------------------------------------------------------

/// x[0, K) = values [first, first + K) of buf (placed by Layout) with 16-byte loads when the
/// layout allows; elements at or past `bound` are not loaded (their registers hold unspecified
/// values). `Full`: first + K <= bound is known, or the buffer is padded far enough that reading
/// past `bound` stays inside it.
template <unsigned K, bool Full, class Layout = contiguous_slots, class T>
TILEWISE_DEVICE void load_slots(T const* buf, unsigned first, unsigned bound, T* x) {
  constexpr bool vectors = Full && Layout::contiguous && vec_elems<T> > 1 && (K * sizeof(T)) % 16 == 0;
  if constexpr (vectors) {
    constexpr unsigned n = K * sizeof(T) / 16;
    uint4 raw[n];
    uint4 const* src = reinterpret_cast<uint4 const*>(buf + first);
#pragma unroll
    for (unsigned i = 0; i < n; ++i) {
      raw[i] = src[i];
    }
    __builtin_memcpy(x, raw, sizeof(raw));
  } else {
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      if (Full || first + i < bound) {
        x[i] = buf[Layout::at(first + i)];
      }
    }
  }
}

/// Values [first, first + K) of buf (placed by Layout) = x[0, K), 16-byte stores when the layout
/// allows; elements at or past `bound` are not stored. `Full`: first + K <= bound is known.
template <unsigned K, bool Full, class Layout = contiguous_slots, class T>
TILEWISE_DEVICE void store_slots(T* buf, unsigned first, unsigned bound, T const* x) {
  constexpr bool vectors = Full && Layout::contiguous && vec_elems<T> > 1 && (K * sizeof(T)) % 16 == 0;
  if constexpr (vectors) {
    constexpr unsigned n = K * sizeof(T) / 16;
    uint4 raw[n];
    __builtin_memcpy(raw, x, sizeof(raw));
    uint4* dst = reinterpret_cast<uint4*>(buf + first);
#pragma unroll
    for (unsigned i = 0; i < n; ++i) {
      dst[i] = raw[i];
    }
  } else {
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      if (Full || first + i < bound) {
        buf[Layout::at(first + i)] = x[i];
      }
    }
  }
}

/// Rounds K up so that a load of all `Slots` totals from offset 0 is whole 16-byte vectors
/// (the buffers are padded to that length).
template <class T, unsigned K>
inline constexpr unsigned padded_count = padded<T, K>;

}  // namespace tilewise::detail
