/// @file
/// @brief block::reduce: the reduction of one value per thread over a thread block, broadcast to
///        every thread; consecutive calls on one temp_storage need no barrier in between.
///
/// Each W-lane tile reduces as tile::reduce does and writes its total to the caller's
/// temp_storage. Then, per shape (detail::block_tuned): warp 0 reduces the totals between two
/// barriers and every thread reads the result, or (one or two tiles) every warp reduces them
/// itself behind one barrier, double-buffered by a per-thread phase bit (detail::exchange).
/// Every thread gets bitwise the same result, combined in thread_rank order. The plans and why
/// reuse needs no barrier: `docs/design/block_exchange.md`; measurements: `docs/tuning.md#block-scope`.
#pragma once

#include <cooperative_groups.h>

#include <tilewise/detail/block/plan.cuh>
#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/block/storage.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/shell.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

/// Reduction of the tile totals buf[0, count) on every thread (count == Units unless `Partial`).
/// `Lanes` lanes of each warp fold contiguous chunks in registers, then tile::reduce's butterfly
/// (or redux.sync) over those lanes joins the chunks in order.
template <unsigned Lanes, unsigned Units, bool Partial, unsigned BlockSize, class T, class Op>
TILEWISE_DEVICE T reduce_totals(unsigned rank, T const* buf, unsigned count, Op& op) {
  constexpr unsigned K = (Units + Lanes - 1) / Lanes;
  constexpr bool exact = K * Lanes == Units && !Partial;
  if constexpr (Lanes == 1 && exact) {
    constexpr unsigned KP = padded_count<T, K>;  // whole 16-byte vectors: the buffers are padded so
    T x[KP];
    load_slots<KP, true>(buf, 0, Units, x);
    return tree_fold<0, K>(x, op);
  } else {
    unsigned const first = (rank % Lanes) * K;
    T x[K];
    load_slots<K, exact>(buf, first, Units, x);
    T part;
    if constexpr (exact) {
      part = tree_fold<0, K>(x, op);
    } else {  // lanes holding no total (n == 0) are left out of the tile reduction below
      unsigned const n = first < count ? (count - first < K ? count - first : K) : 0u;
      part             = prefix_fold<K>(x, n, op).value;
    }
    if constexpr (Lanes == 1) {
      return part;
    } else {
      block_lanes<BlockSize, Lanes> const lanes;
      if constexpr (exact) {
        return reduce_lanes(lanes, part, op);
      } else {
        return reduce_tile_partial(lanes, part, op, (count + K - 1) / K);
      }
    }
  }
}

/// block::reduce with the plan `Plan`. `Plan.one_barrier`: every warp combines the tile totals
/// itself (double-buffered exchange, see detail::exchange); otherwise warp 0 combines them between
/// two barriers and every thread reads its result. `Plan.lanes`: lanes that share the combine (the
/// benchmark and the tests force other plans than the tuned one). `Partial`: only ranks < valid
/// contribute.
template <block_plan Plan, bool Partial, unsigned BlockSize, unsigned W, class Storage, class T, class Op>
TILEWISE_DEVICE T block_reduce(Storage& s, cg::thread_block const& block, T v, Op& op, unsigned valid) {
  static_assert(!Plan.raking, "tilewise: block::reduce has no raking plan");
  constexpr bool OneBarrier = Plan.one_barrier;
  constexpr unsigned Lanes  = Plan.lanes;
  using shape               = block_shape<BlockSize, W>;
  check_block_launch<BlockSize>();
  unsigned const rank = block.thread_rank();
  block_lanes<BlockSize, W> const tile;
  unsigned const slot = rank / W;

  constexpr bool known = has_identity<Op, T>;
  unsigned count       = shape::tiles;
  T total;
  if constexpr (!Partial) {
    total = reduce_lanes(tile, v, op);
  } else if constexpr (known) {  // the identity stands in for the missing values: the full path
    total = reduce_lanes(tile, rank < valid ? v : identity<kind_v<Op, T>, T>(), op);
  } else {  // tiles wholly past `valid` reduce one value each, and their totals are not read
    unsigned const first = slot * W;
    total                = reduce_tile_partial(tile, v, op, valid > first ? valid - first : 1u);
    unsigned const tiles = (valid + W - 1) / W;
    count                = tiles < shape::tiles ? tiles : shape::tiles;
  }
  bool const leader = rank % W == 0;
  if constexpr (OneBarrier) {
    exchange<T, Storage, BlockSize> x(s, rank);
    if (leader) {
      x.write_buffer()[slot] = total;
    }
    T const* buf = x.publish(leader, slot, total);
    return reduce_totals<Lanes, shape::tiles, Partial && !known, BlockSize>(rank, buf, count, op);
  } else {
    // Reuse without a barrier between calls: a call's totals are read before its second barrier,
    // the next call writes them after it; its result is read before the next call's first
    // barrier, after which warp 0 writes the next one.
    if (leader) {
      s.totals()[slot] = total;
    }
    __syncthreads();
    if (Lanes == 1 ? rank == 0 : rank < 32) {  // a lane alone, or warp 0 (all lanes: full-mask shuffles)
      T const r = reduce_totals<Lanes, shape::tiles, Partial && !known, BlockSize>(rank, s.totals(), count, op);
      if (rank == 0) {
        s.results()[0] = r;
      }
    }
    __syncthreads();
    return s.results()[0];
  }
}

/// What block::reduce keeps of its shape: the tuned plan (`plan.one_barrier`, `plan.lanes` that
/// share the combine) and its temp_storage (about 2 * BlockSize / W values of T, and a byte per
/// thread with one barrier).
template <class T, unsigned BlockSize, unsigned W, block_plan Plan = block_plans<T, BlockSize, W>::reduce>
struct block_reduce_shell : primitive_shell<plan_storage<T, BlockSize, W, Plan.one_barrier, Plan.raking>> {
  static constexpr block_plan plan = Plan;
  using primitive_shell<plan_storage<T, BlockSize, W, Plan.one_barrier, Plan.raking>>::primitive_shell;
};

}  // namespace tilewise::detail

namespace tilewise::block {

namespace cg = cooperative_groups;

/// @brief Block-wide reduction: every thread of the block gets the reduction of one value per
///        thread, in thread_rank order.
/// @tparam T         any trivially copyable type (default constructible)
/// @tparam BlockSize threads of the launch (blockDim.x * blockDim.y * blockDim.z), 1..1024, a
///                   multiple of W; debug builds (NDEBUG undefined) assert it
/// @tparam W         tile width the block is partitioned into (1, 2, 4, 8, 16 or 32)
/// @note Usage:
///       `using block_reduce = tilewise::block::reduce<float, 256>;`
///       `__shared__ block_reduce::temp_storage tmp;`
///       `float s = block_reduce{tmp}(cg::this_thread_block(), v, cuda::std::plus<>{});`
/// @note Collective: every thread of the block calls it, with the same op. One barrier per call
///       (`plan.one_barrier`) or two, per shape. Consecutive calls on the same temp_storage need
///       no `block.sync()` in between, whatever the plan. Using the memory of temp_storage for
///       anything else (another primitive, a union) needs a `block.sync()` first, as with CUB;
///       the first one-barrier call on such memory then costs a second barrier once.
template <class T, unsigned BlockSize, unsigned W = 32>
class reduce : public detail::block_reduce_shell<T, BlockSize, W> {
  static_assert(sizeof(detail::check_block_args<T, BlockSize, W>) > 0);
  using shell = detail::block_reduce_shell<T, BlockSize, W>;
  using shell::storage_;

 public:
  using shell::plan;
  using typename shell::temp_storage;
  using shell::shell;

  /// The plan of whole-warp tiles. Integers of at most 32 bits with a known op (`redux.sync`)
  /// give the same result, bit for bit, whatever the tiles, so narrower tiles then reduce whole
  /// warps (one `redux.sync` each, half the totals to combine: `docs/tuning.md#block-scope`).
  /// Both plans must use two barriers, whose storage (totals, then the result) this plan's
  /// temp_storage already holds and uses in the same places.
  static constexpr detail::block_plan plan32 = detail::block_plans<T, BlockSize, (BlockSize % 32 == 0 ? 32 : W)>::reduce;
  /// Whether a reduction under `Op` takes plan32 (whole warps) instead of the W-lane plan.
  template <class Op>
  static constexpr bool whole_warps_suffice = W < 32 && BlockSize % 32 == 0 && detail::redux_capable<Op, T> &&
                                              !plan.one_barrier && !plan32.one_barrier;

  /// @brief Reduction of `v` over all threads of the block.
  /// @param block `cg::this_thread_block()`
  /// @param v     this thread's value
  /// @param op    associative binary functor; applied in thread_rank order (commutativity not needed)
  /// @return the reduction, on every thread (bitwise identical across threads)
  /// @note Collective; syncs the block (one or two barriers); see the class notes for reuse.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op) {
    if constexpr (whole_warps_suffice<Op>) {
      return detail::block_reduce<plan32, false, BlockSize, 32>(storage_, block, v, op, BlockSize);
    } else if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_reduce<plan, false, BlockSize, W>(storage_, block, v, op, BlockSize);
    } else {
      return v;
    }
  }

  /// @brief Reduction over the threads with `thread_rank() < valid` only.
  /// @param block `cg::this_thread_block()`
  /// @param v     this thread's value (ignored on threads >= valid)
  /// @param op    associative binary functor; applied in thread_rank order
  /// @param valid number of contributing threads, 1 <= valid; values >= BlockSize mean all. With
  ///        valid == 0 the result is unspecified.
  /// @return the reduction, on every thread (also on threads >= valid)
  /// @note Collective over the whole block: threads >= valid call it too; syncs the block.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::thread_block const& block, T v, Op op, unsigned valid) {
    if constexpr (detail::valid_block_args<T, BlockSize, W>) {
      return detail::block_reduce<plan, true, BlockSize, W>(storage_, block, v, op, valid);
    } else {
      return v;
    }
  }
};

}  // namespace tilewise::block
