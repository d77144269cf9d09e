// tilewise::copy_if against thrust::copy_if on the same inputs: with and without a stencil,
// device_vector iterators, device_ptr, raw device pointers, fancy inputs, functors and device
// lambdas, 4-byte and 12-byte values, under every policy form. Outputs are poisoned and compared
// in full, so a write past the returned end shows.
#include <thrust/copy.h>

#include <tilewise/thrust/copy_if.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace copy_if_test {

template <class T>
struct positive {
  __host__ __device__ bool operator()(T const& x) const { return x > T(0); }
};
struct s12_odd {
  __host__ __device__ bool operator()(tw_test::s12 const& x) const { return (x.a & 1) != 0; }
};
struct s12_values {
  __host__ __device__ tw_test::s12 operator()(std::int64_t i) const {
    auto const r = tw_test::mix64(std::uint64_t(i) * 3 + 1);
    return {int(r), int(r >> 32), int(i)};
  }
};
struct one_in_three {
  __host__ __device__ std::uint8_t operator()(std::int64_t i) const {
    return std::uint8_t(tw_test::mix64(std::uint64_t(i)) % 3 == 0);
  }
};
struct nonzero {
  __host__ __device__ bool operator()(std::uint8_t f) const { return f != 0; }
};

/// Both outputs (poisoned, n + 1 elements) equal bit for bit and the ends at the same offset.
template <class T>
void same(thrust::device_vector<T> const& ours, std::int64_t ours_count, thrust::device_vector<T> const& theirs,
          std::int64_t theirs_count) {
  CHECK(ours_count == theirs_count);
  CHECK(differences(ours, theirs) == 0);
}

}  // namespace copy_if_test

using namespace copy_if_test;

TEST_CASE_TEMPLATE("tilewise::copy_if = thrust::copy_if, every iterator kind and policy", T, std::int32_t, float) {
  test_stream stream;
  T const poison{T(77)};
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    small_values<T> const gen{std::uint64_t(n) + 41};
    thrust::device_vector<T> const v                = materialize<T>(n, gen);
    thrust::device_vector<std::uint8_t> const flags = materialize<std::uint8_t>(n, one_in_three{});
    auto const f                                    = fancy(gen);
    std::size_t const m                             = std::size_t(n) + 1;

    thrust::device_vector<T> e1(m, poison), e2(m, poison), e3(m, poison), e4(m, poison);
    auto const c1 = thrust::copy_if(thrust::cuda::par, v.begin(), v.end(), e1.begin(), positive<T>{}) - e1.begin();
    auto const c2 = thrust::copy_if(thrust::cuda::par, v.begin(), v.end(), flags.begin(), e2.begin(), nonzero{}) -
                    e2.begin();
    auto const c3 = thrust::copy_if(thrust::cuda::par, f, f + n, e3.begin(), positive<T>{}) - e3.begin();
    auto const negative = [] __device__(T x) { return x < T(0); };
    auto const c4 = thrust::copy_if(thrust::cuda::par, v.begin(), v.end(), e4.begin(), negative) - e4.begin();

    each_policy(stream.get(), n > 0, [&](auto const& p) {
      thrust::device_vector<T> a(m, poison), b(m, poison), c(m, poison), d(m, poison);
      same(a, tilewise::copy_if(p, v.begin(), v.end(), a.begin(), positive<T>{}) - a.begin(), e1, c1);
      T const* raw = thrust::raw_pointer_cast(v.data());
      T* const out = thrust::raw_pointer_cast(b.data());
      std::uint8_t const* raw_flags = thrust::raw_pointer_cast(flags.data());
      same(b, tilewise::copy_if(p, raw, raw + n, raw_flags, out, nonzero{}) - out, e2, c2);
      same(c, tilewise::copy_if(p, f, f + n, c.data(), positive<T>{}) - c.data(), e3, c3);  // fancy in, device_ptr out
      same(d, tilewise::copy_if(p, v.begin(), v.end(), d.begin(), negative) - d.begin(), e4, c4);  // a device lambda
    });
  }
}

TEST_CASE("tilewise::copy_if: 12-byte values = thrust::copy_if, every policy") {
  test_stream stream;
  tw_test::s12 const poison{-1, -2, -3};
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    thrust::device_vector<tw_test::s12> const v = materialize<tw_test::s12>(n, s12_values{});
    thrust::device_vector<tw_test::s12> e(std::size_t(n) + 1, poison);
    auto const count = thrust::copy_if(thrust::cuda::par, v.begin(), v.end(), e.begin(), s12_odd{}) - e.begin();
    each_policy(stream.get(), n > 0, [&](auto const& p) {
      thrust::device_vector<tw_test::s12> a(std::size_t(n) + 1, poison);
      same(a, tilewise::copy_if(p, v.begin(), v.end(), a.begin(), s12_odd{}) - a.begin(), e, count);
    });
  }
}

TEST_CASE("tilewise::copy_if: invalid arguments") {
  thrust::device_vector<int> v(10, 1), o(10);
  thrust::device_ptr<int> const null(static_cast<int*>(nullptr));
  using E = std::invalid_argument;
  CHECK_THROWS_WITH_AS(tilewise::copy_if(thrust::cuda::par, v.end(), v.begin(), o.begin(), positive<int>{}),
                       "tilewise::copy_if: last < first", E);
  CHECK_THROWS_WITH_AS(tilewise::copy_if(thrust::cuda::par, v.begin(), v.end(), null, positive<int>{}),
                       "tilewise::copy_if: result is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::copy_if(thrust::cuda::par, v.begin(), v.end(), null, o.begin(), positive<int>{}),
                       "tilewise::copy_if: stencil is a null pointer", E);
  CHECK(tilewise::copy_if(thrust::cuda::par, null, null, o.begin(), positive<int>{}) == o.begin());
}
