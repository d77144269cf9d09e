// device::reduce against cub::DeviceReduce::Reduce on the same inputs: integers bit for bit on
// every size (0, 1, 2, 31, 33, 1023, 1025, 2^k +- 1 up to 2^28), aligned and offset by one
// element; floating point exactly on integer-valued inputs and within a tolerance of a float64
// reference on random ones; bitwise run-to-run determinism; Thrust iterators; an operator without
// a known identity; a struct; more than 2^31 int8 elements reduced into int64; two streams at
// once; a captured graph launched on new input; temp storage at any address; bad arguments.
#include <cub/device/device_reduce.cuh>

#include <thrust/device_ptr.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/device/reduce.cuh>

#include "../support/device_data.cuh"

using namespace tw_test;

namespace {

/// tilewise::device::reduce into a poisoned result, with poisoned temp storage that starts
/// `temp_shift` bytes into its allocation.
template <class In, class Op, class Acc>
Acc ours(In in, long long n, Op op, Acc init, std::size_t temp_shift = 0) {
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::reduce(nullptr, bytes, in, static_cast<Acc*>(nullptr), n, op, init) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes + temp_shift);
  temp.poison();
  device_buffer<Acc> out(1);
  out.poison();
  REQUIRE(tilewise::device::reduce(temp.get() + temp_shift, bytes, in, out.get(), n, op, init) == cudaSuccess);
  TW_CHECK_LAUNCH();
  return read_one(out.get());
}

template <class In, class Op, class Acc>
Acc cub_reduce(In in, long long n, Op op, Acc init) {
  device_buffer<Acc> out(1);
  out.poison();
  std::size_t bytes = 0;
  TW_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out.get(), n, op, init));
  device_buffer<unsigned char> temp(bytes);
  TW_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.get(), bytes, in, out.get(), n, op, init));
  TW_CHECK_LAUNCH();
  return read_one(out.get());
}

/// float64 sum and sum of magnitudes of p[0, n) (the reference of floating-point sums).
struct to_double {
  template <class T>
  __host__ __device__ double operator()(T x) const { return double(x); }
};
struct abs_double {
  template <class T>
  __host__ __device__ double operator()(T x) const { return x < T(0) ? -double(x) : double(x); }
};

/// Every size, aligned and offset by one element, `seeds` seeds for sizes up to 2^16 (one above).
template <class T, class Op>
void check_exact(Op op, values how, T init) {
  auto const sizes = test_sizes();
  device_buffer<T> in(std::size_t(sizes.back()) + 1);
  for (long long n : sizes) {
    int const rounds = n <= (1 << 16) ? seeds(4) : 1;
    for (int s = 0; s < rounds; ++s) {
      fill(in.get(), n + 1, 1000 * n + s, how);
      for (int offset : {0, 1}) {
        CAPTURE(n);
        CAPTURE(offset);
        CAPTURE(s);
        T const a = ours(in.get() + offset, n, op, init);
        T const b = cub_reduce(in.get() + offset, n, op, init);
        CHECK(same_bits(a, b));
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("device::reduce: integers, plus, vs CUB bit for bit", T, std::int8_t, std::int32_t, std::int64_t,
                   std::uint64_t) {
  check_exact<T>(cuda::std::plus<>{}, values::bits, T(7));
}

TEST_CASE_TEMPLATE("device::reduce: int32 min / max / bit_xor vs CUB", T, std::int32_t, std::uint64_t) {
  check_exact<T>(cuda::minimum<>{}, values::bits, std::numeric_limits<T>::max());
  check_exact<T>(cuda::maximum<>{}, values::bits, std::numeric_limits<T>::lowest());
  check_exact<T>(cuda::std::bit_xor<>{}, values::bits, T(0));
}

TEST_CASE("device::reduce: an operator without a known identity (user_plus) vs CUB") {
  check_exact<std::int32_t>(user_plus{}, values::bits, 3);
}

TEST_CASE_TEMPLATE("device::reduce: integer-valued floating point sums are exact", T, float, double) {
  check_exact<T>(cuda::std::plus<>{}, values::small, T(2));
}

TEST_CASE_TEMPLATE("device::reduce: random floating point within tolerance of float64", T, float, double) {
  auto const sizes = test_sizes();
  device_buffer<T> in(std::size_t(sizes.back()) + 1);
  for (long long n : sizes) {
    fill(in.get(), n + 1, 77 + n, values::bits);
    for (int offset : {0, 1}) {
      CAPTURE(n);
      CAPTURE(offset);
      T const* p        = in.get() + offset;
      double const ref  = cub_reduce(thrust::make_transform_iterator(p, to_double{}), n, cuda::std::plus<>{}, 0.0);
      double const mag  = cub_reduce(thrust::make_transform_iterator(p, abs_double{}), n, cuda::std::plus<>{}, 0.0);
      T const a         = ours(p, n, cuda::std::plus<>{}, T(0));
      T const b         = cub_reduce(p, n, cuda::std::plus<>{}, T(0));
      double const tol  = 1e-5 * mag + 1e-30;  // float: ~170 epsilons of the magnitude sum
      double const dtol = std::is_same_v<T, float> ? tol : 1e-13 * mag + 1e-300;
      CHECK(std::fabs(double(a) - ref) <= dtol);
      CHECK(std::fabs(double(b) - ref) <= dtol);  // the tolerance holds for CUB too
    }
  }
}

TEST_CASE_TEMPLATE("device::reduce: 50 runs are bitwise identical", T, float, double) {
  long long const n = std::min(1ll << max_log2(), (1ll << 24) + 3);
  device_buffer<T> in(std::size_t(n) + 1);
  fill(in.get(), n + 1, 5, values::bits);
  for (int offset : {0, 1}) {
    T const first = ours(in.get() + offset, n, cuda::std::plus<>{}, T(0));
    int differing = 0;
    for (int r = 1; r < 50; ++r) {
      differing += !same_bits(ours(in.get() + offset, n, cuda::std::plus<>{}, T(0)), first);
    }
    CHECK(differing == 0);
  }
}

// At namespace scope (not anonymous): kernels taking it keep external linkage.
struct square_mod {
  __host__ __device__ long long operator()(long long i) const { return (i * i) % 1000003; }
};

TEST_CASE_TEMPLATE("device::reduce: temp storage at any address, as CUB accepts", T, std::int32_t, std::int64_t,
                   double) {
  // int32 records are 8-byte words, int64 and double ones 16-byte words: both need alignment.
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 3);
  device_buffer<T> in{std::size_t(n)};
  fill(in.get(), n, 78, values::small);
  T const ref = cub_reduce(in.get(), n, cuda::std::plus<>{}, T(2));
  for (std::size_t shift : {1, 8, 200}) {
    CAPTURE(shift);
    CHECK(ours(in.get(), n, cuda::std::plus<>{}, T(2), shift) == ref);
  }
}

TEST_CASE("device::reduce: Thrust iterators (counting, transform, device_ptr)") {
  for (long long n : {1ll, 1000ll, (1ll << 20) + 7, (1ll << 22) + 1}) {
    CAPTURE(n);
    thrust::counting_iterator<long long> first(5);
    long long const expected = 3 + n * 5 + n * (n - 1) / 2;  // closed form of 3 + sum(5 .. 5 + n - 1)
    CHECK(ours(first, n, cuda::std::plus<>{}, 3ll) == expected);
    auto sq = thrust::make_transform_iterator(first, square_mod{});
    CHECK(ours(sq, n, cuda::std::plus<>{}, 0ll) == cub_reduce(sq, n, cuda::std::plus<>{}, 0ll));
    device_buffer<std::int32_t> in{std::size_t(n)};
    fill(in.get(), n, 9);
    thrust::device_ptr<std::int32_t> dp(in.get());  // goes in as the raw pointer: vector loads when aligned
    CHECK(ours(dp, n, cuda::maximum<>{}, std::numeric_limits<std::int32_t>::lowest()) ==
          cub_reduce(in.get(), n, cuda::maximum<>{}, std::numeric_limits<std::int32_t>::lowest()));
    CHECK(ours(dp + 1, n - 1, cuda::std::plus<>{}, 7) == cub_reduce(in.get() + 1, n - 1, cuda::std::plus<>{}, 7));
  }
}

TEST_CASE("device::reduce: a 12-byte struct (s12) vs CUB") {
  for (long long n : {1ll, 33ll, 4097ll, (1ll << 20) + 1}) {
    CAPTURE(n);
    std::vector<s12> h{std::size_t(n)};
    std::mt19937_64 rng(n);
    for (auto& x : h) x = random_value(rng, tag<s12>{});
    device_buffer<s12> in(h);
    s12 const init{1, 2, 3};
    CHECK(ours(in.get(), n, s12_plus{}, init) == cub_reduce(in.get(), n, s12_plus{}, init));
  }
}

TEST_CASE("device::reduce: more than 2^31 int8 elements into int64") {
  if (!above_2_31()) {
    MESSAGE("skipped: TILEWISE_TEST_MAX_LOG2 < 31 (the sanitizer runs); the plain CTest run covers it");
    return;
  }
  long long const n = (1ll << 31) + (1ll << 20) + 3;
  device_buffer<std::int8_t> in(std::size_t(n) + 1);
  SUBCASE("random values, vs CUB") {  // > 2^31 indices; the sum itself stays near 0
    fill(in.get(), n + 1, 31);
    for (int offset : {0, 1}) {
      CAPTURE(offset);
      std::int64_t const a = ours(in.get() + offset, n, cuda::std::plus<>{}, std::int64_t(-5));
      std::int64_t const b = cub_reduce(in.get() + offset, n, cuda::std::plus<>{}, std::int64_t(-5));
      CHECK(a == b);
    }
  }
  SUBCASE("every value 100: a sum far above 2^32, vs the closed form and CUB") {
    TW_CUDA_CHECK(cudaMemset(in.get(), 100, std::size_t(n) + 1));
    for (int offset : {0, 1}) {
      CAPTURE(offset);
      std::int64_t const a = ours(in.get() + offset, n, cuda::std::plus<>{}, std::int64_t(-5));
      CHECK(a == 100 * n - 5);  // 214,853,222,695: wraps in any 32-bit accumulator
      CHECK(a == cub_reduce(in.get() + offset, n, cuda::std::plus<>{}, std::int64_t(-5)));
    }
  }
}

TEST_CASE("device::reduce: two streams at once with separate temp storage") {
  long long const n = std::min(1ll << max_log2(), 1ll << 26);
  device_buffer<std::int64_t> a{std::size_t(n)}, b{std::size_t(n)};
  fill(a.get(), n, 1);
  fill(b.get(), n, 2);
  cudaStream_t s[2];
  for (auto& x : s) TW_CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::reduce(nullptr, bytes, a.get(), static_cast<std::int64_t*>(nullptr), n,
                                   cuda::std::plus<>{}, std::int64_t(0)) == cudaSuccess);
  device_buffer<unsigned char> ta(bytes), tb(bytes);
  ta.poison();  // any contents will do; written, so compute-sanitizer initcheck sees defined bytes
  tb.poison();
  device_buffer<std::int64_t> out(2);
  out.poison();
  // The memsets above run on the legacy default stream, which non-blocking streams do not wait
  // for: one landing after a block published its record would erase it, and the last block would wait
  // for ever.
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < 8; ++rep) {
    REQUIRE(tilewise::device::reduce(ta.get(), bytes, a.get(), out.get(), n, cuda::std::plus<>{}, std::int64_t(0),
                                     s[0]) == cudaSuccess);
    REQUIRE(tilewise::device::reduce(tb.get(), bytes, b.get(), out.get() + 1, n, cuda::std::plus<>{},
                                     std::int64_t(0), s[1]) == cudaSuccess);
  }
  for (auto& x : s) TW_CUDA_CHECK(cudaStreamSynchronize(x));
  TW_CHECK_LAUNCH();
  auto const h = out.download();
  CHECK(h[0] == cub_reduce(a.get(), n, cuda::std::plus<>{}, std::int64_t(0)));
  CHECK(h[1] == cub_reduce(b.get(), n, cuda::std::plus<>{}, std::int64_t(0)));
  for (auto& x : s) TW_CUDA_CHECK(cudaStreamDestroy(x));
}

TEST_CASE_TEMPLATE("device::reduce: captured in a graph, launched three times on new input", T, std::int32_t, double) {
  // A graph repeats its kernel's arguments, the launch epoch included: a captured call clears its
  // records first, so no launch can take the previous one's block values for its own.
  long long const n = std::min(1ll << max_log2(), (1ll << 24) + 3);
  device_buffer<T> in{std::size_t(n)};
  device_buffer<T> out(1);
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::reduce(nullptr, bytes, in.get(), out.get(), n, cuda::std::plus<>{}, T(1)) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  TW_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  TW_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  REQUIRE(tilewise::device::reduce(temp.get(), bytes, in.get(), out.get(), n, cuda::std::plus<>{}, T(1), s) ==
          cudaSuccess);
  TW_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  TW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 3; ++launch) {
    CAPTURE(launch);
    fill(in.get(), n, 700 + launch, values::small);  // integer-valued: every order gives the same sum
    out.poison();
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    TW_CUDA_CHECK(cudaGraphLaunch(exec, s));
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
    TW_CHECK_LAUNCH();
    CHECK(read_one(out.get()) == cub_reduce(in.get(), n, cuda::std::plus<>{}, T(1)));
  }
  TW_CUDA_CHECK(cudaGraphExecDestroy(exec));
  TW_CUDA_CHECK(cudaGraphDestroy(graph));
  TW_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_CASE("device::reduce: num_items == 0 writes init; bad arguments give cudaErrorInvalidValue") {
  device_buffer<int> in(16), out(1);
  fill(in.get(), 16, 3);
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::reduce(nullptr, bytes, in.get(), out.get(), 16, cuda::std::plus<>{}, 0) == cudaSuccess);
  CHECK(bytes > 0);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  auto const plus = cuda::std::plus<>{};

  out.poison();
  std::size_t b0 = 0;
  REQUIRE(tilewise::device::reduce(nullptr, b0, in.get(), out.get(), 0, plus, 42) == cudaSuccess);
  device_buffer<unsigned char> temp0(b0);
  temp0.poison();
  CHECK(tilewise::device::reduce(temp0.get(), b0, in.get(), out.get(), 0, plus, 42) == cudaSuccess);
  TW_CHECK_LAUNCH();
  CHECK(read_one(out.get()) == 42);
  CHECK(tilewise::device::reduce(temp0.get(), b0, static_cast<int*>(nullptr), out.get(), 0, plus, 43) ==
        cudaSuccess);  // no elements: the input is never read
  TW_CHECK_LAUNCH();
  CHECK(read_one(out.get()) == 43);

  out.poison();
  CHECK(tilewise::device::reduce(temp.get(), bytes, static_cast<int*>(nullptr), out.get(), 16, plus, 0) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::device::reduce(temp.get(), bytes, in.get(), static_cast<int*>(nullptr), 16, plus, 0) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::device::reduce(temp.get(), bytes, thrust::device_ptr<int>(), out.get(), 16, plus, 0) ==
        cudaErrorInvalidValue);  // a null device_ptr is a null pointer too
  CHECK(tilewise::device::reduce(temp.get(), bytes, in.get(), thrust::device_ptr<int>(), 16, plus, 0) ==
        cudaErrorInvalidValue);
  std::size_t small = bytes - 1;
  CHECK(tilewise::device::reduce(temp.get(), small, in.get(), out.get(), 16, plus, 0) == cudaErrorInvalidValue);
  CHECK(tilewise::device::reduce(temp.get(), bytes, in.get(), out.get(), -1, plus, 0) == cudaErrorInvalidValue);
  TW_CHECK_LAUNCH();
  int poisoned;
  std::memset(&poisoned, 0xA5, sizeof poisoned);
  CHECK(read_one(out.get()) == poisoned);  // nothing was launched
}
