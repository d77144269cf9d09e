/// @file
/// @brief 16-byte vectors of T (vec, vec_elems), bit-keeping conversions and the alignment test
///        that the vector load and store paths use.
#pragma once

#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// Elements of T per 16-byte vector when T packs evenly into one, else 1 (also the padding unit
/// of the block scope's buffers).
template <class T>
inline constexpr unsigned vec_elems = (sizeof(T) < 16 && 16 % sizeof(T) == 0) ? unsigned(16 / sizeof(T)) : 1u;

/// V elements of T moved as one access (16 bytes when V > 1).
template <class T, unsigned V>
struct alignas(V > 1 ? 16 : alignof(T)) vec {
  T e[V];
};

/// Whether converting a U to a T keeps its bits: the same type, or integers of one size (C++20
/// integer conversions are modulo 2^N; int64_t and long long, int32 and uint32), bool excepted.
template <class U, class T>
inline constexpr bool converts_bitwise =
  cuda::std::is_same_v<U, T> || (cuda::std::is_integral_v<U> && cuda::std::is_integral_v<T> && sizeof(U) == sizeof(T) &&
                                 !cuda::std::is_same_v<U, bool> && !cuda::std::is_same_v<T, bool>);

template <class T>
TILEWISE_DEVICE bool aligned16(T const* p) {
  return (reinterpret_cast<cuda::std::uintptr_t>(p) & 15u) == 0;
}

}  // namespace tilewise::detail
