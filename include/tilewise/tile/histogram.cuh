/// @file
/// @brief tile::histogram: adds a weight to one bin per lane, combining equal bins within the
///        tile first when that pays.
///
/// Three paths, chosen uniformly over the shuffle mask from a cheap probe (one shuffle, one
/// ballot: how many lanes share the first lane's bin):
/// - every lane in one bin: a tile reduction and one atomic (`redux.sync` for 32-bit counters);
/// - many lanes in the first lane's bin (>= histogram_tuning_sm90.match_min_share_of_32 of 32):
///   match_any groups the bins, one atomic per distinct bin — pays on skewed data, where
///   same-address atomics serialise;
/// - otherwise one plain atomic per lane: on spread-out data match_any (~370 cycles) costs more
///   than the few conflicts it removes.
/// The bin index is the caller's contract: it must lie inside the histogram. Debug builds (no
/// NDEBUG) trap on negative indices, and the `cuda::std::span` overload also on indices >= size.
#pragma once

#include <cassert>

#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/match.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

template <class Lanes, class Counter, class Index>
TILEWISE_DEVICE void histogram_add(Lanes const& l, Counter* bins, Index bin, Counter w) {
  enum mode : unsigned { plain = 0, one_bin = 1, grouped = 2 };
  unsigned const members = l.members();
  unsigned const first   = __ffs(members) - 1;
  unsigned const share   = __popc(l.ballot(bin == l.shfl_lane(bin, first)));
  unsigned const size    = __popc(members);
  unsigned const wanted  = share == size                                                   ? one_bin
                           : share * 32 >= histogram_tuning_sm90.match_min_share_of_32 * size ? grouped
                                                                                           : plain;
  // Agree over the shuffle mask: grouped if any group wants it, one_bin only if all do.
  unsigned const all_one_bin = !l.any(wanted != one_bin);
  unsigned const any_grouped = l.any(wanted == grouped);
  cuda::std::plus<Counter> op{};
  if (all_one_bin) {
    Counter const total = reduce_lanes(l, w, op);
    if (lane_id() == first) {
      atomic_fetch_add(&bins[bin], total);
    }
  } else if (any_grouped) {
    unsigned const peers = l.match(bin);
    Counter const total  = peer_reduce(l, peers, w, op);
    if ((peers & lanemask_lt()) == 0) {
      atomic_fetch_add(&bins[bin], total);
    }
  } else {
    atomic_fetch_add(&bins[bin], w);
  }
}

}  // namespace tilewise::detail

namespace tilewise::tile {

/// @brief Function object type of tilewise::tile::histogram.
struct histogram_fn {
  /// @brief Adds `w` to `bins[bin]` for every lane (bins in shared or global memory).
  /// @tparam Counter int32, uint32, int64, uint64, float or double
  /// @tparam Index   an integer type; `bin` must be a valid index into `bins` (caller's contract)
  /// @note Collective; relaxed atomics, nothing synchronises — read the bins after a barrier.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, Counter* bins, Index bin,
                                  cuda::std::type_identity_t<Counter> w = Counter(1)) const {
    detail::check_tile_args<Group, Counter>();
    static_assert(cuda::std::is_integral_v<Index>, "tilewise::tile::histogram: the bin index must be an integer");
    static_assert(detail::atomic_add_type<Counter>,
                  "tilewise::tile::histogram: Counter must be int32, uint32, int64, uint64, float or double");
    if constexpr (cuda::std::is_signed_v<Index>) {
      assert(bin >= 0 && "tilewise::tile::histogram: negative bin index");
    }
    if constexpr (detail::valid_tile_args<Group, Counter> && detail::atomic_add_type<Counter>) {
      detail::with_lanes(g, [&](auto const& l) {
        detail::histogram_add(l, bins, bin, w);
        return 0;
      });
    }
  }

  /// @brief As above, on a span: debug builds also trap on `bin >= bins.size()`.
  template <class Group, class Counter, class Index>
  TILEWISE_DEVICE void operator()(Group const& g, cuda::std::span<Counter> bins, Index bin,
                                  cuda::std::type_identity_t<Counter> w = Counter(1)) const {
    assert(cuda::std::size_t(bin) < bins.size() && "tilewise::tile::histogram: bin index out of range");
    (*this)(g, bins.data(), bin, w);
  }
};

/// `void histogram(Group const&, Counter* bins, Index bin, Counter w = 1)` — see histogram_fn.
TILEWISE_GLOBAL_CONSTANT histogram_fn histogram{};

}  // namespace tilewise::tile
