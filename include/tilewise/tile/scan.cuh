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
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/lane_scan.cuh>

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::inclusive_scan.
struct inclusive_scan_fn {
  /// @brief Inclusive prefix combination over the group in rank order.
  /// @tparam Group `cg::thread_block_tile<W>` (W a power of two <= 32) or `cg::coalesced_group`
  /// @tparam T     any trivially copyable type
  /// @tparam Op    associative binary functor, need not be commutative
  /// @param g  the group; every lane calls
  /// @param v  this lane's value
  /// @param op the combining functor
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
  /// @param g    the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param v    this lane's value
  /// @param op   associative binary functor, need not be commutative
  /// @param init the seed, combined on the left of every prefix
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
  /// @param g         the group; every lane calls
  /// @param v         this lane's value
  /// @param op        associative binary functor, need not be commutative
  /// @param init      the seed, combined on the left of every prefix
  /// @param aggregate receives `v_0 op ... op v_last`
  /// @return this lane's exclusive prefix, as above
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

/// @brief `T inclusive_scan(Group const&, T v, Op op)`: inclusive prefix per lane (see inclusive_scan_fn).
TILEWISE_GLOBAL_CONSTANT inclusive_scan_fn inclusive_scan{};
/// @brief `T exclusive_scan(Group const&, T v, Op op, T init [, T& aggregate])`: exclusive prefix per
///        lane (see exclusive_scan_fn).
TILEWISE_GLOBAL_CONSTANT exclusive_scan_fn exclusive_scan{};

}  // namespace tilewise::tile
