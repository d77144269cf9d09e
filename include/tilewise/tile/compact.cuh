/// @file
/// @brief tile::compact (stable, lane order) and tile::compact_append (one atomic per tile
///        reserves room in a shared output): stream compaction with ballot + popc.
#pragma once

#include <cuda/std/iterator>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::compact.
struct compact_fn {
  /// @brief Writes the values of the lanes with `keep` to `out[0, count)` in rank order.
  /// @tparam OutIt an output iterator advanced with cuda::std::next (random access is O(1))
  /// @param g    the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param keep whether this lane's value is kept
  /// @param v    this lane's value
  /// @param out  the output, the same on every lane
  /// @return count, the number of kept values, on every lane
  /// @note Collective; each kept lane writes its own value, nothing else synchronises.
  template <class Group, class T, class OutIt>
  TILEWISE_DEVICE unsigned operator()(Group const& g, bool keep, T const& v, OutIt out) const {
    detail::check_tile_args<Group, T>();
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) {
        unsigned const kept = l.ballot(keep);
        if (keep) {
          *cuda::std::next(out, __popc(kept & detail::lanemask_lt())) = v;
        }
        return unsigned(__popc(kept));
      });
    } else {
      return 0u;
    }
  }
};

/// @brief Function object type of tilewise::tile::compact_append.
struct compact_append_fn {
  /// @brief Appends the kept values to a buffer shared by many tiles: one atomicAdd on `cursor`
  ///        per tile reserves `count` slots at `base`, kept lanes write `out[base + rank]`.
  /// @tparam Offset int32, uint32, int64 or uint64 (the cursor's type)
  /// @param g      the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param keep   whether this lane's value is kept
  /// @param v      this lane's value
  /// @param out    the shared output buffer, the same on every lane
  /// @param cursor the buffer's fill count (global or shared memory), advanced by the count
  /// @return base on every lane. When no lane keeps, the cursor is not touched and base is 0.
  /// @note Collective. Values of one tile are contiguous and in rank order; the order between
  ///       tiles is whatever order their atomics run in.
  template <class Group, class T, class OutIt, class Offset>
  TILEWISE_DEVICE Offset operator()(Group const& g, bool keep, T const& v, OutIt out, Offset* cursor) const {
    detail::check_tile_args<Group, T>();
    static_assert(cuda::std::is_integral_v<Offset> && detail::atomic_add_type<Offset>,
                  "tilewise::tile::compact_append: the cursor must be int32, uint32, int64 or uint64");
    if constexpr (detail::valid_tile_args<Group, T>) {
      return detail::with_lanes(g, [&](auto const& l) {
        unsigned const kept   = l.ballot(keep);
        unsigned const leader = __ffs(l.members()) - 1;
        Offset base           = 0;
        if (kept != 0 && detail::lane_id() == leader) {
          base = detail::atomic_fetch_add(cursor, Offset(__popc(kept)));
        }
        base = l.shfl_lane(base, leader);
        if (keep) {
          *cuda::std::next(out, base + Offset(__popc(kept & detail::lanemask_lt()))) = v;
        }
        return base;
      });
    } else {
      return Offset(0);
    }
  }
};

/// @brief `unsigned compact(Group const&, bool keep, T v, OutIt out)`: stable compaction (see compact_fn).
TILEWISE_GLOBAL_CONSTANT compact_fn compact{};
/// @brief `Offset compact_append(Group const&, bool keep, T v, OutIt out, Offset* cursor)`: compaction
///        into a buffer shared by many tiles (see compact_append_fn).
TILEWISE_GLOBAL_CONSTANT compact_append_fn compact_append{};

}  // namespace tilewise::tile
