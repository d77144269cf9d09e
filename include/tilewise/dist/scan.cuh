/// @file
/// @brief dist::inclusive_scan and dist::exclusive_scan: prefix scans of data sharded over the
///        ranks of an NCCL communicator, in rank order.
///
/// How: each rank scans its shard with device::inclusive_scan / exclusive_scan (rank 0's
/// exclusive scan starting from `init`, the others from the op's identity) and one thread takes
/// the shard's total from its last element; one ncclAllGather of sizeof(T) bytes per rank gives
/// every rank all totals; ranks after the first then combine the fold of the totals before
/// theirs into each of their elements (one more pass over their shard).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/dist/ranks.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/device/scan.cuh>

namespace tilewise::detail {

/// Shared by both distributed scans. `T` is the scan's value type; `init` is used by the
/// exclusive scan only.
template <bool Exclusive, class InIt, class OutIt, class T, class Op, class Exchange>
cudaError_t dispatch_dist_scan(void* temp, std::size_t& temp_bytes, InIt in, OutIt out, long long num_items, Op op,
                               T init, rank_info r, Exchange const& x, cudaStream_t stream) {
  require_identity<Op, T>();
  T const first = Exclusive && r.rank == 0 ? init : identity_of<Op, T>();  // this rank's local seed
  auto const local = [&](void* t, std::size_t& bytes) {
    if constexpr (Exclusive) {
      return device::exclusive_scan(t, bytes, in, out, num_items, op, first, stream);
    } else {
      return device::inclusive_scan(t, bytes, in, out, num_items, op, stream);
    }
  };
  if (r.ranks == 1) {  // nothing to exchange: the device call, in the caller's temp
    return local(temp, temp_bytes);
  }
  std::size_t inner_bytes = 0;
  TILEWISE_RETURN_IF_ERROR(local(nullptr, inner_bytes));
  dist_parts<T> const parts(r.ranks, inner_bytes);
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(parts.check(temp, temp_bytes, query));
  if (query) {
    return cudaSuccess;
  }
  if (num_items < 0 || (num_items > 0 && (null_pointer(in) || null_pointer(out)))) {
    return cudaErrorInvalidValue;
  }
  T* const total  = temp_layout::at<T>(temp, parts.total);
  T* const last   = temp_layout::at<T>(temp, parts.last);
  T* const totals = temp_layout::at<T>(temp, parts.totals);
  auto const o    = thrust::try_unwrap_contiguous_iterator(out);
  if (Exclusive && num_items > 0) {  // before the scan: `out` may be `in`
    last_item_kernel<<<1, 1, 0, stream>>>(thrust::try_unwrap_contiguous_iterator(in), num_items, last);
    TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  }
  if (num_items > 0) {
    TILEWISE_RETURN_IF_ERROR(local(temp_layout::at<unsigned char>(temp, parts.inner), inner_bytes));
  }
  shard_total_kernel<Exclusive><<<1, 1, 0, stream>>>(o, num_items, static_cast<T const*>(last), first, op, total);
  TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  TILEWISE_RETURN_IF_ERROR(x.all_gather(total, totals, sizeof(T), stream));
  if (r.rank == 0 || num_items == 0) {
    return cudaSuccess;
  }
  constexpr unsigned block = dist_tuned.block;
  unsigned blocks          = 0;
  TILEWISE_RETURN_IF_ERROR(dist_grid(num_items, blocks));
  prefix_fixup_kernel<block><<<blocks, block, 0, stream>>>(o, num_items, static_cast<T const*>(totals), r.rank, op);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::dist {

/// @brief Inclusive prefix scan over the shards of all ranks in rank order: element i of rank k
///        gets `s_0 op ... op s_{k-1} op in[0] op ... op in[i]`, s_j the total of rank j's shard.
/// @tparam InputIt  random-access iterator over T (raw pointer, thrust::device_ptr, Thrust
///                  fancy iterators)
/// @tparam OutputIt random-access output iterator accepting T; may equal `in` (in-place)
/// @tparam Op       associative operator with an identity tilewise knows: plus, minimum,
///                  maximum or a bitwise operator on an arithmetic T (compile-time error otherwise)
/// @param temp       device scratch, or nullptr to query `temp_bytes` (the query needs `comm`)
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         this rank's shard `in[0, num_items)`
/// @param out        this rank's part of the result, `out[0, num_items)`
/// @param num_items  this rank's number of elements, >= 0 (ranks may differ, 0 included)
/// @param op         the scan's operator
/// @param comm       the communicator the shards are spread over, one GPU per rank; every rank
///                   calls with the same op
/// @param stream     the stream of this rank's work
/// @return as dist::reduce
/// @note Asynchronous in `stream`: the device scan, a one-thread kernel, one ncclAllGather of
///       sizeof(T) bytes per rank, and on ranks after the first one more pass over the shard;
///       with one rank, the device scan alone. Never synchronizes beyond what NCCL's collective
///       implies. A rank that returns an error before its collective leaves the others waiting.
template <class InputIt, class OutputIt, class Op>
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, ncclComm_t comm, cudaStream_t stream = 0) {
  using T = detail::iter_value_t<InputIt>;
  detail::rank_info r;
  TILEWISE_RETURN_IF_ERROR(detail::query_ranks(comm, r));
  return detail::dispatch_dist_scan<false>(temp, temp_bytes, in, out, num_items, op, T{}, r,
                                           detail::nccl_exchange{comm}, stream);
}

/// @brief Exclusive prefix scan over the shards of all ranks in rank order: element i of rank k
///        gets `init op s_0 op ... op s_{k-1} op in[0] op ... op in[i-1]`.
/// @tparam InputIt  random-access iterator over values convertible to T
/// @tparam OutputIt random-access output iterator accepting T; may equal `in` (in-place)
/// @tparam Op       as dist::inclusive_scan
/// @tparam T        the scan's value type (that of `init`)
/// @param temp       device scratch, or nullptr to query `temp_bytes` (the query needs `comm`)
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         this rank's shard `in[0, num_items)`
/// @param out        this rank's part of the result, `out[0, num_items)`
/// @param num_items  this rank's number of elements, >= 0 (ranks may differ, 0 included)
/// @param op         the scan's operator
/// @param init       the value before the first element of rank 0; every rank passes the same
/// @param comm       the communicator the shards are spread over, one GPU per rank
/// @param stream     the stream of this rank's work
/// @return as dist::reduce
/// @note As dist::inclusive_scan, with one more one-thread kernel before the scan (it keeps the
///       shard's last element for the total, as the scan may overwrite it in place).
template <class InputIt, class OutputIt, class Op, class T>
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, T init, ncclComm_t comm, cudaStream_t stream = 0) {
  detail::rank_info r;
  TILEWISE_RETURN_IF_ERROR(detail::query_ranks(comm, r));
  return detail::dispatch_dist_scan<true>(temp, temp_bytes, in, out, num_items, op, init, r,
                                          detail::nccl_exchange{comm}, stream);
}

}  // namespace tilewise::dist
