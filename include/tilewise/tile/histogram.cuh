/// @file
/// @brief tile::histogram: adds a weight to one bin per lane, combining equal bins within the
///        tile first where that pays.
///
/// Bins in shared memory: plain atomics (the hardware merges a warp's equal addresses). Bins in
/// global memory: a tile reduction and one atomic when the whole group hits one bin, otherwise
/// one atomic per distinct bin (match_any). Measurements: `docs/tuning.md#tile-histogram`.
/// All lanes of a warp pass bins in the same memory space, and the bin index must lie inside the
/// histogram (the caller's contract). Debug builds (no NDEBUG) check the memory space and trap on
/// negative indices; the `cuda::std::span` overloads also on indices >= size.
#pragma once

#include <cassert>

#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/peer_scan.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/match.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

template <bool UnitWeight, class Lanes, class Counter, class Index>
TILEWISE_DEVICE void histogram_add(Lanes const& l, Counter* bins, Index bin, Counter w) {
  bool const shared = __isShared(bins);
  assert(l.ballot(shared) == (shared ? l.members() : 0u) &&
         "tilewise::tile::histogram: every lane must pass bins in the same memory space");
  if (shared) {  // plain atomics (see the file comment)
    atomic_fetch_add(&bins[bin], w);
    return;
  }
  cuda::std::plus<Counter> op{};
  unsigned const members = l.members();
  unsigned const first   = __ffs(members) - 1;
  if (!l.any(bin != l.shfl_lane(bin, first))) {  // every group of the shuffle mask in one bin
    Counter total;
    if constexpr (UnitWeight) {
      total = Counter(__popc(members));
    } else {
      total = reduce_lanes(l, w, op);
    }
    if (lane_id() == first) {
      atomic_fetch_add(&bins[bin], total);
    }
    return;
  }
  unsigned const peers = l.match(bin);  // one atomic per distinct bin
  Counter total;
  if constexpr (UnitWeight) {
    total = Counter(__popc(peers));
  } else {
    total = peer_reduce(l, peers, w, op);
  }
  if ((peers & lanemask_lt()) == 0) {
    atomic_fetch_add(&bins[bin], total);
  }
}

}  // namespace tilewise::detail

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::histogram.
struct histogram_fn {
  /// @brief Adds 1 to `bins[bin]` for every lane (bins in shared or global memory).
  /// @tparam Counter int32, uint32, int64, uint64, float or double
  /// @tparam Index   an integer type; `bin` must be a valid index into `bins` (caller's contract)
  /// @param g    the group: `cg::thread_block_tile<W>` or `cg::coalesced_group`; every lane calls
  /// @param bins the histogram, in shared or global memory (the same space on every lane of a warp)
  /// @param bin  this lane's bin
  /// @note Collective; relaxed atomics, nothing synchronises — read the bins after a barrier.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, Counter* bins, Index bin) const {
    add<true>(g, bins, bin, Counter(1));
  }

  /// @brief Adds `w` to `bins[bin]` for every lane.
  /// @param g    the group; every lane calls
  /// @param bins the histogram, in shared or global memory
  /// @param bin  this lane's bin
  /// @param w    this lane's weight
  /// @note Collective; relaxed atomics, nothing synchronises.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, Counter* bins, Index bin, cuda::std::type_identity_t<Counter> w) const {
    add<false>(g, bins, bin, w);
  }

  /// @brief Adds 1 to `bins[bin]` for every lane; debug builds also trap on `bin >= bins.size()`.
  /// @param g    the group; every lane calls
  /// @param bins the histogram, in shared or global memory
  /// @param bin  this lane's bin, in [0, bins.size())
  /// @note Collective; relaxed atomics, nothing synchronises.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, cuda::std::span<Counter> bins, Index bin) const {
    assert(cuda::std::size_t(bin) < bins.size() && "tilewise::tile::histogram: bin index out of range");
    add<true>(g, bins.data(), bin, Counter(1));
  }
  /// @brief Adds `w` to `bins[bin]` for every lane; debug builds also trap on `bin >= bins.size()`.
  /// @param g    the group; every lane calls
  /// @param bins the histogram, in shared or global memory
  /// @param bin  this lane's bin, in [0, bins.size())
  /// @param w    this lane's weight
  /// @note Collective; relaxed atomics, nothing synchronises.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, cuda::std::span<Counter> bins, Index bin,
                                  cuda::std::type_identity_t<Counter> w) const {
    assert(cuda::std::size_t(bin) < bins.size() && "tilewise::tile::histogram: bin index out of range");
    add<false>(g, bins.data(), bin, w);
  }

 private:
  template <bool UnitWeight, class Group, class Counter, class Index>
  TILEWISE_DEVICE static void add(Group const& g, Counter* bins, Index bin, Counter w) {
    detail::check_tile_args<Group, Counter>();
    static_assert(cuda::std::is_integral_v<Index>, "tilewise::tile::histogram: the bin index must be an integer");
    static_assert(detail::atomic_add_type<Counter>,
                  "tilewise::tile::histogram: Counter must be int32, uint32, int64, uint64, float or double");
    if constexpr (cuda::std::is_signed_v<Index>) {
      assert(bin >= 0 && "tilewise::tile::histogram: negative bin index");
    }
    if constexpr (detail::valid_tile_args<Group, Counter> && detail::atomic_add_type<Counter>) {
      detail::with_lanes(g, [&](auto const& l) {
        detail::histogram_add<UnitWeight>(l, bins, bin, w);
        return 0;
      });
    }
  }
};

/// @brief `void histogram(Group const&, Counter* bins, Index bin [, Counter w])`: adds a weight to one
///        bin per lane (see histogram_fn).
TILEWISE_GLOBAL_CONSTANT histogram_fn histogram{};

}  // namespace tilewise::tile
