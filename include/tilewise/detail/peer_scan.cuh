/// @file
/// @brief Scans and reductions over an arbitrary set of lanes of a warp ("peers": the lanes of a
///        coalesced group, or the lanes of a tile that share a key), by pointer jumping.
#pragma once

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>

namespace tilewise::detail {

/// The highest lane of `lanes` (a warp-lane mask), 32 when it is empty.
TILEWISE_DEVICE unsigned highest_lane(unsigned lanes) { return lanes == 0 ? 32u : 31u - __clz(lanes); }

/// Inclusive scan over the lanes of `peers` (warp-lane mask that holds this lane), in lane order,
/// by pointer jumping: each lane holds the combination of a run of peers ending at itself and the
/// lane of the peer just below that run; a step reads both from that peer (two independent
/// shuffles) and doubles the run. ceil(log2(largest peer group)) steps, uniform over `l`'s mask
/// (faster than reading each step's source through `__fns`: `docs/tuning.md#tile-scope`).
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T peer_inclusive_scan(Lanes const& l, unsigned peers, T v, Op& op) {
  unsigned const lane = lane_id();
  unsigned below      = highest_lane(peers & lanemask_lt());  // 32: no peer below
  while (l.any(below < 32)) {
    unsigned const src   = below < 32 ? below : lane;
    T const other        = l.shfl_lane(v, src);
    unsigned const after = l.shfl_lane(below, src);
    if (below < 32) {
      v     = op(other, v);
      below = after;
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
