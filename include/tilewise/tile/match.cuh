/// @file
/// @brief tile::match_any: which lanes of the group hold the same key, plus the peer-group
///        building blocks (scans over an arbitrary set of lanes) that group_by and atomic use.
///
/// Its cost grows with the number of distinct keys in the warp (with 32, tens of shuffles:
/// `docs/tuning.md#tile-scope`). Use it where it saves more than that: equal keys meeting in a tile
/// in front of contended global atomics or hash-table inserts.
#pragma once

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/peer_scan.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::match_any.
struct match_any_fn {
  /// @brief The lanes of the group whose key equals this lane's key (bitwise comparison).
  /// @tparam Key a 4- or 8-byte trivially copyable type (other sizes: a compile-time error)
  /// @param g   the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param key this lane's key
  /// @return a mask in the group's rank numbering (bit r = rank r), always containing this lane.
  ///         With W < 32 only lanes of the caller's own tile can match.
  /// @note Collective; no memory is touched. Costs one `__match_any_sync` (see the file comment).
  template <class Group, class Key>
  TILEWISE_DEVICE unsigned operator()(Group const& g, Key const& key) const {
    detail::check_tile_args<Group, Key>();
    if constexpr (detail::valid_tile_args<Group, Key>) {
      return detail::with_lanes(g, [&](auto const& l) { return l.to_ranks(l.match(key)); });
    } else {
      return 0;
    }
  }
};

/// @brief `unsigned match_any(Group const&, Key k)`: the lanes holding the same key (see match_any_fn).
TILEWISE_GLOBAL_CONSTANT match_any_fn match_any{};

}  // namespace tilewise::tile
