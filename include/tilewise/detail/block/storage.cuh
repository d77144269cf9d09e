/// @file
/// @brief Internals of the block scope (block::reduce, block::inclusive_scan,
///        block::exclusive_scan): the caller-owned shared memory that carries the tile totals
///        (one barrier, two barriers, raking), the one-barrier exchange, the slot loads and stores.
///
/// Consecutive calls reuse the storage without a barrier: with two barriers (and raking, in
/// place) a call's totals and results are read before the barrier after which the next call
/// writes them; with one barrier the totals alternate between two buffers by a per-thread phase
/// bit, repaired on a fresh storage whose phases disagree. The argument: `docs/design/block_exchange.md`.
#pragma once

#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/vec.cuh>

namespace tilewise::detail {

// ---- caller-owned storage -------------------------------------------------------------------------

template <class T, unsigned N>
inline constexpr unsigned padded = (N + vec_elems<T> - 1) / vec_elems<T> * vec_elems<T>;

template <class T>
inline constexpr unsigned storage_align = alignof(T) > 16 ? unsigned(alignof(T)) : 16u;

/// Where the k-th value of a buffer of slots sits: at k (`Row == 0`), or with one unused element
/// after every `Row` values (raking). With Row = one 128-byte row of T, a warp's 32 consecutive
/// values and the raking lanes' strided runs (lane i reads value i * K + j at step j) both touch
/// every bank once per 128 bytes (`docs/design/block_exchange.md`).
template <unsigned Row>
struct slot_layout {
  static constexpr bool contiguous = Row == 0;
  __host__ __device__ static constexpr unsigned at(unsigned k) { return Row == 0 ? k : k + k / Row; }
};
using contiguous_slots = slot_layout<0>;
template <class T>
using raking_slots = slot_layout<(sizeof(T) <= 16 && 128 % sizeof(T) == 0) ? unsigned(128 / sizeof(T)) : 0u>;

/// Scratch of a block primitive. Raw bytes, so that T needs no default constructor to live in
/// `__shared__`; every array is padded to whole 16-byte vectors.
/// One barrier: two buffers of `Slots` tile totals and one phase byte per thread.
/// Two barriers: `Slots` tile totals and `Slots + 1` results of warp 0's combine.
/// Raking: `Slots` (= BlockSize) values and the total in raking_slots, the results in place.
template <class T, unsigned Slots, unsigned BlockSize, bool OneBarrier, bool Raking = false>
struct block_storage;

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, true> {
  static constexpr unsigned stride = padded<T, Slots>;

  alignas(storage_align<T>) unsigned char slots[2 * stride * sizeof(T)];
  unsigned char phase[BlockSize];

  TILEWISE_DEVICE T* buffer(unsigned p) { return reinterpret_cast<T*>(slots) + p * stride; }
};

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, false> {
  alignas(storage_align<T>) unsigned char total_bytes[padded<T, Slots> * sizeof(T)];
  alignas(storage_align<T>) unsigned char result_bytes[padded<T, Slots + 1> * sizeof(T)];

  TILEWISE_DEVICE T* totals() { return reinterpret_cast<T*>(total_bytes); }
  TILEWISE_DEVICE T* results() { return reinterpret_cast<T*>(result_bytes); }
};

template <class T, unsigned Slots, unsigned BlockSize>
struct block_storage<T, Slots, BlockSize, false, true> {
  alignas(storage_align<T>) unsigned char bytes[padded<T, raking_slots<T>::at(Slots) + 1> * sizeof(T)];

  TILEWISE_DEVICE T* totals() { return reinterpret_cast<T*>(bytes); }
  TILEWISE_DEVICE T* results() { return totals(); }  // in place: every lane of warp 0 reads its run first
};

/// The storage of a plan (`plan.one_barrier`, `plan.raking`): per tile (W lanes), or per thread when
/// raking. (Plain bools: GCC 12 crashes on a block_plan template argument of an alias template.)
template <class T, unsigned BlockSize, unsigned W, bool OneBarrier, bool Raking>
using plan_storage = block_storage<T, Raking ? BlockSize : block_shape<BlockSize, W>::tiles, BlockSize, OneBarrier, Raking>;

/// One call's view of the exchange: the phase is read on entry; the tile leaders write their
/// totals to `write_buffer()`; `publish` is the barrier and returns the buffer to read.
template <class T, class Storage, unsigned BlockSize>
struct exchange {
  Storage& s;
  unsigned rank;
  unsigned p;

  TILEWISE_DEVICE exchange(Storage& storage, unsigned thread_rank)
      : s(storage), rank(thread_rank), p(storage.phase[thread_rank] & 1u) {}

  TILEWISE_DEVICE T* write_buffer() { return s.buffer(p); }

  /// The one barrier. `leader`, `slot`, `total`: this thread's contribution, written again only
  /// when the phases disagree (fresh storage). Returns the buffer that holds every tile total.
  TILEWISE_DEVICE T const* publish(bool leader, unsigned slot, T const& total) {
    unsigned const same = unsigned(__syncthreads_count(int(p)));
    if (same != 0 && same != BlockSize) {  // every thread sees the same count, so all come here
      if (leader && p != 0) {
        s.buffer(0)[slot] = total;
      }
      __syncthreads();
      p = 0;
    }
    s.phase[rank] = static_cast<unsigned char>(p ^ 1u);
    return s.buffer(p);
  }
};

// ---- loads from the exchange buffer ---------------------------------------------------------------

/// x[0, K) = values [first, first + K) of buf (placed by Layout) with 16-byte loads when the
/// layout allows; elements at or past `bound` are not loaded (their registers hold unspecified
/// values). `Full`: first + K <= bound is known, or the buffer is padded far enough that reading
/// past `bound` stays inside it.
template <unsigned K, bool Full, class Layout = contiguous_slots, class T>
TILEWISE_DEVICE void load_slots(T const* buf, unsigned first, unsigned bound, T* x) {
  constexpr bool vectors = Full && Layout::contiguous && vec_elems<T> > 1 && (K * sizeof(T)) % 16 == 0;
  if constexpr (vectors) {
    constexpr unsigned n = K * sizeof(T) / 16;
    uint4 raw[n];
    uint4 const* src = reinterpret_cast<uint4 const*>(buf + first);
#pragma unroll
    for (unsigned i = 0; i < n; ++i) {
      raw[i] = src[i];
    }
    __builtin_memcpy(x, raw, sizeof(raw));
  } else {
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      if (Full || first + i < bound) {
        x[i] = buf[Layout::at(first + i)];
      }
    }
  }
}

/// Values [first, first + K) of buf (placed by Layout) = x[0, K), 16-byte stores when the layout
/// allows; elements at or past `bound` are not stored. `Full`: first + K <= bound is known.
template <unsigned K, bool Full, class Layout = contiguous_slots, class T>
TILEWISE_DEVICE void store_slots(T* buf, unsigned first, unsigned bound, T const* x) {
  constexpr bool vectors = Full && Layout::contiguous && vec_elems<T> > 1 && (K * sizeof(T)) % 16 == 0;
  if constexpr (vectors) {
    constexpr unsigned n = K * sizeof(T) / 16;
    uint4 raw[n];
    __builtin_memcpy(raw, x, sizeof(raw));
    uint4* dst = reinterpret_cast<uint4*>(buf + first);
#pragma unroll
    for (unsigned i = 0; i < n; ++i) {
      dst[i] = raw[i];
    }
  } else {
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      if (Full || first + i < bound) {
        buf[Layout::at(first + i)] = x[i];
      }
    }
  }
}

/// Rounds K up so that a load of all `Slots` totals from offset 0 is whole 16-byte vectors
/// (the buffers are padded to that length).
template <class T, unsigned K>
inline constexpr unsigned padded_count = padded<T, K>;

}  // namespace tilewise::detail
