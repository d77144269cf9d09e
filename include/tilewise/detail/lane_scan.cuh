/// @file
/// @brief The tile scans on a lanes view (detail::tile_lanes, coalesced_lanes): Kogge–Stone on
///        shfl_up, exclusive prefixes, and with_lanes, which picks the view of a group.
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
