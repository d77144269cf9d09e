/// @file
/// @brief block::inclusive_scan and block::exclusive_scan: prefix combinations over a thread
///        block in thread_rank order, every thread getting its own prefix; consecutive calls on
///        one temp_storage need no barrier in between.
///
/// Each W-lane tile scans as tile::inclusive_scan does and writes its total to the caller's
/// temp_storage; each thread then combines the totals of the tiles before its own, by one of
/// three plans per shape (detail::block_tuned): one barrier (every warp combines them itself),
/// two barriers (warp 0 scans them), or raking (two barriers, every thread a tile of its own).
/// Every combination is `op(earlier, later)`: op need not commute. The plans and why reuse needs
/// no barrier: `docs/design/block_exchange.md`; measurements: `docs/tuning.md#block-scope`.
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/type_traits>

#include <tilewise/detail/block/plan.cuh>
#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/block/storage.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/shell.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

/// What a thread needs from the tile totals: the combination of the totals of the tiles before
/// its own (empty for tile 0) and, if asked for, the total of the block.
template <class T, class Op>
struct tile_prefix {
  maybe_t<Op, T> before;
  T total;
};

/// The prefix of the tile totals buf[0, tiles) before this thread's tile, and the block total
/// when `WantTotal`. Lanes == 1: every thread folds the totals itself. Otherwise `Lanes` lanes
/// each hold G consecutive warps' totals, scan their chunk totals, and warp w takes its prefix
/// from lane w / G (adding the first w % G warps of that chunk, folded by that lane).
template <unsigned Lanes, bool WantTotal, unsigned BlockSize, unsigned W, class T, class Op>
TILEWISE_DEVICE tile_prefix<T, Op> scan_totals(unsigned rank, T const* buf, Op& op) {
  using shape             = block_shape<BlockSize, W>;
  constexpr unsigned NT   = shape::tiles;
  constexpr unsigned TPW  = shape::tiles_per_warp;
  constexpr unsigned NW   = shape::warps;
  unsigned const t        = rank / W;
  tile_prefix<T, Op> r;
  if constexpr (Lanes == 1) {
    constexpr unsigned KP = padded_count<T, NT>;
    T x[KP];
    load_slots<KP, true>(buf, 0, NT, x);
    r.before = prefix_fold<NT>(x, t, op);
    if constexpr (WantTotal) {
      r.total = tree_fold<0, NT>(x, op);
    }
  } else {
    constexpr unsigned G   = (NW + Lanes - 1) / Lanes;  // warps per lane
    constexpr unsigned K   = G * TPW;                   // tiles per lane
    constexpr bool exact   = K * Lanes == NT;
    unsigned const first   = (rank % Lanes) * K;
    T x[K];
    load_slots<K, exact>(buf, first, NT, x);
    T fold;
    if constexpr (exact) {
      fold = tree_fold<0, K>(x, op);
    } else {  // lanes past the last total scan garbage, which only lanes after them would see
      unsigned const n = first < NT ? (NT - first < K ? NT - first : K) : 0u;
      fold             = prefix_fold<K>(x, n, op).value;
    }
    block_lanes<BlockSize, Lanes> const l;
    T const incl        = inclusive_scan_lanes(l, fold, op);
    unsigned const w    = rank / 32;
    unsigned const c    = w / G;  // the lane whose chunk holds warp w
    auto before         = make_maybe<Op>(l.shfl(incl, c > 0 ? c - 1 : 0u), c > 0);
    if constexpr (G > 1) {  // the first w % G warps of chunk c, folded by lane c for everyone
      unsigned const o = w % G;
      auto const q     = prefix_fold<K>(x, o * TPW, op);
      before           = join(before, make_maybe<Op>(l.shfl(q.value, c), o > 0), op);
    }
    if constexpr (TPW > 1) {  // the earlier tiles of this thread's warp
      constexpr bool full_warps = NT % TPW == 0;
      unsigned const base       = w * TPW;
      T y[TPW];
      load_slots<TPW, full_warps>(buf, base, NT, y);
      before = join(before, prefix_fold<TPW>(y, t - base, op), op);
    }
    r.before = before;
    if constexpr (WantTotal) {
      r.total = l.shfl(incl, (NT + K - 1) / K - 1);
    }
  }
  return r;
}

/// The exclusive prefix within the tile, empty on lane 0: integer plus / xor subtract the own
/// value from the inclusive prefix, other ops shift it up by one lane.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE maybe_t<Op, T> tile_exclusive(Lanes const& l, T const& v, T const& incl, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return {exclusive_from_inclusive(l, v, incl, op, identity<kind_v<Op, T>, T>())};
  } else {
    shuffled<T> const up = l.shfl_up(incl, 1);
    return {up.data, up.valid};
  }
}

/// Two barriers: warp 0 turns the tile totals into the value every tile needs, between the
/// barriers. out[t] = totals[0] op ... op totals[t-1], seeded on the left with `init` when
/// `Exclusive` (out[0] = init; without init out[0] is the identity, or unwritten for ops without
/// a known identity), and out[NT] = the total when `WantTotal` (indices placed by Layout; out may
/// be totals).
/// `Lanes` lanes each scan a contiguous chunk sequentially in registers and join the chunks with
/// a Lanes-wide scan.
template <unsigned Lanes, bool Exclusive, bool WantTotal, unsigned NT, unsigned BlockSize, class Layout, class T,
          class Op>
TILEWISE_DEVICE void scan_totals_warp0(unsigned rank, T const* totals, T* out, Op& op, T const& init) {
  constexpr unsigned K     = (NT + Lanes - 1) / Lanes;
  constexpr bool exact     = K * Lanes == NT;
  constexpr unsigned KL    = Lanes == 1 ? padded_count<T, K> : K;  // one lane loads whole vectors
  unsigned const first     = (rank % Lanes) * K;
  bool const writer        = rank < Lanes;  // the other segments of warp 0 only join the shuffles
  T x[KL];
  if (writer) {
    load_slots<KL, exact, Layout>(totals, first, NT, x);
  }
  unsigned const n = first < NT ? (NT - first < K ? NT - first : K) : 0u;  // totals in this chunk
  // Short chunks keep the inclusive prefixes within the chunk, so that after the lanes' scan every
  // result is one op away; long chunks (K >= 16) rescan serially, as cub::BlockScan does, which
  // keeps fewer registers live (`docs/tuning.md#block-scope`).
  constexpr bool serial = K >= 16;
  T chunk = x[0];
#pragma unroll
  for (unsigned j = 1; j < K; ++j) {
    if constexpr (serial) {
      if (exact || j < n) {
        chunk = op(chunk, x[j]);
      }
    } else {
      x[j] = op(x[j - 1], x[j]);  // inclusive prefixes within the chunk
    }
  }
  if constexpr (!serial) {
    chunk = x[K - 1];
    if constexpr (!exact) {
#pragma unroll
      for (unsigned j = 0; j + 1 < K; ++j) {
        if (j + 1 == n) {
          chunk = x[j];
        }
      }
    }
  }
  maybe_t<Op, T> before = make_maybe<Op>(chunk, false);  // the chunks of the lower lanes
  if constexpr (Lanes > 1) {
    block_lanes<BlockSize, Lanes> const l;
    T const incl = inclusive_scan_lanes(l, chunk, op);
    before       = tile_exclusive(l, chunk, incl, op);
  }
  maybe_t<Op, T> seed = before;
  if constexpr (Exclusive) {
    seed = make_maybe<Op>(join_left(init, before, op), true);
  }
  T e[K];
  e[0] = seed.value;
#pragma unroll
  for (unsigned j = 1; j < K; ++j) {
    if constexpr (serial) {
      e[j] = j == 1 ? join_right(seed, x[0], op) : T(op(e[j - 1], x[j - 1]));
    } else {
      e[j] = join_right(seed, x[j - 1], op);
    }
  }
  if (writer) {
    store_slots<K, exact, Layout>(out, first, NT, e);
    if (WantTotal && n > 0 && first + n == NT) {
      out[Layout::at(NT)] = join_right(before, chunk, op);
    }
  }
}

/// block::inclusive_scan / block::exclusive_scan with the plan `Plan`: one barrier (every warp
/// combines the tile totals itself: double-buffered exchange, see detail::exchange), two barriers
/// (warp 0 scans them: scan_totals_warp0), or raking (two barriers, every thread a tile of its own;
/// W does not matter). `Plan.lanes`: lanes that share the combine (the benchmark and the tests
/// force other plans than the tuned one).
template <block_plan Plan, bool Exclusive, bool WantTotal, unsigned BlockSize, unsigned W, class Storage, class T,
          class Op>
TILEWISE_DEVICE T block_scan(Storage& s, cg::thread_block const& block, T v, Op& op, T const& init,
                             cuda::std::type_identity_t<T>* total) {
  static_assert(!Plan.raking || (!Plan.one_barrier && Plan.lanes == 32 && BlockSize % 32 == 0),
                "tilewise: the raking plan takes whole warps and warp 0's 32 lanes");
  constexpr unsigned CW = Plan.raking ? 1u : W;  // the width of the tiles whose totals are combined
  constexpr unsigned NT = block_shape<BlockSize, CW>::tiles;
  using layout          = cuda::std::conditional_t<Plan.raking, raking_slots<T>, contiguous_slots>;
  check_block_launch<BlockSize>();
  unsigned const rank = block.thread_rank();
  block_lanes<BlockSize, CW> const tile;
  unsigned const slot = rank / CW;
  T const incl        = inclusive_scan_lanes(tile, v, op);
  bool const leader   = rank % CW == CW - 1;
  maybe_t<Op, T> tile_excl{};  // this thread's prefix within its tile (empty when CW == 1)
  if constexpr (Plan.one_barrier) {
    exchange<T, Storage, BlockSize> x(s, rank);
    if (leader) {
      x.write_buffer()[slot] = incl;
    }
    if constexpr (Exclusive) {
      tile_excl = tile_exclusive(tile, v, incl, op);
    }
    T const* buf = x.publish(leader, slot, incl);
    auto const r = scan_totals<Plan.lanes, WantTotal, BlockSize, W>(rank, buf, op);
    if constexpr (WantTotal) {
      *total = r.total;
    }
    if constexpr (Exclusive) {
      return join_left(join_left(init, r.before, op), tile_excl, op);
    } else {
      return join_right(r.before, incl, op);
    }
  } else {
    // Reuse without a barrier between calls: a call's totals are read before its second barrier,
    // the next call writes them after it; its results are read before the next call's first
    // barrier, after which warp 0 writes the next ones. In place (raking), each thread's slot is
    // written by the thread before the first barrier and by warp 0 between the two.
    unsigned const at = layout::at(slot);
    if (leader) {
      s.totals()[at] = incl;
    }
    if constexpr (Exclusive && CW > 1) {
      tile_excl = tile_exclusive(tile, v, incl, op);
    }
    __syncthreads();
    if (Plan.lanes == 1 ? rank == 0 : rank < 32) {  // a lane alone, or warp 0 (all lanes: full-mask shuffles)
      scan_totals_warp0<Plan.lanes, Exclusive, WantTotal, NT, BlockSize, layout>(rank, s.totals(), s.results(), op, init);
    }
    __syncthreads();
    if constexpr (WantTotal) {
      *total = s.results()[layout::at(NT)];
    }
    T const before = s.results()[at];  // init op (earlier tiles) when Exclusive, else the earlier tiles
    if constexpr (Exclusive) {
      return CW == 1 ? before : join_left(before, tile_excl, op);
    } else if constexpr (has_identity<Op, T>) {
      return op(before, incl);  // the identity before tile 0
    } else {
      return slot > 0 ? T(op(before, incl)) : incl;
    }
  }
}

/// The plan of the scans: one or two barriers or raking, and how many lanes share the combine.
template <class T, unsigned BlockSize, unsigned W>
inline constexpr block_plan scan_plan = block_plans<T, BlockSize, W>::scan;

/// What block::inclusive_scan and block::exclusive_scan share: the tuned plan (how the tile totals
/// are joined: `plan.one_barrier`, `plan.raking`, `plan.lanes`) and its temp_storage (about
/// 2 * BlockSize / W values of T and a byte per thread with one barrier; raking: about BlockSize
/// values).
template <class T, unsigned BlockSize, unsigned W, block_plan Plan = scan_plan<T, BlockSize, W>>
struct block_scan_shell : primitive_shell<plan_storage<T, BlockSize, W, Plan.one_barrier, Plan.raking>> {
  static constexpr block_plan plan = Plan;
  using primitive_shell<plan_storage<T, BlockSize, W, Plan.one_barrier, Plan.raking>>::primitive_shell;
};

}  // namespace tilewise::detail

namespace tilewise::block {

namespace cg = cooperative_groups;

/// @brief Block-wide inclusive scan in thread_rank order: thread r gets `v_0 op v_1 op ... op v_r`.
/// @tparam T         any trivially copyable type (default constructible)
/// @tparam BlockSize threads of the launch (blockDim.x * blockDim.y * blockDim.z), 1..1024, a
///                   multiple of W; debug builds (NDEBUG undefined) assert it
/// @tparam W         tile width the block is partitioned into (1, 2, 4, 8, 16 or 32)
/// @note Usage: `using scan = tilewise::block::inclusive_scan<int, 256>;`
///       `__shared__ scan::temp_storage tmp;  int p = scan{tmp}(cg::this_thread_block(), v, op);`
/// @note Collective: every thread of the block calls it, with the same op. One barrier per call
///       (`plan.one_barrier`) or two (two-barrier and raking plans), per shape. Consecutive calls on the same temp_storage need
///       no `block.sync()` in between, whatever the plan. Using the memory of temp_storage for
///       anything else (another primitive, a union) needs a `block.sync()` first, as with CUB;
///       the first one-barrier call on such memory then costs a second barrier once.
template <class T, unsigned BlockSize, unsigned W = 32>
class inclusive_scan : public detail::block_scan_shell<T, BlockSize, W> {
  static_assert(sizeof(detail::check_block_args<T, BlockSize, W>) > 0);
  using shell = detail::block_scan_shell<T, BlockSize, W>;
  using shell::storage_;

 public:
  using shell::plan;
  using typename shell::temp_storage;
  using shell::shell;

  /// @brief Inclusive prefix combination over the block.
  /// @param block `cg::this_thread_block()`
  /// @param v     this thread's value
  /// @param op    associative binary functor, need not be commutative
  /// @return on thread r: `v_0 op v_1 op ... op v_r`
  /// @note Collective; syncs the block (one or two barriers); see the class notes for reuse.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op) {
    if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_scan<plan, false, false, BlockSize, W>(storage_, block, v, op, v, nullptr);
    } else {
      return v;
    }
  }

  /// @brief As above, and `block_aggregate` receives the reduction of the whole block.
  /// @param block           `cg::this_thread_block()`
  /// @param v               this thread's value
  /// @param op              associative binary functor, need not be commutative
  /// @param block_aggregate receives `v_0 op ... op v_last`
  /// @return on thread r: `v_0 op v_1 op ... op v_r`
  /// @note `block_aggregate` is written on every thread (bitwise identical across threads).
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op, T& block_aggregate) {
    if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_scan<plan, false, true, BlockSize, W>(storage_, block, v, op, v,
                                                                          &block_aggregate);
    } else {
      return v;
    }
  }
};

/// @brief Block-wide exclusive scan in thread_rank order, seeded with `init`: thread 0 gets
///        `init`, thread r > 0 gets `init op v_0 op ... op v_{r-1}`.
/// @tparam T         any trivially copyable type (default constructible)
/// @tparam BlockSize threads of the launch (blockDim.x * blockDim.y * blockDim.z), 1..1024, a
///                   multiple of W; debug builds (NDEBUG undefined) assert it
/// @tparam W         tile width the block is partitioned into (1, 2, 4, 8, 16 or 32)
/// @note Collective: every thread of the block calls it, with the same op and init. One or two
///       barriers per call, per shape (`plan.one_barrier`, `plan.raking`). Consecutive calls on the same
///       temp_storage need no `block.sync()` in between; using its memory for anything else
///       needs a `block.sync()` first, as with CUB.
template <class T, unsigned BlockSize, unsigned W = 32>
class exclusive_scan : public detail::block_scan_shell<T, BlockSize, W> {
  static_assert(sizeof(detail::check_block_args<T, BlockSize, W>) > 0);
  using shell = detail::block_scan_shell<T, BlockSize, W>;
  using shell::storage_;

 public:
  using shell::plan;
  using typename shell::temp_storage;
  using shell::shell;

  /// @brief Exclusive prefix combination over the block, seeded with `init`.
  /// @param block `cg::this_thread_block()`
  /// @param v     this thread's value
  /// @param op    associative binary functor, need not be commutative
  /// @param init  the value of thread 0; combined on the left of every other prefix
  /// @return on thread 0 `init`; on thread r > 0: `init op v_0 op ... op v_{r-1}`
  /// @note Collective; syncs the block (one or two barriers); see the class notes for reuse.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op, T init) {
    if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_scan<plan, true, false, BlockSize, W>(storage_, block, v, op, init, nullptr);
    } else {
      return v;
    }
  }

  /// @brief As above, and `block_aggregate` receives the reduction of the whole block (without `init`).
  /// @param block           `cg::this_thread_block()`
  /// @param v               this thread's value
  /// @param op              associative binary functor, need not be commutative
  /// @param init            the value of thread 0; combined on the left of every other prefix
  /// @param block_aggregate receives `v_0 op ... op v_last`
  /// @return on thread 0 `init`; on thread r > 0: `init op v_0 op ... op v_{r-1}`
  /// @note `block_aggregate` is written on every thread (bitwise identical across threads).
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op, T init, T& block_aggregate) {
    if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_scan<plan, true, true, BlockSize, W>(storage_, block, v, op, init,
                                                                         &block_aggregate);
    } else {
      return v;
    }
  }
};

}  // namespace tilewise::block
