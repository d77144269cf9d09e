/// @file
/// @brief What the Thrust-style calls read from a Thrust CUDA execution policy (its stream,
///        whether it may skip synchronization, whether it carries an allocator), how they report
///        errors (thrust::system_error, std::invalid_argument) and how they finish a call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <thrust/detail/execute_with_allocator.h>
#include <thrust/system/cuda/detail/util.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

namespace tilewise::detail {

/// A Thrust CUDA policy (par, par_nosync, `.on(stream)`, `par(alloc)`, thrust::device) as the
/// mutable derived object Thrust's own customization points take.
template <class Derived>
Derived& derived_policy(thrust::cuda_cub::execution_policy<Derived> const& policy) {
  return const_cast<Derived&>(static_cast<Derived const&>(policy));
}

/// True for policies made by `par(alloc)` / `par_nosync(alloc)` (Thrust's execute_with_allocator).
template <class Policy>
inline constexpr bool has_allocator_v = false;
template <class Allocator, template <class> class Base>
inline constexpr bool has_allocator_v<thrust::detail::execute_with_allocator<Allocator, Base>> = true;

/// The policy's stream (Thrust's default stream when none was attached).
template <class Derived>
cudaStream_t policy_stream(Derived& policy) {
  return thrust::cuda_cub::stream(policy);
}

/// False under par_nosync: the call may return before its kernels have finished.
template <class Derived>
bool policy_blocks(Derived& policy) {
  return thrust::cuda_cub::must_perform_optional_synchronization(policy);
}

/// Throws thrust::system_error (cuda category) for a failed CUDA call; clears the runtime's last
/// error first, as Thrust does, so it does not leak into unrelated calls.
inline void throw_on_error(cudaError_t status, char const* call) {
  (void)cudaGetLastError();
  if (status != cudaSuccess) {
    throw thrust::system_error(status, thrust::cuda_category(), call);
  }
}

/// Throws std::invalid_argument("<call>: <what>").
[[noreturn]] inline void throw_invalid(char const* call, char const* what) {
  throw std::invalid_argument(std::string(call) + ": " + what);
}

/// last - first as a 64-bit count; std::invalid_argument("<call>: <what>") when last < first.
template <class It>
std::int64_t checked_count(It first, It last, char const* call, char const* what = "last < first") {
  auto const n = static_cast<std::int64_t>(std::distance(first, last));
  if (n < 0) {
    throw_invalid(call, what);
  }
  return n;
}

/// std::invalid_argument("<call>: <name> is a null pointer") for a null raw pointer.
template <class It>
void check_not_null(It const& it, char const* call, char const* what) {
  if constexpr (std::is_pointer_v<It>) {
    if (it == nullptr) {
      throw_invalid(call, what);
    }
  }
}

/// The end of a call whose results stay on the device: waits for the stream unless the policy
/// is par_nosync.
template <class Derived>
void finish(Derived& policy, char const* call) {
  if (policy_blocks(policy)) {
    throw_on_error(cudaStreamSynchronize(policy_stream(policy)), call);
  }
}

}  // namespace tilewise::detail
