// group_by test data and oracle: pairs whose keys take a chosen number of distinct values
// (uniform, Zipf-like or all distinct; optionally the extreme key values first), generated on the
// GPU; CUB's DeviceRadixSort::SortPairs + DeviceReduce::ReduceByKey as the oracle; rows compared
// as sets (both sides sorted by key with CUB) with the exact row count.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <thrust/iterator/transform_iterator.h>

#include <cuda/std/functional>
#include <cuda/std/limits>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>
#include <vector>

#include <tilewise/detail/device/hash_slots.cuh>

#include "device_data.cuh"

namespace tw_test {

/// 16 bytes, combined by s16_op: wrapping sum, min, xor (commutative, no identity known to tilewise).
struct s16 {
  std::uint64_t sum;
  std::uint32_t lo;
  std::uint32_t x;
  friend bool operator==(s16 const&, s16 const&) = default;
};
struct s16_op {
  __host__ __device__ s16 operator()(s16 const& a, s16 const& b) const {
    return {a.sum + b.sum, a.lo < b.lo ? a.lo : b.lo, a.x ^ b.x};
  }
};

/// 48 bytes, combined by s48_plus (wrapping sums of its words): wide enough that the partition
/// tiles hold fewer pairs per thread than for narrower values.
struct s48 {
  std::uint64_t w[6];
  friend bool operator==(s48 const&, s48 const&) = default;
};
struct s48_plus {
  __host__ __device__ s48 operator()(s48 const& a, s48 const& b) const {
    s48 r;
    for (int i = 0; i < 6; ++i) r.w[i] = a.w[i] + b.w[i];
    return r;
  }
};

enum class key_dist { uniform, zipf, distinct };

inline char const* dist_name(key_dist d) {
  return d == key_dist::uniform ? "uniform" : d == key_dist::zipf ? "zipf" : "distinct";
}

/// How the keys of a test input look: `distinct` keys drawn uniformly or Zipf-like (rank r with
/// probability about 1/(r+1)), or every key different; with `extremes`, ranks 0..7 are the
/// extreme values of the key type (min, max, -1, 0, 1, the block tables' free key, min+1, max-1).
struct key_spec {
  key_dist dist;
  unsigned long long distinct;
  bool extremes;
  std::uint64_t seed;
};

/// murmur3's 32-bit finaliser: a bijection, so distinct ranks give distinct keys.
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  return x ^ (x >> 16);
}

template <class K>
__host__ __device__ K extreme_key(unsigned i) {
  using L = cuda::std::numeric_limits<K>;
  using U = tilewise::detail::key_bits_t<K>;
  switch (i) {
    case 0: return L::lowest();
    case 1: return L::max();
    case 2: return K(U(~U(0)));  // -1 (and UINT_MAX / UINT64_MAX)
    case 3: return K(0);
    case 4: return K(1);
    case 5: return K(tilewise::detail::free_key<U>);
    case 6: return K(L::lowest() + 1);
    default: return K(L::max() - 1);
  }
}

template <class K>
__host__ __device__ K key_of_rank(std::uint64_t r, std::uint64_t salt, bool extremes) {
  if (extremes && r < 8) return extreme_key<K>(unsigned(r));
  if constexpr (sizeof(K) == 4) {
    return K(mix32(std::uint32_t(r) ^ std::uint32_t(salt)));
  } else {
    return K(mix64(r ^ salt));
  }
}

__host__ __device__ inline std::uint64_t rank_of(std::uint64_t i, key_spec const& s) {
  std::uint64_t const r = mix64(i ^ mix64(s.seed));
  switch (s.dist) {
    case key_dist::uniform: return r % s.distinct;
    case key_dist::zipf: {
      double const u = double(r >> 11) * 0x1.0p-53;
      double const x = std::floor(std::pow(double(s.distinct) + 1.0, u)) - 1.0;
      std::uint64_t const k = x < 0 ? 0 : std::uint64_t(x);
      return k < s.distinct ? k : s.distinct - 1;
    }
    default: return i;
  }
}

/// Value of pair i: full-range integers (wrapping sums), floating point uniform in [-1, 1) (sums
/// near zero: their rounding error stays far below the tolerance), s16 and s48 random.
template <class T>
__host__ __device__ T pair_value(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t const r = mix64(i * 0x9E3779B97F4A7C15ull ^ seed);
  if constexpr (std::is_same_v<T, s16>) {
    std::uint64_t const r2 = mix64(r);
    return {r, std::uint32_t(r2), std::uint32_t(r2 >> 32)};
  } else if constexpr (std::is_same_v<T, s48>) {
    s48 v;
    v.w[0] = r;
    for (int k = 1; k < 6; ++k) v.w[k] = mix64(v.w[k - 1]);
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    return T(double(r >> 11) * 0x1.0p-52 - 1.0);
  } else {
    return T(r);
  }
}

template <class K, class T>
__global__ void fill_pairs_kernel(K* keys, T* vals, long long n, key_spec s, std::uint64_t salt) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    keys[i] = key_of_rank<K>(rank_of(std::uint64_t(i), s), salt, s.extremes);
    vals[i] = pair_value<T>(std::uint64_t(i), s.seed);
  }
}

/// Fills keys[0, n) and vals[0, n) as `s` describes.
template <class K, class T>
void fill_pairs(K* keys, T* vals, long long n, key_spec const& s) {
  if (n == 0) return;
  unsigned const blocks = unsigned(std::min<long long>(cuda::ceil_div(n, 256ll), 8192));
  fill_pairs_kernel<<<blocks, 256>>>(keys, vals, n, s, mix64(s.seed + 17));
  TW_CHECK_LAUNCH();
}

/// Rows sorted by key (CUB radix order = numeric order), on the device.
template <class K, class T>
struct sorted_rows {
  device_buffer<K> keys;
  device_buffer<T> values;
  long long count = 0;
  explicit sorted_rows(long long n) : keys{std::size_t(n)}, values{std::size_t(n)} {}
};

/// cub::DeviceRadixSort::SortPairs of keys/vals[0, n) into out.
template <class K, class T>
void cub_sort_pairs(K const* keys, T const* vals, long long n, K* keys_out, T* vals_out) {
  if (n == 0) return;
  std::size_t bytes = 0;
  TW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, vals, vals_out, n));
  device_buffer<unsigned char> temp(bytes);
  TW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys, keys_out, vals, vals_out, n));
  TW_CHECK_LAUNCH();
}

/// The oracle: SortPairs, then ReduceByKey over the sorted runs (values may be any input iterator
/// over the sorted values' type when `vals` is a transform).
template <class K, class VIt, class T, class Op>
long long cub_reduce_by_key(K const* sorted_keys, VIt sorted_vals, long long n, Op op, K* keys_out, T* vals_out) {
  if (n == 0) return 0;
  device_buffer<long long> count(1);
  std::size_t bytes = 0;
  TW_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, sorted_keys, keys_out, sorted_vals, vals_out,
                                               count.get(), op, n));
  device_buffer<unsigned char> temp(bytes);
  TW_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp.get(), bytes, sorted_keys, keys_out, sorted_vals, vals_out,
                                               count.get(), op, n));
  TW_CHECK_LAUNCH();
  return read_one(count.get());
}

template <class K, class T, class Op>
void cub_group_by(K const* keys, T const* vals, long long n, Op op, sorted_rows<K, T>& out) {
  device_buffer<K> sk{std::size_t(n)};
  device_buffer<T> sv{std::size_t(n)};
  cub_sort_pairs(keys, vals, n, sk.get(), sv.get());
  out.count = cub_reduce_by_key(sk.get(), sv.get(), n, op, out.keys.get(), out.values.get());
}

/// Our rows [0, count) sorted by key into `out`.
template <class K, class T>
void sort_rows(K const* keys, T const* vals, long long count, sorted_rows<K, T>& out) {
  out.count = count;
  cub_sort_pairs(keys, vals, count, out.keys.get(), out.values.get());
}

struct abs_double {
  __host__ __device__ double operator()(double x) const { return x < 0 ? -x : x; }
};

template <class T>
__global__ void convert_to_double_kernel(T const* in, double* out, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) out[i] = double(in[i]);
}

/// The float64 reference of a floating-point sum by key: per row (sorted by key) the sum of the
/// key's values in double, and the sum of their magnitudes (the tolerance's scale).
template <class K, class T>
void float64_reference(K const* keys, T const* vals, long long n, std::vector<K>& ref_keys, std::vector<double>& sums,
                       std::vector<double>& mags) {
  ref_keys.clear();
  sums.clear();
  mags.clear();
  if (n == 0) return;
  device_buffer<double> dv{std::size_t(n)}, sdv{std::size_t(n)}, rs{std::size_t(n)}, rm{std::size_t(n)};
  device_buffer<K> sk{std::size_t(n)}, rk{std::size_t(n)};
  convert_to_double_kernel<<<unsigned(std::min<long long>(cuda::ceil_div(n, 256ll), 8192)), 256>>>(vals, dv.get(), n);
  TW_CHECK_LAUNCH();
  cub_sort_pairs(keys, static_cast<double const*>(dv.get()), n, sk.get(), sdv.get());
  long long const c  = cub_reduce_by_key(sk.get(), sdv.get(), n, cuda::std::plus<double>{}, rk.get(), rs.get());
  auto const mag_it  = thrust::make_transform_iterator(sdv.get(), abs_double{});
  long long const c2 = cub_reduce_by_key(sk.get(), mag_it, n, cuda::std::plus<double>{}, rk.get(), rm.get());
  REQUIRE(c == c2);
  ref_keys = rk.download();
  sums     = rs.download();
  mags     = rm.download();
  ref_keys.resize(std::size_t(c));
  sums.resize(std::size_t(c));
  mags.resize(std::size_t(c));
}

}  // namespace tw_test
