// tilewise::histogram_even against cub::DeviceHistogram::HistogramEven on the same samples (Thrust
// has no histogram): uint8 samples into 256 bins, int32 samples into 1000 bins partly out of
// range, float samples with NaN and out-of-range values into 4096 bins; int32 and uint64
// counters; device_vector iterators, device_ptr and raw pointers for the counters, fancy
// inputs, under every policy form. Counters are poisoned first: they must be overwritten.
#include <cub/device/device_histogram.cuh>

#include <thrust/count.h>

#include <cuda/std/limits>

#include <cmath>
#include <limits>

#include <tilewise/thrust/histogram_even.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace histogram_test {

template <class S>
struct spread_samples {
  std::uint64_t seed;
  double lo, hi;  // samples uniform in [lo, hi); floats: every 97th NaN
  __host__ __device__ S operator()(std::int64_t i) const {
    std::uint64_t const r = tw_test::mix64(std::uint64_t(i) ^ seed);
    if constexpr (std::is_floating_point_v<S>) {
      if (r % 97 == 0) return cuda::std::numeric_limits<S>::quiet_NaN();
    }
    return S(lo + double(r >> 11) * 0x1.0p-53 * (hi - lo));
  }
};

/// CUB's histogram of the samples [first, first + n) into a new vector.
template <class Counter, class It, class Level>
thrust::device_vector<Counter> cub_histogram(It first, std::int64_t n, int bins, Level lower, Level upper) {
  thrust::device_vector<Counter> h(std::size_t(bins) + 1, Counter(0x5A));  // one past the end: untouched
  // CUB's counters need an atomicAdd overload: uint64 (unsigned long) as unsigned long long.
  using C = std::conditional_t<sizeof(Counter) == 8 && std::is_unsigned_v<Counter>, unsigned long long, Counter>;
  C* out  = reinterpret_cast<C*>(thrust::raw_pointer_cast(h.data()));
  std::size_t bytes = 0;
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, first, out, bins + 1, lower, upper, n));
  thrust::device_vector<unsigned char> temp(bytes);
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(thrust::raw_pointer_cast(temp.data()), bytes, first, out, bins + 1,
                                                    lower, upper, n));
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  return h;
}

template <class S, class Counter, class Level>
void check(int bins, Level lower, Level upper, double lo, double hi) {
  test_stream stream;
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    spread_samples<S> const gen{std::uint64_t(n) * 7 + 3, lo, hi};
    thrust::device_vector<S> const v = materialize<S>(n, gen);
    auto const f                     = fancy(gen);
    auto const expected = cub_histogram<Counter>(thrust::raw_pointer_cast(v.data()), n, bins, lower, upper);
    each_policy(stream.get(), true, [&](auto const& p) {
      thrust::device_vector<Counter> a(std::size_t(bins) + 1, Counter(0x5A)), b(a), c(a);
      CHECK(tilewise::histogram_even(p, v.begin(), v.end(), a.begin(), bins, lower, upper) == a.begin() + bins);
      CHECK(tilewise::histogram_even(p, f, f + n, b.data(), bins, lower, upper) == b.data() + bins);
      Counter* const raw = thrust::raw_pointer_cast(c.data());
      S const* samples   = thrust::raw_pointer_cast(v.data());
      CHECK(tilewise::histogram_even(p, samples, samples + n, raw, bins, lower, upper) == raw + bins);
      TW_CUDA_CHECK(cudaDeviceSynchronize());
      CHECK(differences(a, expected) == 0);
      CHECK(differences(b, expected) == 0);
      CHECK(differences(c, expected) == 0);
    });
  }
}

}  // namespace histogram_test

using namespace histogram_test;

TEST_CASE("tilewise::histogram_even = cub HistogramEven: uint8 samples, 256 bins, int32 and uint64 counters") {
  check<std::uint8_t, std::int32_t>(256, 0, 256, 0.0, 256.0);
  check<std::uint8_t, std::uint64_t>(256, 0, 256, 0.0, 256.0);
}

TEST_CASE("tilewise::histogram_even = cub HistogramEven: int32 samples partly out of range, 1000 bins") {
  check<std::int32_t, std::int32_t>(1000, -500, 1500, -1000.0, 2000.0);
}

TEST_CASE("tilewise::histogram_even = cub HistogramEven: float samples with NaN, 4096 bins, uint64 counters") {
  check<float, std::uint64_t>(4096, 0.0f, 1.0f, -0.25, 1.25);
}

TEST_CASE("tilewise::histogram_even: invalid arguments") {
  thrust::device_vector<float> v(10, 0.5f);
  thrust::device_vector<int> h(4);
  thrust::device_ptr<int> const null(static_cast<int*>(nullptr));
  float const nan = std::numeric_limits<float>::quiet_NaN();
  using E         = std::invalid_argument;
  auto const par  = thrust::cuda::par;
  CHECK_THROWS_WITH_AS(tilewise::histogram_even(par, v.end(), v.begin(), h.begin(), 4, 0.0f, 1.0f),
                       "tilewise::histogram_even: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::histogram_even(par, v.begin(), v.end(), h.begin(), 0, 0.0f, 1.0f),
                       "tilewise::histogram_even: num_bins < 1", E);
  CHECK_THROWS_WITH_AS(tilewise::histogram_even(par, v.begin(), v.end(), h.begin(), 4, 1.0f, 1.0f),
                       "tilewise::histogram_even: lower is not less than upper", E);
  CHECK_THROWS_WITH_AS(tilewise::histogram_even(par, v.begin(), v.end(), h.begin(), 4, nan, 1.0f),
                       "tilewise::histogram_even: lower is not less than upper", E);
  CHECK_THROWS_WITH_AS(tilewise::histogram_even(par, v.begin(), v.end(), null, 4, 0.0f, 1.0f),
                       "tilewise::histogram_even: hist_first is a null pointer", E);
  // An empty range zeroes the counters.
  thrust::device_vector<int> z(4, 9);
  CHECK(tilewise::histogram_even(par, v.begin(), v.begin(), z.begin(), 4, 0.0f, 1.0f) == z.begin() + 4);
  CHECK(thrust::count(thrust::cuda::par, z.begin(), z.end(), 0) == 4);
}
