/// @file
/// @brief The forms in which the Thrust-style calls pass their arguments to the device-wide
///        algorithms, so that common calls reach libtilewise.a's precompiled instantiations:
///        contiguous iterators as raw pointers, typed standard functors as their `<void>` forms.
#pragma once

#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

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

}  // namespace tilewise::detail
