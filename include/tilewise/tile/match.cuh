/// @file
/// @brief tile::match_any: which lanes of the group hold the same key, plus the peer-group
///        building blocks (scans over an arbitrary set of lanes) that group_by and atomic use.
///
/// Cost: `__match_any_sync` is about 370 cycles of latency on Hopper, roughly 65 shuffles'
/// worth of throughput (PERF-NOTES.md; measured again by bench/tile_ops_bench). Use it where it
/// saves more than that: many equal keys meeting in a tile (contended atomics, skewed keys).
#pragma once

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

/// Inclusive scan over the lanes of `peers` (warp-lane mask that holds this lane), in lane order:
/// Kogge–Stone in peer-rank space, each step reading the peer `d` ranks below through `__fns`.
/// Every lane of `l` calls it; the loop runs ceil(log2(largest peer group)) steps.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T peer_inclusive_scan(Lanes const& l, unsigned peers, T v, Op& op) {
  unsigned const lane  = lane_id();
  unsigned const below = __popc(peers & lanemask_lt());
  for (unsigned d = 1; l.any(below >= d); d *= 2) {
    unsigned const src = __fns(peers, lane, -int(d) - 1);
    T const other      = l.shfl_lane(v, below >= d ? src : lane);
    if (below >= d) {
      v = op(other, v);
    }
  }
  return v;
}

/// Reduction over the lanes of `peers`, on every peer: the scan's value at the last peer.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T peer_reduce(Lanes const& l, unsigned peers, T v, Op& op) {
  T const inclusive = peer_inclusive_scan(l, peers, v, op);
  return l.shfl_lane(inclusive, 31 - __clz(peers));
}

}  // namespace tilewise::detail

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::match_any.
struct match_any_fn {
  /// @brief The lanes of the group whose key equals this lane's key (bitwise comparison).
  /// @tparam Key a 4- or 8-byte trivially copyable type
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

/// `unsigned match_any(Group const&, Key k)` — see match_any_fn.
TILEWISE_GLOBAL_CONSTANT match_any_fn match_any{};

}  // namespace tilewise::tile
