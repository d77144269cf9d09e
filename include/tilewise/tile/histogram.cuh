/// @file
/// @brief tile::histogram: adds a weight to one bin per lane, combining equal bins within the
///        tile first where that pays.
///
/// Policy, from bench/tile_ops_bench on an H200 (2^26 samples; "plain" = one atomicAdd per lane):
/// - bins in shared memory, unit weight: plain atomics. The hardware already merges equal
///   addresses of a warp (ATOMS.POPC.INC) and stays at ~2.3 TB/s even with every sample in one
///   bin; any grouping (match_any) was 1.2–8x slower.
/// - bins in shared memory, weights: one shuffle and one vote check whether the whole tile hits
///   one bin; then a tile reduction and one atomic (1.8x faster than plain there), else plain.
/// - bins in global memory: lanes are grouped by bin (match_any, one atomic per distinct bin);
///   the L2 atomic rate hides the match on uniform data (1.00x) and grouping wins 3.2x on Zipf
///   (s = 1.1) and up to 31x when many lanes share a bin. Unit weights need no shuffles at all
///   (a group adds its popcount); weighted groups are reduced by pointer jumping.
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
  cuda::std::plus<Counter> op{};
  unsigned const lane = lane_id();
  if (!l.any(!__isShared(bins))) {  // shared memory: plain atomics (see the file comment)
    if constexpr (!UnitWeight) {
      unsigned const first = __ffs(l.members()) - 1;
      if (!l.any(bin != l.shfl_lane(bin, first))) {  // the whole tile in one bin (all tiles)
        Counter const total = reduce_lanes(l, w, op);
        if (lane == first) {
          atomic_fetch_add(&bins[bin], total);
        }
        return;
      }
    }
    atomic_fetch_add(&bins[bin], w);
    return;
  }
  unsigned const peers = l.match(bin);  // global memory: one atomic per distinct bin
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
