/// @file
/// @brief The bin of a sample under cub::DeviceHistogram::HistogramEven's arithmetic (its "scale"
///        transform), bit for bit, and an exact faster form of the integer case for ranges below
///        2^32. The derivation of the faster form: docs/design/histogram_even.md.
#pragma once

#include <cuda_runtime_api.h>

#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// n / d, inline: out of line, a register-capped kernel compiled with -rdc (libtilewise.a, or a
/// user's -rdc build) could not call it, as ptxas gives a separately compiled callee its own
/// register count.
template <class W>
__host__ __device__ inline W wide_quotient(W n, W d) {
  return n / d;
}

/// The bin arithmetic of HistogramEven for `Sample`s and levels of type `Level`, in CUB's types:
/// the common type of the two (`common_t`), and for integers a wider unsigned type (`wide_t`,
/// 32 bits when sample and common type together take at most 4 bytes, else 64) for
/// `(sample - lower) * bins / (upper - lower)`. Floating point: `int((sample - lower) * recip)`
/// with `recip = bins / (upper - lower)` computed on the host in `common_t`.
template <class Sample, class Level>
struct even_scale {
  static_assert(cuda::std::is_arithmetic_v<Sample> && cuda::std::is_arithmetic_v<Level>,
                "tilewise::device::histogram_even: samples and levels must be arithmetic types");
  using common_t = cuda::std::common_type_t<Level, Sample>;
  static_assert(sizeof(common_t) <= 8, "tilewise::device::histogram_even: 128-bit samples are not supported");
  static constexpr bool floating = cuda::std::is_floating_point_v<common_t>;
  using wide_t =
    cuda::std::conditional_t<sizeof(Sample) + sizeof(common_t) <= 4, cuda::std::uint32_t, cuda::std::uint64_t>;
  using diff_t = decltype(common_t{} - common_t{});  // the type C++ subtracts common_t values in

  common_t lo{}, hi{};
  common_t recip{};         ///< floating point only
  wide_t bins{}, range{};   ///< integers only: CUB's fraction, widened
  cuda::std::uint32_t a{};  ///< fast form: bins / range ...
  cuda::std::uint32_t b{};  ///< ... bins % range ...
  cuda::std::uint64_t m{};  ///< ... floor(b * 2^64 / range)
  unsigned shift  = 0;      ///< fast form with range = bins * 2^shift: the bin is d >> shift
  bool pow2       = false;
  bool fast       = false;  ///< integers whose differences and range fit 32 bits
  unsigned num_bins = 0;

  /// `x - y` in diff_t, wrapping where C++ would overflow (as CUB's code does on the GPU).
  __host__ __device__ static diff_t sub(common_t x, common_t y) {
    if constexpr (cuda::std::is_integral_v<diff_t>) {
      using u = cuda::std::make_unsigned_t<diff_t>;
      return static_cast<diff_t>(static_cast<u>(static_cast<diff_t>(x)) - static_cast<u>(static_cast<diff_t>(y)));
    } else {
      return x - y;
    }
  }

  /// Host: CUB's Init. cudaErrorInvalidValue where CUB fails (integer products that may overflow
  /// wide_t), for `num_bins < 1`, `!(lower < upper)` (NaN bounds), and where `num_bins` does not
  /// fit `common_t` (CUB would truncate it).
  cudaError_t init(int nb, Level lower, Level upper) {
    lo = static_cast<common_t>(lower);
    hi = static_cast<common_t>(upper);
    if (nb < 1 || !(lo < hi)) return cudaErrorInvalidValue;
    num_bins = static_cast<unsigned>(nb);
    if constexpr (floating) {
      recip = static_cast<common_t>(static_cast<common_t>(nb) / static_cast<common_t>(hi - lo));
    } else {
      common_t const cb = static_cast<common_t>(nb);
      if (static_cast<long long>(cb) != nb) return cudaErrorInvalidValue;
      bins = static_cast<wide_t>(cb);
      // CUB's MayOverflow: the untruncated difference against max / bins
      wide_t const span = static_cast<wide_t>(sub(hi, lo));
      if (bins == 0 || span > cuda::std::numeric_limits<wide_t>::max() / bins) return cudaErrorInvalidValue;
      range = static_cast<wide_t>(static_cast<common_t>(sub(hi, lo)));
      if (range == 0) return cudaErrorInvalidValue;
      fast = static_cast<cuda::std::uint64_t>(span) <= 0xFFFFFFFFull &&
             static_cast<cuda::std::uint64_t>(range) <= 0xFFFFFFFFull;
      if (fast) {
        cuda::std::uint64_t const r = range, q = static_cast<cuda::std::uint64_t>(bins) / r;
        a = static_cast<cuda::std::uint32_t>(q);
        b = static_cast<cuda::std::uint32_t>(static_cast<cuda::std::uint64_t>(bins) - q * r);
        m = static_cast<cuda::std::uint64_t>((static_cast<unsigned __int128>(b) << 64) / r);
        // bins of a power-of-two width (bins * 2^k == range): floor(d * bins / range) = d >> k
        cuda::std::uint64_t const w = r / static_cast<cuda::std::uint64_t>(bins);
        if (w * static_cast<cuda::std::uint64_t>(bins) == r && (w & (w - 1)) == 0) {
          pow2 = true;
          while ((cuda::std::uint64_t{1} << shift) < w) ++shift;
        }
      }
    }
    return cudaSuccess;
  }

  /// CUB's bin of a sample in [lo, hi) (floating point: may come out >= num_bins at upper's edge).
  __host__ __device__ int exact(common_t s) const {
    if constexpr (floating) {
      return static_cast<int>((s - lo) * recip);
    } else {
      return static_cast<int>(wide_quotient<wide_t>(static_cast<wide_t>(sub(s, lo)) * bins, range));
    }
  }

  /// The same bin for integers when `fast`: a shift for bins of a power-of-two width; otherwise
  /// bins/range = a + b/range, so the bin is a*d + floor(d*b/range); the high half of d*m is that
  /// floor or one less, and one comparison of exact 64-bit products tells which.
  TILEWISE_DEVICE unsigned fast_bin(common_t s) const {
    auto const d = static_cast<cuda::std::uint32_t>(static_cast<wide_t>(sub(s, lo)));
    if (pow2) return d >> shift;
    auto const mh = static_cast<cuda::std::uint32_t>(m >> 32), ml = static_cast<cuda::std::uint32_t>(m);
    auto q = static_cast<cuda::std::uint32_t>((static_cast<cuda::std::uint64_t>(d) * mh + __umulhi(d, ml)) >> 32);
    q += static_cast<cuda::std::uint64_t>(d) * b >= static_cast<cuda::std::uint64_t>(q + 1) * range;
    return a * d + q;
  }

  /// Whether sample `x` falls in a bin, and which: CUB's validity test (lower <= x < upper in
  /// common_t; NaN fails) and bin, kept only below num_bins.
  template <bool Fast>
  TILEWISE_DEVICE bool bin_of(Sample x, unsigned& bin) const {
    return in_range<Fast>(x, bin) && bin < num_bins;
  }

  /// bin_of without the bound on the bin: whether lower <= x < upper, and then its bin, which may
  /// be num_bins or more (floating point at upper's edge); the caller bounds it (a privatized
  /// pass against the end of its bin range, one comparison for both). Straight-line, without an
  /// early return, so that ptxas predicates it (why: docs/design/histogram_even.md, what bounds
  /// the rows).
  template <bool Fast>
  TILEWISE_DEVICE bool in_range(Sample x, unsigned& bin) const {
    common_t const s = static_cast<common_t>(x);
    bool const in    = s >= lo && s < hi;
    if constexpr (Fast && !floating) {
      bin = fast_bin(s);  // wraps harmlessly out of range
    } else {
      bin = in ? static_cast<unsigned>(exact(s)) : 0u;
    }
    return in;
  }

  /// The bin of sample `x` as CUB computes it, or -1 where it falls in none (out of range, NaN,
  /// or a floating-point bin >= num_bins).
  __host__ __device__ int bin_or_none(Sample x) const {
    common_t const s = static_cast<common_t>(x);
    if (!(s >= lo && s < hi)) return -1;
    int const k = exact(s);
    return k >= 0 && static_cast<unsigned>(k) < num_bins ? k : -1;
  }
};

}  // namespace tilewise::detail
