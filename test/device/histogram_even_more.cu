// device::histogram_even, the rest: integer bin edges (the 32-bit fast form and the 64-bit exact
// path), floating-point edges against a host reference of CUB's arithmetic, int8 samples, int32 /
// uint32 / uint64 counters exact, hist overwritten and zeroed, Thrust iterators and device_ptr,
// more than 2^31 samples (counting iterator, closed form), graph capture launched twice, bad
// arguments.
#include <thrust/device_ptr.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "histogram_even_support.cuh"

using namespace tw_test;

TEST_CASE("histogram_even: integer bin edges, the 32-bit fast form and the 64-bit exact path") {
  // Samples at every bin edge and one either side (the smallest value of bin k is
  // lo + ceil(k * R / bins)), the range's ends and the type's extremes: vs CUB and the host reference.
  auto edges = [](long long lo, long long hi, int bins) {
    std::vector<long long> v{lo - 1, lo, lo + 1, hi - 2, hi - 1, hi, hi + 1};
    long long const r = hi - lo;
    for (int k = 0; k <= bins; k += (bins > 4096 ? 97 : 1)) {
      long long const first = lo + static_cast<long long>((static_cast<unsigned __int128>(k) * r + bins - 1) / bins);
      for (long long d : {-1ll, 0ll, 1ll}) v.push_back(first + d);
    }
    return v;
  };
  auto check = [&](auto tag, long long lo, long long hi, int bins, bool with_cub) {
    using T = decltype(tag);
    std::vector<T> h;
    for (long long x : edges(lo, hi, bins)) {
      if (x >= (long long)std::numeric_limits<T>::lowest() && (x <= 0 || (unsigned long long)x <= (unsigned long long)std::numeric_limits<T>::max())) {
        h.push_back(static_cast<T>(x));
      }
    }
    h.push_back(std::numeric_limits<T>::lowest());
    h.push_back(std::numeric_limits<T>::max());
    CAPTURE(sizeof(T));
    CAPTURE(lo);
    CAPTURE(hi);
    CAPTURE(bins);
    device_buffer<T> in(h);
    T const l = static_cast<T>(lo), u = static_cast<T>(hi);
    if (with_cub) CHECK(same_as_cub<T const*, unsigned long long>(in.get(), bins, l, u, (long long)h.size()));
    device_buffer<unsigned long long> a{std::size_t(bins)};
    ours(in.get(), a.get(), bins, l, u, (long long)h.size());
    auto const want = reference_histogram(h, bins, l, u);
    auto const got  = a.download();
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
  };
  check(std::int32_t{}, -1000, 2000, 7, true);                         // bins < range
  check(std::int32_t{}, 0, 10, 4096, true);                            // bins > range: empty bins
  check(std::int32_t{}, -(1 << 30), (1 << 30) - 3, 65536, true);       // a 2^31 range
  check(std::int32_t{}, -2147483647 - 1, 2147483647, 1, true);         // the widest int32 range, one bin
  check(std::uint32_t{}, 5, 4000000000ll, 1000, true);                 // uint32 near 2^32
  check(std::int64_t{}, -(1ll << 40), 1ll << 40, 1000, true);          // span 2^41: the 64-bit exact path
  check(std::int64_t{}, -12345, 3000000000ll, 4096, true);             // span < 2^32: the fast form
  check(std::int16_t{}, -30000, 30000, 300, true);                     // 16-bit samples: 32-bit arithmetic
  check(std::uint16_t{}, 1, 65535, 257, true);
  check(std::uint8_t{}, 0, 255, 17, true);                             // uint8 levels: 32-bit arithmetic
  // bins of a power-of-two width: the shift form
  check(std::int32_t{}, 7, 7 + 4096, 4096, true);                      // width 1
  check(std::int32_t{}, -1000, -1000 + 256 * 4, 256, true);            // width 4
  check(std::int32_t{}, -(1 << 29), 1 << 29, 1 << 16, true);           // width 2^14, a 2^30 range
  check(std::uint32_t{}, 3, 3 + (1ull << 31) + (1ull << 30), 3, true); // width 2^30
  check(std::int64_t{}, -5, -5 + (1ll << 31), 1 << 20, true);          // width 2^11, 64-bit samples
  check(std::int16_t{}, -16384, 16384, 128, true);                     // width 256, 16-bit samples
  check(std::int32_t{}, 0, 3 * 1024, 3, true);                         // width 1024 = range / 3
  check(std::int32_t{}, 0, 6 * 1000, 6, true);                         // width 1000: not a power of two
}

TEST_CASE_TEMPLATE("histogram_even: floating-point bin edges, NaN and infinities", T, float, double) {
  // Awkward ranges where (x - lo) * (bins / (hi - lo)) rounds: vs the host reference of CUB's
  // arithmetic for every bin count, and vs CUB itself up to 256 bins (see levels<T>).
  for (int bins : {1, 3, 7, 100, 255, 256, 257, 4096, 65536}) {
    for (auto range : {std::pair<T, T>{T(-1.3), T(2.9)}, std::pair<T, T>{T(1e-3), T(1.0)},
                       std::pair<T, T>{T(-1e6), T(7)}}) {
      T const lo = range.first, hi = range.second;
      std::vector<T> h{lo, hi, std::nextafter(lo, T(-10)), std::nextafter(hi, T(-1e7)), std::nextafter(hi, T(1e7)),
                       std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(), T(0), -T(0)};
      T const w = (hi - lo) / T(bins);
      for (int k = 0; k <= bins; k += (bins > 4096 ? 61 : 1)) {
        T const e = lo + T(k) * w;
        h.push_back(e);
        h.push_back(std::nextafter(e, T(-1e7)));
        h.push_back(std::nextafter(e, T(1e7)));
      }
      CAPTURE(bins);
      CAPTURE(lo);
      CAPTURE(hi);
      device_buffer<T> in(h);
      if (bins <= 256) CHECK(same_as_cub<T const*, int>(in.get(), bins, lo, hi, (long long)h.size()));
      device_buffer<unsigned> a{std::size_t(bins)};
      ours(in.get(), a.get(), bins, lo, hi, (long long)h.size());
      auto const want = reference_histogram(h, bins, lo, hi);
      auto const got  = a.download();
      CHECK(std::equal(got.begin(), got.end(), want.begin()));
    }
  }
}

TEST_CASE("histogram_even: int8 samples, negative ones counted (CUB's 1-byte path drops them)") {
  std::vector<std::int8_t> h;
  for (int v = -128; v < 128; ++v) {
    for (int r = 0; r < (v & 7) + 1; ++r) h.push_back(static_cast<std::int8_t>(v));
  }
  device_buffer<std::int8_t> in(h);
  for (int bins : {1, 5, 256, 4096}) {
    CAPTURE(bins);
    device_buffer<int> a{std::size_t(bins)};
    ours(in.get(), a.get(), bins, -100, 120, (long long)h.size());
    auto const want = reference_histogram(h, bins, -100, 120);
    auto const got  = a.download();
    CHECK(std::equal(got.begin(), got.end(), want.begin(), [](int x, std::uint64_t y) { return std::uint64_t(x) == y; }));
  }
}

TEST_CASE("histogram_even: int32, uint32 and uint64 counters exact, hist overwritten and zeroed") {
  long long const n = std::min(1ll << max_log2(), (1ll << 26) + 3);
  device_buffer<std::int32_t> in{std::size_t(n)};
  for (int bins : {256, 65536}) {
    CAPTURE(bins);
    levels<std::int32_t> const l(bins);
    gen_samples(in.get(), n, spec_for<std::int32_t>(histogram_data::zipf, bins, 5));
    CHECK(same_as_cub<std::int32_t const*, int>(in.get(), bins, l.lo, l.hi, n));
    CHECK(same_as_cub<std::int32_t const*, unsigned>(in.get(), bins, l.lo, l.hi, n));
    CHECK(same_as_cub<std::int32_t const*, unsigned long long>(in.get(), bins, l.lo, l.hi, n));
    // every sample in one bin: that counter holds n exactly (uint64_t is unsigned long here)
    gen_samples(in.get(), n, spec_for<std::int32_t>(histogram_data::single_bin, bins, 9));
    device_buffer<std::uint64_t> h{std::size_t(bins)};
    h.poison();
    ours(in.get(), h.get(), bins, l.lo, l.hi, n);
    auto const got = h.download();
    std::uint64_t total = 0, top = 0;
    for (auto c : got) total += c, top = std::max(top, c);
    CHECK(total == std::uint64_t(n));
    CHECK(top == std::uint64_t(n));
    // a second call overwrites; num_items == 0 zeroes
    ours(in.get(), h.get(), bins, l.lo, l.hi, n);
    CHECK(h.download() == got);
    ours(in.get(), h.get(), bins, l.lo, l.hi, 0);
    auto const zero = h.download();
    CHECK(std::all_of(zero.begin(), zero.end(), [](std::uint64_t c) { return c == 0; }));
  }
}

// At namespace scope (not anonymous): kernels taking it keep external linkage.
struct mod_value {
  long long m, a;
  __host__ __device__ long long operator()(long long i) const { return (i * a) % m; }
};

TEST_CASE("histogram_even: Thrust iterators and device_ptr, vs CUB") {
  long long const n = std::min(1ll << max_log2(), (1ll << 22)) + 11;
  auto values = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), mod_value{100003, 7919});
  for (int bins : {256, 4096, 65536, 1 << 20}) {
    CAPTURE(bins);
    long long const m = bins <= 65536 ? n : (1 << 16) + 1;
    CHECK(same_as_cub<decltype(values), int>(values, bins, 0ll, 100003ll, m));
  }
  device_buffer<float> in{std::size_t(n)};
  gen_samples(in.get(), n, spec_for<float>(histogram_data::uniform, 4096, 3));
  device_buffer<int> a(4096), b(4096);
  ours(thrust::device_ptr<float const>(in.get() + 1), a.get(), 4096, 0.f, 2048.f, n - 1);
  cub_histogram_even(in.get() + 1, b.get(), 4096, 0.f, 2048.f, n - 1);
  CHECK(compare_bits(a.get(), b.get(), 4096).count == 0);
}

TEST_CASE("histogram_even: more than 2^31 samples (counting iterator), against the closed form") {
  if (!above_2_31()) {
    MESSAGE("skipped: TILEWISE_TEST_MAX_LOG2 < 31 (the sanitizer runs); the plain CTest run covers it");
    return;
  }
  // sample i = i mod M: value v occurs floor((n - 1 - v) / M) + 1 times
  long long const n = (1ll << 31) + 4099, m = 1000003;
  auto values       = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), mod_value{m, 1});
  for (int bins : {256, 65536}) {
    CAPTURE(bins);
    long long const lo = 17, hi = m - 5;
    std::vector<std::uint64_t> want(std::size_t(bins), 0);
    for (long long v = 0; v < m; ++v) {
      long long const k = reference_bin(v, bins, lo, hi);
      if (k >= 0) want[std::size_t(k)] += std::uint64_t((n - 1 - v) / m + 1);
    }
    device_buffer<unsigned long long> h{std::size_t(bins)};
    ours(values, h.get(), bins, lo, hi, n);
    auto const got = h.download();
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
  }
}

TEST_CASE("histogram_even: graph capture (the first call of its kind inside it), launched twice") {
  // uint32 samples into uint32 counters are not used elsewhere, so the kernels' first use
  // (attribute setting, occupancy queries) happens during the capture.
  long long const n = std::min(1ll << max_log2(), 1ll << 22) + 5;
  device_buffer<std::uint32_t> in{std::size_t(n)};
  fill(in.get(), n, 77);  // any 32-bit values
  unsigned const lo = 1u << 20, hi = 3000000000u;
  for (int bins : {4096, 65536}) {
    CAPTURE(bins);
    device_buffer<unsigned> h{std::size_t(bins)}, ref{std::size_t(bins)};
    cub_histogram_even(in.get(), ref.get(), bins, lo, hi, n);
    cudaStream_t st;
    TW_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::size_t bytes = 0;
    REQUIRE(tilewise::device::histogram_even(nullptr, bytes, in.get(), h.get(), bins, lo, hi, n) == cudaSuccess);
    device_buffer<unsigned char> temp(bytes);
    temp.poison();
    h.poison();
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    cudaGraph_t graph;
    TW_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    cudaError_t const e = tilewise::device::histogram_even(temp.get(), bytes, in.get(), h.get(), bins, lo, hi, n, st);
    TW_CUDA_CHECK(cudaStreamEndCapture(st, &graph));
    REQUIRE(e == cudaSuccess);
    cudaGraphExec_t exec;
    TW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; ++rep) {  // overwritten, not accumulated: both launches give CUB's
      TW_CUDA_CHECK(cudaGraphLaunch(exec, st));
      TW_CUDA_CHECK(cudaStreamSynchronize(st));
      CHECK(compare_bits(h.get(), ref.get(), bins).count == 0);
    }
    TW_CUDA_CHECK(cudaGraphExecDestroy(exec));
    TW_CUDA_CHECK(cudaGraphDestroy(graph));
    TW_CUDA_CHECK(cudaStreamDestroy(st));
  }
}

TEST_CASE("histogram_even: bad arguments give cudaErrorInvalidValue and leave hist alone") {
  device_buffer<float> in(64);
  gen_samples(in.get(), 64, spec_for<float>(histogram_data::uniform, 16, 1));
  device_buffer<int> hist(16);
  hist.poison();
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::histogram_even(nullptr, bytes, in.get(), hist.get(), 16, 0.f, 1.f, 64) == cudaSuccess);
  CHECK(bytes == tilewise::detail::histogram_temp_bytes);
  device_buffer<unsigned char> temp(bytes);
  std::size_t small = bytes - 1;
  auto const nan    = std::numeric_limits<float>::quiet_NaN();
  using tilewise::device::histogram_even;
  float* const null_in = nullptr;
  int* const null_hist = nullptr;
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 0, 0.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), -3, 0.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 16, 1.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 16, 2.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 16, nan, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 16, 0.f, nan, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, null_in, hist.get(), 16, 0.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, thrust::device_ptr<float>(), hist.get(), 16, 0.f, 1.f, 64) ==
        cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), null_hist, 16, 0.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), null_hist, 16, 0.f, 1.f, 0) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), small, in.get(), hist.get(), 16, 0.f, 1.f, 64) == cudaErrorInvalidValue);
  CHECK(histogram_even(temp.get(), bytes, in.get(), hist.get(), 16, 0.f, 1.f, -1) == cudaErrorInvalidValue);
  // integer ranges whose (upper - lower) * bins may overflow 64 bits: invalid, as for CUB
  device_buffer<std::int64_t> big(4);
  device_buffer<int> h8(8);
  h8.poison();
  std::int64_t const l = -(1ll << 62), u = 1ll << 62;
  CHECK(histogram_even(temp.get(), bytes, big.get(), h8.get(), 8, l, u, 4) == cudaErrorInvalidValue);
  std::size_t cub_bytes = 0;
  CHECK(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, big.get(), h8.get(), 9, l, u, 4ll) ==
        cudaErrorInvalidValue);
  TW_CHECK_LAUNCH();
  int poisoned;
  std::memset(&poisoned, 0xA5, sizeof poisoned);
  auto const h = hist.download();
  CHECK(std::all_of(h.begin(), h.end(), [&](int v) { return v == poisoned; }));
  auto const g = h8.download();
  CHECK(std::all_of(g.begin(), g.end(), [&](int v) { return v == poisoned; }));
  // null samples with num_items == 0 are fine and zero hist
  CHECK(histogram_even(temp.get(), bytes, null_in, hist.get(), 16, 0.f, 1.f, 0) == cudaSuccess);
  TW_CHECK_LAUNCH();
  auto const z = hist.download();
  CHECK(std::all_of(z.begin(), z.end(), [](int v) { return v == 0; }));
}
