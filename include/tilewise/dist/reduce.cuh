/// @file
/// @brief dist::reduce: the reduction of data sharded over the ranks of an NCCL communicator,
///        the same result on every rank.
///
/// How: each rank reduces its shard with device::reduce (rank 0 starting from `init`, the others
/// from the op's identity), the ranks' totals go to every rank with one ncclAllGather of
/// sizeof(T) bytes per rank, and one thread folds them in rank order. Every rank therefore gets
/// the same bits, floating point included, for a fixed sharding.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/dist/ranks.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/device/reduce.cuh>

namespace tilewise::detail {

template <class InIt, class OutIt, class T, class Op, class Exchange>
cudaError_t dispatch_dist_reduce(void* temp, std::size_t& temp_bytes, InIt in, OutIt out, long long num_items, Op op,
                                 T init, rank_info r, Exchange const& x, cudaStream_t stream) {
  require_identity<Op, T>();
  if (r.ranks == 1) {  // nothing to exchange: the device call, in the caller's temp
    return device::reduce(temp, temp_bytes, in, out, num_items, op, init, stream);
  }
  std::size_t inner_bytes = 0;
  TILEWISE_RETURN_IF_ERROR(device::reduce(nullptr, inner_bytes, in, static_cast<T*>(nullptr), num_items, op, init, stream));
  dist_parts<T> const parts(r.ranks, inner_bytes);
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(parts.check(temp, temp_bytes, query));
  if (query) {
    return cudaSuccess;
  }
  if (null_pointer(out)) {
    return cudaErrorInvalidValue;
  }
  T* const total  = temp_layout::at<T>(temp, parts.total);
  T* const totals = temp_layout::at<T>(temp, parts.totals);
  TILEWISE_RETURN_IF_ERROR(device::reduce(temp_layout::at<unsigned char>(temp, parts.inner), inner_bytes, in, total,
                                          num_items, op, r.rank == 0 ? init : identity_of<Op, T>(), stream));
  TILEWISE_RETURN_IF_ERROR(x.all_gather(total, totals, sizeof(T), stream));
  fold_ranks_kernel<<<1, 1, 0, stream>>>(static_cast<T const*>(totals), r.ranks, op, out);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::dist {

/// @brief Reduction over the shards of all ranks: `*out = init op s_0 op s_1 op ... op s_{P-1}` on
///        every rank, where s_k is the reduction of rank k's `in[0, num_items)`.
/// @tparam InputIt  random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                  iterators) over values convertible to T
/// @tparam OutputIt random-access output iterator accepting T (one element, device memory)
/// @tparam Op       associative, commutative operator with an identity tilewise knows: plus,
///                  minimum, maximum or a bitwise operator on an arithmetic T (compile-time error
///                  otherwise)
/// @tparam T        the accumulator type (that of `init`)
/// @param temp       device scratch, or nullptr to query `temp_bytes` (the query needs `comm`)
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         this rank's shard `in[0, num_items)`
/// @param out        where the result is written on this rank
/// @param num_items  this rank's number of elements, >= 0 (ranks may differ, 0 included)
/// @param op         the reduction's operator
/// @param init       combined on the left once (rank 0's shard starts from it)
/// @param comm       the communicator the shards are spread over, one GPU per rank; every rank
///                   calls with the same op and init
/// @param stream     the stream of this rank's work
/// @return cudaSuccess; cudaErrorInvalidValue for a null `comm`, null pointers with work to do,
///         a negative num_items or too small a `temp_bytes`; an NCCL error as cudaError_t
///         (invalid argument or usage: cudaErrorInvalidValue; otherwise cudaErrorUnknown); or a
///         launch's error
/// @note Asynchronous in `stream`: device::reduce, one ncclAllGather of sizeof(T) bytes per
///       rank and a one-thread kernel; with one rank, device::reduce alone. Never synchronizes
///       beyond what NCCL's collective implies (it waits in `stream` for every rank). A rank that
///       returns an error before its collective leaves the others waiting in theirs, as with
///       NCCL itself. Floating-point results are the same bits on every rank and from run to run
///       for a fixed sharding.
template <class InputIt, class OutputIt, class Op, class T>
cudaError_t reduce(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items, Op op,
                   T init, ncclComm_t comm, cudaStream_t stream = 0) {
  detail::rank_info r;
  TILEWISE_RETURN_IF_ERROR(detail::query_ranks(comm, r));
  return detail::dispatch_dist_reduce(temp, temp_bytes, in, out, num_items, op, init, r, detail::nccl_exchange{comm},
                                      stream);
}

}  // namespace tilewise::dist
