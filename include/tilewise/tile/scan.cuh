/// @file
/// @brief tile::inclusive_scan and tile::exclusive_scan: Kogge–Stone scans built on shfl_up,
///        for `cg::thread_block_tile<W>` (W in 1..32) and `cg::coalesced_group`.
///
/// The operator need not be commutative: lane i combines `op(prefix of lanes < i, own value)`.
/// Both are function objects (as std::ranges' algorithms are), so an unqualified call after
/// `using namespace tilewise::tile;` never becomes ambiguous with `cooperative_groups::inclusive_scan`
/// found by argument-dependent lookup.
#pragma once

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/peer_scan.cuh>

namespace tilewise::detail {

/// Calls `f(lanes)` with the lanes view of `g`: a static view for tiles and full coalesced groups.
template <unsigned W, class Parent, class F>
TILEWISE_DEVICE decltype(auto) with_lanes(cg::thread_block_tile<W, Parent> const&, F&& f) {
  return f(tile_lanes<W>{});
}
template <class F>
TILEWISE_DEVICE decltype(auto) with_lanes(cg::coalesced_group const& g, F&& f) {
  if (g.size() == 32) {
    return f(tile_lanes<32>{});
  }
  return f(coalesced_lanes{g});
}

/// One Kogge–Stone step for 32-bit arithmetic plus on a static tile, as CUB writes it: the
/// shuffle's predicate guards a predicated add (one dependent instruction less than add + select).
template <unsigned W, class T>
TILEWISE_DEVICE T scan_step_plus32(tile_lanes<W> const& l, T v, unsigned d) {
  constexpr unsigned clamp = (32 - W) << 8;  // shfl.up: segment of W lanes, no lower clamp
  T r;
  if constexpr (cuda::std::is_same_v<T, float>) {
    asm("{ .reg .f32 r0; .reg .pred p;\n\t"
        "shfl.sync.up.b32 r0|p, %1, %2, %3, %4;\n\t"
        "@p add.f32 r0, r0, %1;\n\t"
        "mov.f32 %0, r0; }"
        : "=f"(r) : "f"(v), "r"(d), "r"(clamp), "r"(l.mask));
  } else {
    asm("{ .reg .u32 r0; .reg .pred p;\n\t"
        "shfl.sync.up.b32 r0|p, %1, %2, %3, %4;\n\t"
        "@p add.u32 r0, r0, %1;\n\t"
        "mov.u32 %0, r0; }"
        : "=r"(r) : "r"(v), "r"(d), "r"(clamp), "r"(l.mask));
  }
  return r;
}

template <class Lanes, class Op, class T>
inline constexpr bool uses_plus32_step =
  Lanes::width > 1 && !cuda::std::is_same_v<Lanes, coalesced_lanes> && kind_v<Op, T> == op_kind::plus &&
  (cuda::std::is_same_v<T, int> || cuda::std::is_same_v<T, unsigned> || cuda::std::is_same_v<T, float>);

/// Kogge–Stone: after the step with distance d, lane r holds the in-order combination of
/// lanes [r - 2d + 1, r]. log2(size) shfl_up.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T inclusive_scan_lanes(Lanes const& l, T v, Op& op) {
  if constexpr (cuda::std::is_same_v<Lanes, coalesced_lanes>) {
    return peer_inclusive_scan(l, l.mask, v, op);  // the group's lanes need not be contiguous
  } else {
#pragma unroll
    for (unsigned d = 1; d < l.size(); d *= 2) {
      if constexpr (uses_plus32_step<Lanes, Op, T>) {
        v = scan_step_plus32(l, v, d);
      } else {
        shuffled<T> const up = l.shfl_up(v, d);
        if (up.valid) {
          v = op(up.data, v);
        }
      }
    }
    return v;
  }
}

/// Exclusive prefix from the inclusive one: `op(init, incl - v)` for integer plus and xor
/// (no shuffle), otherwise one more shfl_up. Lane 0 gets `init`.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T exclusive_from_inclusive(Lanes const& l, T v, T incl, Op& op, T const& init) {
  constexpr op_kind k = kind_v<Op, T>;
  if constexpr (cuda::std::is_integral_v<T> && (k == op_kind::plus || k == op_kind::bit_xor)) {
    using U        = cuda::std::make_unsigned_t<T>;
    T const before = k == op_kind::plus ? T(U(incl) - U(v)) : T(incl ^ v);  // identity on lane 0
    return op(init, before);
  } else {
    shuffled<T> const up = l.shfl_up1(incl);
    return up.valid ? T(op(init, up.data)) : init;
  }
}

/// Exclusive scan without the aggregate: integer plus / xor subtract the own value from the
/// inclusive prefix; other ops scan the values shifted up by one rank with `init` on rank 0, which
/// saves the final `op(init, ...)` of exclusive_from_inclusive.
template <class Lanes, class T, class Op>
TILEWISE_DEVICE T exclusive_scan_lanes(Lanes const& l, T v, Op& op, T const& init) {
  constexpr op_kind k = kind_v<Op, T>;
  if constexpr (cuda::std::is_integral_v<T> && (k == op_kind::plus || k == op_kind::bit_xor)) {
    return exclusive_from_inclusive(l, v, inclusive_scan_lanes(l, v, op), op, init);
  } else {
    shuffled<T> const up = l.shfl_up1(v);
    return inclusive_scan_lanes(l, up.valid ? up.data : init, op);
  }
}

}  // namespace tilewise::detail

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::inclusive_scan.
struct inclusive_scan_fn {
  /// @brief Inclusive prefix combination over the group in rank order.
  /// @tparam Group `cg::thread_block_tile<W>` (W a power of two <= 32) or `cg::coalesced_group`
  /// @tparam T     any trivially copyable type
  /// @tparam Op    associative binary functor, need not be commutative
  /// @return on lane r: `v_0 op v_1 op ... op v_r`
  /// @note Collective: every lane of the group calls it. No memory is touched; the group is
  ///       implicitly synchronised by the shuffles.
  template <class Group, class T, class Op>
  TILEWISE_DEVICE T operator()(Group const& g, T v, Op op) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) { return detail::inclusive_scan_lanes(l, v, op); });
    } else {
      return v;
    }
  }
};

/// @brief Function object type of tilewise::tile::exclusive_scan.
struct exclusive_scan_fn {
  /// @brief Exclusive prefix combination seeded with `init`.
  /// @return on lane 0 `init`; on lane r > 0: `init op v_0 op ... op v_{r-1}`
  /// @note Collective; every lane gets its own prefix. Op need not be commutative.
  template <class Group, class T, class Op>
  TILEWISE_DEVICE T operator()(Group const& g, T v, Op op, cuda::std::type_identity_t<T> init) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) { return detail::exclusive_scan_lanes(l, v, op, init); });
    } else {
      return v;
    }
  }

  /// @brief As above, and `aggregate` receives the reduction of the whole group (without `init`).
  /// @note `aggregate` is written on every lane.
  template <class Group, class T, class Op>
  TILEWISE_DEVICE T operator()(Group const& g, T v, Op op, cuda::std::type_identity_t<T> init,
                               T& aggregate) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) {
        T const incl = detail::inclusive_scan_lanes(l, v, op);
        aggregate    = l.last(incl);
        return detail::exclusive_from_inclusive(l, v, incl, op, init);
      });
    } else {
      return v;
    }
  }
};

/// `T inclusive_scan(Tile const&, T v, Op op)` — see inclusive_scan_fn.
TILEWISE_GLOBAL_CONSTANT inclusive_scan_fn inclusive_scan{};
/// `T exclusive_scan(Tile const&, T v, Op op, T init [, T& aggregate])` — see exclusive_scan_fn.
TILEWISE_GLOBAL_CONSTANT exclusive_scan_fn exclusive_scan{};

}  // namespace tilewise::tile
