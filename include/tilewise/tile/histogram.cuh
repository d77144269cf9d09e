/// @file
/// @brief tile::histogram: adds a weight to one bin per lane, combining equal bins within the
///        tile first where that pays.
///
/// Policy, from bench/tile_ops_bench on an H200 (2^26 samples; "plain" = one atomicAdd per lane):
/// - bins in shared memory: plain atomics. The hardware merges equal addresses of a warp
///   (ATOMS.POPC.INC for increments) and stays at ~2.3 TB/s even with every sample in one bin;
///   grouping with match_any was 1.2–8x slower, and a one-bin probe cost 13% on spread-out data
///   to win 2x only when a whole tile hits one bin with run-time weights.
/// - bins in global memory: if every lane of the group hits one bin (one shuffle, one vote), a
///   tile reduction and one atomic (6–31x faster than plain); otherwise lanes are grouped by bin
///   (match_any, one atomic per distinct bin): even with plain on uniform data (the L2 atomic rate
///   hides the match), 3.3x faster on Zipf (s = 1.1), up to 3.2x as more lanes share a bin.
///   Unit weights need no shuffles (a group adds its popcount); weights are reduced by pointer
///   jumping.
/// All lanes of a warp must pass bins in the same memory space (one histogram per tile or block,
/// as usual); debug builds check it.
/// The bin index is the caller's contract: it must lie inside the histogram. Debug builds (no
/// NDEBUG) trap on negative indices, and the `cuda::std::span` overload also on indices >= size.
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
  /// @note Collective; relaxed atomics, nothing synchronises — read the bins after a barrier.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, Counter* bins, Index bin) const {
    add<true>(g, bins, bin, Counter(1));
  }

  /// @brief Adds `w` to `bins[bin]` for every lane.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, Counter* bins, Index bin, cuda::std::type_identity_t<Counter> w) const {
    add<false>(g, bins, bin, w);
  }

  /// @brief As above, on a span: debug builds also trap on `bin >= bins.size()`.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, cuda::std::span<Counter> bins, Index bin) const {
    assert(cuda::std::size_t(bin) < bins.size() && "tilewise::tile::histogram: bin index out of range");
    add<true>(g, bins.data(), bin, Counter(1));
  }
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

/// `void histogram(Group const&, Counter* bins, Index bin, Counter w = 1)` — see histogram_fn.
TILEWISE_GLOBAL_CONSTANT histogram_fn histogram{};

}  // namespace tilewise::tile
