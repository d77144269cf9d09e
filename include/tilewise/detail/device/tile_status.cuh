/// @file
/// @brief Per-tile (or per-block) records the device-wide kernels publish to each other through
///        temp storage (read by detail::look_back), and their parts of the temp storage.
///
/// A record holds a tile's value (its aggregate, or the inclusive prefix through it) and a tag
/// `epoch * 4 + flag`. Layouts: T <= 4 bytes, one 64-bit word {30-bit epoch tag, value}; T of 8
/// bytes, one 16-byte word {tag, value} in one `.v2.u64` access (as CUB's ScanTileState); larger
/// T, a tag per record stored with release and the values in two arrays. Records of up to 8 bytes
/// are written and read relaxed: the value travels in the tag's access. Stale or garbage records
/// read as "not written yet", so temp storage needs no clearing. The memory-order argument:
/// docs/design/look_back.md; the measurements behind each layout: docs/tuning.md.
#pragma once

#include <cuda/std/cstdint>
#include <cuda/std/cstring>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/gpu_word.cuh>

namespace tilewise::detail {

enum status_flag : unsigned { status_partial = 1, status_inclusive = 2 };

template <class T>
inline constexpr bool packed_status = sizeof(T) <= 4;
template <class T>
inline constexpr bool wide_status = sizeof(T) == 8;

/// One record as read: the tag and the value it vouches for.
template <class T>
struct status_entry {
  unsigned long long tag;
  T value;
};

/// Device view of the records of one launch (trivially copyable: a kernel argument).
template <class T>
struct tile_status {
  unsigned long long* tags;  ///< per record: (tag << 32 | value) when packed, {tag, value} when wide, else the tag
  T* partial;                ///< separate values only: values published with status_partial
  T* inclusive;              ///< separate values only: values published with status_inclusive
  unsigned long long epoch;

  static constexpr bool separate                 = !packed_status<T> && !wide_status<T>;
  static constexpr unsigned long long epoch_mask = packed_status<T> ? (1ull << 30) - 1 : ~0ull >> 2;

  /// Bytes of the three parts for `count` records (host side: the temp-storage layout).
  static constexpr std::size_t tag_bytes(std::size_t count) { return count * (wide_status<T> ? 16 : 8); }
  static constexpr std::size_t value_bytes(std::size_t count) { return separate ? count * sizeof(T) : 0; }

  /// Publishes record i (one thread): a reader that sees the tag sees `v`. It publishes nothing
  /// else the block wrote.
  TILEWISE_DEVICE void publish(long long i, status_flag flag, T const& v) const {
    unsigned long long const tag = (epoch & epoch_mask) * 4 + flag;
    if constexpr (packed_status<T>) {
      unsigned bits = 0;
      cuda::std::memcpy(&bits, &v, sizeof(T));
      gpu_word::store_relaxed(tags + i, tag << 32 | bits);
    } else if constexpr (wide_status<T>) {
      unsigned long long bits;
      cuda::std::memcpy(&bits, &v, sizeof(T));
      gpu_word::store_relaxed_pair(tags + 2 * i, tag, bits);
    } else {
      (flag == status_inclusive ? inclusive : partial)[i] = v;
      gpu_word::store_release(tags + i, tag);
    }
  }

  /// Reads record i. `ready(e)` tells whether this launch wrote it.
  TILEWISE_DEVICE status_entry<T> load(long long i) const {
    status_entry<T> e;
    if constexpr (packed_status<T>) {
      unsigned long long const w = gpu_word::load_relaxed(tags + i);
      e.tag               = w >> 32;
      unsigned const bits = static_cast<unsigned>(w);
      cuda::std::memcpy(&e.value, &bits, sizeof(T));
    } else if constexpr (wide_status<T>) {
      unsigned long long bits;
      gpu_word::load_relaxed_pair(tags + 2 * i, e.tag, bits);
      cuda::std::memcpy(&e.value, &bits, sizeof(T));
    } else {
      e.tag = gpu_word::load_acquire(tags + i);
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

/// Host side: the temp-storage parts of `count` records of T, and each launch's view of them.
template <class T>
struct tile_status_parts {
  std::size_t count;
  std::size_t tags;
  std::size_t partial;
  std::size_t inclusive;

  tile_status_parts(temp_layout& layout, long long records)
      : count(static_cast<std::size_t>(records)),
        tags(layout.add(tile_status<T>::tag_bytes(count))),
        partial(layout.add(tile_status<T>::value_bytes(count))),
        inclusive(layout.add(tile_status<T>::value_bytes(count))) {}

  /// The records of one launch, with a new epoch; the tags as prepare_tagged_part readies them.
  cudaError_t prepare(void* temp, cudaStream_t stream, tile_status<T>& status) const {
    TILEWISE_RETURN_IF_ERROR(
      prepare_tagged_part(temp_layout::at<unsigned char>(temp, tags), tile_status<T>::tag_bytes(count), stream));
    status = {temp_layout::at<unsigned long long>(temp, tags), temp_layout::at<T>(temp, partial),
              temp_layout::at<T>(temp, inclusive), next_epoch()};
    return cudaSuccess;
  }
};

}  // namespace tilewise::detail
