// Compiled by the C++ compiler, not nvcc: every tilewise::api entry point on the GPU against a
// host reference: reduce, inclusive_scan, exclusive_scan (int32, uint32, int64, uint64, float,
// double; plus, minimum, maximum; offset inputs, in place), copy_flagged (every value type),
// histogram_even (every sample type, int32 and uint64 counters, samples out of range and NaN),
// group_by (int32 and int64 keys, every value type and op); sizes 0 to 2^20 + 3, poisoned outputs
// checked past the end; and the error returns (null pointers, n < 0, a bad op or bin range, too
// small a temp_bytes).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <type_traits>
#include <stdexcept>
#include <vector>

#include <tilewise/api.hpp>

namespace {

#define API_CUDA(expr) REQUIRE((expr) == cudaSuccess)

using tilewise::api::op;

/// Sizes 0, 1, 2, 1000, 4097, 2^16 + 1, 2^20 + 3, capped by TILEWISE_TEST_MAX_LOG2.
std::vector<std::int64_t> sizes() {
  int max_log2 = 28;
  if (char const* s = std::getenv("TILEWISE_TEST_MAX_LOG2")) {
    if (std::atoi(s) > 0) max_log2 = std::atoi(s);
  }
  std::vector<std::int64_t> out;
  for (std::int64_t n : {0ll, 1ll, 2ll, 1000ll, 4097ll, (1ll << 16) + 1, (1ll << 20) + 3}) {
    if (n <= (1ll << max_log2)) out.push_back(n);
  }
  return out;
}

/// Small integers in [-4, 4] (as T): floating-point sums of them are exact in any order.
template <class T>
std::vector<T> values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
T apply(op o, T a, T b) {
  switch (o) {
    case op::plus: return static_cast<T>(a + b);
    case op::minimum: return b < a ? b : a;
    case op::maximum: return a < b ? b : a;
  }
  throw std::logic_error("op");
}

template <class T>
class device_array {
 public:
  explicit device_array(std::size_t n) { API_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T) + 1)); }
  device_array(device_array const&)            = delete;
  device_array& operator=(device_array const&) = delete;
  ~device_array() { cudaFree(p_); }
  T* get() const { return p_; }
  void upload(std::vector<T> const& h) { API_CUDA(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download(std::size_t n) const {
    std::vector<T> h(n);
    API_CUDA(cudaMemcpy(h.data(), p_, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* p_ = nullptr;
};

/// Bitwise comparison of two host arrays: the number of differing elements.
template <class T>
std::size_t differing(std::vector<T> const& a, std::vector<T> const& b) {
  REQUIRE(a.size() == b.size());
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return d;
}

enum class call { reduce, inclusive, exclusive };

/// One entry point through its two phases (size query, then the call) on stream s, synchronized.
template <class T>
void run(call c, T const* in, T* out, std::int64_t n, op o, T init, cudaStream_t s) {
  std::size_t bytes = 0;
  auto const go = [&](void* temp) {
    switch (c) {
      case call::reduce: return tilewise::api::reduce(temp, bytes, in, out, n, o, init, s);
      case call::inclusive: return tilewise::api::inclusive_scan(temp, bytes, in, out, n, o, s);
      case call::exclusive: return tilewise::api::exclusive_scan(temp, bytes, in, out, n, o, init, s);
    }
    return cudaErrorUnknown;
  };
  REQUIRE(go(nullptr) == cudaSuccess);
  REQUIRE(bytes > 0);
  void* temp = nullptr;
  API_CUDA(cudaMalloc(&temp, bytes));
  API_CUDA(cudaMemset(temp, 0xA5, bytes));
  CHECK(go(temp) == cudaSuccess);
  API_CUDA(cudaStreamSynchronize(s));
  API_CUDA(cudaFree(temp));
}

template <class T>
void check_type() {
  cudaStream_t s{};
  API_CUDA(cudaStreamCreate(&s));
  T const poison = static_cast<T>(111);
  for (std::int64_t n : sizes()) {
    auto const un = static_cast<std::size_t>(n);
    std::vector<T> const h = values<T>(un + 1, 1000 + std::uint64_t(n));
    device_array<T> in(un + 1), out(un + 2);
    in.upload(h);
    for (op o : {op::plus, op::minimum, op::maximum}) {
      for (int offset : {0, 1}) {
        CAPTURE(n);
        CAPTURE(static_cast<int>(o));
        CAPTURE(offset);
        T const init = static_cast<T>(3);
        T const* d_in = in.get() + offset;
        // Host references over h[offset, offset + n).
        T total = init;
        std::vector<T> inc(un), exc(un);
        T running{};
        for (std::size_t i = 0; i < un; ++i) {
          T const x = h[i + offset];
          total     = apply(o, total, x);
          exc[i]    = i == 0 ? init : apply(o, exc[i - 1], h[i - 1 + offset]);
          running   = i == 0 ? x : apply(o, running, x);
          inc[i]    = running;
        }
        std::vector<T> const poisoned(un + 2, poison);

        out.upload(poisoned);
        run(call::reduce, d_in, out.get(), n, o, init, s);
        auto r = out.download(2);
        CHECK(differing(std::vector<T>{r[0]}, std::vector<T>{total}) == 0);
        CHECK(differing(std::vector<T>{r[1]}, std::vector<T>{poison}) == 0);

        for (call c : {call::inclusive, call::exclusive}) {
          CAPTURE(c == call::inclusive ? "inclusive_scan" : "exclusive_scan");
          std::vector<T> expected = c == call::inclusive ? inc : exc;
          expected.push_back(poison);
          out.upload(poisoned);
          run(c, d_in, out.get() + offset, n, o, init, s);
          auto got = out.download(un + 2);
          got.erase(got.begin(), got.begin() + offset);
          got.resize(un + 1);
          CHECK(differing(got, expected) == 0);
        }
      }
    }
    // In place: out == in.
    if (n > 0) {
      device_array<T> io(un);
      io.upload(std::vector<T>(h.begin(), h.begin() + n));
      run(call::inclusive, static_cast<T const*>(io.get()), io.get(), n, op::plus, T{}, s);
      std::vector<T> expected(un);
      T acc{};
      for (std::size_t i = 0; i < un; ++i) expected[i] = acc = static_cast<T>(acc + h[i]);
      CHECK(differing(io.download(un), expected) == 0);
    }
  }
  API_CUDA(cudaStreamDestroy(s));
}

}  // namespace

TEST_CASE("tilewise::api int32") { check_type<std::int32_t>(); }
TEST_CASE("tilewise::api uint32") { check_type<std::uint32_t>(); }
TEST_CASE("tilewise::api int64") { check_type<std::int64_t>(); }
TEST_CASE("tilewise::api uint64") { check_type<std::uint64_t>(); }
TEST_CASE("tilewise::api float") { check_type<float>(); }
TEST_CASE("tilewise::api double") { check_type<double>(); }

TEST_CASE("tilewise::api errors: cudaErrorInvalidValue for null pointers, n < 0, a bad op, too little temp") {
  device_array<float> in(100), out(100);
  std::size_t bytes = 0;
  REQUIRE(tilewise::api::reduce(nullptr, bytes, in.get(), out.get(), 100, op::plus, 0.0f) == cudaSuccess);
  void* temp = nullptr;
  API_CUDA(cudaMalloc(&temp, bytes));
  std::size_t b = bytes;
  float const* null_in = nullptr;
  float* null_out      = nullptr;
  CHECK(tilewise::api::reduce(temp, b, null_in, out.get(), 100, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::reduce(temp, b, in.get(), null_out, 100, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::reduce(temp, b, in.get(), null_out, 0, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::reduce(temp, b, in.get(), out.get(), -1, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::reduce(temp, b, in.get(), out.get(), 100, static_cast<op>(7), 0.0f) == cudaErrorInvalidValue);
  std::size_t small = 1;
  CHECK(tilewise::api::reduce(temp, small, in.get(), out.get(), 100, op::plus, 0.0f) == cudaErrorInvalidValue);

  std::size_t sb = 0;
  REQUIRE(tilewise::api::inclusive_scan(nullptr, sb, in.get(), out.get(), 100, op::maximum) == cudaSuccess);
  void* stemp = nullptr;
  API_CUDA(cudaMalloc(&stemp, sb));
  CHECK(tilewise::api::inclusive_scan(stemp, sb, null_in, out.get(), 100, op::plus) == cudaErrorInvalidValue);
  CHECK(tilewise::api::inclusive_scan(stemp, sb, in.get(), null_out, 100, op::plus) == cudaErrorInvalidValue);
  CHECK(tilewise::api::exclusive_scan(stemp, sb, null_in, out.get(), 100, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::exclusive_scan(stemp, sb, in.get(), null_out, 100, op::minimum, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::exclusive_scan(stemp, sb, in.get(), out.get(), -5, op::plus, 0.0f) == cudaErrorInvalidValue);
  CHECK(tilewise::api::inclusive_scan(stemp, sb, in.get(), out.get(), 100, static_cast<op>(-1)) ==
        cudaErrorInvalidValue);
  small = 1;
  CHECK(tilewise::api::exclusive_scan(stemp, small, in.get(), out.get(), 100, op::plus, 0.0f) == cudaErrorInvalidValue);
  // Empty scans with null pointers are valid no-ops.
  CHECK(tilewise::api::inclusive_scan(stemp, sb, null_in, null_out, 0, op::plus) == cudaSuccess);
  API_CUDA(cudaDeviceSynchronize());
  CHECK(cudaGetLastError() == cudaSuccess);
  API_CUDA(cudaFree(temp));
  API_CUDA(cudaFree(stemp));
}

// ---- copy_flagged, histogram_even, group_by --------------------------------------------------------

namespace {

/// Two-phase run of `go(temp, bytes)` on stream s, synchronized; returns the call's status.
template <class Go>
cudaError_t two_phase(Go go, cudaStream_t s) {
  std::size_t bytes = 0;
  REQUIRE(go(nullptr, bytes) == cudaSuccess);
  void* temp = nullptr;
  API_CUDA(cudaMalloc(&temp, bytes));
  API_CUDA(cudaMemset(temp, 0xA5, bytes));
  cudaError_t const e = go(temp, bytes);
  API_CUDA(cudaStreamSynchronize(s));
  API_CUDA(cudaFree(temp));
  return e;
}

template <class T>
void check_copy_flagged() {
  T const poison = static_cast<T>(99);
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    auto const un = static_cast<std::size_t>(n);
    std::vector<T> const h = values<T>(un, 7 + std::uint64_t(n));
    std::vector<std::uint8_t> flags(un);
    std::mt19937_64 rng(std::uint64_t(n) + 5);
    for (auto& f : flags) f = std::uint8_t(rng() % 3 == 0 ? 0 : rng() % 2 == 0 ? 1 : 200);  // nonzero: kept
    std::vector<T> expected;
    for (std::size_t i = 0; i < un; ++i) {
      if (flags[i]) expected.push_back(h[i]);
    }
    device_array<T> in(un), out(un + 1);
    device_array<std::uint8_t> d_flags(un);
    device_array<std::int64_t> count(1);
    in.upload(h);
    d_flags.upload(flags);
    out.upload(std::vector<T>(un + 1, poison));
    count.upload({-1});
    CHECK(two_phase([&](void* t, std::size_t& b) {
            return tilewise::api::copy_flagged(t, b, in.get(), d_flags.get(), out.get(), count.get(), n, 0);
          }, 0) == cudaSuccess);
    std::int64_t const got = count.download(1)[0];
    REQUIRE(got == static_cast<std::int64_t>(expected.size()));
    auto o = out.download(un + 1);
    expected.resize(un + 1, poison);  // nothing written past the count
    CHECK(differing(o, expected) == 0);
  }
}

/// A host reference of CUB's even bins, exact for the test's samples: integers in a wide type,
/// floating point with bin widths that are powers of two.
template <class S, class L, class C>
std::vector<C> host_histogram(std::vector<S> const& s, int bins, L lower, L upper) {
  std::vector<C> h(static_cast<std::size_t>(bins), 0);
  for (S x : s) {
    if constexpr (std::is_floating_point_v<S>) {
      if (!(x >= lower && x < upper)) continue;  // NaN too
      h[static_cast<std::size_t>((double(x) - double(lower)) * bins / (double(upper) - double(lower)))]++;
    } else {
      if (static_cast<long double>(x) < static_cast<long double>(lower) ||
          static_cast<long double>(x) >= static_cast<long double>(upper))
        continue;
      unsigned long long const off   = static_cast<unsigned long long>(x) - static_cast<unsigned long long>(lower);
      unsigned long long const width = static_cast<unsigned long long>(upper) - static_cast<unsigned long long>(lower);
      h[static_cast<std::size_t>(off * static_cast<unsigned long long>(bins) / width)]++;
    }
  }
  return h;
}

template <class S, class L, class C>
void check_histogram(int bins, L lower, L upper, long long lo, long long hi, bool nans) {
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    auto const un = static_cast<std::size_t>(n);
    std::mt19937_64 rng(std::uint64_t(n) * 3 + 1);
    std::uniform_int_distribution<long long> d(lo, hi - 1);
    std::vector<S> samples(un);
    for (auto& x : samples) {
      if constexpr (std::is_floating_point_v<S>) {
        x = nans && rng() % 50 == 0 ? std::numeric_limits<S>::quiet_NaN() : S(d(rng)) / S(8);  // multiples of 1/8
      } else {
        x = static_cast<S>(static_cast<L>(lower) + static_cast<L>(d(rng)));  // offsets from lower, some outside
      }
    }
    std::vector<C> expected = host_histogram<S, L, C>(samples, bins, lower, upper);
    device_array<S> in(un);
    device_array<C> hist(static_cast<std::size_t>(bins) + 1);
    in.upload(samples);
    hist.upload(std::vector<C>(static_cast<std::size_t>(bins) + 1, C(77)));
    CHECK(two_phase([&](void* t, std::size_t& b) {
            return tilewise::api::histogram_even(t, b, in.get(), hist.get(), bins, lower, upper, n, 0);
          }, 0) == cudaSuccess);
    expected.push_back(C(77));
    CHECK(differing(hist.download(static_cast<std::size_t>(bins) + 1), expected) == 0);
  }
}

template <class K, class V>
void check_group_by() {
  for (std::int64_t n : sizes()) {
    if (n > (1 << 17)) continue;  // host maps: the device side is tested at scale elsewhere
    for (op o : {op::plus, op::minimum, op::maximum}) {
      CAPTURE(n);
      CAPTURE(static_cast<int>(o));
      auto const un = static_cast<std::size_t>(n);
      std::mt19937_64 rng(std::uint64_t(n) + 11);
      std::vector<K> keys(un);
      for (auto& k : keys) k = static_cast<K>(static_cast<long long>(rng() % 50) * 7 - 100);
      std::vector<V> const vals = values<V>(un, 3 + std::uint64_t(n));
      std::map<K, V> ref;
      for (std::size_t i = 0; i < un; ++i) {
        auto const it = ref.find(keys[i]);
        if (it == ref.end()) {
          ref.emplace(keys[i], vals[i]);
        } else {
          it->second = apply(o, it->second, vals[i]);
        }
      }
      device_array<K> dk(un), ko(un + 1);
      device_array<V> dv(un), vo(un + 1);
      device_array<std::int64_t> rows(1);
      dk.upload(keys);
      dv.upload(vals);
      rows.upload({-1});
      CHECK(two_phase([&](void* t, std::size_t& b) {
              return tilewise::api::group_by(t, b, dk.get(), dv.get(), ko.get(), vo.get(), rows.get(), n, o, 0);
            }, 0) == cudaSuccess);
      std::int64_t const r = rows.download(1)[0];
      REQUIRE(r == static_cast<std::int64_t>(ref.size()));
      auto const gk = ko.download(static_cast<std::size_t>(r));
      auto const gv = vo.download(static_cast<std::size_t>(r));
      std::map<K, V> got;
      for (std::size_t i = 0; i < gk.size(); ++i) got.emplace(gk[i], gv[i]);
      CHECK(got.size() == ref.size());  // every key once
      std::size_t wrong = 0;
      for (auto const& [k, v] : ref) {
        auto const it = got.find(k);
        wrong += it == got.end() || std::memcmp(&it->second, &v, sizeof(V)) != 0;
      }
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("tilewise::api copy_flagged, every value type") {
  check_copy_flagged<std::int32_t>();
  check_copy_flagged<std::uint32_t>();
  check_copy_flagged<std::int64_t>();
  check_copy_flagged<std::uint64_t>();
  check_copy_flagged<float>();
  check_copy_flagged<double>();
}

TEST_CASE("tilewise::api histogram_even, every sample type, int32 and uint64 counters") {
  // Bins of width 4 (integers) and 1/4 (floating point), samples partly outside [lower, upper).
  check_histogram<std::int32_t, std::int32_t, std::int32_t>(100, -200, 200, -100, 500, false);
  check_histogram<std::uint32_t, std::uint32_t, std::uint64_t>(100, 100u, 500u, -100, 500, false);
  check_histogram<std::int64_t, std::int64_t, std::uint64_t>(100, -(1ll << 40), -(1ll << 40) + 400, -100, 500, false);
  check_histogram<std::uint64_t, std::uint64_t, std::int32_t>(100, 1ull << 40, (1ull << 40) + 400, -100, 500, false);
  check_histogram<float, float, std::int32_t>(64, -8.0f, 8.0f, -80, 80, true);
  check_histogram<double, double, std::uint64_t>(64, -8.0, 8.0, -80, 80, true);
}

TEST_CASE("tilewise::api group_by, int32 and int64 keys, every value type and op") {
  check_group_by<std::int32_t, std::int32_t>();
  check_group_by<std::int32_t, std::uint32_t>();
  check_group_by<std::int32_t, std::int64_t>();
  check_group_by<std::int32_t, std::uint64_t>();
  check_group_by<std::int32_t, float>();
  check_group_by<std::int32_t, double>();
  check_group_by<std::int64_t, std::int32_t>();
  check_group_by<std::int64_t, std::uint32_t>();
  check_group_by<std::int64_t, std::int64_t>();
  check_group_by<std::int64_t, std::uint64_t>();
  check_group_by<std::int64_t, float>();
  check_group_by<std::int64_t, double>();
}

TEST_CASE("tilewise::api copy_flagged / histogram_even / group_by errors") {
  device_array<float> in(10), out(10);
  device_array<std::uint8_t> flags(10);
  device_array<std::int64_t> count(1);
  device_array<std::int32_t> hist(4);
  device_array<std::int32_t> keys(10), kout(10);
  std::size_t b = 1 << 20;
  void* temp = nullptr;
  API_CUDA(cudaMalloc(&temp, b));
  float const* null_in = nullptr;
  std::int64_t* null_count = nullptr;
  CHECK(tilewise::api::copy_flagged(temp, b, null_in, flags.get(), out.get(), count.get(), 10) == cudaErrorInvalidValue);
  CHECK(tilewise::api::copy_flagged(temp, b, in.get(), flags.get(), out.get(), null_count, 10) == cudaErrorInvalidValue);
  CHECK(tilewise::api::copy_flagged(temp, b, in.get(), nullptr, out.get(), count.get(), 10) == cudaErrorInvalidValue);
  CHECK(tilewise::api::histogram_even(temp, b, in.get(), hist.get(), 0, 0.0f, 1.0f, 10) == cudaErrorInvalidValue);
  CHECK(tilewise::api::histogram_even(temp, b, in.get(), hist.get(), 4, 1.0f, 0.0f, 10) == cudaErrorInvalidValue);
  CHECK(tilewise::api::histogram_even(temp, b, in.get(), static_cast<std::int32_t*>(nullptr), 4, 0.0f, 1.0f, 10) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::api::group_by(temp, b, keys.get(), in.get(), kout.get(), out.get(), null_count, 10, op::plus) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::api::group_by(temp, b, keys.get(), null_in, kout.get(), out.get(), count.get(), 10, op::plus) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::api::group_by(temp, b, keys.get(), in.get(), kout.get(), out.get(), count.get(), 10,
                                static_cast<op>(9)) == cudaErrorInvalidValue);
  API_CUDA(cudaDeviceSynchronize());
  CHECK(cudaGetLastError() == cudaSuccess);
  API_CUDA(cudaFree(temp));
}
