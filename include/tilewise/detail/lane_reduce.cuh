/// @file
/// @brief The tile reductions on a lanes view: `redux.sync` for 32-bit integers with a known op,
///        an in-order butterfly otherwise, partial tiles (`valid`), coalesced groups.
#pragma once

#include <nv/target>

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/lane_scan.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

template <unsigned W, class T, class Op>
TILEWISE_DEVICE T butterfly_reduce(tile_lanes<W> const& l, T v, Op& op) {
#pragma unroll
  for (unsigned m = 1; m < W; m *= 2) {
    T const other = l.shfl_xor(v, m);
    if constexpr (known_commutative<Op, T>) {
      v = op(v, other);
    } else {  // after this step every lane holds the in-order reduction of its block of 2m lanes
      bool const upper = (l.rank & m) != 0;
      v                = op(upper ? other : v, upper ? v : other);
    }
  }
  return v;
}

/// `redux.sync` for a tile. A tile narrower than the warp reduces over its own lanes, unless the
/// whole warp is converged (see tile_lanes): then each of the 32 / W tiles gets one full-warp
/// `redux.sync` in which the other lanes contribute the identity, avoiding a partial-mask sync.
template <op_kind K, unsigned W, class T>
TILEWISE_DEVICE T redux_tile(tile_lanes<W> const& l, T v) {
  if constexpr (W == 32) {
    return redux<K>(0xFFFFFFFFu, v);
  } else {
    if (l.mask != 0xFFFFFFFFu) {
      return redux<K>(l.tile_mask, v);
    }
    unsigned const mine = (__ffs(l.tile_mask) - 1) / W;
    T result            = v;
#pragma unroll
    for (unsigned t = 0; t < 32 / W; ++t) {
      T const part = redux<K>(0xFFFFFFFFu, t == mine ? v : identity<K, T>());
      if (t == mine) {
        result = part;
      }
    }
    return result;
  }
}

/// Full-tile reduction over a lanes view (a tile_lanes, or the block scope's converged_lanes
/// whose shuffle mask is the constant full warp), with the tile tuning `Tuning`: `redux.sync` from
/// `Tuning.redux_min_width` lanes on. The library passes tile_tuned; the benchmark forces each path.
template <tile_tuning Tuning, unsigned W, class T, class Op>
TILEWISE_DEVICE T dispatch_reduce_tile(tile_lanes<W> const& l, T v, Op& op) {
  if constexpr (W == 1) {
    return v;
  } else if constexpr (redux_capable<Op, T> && W >= Tuning.redux_min_width) {
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_80, (return redux_tile<kind_v<Op, T>>(l, v);),
                      (return butterfly_reduce(l, v, op);))
  } else {
    return butterfly_reduce(l, v, op);
  }
}

template <unsigned W, class Parent, class T, class Op>
TILEWISE_DEVICE T reduce_group(cg::thread_block_tile<W, Parent> const&, T v, Op& op) {
  return dispatch_reduce_tile<tile_tuned>(tile_lanes<W>{}, v, op);
}

/// Reduction over a lanes view (used by the other tile primitives and the block scope).
template <unsigned W, class T, class Op>
TILEWISE_DEVICE T reduce_lanes(tile_lanes<W> const& l, T v, Op& op) {
  return dispatch_reduce_tile<tile_tuned>(l, v, op);
}

template <class T, class Op>
TILEWISE_DEVICE T reduce_lanes(coalesced_lanes const& l, T v, Op& op) {
  if constexpr (redux_capable<Op, T>) {
    NV_IF_TARGET(NV_PROVIDES_SM_80, (return redux<kind_v<Op, T>>(l.mask, v);))
  }
  return l.last(inclusive_scan_lanes(l, v, op));
}

template <class T, class Op>
TILEWISE_DEVICE T reduce_group(cg::coalesced_group const& g, T v, Op& op) {
  return with_lanes(g, [&](auto const& l) { return reduce_lanes(l, v, op); });
}

/// Partial tile: only ranks < valid contribute. Known ops substitute their identity and take the
/// full-tile path; other ops use a bounded shfl_down tree and broadcast rank 0. Neither branches on
/// `valid`, so every tile of a warp runs the same shuffles (see tile_lanes).
template <unsigned W, class T, class Op>
TILEWISE_DEVICE T reduce_tile_partial(tile_lanes<W> const& l, T v, Op& op, unsigned valid) {
  constexpr op_kind k = kind_v<Op, T>;
  if constexpr (k != op_kind::other) {
    return reduce_lanes(l, l.rank < valid ? v : identity<k, T>(), op);
  } else {
#pragma unroll
    for (unsigned d = 1; d < W; d *= 2) {
      shuffled<T> const down = l.shfl_down(v, d);
      if (l.rank + d < valid) {
        v = op(v, down.data);
      }
    }
    return l.shfl(v, 0);
  }
}

}  // namespace tilewise::detail
