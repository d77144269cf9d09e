/// @file
/// @brief Moving one warp's segment of a tile between global memory and registers in the
///        "blocked" arrangement (lane l holds the segment's items [l * Items, (l + 1) * Items)),
///        with fully coalesced global accesses: the warp loads its segment striped — 16-byte
///        vectors when the iterator is an aligned raw pointer, single elements otherwise — into a
///        warp-private shared-memory stage and reads it back blocked (and the reverse for stores).
///        The stage is XOR-swizzled so that both the striped and the blocked accesses are free of
///        bank conflicts.
#pragma once

#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// Elements of T per 16-byte vector when T packs evenly into one, else 1 (also the exchange
/// buffers' padding unit in detail/block_exchange.cuh).
template <class T>
inline constexpr unsigned vec_elems = (sizeof(T) < 16 && 16 % sizeof(T) == 0) ? unsigned(16 / sizeof(T)) : 1u;

/// V elements of T moved as one access (16 bytes when V > 1).
template <class T, unsigned V>
struct alignas(V > 1 ? 16 : alignof(T)) vec {
  T e[V];
};

/// Whether `It` is a raw pointer to T (the only iterator read or written with vectors).
template <class It, class T>
inline constexpr bool is_raw_pointer_to =
  cuda::std::is_pointer_v<It> && cuda::std::is_same_v<cuda::std::remove_cv_t<cuda::std::remove_pointer_t<It>>, T>;

template <class T>
TILEWISE_DEVICE bool aligned16(T const* p) {
  return (reinterpret_cast<cuda::std::uintptr_t>(p) & 15u) == 0;
}

/// Shared-memory stage of one warp: 32 * Items elements as vectors of vec_elems<T> (Items must
/// be a multiple of vec_elems<T>, or vec_elems<T> == 1).
template <class T, unsigned Items>
struct warp_stage {
  static constexpr unsigned V = Items % vec_elems<T> == 0 ? vec_elems<T> : 1u;
  static constexpr unsigned R = Items / V;  ///< vectors per lane
  using vec_t                 = vec<T, V>;

  vec_t slot[32 * R];

  /// Physical slot of vector j: the low three bits XOR the next three, a permutation of each
  /// group of 8 slots (128 bytes) that spreads both access patterns over all banks.
  TILEWISE_DEVICE static constexpr unsigned swz(unsigned j) { return j ^ ((j >> 3) & 7u); }

  /// Loads the warp's segment `seg[0, count)` (count <= 32 * Items) into `items` (blocked).
  /// Missing items (count < 32 * Items) are copies of `fill`. Warp-collective.
  template <class It>
  TILEWISE_DEVICE void load(It seg, unsigned count, T const& fill, T (&items)[Items]) {
    unsigned const lane = threadIdx.x % 32;
    bool vectors        = false;
    if constexpr (V > 1 && is_raw_pointer_to<It, T>) {
      vectors = count == 32 * Items && aligned16(seg);
    }
    if (vectors) {
      if constexpr (V > 1 && is_raw_pointer_to<It, T>) {
        vec_t const* p = reinterpret_cast<vec_t const*>(seg);
        vec_t v[R];
#pragma unroll
        for (unsigned k = 0; k < R; ++k) {
          v[k] = p[32 * k + lane];
        }
#pragma unroll
        for (unsigned k = 0; k < R; ++k) {
          slot[swz(32 * k + lane)] = v[k];
        }
      }
    } else {
#pragma unroll
      for (unsigned m = 0; m < Items; ++m) {
        unsigned const j = 32 * m + lane;
        T const x        = j < count ? T(seg[j]) : fill;
        slot[swz(j / V)].e[j % V] = x;
      }
    }
    __syncwarp();
#pragma unroll
    for (unsigned k = 0; k < R; ++k) {
      vec_t const v = slot[swz(lane * R + k)];
#pragma unroll
      for (unsigned i = 0; i < V; ++i) {
        items[k * V + i] = v.e[i];
      }
    }
    __syncwarp();
  }

  /// Stores `items` (blocked) to the warp's segment `seg[0, count)`. Warp-collective.
  template <class It>
  TILEWISE_DEVICE void store(It seg, unsigned count, T const (&items)[Items]) {
    unsigned const lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned k = 0; k < R; ++k) {
      vec_t v;
#pragma unroll
      for (unsigned i = 0; i < V; ++i) {
        v.e[i] = items[k * V + i];
      }
      slot[swz(lane * R + k)] = v;
    }
    __syncwarp();
    bool vectors = false;
    if constexpr (V > 1 && is_raw_pointer_to<It, T>) {
      vectors = count == 32 * Items && aligned16(seg);
    }
    if (vectors) {
      if constexpr (V > 1 && is_raw_pointer_to<It, T>) {
        vec_t* p = reinterpret_cast<vec_t*>(seg);
#pragma unroll
        for (unsigned k = 0; k < R; ++k) {
          p[32 * k + lane] = slot[swz(32 * k + lane)];
        }
      }
    } else {
#pragma unroll
      for (unsigned m = 0; m < Items; ++m) {
        unsigned const j = 32 * m + lane;
        if (j < count) {
          seg[j] = slot[swz(j / V)].e[j % V];
        }
      }
    }
    __syncwarp();
  }
};

}  // namespace tilewise::detail
