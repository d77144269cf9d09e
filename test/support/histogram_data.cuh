// Histogram test data (uniform, single-bin, Zipf-skewed samples) and the CUB oracle
// (cub::DeviceHistogram::HistogramEven over [0, bins)).
#pragma once

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cuda_test.cuh"

namespace tw_test {

enum class histogram_data { uniform, single_bin, zipf };
inline constexpr histogram_data all_histogram_data[] = {histogram_data::uniform, histogram_data::single_bin,
                                                        histogram_data::zipf};

/// n samples in [0, bins); Zipf: P(k) ~ 1 / (k + 1)^1.1 over the bins in a random order.
inline std::vector<int> histogram_samples(histogram_data d, std::size_t n, int bins, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> s(n);
  if (d == histogram_data::zipf) {
    std::vector<double> w(bins);
    for (int k = 0; k < bins; ++k) w[k] = 1.0 / std::pow(k + 1.0, 1.1);
    std::discrete_distribution<int> z(w.begin(), w.end());
    std::vector<int> perm(bins);
    for (int k = 0; k < bins; ++k) perm[k] = k;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (auto& x : s) x = perm[z(rng)];
  } else {
    std::uniform_int_distribution<int> u(0, bins - 1);
    int const only = u(rng);
    for (auto& x : s) x = d == histogram_data::single_bin ? only : u(rng);
  }
  return s;
}

inline std::vector<unsigned> cub_histogram(std::vector<int> const& s, int bins) {
  device_buffer<int> d_s(s);
  device_buffer<unsigned> d_h(bins);
  std::size_t temp_bytes = 0;
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, d_s.get(), d_h.get(), bins + 1, 0, bins,
                                                    int(s.size())));
  device_buffer<unsigned char> temp(temp_bytes);
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.get(), temp_bytes, d_s.get(), d_h.get(), bins + 1, 0, bins,
                                                    int(s.size())));
  TW_CHECK_LAUNCH();
  return d_h.download();
}

}  // namespace tw_test
