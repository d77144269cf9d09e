/// @file
/// @brief tilewise::inclusive_scan and tilewise::exclusive_scan: thrust's scan signatures on
///        Thrust CUDA policies, computed by device::inclusive_scan / device::exclusive_scan
///        (one single-pass kernel launch).
#pragma once

#include <cstdint>

#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/iterator_traits.h>
#include <thrust/iterator/transform_iterator.h>

#include <tilewise/detail/thrust/canonical.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/two_phase.cuh>
#include <tilewise/device/scan.cuh>

namespace tilewise::detail {

/// Element i of an inclusive scan's input with `init` folded into element 0, as type T (op is
/// associative, so scanning these equals scanning the input from `init`).
template <class InputIt, class T, class Op>
struct seeded_input {
  InputIt in;
  T init;
  Op op;
  __host__ __device__ T operator()(std::int64_t i) const { return i == 0 ? T(op(init, T(in[0]))) : T(in[i]); }
};

}  // namespace tilewise::detail

namespace tilewise {

/// @brief Inclusive prefix scan, as thrust::inclusive_scan: `result[i] = first[0] op ... op first[i]`.
/// @tparam Derived  a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                  `(alloc)` forms, thrust::device
/// @tparam InputIt  random-access iterator; the scan runs in its value type (as Thrust's)
/// @tparam OutputIt random-access output iterator; may equal `first` (in place)
/// @tparam Op       associative binary functor; need not be commutative
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @param op            the scan operator
/// @return `result + (last - first)`
/// @throws std::invalid_argument when last < first or `first` / `result` is a null pointer;
///         thrust::system_error for a CUDA error; what the policy's allocator throws
/// @note Under par (and its `.on` / `(alloc)` forms) the result is complete on return (the
///       policy's stream is synchronized); under par_nosync the call returns once the kernel is
///       queued, without synchronizing (allocation included). An empty range does nothing.
template <class Derived, class InputIt, class OutputIt, class Op>
OutputIt inclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result, Op op) {
  constexpr char const* call = "tilewise::inclusive_scan";
  auto const r               = detail::checked_range(first, last, result, call);
  if (r.n == 0) {
    return result;
  }
  using V      = typename thrust::iterator_traits<InputIt>::value_type;
  auto const o = detail::canonical<V>(op);
  detail::run_two_phase(
    detail::derived_policy(policy),
    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return device::inclusive_scan(temp, bytes, r.in, r.out, r.n, o, s);
    },
    call);
  return result + r.n;
}

/// @brief Inclusive prefix sum, as thrust::inclusive_scan(policy, first, last, result).
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @return `result + (last - first)`
/// @note Synchronizes as the form with an operator.
template <class Derived, class InputIt, class OutputIt>
OutputIt inclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result) {
  return tilewise::inclusive_scan(policy, first, last, result, cuda::std::plus<>{});
}

/// @brief Inclusive prefix scan from `init`, as thrust::inclusive_scan(policy, first, last,
///        result, init, op): `result[i] = init op first[0] op ... op first[i]`.
/// @tparam T the initial value's type; the scan runs in the type of `op(init, *first)` (as Thrust's)
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @param init          the value folded in before the first element
/// @param op            the scan operator
/// @return `result + (last - first)`
/// @note Synchronizes as the form without `init`. The input is read through an iterator that
///       folds `init` into element 0, so this form never takes the raw-pointer fast paths.
template <class Derived, class InputIt, class OutputIt, class T, class Op>
OutputIt inclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result, T init, Op op) {
  constexpr char const* call = "tilewise::inclusive_scan";
  auto const r               = detail::checked_range(first, last, result, call);
  if (r.n == 0) {
    return result;
  }
  using V       = typename thrust::iterator_traits<InputIt>::value_type;
  using A       = cuda::std::decay_t<cuda::std::invoke_result_t<Op&, T const&, V const&>>;
  auto const o  = detail::canonical<A>(op);
  auto const in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                                  detail::seeded_input<decltype(r.in), A, decltype(o)>{r.in, A(init), o});
  detail::run_two_phase(
    detail::derived_policy(policy),
    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return device::inclusive_scan(temp, bytes, in, r.out, r.n, o, s);
    },
    call);
  return result + r.n;
}

/// @brief Exclusive prefix scan, as thrust::exclusive_scan: `result[0] = init`,
///        `result[i] = init op first[0] op ... op first[i - 1]`.
/// @tparam Derived  a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                  `(alloc)` forms, thrust::device
/// @tparam InputIt  random-access iterator; elements are converted to T
/// @tparam OutputIt random-access output iterator; may equal `first` (in place)
/// @tparam T        the scan's type (that of `init`, as Thrust's)
/// @tparam Op       associative binary functor on T; need not be commutative
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @param init          the first output and the scan's start
/// @param op            the scan operator
/// @return `result + (last - first)`
/// @throws std::invalid_argument when last < first or `first` / `result` is a null pointer;
///         thrust::system_error for a CUDA error; what the policy's allocator throws
/// @note Under par the result is complete on return (the policy's stream is synchronized); under
///       par_nosync the call returns once the kernel is queued, without synchronizing (allocation
///       included). An empty range does nothing.
template <class Derived, class InputIt, class OutputIt, class T, class Op>
OutputIt exclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result, T init, Op op) {
  constexpr char const* call = "tilewise::exclusive_scan";
  auto const r               = detail::checked_range(first, last, result, call);
  if (r.n == 0) {
    return result;
  }
  auto const o = detail::canonical<T>(op);
  detail::run_two_phase(
    detail::derived_policy(policy),
    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return device::exclusive_scan(temp, bytes, r.in, r.out, r.n, o, init, s);
    },
    call);
  return result + r.n;
}

/// @brief Exclusive prefix sum from `init`, as thrust::exclusive_scan(policy, first, last, result, init).
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @param init          the first output and the scan's start
/// @return `result + (last - first)`
/// @note Synchronizes as the form with an operator.
template <class Derived, class InputIt, class OutputIt, class T>
OutputIt exclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result, T init) {
  return tilewise::exclusive_scan(policy, first, last, result, init, cuda::std::plus<>{});
}

/// @brief Exclusive prefix sum from the value type's `V{}`, as thrust::exclusive_scan(policy,
///        first, last, result).
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @return `result + (last - first)`
/// @note Synchronizes as the form with an operator.
template <class Derived, class InputIt, class OutputIt>
OutputIt exclusive_scan(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                        OutputIt result) {
  using V = typename thrust::iterator_traits<InputIt>::value_type;
  return tilewise::exclusive_scan(policy, first, last, result, V{}, cuda::std::plus<>{});
}

}  // namespace tilewise
