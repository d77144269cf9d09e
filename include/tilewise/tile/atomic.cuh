/// @file
/// @brief tile::atomic_add: warp-aggregated atomicAdd. Lanes that add to the same address are
///        combined into one atomic per distinct address, and every lane still gets the value it
///        would have seen from its own atomicAdd, in rank order.
///
/// A group adding to one address (a counter, a queue tail) takes a tile scan and one atomic;
/// otherwise one match_any groups the lanes by address. Where addresses are known to be distinct,
/// plain atomicAdd is cheaper (`docs/tuning.md#tile-scope`).
#pragma once

#include <cuda/std/cstdint>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/match.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

template <class T>
inline constexpr bool atomic_add_type =
  cuda::std::is_same_v<T, int> || cuda::std::is_same_v<T, unsigned> || cuda::std::is_same_v<T, long long> ||
  cuda::std::is_same_v<T, unsigned long long> || cuda::std::is_same_v<T, long> ||
  cuda::std::is_same_v<T, unsigned long> || cuda::std::is_same_v<T, float> || cuda::std::is_same_v<T, double>;

/// One relaxed atomicAdd (`atomicAdd` keeps shared-memory addresses on ATOMS, which the generic
/// addressing of cuda::atomic_ref's inline PTX does not). 64-bit signed adds are two's complement.
template <class T>
TILEWISE_DEVICE T atomic_fetch_add(T* addr, T v) {
  static_assert(atomic_add_type<T>,
                "tilewise: atomic types are int32, uint32, int64, uint64, float and double");
  if constexpr (cuda::std::is_integral_v<T> && sizeof(T) == 8) {
    using U = unsigned long long;
    return T(atomicAdd(reinterpret_cast<U*>(addr), U(v)));
  } else {
    return atomicAdd(addr, v);
  }
}

/// The aggregated add over the lanes of `l`. The paths are chosen uniformly over the shuffle mask
/// (the whole warp when it is converged), so all tiles sharing a warp shuffle alike.
template <class Lanes, class T>
TILEWISE_DEVICE T aggregated_atomic_add(Lanes const& l, T* addr, T v) {
  cuda::std::plus<T> op{};
  unsigned const lane    = lane_id();
  unsigned const members = l.members();
  auto const key         = reinterpret_cast<cuda::std::uintptr_t>(addr);
  unsigned peers;
  T inclusive;
  if (!l.any(key != l.shfl_lane(key, __ffs(members) - 1))) {  // one address per group: no match
    peers     = members;
    inclusive = inclusive_scan_lanes(l, v, op);
  } else {
    peers     = l.match(key);
    inclusive = peer_inclusive_scan(l, peers, v, op);
  }
  unsigned const leader = __ffs(peers) - 1;
  T const total         = l.shfl_lane(inclusive, 31 - __clz(peers));
  T base{};
  if (lane == leader) {
    base = atomic_fetch_add(addr, total);
  }
  base = l.shfl_lane(base, leader);
  if constexpr (cuda::std::is_integral_v<T>) {
    return T(base + (inclusive - v));  // exact
  } else {  // the prefix of the peers below, without the rounding of inclusive - v
    unsigned const below = highest_lane(peers & lanemask_lt());
    T const before       = l.shfl_lane(inclusive, below < 32 ? below : lane);
    return below < 32 ? T(base + before) : base;
  }
}

}  // namespace tilewise::detail

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::atomic_add.
struct atomic_add_fn {
  /// @brief Adds `v` to `*addr` (global or shared memory) with one atomic per distinct address.
  /// @tparam T int32, uint32, int64, uint64, float or double (other types: a compile-time error)
  /// @param g    the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param addr this lane's target; lanes may pass the same or different addresses
  /// @param v    the value this lane adds
  /// @return the value of `*addr` this lane would have seen from its own `atomicAdd(addr, v)` if the
  ///         lanes sharing `addr` had added in rank order (floating point: up to rounding)
  /// @note Collective; lanes may pass different addresses. Relaxed ordering, like atomicAdd.
  template <class Group, class T>
  TILEWISE_DEVICE T operator()(Group const& g, T* addr, cuda::std::type_identity_t<T> v) const {
    detail::check_tile_args<Group, T>();
    static_assert(detail::atomic_add_type<T>,
                  "tilewise::tile::atomic_add: T must be int32, uint32, int64, uint64, float or double");
    if constexpr (detail::valid_tile_args<Group, T> && detail::atomic_add_type<T>) {
      return detail::with_lanes(g, [&](auto const& l) { return detail::aggregated_atomic_add(l, addr, v); });
    } else {
      return v;
    }
  }
};

/// @brief `T atomic_add(Group const&, T* addr, T v)`: warp-aggregated atomicAdd (see atomic_add_fn).
TILEWISE_GLOBAL_CONSTANT atomic_add_fn atomic_add{};

}  // namespace tilewise::tile
