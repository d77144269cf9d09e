/// @file
/// @brief The exact sum of float block partials by integer atomics: grid::reduce of float plus on
///        grids below last_block_min_blocks blocks.
///
/// A finite float is an integer multiple of 2^-149 below 2^277, so it is an integer of at most 277
/// bits in units of 2^-149 (fixed point). Cut into 44-bit digits, its 24-bit significand lands in
/// at most two of 7 digits. Every block adds its partial's digits, as signed values, to 7 words of
/// the call's arrival line (one 64-bit atomic per word, all from one warp instruction); each word
/// also counts the blocks in (bits 54..63), so a word that holds every block's count holds every
/// block's digit: the blocks spin until all 7 words are complete (the top one also counts
/// infinities, NaNs and negative zeros), with no store to wait for and no other memory to read afterwards.
/// Integer addition is exact and commutes, so the words hold the same bits whatever the order of
/// the arrivals, and every block rounds them the same way. Measured on the H200 (bench/RESULTS.md,
/// session 9): 1.44-1.52x a bare grid.sync() at 256 x 132 over nine runs, against 1.62x for
/// partials + grid.sync() + a fold.
///
/// Rounding: the digit words, scaled to doubles (exactly), are added from the top digit down.
/// Each running sum is exact while it fits in 53 bits, and once it does not, the digits left are
/// below 2^-44 of it, so the double is within 2^-50 of the exact sum, relatively (and exact when
/// the sum is 0); the float is that double rounded. The result is the float nearest the exact sum
/// of the partials, unless that sum lies within 2^-50 (relatively) of a point halfway between two
/// floats. Infinities, NaNs and zeros give what IEEE addition gives: NaN if any partial is NaN or
/// both infinities appear, -0 if every partial is -0, else +0 for a zero sum.
#pragma once

#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/grid_partials.cuh>

namespace tilewise::detail {

/// grid::reduce of float under plus (the ops tilewise knows as plus: cuda::std::plus, cg::plus).
template <class Op, class T>
inline constexpr bool exact_float_sum = cuda::std::is_same_v<T, float> && kind_v<Op, T> == op_kind::plus;

inline constexpr unsigned exact_digit_bits = 44;
inline constexpr unsigned exact_digits     = 7;  ///< 44-bit digits: 2^-149 .. 2^159
inline constexpr unsigned exact_words      = exact_digits;
inline constexpr unsigned exact_shift      = 54;  ///< the count of blocks: bits 54..63
/// Each block adds below 2^45 to a digit word (2^44 plus or minus its digit); the sum must stay
/// below the count bits.
inline constexpr unsigned exact_max_blocks = (1u << (exact_shift - exact_digit_bits - 1)) - 1;
/// The top digit holds bits 264.. of the largest floats' significands (up to bit 276): its word adds
/// 2^13 plus or minus the digit (the sum stays below 2^23), and counts +inf at bit 24, -inf at bit
/// 34 (a NaN counts as both) and -0 at bit 44 (a sum of only negative zeros is -0).
inline constexpr unsigned exact_top_bits = 277 - exact_digit_bits * (exact_digits - 1);
inline constexpr unsigned exact_pinf = 24, exact_ninf = 34, exact_nzero = 44;
static_assert(exact_words <= arrival_words, "the words of an exact sum must be zeroed by grid_call::prepare_next");
// a significand (24 bits, lowest bit at 0 .. 253) spans two digits at most, the top one included
static_assert(exact_digit_bits >= 24 && 253 / exact_digit_bits + 1 == exact_digits - 1);
static_assert(exact_max_blocks < 1u << (exact_pinf - exact_top_bits - 1) && exact_max_blocks < 1u << 10 &&
              exact_nzero + 10 <= exact_shift);

/// What lane `j` (< exact_words) of a block adds to word j for the block's partial `p`: one count
/// (2^54) plus the bias and the signed digit, and for the top word the counts of special values.
TILEWISE_DEVICE unsigned long long exact_addend(float p, unsigned j) {
  using u64            = unsigned long long;
  constexpr u64 mask   = (u64(1) << exact_digit_bits) - 1;
  constexpr u64 top    = exact_digits - 1;
  unsigned const bits  = __float_as_uint(p);
  unsigned const e     = (bits >> 23) & 0xFFu;
  unsigned const m     = bits & 0x7FFFFFu;
  bool const neg       = (bits >> 31) != 0;
  bool const finite    = e != 0xFFu;
  unsigned const q     = e - (e != 0);  // the significand's lowest bit, in units of 2^-149
  unsigned const k     = q / exact_digit_bits, s = q - k * exact_digit_bits;
  u64 const sig        = m | (e != 0 ? 0x800000u : 0u);
  u64 const digit      = !finite ? 0 : j == k ? (sig << s) & mask : j == k + 1 ? sig >> (exact_digit_bits - s) : 0;
  u64 const bias       = j == top ? u64(1) << exact_top_bits : u64(1) << exact_digit_bits;
  u64 const inf_pos    = u64(1) << exact_pinf, inf_neg = u64(1) << exact_ninf;
  u64 const special    = j != top                 ? 0
                         : bits == 0x80000000u    ? u64(1) << exact_nzero
                         : finite                 ? 0
                         : m != 0                 ? inf_pos + inf_neg
                         : neg                    ? inf_neg
                                                  : inf_pos;
  return (u64(1) << exact_shift) + bias + special + (neg ? u64(0) - digit : digit);  // modulo 2^64
}

/// The sum, from the complete words: lane j < exact_words of the warp holds word j. Every lane of
/// the warp calls it (it shuffles); the result is on lane 0.
TILEWISE_DEVICE float exact_value(unsigned long long word, unsigned lane, unsigned blocks) {
  using u64          = unsigned long long;
  constexpr u64 top  = exact_digits - 1;
  unsigned const bias_bits = lane == top ? exact_top_bits : exact_digit_bits;
  u64 const field    = word & ((u64(1) << (lane == top ? exact_pinf : exact_shift)) - 1);
  // digit j scaled by 2^(44 j - 149), exactly (|digit| < 2^53, a normal double)
  double const scale = __longlong_as_double((long long)(u64(1023 + exact_digit_bits * (lane % exact_digits) - 149) << 52));
  double const t     = lane < exact_digits ? double((long long)(field - (u64(blocks) << bias_bits))) * scale : 0.0;
  double s           = __shfl_sync(0xFFFFFFFFu, t, exact_digits - 1);
#pragma unroll
  for (int j = int(exact_digits) - 2; j >= 0; --j) {
    s += __shfl_sync(0xFFFFFFFFu, t, j);
  }
  unsigned const special = unsigned(__shfl_sync(0xFFFFFFFFu, word, exact_digits - 1) >> exact_pinf);
  unsigned const inf_pos = special & 0x3FFu, inf_neg = (special >> (exact_ninf - exact_pinf)) & 0x3FFu;
  bool const neg_zeros   = ((special >> (exact_nzero - exact_pinf)) & 0x3FFu) == blocks;
  float const inf        = __int_as_float(0x7F800000);
  float const r          = inf_pos != 0 ? (inf_neg != 0 ? __int_as_float(0x7FFFFFFF) : inf) : inf_neg != 0 ? -inf : 0.0f;
  return inf_pos != 0 || inf_neg != 0 ? r : neg_zeros ? -0.0f : __double2float_rn(s);  // other zero sums: +0
}

}  // namespace tilewise::detail
