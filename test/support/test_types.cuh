// Value types and operators the tile tests run with, their float64 host references and the
// comparison rule: integers and integer structs compare exactly; floating-point values must lie
// within 32 * epsilon(T) * sum(|x_i|) of a float64 host reference (sum over the tile).
#pragma once

#include <cooperative_groups/reduce.h>

#include <cuda/functional>
#include <cuda/std/cstdint>
#include <cuda/std/functional>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>

#include "cuda_test.cuh"

namespace tw_test {

/// 12 bytes: three ints, combined component-wise by s12_plus (wrapping).
struct s12 {
  std::int32_t a, b, c;
  friend bool operator==(s12 const&, s12 const&) = default;
};
struct s12_plus {
  __host__ __device__ s12 operator()(s12 const& x, s12 const& y) const {
    return {int(unsigned(x.a) + unsigned(y.a)), int(unsigned(x.b) + unsigned(y.b)), int(unsigned(x.c) ^ unsigned(y.c))};
  }
};

/// 24 bytes with mixed fields: sum of doubles, wrapping sum of int64, min of uint32, max of float.
struct s24 {
  double d;
  std::int64_t i;
  std::uint32_t u;
  float f;
};
struct s24_op {
  __host__ __device__ s24 operator()(s24 const& x, s24 const& y) const {
    return {x.d + y.d, std::int64_t(std::uint64_t(x.i) + std::uint64_t(y.i)), x.u < y.u ? x.u : y.u,
            x.f > y.f ? x.f : y.f};
  }
};

/// 2x2 matrices of uint32 under the matrix product (mod 2^32): associative, not commutative.
struct mat2 {
  std::uint32_t m00, m01, m10, m11;
  friend bool operator==(mat2 const&, mat2 const&) = default;
};
struct mat2_mul {
  __host__ __device__ mat2 operator()(mat2 const& x, mat2 const& y) const {
    return {x.m00 * y.m00 + x.m01 * y.m10, x.m00 * y.m01 + x.m01 * y.m11, x.m10 * y.m00 + x.m11 * y.m10,
            x.m10 * y.m01 + x.m11 * y.m11};
  }
};

/// Affine maps t -> a t + b on uint16 (mod 2^16) under composition "x, then y": associative,
/// not commutative, 4 bytes (values of at most 4 bytes take their own paths in grid::reduce).
struct aff16 {
  std::uint16_t a, b;
  friend bool operator==(aff16 const&, aff16 const&) = default;
};
struct aff16_then {
  __host__ __device__ aff16 operator()(aff16 const& x, aff16 const& y) const {
    return {std::uint16_t(unsigned(x.a) * y.a), std::uint16_t(unsigned(x.b) * y.a + y.b)};
  }
};

/// Affine maps t -> a t + b on uint32 (mod 2^32) under composition "x, then y": associative, not
/// commutative, 8 bytes (the device scans' 16-byte {tag, value} records).
struct aff32 {
  std::uint32_t a, b;
  friend bool operator==(aff32 const&, aff32 const&) = default;
};
struct aff32_then {
  __host__ __device__ aff32 operator()(aff32 const& x, aff32 const& y) const { return {x.a * y.a, x.b * y.a + y.b}; }
};

/// A user-defined commutative operator on integers the library cannot recognise (generic path).
struct user_plus {
  template <class T>
  __host__ __device__ T operator()(T const& x, T const& y) const {
    using U = std::make_unsigned_t<T>;
    return T(U(x) + U(y));
  }
};

template <class Rng>
s12 random_value(Rng& rng, tag<s12>) {
  std::uniform_int_distribution<std::int32_t> d(std::numeric_limits<std::int32_t>::lowest(),
                                                std::numeric_limits<std::int32_t>::max());
  return {d(rng), d(rng), d(rng)};
}
template <class Rng>
s24 random_value(Rng& rng, tag<s24>) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::uniform_int_distribution<std::int64_t> i(std::numeric_limits<std::int64_t>::lowest(),
                                                std::numeric_limits<std::int64_t>::max());
  std::uniform_int_distribution<std::uint32_t> u;
  s24 s{};  // value-initialised: padding-free, but keep it deterministic anyway
  s.d = d(rng);
  s.i = i(rng);
  s.u = u(rng);
  s.f = float(d(rng));
  return s;
}
template <class Rng>
aff16 random_value(Rng& rng, tag<aff16>) {
  std::uniform_int_distribution<unsigned> d(0, 0xFFFF);
  return {std::uint16_t(d(rng) | 1u), std::uint16_t(d(rng))};  // odd a: products never vanish
}
template <class Rng>
mat2 random_value(Rng& rng, tag<mat2>) {
  std::uniform_int_distribution<std::uint32_t> d;
  return {d(rng), d(rng), d(rng), d(rng)};
}

/// The type host references are computed in: float64 for floating point, T otherwise.
template <class T>
using ref_t = std::conditional_t<std::is_floating_point_v<T>, double, T>;

/// Magnitude that scales the rounding error of a floating-point value (0 for exact types).
template <class T>
double magnitude(T const& x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(double(x));
  } else if constexpr (std::is_same_v<T, s24>) {
    return std::fabs(x.d);
  } else {
    return 0.0;
  }
}

template <class T>
constexpr double epsilon() {
  if constexpr (std::is_same_v<T, float>) {
    return std::numeric_limits<float>::epsilon();
  } else {
    return std::numeric_limits<double>::epsilon();  // double and the double field of s24
  }
}

/// `ours` (computed in T on the GPU) against a reference in ref_t<T>; `scale` = sum of magnitudes.
template <class T>
bool close(T const& ours, ref_t<T> const& ref, double scale) {
  double const tol = 32.0 * epsilon<T>() * scale;
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(double(ours) - double(ref)) <= tol;
  } else if constexpr (std::is_same_v<T, s24>) {
    return std::fabs(ours.d - ref.d) <= tol && ours.i == ref.i && ours.u == ref.u && ours.f == ref.f;
  } else {
    return ours == ref;
  }
}

/// Whether results must match CUB's bit for bit (exact types).
template <class T>
inline constexpr bool exact_v = !std::is_floating_point_v<T> && !std::is_same_v<T, s24>;

/// Whether the operator commutes (CUB's reductions are only compared for commutative ops).
template <class Op>
inline constexpr bool commutative_v =
  !std::is_same_v<Op, mat2_mul> && !std::is_same_v<Op, aff16_then> && !std::is_same_v<Op, aff32_then>;

/// Cooperative Groups' functors are device-only: the host reference uses libcu++'s equivalents.
template <class Op>
struct host_op_of {
  using type = Op;
};
template <class T>
struct host_op_of<cooperative_groups::plus<T>> {
  using type = cuda::std::plus<T>;
};
template <class T>
struct host_op_of<cooperative_groups::greater<T>> {
  using type = cuda::maximum<T>;
};
template <class Op>
using host_op = typename host_op_of<Op>::type;

/// In-order fold of x[first, last) under op, in ref_t<T>.
template <class T, class Op>
ref_t<T> fold(std::vector<T> const& x, std::size_t first, std::size_t last, Op op) {
  ref_t<T> acc = ref_t<T>(x[first]);
  for (std::size_t i = first + 1; i < last; ++i) acc = op(acc, ref_t<T>(x[i]));
  return acc;
}

template <class T>
double magnitude_sum(std::vector<T> const& x, std::size_t first, std::size_t last) {
  double s = 0;
  for (std::size_t i = first; i < last; ++i) s += magnitude(x[i]);
  return s;
}

template <class T>
char const* name_of() {
  if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, s12>) return "s12";
  else if constexpr (std::is_same_v<T, s24>) return "s24";
  else if constexpr (std::is_same_v<T, mat2>) return "mat2";
  else if constexpr (std::is_same_v<T, aff16>) return "aff16";
  else return "?";
}

static_assert(sizeof(s12) == 12 && sizeof(s24) == 24 && sizeof(mat2) == 16 && sizeof(aff16) == 4 && sizeof(aff32) == 8);

}  // namespace tw_test
