// Compaction test data (keep-flag patterns) and the CUB oracle: cub::DeviceSelect::Flagged, the
// stable selection of the values whose flag is set.
#pragma once

#include <cub/device/device_select.cuh>

#include <random>
#include <vector>

#include "cuda_test.cuh"

namespace tw_test {

enum class keep_pattern { all, none, alternating, p1, p50, p99 };
inline constexpr keep_pattern keep_patterns[] = {keep_pattern::all, keep_pattern::none, keep_pattern::alternating,
                                                 keep_pattern::p1,  keep_pattern::p50,  keep_pattern::p99};

inline std::vector<unsigned char> keep_flags(keep_pattern p, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<unsigned char> f(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (p) {
      case keep_pattern::all: f[i] = 1; break;
      case keep_pattern::none: f[i] = 0; break;
      case keep_pattern::alternating: f[i] = i % 2; break;
      case keep_pattern::p1: f[i] = u(rng) < 0.01; break;
      case keep_pattern::p50: f[i] = u(rng) < 0.5; break;
      case keep_pattern::p99: f[i] = u(rng) < 0.99; break;
    }
  }
  return f;
}

/// CUB's stable selection of `values` by `flags` (the oracle).
template <class T>
std::vector<T> cub_select(std::vector<T> const& values, std::vector<unsigned char> const& flags) {
  device_buffer<T> d_in(values), d_out(values.size());
  device_buffer<unsigned char> d_flags(flags);
  device_buffer<int> d_count(1);
  d_out.poison();  // CUB writes only the selected prefix; the rest must still be initialised
  std::size_t temp_bytes = 0;
  TW_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, d_in.get(), d_flags.get(), d_out.get(),
                                           d_count.get(), int(values.size())));
  device_buffer<unsigned char> temp(temp_bytes);
  TW_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.get(), temp_bytes, d_in.get(), d_flags.get(), d_out.get(),
                                           d_count.get(), int(values.size())));
  TW_CHECK_LAUNCH();
  auto out = d_out.download();
  out.resize(std::size_t(d_count.download()[0]));
  return out;
}

}  // namespace tw_test
