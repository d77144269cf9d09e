/// @file
/// @brief A Thrust-style call's run of a two-phase device call (size query, scratch, the call on
///        the policy's stream) and how it ends: synchronized as the policy says, or waiting for a
///        result the host needs (reduce's value, the count behind an output end).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/scratch.cuh>

namespace tilewise::detail {

/// `run(temp, temp_bytes, stream)` is the device call; runs its two phases with scratch from the
/// policy and returns after the launch, having waited for it unless the policy is par_nosync.
template <class Derived, class Run>
void run_two_phase(Derived& policy, Run run, char const* call) {
  cudaStream_t const s  = policy_stream(policy);
  std::size_t temp_size = 0;
  throw_on_error(run(nullptr, temp_size, s), call);
  bool const waits = policy_blocks(policy);
  scratch<Derived> mem(policy, temp_size, waits, call);
  throw_on_error(run(mem.get(), temp_size, s), call);
  finish(policy, call);
  mem.waited();  // returned after the wait: see scratch's class comment
}

/// `run(temp, temp_bytes, R* result, stream)` is a device call that writes one R to `*result`
/// (device memory, nullptr in the size query); returns that R on the host, so it always waits.
template <class R, class Derived, class Run>
R run_two_phase_result(Derived& policy, Run run, char const* call) {
  cudaStream_t const s  = policy_stream(policy);
  std::size_t temp_size = 0;
  throw_on_error(run(nullptr, temp_size, static_cast<R*>(nullptr), s), call);
  temp_layout layout;
  std::size_t const result_at = layout.add(sizeof(R));
  std::size_t const temp_at   = layout.add(temp_size);
  scratch<Derived> mem(policy, layout.bytes(), true, call);
  R* const result = temp_layout::at<R>(mem.get(), result_at);
  throw_on_error(run(temp_layout::at<unsigned char>(mem.get(), temp_at), temp_size, result, s), call);
  static_assert(std::is_trivially_copyable_v<R>, "the result type must be trivially copyable");
  R value;
  void* host = nullptr;
  if constexpr (sizeof(R) <= thread_kept::pinned_bytes) {
    host = thread_kept::pinned();
  }
  // into page-locked memory the copy is queued like the kernels; into pageable memory it waits
  throw_on_error(cudaMemcpyAsync(host != nullptr ? host : &value, result, sizeof(R), cudaMemcpyDeviceToHost, s),
                 call);
  throw_on_error(cudaStreamSynchronize(s), call);
  mem.waited();  // returned after the wait: see scratch's class comment
  if constexpr (sizeof(R) <= thread_kept::pinned_bytes) {
    if (host != nullptr) {
      std::memcpy(&value, host, sizeof(R));
    }
  }
  return value;
}

}  // namespace tilewise::detail
