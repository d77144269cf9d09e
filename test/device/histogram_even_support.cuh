// Shared by the device::histogram_even test files: our call (with an optional forced plan) and
// CUB's on the same input compared counter for counter, the levels and sample specs per type.
#pragma once

#include <cub/device/device_histogram.cuh>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/device/histogram_even.cuh>

#include <algorithm>
#include <type_traits>

#include "../support/device_data.cuh"
#include "../support/histogram_data.cuh"

namespace tw_test {

using tilewise::detail::histogram_plan;
using tilewise::detail::histogram_strategy;

/// Our histogram of in[0, n) into hist (poisoned temp storage; a request for the strategy when
/// `plan` is given, which then holds the plan that ran; with a plan the dispatch runs under
/// `Tuning`, whose kernels may differ from the default's but not its temp storage). Synchronizes.
template <class It, class Counter, class Level, class Tuning = tilewise::detail::histogram_even_tuned>
void ours(It in, Counter* hist, int bins, Level lo, Level hi, long long n, histogram_plan* plan = nullptr) {
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::histogram_even(nullptr, bytes, in, hist, bins, lo, hi, n) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  if (plan) {
    REQUIRE(tilewise::detail::dispatch_histogram_even<Tuning>(
              temp.get(), bytes, thrust::try_unwrap_contiguous_iterator(in), hist, bins, lo, hi, n, 0, plan) ==
            cudaSuccess);
  } else {
    REQUIRE(tilewise::device::histogram_even(temp.get(), bytes, in, hist, bins, lo, hi, n) == cudaSuccess);
  }
  TW_CHECK_LAUNCH();
}

inline char const* strategy_name(histogram_strategy s) {
  switch (s) {
    case histogram_strategy::shared: return "shared";
    case histogram_strategy::cluster: return "cluster";
    case histogram_strategy::global: return "global";
    case histogram_strategy::table: return "table";
    default: return "automatic";
  }
}

/// Ours and CUB's on in[0, n), poisoned outputs, compared counter for counter; returns whether equal.
template <class It, class Counter, class Level, class Tuning = tilewise::detail::histogram_even_tuned>
bool same_as_cub(It in, int bins, Level lo, Level hi, long long n, histogram_plan* plan = nullptr) {
  device_buffer<Counter> a{std::size_t(bins) + 1}, b{std::size_t(bins) + 1};
  a.poison();
  b.poison();
  ours<It, Counter, Level, Tuning>(in, a.get(), bins, lo, hi, n, plan);
  cub_histogram_even(in, b.get(), bins, lo, hi, n);
  mismatch const m = compare_bits(a.get(), b.get(), bins + 1);  // one past the end: untouched by both
  if (m.count) {
    MESSAGE("first difference at bin " << m.first << " of " << bins << ": ours " << read_one(a.get() + m.first)
                                       << ", cub " << read_one(b.get() + m.first));
  }
  return m.count == 0;
}

/// Levels of the main tests for samples of type T and `bins` bins: integers over a range that is
/// not a multiple of the bin count (uint8: [3, 251)), floating point with an exactly representable
/// bin width from 0 (CUB's global-bin path, above 256 bins, miscounts a floating-point sample whose
/// computed bin rounds to `bins`; such ranges cannot produce one) and, up to 256 bins, an awkward
/// range (CUB's shared bins have a spare bin there, so it drops such samples as we do).
template <class T>
struct levels {
  using level_t = std::conditional_t<std::is_floating_point_v<T>, T, int>;
  level_t lo, hi;
  explicit levels(int bins) {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      lo = 3, hi = 251;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (bins <= 256) {
        lo = T(-1.3), hi = T(2.9);
      } else {
        lo = T(0), hi = T(bins) * T(0.5);
      }
    } else {
      lo = -1000, hi = -1000 + 3 * bins + 7;
    }
  }
};

template <class T>
sample_spec spec_for(histogram_data d, int bins, std::uint64_t seed) {
  levels<T> const l(bins);
  sample_spec sp;
  sp.data    = d;
  sp.bins    = bins;
  sp.lo      = double(l.lo);
  sp.hi      = double(l.hi);
  sp.outside = d == histogram_data::single_bin ? 0.0 : 1.0 / 16;
  sp.seed    = seed;
  return sp;
}

inline constexpr int bin_counts[] = {1, 2, 255, 256, 257, 4096, 65536, 1 << 20, 1 << 24};

/// Samples per case: large bin counts with few samples (CUB's global path zeroes and merges one
/// copy of the bins per block).
inline long long samples_for(int bins) {
  long long const big = 1ll << std::min(max_log2(), 22);
  if (bins <= 4096) return big + 3;
  if (bins <= 65536) return std::min(big, 1ll << 20) + 3;
  if (bins <= (1 << 20)) return (1ll << 16) + 5;
  return 6001;
}

}  // namespace tw_test
