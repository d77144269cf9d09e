/// @file
/// @brief grid::reduce: the reduction of one value per thread over a whole cooperative grid,
///        every thread getting the result; one grid-wide barrier per call, back-to-back calls safe.
///
/// How (detail/grid_partials.cuh has the memory-ordering argument):
///   block::reduce of the block's values -> thread 0 writes the block partial to the workspace
///   bank chosen by the block's epoch -> grid.sync() -> every block reads all partials (thread t
///   folds a contiguous chunk, loads in flight together) and block::reduce joins the chunks.
/// Every block combines the same partials in the same order, so every thread of the grid gets
/// bitwise the same result (deterministic for floating point) and op need not commute.
#pragma once

#include <cooperative_groups.h>

#include <tilewise/block/reduce.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/grid_partials.cuh>
#include <tilewise/grid/workspace.cuh>

namespace tilewise::grid {

namespace cg = cooperative_groups;

/// @brief Grid-wide reduction inside a cooperative kernel: every thread of the grid gets the
///        reduction of one value per thread, combined in grid thread_rank order.
/// @tparam T         any trivially copyable, default constructible type, sizeof(T) <= the
///                   workspace's slot_bytes
/// @tparam BlockSize threads per block of the launch, a multiple of 32 in [32, 1024]
/// @tparam W         tile width of the block stage (1, 2, 4, 8, 16 or 32), as block::reduce
/// @note Usage:
///       `using grid_reduce = tilewise::grid::reduce<double, 256>;`
///       `__shared__ grid_reduce::temp_storage tmp;`
///       `double s = grid_reduce{tmp}(cg::this_grid(), v, cuda::std::plus<>{}, ws);`
/// @note Requires a cooperative launch (tilewise::launch_cooperative): grid.sync() in an ordinary
///       launch of more blocks than fit at once hangs. Collective: every thread of the grid calls
///       it, with the same op and workspace. One grid.sync() per call, plus block barriers.
///       Back-to-back calls (also of grid::exclusive_scan / grid::compact on the same workspace
///       and temp_storage) need no synchronization in between. The workspace is passed by value;
///       its state lives in device memory.
template <class T, unsigned BlockSize, unsigned W = 32>
class reduce {
  static_assert(detail::check_grid_args<T, BlockSize, W>::value);
  using block_reduce = block::reduce<T, BlockSize, W>;

 public:
  /// @brief Shared-memory scratch of the block stage, owned by the caller:
  ///        `__shared__ reduce::temp_storage tmp;` (any contents, no initialisation needed).
  struct temp_storage {
    typename block_reduce::temp_storage block;
  };

  TILEWISE_DEVICE explicit reduce(temp_storage& storage) : storage_(storage) {}

  /// @brief Reduction of `v` over every thread of the grid.
  /// @param grid `cg::this_grid()` of a cooperative launch
  /// @param op   associative binary functor (commutativity not needed)
  /// @param ws   the workspace made for this launch (grid::make_workspace)
  /// @return the reduction, on every thread of the grid (bitwise identical everywhere)
  /// @note Collective over the grid; syncs the grid once (grid.sync()).
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::grid_group const& grid, T v, Op op, workspace ws) {
    detail::grid_call<T, BlockSize> call(grid, ws);
    auto const block = cg::this_thread_block();
    T const partial  = block_reduce{storage_.block}(block, v, op);  // block barriers: step 2
    call.publish(partial);
    grid.sync();
    detail::grid_chunk const c(call.blocks, call.rank, BlockSize);
    T all{}, pre{};
    bool has_pre = false;
    detail::fold_partials<false>(call.bank(), c.first, c.count, 0u, op, all, pre, has_pre);
    return block_reduce{storage_.block}(block, all, op, c.threads);
  }

 private:
  temp_storage& storage_;
};

}  // namespace tilewise::grid
