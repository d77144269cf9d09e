/// @file
/// @brief Per-tile (or per-block) records the device-wide kernels publish to each other through
///        temp storage, and the decoupled look-back that reads them.
///
/// A record holds a tile's value (its aggregate, or the inclusive prefix through it) and a tag
/// `epoch * 4 + flag`. Writers store with release semantics, readers load with acquire (no
/// `volatile`): a reader that sees the tag also sees the value. Records of T <= 4 bytes are one
/// 64-bit word (a 32-bit tag with the epoch's low 30 bits, and the value), written and read by
/// single 64-bit accesses. Larger T keep a 64-bit tag per record and their values in two arrays
/// (one per flag, each written once per launch, before the tag). A 16-byte vector access, which
/// could hold an 8-byte value with its tag, is not single-copy atomic in the PTX memory model;
/// 16-byte packed records (tag + value) gave wrong prefixes on the H200 for 1- and 4-byte values
/// (8-byte values passed; the cause was not pinned down), so no record relies on it. The epoch (detail::next_epoch) changes every
/// launch, so records of earlier launches and garbage read as "not written yet": temp storage
/// needs no clearing (a stale packed record could match only if the same temp storage saw 2^30
/// launches that all left it unwritten).
#pragma once

#include <cuda/atomic>
#include <cuda/std/cstdint>
#include <cuda/std/cstring>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

enum status_flag : unsigned { status_partial = 1, status_inclusive = 2 };

template <class T>
inline constexpr bool packed_status = sizeof(T) <= 4;

/// One record as read: the tag and the value it vouches for.
template <class T>
struct status_entry {
  unsigned long long tag;
  T value;
};

/// Device view of the records of one launch (trivially copyable: a kernel argument).
template <class T>
struct tile_status {
  unsigned long long* tags;  ///< one word per record: (tag << 32 | value) when packed, else the tag
  T* partial;                ///< unpacked only: values published with status_partial
  T* inclusive;              ///< unpacked only: values published with status_inclusive
  unsigned long long epoch;

  using word_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
  static constexpr unsigned long long epoch_mask = packed_status<T> ? (1ull << 30) - 1 : ~0ull >> 2;

  /// Bytes of the three parts for `count` records (host side: the temp-storage layout).
  static constexpr std::size_t tag_bytes(std::size_t count) { return count * 8; }
  static constexpr std::size_t value_bytes(std::size_t count) { return packed_status<T> ? 0 : count * sizeof(T); }

  /// Publishes record i: one thread; release (everything the block wrote before is visible to
  /// the reader that sees the tag, given a barrier between those writes and this call).
  TILEWISE_DEVICE void publish(long long i, status_flag flag, T const& v) const {
    unsigned long long const tag = (epoch & epoch_mask) * 4 + flag;
    if constexpr (packed_status<T>) {
      unsigned bits = 0;
      cuda::std::memcpy(&bits, &v, sizeof(T));
      word_ref(tags[i]).store(tag << 32 | bits, cuda::std::memory_order_release);
    } else {
      (flag == status_inclusive ? inclusive : partial)[i] = v;
      word_ref(tags[i]).store(tag, cuda::std::memory_order_release);
    }
  }

  /// Reads record i (acquire). `ready(e)` tells whether this launch wrote it.
  TILEWISE_DEVICE status_entry<T> load(long long i) const {
    status_entry<T> e;
    unsigned long long const w = word_ref(tags[i]).load(cuda::std::memory_order_acquire);
    if constexpr (packed_status<T>) {
      e.tag               = w >> 32;
      unsigned const bits = static_cast<unsigned>(w);
      cuda::std::memcpy(&e.value, &bits, sizeof(T));
    } else {
      e.tag = w;
      if (ready(e)) {
        e.value = ((e.tag & 3) == status_inclusive ? inclusive : partial)[i];
      }
    }
    return e;
  }

  TILEWISE_DEVICE bool ready(status_entry<T> const& e) const { return (e.tag >> 2) == (epoch & epoch_mask); }
  TILEWISE_DEVICE static bool is_inclusive(status_entry<T> const& e) { return (e.tag & 3) == status_inclusive; }

  /// Waits (with back-off) until this launch wrote record i, and returns it. Deadlock-free when
  /// record i is written by a block with a lower index than the caller's (blocks are dispatched
  /// in index order, the assumption CUB's single-pass scan makes too).
  TILEWISE_DEVICE status_entry<T> wait(long long i) const {
    status_entry<T> e = load(i);
    for (unsigned k = 0; !ready(e); ++k) {
      back_off(k);
      e = load(i);
    }
    return e;
  }

  /// Pause before poll k + 1: none for the first polls (the record is usually about to appear),
  /// then a short sleep that stays short (a long one would delay every tile behind this one).
  TILEWISE_DEVICE static void back_off(unsigned k) {
    if (k >= 2) {
      __nanosleep(k < 6 ? 32u : 128u);
    }
  }
};

/// Decoupled look-back (Merrill & Garland 2016) by one full warp of the block that owns `tile`
/// (tile >= 1): the combination, in tile order, of the values of all tiles before `tile`. Each
/// step reads a window of the 32 preceding records, waits until every one is written, and stops
/// at the nearest inclusive one; op need not commute. The result is on every lane.
/// `FirstDelayNs` > 0 sleeps that long before the first window and `PollDelayNs` > 0 between polls
/// of a window not yet complete (instead of tile_status::back_off), as CUB's sm_90 scan tunings
/// do (fewer polls competing with the data for L2); 0 and 0 is the default path.
template <unsigned FirstDelayNs = 0, unsigned PollDelayNs = 0, class T, class Op>
TILEWISE_DEVICE T look_back(tile_status<T> const& s, long long tile, Op& op) {
  tile_lanes<32> const l;
  unsigned const lane = l.rank;
  T acc{};
  bool have     = false;
  long long end = tile;  // window [end - 32, end)
  if constexpr (FirstDelayNs > 0) {
    __nanosleep(FirstDelayNs);
  }
  while (true) {
    long long const i = end - 32 + lane;
    status_entry<T> e{};
    bool ok = i < 0;
    if (!ok) {
      e  = s.load(i);
      ok = s.ready(e);
    }
    for (unsigned k = 0; !__all_sync(0xFFFFFFFFu, ok); ++k) {
      if constexpr (PollDelayNs > 0) {
        __nanosleep(PollDelayNs);
      } else {
        tile_status<T>::back_off(k);
      }
      if (!ok) {
        e  = s.load(i);
        ok = s.ready(e);
      }
    }
    unsigned const incl  = __ballot_sync(0xFFFFFFFFu, i >= 0 && tile_status<T>::is_inclusive(e));
    // Lanes [first, 32) take part: from the nearest inclusive record (tile 0's always is).
    unsigned const first = incl ? 31 - __clz(incl) : (end < 32 ? unsigned(32 - end) : 0u);
    T const moved        = l.shfl(e.value, lane + first < 32 ? lane + first : 31u);
    T const window       = reduce_tile_partial(l, moved, op, 32 - first);
    acc                  = have ? T(op(window, acc)) : window;
    have                 = true;
    if (incl) {
      return acc;
    }
    end -= 32;
  }
}

}  // namespace tilewise::detail
