/// @file
/// @brief dist::histogram_even: the histogram of samples sharded over the ranks of an NCCL
///        communicator, the same counts on every rank.
///
/// How: each rank counts its shard with device::histogram_even into `hist`, then one
/// ncclAllReduce sums the counters of all ranks in place (num_bins counters per rank).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/dist/ranks.cuh>
#include <tilewise/device/histogram_even.cuh>

namespace tilewise::detail {

template <class SampleIt, class Counter, class Level, class Exchange>
cudaError_t dispatch_dist_histogram_even(void* temp, std::size_t& temp_bytes, SampleIt samples, Counter* hist,
                                         int num_bins, Level lower, Level upper, long long num_items, rank_info r,
                                         Exchange const& x, cudaStream_t stream) {
  TILEWISE_RETURN_IF_ERROR(
    device::histogram_even(temp, temp_bytes, samples, hist, num_bins, lower, upper, num_items, stream));
  if (temp == nullptr || r.ranks == 1) {
    return cudaSuccess;
  }
  return x.all_reduce_sum(hist, static_cast<std::size_t>(num_bins), stream);
}

}  // namespace tilewise::detail

namespace tilewise::dist {

/// @brief Histogram over the shards of all ranks: `hist[b]` on every rank = the number of
///        samples of all ranks in bin b, with device::histogram_even's bins and rules.
/// @tparam SampleIt random-access iterator to arithmetic samples (raw pointer,
///                  thrust::device_ptr, Thrust fancy iterators)
/// @tparam Counter  int32, uint32, int64 or uint64
/// @tparam Level    the type of the bounds, as device::histogram_even
/// @param temp       device scratch, or nullptr to query `temp_bytes` (the query needs `comm`)
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`):
///                   device::histogram_even's
/// @param samples    this rank's samples `samples[0, num_items)`
/// @param hist       device pointer to `num_bins` counters, overwritten on every rank
/// @param num_bins   number of bins, >= 1; the same on every rank
/// @param lower      lower bound of the first bin (inclusive); the same on every rank
/// @param upper      upper bound of the last bin (exclusive); the same on every rank
/// @param num_items  this rank's number of samples, >= 0 (ranks may differ, 0 included)
/// @param comm       the communicator the samples are spread over, one GPU per rank
/// @param stream     the stream of this rank's work
/// @return as device::histogram_even, and cudaErrorInvalidValue for a null `comm`; an NCCL error
///         as cudaError_t (invalid argument or usage: cudaErrorInvalidValue; otherwise
///         cudaErrorUnknown)
/// @note Asynchronous in `stream`: device::histogram_even, then one ncclAllReduce of num_bins
///       counters (none with one rank). Never synchronizes beyond what NCCL's collective implies.
///       Counters wrap modulo 2^bits of Counter over the sum of all ranks. Ranks that pass
///       different `num_bins` make NCCL's collective mismatch (NCCL does not detect it).
template <class SampleIt, class Counter, class Level>
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, SampleIt samples, Counter* hist, int num_bins,
                           Level lower, Level upper, std::int64_t num_items, ncclComm_t comm,
                           cudaStream_t stream = 0) {
  detail::rank_info r;
  TILEWISE_RETURN_IF_ERROR(detail::query_ranks(comm, r));
  return detail::dispatch_dist_histogram_even(temp, temp_bytes, samples, hist, num_bins, lower, upper, num_items, r,
                                              detail::nccl_exchange{comm}, stream);
}

}  // namespace tilewise::dist
