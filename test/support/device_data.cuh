// Test support for the device-wide algorithms: inputs generated on the GPU (sizes up to 2^28 and
// beyond 2^31 without host round trips), device-side bitwise comparison of two arrays, the size
// list, and TILEWISE_TEST_MAX_LOG2 (the largest size; smaller under compute-sanitizer).
#pragma once

#include <cuda/cmath>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_test.cuh"
#include "test_types.cuh"

namespace tw_test {

/// TILEWISE_TEST_MAX_LOG2 when set to a positive number, else 0.
inline int max_log2_setting() {
  char const* s = std::getenv("TILEWISE_TEST_MAX_LOG2");
  int const n   = s ? std::atoi(s) : 0;
  return n > 0 ? n : 0;
}

/// log2 of the largest input of the size lists: TILEWISE_TEST_MAX_LOG2, default 28.
inline int max_log2() { return max_log2_setting() > 0 ? max_log2_setting() : 28; }

/// Whether the cases above 2^31 elements run: unless TILEWISE_TEST_MAX_LOG2 is set below 31
/// (the sanitizer runs of scripts/gpu-check.sh set 16). The plain CTest run sets nothing.
inline bool above_2_31() {
  int const n = max_log2_setting();
  return n == 0 || n >= 31;
}

/// Whether this is one of the reduced runs under compute-sanitizer (TILEWISE_TEST_MAX_LOG2 set
/// below 31), where the tool may serialize launches and stretch host-side timing.
inline bool sanitizer_run() { return !above_2_31(); }

/// 0, 1, 2, 31, 33, 1023, 1025, and 2^k - 1, 2^k, 2^k + 1 for k = 4, 8, 11, 12, 13, 16, 20, 24, 28
/// up to 2^max_log2(). Under compute-sanitizer, where every launch costs tens of milliseconds, one
/// or two sizes per class: empty, one, a partial warp, a partial block, a tile of int32 and its
/// neighbours, several tiles with and without a partial last one.
inline std::vector<long long> test_sizes() {
  if (sanitizer_run()) {
    std::vector<long long> s;
    for (long long n : {0ll, 1ll, 2ll, 33ll, 1025ll, (1ll << 13) - 1, 1ll << 13, (1ll << 13) + 1, (1ll << 16) - 1,
                        (1ll << 16) + 1}) {
      if (n <= (1ll << max_log2()) + 1) s.push_back(n);
    }
    return s;
  }
  std::vector<long long> s{0, 1, 2, 31, 33, 1023, 1025};
  for (int k : {4, 8, 11, 12, 13, 16, 20, 24, 28}) {
    if (k > max_log2()) break;
    for (long long d : {-1, 0, 1}) s.push_back((1ll << k) + d);
  }
  return s;
}

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// How generated values look: `bits` = random over the whole type (floats: uniform in [-1, 1)),
/// `small` = integers in [-4, 4] (floats: such integers, whose sums are exact).
enum class values { bits, small };

template <class T>
__host__ __device__ T make_value(std::uint64_t r, values how) {
  if constexpr (std::is_same_v<T, mat2>) {
    return {std::uint32_t(r), std::uint32_t(r >> 32), std::uint32_t(mix64(r)), std::uint32_t(mix64(r) >> 32)};
  } else if constexpr (std::is_same_v<T, aff32>) {
    return {std::uint32_t(r), std::uint32_t(r >> 32)};
  } else if constexpr (std::is_same_v<T, s12>) {
    return {std::int32_t(r), std::int32_t(r >> 32), std::int32_t(mix64(r))};
  } else if constexpr (std::is_floating_point_v<T>) {
    if (how == values::small) return T(int(r % 9) - 4);
    return T(double(r >> 11) * 0x1.0p-52 - 1.0);
  } else {
    if (how == values::small) return T(int(r % 9) - 4);
    return T(r);
  }
}

template <class T>
__global__ void fill_kernel(T* p, long long n, std::uint64_t seed, values how) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    p[i] = make_value<T>(mix64(std::uint64_t(i) ^ mix64(seed)), how);
  }
}

/// Fills p[0, n) with pseudo-random values (a function of seed and index).
template <class T>
void fill(T* p, long long n, std::uint64_t seed, values how = values::bits) {
  if (n == 0) return;
  fill_kernel<<<unsigned(cuda::ceil_div(n, 256ll) < 8192 ? cuda::ceil_div(n, 256ll) : 8192), 256>>>(p, n, seed, how);
  TW_CHECK_LAUNCH();
}

/// Fills p[0, n) with the byte 0xA5.
template <class T>
void poison(T* p, long long n) {
  TW_CUDA_CHECK(cudaMemset(p, 0xA5, std::size_t(n) * sizeof(T)));
}

template <class T>
__global__ void mismatch_kernel(T const* a, T const* b, long long n, unsigned long long* count,
                                unsigned long long* first) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned char const* x = reinterpret_cast<unsigned char const*>(a + i);
    unsigned char const* y = reinterpret_cast<unsigned char const*>(b + i);
    bool same              = true;
    for (unsigned k = 0; k < sizeof(T); ++k) same &= x[k] == y[k];
    if (!same) {
      atomicAdd(count, 1ull);
      atomicMin(first, static_cast<unsigned long long>(i));
    }
  }
}

/// Number of indices where a and b differ bitwise, and the first of them (n when none).
struct mismatch {
  unsigned long long count;
  unsigned long long first;
};
template <class T>
mismatch compare_bits(T const* a, T const* b, long long n) {
  device_buffer<unsigned long long> r(2);
  std::vector<unsigned long long> init{0, static_cast<unsigned long long>(n)};
  r.upload(init);
  if (n > 0) {
    mismatch_kernel<<<unsigned(cuda::ceil_div(n, 256ll) < 8192 ? cuda::ceil_div(n, 256ll) : 8192), 256>>>(
      a, b, n, r.get(), r.get() + 1);
    TW_CHECK_LAUNCH();
  }
  auto const h = r.download();
  return {h[0], h[1]};
}

/// One value from device memory.
template <class T>
T read_one(T const* p) {
  T v;
  TW_CUDA_CHECK(cudaMemcpy(&v, p, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace tw_test
