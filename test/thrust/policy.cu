// What the Thrust-style calls promise beyond their results: par finishes before returning and
// par_nosync does not (not even to allocate), reduce waits for its value under every policy;
// par(alloc) takes all scratch from the allocator and returns it, a caching allocator makes
// repeated calls allocation-free, an allocator that throws std::bad_alloc makes the call throw it
// with nothing leaked; calls that wait keep their thread's scratch for its next call; invalid
// arguments throw std::invalid_argument naming the argument, CUDA errors thrust::system_error.
#include <thrust/copy.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>

#include <cuda/std/functional>

#include <stdexcept>
#include <string>
#include <thread>

#include <tilewise/thrust.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace policy_test {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Spins until *release is set (or `timeout_ns` passed: then sets *gave_up).
__global__ void hold_kernel(int const volatile* release, int* gave_up, unsigned long long timeout_ns) {
  unsigned long long const t0 = global_ns();
  while (*release == 0) {
    if (global_ns() - t0 > timeout_ns) {
      *gave_up = 1;
      return;
    }
    __nanosleep(1000);
  }
}

/// Busy for `ns` nanoseconds.
__global__ void sleep_kernel(unsigned long long ns) {
  unsigned long long const t0 = global_ns();
  while (global_ns() - t0 < ns) __nanosleep(1000);
}

/// A host-mapped release flag and time-out flag for hold_kernel.
class hold {
 public:
  hold() {
    TW_CUDA_CHECK(cudaHostAlloc(&flags_, 2 * sizeof(int), cudaHostAllocMapped));
    TW_CUDA_CHECK(cudaHostGetDevicePointer(&d_flags_, flags_, 0));
  }
  hold(hold const&)            = delete;
  hold& operator=(hold const&) = delete;
  ~hold() { cudaFreeHost(flags_); }

  void start(cudaStream_t s) {
    __atomic_store_n(&flags_[0], 0, __ATOMIC_SEQ_CST);
    flags_[1] = 0;
    hold_kernel<<<1, 1, 0, s>>>(d_flags_, d_flags_ + 1, 10'000'000'000ull);
    TW_CUDA_CHECK(cudaGetLastError());
  }
  void release() { __atomic_store_n(&flags_[0], 1, __ATOMIC_SEQ_CST); }
  bool gave_up() const { return __atomic_load_n(&flags_[1], __ATOMIC_SEQ_CST) != 0; }

 private:
  int* flags_   = nullptr;
  int* d_flags_ = nullptr;
};

template <class T>
thrust::device_vector<T> filled(std::int64_t n, T value) {
  return thrust::device_vector<T>(static_cast<std::size_t>(n), value);
}

}  // namespace policy_test

using namespace policy_test;

TEST_CASE("par_nosync: the scans return with their kernels still queued (no synchronizing allocation)") {
  test_stream stream;
  cudaStream_t const s = stream.get();
  std::int64_t const n = std::min<std::int64_t>(1ll << 20, 1ll << tw_test::max_log2());
  auto const v         = materialize<int>(n, small_values<int>{5});
  auto inc = filled(n, -1), exc = filled(n, -1);
  thrust::inclusive_scan(thrust::cuda::par, v.begin(), v.end(), inc.begin());
  thrust::exclusive_scan(thrust::cuda::par, v.begin(), v.end(), exc.begin(), 1);
  caching_allocator cache;
  {  // warm the cache and the scratch pool (created on first use): then calls of this size allocate nothing
    auto a = filled(n, 0);
    tilewise::inclusive_scan(thrust::cuda::par(cache).on(s), v.begin(), v.end(), a.begin());
    tilewise::inclusive_scan(thrust::cuda::par_nosync.on(s), v.begin(), v.end(), a.begin());
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  int const mallocs = cache.mallocs;
  hold h;
  auto const run = [&](auto const& p, char const* name_text) {
    std::string const name = name_text;  // doctest prints a char const* as a pointer
    CAPTURE(name);
    auto a = filled(n, 0), b = filled(n, 0);
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    h.start(s);
    tilewise::inclusive_scan(p, v.begin(), v.end(), a.begin());
    tilewise::exclusive_scan(p, v.begin(), v.end(), b.begin(), 1, cuda::std::plus<>{});
    cudaError_t const busy = cudaStreamQuery(s);
    h.release();
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
    CHECK(busy == cudaErrorNotReady);  // the calls returned while the stream was held
    if (!tw_test::sanitizer_run()) {
      CHECK_FALSE(h.gave_up());  // ... and the hold lasted until the host released it
    } else if (h.gave_up()) {
      MESSAGE("the hold timed out: compute-sanitizer serialized the launches behind it (racecheck "
              "does); the plain CTest run checks that the calls return while it holds");
    }
    CHECK(differences(a, inc) == 0);
    CHECK(differences(b, exc) == 0);
  };
  run(thrust::cuda::par_nosync.on(s), "par_nosync.on(s)");
  run(thrust::cuda::par_nosync(cache).on(s), "par_nosync(caching allocator).on(s)");
  CHECK(cache.mallocs == mallocs);
  CHECK(scratch_pool_used() == 0);
}

TEST_CASE("par: finished on return; reduce waits for its value under par_nosync too") {
  test_stream stream;
  cudaStream_t const s = stream.get();
  std::int64_t const n = std::min<std::int64_t>((1ll << 20) + 3, 1ll << tw_test::max_log2());
  auto const v         = materialize<int>(n, small_values<int>{9});
  auto inc             = filled(n, -1);
  thrust::inclusive_scan(thrust::cuda::par, v.begin(), v.end(), inc.begin());
  int const sum = thrust::reduce(thrust::cuda::par, v.begin(), v.end());

  auto a = filled(n, 0);
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  sleep_kernel<<<1, 1, 0, s>>>(20'000'000);  // 20 ms queued ahead of the call
  TW_CUDA_CHECK(cudaGetLastError());
  tilewise::inclusive_scan(thrust::cuda::par.on(s), v.begin(), v.end(), a.begin());
  CHECK(cudaStreamQuery(s) == cudaSuccess);
  CHECK(differences(a, inc) == 0);

  for (int form = 0; form < 2; ++form) {
    CAPTURE(form);
    sleep_kernel<<<1, 1, 0, s>>>(20'000'000);
    TW_CUDA_CHECK(cudaGetLastError());
    int const r = form == 0 ? tilewise::reduce(thrust::cuda::par_nosync.on(s), v.begin(), v.end())
                            : tilewise::reduce(thrust::cuda::par.on(s), v.begin(), v.end());
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(r == sum);
  }
}

TEST_CASE("calls that wait keep their thread's scratch: reused on any stream, grown in turn, freed with the thread") {
  test_stream one, two;
  std::int64_t const small = std::min<std::int64_t>(1000, 1ll << tw_test::max_log2());
  std::int64_t const large = std::min<std::int64_t>((1ll << 24) + 5, 1ll << tw_test::max_log2());
  auto const v             = materialize<int>(large, small_values<int>{4});
  auto inc                 = filled(large, 0);
  thrust::inclusive_scan(thrust::cuda::par, v.begin(), v.end(), inc.begin());
  int const sum_small = thrust::reduce(thrust::cuda::par, v.begin(), v.begin() + small);
  int const sum_large = thrust::reduce(thrust::cuda::par, v.begin(), v.end());

  CHECK(tilewise::reduce(thrust::cuda::par.on(one.get()), v.begin(), v.begin() + small) == sum_small);
  std::uint64_t const kept = scratch_kept();
  std::uint64_t const used = scratch_pool_in_use();
  CHECK(kept > 0);
  CHECK(used >= kept);  // taken from the pool
  CHECK(tilewise::reduce(thrust::cuda::par.on(two.get()), v.begin(), v.begin() + small) == sum_small);
  CHECK(scratch_kept() == kept);         // the same scratch on the other stream ...
  CHECK(scratch_pool_in_use() == used);  // ... and nothing else taken or left in use
  for (int rep = 0; rep < 4; ++rep) {    // alternating streams and sizes, results exact
    CAPTURE(rep);
    auto a = filled(large, -1);
    CHECK(tilewise::reduce(thrust::cuda::par_nosync.on(two.get()), v.begin(), v.end()) == sum_large);
    tilewise::inclusive_scan(thrust::cuda::par.on(rep % 2 ? one.get() : two.get()), v.begin(), v.end(), a.begin());
    CHECK(differences(a, inc) == 0);
    CHECK(tilewise::reduce(thrust::cuda::par.on(one.get()), v.begin(), v.begin() + small) == sum_small);
  }
  std::uint64_t const grown = scratch_kept();
  std::uint64_t const after = scratch_pool_in_use();
  CHECK(grown >= kept);
  CHECK(after - used == grown - kept);  // what grew is the kept scratch alone

  int device = 0;  // another thread keeps its own, and frees it when it ends
  TW_CUDA_CHECK(cudaGetDevice(&device));
  cudaError_t in_thread_status = cudaErrorUnknown;
  std::size_t in_thread        = 0;
  int in_thread_sum            = 0;
  std::thread t([&] {  // no doctest assertions off the main thread: results are checked after join
    in_thread_status = cudaSetDevice(device);
    if (in_thread_status != cudaSuccess) return;
    in_thread_sum = tilewise::reduce(thrust::cuda::par.on(two.get()), v.begin(), v.end());
    in_thread     = tilewise::detail::thread_kept::scratch_held(device);
  });
  t.join();
  CHECK(in_thread_status == cudaSuccess);
  CHECK(in_thread_sum == sum_large);
  CHECK(in_thread > 0);
  CHECK(scratch_kept() == grown);
  CHECK(scratch_pool_in_use() == after);
}

TEST_CASE("par(alloc): a caching allocator makes repeated calls allocation-free, and gets everything back") {
  test_stream stream;
  cudaStream_t const s = stream.get();
  std::int64_t const n = std::min<std::int64_t>((1ll << 22) + 1, 1ll << tw_test::max_log2());
  auto const v         = materialize<float>(n, small_values<float>{2});
  float const sum      = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), 1.0f);
  auto inc = filled(n, 0.0f), exc = filled(n, 0.0f);
  thrust::inclusive_scan(thrust::cuda::par, v.begin(), v.end(), inc.begin());
  thrust::exclusive_scan(thrust::cuda::par, v.begin(), v.end(), exc.begin(), 2.0f);
  caching_allocator cache;
  int mallocs = 0;
  for (int rep = 0; rep < 10; ++rep) {
    CAPTURE(rep);
    auto a = filled(n, 0.0f), b = filled(n, 0.0f);
    CHECK(tilewise::reduce(thrust::cuda::par(cache).on(s), v.begin(), v.end(), 1.0f) == sum);
    tilewise::inclusive_scan(thrust::cuda::par(cache).on(s), v.begin(), v.end(), a.begin());
    tilewise::exclusive_scan(thrust::cuda::par_nosync(cache).on(s), v.begin(), v.end(), b.begin(), 2.0f);
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
    CHECK(differences(a, inc) == 0);
    CHECK(differences(b, exc) == 0);
    CHECK(cache.in_use() == 0);
    if (rep == 0) {
      mallocs = cache.mallocs;
      CHECK(mallocs >= 1);
    }
  }
  CHECK(cache.mallocs == mallocs);
  CHECK(scratch_pool_used() == 0);
}

TEST_CASE("an allocator that throws std::bad_alloc: every call throws it, writes nothing, leaks nothing") {
  test_stream stream;
  int deallocations = 0;
  throwing_allocator bad{&deallocations};
  auto const v = materialize<int>(1000, small_values<int>{3});
  auto out     = filled<int>(1000, 77);
  auto const untouched = filled<int>(1000, 77);
  auto const forms     = [&](auto const& p) {
    CHECK_THROWS_AS(tilewise::reduce(p, v.begin(), v.end()), std::bad_alloc);
    CHECK_THROWS_AS(tilewise::inclusive_scan(p, v.begin(), v.end(), out.begin()), std::bad_alloc);
    CHECK_THROWS_AS(tilewise::inclusive_scan(p, v.begin(), v.end(), out.begin(), 1, cuda::std::plus<>{}),
                    std::bad_alloc);
    CHECK_THROWS_AS(tilewise::exclusive_scan(p, v.begin(), v.end(), out.begin(), 4), std::bad_alloc);
  };
  forms(thrust::cuda::par(bad));
  forms(thrust::cuda::par_nosync(bad).on(stream.get()));
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(deallocations == 0);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(differences(out, untouched) == 0);
  CHECK(scratch_pool_used() == 0);
}

TEST_CASE("invalid arguments: std::invalid_argument naming the argument") {
  using thrust::cuda::par;
  auto v = filled<int>(10, 1);
  auto o = filled<int>(10, 0);
  thrust::device_ptr<int> const null(static_cast<int*>(nullptr));
  auto const plus = cuda::std::plus<>{};
  using E         = std::invalid_argument;

  CHECK_THROWS_WITH_AS(tilewise::reduce(par, v.end(), v.begin()), "tilewise::reduce: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::reduce(par, v.end(), v.begin(), 0), "tilewise::reduce: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::reduce(par, v.end(), v.begin(), 0, plus), "tilewise::reduce: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, v.end(), v.begin(), o.begin()),
                       "tilewise::inclusive_scan: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, v.end(), v.begin(), o.begin(), plus),
                       "tilewise::inclusive_scan: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, v.end(), v.begin(), o.begin(), 0, plus),
                       "tilewise::inclusive_scan: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::exclusive_scan(par, v.end(), v.begin(), o.begin()),
                       "tilewise::exclusive_scan: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::exclusive_scan(par, v.end(), v.begin(), o.begin(), 0),
                       "tilewise::exclusive_scan: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::exclusive_scan(par, v.end(), v.begin(), o.begin(), 0, plus),
                       "tilewise::exclusive_scan: last < first", E);

  CHECK_THROWS_WITH_AS(tilewise::reduce(par, null, null + 4), "tilewise::reduce: first is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, null, null + 4, o.begin()),
                       "tilewise::inclusive_scan: first is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, v.begin(), v.end(), null),
                       "tilewise::inclusive_scan: result is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::inclusive_scan(par, v.begin(), v.end(), null, 0, plus),
                       "tilewise::inclusive_scan: result is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::exclusive_scan(par, null, null + 4, o.begin()),
                       "tilewise::exclusive_scan: first is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::exclusive_scan(par, v.begin(), v.end(), null, 0),
                       "tilewise::exclusive_scan: result is a null pointer", E);

  // Empty ranges are valid whatever the pointers: reduce returns init, the scans write nothing.
  CHECK(tilewise::reduce(par, null, null, 5) == 5);
  CHECK(tilewise::inclusive_scan(par, null, null, null) == null);
  CHECK(tilewise::exclusive_scan(par, null, null, null, 1) == null);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("CUDA errors: thrust::system_error in the CUDA category, naming the call; the error state is cleared") {
  // 2^50 elements are more tiles than a grid can have: the device call fails, the wrapper throws.
  auto const first = thrust::counting_iterator<std::int64_t>(0);
  auto const last  = first + (1ll << 50);
  auto const check = [](auto&& call, std::string const& name) {
    CAPTURE(name);
    bool thrown = false;
    try {
      call();
    } catch (thrust::system_error const& e) {
      thrown = true;
      CHECK(std::string(e.what()).rfind(name + ":", 0) == 0);
      CHECK(e.code().category() == thrust::cuda_category());
      CHECK(e.code().value() != cudaSuccess);
    }
    CHECK(thrown);
    CHECK(cudaGetLastError() == cudaSuccess);
  };
  check([&] { tilewise::exclusive_scan(thrust::cuda::par, first, last, thrust::make_discard_iterator()); },
        "tilewise::exclusive_scan");
  check([&] { tilewise::inclusive_scan(thrust::cuda::par_nosync, first, last, thrust::make_discard_iterator()); },
        "tilewise::inclusive_scan");
  CHECK(scratch_pool_used() == 0);
}
