// grid::reduce of float sums, which add the block partials exactly (detail/exact_sum.cuh) on grids
// of up to detail::exact_max_blocks (4095) blocks: the result must
// be the float nearest the exact sum of the partials (checked against an exact host sum, Shewchuk's
// expansion arithmetic), bitwise the same on every thread, with IEEE's infinities, NaNs and signed
// zeros. Thread 0 of each block holds the block's value and the other threads +0, so the partials
// are known on the host (thread 0's value crosses the warps: warp 1 reduces warp 0's values). Rounds
// per launch, back to back on one workspace (the arrival ring of 4 lines wraps more than twice):
// values over the whole exponent range, pairs +x / -x that cancel over the whole range, small
// integers beside +2^100 and -2^100 (a float fold that adds 2^100 to a small value before -2^100
// loses it; the grid.sync() way of reduce did, tree order), denormals, sums that overflow, and the
// special values. Grids of 1, 3, 4, one block per multiprocessor, last_block_min_blocks - 1 (the
// largest whose blocks spin on the words), last_block_min_blocks (the smallest whose completing
// adds publish the words) and the largest co-resident grid up to exact_max_blocks (4095 of the
// 4224 blocks of 32 or 64 threads an H200 holds: counts that fill their 12 bits); blocks of 32 (one
// warp, which reduces its own values), 64, 256 and 1024. Larger grids take the last-block way,
// checked within a tolerance by reduce_scan.cu.
#include <cooperative_groups.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>

#include <cuda/std/functional>

#include <tilewise/grid/reduce.cuh>

#include "grid_check.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

template <unsigned B, unsigned W>
__global__ void __launch_bounds__(B) reduce_rounds_kernel(float const* in, float* out, int rounds, std::size_t n,
                                                          tilewise::grid::workspace ws) {
  using grid_reduce = tilewise::grid::reduce<float, B, W>;
  __shared__ typename grid_reduce::temp_storage tmp;
  auto const grid     = cg::this_grid();
  std::size_t const i = grid.thread_rank();
  for (int k = 0; k < rounds; ++k) {
    out[k * n + i] = grid_reduce{tmp}(grid, in[k * n + i], cuda::std::plus<float>{}, ws);
  }
}

/// Exact sums of doubles as a nonoverlapping expansion (Shewchuk; two-sum with zero elimination).
struct expansion {
  std::vector<double> parts;  // increasing magnitude
  void add(double x) {
    std::size_t k = 0;
    for (double y : parts) {
      double const hi = x + y;
      double const yy = hi - x;
      double const lo = (x - (hi - yy)) + (y - yy);
      if (lo != 0) parts[k++] = lo;
      x = hi;
    }
    parts.resize(k);
    parts.push_back(x);
  }
  /// The sum, to within a unit or so in the last place of a double.
  double value() const {
    double s = 0;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) s += *it;
    return s;
  }
};

float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }
std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }

/// Whether `f` is what the exact sum of `partials` must give; `why` says what was expected.
bool expected(std::vector<float> const& partials, float f, std::string& why) {
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  expansion e;
  for (float x : partials) {
    nan |= std::isnan(x);
    pinf |= x == INFINITY;
    ninf |= x == -INFINITY;
    all_neg_zero &= bits_of(x) == 0x80000000u;
    if (std::isfinite(x)) e.add(double(x));
  }
  if (nan || (pinf && ninf)) return why = "NaN", std::isnan(f);
  if (pinf) return why = "+inf", f == INFINITY;
  if (ninf) return why = "-inf", f == -INFINITY;
  double const v = e.value();  // exact sums of floats below 2^137 are doubles up to rounding
  std::ostringstream s;
  s << "nearest float to " << v;
  why = s.str();
  if (v == 0) return bits_of(f) == (all_neg_zero ? 0x80000000u : 0u);  // IEEE: -0 only from -0s
  double const slack = std::ldexp(std::fabs(v), -46);  // the documented 2^-50, with room
  double const half_ulp_max = std::ldexp(1.0, 103);   // FLT_MAX + this rounds to infinity
  if (std::isinf(f)) return (f > 0) == (v > 0) && std::fabs(v) >= double(FLT_MAX) + half_ulp_max - slack;
  if (std::isnan(f)) return false;
  e.add(-double(f));
  double const r  = e.value();  // exact sum - f
  double const up = f == FLT_MAX ? 2 * half_ulp_max : double(std::nextafter(f, INFINITY)) - f;
  double const dn = f == -FLT_MAX ? 2 * half_ulp_max : f - double(std::nextafter(f, -INFINITY));
  return r >= -dn / 2 - slack && r <= up / 2 + slack;
}

/// A finite float with a random sign and a biased exponent drawn from [lo, hi] (0: denormal).
float random_float(std::mt19937_64& rng, unsigned lo, unsigned hi) {
  std::uniform_int_distribution<unsigned> exp(lo, hi), man(0, 0x7FFFFF), sign(0, 1);
  return from_bits(sign(rng) << 31 | exp(rng) << 23 | man(rng));
}

/// The block values of each round (size blocks each) and, for rounds whose exact sum is a float,
/// that float (NaN where only `expected` decides).
struct round_case {
  char const* name;
  std::vector<float> values;
  float exact = NAN;
};

std::vector<round_case> make_rounds(int blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 77);
  std::size_t const nb = std::size_t(blocks);
  std::vector<round_case> r;
  auto add = [&](char const* name, auto gen) {
    round_case c{name, std::vector<float>(nb)};
    for (std::size_t b = 0; b < nb; ++b) c.values[b] = gen(b);
    r.push_back(std::move(c));
  };
  add("whole exponent range", [&](std::size_t) { return random_float(rng, 0, 254); });
  {  // pairs +x, -x over the whole range; about one block in eight keeps a small value instead
    add("cancelling pairs", [&](std::size_t) { return random_float(rng, 0, 254); });
    auto& v = r.back().values;
    std::uniform_int_distribution<int> keep(0, 7);
    for (std::size_t b = 0; b + 1 < nb; b += 2) v[b + 1] = -v[b];
    for (std::size_t b = 0; b < nb; ++b) {
      if (keep(rng) == 0) v[b] = random_float(rng, 0, 140);
    }
  }
  {  // small integers, with +2^100 in block 1 and -2^100 in block 3: the sum is the integers'
    std::uniform_int_distribution<int> small(-1000, 1000);
    add("integers under +-2^100", [&](std::size_t) { return float(small(rng)); });
    auto& c = r.back();
    if (nb >= 4) {
      c.values[1] = std::ldexp(1.0f, 100);
      c.values[3] = -std::ldexp(1.0f, 100);
    }
    long long sum = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      if (nb < 4 || (b != 1 && b != 3)) sum += (long long)c.values[b];
    }
    c.exact = float(sum);  // |sum| < 2^24: exact
  }
  add("denormals", [&](std::size_t) { return random_float(rng, 0, 0); });
  add("overflowing", [&](std::size_t) { return std::fabs(random_float(rng, 254, 254)); });
  add("all -0", [&](std::size_t) { return -0.0f; });
  add("-0 but one +0", [&](std::size_t b) { return b + 1 == nb ? 0.0f : -0.0f; });
  std::uniform_int_distribution<std::size_t> any(0, nb - 1);
  add("one +inf", [&](std::size_t) { return random_float(rng, 1, 200); });
  r.back().values[any(rng)] = INFINITY;
  add("one -inf", [&](std::size_t) { return random_float(rng, 1, 200); });
  r.back().values[any(rng)] = -INFINITY;
  add("+inf and -inf", [&](std::size_t) { return random_float(rng, 1, 200); });
  r.back().values[0]      = INFINITY;
  r.back().values[nb - 1] = -INFINITY;  // one block: -inf only
  add("one NaN", [&](std::size_t) { return random_float(rng, 1, 200); });
  r.back().values[any(rng)] = NAN;
  return r;
}

template <unsigned B, unsigned W>
void check_exact(int blocks, int seed) {
  auto const rounds   = make_rounds(blocks, std::uint64_t(seed));
  int const k_rounds  = int(rounds.size());
  std::size_t const n = std::size_t(blocks) * B;
  std::vector<float> in(rounds.size() * n, 0.0f);
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    bool const neg_zeros = rounds[k].values[0] == 0 && std::signbit(rounds[k].values[0]);
    for (std::size_t b = 0; b < std::size_t(blocks); ++b) {
      for (std::size_t t = 0; t < B; ++t) {
        in[k * n + b * B + t] = t == 0 ? rounds[k].values[b] : neg_zeros ? -0.0f : 0.0f;  // -0 + -0 = -0
      }
    }
  }
  device_buffer<float> d_in(in), d_out(in.size());
  d_out.poison();
  auto const ws = tilewise::grid::make_workspace<float>(blocks);
  int const g   = tilewise::launch_cooperative(reduce_rounds_kernel<B, W>, tilewise::cooperative_grid{blocks}, dim3(B),
                                               0, cudaStream_t{}, d_in.get(), d_out.get(), k_rounds, n, ws.get());
  REQUIRE(g == blocks);
  TW_CHECK_LAUNCH();
  auto const out = d_out.download();
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    float const f        = out[k * n];
    std::size_t not_same = 0;
    for (std::size_t i = 0; i < n; ++i) not_same += !same_bits(out[k * n + i], f);
    std::string why;
    bool const ok = expected(rounds[k].values, f, why);
    INFO("grid::reduce<float, " << B << ", " << W << "> blocks " << blocks << " seed " << seed << " round "
                                << std::string(rounds[k].name) << ": got " << f << " (bits " << bits_of(f)
                                << "), want " << why);
    CHECK(ok);
    CHECK(not_same == 0);
    if (!std::isnan(rounds[k].exact)) CHECK(same_bits(f, rounds[k].exact));
  }
}

template <unsigned B, unsigned W>
void check_exact_shape() {
  constexpr int publish = int(tilewise::grid::reduce<float, B, W>::last_block_min_blocks);
  int const max         = tilewise::max_cooperative_grid(reduce_rounds_kernel<B, W>, dim3(B));
  int dev = 0, sms = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  TW_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::vector<int> sizes;
  for (int g : {1, 3, 4, sms, publish - 1, publish, std::min(max, int(tilewise::detail::exact_max_blocks))}) {
    if (g <= max && std::find(sizes.begin(), sizes.end(), g) == sizes.end()) sizes.push_back(g);
  }
  for (int blocks : sizes) {
    for (int seed = 1; seed <= seeds(3); ++seed) {
      check_exact<B, W>(blocks, seed);
    }
  }
}

}  // namespace

TEST_CASE("grid::reduce<float> plus: the float nearest the exact sum of the block partials, IEEE special values") {
  check_exact_shape<256, 32>();
  check_exact_shape<64, 8>();
  check_exact_shape<1024, 16>();
  check_exact_shape<32, 32>();
}
