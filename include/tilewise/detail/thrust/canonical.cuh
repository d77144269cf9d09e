/// @file
/// @brief The forms in which the Thrust-style calls pass their arguments to the device-wide
///        algorithms, so that common calls reach libtilewise.a's precompiled instantiations:
///        contiguous iterators as raw pointers, typed standard functors as their `<void>` forms.
#pragma once

#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <cstdint>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/thrust/policy.cuh>

namespace tilewise::detail {

/// `plus<T>`, `minimum<T>`, `maximum<T>` on arithmetic T act as their `<void>` forms on T
/// operands; anything else is passed on unchanged.
template <class Op, class T>
struct canonical_op {
  using type = Op;
};
template <class T>
  requires cuda::std::is_arithmetic_v<T>
struct canonical_op<cuda::std::plus<T>, T> {
  using type = cuda::std::plus<>;
};
template <class T>
  requires cuda::std::is_arithmetic_v<T>
struct canonical_op<cuda::minimum<T>, T> {
  using type = cuda::minimum<>;
};
template <class T>
  requires cuda::std::is_arithmetic_v<T>
struct canonical_op<cuda::maximum<T>, T> {
  using type = cuda::maximum<>;
};

/// The operator a call on values of type T hands to the device-wide algorithm.
template <class T, class Op>
auto canonical(Op const& op) {
  using C = typename canonical_op<Op, T>::type;
  if constexpr (cuda::std::is_same_v<C, Op>) {
    return op;
  } else {
    return C{};
  }
}

/// device_vector iterators and device_ptr as the raw pointers they wrap; other iterators as they are.
template <class It>
auto canonical_iterator(It it) {
  return thrust::try_unwrap_contiguous_iterator(it);
}

/// An input as canonical_iterator, with `T*` as `T const*` (the precompiled instantiations of
/// every algorithm take `T const*` inputs).
template <class It>
auto canonical_input(It it) {
  auto const p = thrust::try_unwrap_contiguous_iterator(it);
  if constexpr (cuda::std::is_pointer_v<decltype(p)>) {
    return static_cast<cuda::std::remove_pointer_t<decltype(p)> const*>(p);
  } else {
    return p;
  }
}

/// A call's input range and output as the device call takes them (canonical_input,
/// canonical_iterator), checked: `n` = last - first, std::invalid_argument("<call>: last < first")
/// when negative, and "first is a null pointer" / "result is a null pointer" for null raw
/// pointers when the range is not empty.
template <class InputIt, class OutputIt>
auto checked_range(InputIt first, InputIt last, OutputIt result, char const* call) {
  struct range {
    std::int64_t n;
    decltype(canonical_input(first)) in;
    decltype(canonical_iterator(result)) out;
  };
  range const r{checked_count(first, last, call), canonical_input(first), canonical_iterator(result)};
  if (r.n > 0) {
    check_not_null(r.in, call, "first is a null pointer");
    check_not_null(r.out, call, "result is a null pointer");
  }
  return r;
}

}  // namespace tilewise::detail
