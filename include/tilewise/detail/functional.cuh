/// @file
/// @brief Recognises the standard reduction functors (libcu++'s and Cooperative Groups') so the
///        tile primitives can use `redux.sync`, identities and cheaper exclusive scans for them.
#pragma once

#include <cooperative_groups/reduce.h>

#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

enum class op_kind { other, plus, min, max, bit_and, bit_or, bit_xor };

/// The kind of a functor, for value type T. A typed functor (`plus<U>`) counts only when U == T,
/// so that `plus<long>` applied to int values keeps its widening semantics.
template <class Op, class T>
struct op_kind_of : cuda::std::integral_constant<op_kind, op_kind::other> {};

#define TILEWISE_OP_KIND(FUNCTOR, KIND)                                                      \
  template <class T>                                                                        \
  struct op_kind_of<FUNCTOR<T>, T> : cuda::std::integral_constant<op_kind, op_kind::KIND> {}; \
  template <class T>                                                                        \
  struct op_kind_of<FUNCTOR<void>, T> : cuda::std::integral_constant<op_kind, op_kind::KIND> {};

TILEWISE_OP_KIND(cuda::std::plus, plus)
TILEWISE_OP_KIND(cuda::minimum, min)
TILEWISE_OP_KIND(cuda::maximum, max)
TILEWISE_OP_KIND(cuda::std::bit_and, bit_and)
TILEWISE_OP_KIND(cuda::std::bit_or, bit_or)
TILEWISE_OP_KIND(cuda::std::bit_xor, bit_xor)
#undef TILEWISE_OP_KIND

// Cooperative Groups' functors are typed only; cg::less / cg::greater select the min / max.
template <class T> struct op_kind_of<cg::plus<T>, T> : cuda::std::integral_constant<op_kind, op_kind::plus> {};
template <class T> struct op_kind_of<cg::less<T>, T> : cuda::std::integral_constant<op_kind, op_kind::min> {};
template <class T> struct op_kind_of<cg::greater<T>, T> : cuda::std::integral_constant<op_kind, op_kind::max> {};
template <class T> struct op_kind_of<cg::bit_and<T>, T> : cuda::std::integral_constant<op_kind, op_kind::bit_and> {};
template <class T> struct op_kind_of<cg::bit_or<T>, T> : cuda::std::integral_constant<op_kind, op_kind::bit_or> {};
template <class T> struct op_kind_of<cg::bit_xor<T>, T> : cuda::std::integral_constant<op_kind, op_kind::bit_xor> {};

template <class T>
inline constexpr bool is_arithmetic_value = cuda::std::is_arithmetic_v<T> && !cuda::std::is_same_v<T, bool>;

/// The op's kind when T is a plain arithmetic type, `other` otherwise.
template <class Op, class T>
inline constexpr op_kind kind_v = is_arithmetic_value<T> ? op_kind_of<cuda::std::remove_cvref_t<Op>, T>::value
                                                        : op_kind::other;

/// Known to give bitwise-identical results for op(a, b) and op(b, a).
template <class Op, class T>
inline constexpr bool known_commutative = kind_v<Op, T> != op_kind::other;

/// Integers of at most 32 bits with a kind that `redux.sync` implements.
template <class Op, class T>
inline constexpr bool redux_capable =
  cuda::std::is_integral_v<T> && sizeof(T) <= 4 && kind_v<Op, T> != op_kind::other;

/// Identity element of a known op (lets partial tiles run the full-tile path).
/// For floating-point plus it is -0.0, which leaves every value, -0.0 included, unchanged.
template <op_kind K, class T>
__host__ __device__ constexpr T identity() {
  using lim = cuda::std::numeric_limits<T>;
  if constexpr (K == op_kind::plus) {
    if constexpr (cuda::std::is_floating_point_v<T>) {
      return T(-0.0);
    } else {
      return T(0);
    }
  } else if constexpr (K == op_kind::min) {
    return lim::has_infinity ? lim::infinity() : lim::max();
  } else if constexpr (K == op_kind::max) {
    return lim::has_infinity ? -lim::infinity() : lim::lowest();
  } else if constexpr (K == op_kind::bit_and) {
    return T(~T(0));
  } else {  // bit_or, bit_xor
    return T(0);
  }
}

/// One `redux.sync` over the lanes in `mask`; integers narrower than 32 bits are widened with
/// their signedness, which yields the same wrapped / ordered result after narrowing back.
template <op_kind K, class T>
TILEWISE_DEVICE T redux(unsigned mask, T v) {
  using wide = cuda::std::conditional_t<cuda::std::is_signed_v<T>, int, unsigned>;
  wide const x = static_cast<wide>(v);
  if constexpr (K == op_kind::plus) {
    return static_cast<T>(__reduce_add_sync(mask, x));
  } else if constexpr (K == op_kind::min) {
    return static_cast<T>(__reduce_min_sync(mask, x));
  } else if constexpr (K == op_kind::max) {
    return static_cast<T>(__reduce_max_sync(mask, x));
  } else if constexpr (K == op_kind::bit_and) {
    return static_cast<T>(__reduce_and_sync(mask, static_cast<unsigned>(x)));
  } else if constexpr (K == op_kind::bit_or) {
    return static_cast<T>(__reduce_or_sync(mask, static_cast<unsigned>(x)));
  } else {
    static_assert(K == op_kind::bit_xor);
    return static_cast<T>(__reduce_xor_sync(mask, static_cast<unsigned>(x)));
  }
}

}  // namespace tilewise::detail
