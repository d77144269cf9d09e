/// @file
/// @brief dist::group_by: unsorted reduce-by-key over pairs sharded across the ranks of an NCCL
///        communicator; every key ends on exactly one rank, its owner.
///
/// How: each rank counts its pairs per owner rank (a hash of the key), scatters them into one
/// bucket per owner, and the ranks all-gather their counts (one synchronization of `stream`: the
/// host needs the sizes to post the exchange); the buckets then go to their owners with grouped
/// ncclSend / ncclRecv, and each rank runs device::group_by on the pairs it received.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda/std/type_traits>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/dist/partition.cuh>
#include <tilewise/detail/dist/ranks.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/device/group_by.cuh>

namespace tilewise::detail {

template <class KeysIt, class ValuesIt, class KeysOut, class AggOut, class NumOut, class Op, class Exchange>
cudaError_t dispatch_dist_group_by(void* temp, std::size_t& temp_bytes, KeysIt keys_in, ValuesIt values_in,
                                   KeysOut keys_out, AggOut aggregates_out, NumOut num_groups_out, long long num_items,
                                   long long max_received, Op op, rank_info r, Exchange const& x, cudaStream_t stream) {
  using K = cuda::std::remove_cv_t<iter_value_t<KeysIt>>;
  using V = cuda::std::remove_cv_t<iter_value_t<ValuesIt>>;
  if (r.ranks == 1) {  // nothing to exchange: the device call, in the caller's temp
    return device::group_by(temp, temp_bytes, keys_in, values_in, keys_out, aggregates_out, num_groups_out, num_items,
                            op, stream);
  }
  if (num_items < 0 || max_received < 0) {
    return cudaErrorInvalidValue;
  }
  auto const ranks = static_cast<std::size_t>(r.ranks);
  std::size_t inner_bytes = 0;
  TILEWISE_RETURN_IF_ERROR(device::group_by(nullptr, inner_bytes, static_cast<K const*>(nullptr),
                                            static_cast<V const*>(nullptr), keys_out, aggregates_out, num_groups_out,
                                            max_received, op, stream));
  temp_layout layout;
  std::size_t const counts_at  = layout.add(ranks * 8);
  std::size_t const cursors_at = layout.add(ranks * 8);
  std::size_t const record_at  = layout.add((ranks + 1) * 8);
  std::size_t const matrix_at  = layout.add(ranks * (ranks + 1) * 8);
  std::size_t const send_k_at  = layout.add(std::size_t(num_items) * sizeof(K));
  std::size_t const send_v_at  = layout.add(std::size_t(num_items) * sizeof(V));
  std::size_t const recv_k_at  = layout.add(std::size_t(max_received) * sizeof(K));
  std::size_t const recv_v_at  = layout.add(std::size_t(max_received) * sizeof(V));
  std::size_t const inner_at   = layout.add(inner_bytes);
  bool query = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query) {
    return cudaSuccess;
  }
  if (num_items > 0 && (null_pointer(keys_in) || null_pointer(values_in))) {
    return cudaErrorInvalidValue;
  }
  auto* const counts  = temp_layout::at<unsigned long long>(temp, counts_at);
  auto* const cursors = temp_layout::at<unsigned long long>(temp, cursors_at);
  auto* const record  = temp_layout::at<unsigned long long>(temp, record_at);
  auto* const matrix  = temp_layout::at<unsigned long long>(temp, matrix_at);
  K* const send_k     = temp_layout::at<K>(temp, send_k_at);
  V* const send_v     = temp_layout::at<V>(temp, send_v_at);
  K* const recv_k     = temp_layout::at<K>(temp, recv_k_at);
  V* const recv_v     = temp_layout::at<V>(temp, recv_v_at);
  auto const keys     = thrust::try_unwrap_contiguous_iterator(keys_in);
  auto const values   = thrust::try_unwrap_contiguous_iterator(values_in);

  // This rank's pairs into one bucket per owner, and its counts for the others.
  constexpr unsigned block = dist_tuned.block;
  unsigned blocks          = 0;
  TILEWISE_RETURN_IF_ERROR(dist_grid(num_items, blocks));
  TILEWISE_RETURN_IF_ERROR(cudaMemsetAsync(counts, 0, ranks * 8, stream));
  if (num_items > 0) {
    owner_counts_kernel<<<blocks, block, ranks * 8, stream>>>(keys, num_items, unsigned(ranks), counts);
    TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  }
  bucket_starts_kernel<<<1, 1, 0, stream>>>(counts, unsigned(ranks), cursors, record,
                                            static_cast<unsigned long long>(max_received));
  TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  if (num_items > 0) {
    scatter_by_owner_kernel<<<blocks, block, 0, stream>>>(keys, values, num_items, unsigned(ranks), cursors, send_k,
                                                          send_v);
    TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  }

  // Every rank's counts (row p: what rank p sends to each rank, then the most it can receive).
  TILEWISE_RETURN_IF_ERROR(x.all_gather(record, matrix, (ranks + 1) * 8, stream));
  std::vector<unsigned long long> m(ranks * (ranks + 1));
  TILEWISE_RETURN_IF_ERROR(cudaMemcpyAsync(m.data(), matrix, m.size() * 8, cudaMemcpyDeviceToHost, stream));
  TILEWISE_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  auto const sent = [&](std::size_t from, std::size_t to) { return m[from * (ranks + 1) + to]; };
  for (std::size_t q = 0; q < ranks; ++q) {  // the same verdict on every rank, before any exchange
    unsigned long long in = 0;
    for (std::size_t p = 0; p < ranks; ++p) in += sent(p, q);
    if (in > m[q * (ranks + 1) + ranks]) {
      return cudaErrorInvalidValue;
    }
  }
  auto const me = static_cast<std::size_t>(r.rank);
  std::vector<unsigned long long> send_at(ranks), send_n(ranks), recv_at(ranks), recv_n(ranks);
  unsigned long long out_at = 0, in_at = 0;
  for (std::size_t p = 0; p < ranks; ++p) {
    send_at[p] = out_at;
    send_n[p]  = sent(me, p);
    out_at += send_n[p];
    recv_at[p] = in_at;
    recv_n[p]  = sent(p, me);
    in_at += recv_n[p];
  }
  TILEWISE_RETURN_IF_ERROR(x.all_to_all_v(send_k, send_at.data(), send_n.data(), recv_k, recv_at.data(), recv_n.data(),
                                          sizeof(K), r.rank, r.ranks, stream));
  TILEWISE_RETURN_IF_ERROR(x.all_to_all_v(send_v, send_at.data(), send_n.data(), recv_v, recv_at.data(), recv_n.data(),
                                          sizeof(V), r.rank, r.ranks, stream));

  // The pairs this rank owns, grouped.
  std::size_t bytes = inner_bytes;
  return device::group_by(temp_layout::at<unsigned char>(temp, inner_at), bytes, static_cast<K const*>(recv_k),
                          static_cast<V const*>(recv_v), keys_out, aggregates_out, num_groups_out,
                          static_cast<long long>(in_at), op, stream);
}

}  // namespace tilewise::detail

namespace tilewise::dist {

/// @brief Unsorted reduce-by-key over the pairs of all ranks: every distinct key of all ranks
///        gets one row `(key, op-reduction of its values on every rank)`, on exactly one rank (its
///        owner, a hash of the key); each rank writes the rows it owns, in unspecified order.
/// @tparam KeysInputIt   random-access iterator to int32, uint32, int64 or uint64 keys
/// @tparam ValuesInputIt random-access iterator to values of a trivially copyable type
/// @tparam KeysOutputIt  random-access output iterator for this rank's keys
/// @tparam AggregatesOutputIt random-access output iterator for their aggregates
/// @tparam NumGroupsOutputIt  random-access output iterator to an integer (device memory)
/// @tparam Op            commutative, associative functor, as device::group_by
/// @param temp           device scratch, or nullptr to query `temp_bytes` (the query needs `comm`)
/// @param temp_bytes     size of `temp` (in), or the size needed (out, when `temp == nullptr`):
///                       device::group_by's for `max_received` pairs, plus a copy of this rank's
///                       pairs and room for `max_received` received ones
/// @param keys_in        this rank's keys
/// @param values_in      this rank's values (pair i is `(keys_in[i], values_in[i])`)
/// @param keys_out       receives this rank's rows' keys, room for `max_received` rows
/// @param aggregates_out receives their aggregates
/// @param num_groups_out receives this rank's number of rows
/// @param num_items      this rank's number of pairs, >= 0 (ranks may differ, 0 included)
/// @param max_received   the most pairs this rank can take from all ranks together (its temp
///                       and output room); the total number of pairs over all ranks always
///                       suffices
/// @param op             the reduction functor; the same on every rank
/// @param comm           the communicator the pairs are spread over, one GPU per rank
/// @param stream         the stream of this rank's work
/// @return cudaSuccess; cudaErrorInvalidValue for a null `comm`, a negative count, null pointers
///         with work to do, too small a `temp_bytes`, or, on every rank alike, when some rank
///         would receive more than its `max_received` (then no pair is exchanged and no output
///         written); an NCCL error as cudaError_t; or a launch's error
/// @note Synchronizes `stream` once, after the all-gather of the counts (the host posts the
///       exchange with their sizes); otherwise asynchronous. Not capturable in a graph for that
///       reason. With one rank it is device::group_by alone (no synchronization). The set of rows
///       and every integer aggregate are deterministic; floating-point sums as device::group_by.
template <class KeysInputIt, class ValuesInputIt, class KeysOutputIt, class AggregatesOutputIt,
          class NumGroupsOutputIt, class Op>
cudaError_t group_by(void* temp, std::size_t& temp_bytes, KeysInputIt keys_in, ValuesInputIt values_in,
                     KeysOutputIt keys_out, AggregatesOutputIt aggregates_out, NumGroupsOutputIt num_groups_out,
                     std::int64_t num_items, std::int64_t max_received, Op op, ncclComm_t comm,
                     cudaStream_t stream = 0) {
  detail::rank_info r;
  TILEWISE_RETURN_IF_ERROR(detail::query_ranks(comm, r));
  return detail::dispatch_dist_group_by(temp, temp_bytes, keys_in, values_in, keys_out, aggregates_out,
                                        num_groups_out, num_items, max_received, op, r, detail::nccl_exchange{comm},
                                        stream);
}

}  // namespace tilewise::dist
