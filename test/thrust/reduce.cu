// tilewise::reduce against thrust::reduce on the same inputs: its three overloads, device_vector
// iterators, device_ptr, raw device pointers and fancy iterators, standard operators in their
// <void> and typed spellings and user operators, a widening accumulator, under par, par_nosync,
// par.on(stream), par(alloc) and par_nosync(alloc).on(stream). Integer-valued inputs, so floating
// point compares exactly. A value larger than the page-locked result slot (pageable copy back).
#include <thrust/reduce.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <limits>

#include <tilewise/thrust/reduce.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace reduce_test {

/// A user operator the library does not recognise (commutative, no known identity).
struct user_add {
  template <class T>
  __host__ __device__ T operator()(T const& a, T const& b) const {
    return a + b;
  }
};

struct s12_values {
  __host__ __device__ tw_test::s12 operator()(std::int64_t i) const {
    auto const r = tw_test::mix64(std::uint64_t(i));
    return {int(r), int(r >> 32), int(r >> 16)};
  }
};

/// 72 bytes: more than the page-locked slot a result comes back through.
struct s72 {
  std::int32_t v[18];
  friend bool operator==(s72 const&, s72 const&) = default;
};
struct s72_plus {
  __host__ __device__ s72 operator()(s72 const& x, s72 const& y) const {
    s72 r;
    for (int k = 0; k < 18; ++k) r.v[k] = int(unsigned(x.v[k]) + unsigned(y.v[k]));
    return r;
  }
};
struct s72_values {
  __host__ __device__ s72 operator()(std::int64_t i) const {
    s72 r;
    for (int k = 0; k < 18; ++k) r.v[k] = int(tw_test::mix64(std::uint64_t(i) * 18 + k));
    return r;
  }
};

}  // namespace reduce_test

using namespace reduce_test;

TEST_CASE_TEMPLATE("tilewise::reduce = thrust::reduce, every overload, iterator kind and policy", T, std::int32_t,
                   float) {
  test_stream stream;
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    small_values<T> const gen{std::uint64_t(n) * 31 + sizeof(T)};
    thrust::device_vector<T> const v = materialize<T>(n, gen);
    T const* raw                     = thrust::raw_pointer_cast(v.data());
    auto const f                     = fancy(gen);
    T const lowest                   = std::numeric_limits<T>::lowest();

    T const sum      = thrust::reduce(thrust::cuda::par, v.begin(), v.end());
    T const sum7     = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), T(7));
    T const max      = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), lowest, cuda::maximum<>{});
    T const min      = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), T(3), thrust::minimum<T>{});
    T const user     = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), T(2), user_add{});
    T const fancy_s  = thrust::reduce(thrust::cuda::par, f, f + n, T(1), thrust::plus<T>{});
    double const wide = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), 0.5, cuda::std::plus<>{});

    each_policy(stream.get(), n > 0, [&](auto const& p) {
      CHECK(tilewise::reduce(p, v.begin(), v.end()) == sum);                      // device_vector iterators
      CHECK(tilewise::reduce(p, v.data(), v.data() + n, T(7)) == sum7);           // device_ptr
      CHECK(tilewise::reduce(p, raw, raw + n, lowest, cuda::maximum<>{}) == max);  // raw pointers
      CHECK(tilewise::reduce(p, v.cbegin(), v.cend(), T(3), thrust::minimum<T>{}) == min);
      CHECK(tilewise::reduce(p, v.begin(), v.end(), T(2), user_add{}) == user);
      CHECK(tilewise::reduce(p, f, f + n, T(1), thrust::plus<T>{}) == fancy_s);  // fancy iterator
      CHECK(tilewise::reduce(p, v.begin(), v.end(), 0.5, cuda::std::plus<>{}) == wide);  // T -> double
    });
  }
}

TEST_CASE("tilewise::reduce: 12-byte struct values under a user operator, and thrust::device") {
  // thrust::device is a CUDA policy too; a struct type goes through the generic path.
  using tw_test::s12;
  test_stream stream;
  for (std::int64_t n : sizes()) {
    CAPTURE(n);
    thrust::device_vector<s12> const v = materialize<s12>(n, s12_values{});
    s12 const init{1, 2, 3};
    s12 const expected = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), init, tw_test::s12_plus{});
    CHECK(tilewise::reduce(thrust::device, v.begin(), v.end(), init, tw_test::s12_plus{}) == expected);
    each_policy(stream.get(), n > 0, [&](auto const& p) {
      CHECK(tilewise::reduce(p, v.begin(), v.end(), init, tw_test::s12_plus{}) == expected);
    });
  }
}

TEST_CASE("tilewise::reduce: a value larger than the page-locked result slot comes back through pageable memory") {
  static_assert(sizeof(s72) > tilewise::detail::thread_kept::pinned_bytes);
  test_stream stream;
  for (std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(1) << 16}) {
    CAPTURE(n);
    thrust::device_vector<s72> const v = materialize<s72>(n, s72_values{});
    s72 const init                     = s72_values{}(-1);
    s72 const expected = thrust::reduce(thrust::cuda::par, v.begin(), v.end(), init, s72_plus{});
    CHECK(tilewise::reduce(thrust::cuda::par.on(stream.get()), v.begin(), v.end(), init, s72_plus{}) == expected);
    CHECK(tilewise::reduce(thrust::cuda::par_nosync.on(stream.get()), v.begin(), v.end(), init, s72_plus{}) ==
          expected);
  }
}
