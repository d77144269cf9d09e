// Test support for the Thrust-style calls: inputs as device_vectors and as fancy iterators, the
// policy forms every call is checked under, and allocators that count, cache or throw.
#pragma once

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/transform.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <tilewise/detail/thrust/scratch.cuh>

#include "../support/device_data.cuh"

namespace tw_thrust {

/// Small integers in [-4, 4] as a function of the index (floating-point sums stay exact).
template <class T>
struct small_values {
  std::uint64_t seed;
  __host__ __device__ T operator()(std::int64_t i) const {
    return tw_test::make_value<T>(tw_test::mix64(std::uint64_t(i) ^ tw_test::mix64(seed)), tw_test::values::small);
  }
};

/// Pseudo-random values over the whole type (for integer and struct types).
template <class T>
struct any_values {
  std::uint64_t seed;
  __host__ __device__ T operator()(std::int64_t i) const {
    return tw_test::make_value<T>(tw_test::mix64(std::uint64_t(i) ^ tw_test::mix64(seed)), tw_test::values::bits);
  }
};

/// The same values as a fancy iterator (transform of a counting iterator) and as a device_vector.
template <class Gen>
auto fancy(Gen g) {
  return thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), g);
}
template <class T, class Gen>
thrust::device_vector<T> materialize(std::int64_t n, Gen g) {
  thrust::device_vector<T> v(static_cast<std::size_t>(n));
  thrust::transform(thrust::cuda::par, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(n), v.begin(), g);
  return v;
}

/// 0, 1, 2, 1000, 4097, 2^16 + 1, 2^20 + 7, 2^24 + 3, up to 2^TILEWISE_TEST_MAX_LOG2.
inline std::vector<std::int64_t> sizes() {
  std::vector<std::int64_t> s;
  for (std::int64_t n : {0ll, 1ll, 2ll, 1000ll, 4097ll, (1ll << 16) + 1, (1ll << 20) + 7, (1ll << 24) + 3}) {
    if (n <= (1ll << tw_test::max_log2())) s.push_back(n);
  }
  return s;
}

/// Allocation counts of counting_allocator.
struct alloc_counts {
  long long allocations   = 0;
  long long deallocations = 0;
  long long outstanding   = 0;  ///< bytes allocated and not yet returned
};

/// Fills a new block with 0xA5 and waits for it: the memset runs in the default stream, which a
/// call on a non-blocking stream does not wait for, so an unfinished memset could overwrite what
/// the call's kernel writes into the block.
inline bool poisoned(void* p, std::size_t n) {
  return cudaMemset(p, 0xA5, n) == cudaSuccess && cudaStreamSynchronize(nullptr) == cudaSuccess;
}

/// A Thrust allocator (value_type char) over cudaMalloc / cudaFree that counts what it does. Its
/// blocks are poisoned, as the device tests poison their temp storage, so that initcheck's reports
/// on this path would be real reads of unwritten memory.
struct counting_allocator {
  using value_type = char;
  alloc_counts* counts;

  char* allocate(std::size_t n) {
    void* p = nullptr;
    if (cudaMalloc(&p, n) != cudaSuccess || !poisoned(p, n)) throw std::bad_alloc();
    ++counts->allocations;
    counts->outstanding += static_cast<long long>(n);
    return static_cast<char*>(p);
  }
  void deallocate(char* p, std::size_t n) {
    cudaFree(p);
    ++counts->deallocations;
    counts->outstanding -= static_cast<long long>(n);
  }
};

/// A caching allocator: returned blocks are kept and handed out again; counts its cudaMallocs.
/// New blocks are poisoned, as counting_allocator's.
class caching_allocator {
 public:
  using value_type = char;
  caching_allocator()                                    = default;
  caching_allocator(caching_allocator const&)            = delete;
  caching_allocator& operator=(caching_allocator const&) = delete;
  ~caching_allocator() {
    for (auto& [bytes, p] : free_) cudaFree(p);
    for (auto& [p, bytes] : used_) cudaFree(p);
  }

  char* allocate(std::size_t n) {
    auto it = free_.lower_bound(n);
    char* p = nullptr;
    std::size_t bytes = n;
    if (it != free_.end()) {
      p     = it->second;
      bytes = it->first;
      free_.erase(it);
    } else {
      void* q = nullptr;
      if (cudaMalloc(&q, n) != cudaSuccess || !poisoned(q, n)) throw std::bad_alloc();
      p = static_cast<char*>(q);
      ++mallocs;
    }
    used_.emplace(p, bytes);
    return p;
  }
  void deallocate(char* p, std::size_t) {
    auto it = used_.find(p);
    REQUIRE(it != used_.end());
    free_.emplace(it->second, p);
    used_.erase(it);
  }
  std::size_t in_use() const { return used_.size(); }

  int mallocs = 0;  ///< cudaMalloc calls so far

 private:
  std::multimap<std::size_t, char*> free_;
  std::map<char*, std::size_t> used_;
};

/// An allocator that always throws std::bad_alloc, and counts deallocations (there must be none).
struct throwing_allocator {
  using value_type = char;
  int* deallocations;
  char* allocate(std::size_t) { throw std::bad_alloc(); }
  void deallocate(char*, std::size_t) { ++*deallocations; }
};

/// Bytes in use in the pool the Thrust-style calls take scratch from when the policy has no
/// allocator, all threads together.
inline std::uint64_t scratch_pool_in_use() {
  int dev = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  cudaMemPool_t pool = nullptr;
  TW_CUDA_CHECK(tilewise::detail::scratch_pools::get(dev, pool));
  if (pool == nullptr) return 0;
  std::uint64_t used = 0;
  TW_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return used;
}

/// Bytes of scratch the calling thread keeps between its calls on the current device.
inline std::uint64_t scratch_kept() {
  int dev = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  return tilewise::detail::thread_kept::scratch_held(dev);
}

/// Bytes in use in that pool besides the scratch the calling thread keeps (0 once every call's
/// cudaFreeAsync has run, with no other thread holding any).
inline std::uint64_t scratch_pool_used() { return scratch_pool_in_use() - scratch_kept(); }

/// Runs f(policy) under par, par_nosync, par.on(s), par(alloc) and par_nosync(alloc).on(s),
/// synchronizing the device after each, and checks that the allocator forms take their scratch
/// from the allocator (when `uses_scratch`) and return all of it.
template <class F>
void each_policy(cudaStream_t s, bool uses_scratch, F&& f) {
  alloc_counts counts;
  counting_allocator a{&counts};
  auto const run = [&](auto const& policy, char const* name_text, bool with_alloc) {
    std::string const name = name_text;  // doctest prints a char const* as a pointer
    CAPTURE(name);
    long long const before = counts.allocations;
    f(policy);
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(counts.outstanding == 0);
    if (with_alloc && uses_scratch) {
      CHECK(counts.allocations > before);
    }
  };
  run(thrust::cuda::par, "par", false);
  run(thrust::cuda::par_nosync, "par_nosync", false);
  run(thrust::cuda::par.on(s), "par.on(s)", false);
  run(thrust::cuda::par(a), "par(alloc)", true);
  run(thrust::cuda::par_nosync(a).on(s), "par_nosync(alloc).on(s)", true);
  CHECK(counts.allocations == counts.deallocations);
  CHECK(scratch_pool_used() == 0);
}

/// A stream of its own for a test case.
class test_stream {
 public:
  test_stream() { TW_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  test_stream(test_stream const&)            = delete;
  test_stream& operator=(test_stream const&) = delete;
  ~test_stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

/// Number of positions where two device ranges of n elements differ bitwise.
template <class T>
unsigned long long differences(thrust::device_vector<T> const& a, thrust::device_vector<T> const& b) {
  REQUIRE(a.size() == b.size());
  return tw_test::compare_bits(thrust::raw_pointer_cast(a.data()), thrust::raw_pointer_cast(b.data()),
                               static_cast<long long>(a.size()))
    .count;
}

}  // namespace tw_thrust
