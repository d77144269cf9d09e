/// @file
/// @brief Internals of the distributed calls: NCCL results as cudaError_t, the rank and size of
///        a communicator, the exchange of per-rank totals (NCCL, or a stand-in for tests), and
///        the kernels that fold the totals of the ranks in rank order.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include <cuda/cmath>
#include <cuda/std/cstring>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/tuning.cuh>

namespace tilewise::detail {

/// An NCCL result as the cudaError_t the distributed calls return: invalid arguments and usage
/// as cudaErrorInvalidValue, a CUDA error inside NCCL as that error, anything else as
/// cudaErrorUnknown.
inline cudaError_t from_nccl(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return cudaSuccess;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return cudaErrorInvalidValue;
    case ncclUnhandledCudaError: {
      cudaError_t const e = cudaGetLastError();
      return e != cudaSuccess ? e : cudaErrorUnknown;
    }
    default:
      return cudaErrorUnknown;
  }
}

/// This process's rank in a communicator and the number of ranks.
struct rank_info {
  int rank  = 0;
  int ranks = 1;
};

inline cudaError_t query_ranks(ncclComm_t comm, rank_info& r) {
  if (comm == nullptr) {
    return cudaErrorInvalidValue;
  }
  TILEWISE_RETURN_IF_ERROR(from_nccl(ncclCommCount(comm, &r.ranks)));
  return from_nccl(ncclCommUserRank(comm, &r.rank));
}

/// The NCCL type of a histogram counter.
template <class C>
constexpr ncclDataType_t nccl_counter_type() {
  static_assert(cuda::std::is_integral_v<C> && (sizeof(C) == 4 || sizeof(C) == 8),
                "tilewise::dist::histogram_even: counters must be 32- or 64-bit integers");
  if constexpr (sizeof(C) == 4) {
    return cuda::std::is_signed_v<C> ? ncclInt32 : ncclUint32;
  } else {
    return cuda::std::is_signed_v<C> ? ncclInt64 : ncclUint64;
  }
}

/// The exchange of the distributed calls over an NCCL communicator (a test substitutes its own).
struct nccl_exchange {
  ncclComm_t comm;

  /// Every rank's `bytes` at `send`, in rank order, into `recv` on every rank.
  cudaError_t all_gather(void const* send, void* recv, std::size_t bytes, cudaStream_t s) const {
    return from_nccl(ncclAllGather(send, recv, bytes, ncclUint8, comm, s));
  }
  /// Buckets to every rank: rank p receives this rank's items [send_at[p], send_at[p] + send_n[p])
  /// of `send`, and this rank receives recv_n[p] items from rank p at `recv` + recv_at[p] (items
  /// of `item_bytes`). Grouped ncclSend / ncclRecv; the bucket to itself is a copy.
  cudaError_t all_to_all_v(void const* send, unsigned long long const* send_at, unsigned long long const* send_n,
                           void* recv, unsigned long long const* recv_at, unsigned long long const* recv_n,
                           std::size_t item_bytes, int rank, int ranks, cudaStream_t s) const {
    auto const* src = static_cast<unsigned char const*>(send);
    auto* dst       = static_cast<unsigned char*>(recv);
    if (recv_n[rank] > 0) {
      TILEWISE_RETURN_IF_ERROR(cudaMemcpyAsync(dst + recv_at[rank] * item_bytes, src + send_at[rank] * item_bytes,
                                               recv_n[rank] * item_bytes, cudaMemcpyDeviceToDevice, s));
    }
    TILEWISE_RETURN_IF_ERROR(from_nccl(ncclGroupStart()));
    ncclResult_t r = ncclSuccess;
    for (int p = 0; p < ranks && r == ncclSuccess; ++p) {
      if (p == rank) continue;
      if (send_n[p] > 0) {
        r = ncclSend(src + send_at[p] * item_bytes, send_n[p] * item_bytes, ncclUint8, p, comm, s);
      }
      if (r == ncclSuccess && recv_n[p] > 0) {
        r = ncclRecv(dst + recv_at[p] * item_bytes, recv_n[p] * item_bytes, ncclUint8, p, comm, s);
      }
    }
    ncclResult_t const end = ncclGroupEnd();
    return from_nccl(r != ncclSuccess ? r : end);
  }
  /// The element-wise sum over the ranks of `count` counters, in place, on every rank.
  template <class C>
  cudaError_t all_reduce_sum(C* buf, std::size_t count, cudaStream_t s) const {
    return from_nccl(ncclAllReduce(buf, buf, count, nccl_counter_type<C>(), ncclSum, comm, s));
  }
};

/// The rule the distributed folds rely on: the ranks' totals combine with the op's identity
/// standing for an empty shard.
template <class Op, class T>
constexpr void require_identity() {
  static_assert(has_identity<Op, T>,
                "tilewise::dist: the operator needs an identity tilewise knows (plus, minimum, maximum, bit_and, "
                "bit_or, bit_xor on an arithmetic type)");
}

template <class Op, class T>
constexpr T identity_of() {
  return identity<kind_v<Op, T>, T>();
}

/// `totals[0] op totals[1] op ... op totals[count - 1]` (count >= 1), in rank order.
template <class T, class Op>
TILEWISE_DEVICE T fold_ranks(T const* totals, int count, Op& op) {
  T acc = totals[0];
  for (int k = 1; k < count; ++k) {
    acc = T(op(acc, totals[k]));
  }
  return acc;
}

/// *out = the fold of all ranks' totals (distributed reduce).
template <class T, class OutIt, class Op>
TILEWISE_KERNEL void fold_ranks_kernel(T const* totals, int count, Op op, OutIt out) {
  *out = fold_ranks(totals, count, op);
}

/// Reads in[n - 1] before an in-place exclusive scan overwrites it.
template <class T, class InIt>
TILEWISE_KERNEL void last_item_kernel(InIt in, long long n, T* last) {
  *last = T(in[n - 1]);
}

/// This rank's total after its local scan: out[n - 1] (inclusive) or out[n - 1] op last
/// (exclusive), `empty` for an empty shard.
template <bool Exclusive, class T, class OutIt, class Op>
TILEWISE_KERNEL void shard_total_kernel(OutIt out, long long n, T const* last, T empty, Op op, T* total) {
  if (n == 0) {
    *total = empty;
    return;
  }
  T t = T(out[n - 1]);
  if constexpr (Exclusive) {
    t = T(op(t, *last));
  }
  *total = t;
}

/// out[i] = prefix op out[i], prefix = the fold of the totals of ranks [0, rank).
template <unsigned Block, class T, class OutIt, class Op>
TILEWISE_KERNEL void __launch_bounds__(Block) prefix_fixup_kernel(OutIt out, long long n, T const* totals, int rank, Op op) {
  __shared__ alignas(T) unsigned char prefix_bytes[sizeof(T)];
  if (threadIdx.x == 0) {
    T const p = fold_ranks(totals, rank, op);
    cuda::std::memcpy(prefix_bytes, &p, sizeof(T));
  }
  __syncthreads();
  T prefix;
  cuda::std::memcpy(&prefix, prefix_bytes, sizeof(T));
  long long const stride = static_cast<long long>(gridDim.x) * Block;
  for (long long i = static_cast<long long>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride) {
    out[i] = T(op(prefix, T(out[i])));
  }
}

/// The grid of a grid-stride pass over `num_items` (the passes beside the device calls): a block of
/// dist_tuned.block threads per that many items, at most dist_tuned.blocks_per_sm per SM, at least 1.
inline cudaError_t dist_grid(long long num_items, unsigned& blocks) {
  int sms = 0;
  TILEWISE_RETURN_IF_ERROR(sm_count(sms));
  long long const most = static_cast<long long>(dist_tuned.blocks_per_sm) * sms;
  long long const want = cuda::ceil_div(num_items, static_cast<long long>(dist_tuned.block));
  blocks               = static_cast<unsigned>(want < 1 ? 1 : want > most ? most : want);
  return cudaSuccess;
}

/// The temp storage of a distributed reduce or scan: this rank's total, its last input, the
/// totals of every rank, then the local device call's temp.
template <class T>
struct dist_parts {
  temp_layout layout;
  std::size_t total, last, totals, inner;
  dist_parts(int ranks, std::size_t inner_bytes)
      : total(layout.add(sizeof(T))), last(layout.add(sizeof(T))),
        totals(layout.add(sizeof(T) * std::size_t(ranks))), inner(layout.add(inner_bytes)) {}
  /// The two-phase protocol for these parts (check_temp).
  cudaError_t check(void const* temp, std::size_t& temp_bytes, bool& query) const {
    return check_temp(temp, temp_bytes, layout.bytes(), query);
  }
};

}  // namespace tilewise::detail
