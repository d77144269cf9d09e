/// @file
/// @brief tilewise::reduce: thrust::reduce's signatures on Thrust CUDA policies, computed by
///        device::reduce (one kernel launch, bitwise run-to-run deterministic).
#pragma once

#include <cstdint>

#include <cuda/std/functional>

#include <thrust/iterator/iterator_traits.h>

#include <tilewise/detail/thrust/canonical.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/two_phase.cuh>
#include <tilewise/device/reduce.cuh>

namespace tilewise {

/// @brief Reduction, as thrust::reduce: `init op *first op ... op *(last - 1)`.
/// @tparam Derived  a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                  `(alloc)` forms, thrust::device
/// @tparam InputIt  random-access iterator (device_vector iterator, device_ptr, raw device
///                  pointer, Thrust fancy iterator); elements are converted to T
/// @tparam T        the accumulator and result type (that of `init`), trivially copyable
/// @tparam Op       associative and commutative binary functor on T
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param init          the initial value
/// @param op            the reduction operator
/// @return the reduction, on the host
/// @throws std::invalid_argument when last < first or `first` is a null pointer;
///         thrust::system_error for a CUDA error; what the policy's allocator throws
/// @note Synchronizes the policy's stream under every policy, par_nosync included (the value
///       must reach the host), as thrust::reduce does; an empty range returns `init` without
///       touching the GPU. Deterministic for a fixed range length on one GPU.
template <class Derived, class InputIt, class T, class Op>
T reduce(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last, T init, Op op) {
  constexpr char const* call = "tilewise::reduce";
  auto& p                    = detail::derived_policy(policy);
  std::int64_t const n       = detail::checked_count(first, last, call);
  if (n == 0) {
    return init;
  }
  auto const in = detail::canonical_input(first);
  detail::check_not_null(in, call, "first is a null pointer");
  auto const o = detail::canonical<T>(op);
  return detail::run_two_phase_result<T>(
    p,
    [&](void* temp, std::size_t& bytes, T* value, cudaStream_t s) {
      return device::reduce(temp, bytes, in, value, n, o, init, s);
    },
    call);
}

/// @brief Sum with `init`, as thrust::reduce(policy, first, last, init): `reduce(policy, first,
///        last, init, plus<>)`.
/// @tparam T the accumulator and result type
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param init          the initial value
/// @return the sum, on the host
/// @note Synchronizes, as the five-argument form.
template <class Derived, class InputIt, class T>
T reduce(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last, T init) {
  return tilewise::reduce(policy, first, last, init, cuda::std::plus<>{});
}

/// @brief Sum in the input's value type V starting from V(0), as thrust::reduce(policy, first, last).
/// @tparam InputIt random-access iterator with value type V
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @return the sum, on the host
/// @note Synchronizes, as the five-argument form.
template <class Derived, class InputIt>
typename thrust::iterator_traits<InputIt>::value_type reduce(thrust::cuda_cub::execution_policy<Derived> const& policy,
                                                             InputIt first, InputIt last) {
  using V = typename thrust::iterator_traits<InputIt>::value_type;
  return tilewise::reduce(policy, first, last, V(0), cuda::std::plus<>{});
}

}  // namespace tilewise
