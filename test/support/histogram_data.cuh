// Histogram test data (uniform, single-bin, Zipf-skewed samples) and the CUB oracle
// (cub::DeviceHistogram::HistogramEven over [0, bins)); for the device-wide histogram also
// samples of any arithmetic type generated on the GPU (up to 2^28 and more without host round
// trips), with a share of them below, above and NaN, and CUB's HistogramEven on any input.
#pragma once

#include <cub/device/device_histogram.cuh>

#include <cuda/std/limits>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <type_traits>
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

/// Name of a data kind, for CAPTURE.
inline char const* histogram_data_name(histogram_data d) {
  return d == histogram_data::uniform ? "uniform" : d == histogram_data::single_bin ? "single bin" : "zipf s=1.1";
}

/// Zipf (s = 1.1) over `bins` ranks: the cumulative weights and a random order of the bins (so
/// the hot bins are anywhere), on the device; built once per bin count.
struct zipf_table {
  device_buffer<double> cdf;
  device_buffer<int> perm;
  explicit zipf_table(int bins) : cdf(std::size_t(bins)), perm(std::size_t(bins)) {
    std::vector<double> c(bins);
    double acc = 0;
    for (int k = 0; k < bins; ++k) c[k] = acc += 1.0 / std::pow(k + 1.0, 1.1);
    for (auto& x : c) x /= acc;
    std::vector<int> p(bins);
    for (int k = 0; k < bins; ++k) p[k] = k;
    std::mt19937_64 rng(std::uint64_t(bins) * 7919u);
    std::shuffle(p.begin(), p.end(), rng);
    cdf.upload(c);
    perm.upload(p);
  }
};
inline zipf_table const& zipf_for(int bins) {
  static std::map<int, std::unique_ptr<zipf_table>> tables;
  auto& t = tables[bins];
  if (!t) t = std::make_unique<zipf_table>(bins);
  return *t;
}

/// What gen_samples makes: `bins` bins over [lo, hi); a sample picks a bin (uniform, one fixed
/// bin, or Zipf) and a point inside it; a share `outside` of the samples instead lies below lo,
/// at or above hi, or (floating point) is NaN or infinite.
struct sample_spec {
  histogram_data data = histogram_data::uniform;
  int bins            = 1;
  double lo = 0, hi = 1;
  double outside      = 0;
  std::uint64_t seed  = 1;
};

__host__ __device__ inline std::uint64_t hmix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__host__ __device__ T to_sample(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    double const lo = double(cuda::std::numeric_limits<T>::lowest()), hi = double(cuda::std::numeric_limits<T>::max());
    v = floor(v);
    return v <= lo ? cuda::std::numeric_limits<T>::lowest() : v >= hi ? cuda::std::numeric_limits<T>::max() : static_cast<T>(v);
  }
}

template <class T>
__global__ void gen_samples_kernel(T* out, long long n, sample_spec sp, double const* cdf, int const* perm) {
  double const width = (sp.hi - sp.lo) / sp.bins;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = hmix(std::uint64_t(i) ^ hmix(sp.seed));
    double const u        = double(r >> 11) * 0x1.0p-53;
    double const f        = double(hmix(r) >> 11) * 0x1.0p-53;
    double v;
    if (u < sp.outside) {
      unsigned const kind = unsigned(r >> 3) % (std::is_floating_point_v<T> ? 5u : 3u);
      if (kind == 0) {
        v = sp.lo - 1 - f * (sp.hi - sp.lo) * 0.1;
      } else if (kind == 1) {
        v = sp.hi + f * (sp.hi - sp.lo) * 0.1;
      } else if (kind == 2) {
        v = sp.hi;
      } else if (kind == 3) {
        v = NAN;
      } else {
        v = (r & 1) ? INFINITY : -INFINITY;
      }
    } else {
      long long k;
      double frac = f;
      if (sp.data == histogram_data::uniform) {
        k = static_cast<long long>(u * sp.bins);
      } else if (sp.data == histogram_data::single_bin) {
        k    = static_cast<long long>(hmix(sp.seed) % std::uint64_t(sp.bins));
        frac = 0.5;
      } else {
        double const z = double(hmix(r ^ 0x5555) >> 11) * 0x1.0p-53;
        int a = 0, b = sp.bins - 1;  // the first rank whose cumulative weight exceeds z
        while (a < b) {
          int const m = (a + b) / 2;
          if (cdf[m] > z) b = m; else a = m + 1;
        }
        k = perm[a];
      }
      k = k >= sp.bins ? sp.bins - 1 : k;
      v = sp.lo + (double(k) + frac) * width;
    }
    out[i] = to_sample<T>(v);
  }
}

/// Fills out[0, n) with samples as `sp` says (a function of the seed and the index).
template <class T>
void gen_samples(T* out, long long n, sample_spec const& sp) {
  if (n <= 0) return;
  double const* cdf = nullptr;
  int const* perm   = nullptr;
  if (sp.data == histogram_data::zipf) {
    zipf_table const& z = zipf_for(sp.bins);
    cdf                 = z.cdf.get();
    perm                = z.perm.get();
  }
  long long const blocks = std::min<long long>((n + 255) / 256, 8192);
  gen_samples_kernel<<<unsigned(blocks), 256>>>(out, n, sp, cdf, perm);
  TW_CHECK_LAUNCH();
}

/// cub::DeviceHistogram::HistogramEven of in[0, n) into hist[0, bins) (synchronizes).
template <class It, class Counter, class Level>
void cub_histogram_even(It in, Counter* hist, int bins, Level lo, Level hi, long long n) {
  std::size_t bytes = 0;
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, hist, bins + 1, lo, hi, n));
  device_buffer<unsigned char> temp(bytes);
  TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.get(), bytes, in, hist, bins + 1, lo, hi, n));
  TW_CHECK_LAUNCH();
}

/// The bin CUB's HistogramEven computes for sample `x`, on the host, written from CUB's
/// documented arithmetic (the common type of sample and level; integers as
/// (x - lo) * bins / (hi - lo) in an unsigned type of 32 bits when sample and common type take
/// at most 4 bytes together, else 64; floating point as int((x - lo) * (bins / (hi - lo)))), or
/// -1 where the sample is out of range, NaN, or its bin comes out >= bins.
template <class T, class Level>
long long reference_bin(T x, int bins, Level lower, Level upper) {
  using C = std::common_type_t<Level, T>;
  C const s = static_cast<C>(x), lo = static_cast<C>(lower), hi = static_cast<C>(upper);
  if (!(s >= lo && s < hi)) return -1;
  long long k;
  if constexpr (std::is_floating_point_v<C>) {
    C const recip = static_cast<C>(static_cast<C>(bins) / static_cast<C>(hi - lo));
    C const v     = (s - lo) * recip;
    if (!(v < C(2147483648.0))) return -1;
    k = static_cast<int>(v);
  } else {
    using W = std::conditional_t<sizeof(T) + sizeof(C) <= 4, std::uint32_t, std::uint64_t>;
    using D = decltype(s - lo);  // the promoted type C++ subtracts in; it wraps there on the GPU
    using U = std::make_unsigned_t<D>;
    auto const diff = [](C a, C b) { return static_cast<D>(static_cast<U>(static_cast<D>(a)) - static_cast<U>(static_cast<D>(b))); };
    W const d = static_cast<W>(diff(s, lo)), r = static_cast<W>(static_cast<C>(diff(hi, lo)));
    k = static_cast<int>(d * static_cast<W>(static_cast<C>(bins)) / r);
  }
  return k >= 0 && k < bins ? k : -1;
}

/// The host reference histogram of `s` (64-bit counts).
template <class T, class Level>
std::vector<std::uint64_t> reference_histogram(std::vector<T> const& s, int bins, Level lo, Level hi) {
  std::vector<std::uint64_t> h(std::size_t(bins), 0);
  for (T const& x : s) {
    long long const k = reference_bin(x, bins, lo, hi);
    if (k >= 0) ++h[std::size_t(k)];
  }
  return h;
}

}  // namespace tw_test
