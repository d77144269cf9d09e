/// @file
/// @brief grid::exclusive_scan: the exclusive prefix combination of one value per thread over a
///        whole cooperative grid, in grid thread_rank order; one grid-wide barrier per call,
///        back-to-back calls safe.
///
/// A block::inclusive_scan gives each thread the prefix of the thread before it and the block's
/// aggregate, which goes to the workspace; after grid.sync() every block reads all aggregates, and
/// one block::reduce of a pair gives the aggregates before it and the grid total. Thread r of
/// block b returns `init op (aggregates before b) op (values before r in b)`; op need not commute.
/// Memory ordering: `docs/design/grid_partials.md`.
#pragma once

#include <cooperative_groups.h>

#include <cuda/warp>

#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/grid/partials.cuh>
#include <tilewise/detail/shell.cuh>
#include <tilewise/grid/workspace.cuh>

namespace tilewise::detail {

/// What a block needs from the partials: the combination of those before it (`pre`, empty for
/// block 0) and of all of them.
template <class T>
struct grid_prefix {
  T pre;
  T all;
  bool has_pre;
};

/// The in-order combination of two grid_prefix values (a earlier than b).
template <class T, class Op>
struct grid_prefix_op {
  Op op;
  TILEWISE_DEVICE grid_prefix<T> operator()(grid_prefix<T> const& a, grid_prefix<T> const& b) const {
    grid_prefix<T> r;
    r.pre     = a.has_pre ? (b.has_pre ? T(op(a.pre, b.pre)) : a.pre) : b.pre;
    r.all     = op(a.all, b.all);
    r.has_pre = a.has_pre || b.has_pre;
    return r;
  }
};

/// The grid scan of one value per thread (grid::exclusive_scan and grid::compact).
template <class T, unsigned BlockSize, unsigned W>
struct grid_scan {
  using block_scan   = block::inclusive_scan<T, BlockSize, W>;
  using block_reduce = block::reduce<grid_prefix<T>, BlockSize, W>;

  struct storage {
    typename block_scan::temp_storage scan;
    typename block_reduce::temp_storage reduce;
    /// Inclusive prefix of each warp's last thread (raw bytes: T needs no trivial constructor).
    alignas(alignof(T) > 16 ? alignof(T) : 16) unsigned char warp_last_bytes[sizeof(T) * (BlockSize / 32)];
    TILEWISE_DEVICE T* warp_last() { return reinterpret_cast<T*>(warp_last_bytes); }
  };

  /// `init op v_0 op ... op v_{r-1}` in grid thread_rank order; `total` = v_0 op ... op v_last.
  template <class Op>
  TILEWISE_DEVICE static T run(storage& s, cg::grid_group const& grid, T v, Op& op, T const& init,
                               grid::workspace const& ws, T& total) {
    grid_call<T, BlockSize> call(grid, ws);
    auto const block    = cg::this_thread_block();
    unsigned const lane = call.rank % 32;
    unsigned const warp = call.rank / 32;
    T aggregate;
    T const incl = block_scan{s.scan}(block, v, op, aggregate);  // block barriers: step 2
    T const up   = cuda::device::warp_shuffle_up(incl, 1).data;  // lane l - 1's prefix
    if (lane == 31) {
      // Read by warp + 1 after the grid barrier, before this call's block reduce below; the next
      // call writes it only after that reduce's barrier.
      s.warp_last()[warp] = incl;
    }
    call.publish(aggregate);
    grid.sync();  // also a block barrier: warp_last is visible to the block
    call.commit();  // the block reduce below has a block barrier before any thread returns
    bool const first_thread = call.rank == 0;
    T const before_in_block = lane > 0 ? up : (warp > 0 ? s.warp_last()[warp - 1] : up);

    grid_chunk const c(call.blocks, call.rank, BlockSize);
    grid_prefix<T> part{};
    unsigned const pre_count = call.block > c.first ? call.block - c.first : 0u;
    fold_partials<true>(call.bank(), c.first, c.count, pre_count, op, part.all, part.pre, part.has_pre);
    grid_prefix<T> const r = block_reduce{s.reduce}(block, part, grid_prefix_op<T, Op>{op}, c.threads);
    total                  = r.all;
    T const seed           = r.has_pre ? T(op(init, r.pre)) : init;  // block 0 has no blocks before it
    return first_thread ? seed : T(op(seed, before_in_block));
  }
};

}  // namespace tilewise::detail

namespace tilewise::grid {

namespace cg = cooperative_groups;

/// @brief Grid-wide exclusive scan inside a cooperative kernel, seeded with `init`: grid thread
///        0 gets `init`, thread r > 0 gets `init op v_0 op ... op v_{r-1}` (grid thread_rank order:
///        block_rank() * BlockSize + the rank in the block).
/// @tparam T         any trivially copyable, default constructible type, sizeof(T) <= the
///                   workspace's slot_bytes
/// @tparam BlockSize threads per block of the launch, a multiple of 32 in [32, 1024]
/// @tparam W         tile width of the block stage (1, 2, 4, 8, 16 or 32)
/// @note Usage:
///       `using grid_scan = tilewise::grid::exclusive_scan<int, 256>;`
///       `__shared__ grid_scan::temp_storage tmp;`
///       `int offset = grid_scan{tmp}(cg::this_grid(), v, cuda::std::plus<>{}, 0, ws, &total);`
/// @note Requires a cooperative launch (tilewise::launch_cooperative). Collective: every thread
///       of the grid calls it, with the same op, init and workspace. One grid.sync() per call, plus
///       block barriers; back-to-back calls need no synchronization in between.
template <class T, unsigned BlockSize, unsigned W = 32>
class exclusive_scan : public detail::primitive_shell<typename detail::grid_scan<T, BlockSize, W>::storage> {
  static_assert(detail::check_grid_args<T, BlockSize, W>::value);
  using impl  = detail::grid_scan<T, BlockSize, W>;
  using shell = detail::primitive_shell<typename impl::storage>;
  using shell::storage_;

 public:
  using typename shell::temp_storage;
  using shell::shell;

  /// @brief Exclusive prefix combination over the grid, seeded with `init`.
  /// @param grid  `cg::this_grid()` of a cooperative launch
  /// @param v     this thread's value
  /// @param op    associative binary functor, need not be commutative
  /// @param init  combined on the left of every prefix; grid thread 0 gets it alone
  /// @param ws    the workspace made for this launch (grid::make_workspace)
  /// @param total if not null, receives `v_0 op ... op v_last` (without init), on every thread
  /// @return this thread's exclusive prefix
  /// @note Collective over the grid; syncs the grid once (grid.sync()).
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::grid_group const& grid, T v, Op op, T init, workspace ws, T* total = nullptr) {
    T t;
    T const r = impl::run(storage_, grid, v, op, init, ws, t);
    if (total != nullptr) {
      *total = t;
    }
    return r;
  }
};

}  // namespace tilewise::grid
