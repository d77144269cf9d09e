/// @file
/// @brief grid::compact: stable stream compaction over a whole cooperative grid — the values of
///        the threads that keep theirs, in grid thread_rank order, at out[0, count).
///
/// Composed from the grid scan (grid/scan.cuh): a thread's output index is the exclusive sum of
/// the keep flags before it, the count is the total. One grid-wide barrier per call.
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/functional>
#include <cuda/std/iterator>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/shell.cuh>
#include <tilewise/grid/scan.cuh>
#include <tilewise/grid/workspace.cuh>

namespace tilewise::grid {

namespace cg = cooperative_groups;

/// @brief Stable grid-wide compaction inside a cooperative kernel.
/// @tparam BlockSize threads per block of the launch, a multiple of 32 in [32, 1024]
/// @tparam W         tile width of the underlying scan (1, 2, 4, 8, 16 or 32)
/// @tparam Offset    integer type of the count and the output positions (a grid holds fewer
///                   than 2^32 threads, so `unsigned` always suffices)
/// @note Usage: `using grid_compact = tilewise::grid::compact<256>;`
///       `__shared__ grid_compact::temp_storage tmp;`
///       `unsigned n = grid_compact{tmp}(cg::this_grid(), keep, v, out, ws);`
/// @note Requires a cooperative launch (tilewise::launch_cooperative). The workspace must serve
///       values of sizeof(unsigned) bytes.
template <unsigned BlockSize, unsigned W = 32, class Offset = unsigned>
class compact : public detail::primitive_shell<typename detail::grid_scan<unsigned, BlockSize, W>::storage> {
  using impl  = detail::grid_scan<unsigned, BlockSize, W>;
  using shell = detail::primitive_shell<typename impl::storage>;
  using shell::storage_;

 public:
  using typename shell::temp_storage;
  using shell::shell;

  /// @brief Writes the values of the threads with `keep` to `out[0, count)` in grid thread_rank order.
  /// @tparam OutIt an output iterator advanced with cuda::std::next (random access is O(1))
  /// @param grid `cg::this_grid()` of a cooperative launch
  /// @param keep whether this thread's value is kept
  /// @param v    this thread's value
  /// @param out  the output, the same on every thread
  /// @param ws   the workspace made for this launch (grid::make_workspace)
  /// @return count, the number of kept values, on every thread of the grid
  /// @note Collective over the grid; syncs the grid once. Each kept thread writes its own value
  ///       after the barrier; back-to-back calls need no synchronization in between (reading
  ///       `out` written by other threads does: a grid.sync() or the next grid primitive).
  template <class T, class OutIt>
  TILEWISE_DEVICE Offset operator()(cg::grid_group const& grid, bool keep, T const& v, OutIt out, workspace ws) {
    cuda::std::plus<unsigned> op{};
    unsigned count        = 0;
    unsigned const before = impl::run(storage_, grid, keep ? 1u : 0u, op, 0u, ws, count);
    if (keep) {
      *cuda::std::next(out, static_cast<cuda::std::iter_difference_t<OutIt>>(before)) = v;
    }
    return static_cast<Offset>(count);
  }
};

}  // namespace tilewise::grid
