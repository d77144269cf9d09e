// tilewise::inclusive_scan / exclusive_scan against thrust's on the same inputs: every overload
// (inclusive: op, no op, init + op; exclusive: init + op, init, neither), device_vector iterators,
// device_ptr, raw device pointers, fancy iterators, in place, typed and <void> standard operators,
// a non-commutative operator (affine maps), uint8 flags into int32 offsets (the accumulator types
// Thrust uses), under par, par_nosync, par.on(stream), par(alloc), par_nosync(alloc).on(stream).
// Outputs are poisoned and one element longer than the input, so a stray write shows.
#include <thrust/fill.h>
#include <thrust/scan.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/thrust/scan.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace scan_test {

/// A fresh output of n + 1 elements, all `poison`.
template <class T>
thrust::device_vector<T> poisoned(std::int64_t n, T poison) {
  return thrust::device_vector<T>(static_cast<std::size_t>(n + 1), poison);
}

/// Both sides' outputs after one call each: equal bit for bit, the returned ends at begin + n.
template <class T, class It>
void same(thrust::device_vector<T> const& ours, thrust::device_vector<T> const& theirs, It end, It begin,
          std::int64_t n) {
  CHECK(end - begin == n);
  CHECK(differences(ours, theirs) == 0);
}

struct flag_values {
  std::uint64_t seed;
  __host__ __device__ std::uint8_t operator()(std::int64_t i) const {
    return std::uint8_t(tw_test::mix64(std::uint64_t(i) ^ seed) & 1);
  }
};

}  // namespace scan_test

using namespace scan_test;

TEST_CASE_TEMPLATE("tilewise scans = thrust scans, every overload, iterator kind and policy", T, std::int32_t,
                   float) {
  test_stream stream;
  T const poison{T(123)};
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    small_values<T> const gen{std::uint64_t(n) * 17 + sizeof(T)};
    thrust::device_vector<T> const v = materialize<T>(n, gen);
    T const* raw                     = thrust::raw_pointer_cast(v.data());
    auto const f                     = fancy(gen);

    // The oracle: thrust's scans with par, each into its own poisoned output.
    std::vector<thrust::device_vector<T>> expected;
    auto expect = [&](auto&& call) {
      expected.push_back(poisoned(n, poison));
      call(expected.back());
    };
    using thrust::cuda::par;
    expect([&](auto& o) { thrust::inclusive_scan(par, v.begin(), v.end(), o.begin()); });
    expect([&](auto& o) { thrust::inclusive_scan(par, v.begin(), v.end(), o.begin(), cuda::maximum<>{}); });
    expect([&](auto& o) { thrust::inclusive_scan(par, v.begin(), v.end(), o.begin(), thrust::plus<T>{}); });
    expect([&](auto& o) { thrust::inclusive_scan(par, f, f + n, o.begin(), T(5), cuda::std::plus<>{}); });
    expect([&](auto& o) { thrust::exclusive_scan(par, v.begin(), v.end(), o.begin()); });
    expect([&](auto& o) { thrust::exclusive_scan(par, v.begin(), v.end(), o.begin(), T(3)); });
    expect([&](auto& o) { thrust::exclusive_scan(par, f, f + n, o.begin(), T(-2), cuda::minimum<>{}); });
    expect([&](auto& o) {  // in place
      thrust::copy(par, v.begin(), v.end(), o.begin());
      thrust::inclusive_scan(par, o.begin(), o.begin() + n, o.begin());
    });

    each_policy(stream.get(), n > 0, [&](auto const& p) {
      std::size_t k = 0;
      auto check = [&](auto&& call) {
        CAPTURE(k);
        auto o         = poisoned(n, poison);
        auto const end = call(o);
        same(o, expected[k], end, o.begin(), n);
        ++k;
      };
      // device_vector iterators, device_ptr, raw pointers, a fancy input with init.
      check([&](auto& o) { return tilewise::inclusive_scan(p, v.begin(), v.end(), o.begin()); });
      check([&](auto& o) {
        auto const e = tilewise::inclusive_scan(p, v.data(), v.data() + n, o.data(), cuda::maximum<>{});
        return o.begin() + (e - o.data());
      });
      check([&](auto& o) {
        T* const out = thrust::raw_pointer_cast(o.data());
        return o.begin() + (tilewise::inclusive_scan(p, raw, raw + n, out, thrust::plus<T>{}) - out);
      });
      check([&](auto& o) { return tilewise::inclusive_scan(p, f, f + n, o.begin(), T(5), cuda::std::plus<>{}); });
      check([&](auto& o) { return tilewise::exclusive_scan(p, v.begin(), v.end(), o.begin()); });
      check([&](auto& o) { return tilewise::exclusive_scan(p, v.cbegin(), v.cend(), o.begin(), T(3)); });
      check([&](auto& o) { return tilewise::exclusive_scan(p, f, f + n, o.begin(), T(-2), cuda::minimum<>{}); });
      check([&](auto& o) {
        thrust::copy(thrust::cuda::par, v.begin(), v.end(), o.begin());
        return tilewise::inclusive_scan(p, o.begin(), o.begin() + n, o.begin());
      });
      CHECK(k == expected.size());
    });
  }
}

TEST_CASE("tilewise scans: a non-commutative operator (affine maps) = thrust, every policy") {
  using tw_test::aff32;
  using tw_test::aff32_then;
  test_stream stream;
  aff32 const poison{0xDEAD, 0xBEEF};
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    thrust::device_vector<aff32> const v = materialize<aff32>(n, any_values<aff32>{std::uint64_t(n)});
    auto inc = poisoned(n, poison), exc = poisoned(n, poison);
    thrust::inclusive_scan(thrust::cuda::par, v.begin(), v.end(), inc.begin(), aff32_then{});
    thrust::exclusive_scan(thrust::cuda::par, v.begin(), v.end(), exc.begin(), aff32{3, 7}, aff32_then{});
    each_policy(stream.get(), n > 0, [&](auto const& p) {
      auto a = poisoned(n, poison), b = poisoned(n, poison);
      same(a, inc, tilewise::inclusive_scan(p, v.begin(), v.end(), a.begin(), aff32_then{}), a.begin(), n);
      same(b, exc, tilewise::exclusive_scan(p, v.begin(), v.end(), b.begin(), aff32{3, 7}, aff32_then{}), b.begin(),
           n);
    });
  }
}

TEST_CASE("tilewise scans: uint8 flags into int32 offsets, with Thrust's accumulator types") {
  // exclusive_scan scans in init's type; inclusive_scan with init in that of op(init, flag), here
  // int32, so the offsets pass 255. Without init, the scan runs in uint8 (as Thrust's).
  test_stream stream;
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    thrust::device_vector<std::uint8_t> const flags = materialize<std::uint8_t>(n, flag_values{std::uint64_t(n)});
    auto exc = poisoned(n, -1), inc = poisoned(n, -1), narrow = poisoned(n, -1);
    thrust::exclusive_scan(thrust::cuda::par, flags.begin(), flags.end(), exc.begin(), 0);
    thrust::inclusive_scan(thrust::cuda::par, flags.begin(), flags.end(), inc.begin(), 0, cuda::std::plus<>{});
    thrust::inclusive_scan(thrust::cuda::par, flags.begin(), flags.end(), narrow.begin());
    each_policy(stream.get(), n > 0, [&](auto const& p) {
      auto a = poisoned(n, -1), b = poisoned(n, -1), c = poisoned(n, -1);
      same(a, exc, tilewise::exclusive_scan(p, flags.begin(), flags.end(), a.begin(), 0), a.begin(), n);
      same(b, inc, tilewise::inclusive_scan(p, flags.begin(), flags.end(), b.begin(), 0, cuda::std::plus<>{}),
           b.begin(), n);
      same(c, narrow, tilewise::inclusive_scan(p, flags.begin(), flags.end(), c.begin()), c.begin(), n);
    });
  }
}
