/// @file
/// @brief The block scope's compile-time rules, the shape of a block (tiles, warps) and its lanes
///        views (the full-warp shuffle mask as a constant when every warp is full).
#pragma once

#include <cuda/std/type_traits>

#include <cassert>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>

namespace tilewise::detail {

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


}  // namespace tilewise::detail
