/// @file
/// @brief tile::reduce: the reduction of one value per lane, broadcast to every lane, for
///        `cg::thread_block_tile<W>` (W in 1..32) and `cg::coalesced_group`.
///
/// Integers of at most 32 bits with plus / min / max / and / or / xor (libcu++'s or CG's functors)
/// take one `redux.sync` (sm_80+: tiles of detail::tile_tuned.redux_min_width lanes or more, and
/// coalesced groups). Anything else on a tile: a butterfly of log2(W) `shfl_xor` combining in lane
/// order, so every lane holds bitwise the same result, even for ops that do not commute. A
/// coalesced group that is not the full warp: an inclusive scan, then the last rank's value.
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
  /// @param g  the group; every lane calls
  /// @param v  this lane's value
  /// @param op the reduction functor
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

  /// @brief Reduction over the lanes of rank < `valid` only (a partial tile); tiles only, not
  ///        coalesced groups.
  /// @param v     this lane's value (ignored on lanes >= valid)
  /// @param op    the reduction functor
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

/// @brief `T reduce(Group const&, T v, Op op [, unsigned valid])`: the reduction, on every lane (see reduce_fn).
TILEWISE_GLOBAL_CONSTANT reduce_fn reduce{};

}  // namespace tilewise::tile
