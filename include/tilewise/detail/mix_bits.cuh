/// @file
/// @brief detail::mix_bits: splitmix64's finaliser, for hashing keys (group_by, dist) and for
///        drawing a starting point on the host (launch epochs).
#pragma once

namespace tilewise::detail {

/// splitmix64's finaliser: a bijection on 64 bits whose every output bit depends on every input bit.
__host__ __device__ constexpr unsigned long long mix_bits(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace tilewise::detail
