// Test support: checked CUDA calls, device buffers that are poisoned before use, seeded random
// inputs, and how many seeds to run (TILEWISE_TEST_SEEDS, smaller under compute-sanitizer).
#pragma once

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#define TW_CUDA_CHECK(expr)                                                                          \
  do {                                                                                               \
    cudaError_t const tw_err_ = (expr);                                                              \
    if (tw_err_ != cudaSuccess) {                                                                    \
      FAIL_CHECK(#expr << " failed: " << std::string(cudaGetErrorName(tw_err_)) << ": "                  \
                        << std::string(cudaGetErrorString(tw_err_)));                                \
      throw std::runtime_error("CUDA error");                                                        \
    }                                                                                                \
  } while (0)

/// After a launch: the launch error, then the kernel's own error.
#define TW_CHECK_LAUNCH()                        \
  do {                                           \
    TW_CUDA_CHECK(cudaGetLastError());           \
    TW_CUDA_CHECK(cudaDeviceSynchronize());      \
  } while (0)

namespace tw_test {

/// Number of random seeds per case: TILEWISE_TEST_SEEDS, default `fallback`.
inline int seeds(int fallback = 8) {
  if (char const* s = std::getenv("TILEWISE_TEST_SEEDS")) {
    int const n = std::atoi(s);
    if (n > 0) return n;
  }
  return fallback;
}

/// A device array that frees itself, every byte defined from the start for compute-sanitizer's
/// initcheck (a test may download more than a call writes): made from a size, it is poisoned
/// (0xA5 bytes, so unwritten results show); made from a host vector, it holds the vector.
/// `poison()` fills it again. Both wait for their memset: it runs in the legacy default stream,
/// which a non-blocking stream does not wait for.
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n) : n_(n) {
    TW_CUDA_CHECK(cudaMalloc(&p_, bytes()));
    poison();
  }
  explicit device_buffer(std::vector<T> const& host) : n_(host.size()) {  // every element written
    TW_CUDA_CHECK(cudaMalloc(&p_, bytes()));
    upload(host);
  }
  device_buffer(device_buffer const&)            = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() { cudaFree(p_); }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T) + (n_ == 0); }

  void upload(std::vector<T> const& host) {
    REQUIRE(host.size() == n_);
    TW_CUDA_CHECK(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  void poison() {
    TW_CUDA_CHECK(cudaMemset(p_, 0xA5, bytes()));
    TW_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    TW_CUDA_CHECK(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

/// Random values of T, never all zero. Each test type provides `random_value(rng, tag)`.
template <class T>
struct tag {};

template <class Rng, class T>
  requires std::is_integral_v<T>
T random_value(Rng& rng, tag<T>) {
  using wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
  std::uniform_int_distribution<wide> d(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  return static_cast<T>(d(rng));
}

template <class Rng, class T>
  requires std::is_floating_point_v<T>
T random_value(Rng& rng, tag<T>) {
  std::uniform_real_distribution<T> d(T(-1), T(1));
  return d(rng);
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::vector<T> v(n);
  for (auto& x : v) x = random_value(rng, tag<T>{});
  return v;
}

inline std::vector<unsigned> random_counts(std::size_t n, unsigned lo, unsigned hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0xC0FFEEull);
  std::uniform_int_distribution<unsigned> d(lo, hi);
  std::vector<unsigned> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

/// Bitwise equality, for "every lane holds the same result".
template <class T>
bool same_bits(T const& a, T const& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace tw_test
