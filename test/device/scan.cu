// device::inclusive_scan / exclusive_scan against cub::DeviceScan on the same inputs, bit for bit:
// every size (0, 1, 2, 31, 33, 1023, 1025, 2^k +- 1 up to 2^28), input and output offset by one
// element, int8 / int16 / int32 / int64 / uint64, inputs of another type than the scan's (uint8 ->
// int32, int8 -> int64, int16 -> int32, int32 -> int64, float -> double, int64 -> int32, long ->
// long long, uint32 -> int32), outputs of another type (int32 -> int64, int32 -> int16, int8 ->
// int16, float -> double, int64 -> int32), integer-valued float and double (exact sums), 8- and
// 16-byte non-commutative operators (affine maps, 2x2 matrix product), operators without a known
// identity (4 and 8 bytes), repeated launches on 8-byte records, in-place scans, Thrust iterators
// and device_ptr in and out, more than 2^31 elements, two streams at once, temp storage at any
// address, bad arguments.
// Outputs are poisoned first and compared one element past the end, so a stray write shows.
#include <cub/device/device_scan.cuh>

#include <thrust/device_ptr.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/device/scan.cuh>

#include "../support/device_data.cuh"

using namespace tw_test;

namespace {

enum class kind { inclusive, exclusive };

/// Our scan of in[0, n) into out, with poisoned temp storage that starts `temp_shift` bytes into
/// its allocation; `init` only for exclusive scans.
template <class In, class Out, class Op, class T>
void ours(kind k, In in, Out out, long long n, Op op, T init, std::size_t temp_shift = 0) {
  std::size_t bytes = 0;
  if (k == kind::inclusive) {
    REQUIRE(tilewise::device::inclusive_scan(nullptr, bytes, in, out, n, op) == cudaSuccess);
  } else {
    REQUIRE(tilewise::device::exclusive_scan(nullptr, bytes, in, out, n, op, init) == cudaSuccess);
  }
  device_buffer<unsigned char> temp(bytes + temp_shift);
  temp.poison();
  void* const t = temp.get() + temp_shift;
  if (k == kind::inclusive) {
    REQUIRE(tilewise::device::inclusive_scan(t, bytes, in, out, n, op) == cudaSuccess);
  } else {
    REQUIRE(tilewise::device::exclusive_scan(t, bytes, in, out, n, op, init) == cudaSuccess);
  }
  TW_CHECK_LAUNCH();
}

template <class In, class Out, class Op, class T>
void cub_scan(kind k, In in, Out out, long long n, Op op, T init) {
  std::size_t bytes = 0;
  if (k == kind::inclusive) {
    TW_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, op, n));
  } else {
    TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, bytes, in, out, op, init, n));
  }
  device_buffer<unsigned char> temp(bytes);
  if (k == kind::inclusive) {
    TW_CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp.get(), bytes, in, out, op, n));
  } else {
    TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.get(), bytes, in, out, op, init, n));
  }
  TW_CHECK_LAUNCH();
}

/// Both scans, every size, offsets 0 and 1, poisoned outputs compared through index n.
template <class T, class Op>
void check_exact(Op op, values how, T init) {
  auto const sizes     = test_sizes();
  std::size_t const mx = std::size_t(sizes.back()) + 2;
  device_buffer<T> in(mx), a(mx), b(mx);
  for (long long n : sizes) {
    int const rounds = n <= (1 << 16) ? seeds(3) : 1;
    for (int s = 0; s < rounds; ++s) {
      fill(in.get(), n + 1, 1000 * n + s, how);
      for (kind k : {kind::inclusive, kind::exclusive}) {
        for (int offset : {0, 1}) {
          CAPTURE(n);
          CAPTURE(offset);
          CAPTURE(s);
          CAPTURE(k == kind::inclusive ? "inclusive" : "exclusive");
          poison(a.get(), n + 2);
          poison(b.get(), n + 2);
          ours(k, in.get() + offset, a.get() + offset, n, op, init);
          cub_scan(k, in.get() + offset, b.get() + offset, n, op, init);
          mismatch const m = compare_bits(a.get(), b.get(), n + 2);
          CHECK(m.count == 0);
          if (m.count) MESSAGE("first difference at index " << m.first);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("device scans: integers, plus, vs CUB bit for bit", T, std::int8_t, std::int16_t, std::int32_t,
                   std::int64_t, std::uint64_t) {
  check_exact<T>(cuda::std::plus<>{}, values::bits, T(-3));
}

/// An input type U, the scan's type T (that of init), the output type O and the operator of a
/// converting exclusive scan.
template <class U, class T, class O = T, class Op = cuda::std::plus<>>
struct converting {
  using in_t   = U;
  using scan_t = T;
  using out_t  = O;
  using op_t   = Op;
};

TEST_CASE_TEMPLATE("device scans: input and output types other than the scan's (exclusive), vs CUB bit for bit", P,
                   converting<std::uint8_t, std::int32_t>, converting<std::int8_t, std::int64_t>,
                   converting<std::int16_t, std::int32_t>, converting<std::int32_t, std::int64_t>,
                   converting<float, double>, converting<std::int64_t, std::int32_t>,
                   converting<std::int32_t, std::int32_t, std::int64_t>,
                   converting<std::uint8_t, std::int32_t, std::int16_t>, converting<float, float, double>,
                   converting<std::int64_t, std::int64_t, std::int32_t>, converting<std::int64_t, long long>,
                   converting<std::uint32_t, std::int32_t>,
                   converting<std::int8_t, std::int8_t, std::int16_t, user_plus>) {
  // uint8 flags into int32 offsets is the stream-compaction idiom. Aligned whole segments load
  // as 16-byte vectors of the input type, converted on the way into the stage; 1- and 2-byte
  // outputs store as 16-byte vectors of the output type, converted on the way out (int32 and int8
  // into int16: whole slots and half slots), wider ones element by element, as do offset 1 and
  // partial tiles. int64 into int32 narrows (one element per slot), as do the int16 and int32
  // outputs. int64_t (long) into long long and uint32 into int32 keep their bits: they take the
  // `cp.async` path of same-type inputs. The int8 scan takes user_plus, which returns int8, so
  // CUB also sums in int8 (with plus<> it would sum in int).
  using U = typename P::in_t;
  using T = typename P::scan_t;
  using O = typename P::out_t;
  auto const sizes     = test_sizes();
  std::size_t const mx = std::size_t(sizes.back()) + 2;
  device_buffer<U> in(mx);
  device_buffer<O> a(mx), b(mx);
  for (long long n : sizes) {
    fill(in.get(), n + 1, 7000 + n, values::small);
    for (int offset : {0, 1}) {
      CAPTURE(n);
      CAPTURE(offset);
      poison(a.get(), n + 2);
      poison(b.get(), n + 2);
      ours(kind::exclusive, in.get() + offset, a.get() + offset, n, typename P::op_t{}, T(-5));
      cub_scan(kind::exclusive, in.get() + offset, b.get() + offset, n, typename P::op_t{}, T(-5));
      mismatch const m = compare_bits(a.get(), b.get(), n + 2);
      CHECK(m.count == 0);
      if (m.count) MESSAGE("first difference at index " << m.first);
    }
  }
}

TEST_CASE("device scans: int32 max and an operator without a known identity") {
  check_exact<std::int32_t>(cuda::maximum<>{}, values::bits, std::numeric_limits<std::int32_t>::lowest());
  check_exact<std::int32_t>(user_plus{}, values::bits, 11);
}

TEST_CASE_TEMPLATE("device scans: integer-valued floating point (exact sums) vs CUB", T, float, double) {
  check_exact<T>(cuda::std::plus<>{}, values::small, T(1));
}

TEST_CASE("device scans: 16-byte non-commutative operator (2x2 matrix product)") {
  check_exact<mat2>(mat2_mul{}, values::bits, mat2{1, 2, 3, 4});
}

TEST_CASE("device scans: 8-byte operators, non-commutative (affine maps) and without a known identity") {
  check_exact<aff32>(aff32_then{}, values::bits, aff32{3, 7});
  check_exact<std::int64_t>(user_plus{}, values::bits, std::int64_t(11));
}

TEST_CASE("device scans: 8-byte records, 30 launches in a row on one temp storage, each vs CUB") {
  // The 16-byte {tag, value} records rely on a 16-byte access being read whole; repeated large
  // grids give a torn record many chances to show as a wrong prefix.
  long long const n = std::min(1ll << max_log2(), (1ll << 24) + 1);
  device_buffer<aff32> in{std::size_t(n)}, a{std::size_t(n)}, b{std::size_t(n)};
  fill(in.get(), n, 90);
  cub_scan(kind::inclusive, in.get(), b.get(), n, aff32_then{}, aff32{});
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::inclusive_scan(nullptr, bytes, in.get(), a.get(), n, aff32_then{}) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  int failures = 0;
  for (int rep = 0; rep < 30; ++rep) {
    a.poison();
    REQUIRE(tilewise::device::inclusive_scan(temp.get(), bytes, in.get(), a.get(), n, aff32_then{}) == cudaSuccess);
    TW_CHECK_LAUNCH();
    failures += compare_bits(a.get(), b.get(), n).count != 0;
  }
  CHECK(failures == 0);
}

TEST_CASE("device scans: in place (out == in)") {
  for (long long n : {1ll, 4097ll, (1ll << 20) + 1, std::min(1ll << max_log2(), (1ll << 24) + 5)}) {
    CAPTURE(n);
    device_buffer<std::int32_t> in{std::size_t(n)}, inout{std::size_t(n)}, ref{std::size_t(n)};
    fill(in.get(), n, n);
    for (kind k : {kind::inclusive, kind::exclusive}) {
      TW_CUDA_CHECK(cudaMemcpy(inout.get(), in.get(), std::size_t(n) * 4, cudaMemcpyDeviceToDevice));
      ours(k, inout.get(), inout.get(), n, cuda::std::plus<>{}, 5);
      cub_scan(k, in.get(), ref.get(), n, cuda::std::plus<>{}, 5);
      CHECK(compare_bits(inout.get(), ref.get(), n).count == 0);
    }
  }
}

TEST_CASE_TEMPLATE("device scans: temp storage at any address, as CUB accepts", T, std::int32_t, std::int64_t, double) {
  // int32 records are 8-byte words, int64 and double ones 16-byte words: both need alignment.
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 3);
  device_buffer<T> in{std::size_t(n)}, a{std::size_t(n)}, b{std::size_t(n)};
  fill(in.get(), n, 77, values::small);
  for (kind k : {kind::inclusive, kind::exclusive}) {
    cub_scan(k, in.get(), b.get(), n, cuda::std::plus<>{}, T(2));
    for (std::size_t shift : {1, 8, 200}) {
      CAPTURE(shift);
      a.poison();
      ours(k, in.get(), a.get(), n, cuda::std::plus<>{}, T(2), shift);
      CHECK(compare_bits(a.get(), b.get(), n).count == 0);
    }
  }
}

// At namespace scope (not anonymous): kernels taking it keep external linkage.
struct cube_mod {
  __host__ __device__ std::int64_t operator()(long long i) const { return (i * i % 10007) * i % 1000003; }
};

TEST_CASE("device scans: Thrust iterators (counting and transform in, device_ptr out)") {
  for (long long n : {1ll, 3000ll, (1ll << 20) + 3}) {
    CAPTURE(n);
    device_buffer<std::int64_t> a{std::size_t(n)}, b{std::size_t(n)};
    thrust::counting_iterator<long long> first(-7);
    auto cubes = thrust::make_transform_iterator(first, cube_mod{});
    for (kind k : {kind::inclusive, kind::exclusive}) {
      a.poison();
      b.poison();
      ours(k, cubes, thrust::device_ptr<std::int64_t>(a.get()), n, cuda::std::plus<>{}, std::int64_t(2));
      cub_scan(k, cubes, b.get(), n, cuda::std::plus<>{}, std::int64_t(2));
      CHECK(compare_bits(a.get(), b.get(), n).count == 0);
    }
    // The counting input against its closed form, on the host.
    ours(kind::inclusive, first, a.get(), n, cuda::std::plus<>{}, 0ll);
    auto const h = a.download();
    bool ok      = true;
    for (long long i = 0; i < n; ++i) ok &= h[std::size_t(i)] == (i + 1) * (-7) + i * (i + 1) / 2;
    CHECK(ok);
  }
}

TEST_CASE_TEMPLATE("device scans: thrust::device_ptr in and out, vs CUB on the raw pointers", T, std::int32_t,
                   std::int64_t, std::int16_t) {
  // device_ptr goes in as the raw pointer (thrust::try_unwrap_contiguous_iterator), so aligned
  // segments take the vector paths; offset 1 the element paths.
  for (long long n : {1ll, 4097ll, (1ll << 20) + 1, std::min(1ll << max_log2(), (1ll << 24) + 5)}) {
    device_buffer<T> in{std::size_t(n) + 2}, a{std::size_t(n) + 2}, b{std::size_t(n) + 2};
    fill(in.get(), n + 1, 300 + n);
    for (kind k : {kind::inclusive, kind::exclusive}) {
      for (int offset : {0, 1}) {
        CAPTURE(n);
        CAPTURE(offset);
        a.poison();
        b.poison();
        ours(k, thrust::device_ptr<T const>(in.get() + offset), thrust::device_ptr<T>(a.get() + offset), n,
             cuda::std::plus<>{}, T(4));
        cub_scan(k, in.get() + offset, b.get() + offset, n, cuda::std::plus<>{}, T(4));
        CHECK(compare_bits(a.get(), b.get(), n + 2).count == 0);
      }
    }
  }
}

TEST_CASE("device scans: more than 2^31 int8 elements into int64 (exclusive) and int8 (inclusive)") {
  if (!above_2_31()) {
    MESSAGE("skipped: TILEWISE_TEST_MAX_LOG2 < 31 (the sanitizer runs); the plain CTest run covers it");
    return;
  }
  long long const n = (1ll << 31) + 4099;
  device_buffer<std::int8_t> in{std::size_t(n)};
  fill(in.get(), n, 8);
  {
    device_buffer<std::int64_t> a{std::size_t(n)}, b{std::size_t(n)};
    ours(kind::exclusive, in.get(), a.get(), n, cuda::std::plus<>{}, std::int64_t(1) << 40);
    cub_scan(kind::exclusive, in.get(), b.get(), n, cuda::std::plus<>{}, std::int64_t(1) << 40);
    CHECK(compare_bits(a.get(), b.get(), n).count == 0);
  }
  device_buffer<std::int8_t> a{std::size_t(n)}, b{std::size_t(n)};
  ours(kind::inclusive, in.get(), a.get(), n, cuda::std::plus<>{}, std::int8_t(0));
  cub_scan(kind::inclusive, in.get(), b.get(), n, cuda::std::plus<>{}, std::int8_t(0));
  CHECK(compare_bits(a.get(), b.get(), n).count == 0);
}

TEST_CASE("device scans: two streams at once with separate temp storage") {
  long long const n = std::min(1ll << max_log2(), 1ll << 26);
  device_buffer<float> x{std::size_t(n)}, y{std::size_t(n)}, ox{std::size_t(n)}, oy{std::size_t(n)},
    rx{std::size_t(n)}, ry{std::size_t(n)};
  fill(x.get(), n, 1, values::small);
  fill(y.get(), n, 2, values::small);
  cub_scan(kind::inclusive, x.get(), rx.get(), n, cuda::std::plus<>{}, 0.f);
  cub_scan(kind::exclusive, y.get(), ry.get(), n, cuda::std::plus<>{}, 1.f);
  cudaStream_t s[2];
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::size_t bx = 0, by = 0;
  REQUIRE(tilewise::device::inclusive_scan(nullptr, bx, x.get(), ox.get(), n, cuda::std::plus<>{}) == cudaSuccess);
  REQUIRE(tilewise::device::exclusive_scan(nullptr, by, y.get(), oy.get(), n, cuda::std::plus<>{}, 1.f) ==
          cudaSuccess);
  device_buffer<unsigned char> tx(bx), ty(by);
  tx.poison();  // any contents will do; written, so compute-sanitizer initcheck sees defined bytes
  ty.poison();
  ox.poison();
  oy.poison();
  // The memsets above run on the legacy default stream, which non-blocking streams do not wait
  // for: one landing after a tile published its record would erase it, and the look-back would wait
  // for ever.
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < 8; ++rep) {
    REQUIRE(tilewise::device::inclusive_scan(tx.get(), bx, x.get(), ox.get(), n, cuda::std::plus<>{}, s[0]) ==
            cudaSuccess);
    REQUIRE(tilewise::device::exclusive_scan(ty.get(), by, y.get(), oy.get(), n, cuda::std::plus<>{}, 1.f, s[1]) ==
            cudaSuccess);
  }
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamSynchronize(st));
  TW_CHECK_LAUNCH();
  CHECK(compare_bits(ox.get(), rx.get(), n).count == 0);
  CHECK(compare_bits(oy.get(), ry.get(), n).count == 0);
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamDestroy(st));
}

TEST_CASE("device scans: num_items == 0 writes nothing; bad arguments give cudaErrorInvalidValue") {
  device_buffer<int> in(64), out(64);
  fill(in.get(), 64, 4);
  out.poison();
  auto const plus   = cuda::std::plus<>{};
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::inclusive_scan(nullptr, bytes, in.get(), out.get(), 64, plus) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  std::size_t small = bytes - 1;

  CHECK(tilewise::device::inclusive_scan(temp.get(), bytes, in.get(), out.get(), 0, plus) == cudaSuccess);
  CHECK(tilewise::device::exclusive_scan(temp.get(), bytes, in.get(), out.get(), 0, plus, 9) == cudaSuccess);
  CHECK(tilewise::device::exclusive_scan(temp.get(), bytes, static_cast<int*>(nullptr), static_cast<int*>(nullptr),
                                         0, plus, 9) == cudaSuccess);
  CHECK(tilewise::device::inclusive_scan(temp.get(), bytes, static_cast<int*>(nullptr), out.get(), 64, plus) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::device::exclusive_scan(temp.get(), bytes, in.get(), static_cast<int*>(nullptr), 64, plus, 0) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::device::inclusive_scan(temp.get(), bytes, thrust::device_ptr<int>(), out.get(), 64, plus) ==
        cudaErrorInvalidValue);  // a null device_ptr is a null pointer too
  CHECK(tilewise::device::exclusive_scan(temp.get(), bytes, in.get(), thrust::device_ptr<int>(), 64, plus, 0) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::device::inclusive_scan(temp.get(), small, in.get(), out.get(), 64, plus) == cudaErrorInvalidValue);
  CHECK(tilewise::device::exclusive_scan(temp.get(), bytes, in.get(), out.get(), -2, plus, 0) ==
        cudaErrorInvalidValue);
  TW_CHECK_LAUNCH();
  auto const h = out.download();
  int poisoned;
  std::memset(&poisoned, 0xA5, sizeof poisoned);
  bool untouched = true;
  for (int v : h) untouched &= v == poisoned;
  CHECK(untouched);
}
