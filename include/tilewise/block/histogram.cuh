/// @file
/// @brief block::histogram: a histogram privatised in the block's shared memory (caller-owned
///        temp_storage), filled with tile::histogram by every W-tile, then merged into a global
///        histogram with one atomic per non-zero bin.
#pragma once

#include <cassert>

#include <cooperative_groups.h>

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/histogram.cuh>

namespace tilewise::block {

/// @brief A block-private histogram of `Bins` counters.
/// @tparam Counter   int32, uint32, int64, uint64, float or double
/// @tparam Bins      number of bins (the temp_storage holds them: Bins * sizeof(Counter) bytes)
/// @tparam BlockSize threads per block of the launch, a multiple of W, at most 1024
/// @tparam W         tile width the block is partitioned into (1, 2, 4, 8, 16 or 32)
///
/// Use: `init(block)`; any number of `add(block, bin, w)`; `merge(block, global_bins)`.
template <class Counter, unsigned Bins, unsigned BlockSize, unsigned W = 32>
class histogram {
  static_assert(detail::valid_tile_width<W>,
                "tilewise::block: tile width W must be a power of two no larger than 32 (1, 2, 4, 8, 16 or 32)");
  static_assert(BlockSize >= 1 && BlockSize <= 1024, "tilewise::block: BlockSize must be in [1, 1024]");
  static_assert(BlockSize % W == 0, "tilewise::block: BlockSize must be a multiple of the tile width W");
  static_assert(Bins >= 1, "tilewise::block::histogram: Bins must be at least 1");
  static_assert(detail::atomic_add_type<Counter>,
                "tilewise::block::histogram: Counter must be int32, uint32, int64, uint64, float or double");

 public:
  /// Shared-memory bins; the caller places this in `__shared__` (or dynamic shared) memory.
  struct temp_storage {
    /// the block's counters
    Counter bins[Bins];
  };

  /// @param storage the caller's shared-memory bins (any contents: `init` zeroes them)
  TILEWISE_DEVICE explicit histogram(temp_storage& storage) : storage_(storage) {}

  /// @brief Zeroes the bins.
  /// @param block `cg::this_thread_block()`
  /// @note Collective over the block; ends with a block barrier, so `add` may follow at once.
  TILEWISE_DEVICE void init(cooperative_groups::thread_block const& block) {
    check_launch(block);
    for (unsigned b = block.thread_rank(); b < Bins; b += BlockSize) {
      storage_.bins[b] = Counter(0);
    }
    block.sync();
  }

  /// @brief Adds 1 to bin `bin` (see tile::histogram for how equal bins are combined).
  /// @param block `cg::this_thread_block()`
  /// @param bin   must be in [0, Bins): the caller's contract, trapped in debug builds.
  /// @note Collective over each W-tile (whole tiles call it together); no barrier.
  template <class Index>
  TILEWISE_DEVICE void add(cooperative_groups::thread_block const& block, Index bin) {
    check_bin(bin);
    tilewise::tile::histogram(cooperative_groups::tiled_partition<W>(block), storage_.bins, bin);
  }

  /// @brief Adds `w` to bin `bin`.
  /// @param block `cg::this_thread_block()`
  /// @param bin   must be in [0, Bins): the caller's contract, trapped in debug builds
  /// @param w     this thread's weight
  /// @note Collective over each W-tile (whole tiles call it together); no barrier.
  template <class Index>
  TILEWISE_DEVICE void add(cooperative_groups::thread_block const& block, Index bin,
                           cuda::std::type_identity_t<Counter> w) {
    check_bin(bin);
    tilewise::tile::histogram(cooperative_groups::tiled_partition<W>(block), storage_.bins, bin, w);
  }

  /// @brief Adds the block's bins into `global_bins[0, Bins)` (one atomic per non-zero bin).
  /// @param block       `cg::this_thread_block()`
  /// @param global_bins the histogram the block's counts are added to (global memory)
  /// @note Collective over the block; begins with a block barrier (all adds done). The bins keep
  ///       their counts; call init before reusing the storage.
  TILEWISE_DEVICE void merge(cooperative_groups::thread_block const& block, Counter* global_bins) {
    block.sync();
    for (unsigned b = block.thread_rank(); b < Bins; b += BlockSize) {
      Counter const c = storage_.bins[b];
      if (c != Counter(0)) {
        detail::atomic_fetch_add(global_bins + b, c);
      }
    }
  }

  /// @brief The block's bins (read them after a barrier).
  /// @return a pointer to the `Bins` counters in the caller's temp_storage
  TILEWISE_DEVICE Counter const* bins() const { return storage_.bins; }

 private:
  template <class Index>
  TILEWISE_DEVICE static void check_bin([[maybe_unused]] Index bin) {
    static_assert(cuda::std::is_integral_v<Index>, "tilewise::block::histogram: the bin index must be an integer");
    assert(cuda::std::make_unsigned_t<Index>(bin) < Bins && "tilewise::block::histogram: bin index out of range");
  }
  TILEWISE_DEVICE static void check_launch([[maybe_unused]] cooperative_groups::thread_block const& block) {
    assert(block.size() == BlockSize && "tilewise::block: the launch's block size must equal BlockSize");
  }

  temp_storage& storage_;
};

}  // namespace tilewise::block
