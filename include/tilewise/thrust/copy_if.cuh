/// @file
/// @brief tilewise::copy_if: thrust::copy_if's signatures (with and without a stencil) on Thrust
///        CUDA policies, computed by device::copy_if / device::copy_flagged (stable, one pass).
#pragma once

#include <cstdint>

#include <thrust/iterator/transform_iterator.h>

#include <tilewise/detail/thrust/canonical.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/two_phase.cuh>
#include <tilewise/device/copy_if.cuh>

namespace tilewise::detail {

/// A stencil element's flag: pred(stencil[i]) as bool (pred may be a device-only functor).
template <class Pred>
struct stencil_flag {
  Pred pred;
  _CCCL_EXEC_CHECK_DISABLE
  template <class S>
  __host__ __device__ bool operator()(S const& s) const {
    return static_cast<bool>(pred(s));
  }
};

}  // namespace tilewise::detail

namespace tilewise {

/// @brief Stable compaction, as thrust::copy_if: copies the elements of [first, last) that `pred`
///        accepts, in order, to `result`.
/// @tparam Derived  a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                  `(alloc)` forms, thrust::device
/// @tparam InputIt  random-access iterator over trivially copyable values
/// @tparam OutputIt random-access output iterator; must not overlap the input
/// @tparam Pred     unary predicate, callable on the device (device lambdas included)
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param result        the first output element
/// @param pred          the predicate: true keeps the element
/// @return the end of the output, `result + count`
/// @throws std::invalid_argument when last < first or `first` / `result` is a null pointer;
///         thrust::system_error for a CUDA error; what the policy's allocator throws
/// @note Waits for the stream under every policy, par_nosync included: the output end depends on
///       the count computed on the device (as thrust::copy_if). An empty range returns `result`.
template <class Derived, class InputIt, class OutputIt, class Pred>
OutputIt copy_if(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                 OutputIt result, Pred pred) {
  constexpr char const* call = "tilewise::copy_if";
  auto const r               = detail::checked_range(first, last, result, call);
  if (r.n == 0) {
    return result;
  }
  std::int64_t const count = detail::run_two_phase_result<std::int64_t>(
    detail::derived_policy(policy),
    [&](void* temp, std::size_t& bytes, std::int64_t* selected, cudaStream_t s) {
      return device::copy_if(temp, bytes, r.in, r.out, selected, r.n, pred, s);
    },
    call);
  return result + count;
}

/// @brief Stable compaction by a stencil, as thrust::copy_if(policy, first, last, stencil,
///        result, pred): copies `first[i]` wherever `pred(stencil[i])` holds, in order.
/// @tparam StencilIt random-access iterator over the values `pred` tests
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first input element
/// @param last          one past the last input element
/// @param stencil       the first stencil element (stencil[i] decides first[i])
/// @param result        the first output element
/// @param pred          the predicate on stencil elements: true keeps the element
/// @return the end of the output, `result + count`
/// @throws as the form without a stencil; also when `stencil` is a null pointer
/// @note Waits for the stream under every policy (the output end depends on the count).
template <class Derived, class InputIt, class StencilIt, class OutputIt, class Pred>
OutputIt copy_if(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                 StencilIt stencil, OutputIt result, Pred pred) {
  constexpr char const* call = "tilewise::copy_if";
  auto const r               = detail::checked_range(first, last, result, call);
  if (r.n == 0) {
    return result;
  }
  auto const st = detail::canonical_input(stencil);
  detail::check_not_null(st, call, "stencil is a null pointer");
  auto const flags         = thrust::make_transform_iterator(st, detail::stencil_flag<Pred>{pred});
  std::int64_t const count = detail::run_two_phase_result<std::int64_t>(
    detail::derived_policy(policy),
    [&](void* temp, std::size_t& bytes, std::int64_t* selected, cudaStream_t s) {
      return device::copy_flagged(temp, bytes, r.in, flags, r.out, selected, r.n, s);
    },
    call);
  return result + count;
}

}  // namespace tilewise
