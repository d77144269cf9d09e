/// @file
/// @brief tile::reduce: the reduction of one value per lane, broadcast to every lane, for
///        `cg::thread_block_tile<W>` (W in 1..32) and `cg::coalesced_group`.
///
/// Paths, chosen at compile time:
/// - integers of at most 32 bits with plus / min / max / and / or / xor (libcu++'s
///   `cuda::std::plus`, `cuda::minimum`, `cuda::maximum`, `cuda::std::bit_*` or CG's functors):
///   one `redux.sync` on sm_80+ for tiles of `tile_tuning_sm80.redux_min_width` lanes or more and for
///   coalesced groups;
/// - anything else on a tile: a butterfly of log2(W) `shfl_xor`; operands are combined in lane
///   order, so every lane holds bitwise the same result even for ops that are not commutative;
/// - a coalesced group that is not the full warp: an inclusive scan, then the last rank's value.
#pragma once

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/lane_reduce.cuh>

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::reduce.
struct reduce_fn {
  /// @brief Reduction of `v` over all lanes of the group.
  /// @tparam Group `cg::thread_block_tile<W>` (W a power of two <= 32) or `cg::coalesced_group`
  /// @tparam T     any trivially copyable type
  /// @tparam Op    associative binary functor (the contract asks for a commutative one; lanes are
  ///               combined in order on tiles, so a non-commutative op gives the in-order result)
  /// @return the reduction, on every lane (bitwise identical across lanes)
  /// @note Collective: every lane of the group calls it; no memory is touched, nothing else syncs.
  template <class Group, class T, class Op>
  TILEWISE_DEVICE T operator()(Group const& g, T v, Op op) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::reduce_group(g, v, op);
    } else {
      return v;
    }
  }

  /// @brief Reduction over the lanes of rank < `valid` only (a partial tile).
  /// @param valid number of contributing lanes, 1 <= valid; values >= W mean the whole tile.
  ///        With valid == 0 the result is unspecified.
  /// @return the reduction, on every lane (also on lanes >= valid)
  /// @note Collective over the whole tile: lanes >= valid call it too.
  template <unsigned W, class Parent, class T, class Op>
  TILEWISE_DEVICE T operator()(cooperative_groups::thread_block_tile<W, Parent> const&, T v, Op op, unsigned valid) const {
    using Group = cooperative_groups::thread_block_tile<W, Parent>;
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::reduce_tile_partial(detail::tile_lanes<W>{}, v, op, valid);
    } else {
      return v;
    }
  }
};

/// `T reduce(Group const&, T v, Op op [, unsigned valid])` — see reduce_fn.
TILEWISE_GLOBAL_CONSTANT reduce_fn reduce{};

}  // namespace tilewise::tile
