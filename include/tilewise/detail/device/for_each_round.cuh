/// @file
/// @brief The walk over an input in rounds of U loads per thread that device algorithms read
///        their input with where each element is used once and in no particular order
///        (histogram_even's samples, group_by's keys counted by its first pass): whole rounds
///        load without bounds checks, a last partial round checks each load, and the next round's
///        loads can be issued before the current round is used.
#pragma once

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// No work between rounds (for_each_round's `round_begin`).
struct no_round_barrier {
  TILEWISE_DEVICE void operator()() const {}
};

/// Calls f(load(i)) for this block's share of [first_round, end): rounds of B x U elements,
/// thread t loading base + t + u * B (u < U), from `first_round` on, `stride` apart (the grid
/// stride, or B * U for a block's own contiguous range), while a whole round fits below `end`;
/// then one partial round whose loads are each checked against `end`. `load(i)` returns the
/// element by value (a sample, a key, a 16-byte vector of them).
/// `round_begin()` comes before the elements of every round, the partial one included, once its
/// loads are issued (the block's threads all make the same rounds: a barrier may go there, and
/// the loads stay in flight across it).
/// `Ahead`: each whole round issues the next whole round's loads before it uses its own (twice
/// the loads in flight, U more elements in registers per thread).
template <unsigned B, unsigned U, bool Ahead, class Load, class F, class R>
TILEWISE_DEVICE void for_each_round(long long first_round, long long stride, long long end, Load const& load,
                                    F const& f, R const& round_begin) {
  using element_t           = decltype(load(0ll));
  constexpr long long round = static_cast<long long>(B) * U;
  long long const t         = threadIdx.x;
  auto const load_round     = [&](element_t(&e)[U], long long at) {
#pragma unroll
    for (unsigned u = 0; u < U; ++u) e[u] = load(at + t + u * B);
  };
  long long base = first_round;        // the same in every thread
  [[maybe_unused]] element_t next[U];  // Ahead: the loads of the round at `base`, issued a round early
  if constexpr (Ahead) {
    if (base + round <= end) load_round(next, base);
  }
#pragma unroll 1
  for (; base + round <= end; base += stride) {
    element_t e[U];
    if constexpr (Ahead) {
#pragma unroll
      for (unsigned u = 0; u < U; ++u) e[u] = next[u];
      if (base + stride + round <= end) load_round(next, base + stride);
    } else {
      load_round(e, base);
    }
    round_begin();
#pragma unroll
    for (unsigned u = 0; u < U; ++u) f(e[u]);
  }
  round_begin();
#pragma unroll
  for (unsigned u = 0; u < U; ++u) {
    if (base + t + u * B < end) f(load(base + t + u * B));
  }
}

}  // namespace tilewise::detail
