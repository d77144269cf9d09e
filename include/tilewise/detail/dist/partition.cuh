/// @file
/// @brief Internals of dist::group_by: the owner rank of a key (a hash independent of the one
///        device::group_by's tables use), the per-owner counts and the scatter of pairs into one
///        bucket per owner.
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/hash_slots.cuh>
#include <tilewise/tile/atomic.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// The rank that owns key k among `ranks`: the high half of (hash * ranks), with a hash that
/// differs from the tables' (their slot comes from key_hash of the plain key bits), so that one
/// rank's keys still spread over every slot of its tables.
template <class K>
TILEWISE_DEVICE unsigned owner_of(K k, unsigned ranks) {
  auto const bits = static_cast<unsigned long long>(static_cast<key_bits_t<K>>(k));
  return static_cast<unsigned>(__umul64hi(mix_bits(bits ^ 0xD6E8FEB86659FD93ull), ranks));
}

/// counts[r] += the number of keys owned by rank r (counts zeroed before; ranks counters of
/// shared memory per block, dynamic).
template <class KeysIt>
TILEWISE_KERNEL void owner_counts_kernel(KeysIt keys, long long n, unsigned ranks, unsigned long long* counts) {
  extern __shared__ unsigned long long block_counts[];
  for (unsigned r = threadIdx.x; r < ranks; r += blockDim.x) block_counts[r] = 0;
  __syncthreads();
  long long const stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    atomicAdd(block_counts + owner_of(keys[i], ranks), 1ull);
  }
  __syncthreads();
  for (unsigned r = threadIdx.x; r < ranks; r += blockDim.x) {
    if (block_counts[r] != 0) atomicAdd(counts + r, block_counts[r]);
  }
}

/// cursors[r] = counts[0] + ... + counts[r - 1], and the record this rank sends the others:
/// record[r] = counts[r], record[ranks] = the most pairs it can receive (one thread; ranks is small).
/// A template only so that every translation unit including this header may define it (-rdc).
template <class Unused = void>
TILEWISE_KERNEL void bucket_starts_kernel(unsigned long long const* counts, unsigned ranks, unsigned long long* cursors,
                                          unsigned long long* record, unsigned long long max_received) {
  unsigned long long at = 0;
  for (unsigned r = 0; r < ranks; ++r) {
    cursors[r] = at;
    record[r]  = counts[r];
    at += counts[r];
  }
  record[ranks] = max_received;
}

/// Pair i goes to the next free position of its owner's bucket (warp-aggregated: one atomic per
/// owner per warp); order inside a bucket is unspecified.
template <class KeysIt, class ValuesIt, class K, class V>
TILEWISE_KERNEL void scatter_by_owner_kernel(KeysIt keys, ValuesIt values, long long n, unsigned ranks,
                                             unsigned long long* cursors, K* keys_out, V* values_out) {
  long long const stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    K const k                    = keys[i];
    unsigned long long const pos = tile::atomic_add(cg::coalesced_threads(), cursors + owner_of(k, ranks), 1ull);
    keys_out[pos]                = k;
    values_out[pos]              = V(values[i]);
  }
}

}  // namespace tilewise::detail
