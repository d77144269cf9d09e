/// @file
/// @brief block::compact: stable stream compaction within a thread block — the values of the
///        threads that keep theirs, in thread_rank order, at out[0, count).
///
/// Composed from the block scan: each thread's output slot is the exclusive sum of the keep
/// flags before it (block::exclusive_scan of 0/1, whose tile stage is the tile scan), and the
/// block total is the count. One or two barriers, as the scan's plan says.
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/functional>
#include <cuda/std/iterator>

#include <tilewise/block/scan.cuh>
#include <tilewise/detail/config.cuh>

namespace tilewise::block {

/// @brief Stable block-wide compaction.
/// @tparam BlockSize threads of the launch, 1..1024, a multiple of W
/// @tparam W         tile width of the underlying scan (1, 2, 4, 8, 16 or 32)
/// @note Usage: `using block_compact = tilewise::block::compact<256>;`
///       `__shared__ block_compact::temp_storage tmp;`
///       `unsigned n = block_compact{tmp}(cg::this_thread_block(), keep, v, out);`
template <unsigned BlockSize, unsigned W = 32>
class compact {
  using scan = exclusive_scan<unsigned, BlockSize, W>;

 public:
  /// Scratch in shared memory, owned by the caller (the scan's); any contents, no initialisation.
  struct temp_storage {
    /// the exclusive scan's scratch
    typename scan::temp_storage scan_storage;
  };

  /// @param storage the caller's shared-memory scratch (any contents: no initialisation needed)
  TILEWISE_DEVICE explicit compact(temp_storage& storage) : storage_(storage) {}

  /// @brief Writes the values of the threads with `keep` to `out[0, count)` in thread_rank order.
  /// @tparam OutIt an output iterator advanced with cuda::std::next (random access is O(1))
  /// @param block `cg::this_thread_block()`
  /// @param keep  whether this thread's value is kept
  /// @param v     this thread's value
  /// @param out   the output, the same on every thread
  /// @return count, the number of kept values, on every thread
  /// @note Collective over the block; syncs it (the scan's barriers). Each kept thread writes its
  ///       own value after the scan; consecutive calls on one temp_storage need no barrier.
  template <class T, class OutIt>
  TILEWISE_DEVICE unsigned operator()(cooperative_groups::thread_block const& block, bool keep, T const& v,
                                      OutIt out) {
    unsigned count        = 0;
    unsigned const before = scan{storage_.scan_storage}(block, keep ? 1u : 0u, cuda::std::plus<unsigned>{}, 0u, count);
    if (keep) {
      *cuda::std::next(out, before) = v;
    }
    return count;
  }

 private:
  temp_storage& storage_;
};

}  // namespace tilewise::block
