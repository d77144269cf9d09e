/// @file
/// @brief tile::reduce_by_key: group the lanes of a tile by key and reduce each group
///        (an unsorted reduce-by-key inside one tile).
///
/// One `__match_any_sync` finds the groups, then ceil(log2(largest group)) shuffle steps reduce
/// them in lane order. Pays off where several lanes share a key (pre-aggregation before global
/// atomics or hash-table inserts); with all keys distinct it costs a match for nothing.
#pragma once

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/match.cuh>

namespace tilewise {

/// @brief Result of a per-key reduction inside a group.
template <class T>
struct group_result {
  T value;         ///< reduction over the lanes holding the same key (on every such lane)
  bool leader;     ///< true on exactly one lane per distinct key (the lowest rank)
  unsigned count;  ///< number of lanes holding the key
};

}  // namespace tilewise

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::reduce_by_key.
struct reduce_by_key_fn {
  /// @brief Reduces `v` over the lanes whose key equals this lane's key.
  /// @tparam Key 4- or 8-byte trivially copyable key, compared bitwise
  /// @tparam T   any trivially copyable value
  /// @tparam Op  associative, commutative functor (lanes are combined in rank order)
  /// @param g   the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param key this lane's key
  /// @param v   this lane's value
  /// @param op  the reduction functor
  /// @return group_result: `.value` and `.count` on every lane of the key, `.leader` on its lowest rank
  /// @note Collective; no memory is touched.
  template <class Group, class Key, class T, class Op>
  TILEWISE_DEVICE group_result<T> operator()(Group const& g, Key const& key, T v, Op op) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) {
        unsigned const peers = l.match(key);
        return group_result<T>{detail::peer_reduce(l, peers, v, op),
                               (peers & detail::lanemask_lt()) == 0, unsigned(__popc(peers))};
      });
    } else {
      return {v, true, 1};
    }
  }
};

/// @brief `group_result<T> reduce_by_key(Group const&, Key k, T v, Op op)`: per-key reduction inside
///        a group (see reduce_by_key_fn).
TILEWISE_GLOBAL_CONSTANT reduce_by_key_fn reduce_by_key{};

}  // namespace tilewise::tile
