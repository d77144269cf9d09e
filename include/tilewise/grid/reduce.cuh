/// @file
/// @brief grid::reduce: the reduction of one value per thread over a whole cooperative grid,
///        every thread getting the result; one grid-wide barrier per call, back-to-back calls safe.
///
/// How (detail/grid_partials.cuh has the memory-ordering argument):
///   each warp reduces its values, thread 0 folds the warp totals (one block barrier) and writes
///   the block partial to the workspace bank chosen by the block's epoch -> grid.sync() -> every
///   block reads all partials (ops tilewise knows to commute: coalesced, thread t takes partials
///   t, t + BlockSize, ...; other ops: thread t folds a contiguous chunk), each warp reduces its
///   threads' values, and every thread folds the warp totals (one more block barrier).
/// Every block combines the same partials in the same order, so every thread of the grid gets
/// bitwise the same result (deterministic for floating point) and op need not commute (for ops
/// without a known identity the order is grid thread_rank order).
#pragma once

#include <cooperative_groups.h>

#include <tilewise/detail/block_exchange.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/grid_partials.cuh>
#include <tilewise/grid/workspace.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::grid {

namespace cg = cooperative_groups;

/// @brief Grid-wide reduction inside a cooperative kernel: every thread of the grid gets the
///        reduction of one value per thread, combined in grid thread_rank order.
/// @tparam T         any trivially copyable, default constructible type, sizeof(T) <= the
///                   workspace's slot_bytes
/// @tparam BlockSize threads per block of the launch, a multiple of 32 in [32, 1024]
/// @tparam W         tile width, as in the other grid primitives; the reduction's block stages
///                   use whole warps whatever W (the result is the same in-order reduction)
/// @note Usage:
///       `using grid_reduce = tilewise::grid::reduce<double, 256>;`
///       `__shared__ grid_reduce::temp_storage tmp;`
///       `double s = grid_reduce{tmp}(cg::this_grid(), v, cuda::std::plus<>{}, ws);`
/// @note Requires a cooperative launch (tilewise::launch_cooperative): grid.sync() in an ordinary
///       launch of more blocks than fit at once hangs. Collective: every thread of the grid calls
///       it, with the same op and workspace. One grid.sync() per call, plus two block barriers.
///       Back-to-back calls (also of grid::exclusive_scan / grid::compact on the same workspace
///       and temp_storage) need no synchronization in between. The workspace is passed by value;
///       its state lives in device memory.
template <class T, unsigned BlockSize, unsigned W = 32>
class reduce {
  static_assert(detail::check_grid_args<T, BlockSize, W>::value);
  static constexpr unsigned warps = BlockSize / 32;

 public:
  /// @brief Shared-memory scratch of the block stages, owned by the caller:
  ///        `__shared__ reduce::temp_storage tmp;` (any contents, no initialisation needed).
  struct temp_storage {
    alignas(16) unsigned char before[warps * sizeof(T)];  ///< warp totals before the grid barrier
    alignas(16) unsigned char after[warps * sizeof(T)];   ///< warp totals of the partials after it
  };

  TILEWISE_DEVICE explicit reduce(temp_storage& storage) : storage_(storage) {}

  /// @brief Reduction of `v` over every thread of the grid.
  /// @param grid `cg::this_grid()` of a cooperative launch
  /// @param op   associative binary functor (commutativity not needed)
  /// @param ws   the workspace made for this launch (grid::make_workspace)
  /// @return the reduction, on every thread of the grid (bitwise identical everywhere)
  /// @note Collective over the grid; syncs the grid once (grid.sync()) and the block twice.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::grid_group const& grid, T v, Op op, workspace ws) {
    detail::grid_call<T, BlockSize> call(grid, ws);
    detail::converged_lanes<32> const lanes;
    unsigned const warp = call.rank / 32;
    T* const before     = reinterpret_cast<T*>(storage_.before);
    T* const after      = reinterpret_cast<T*>(storage_.after);

    // The block's partial, on thread 0 only (it alone publishes): one block barrier.
    T const w = detail::reduce_lanes(lanes, v, op);  // in lane order
    if (lanes.rank == 0) {
      before[warp] = w;
    }
    __syncthreads();
    T partial{};
    if (call.rank == 0) {
      T x[warps];
#pragma unroll
      for (unsigned i = 0; i < warps; ++i) {
        x[i] = before[i];
      }
      partial = detail::tree_fold<0, warps>(x, op);
    }
    call.publish(partial);
    grid.sync();

    // Every block folds all partials the same way: one block barrier.
    T const* const bank = call.bank();
    unsigned const n    = call.blocks;
    unsigned holding_warps;  // warps whose totals take part
    if constexpr (detail::known_commutative<Op, T>) {
      // Order does not change the value bits of these ops on integers, and for floating point
      // every block still folds in the same fixed order: coalesced loads, one request per warp
      // and 32 partials (thread t takes partials t, t + BlockSize, ...).
      constexpr auto none = detail::identity<detail::kind_v<Op, T>, T>();
      T acc               = none;
      for (unsigned j = call.rank; j < n; j += 4 * BlockSize) {
        T x[4];
#pragma unroll
        for (unsigned u = 0; u < 4; ++u) {
          x[u] = j + u * BlockSize < n ? bank[j + u * BlockSize] : none;
        }
#pragma unroll
        for (unsigned u = 0; u < 4; ++u) {
          acc = op(acc, x[u]);
        }
      }
      T const t = detail::reduce_lanes(lanes, acc, op);
      if (lanes.rank == 0) {
        after[warp] = t;
      }
      holding_warps = warps;
    } else {  // thread t folds a contiguous chunk, chunks in block order: grid thread_rank order
      detail::grid_chunk const c(n, call.rank, BlockSize);
      T all{}, pre{};
      bool has_pre = false;
      detail::fold_partials<false>(bank, c.first, c.count, 0u, op, all, pre, has_pre);
      unsigned const in_warp = c.threads > warp * 32 ? c.threads - warp * 32 : 0u;
      T const t              = detail::reduce_tile_partial(lanes, all, op, in_warp < 32 ? (in_warp ? in_warp : 1u) : 32u);
      if (lanes.rank == 0) {
        after[warp] = t;
      }
      holding_warps = (c.threads + 31) / 32;
    }
    __syncthreads();
    T x[warps];
#pragma unroll
    for (unsigned i = 0; i < warps; ++i) {
      x[i] = after[i];
    }
    return detail::prefix_fold<warps>(x, holding_warps, op).value;
  }

 private:
  temp_storage& storage_;
};

}  // namespace tilewise::grid
