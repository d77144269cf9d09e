/// @file
/// @brief What a tile-scope primitive needs to know about its group: the compile-time rules
///        (valid width, trivially copyable values) and a small "lanes" view that shuffles any
///        trivially copyable T word by word (through libcu++'s cuda::device::warp_shuffle_*).
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/bit>
#include <cuda/std/type_traits>
#include <cuda/warp>

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// Which groups the tile scope accepts. Only the specialisations below are supported.
template <class Group>
struct group_traits {
  static constexpr bool supported = false;
  static constexpr bool is_tile   = false;
  static constexpr unsigned width = 0;
};

template <unsigned W, class Parent>
struct group_traits<cg::thread_block_tile<W, Parent>> {
  static constexpr bool supported = true;
  static constexpr bool is_tile   = true;
  static constexpr unsigned width = W;
};

template <>
struct group_traits<cg::coalesced_group> {
  static constexpr bool supported = true;
  static constexpr bool is_tile   = false;
  static constexpr unsigned width = 32;  // an upper bound: the size is known at run time
};

template <class Group>
using traits_of = group_traits<cuda::std::remove_cvref_t<Group>>;

/// A tile width the tile scope supports: a power of two no larger than one warp.
template <unsigned W>
inline constexpr bool valid_tile_width = W >= 1 && W <= 32 && cuda::std::has_single_bit(W);

template <class Group>
inline constexpr bool valid_group =
  traits_of<Group>::supported && (!traits_of<Group>::is_tile || valid_tile_width<traits_of<Group>::width>);

template <class Group, class T>
inline constexpr bool valid_tile_args = valid_group<Group> && cuda::std::is_trivially_copyable_v<T>;

/// The compile-time rules of every tile primitive, each with a message that names the rule.
template <class Group, class T>
TILEWISE_DEVICE constexpr void check_tile_args() {
  static_assert(traits_of<Group>::supported,
                "tilewise::tile: the group must be cg::thread_block_tile<W> or cg::coalesced_group");
  static_assert(!traits_of<Group>::is_tile || valid_tile_width<traits_of<Group>::width>,
                "tilewise::tile: tile width W must be a power of two no larger than 32 (1, 2, 4, 8, 16 or 32)");
  static_assert(cuda::std::is_trivially_copyable_v<T>,
                "tilewise::tile: T must be trivially copyable (values are shuffled word by word)");
}

TILEWISE_DEVICE unsigned lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// Lanes below this one in the warp.
TILEWISE_DEVICE unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

/// The bits of a 4- or 8-byte key, as `__match_any_sync` takes them (keys compare bitwise).
template <class Key>
TILEWISE_DEVICE auto key_bits(Key const& k) {
  static_assert(sizeof(Key) == 4 || sizeof(Key) == 8, "tilewise::tile: a key must be 4 or 8 bytes");
  static_assert(cuda::std::is_trivially_copyable_v<Key>, "tilewise::tile: a key must be trivially copyable");
  using word = cuda::std::conditional_t<sizeof(Key) == 4, unsigned, unsigned long long>;
  return cuda::std::bit_cast<word>(k);
}

template <class T>
struct shuffled {
  T data;
  bool valid;  ///< the source lane exists in the group (shfl_up / shfl_down)
};

/// Lanes of a static tile of width W (W lanes, aligned in the warp).
///
/// Shuffles name `mask`: the whole warp when all 32 lanes are converged at construction, the
/// tile's own lanes otherwise. A partial-mask `shfl.sync` makes the warp synchronise each tile on
/// its own (many times slower: `docs/tuning.md#tile-scope`); when every lane of the warp is here,
/// all tiles run the same shuffle sequence (it depends only on W), so the full mask with segment
/// width W is equivalent.
/// `tile_mask` is always the tile's lanes, for `redux.sync`, which has no segment width.
template <unsigned W>
struct tile_lanes {
  static constexpr unsigned width = W;
  static constexpr cuda::std::integral_constant<int, int(W)> w{};
  unsigned tile_mask;  ///< the tile's lanes in the hardware warp
  unsigned mask;       ///< member mask of the shuffles
  unsigned rank;       ///< this lane's rank in the tile
  unsigned lane;       ///< this lane in the hardware warp
  unsigned base;       ///< the tile's first lane in the hardware warp

  TILEWISE_DEVICE tile_lanes() {
    lane      = lane_id();
    base      = lane & ~(W - 1);
    tile_mask = W == 32 ? 0xFFFFFFFFu : ((1u << (W % 32)) - 1u) << base;
    if constexpr (W == 1 || W == 32) {  // nothing to decide (W == 1 never shuffles)
      mask = tile_mask;
    } else {
      mask = __activemask() == 0xFFFFFFFFu ? 0xFFFFFFFFu : tile_mask;
    }
    rank      = lane & (W - 1);
  }
  TILEWISE_DEVICE static constexpr unsigned size() { return W; }

  template <class T>
  TILEWISE_DEVICE shuffled<T> shfl_up1(T const& v) const {
    return shfl_up(v, 1);
  }
  template <class T>
  TILEWISE_DEVICE T last(T const& v) const {
    return shfl(v, W - 1);
  }

  // Warp-lane-numbered helpers (bit i = hardware lane i), restricted to this tile's lanes.
  TILEWISE_DEVICE unsigned members() const { return tile_mask; }
  TILEWISE_DEVICE unsigned ballot(bool p) const { return __ballot_sync(mask, p) & tile_mask; }
  TILEWISE_DEVICE bool any(bool p) const { return __any_sync(mask, p); }
  template <class Key>
  TILEWISE_DEVICE unsigned match(Key const& k) const {
    return __match_any_sync(mask, key_bits(k)) & tile_mask;
  }
  /// A warp-lane mask of this tile's lanes, renumbered by rank in the tile.
  TILEWISE_DEVICE unsigned to_ranks(unsigned lanes) const { return W == 32 ? lanes : lanes >> base; }
  template <class T>
  TILEWISE_DEVICE T shfl_lane(T const& v, unsigned src_lane) const {
    return cuda::device::warp_shuffle_idx(v, int(src_lane), mask).data;
  }

  template <class T>
  TILEWISE_DEVICE T shfl(T const& v, unsigned src_rank) const {
    return cuda::device::warp_shuffle_idx(v, int(src_rank), mask, w).data;
  }
  template <class T>
  TILEWISE_DEVICE T shfl_xor(T const& v, unsigned lane_mask) const {
    return cuda::device::warp_shuffle_xor(v, int(lane_mask), mask, w).data;
  }
  /// `valid` is computed from the rank rather than taken from the shuffle's predicate, so the
  /// combine that uses it need not wait for the shuffle (it matters for multi-word T).
  template <class T>
  TILEWISE_DEVICE shuffled<T> shfl_up(T const& v, unsigned delta) const {
    if constexpr (W == 1) {
      return {v, false};  // a single lane has no lane below it
    } else {
      return {cuda::device::warp_shuffle_up(v, int(delta), mask, w).data, rank >= delta};
    }
  }
  template <class T>
  TILEWISE_DEVICE shuffled<T> shfl_down(T const& v, unsigned delta) const {
    if constexpr (W == 1) {
      return {v, false};
    } else {
      return {cuda::device::warp_shuffle_down(v, int(delta), mask, w).data, rank + delta < W};
    }
  }
};

/// The lane mask of a coalesced group. CG keeps it protected; its own collectives read it
/// through this accessor.
TILEWISE_DEVICE unsigned coalesced_mask(cg::coalesced_group const& g) {
  return cg::details::_coalesced_group_data_access::get_mask(g);
}

/// Lanes of a coalesced group: any subset of the warp, ranked in lane order.
struct coalesced_lanes {
  static constexpr unsigned width = 32;
  unsigned mask;
  unsigned lane;
  unsigned rank;
  unsigned count;

  TILEWISE_DEVICE explicit coalesced_lanes(cg::coalesced_group const& g)
      : mask(coalesced_mask(g)), lane(lane_id()), rank(g.thread_rank()), count(g.size()) {}
  TILEWISE_DEVICE unsigned size() const { return count; }

  /// The value of the next lower rank, `valid == false` on rank 0.
  template <class T>
  TILEWISE_DEVICE shuffled<T> shfl_up1(T const& v) const {
    unsigned const below = mask & lanemask_lt();
    unsigned const src   = below == 0 ? lane : 31u - __clz(below);
    return {cuda::device::warp_shuffle_idx(v, int(src), mask).data, below != 0};
  }
  /// The value of the lane with rank `count - 1`.
  template <class T>
  TILEWISE_DEVICE T last(T const& v) const {
    return cuda::device::warp_shuffle_idx(v, int(31 - __clz(mask)), mask).data;
  }

  // Warp-lane-numbered helpers (bit i = hardware lane i).
  TILEWISE_DEVICE unsigned members() const { return mask; }
  TILEWISE_DEVICE unsigned ballot(bool p) const { return __ballot_sync(mask, p); }
  TILEWISE_DEVICE bool any(bool p) const { return __any_sync(mask, p); }
  template <class Key>
  TILEWISE_DEVICE unsigned match(Key const& k) const {
    return __match_any_sync(mask, key_bits(k));
  }
  /// A warp-lane mask of group lanes, renumbered by rank in the group (bit r = rank r).
  TILEWISE_DEVICE unsigned to_ranks(unsigned lanes) const {
    unsigned packed = 0;
    for (unsigned rest = lanes; rest != 0; rest &= rest - 1) {
      unsigned const l = __ffs(rest) - 1;
      packed |= 1u << __popc(mask & ((1u << l) - 1u));
    }
    return packed;
  }
  template <class T>
  TILEWISE_DEVICE T shfl_lane(T const& v, unsigned src_lane) const {
    return cuda::device::warp_shuffle_idx(v, int(src_lane), mask).data;
  }
};

}  // namespace tilewise::detail
