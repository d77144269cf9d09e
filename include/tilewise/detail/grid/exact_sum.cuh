/// @file
/// @brief The exact sum of float block partials by integer atomics: grid::reduce of float plus on
///        grids of up to exact_max_blocks blocks.
///
/// Each block adds its partial as 7 fixed-point digits of 40 bits (units of 2^-149, negatives
/// modulo 2^280) and a word of counts (negatives, infinities, NaNs, -0) to 8 words of the call's
/// arrival line, every word also counting the block in (bits 52..63). Integer addition is exact
/// and commutes, so every block rounds the same words to the same float: the one nearest the
/// exact sum, unless that sum lies within 2^-50 (relatively) of a tie; special values as IEEE
/// addition gives them. Representation, rounding bound, ordering: `docs/design/exact_float_sum.md`.
#pragma once

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/grid/partials.cuh>

namespace tilewise::detail {

/// grid::reduce of float under plus (the ops tilewise knows as plus: cuda::std::plus, cg::plus).
template <class Op, class T>
inline constexpr bool exact_float_sum = cuda::std::is_same_v<T, float> && kind_v<Op, T> == op_kind::plus;

inline constexpr unsigned exact_digit_bits = 40;
inline constexpr unsigned exact_digits     = 7;  ///< 40-bit digits: 2^-149 .. 2^131, modulo 2^280
inline constexpr unsigned exact_words      = exact_digits + 1;  ///< the digits, then the counts
inline constexpr unsigned exact_shift      = 52;  ///< the count of blocks: bits 52..63
/// Each block adds below 2^40 to a digit word; the sum must stay below the count bits, and the
/// count must fit above them.
inline constexpr unsigned exact_max_blocks = (1u << (64 - exact_shift)) - 1;
/// The counts word: negative finite partials at bit 0, +inf at 12, -inf at 24 (a NaN counts as
/// both) and -0 at 36 (a sum of only negative zeros is -0).
inline constexpr unsigned exact_neg = 0, exact_pinf = 12, exact_ninf = 24, exact_nzero = 36, exact_field_bits = 12;
static_assert(exact_words <= arrival_words, "the words of an exact sum must be zeroed by grid_call::prepare_next");
static_assert(exact_words * 8 <= 64, "the words of an exact sum fill at most two 32-byte sectors");
// a significand (24 bits, lowest bit at 0 .. 253) spans two digits at most, and the top digit
// holds it whole (its bits end at 276 < 280)
static_assert(exact_digit_bits >= 24 && 253 / exact_digit_bits == exact_digits - 1 &&
              253 % exact_digit_bits + 24 <= exact_digit_bits && exact_digit_bits * exact_digits >= 277);
static_assert((static_cast<unsigned long long>(exact_max_blocks) << exact_digit_bits) < (1ull << exact_shift) &&
              exact_max_blocks < 1u << exact_field_bits && exact_nzero + exact_field_bits <= exact_shift);

/// What lane `j` (< exact_words) of a block adds to word j for the block's partial `p`: one count
/// (2^52) plus, for a digit word, digit j of p modulo 2^280, for the last word p's counts.
TILEWISE_DEVICE unsigned long long exact_addend(float p, unsigned j) {
  using u64            = unsigned long long;
  constexpr u64 mask   = (u64(1) << exact_digit_bits) - 1;
  unsigned const bits  = __float_as_uint(p);
  unsigned const e     = (bits >> 23) & 0xFFu;
  unsigned const m     = bits & 0x7FFFFFu;
  bool const finite    = e != 0xFFu;
  bool const neg       = (bits >> 31) != 0 && finite && (bits & 0x7FFFFFFFu) != 0;  // -0 adds nothing
  unsigned const q     = e - (e != 0);  // the significand's lowest bit, in units of 2^-149
  unsigned const k     = q / exact_digit_bits, s = q - k * exact_digit_bits;
  u64 const sig        = m | (e != 0 ? 0x800000u : 0u);
  u64 const low        = (sig << s) & mask;  // digit k of |p| (digit k + 1: sig >> (40 - s))
  u64 const mag        = !finite ? 0 : j == k ? low : j == k + 1 ? sig >> (exact_digit_bits - s) : 0;
  // -|p| modulo 2^280: 0 below its lowest nonzero digit L, 2^40 - digit at L, 2^40 - 1 - digit above
  unsigned const lowest = low != 0 ? k : k + 1;
  u64 const digit      = !neg ? mag : j < lowest ? 0 : j == lowest ? (mask + 1) - mag : mask - mag;
  u64 const counts     = bits == 0x80000000u ? u64(1) << exact_nzero
                         : finite            ? u64(neg) << exact_neg
                         : m != 0            ? (u64(1) << exact_pinf) + (u64(1) << exact_ninf)
                         : (bits >> 31) != 0 ? u64(1) << exact_ninf
                                             : u64(1) << exact_pinf;
  return (u64(1) << exact_shift) + (j == exact_digits ? counts : digit);
}

/// The sum, from the complete words: lane j < exact_words of the warp holds word j (its bits
/// above exact_shift are ignored). Every lane of the warp calls it (it shuffles); the result is on
/// lane 0.
TILEWISE_DEVICE float exact_value(unsigned long long word, unsigned lane, unsigned blocks) {
  using u64             = unsigned long long;
  constexpr u64 fmask   = (u64(1) << exact_field_bits) - 1;
  u64 const field       = word & ((u64(1) << exact_shift) - 1);
  u64 const counts      = __shfl_sync(0xFFFFFFFFu, field, exact_digits);
  u64 const negatives   = (counts >> exact_neg) & fmask;
  // the top digit less the 2^280 of each negative partial's two's complement (|result| < 2^52)
  long long const digit = (long long)(lane == exact_digits - 1 ? field - (negatives << exact_digit_bits) : field);
  // digit j scaled by 2^(40 j - 149), exactly (a normal double)
  double const scale = __longlong_as_double((long long)(u64(1023 + exact_digit_bits * (lane % exact_digits) - 149) << 52));
  double const t     = lane < exact_digits ? double(digit) * scale : 0.0;
  double s           = __shfl_sync(0xFFFFFFFFu, t, exact_digits - 1);
#pragma unroll
  for (int j = int(exact_digits) - 2; j >= 0; --j) {
    s += __shfl_sync(0xFFFFFFFFu, t, j);
  }
  bool const inf_pos   = ((counts >> exact_pinf) & fmask) != 0, inf_neg = ((counts >> exact_ninf) & fmask) != 0;
  bool const neg_zeros = ((counts >> exact_nzero) & fmask) == blocks;
  float const inf      = __int_as_float(0x7F800000);
  float const r        = inf_pos ? (inf_neg ? __int_as_float(0x7FFFFFFF) : inf) : inf_neg ? -inf : 0.0f;
  return inf_pos || inf_neg ? r : neg_zeros ? -0.0f : __double2float_rn(s);  // other zero sums: +0
}

}  // namespace tilewise::detail
