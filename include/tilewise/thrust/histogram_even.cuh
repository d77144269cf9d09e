/// @file
/// @brief tilewise::histogram_even: an even-bin histogram on Thrust CUDA policies (Thrust has
///        none; the arguments follow CUB's HistogramEven in Thrust's style), computed by
///        device::histogram_even.
#pragma once

#include <cstdint>
#include <type_traits>

#include <tilewise/detail/thrust/canonical.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/two_phase.cuh>
#include <tilewise/device/histogram_even.cuh>

namespace tilewise {

/// @brief Histogram of [first, last) in `num_bins` equal bins over [lower, upper):
///        `hist_first[b]` = the number of samples in bin b (each sample's bin the one
///        cub::DeviceHistogram::HistogramEven gives it); samples outside [lower, upper) and NaN
///        are ignored. The counters are overwritten, not accumulated into.
/// @tparam Derived  a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                  `(alloc)` forms, thrust::device
/// @tparam InputIt  random-access iterator to arithmetic samples
/// @tparam HistIt   contiguous iterator (device_vector iterator, device_ptr, raw device pointer)
///                  to int32, uint32, int64 or uint64 counters
/// @tparam Level    the bounds' type (integers for integer samples, the floating type for
///                  floating samples, as CUB's LevelT)
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param first         the first sample
/// @param last          one past the last sample
/// @param hist_first    the first of `num_bins` counters
/// @param num_bins      the number of bins, >= 1
/// @param lower         the lower bound of the first bin (inclusive)
/// @param upper         the upper bound of the last bin (exclusive)
/// @return `hist_first + num_bins`
/// @throws std::invalid_argument when last < first, num_bins < 1, !(lower < upper) or a pointer
///         is null; thrust::system_error for a CUDA error (also the device call's
///         cudaErrorInvalidValue, e.g. integer bounds whose bin arithmetic would overflow); what
///         the policy's allocator throws
/// @note Under par the counters are complete on return (the stream is synchronized); under
///       par_nosync the call returns once the work is queued, without synchronizing (allocation
///       included). An empty range zeroes the counters.
template <class Derived, class InputIt, class HistIt, class Level>
HistIt histogram_even(thrust::cuda_cub::execution_policy<Derived> const& policy, InputIt first, InputIt last,
                      HistIt hist_first, int num_bins, Level lower, Level upper) {
  constexpr char const* call = "tilewise::histogram_even";
  auto& p                    = detail::derived_policy(policy);
  std::int64_t const n       = detail::checked_count(first, last, call);
  if (num_bins < 1) {
    detail::throw_invalid(call, "num_bins < 1");
  }
  if (!(lower < upper)) {
    detail::throw_invalid(call, "lower is not less than upper");
  }
  auto const in   = detail::canonical_input(first);
  auto const hist = detail::canonical_iterator(hist_first);
  static_assert(std::is_pointer_v<decltype(hist)>,
                "tilewise::histogram_even: hist_first must be contiguous (device_vector iterator, device_ptr, pointer)");
  if (n > 0) {
    detail::check_not_null(in, call, "first is a null pointer");
  }
  detail::check_not_null(hist, call, "hist_first is a null pointer");
  detail::run_two_phase(
    p,
    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return device::histogram_even(temp, bytes, in, hist, num_bins, lower, upper, n, s);
    },
    call);
  return hist_first + num_bins;
}

}  // namespace tilewise
