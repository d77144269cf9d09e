/// @file
/// @brief tile_ops_bench: when does warp aggregation pay? tilewise's aggregating tile primitives
///        against the plain per-lane code a user would otherwise write, side by side in one run:
///   1. tile::atomic_add vs atomicAdd (int32, float; five address patterns in global memory),
///   2. tile::histogram vs atomicAdd on shared and global bins, unit and run-time weights (uniform,
///      Zipf, all in one bin and a sweep of "k lanes of each warp share a bin"), against the three
///      ways to add a tile's samples forced (plain atomics, grouped = match_any, one_bin = one tile
///      reduction), which is what justifies tile::histogram's policy per memory space,
///   3. the cost of one tile::match_any (and reduce_by_key) against one shuffle and tile::reduce,
///   4. tile::compact_append (one atomic per tile) vs a per-lane atomicAdd on a global cursor.
/// Rows marked * time candidate code that is not in the library (section 3: a reduction over the
/// peers of match_any by redux.sync instead of detail::peer_reduce).
/// Tiles are W = 32 (`cg::tiled_partition<32>(cg::this_thread_block())`). The variants of one row
/// share grid, input and repetition loop, run interleaved (rotating order) and the median kernel
/// time (CUDA events) is reported. See README.md.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/compact.cuh>
#include <tilewise/tile/group_by.cuh>
#include <tilewise/tile/histogram.cuh>
#include <tilewise/tile/match.cuh>
#include <tilewise/tile/reduce.cuh>

#include "bench_common.cuh"

namespace cg = cooperative_groups;

namespace ops_bench {

using namespace tilewise_bench;

constexpr char const* bench_name = "tile_ops_bench";

// ---- settings ------------------------------------------------------------------------------------

constexpr int block_threads      = 256;
constexpr unsigned W             = 32;                     ///< tile width of every variant
constexpr std::size_t atomic_n   = std::size_t(1) << 24;  ///< section 1 items (64 MB of indices)
constexpr std::size_t big_n      = std::size_t(1) << 26;  ///< sections 2 and 4 items (256 MB of input)
constexpr int chain_length       = 512;                    ///< section 3: dependent calls per thread
constexpr int chain_waves        = 4;                      ///< section 3 throughput grid: SMs x occupancy x 4
constexpr double zipf_s          = 1.1;
constexpr unsigned share_sweep[] = {2, 4, 8, 12, 16, 24, 32};  ///< section 2: lanes per warp in one bin

// ---- checked CUDA calls --------------------------------------------------------------------------

/// A kernel launch, then a check of cudaGetLastError.
#define BENCH_LAUNCH(...)                  \
  do {                                     \
    __VA_ARGS__;                           \
    TW_BENCH_CUDA(cudaGetLastError());     \
  } while (0)

// ---- device helpers ------------------------------------------------------------------------------

/// A 32-bit hash of (i, seed): the random numbers of every data set, generated on the device.
__host__ __device__ inline std::uint32_t mix32(std::uint64_t x, std::uint32_t seed) {
  x += 0x9E3779B97F4A7C15ull * (seed + 1);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return std::uint32_t((x ^ (x >> 31)) >> 16);
}

__device__ __forceinline__ std::size_t first_index() { return std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ std::size_t grid_stride() { return std::size_t(gridDim.x) * blockDim.x; }

/// out[i] = f(i): data sets are made on the device (no 256 MB uploads).
template <class T, class F>
__global__ void fill_kernel(T* out, std::size_t n, F f) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) out[i] = f(i);
}

/// Counts the i < n with a[i] != b[i] (the agreement checks).
template <class T>
__global__ void mismatch_kernel(T const* a, T const* b, std::size_t n, unsigned long long* count) {
  unsigned long long c = 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) c += a[i] != b[i];
  if (c) atomicAdd(count, c);
}

/// Sum of p[0, n) modulo 2^64 (order independent: compares unordered compaction outputs).
__global__ void checksum_kernel(std::int32_t const* p, std::size_t n, unsigned long long* sum) {
  unsigned long long s = 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) s += unsigned(p[i]);
  if (s) atomicAdd(sum, s);
}

// ---- host harness --------------------------------------------------------------------------------

/// One timed line of a table (also one CSV row).
struct record {
  std::string section, label, variant;
  double us;
  double rate;
  char const* unit;
};

struct context {
  int sms        = 0;
  int max_per_sm = 0;  ///< resident blocks per SM allowed by threads per SM
  timer time{3, 15};   ///< --quick: 1 and 5
  // buffers, sized once for the largest section
  std::uint32_t* in        = nullptr;  ///< big_n words: indices, bins, compaction input
  std::uint32_t* out       = nullptr;  ///< big_n words: old values, compaction output
  std::uint32_t* counters  = nullptr;  ///< atomic_n words: atomic targets
  std::uint32_t* reference = nullptr;  ///< atomic_n words: a variant's result for the checks
  std::uint32_t* bins      = nullptr;  ///< 65536 global bins
  std::uint32_t* cdf       = nullptr;  ///< 65536 Zipf thresholds
  long long* cycles        = nullptr;  ///< per-warp clock64 spans (section 3)
  unsigned long long* scalar = nullptr;  ///< [0]: mismatch count / compaction cursor, [1]: checksum
  std::vector<record> records;
  std::vector<std::string> warnings;
  std::vector<std::string> summary;
};

struct variant {
  std::string name;
  std::function<void()> launch;
};

/// Median kernel time (µs) of each variant, interleaved (see timer::interleaved). `prepare`
/// (resetting outputs) runs before each launch, outside the timed events.
std::vector<double> time_variants(context& ctx, std::vector<variant> const& vs,
                                  std::function<void()> const& prepare = {}) {
  auto const prep = [&] { if (prepare) prepare(); };
  return ctx.time.interleaved(vs.size(), [&](std::size_t k) { vs[k].launch(); }, prep);
}

/// The largest grid all `kernels` keep resident at once (SMs x the lowest occupancy among them), so
/// every variant of a row runs the same grid-stride grid.
template <class... Kernels>
unsigned resident_grid(context const& ctx, int threads, std::size_t smem, Kernels... kernels) {
  int per_sm = ctx.max_per_sm;
  auto one   = [&](auto k) {
    int b = 0;
    TW_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, threads, smem));
    per_sm = std::min(per_sm, b);
  };
  (one(kernels), ...);
  return unsigned(ctx.sms * std::max(per_sm, 1));
}

template <class T, class F>
void fill(T* out, std::size_t n, F f) {
  BENCH_LAUNCH(fill_kernel<<<1024, block_threads>>>(out, n, f));
}

/// Number of positions where a and b (device arrays of n elements) differ.
template <class T>
unsigned long long mismatches(context& ctx, T const* a, T const* b, std::size_t n) {
  TW_BENCH_CUDA(cudaMemset(ctx.scalar, 0, sizeof(unsigned long long)));
  BENCH_LAUNCH(mismatch_kernel<<<1024, block_threads>>>(a, b, n, ctx.scalar));
  unsigned long long c = 0;
  TW_BENCH_CUDA(cudaMemcpy(&c, ctx.scalar, sizeof c, cudaMemcpyDeviceToHost));
  return c;
}

void warn(context& ctx, std::string msg) {
  std::fprintf(stderr, "WARNING: %s\n", msg.c_str());
  ctx.warnings.push_back("WARNING: " + std::move(msg));
}

void table_header(std::initializer_list<char const*> cols) {
  std::printf("|");
  for (auto c : cols) std::printf(" %s |", c);
  std::printf("\n|");
  for (std::size_t i = 0; i < cols.size(); ++i) std::printf("---|");
  std::printf("\n");
}

std::string cell(double x, char const* fmt = "%.2f") {
  if (std::isnan(x)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, fmt, x);
  return b;
}

std::string fmt(char const* f, double x) { return cell(x, f); }

// ==== 1. tile::atomic_add vs atomicAdd =============================================================

enum class pattern { one_address, per_warp, four_per_warp, distinct, scattered };

struct pattern_info {
  pattern p;
  char const* name;
  std::size_t counters;  ///< number of distinct targets for atomic_n items
};

constexpr pattern_info patterns[] = {
  {pattern::one_address, "one address (whole grid)", 1},
  {pattern::per_warp, "one address per warp", atomic_n / 32},
  {pattern::four_per_warp, "4 addresses per warp (random)", atomic_n / 8},
  {pattern::distinct, "distinct per lane (coalesced)", atomic_n},
  {pattern::scattered, "random over 2^24 (scattered)", atomic_n},
};

/// The value item i adds: 1..16 (0.25..4 for float), never zero.
template <class T>
__device__ __forceinline__ T item_value(std::size_t i) {
  unsigned const r = 1u + (mix32(i, 0xA7u) & 15u);
  if constexpr (std::is_integral_v<T>) {
    return T(r);
  } else {
    return T(r) * T(0.25);
  }
}

enum class aimpl { ours, plain };
constexpr char const* aimpl_name[] = {"ours", "plain"};

/// Item i adds item_value(i) to counters[idx[i]] and stores the old value it got back.
template <class T, aimpl I>
__global__ void __launch_bounds__(block_threads)
  atomic_kernel(std::uint32_t const* __restrict__ idx, T* counters, T* __restrict__ old_out, std::size_t n) {
  [[maybe_unused]] auto const tile = cg::tiled_partition<W>(cg::this_thread_block());
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {  // n % 32 == 0: whole tiles
    T* const addr = counters + idx[i];
    T const v     = item_value<T>(i);
    T old;
    if constexpr (I == aimpl::ours) {
      old = tilewise::tile::atomic_add(tile, addr, v);
    } else {
      old = atomicAdd(addr, v);
    }
    old_out[i] = old;
  }
}

void make_addresses(context& ctx, pattern p) {
  switch (p) {
    case pattern::one_address: fill(ctx.in, atomic_n, [] __device__(std::size_t) { return 0u; }); break;
    case pattern::per_warp: fill(ctx.in, atomic_n, [] __device__(std::size_t i) { return unsigned(i / 32); }); break;
    case pattern::distinct: fill(ctx.in, atomic_n, [] __device__(std::size_t i) { return unsigned(i); }); break;
    case pattern::four_per_warp:
      fill(ctx.in, atomic_n, [] __device__(std::size_t i) { return unsigned(i / 32 * 4 + (mix32(i, 0x4u) & 3u)); });
      break;
    case pattern::scattered:
      fill(ctx.in, atomic_n, [] __device__(std::size_t i) { return mix32(i, 0x5u) & unsigned(atomic_n - 1); });
      break;
  }
}

template <class T>
void run_atomic_row(context& ctx, pattern_info const& p) {
  constexpr bool is_int    = std::is_integral_v<T>;
  char const* const tname  = is_int ? "int32" : "float";
  T* const counters        = reinterpret_cast<T*>(ctx.counters);
  T* const olds            = reinterpret_cast<T*>(ctx.out);
  std::uint32_t const* idx = ctx.in;
  unsigned const grid      = resident_grid(ctx, block_threads, 0, atomic_kernel<T, aimpl::ours>,
                                            atomic_kernel<T, aimpl::plain>);
  auto const make          = [&](auto kernel, aimpl a) {
    return variant{aimpl_name[int(a)], [=] { BENCH_LAUNCH(kernel<<<grid, block_threads>>>(idx, counters, olds, atomic_n)); }};
  };
  std::vector<variant> vs{make(atomic_kernel<T, aimpl::ours>, aimpl::ours),
                          make(atomic_kernel<T, aimpl::plain>, aimpl::plain)};
  auto const reset = [&] { TW_BENCH_CUDA(cudaMemsetAsync(counters, 0, p.counters * sizeof(T))); };

  if constexpr (is_int) {  // final counters must agree exactly
    reset();
    vs[1].launch();
    TW_BENCH_CUDA(cudaMemcpy(ctx.reference, counters, p.counters * sizeof(T), cudaMemcpyDeviceToDevice));
    reset();
    vs[0].launch();
    if (auto bad = mismatches(ctx, reinterpret_cast<T const*>(ctx.reference), counters, p.counters)) {
      warn(ctx, "atomic_add " + std::string(p.name) + " int32: " + vs[0].name + " leaves " + std::to_string(bad) +
                  " counters different from atomicAdd's");
    }
  }

  auto const us    = time_variants(ctx, vs, reset);
  auto const rate  = [&](std::size_t j) { return atomic_n / (us[j] * 1e3); };  // items per ns
  std::printf("| %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f |\n", p.name, tname, us[0], us[1], rate(0), rate(1),
              us[1] / us[0]);
  std::fflush(stdout);
  for (std::size_t j = 0; j < vs.size(); ++j) {
    ctx.records.push_back({"atomic_add", std::string(p.name) + " " + tname, vs[j].name, us[j], rate(j), "items/ns"});
  }
  ctx.summary.push_back(std::string("atomic_add ") + tname + " " + p.name + " " + fmt("%.2fx", us[1] / us[0]));
}

void run_atomics(context& ctx) {
  std::printf("\n## 1. tile::atomic_add vs atomicAdd (global memory, 2^24 items, both keep the returned old value)\n\n");
  table_header({"addresses", "T", "ours us", "plain us", "ours items/ns", "plain items/ns", "plain/ours"});
  for (auto const& p : patterns) {
    make_addresses(ctx, p.p);
    run_atomic_row<std::int32_t>(ctx, p);
    run_atomic_row<float>(ctx, p);
  }
}

// ==== 2. tile::histogram vs atomicAdd ==============================================================

/// ours = tile::histogram (the library's policy). The other three are the ways to add a tile's
/// samples, forced, through the public API: plain = atomicAdd per lane (also the baseline a user
/// writes); grouped = lanes grouped by bin with match_any and one atomic per distinct bin (a
/// unit-weight group adds its popcount, weights are summed by reduce_by_key); one_bin = one atomic
/// per tile (of W, or of the tile's tile::reduce of the weights), correct only where every tile
/// holds one bin. The three are what justifies the policy (see histogram.cuh) per memory space.
enum class hpath { ours, plain, grouped, one_bin };
constexpr int num_hpaths           = 4;
constexpr char const* hpath_name[] = {"ours", "plain", "grouped", "one_bin"};

template <hpath P, bool Weighted, class Tile>
__device__ __forceinline__ void hist_add(Tile const& tile, std::uint32_t* bins, std::uint32_t bin, std::uint32_t w) {
  cuda::std::plus<std::uint32_t> const plus{};
  if constexpr (P == hpath::ours && Weighted) {
    tilewise::tile::histogram(tile, bins, bin, w);
  } else if constexpr (P == hpath::ours) {
    tilewise::tile::histogram(tile, bins, bin);
  } else if constexpr (P == hpath::plain) {
    atomicAdd(&bins[bin], w);
  } else if constexpr (P == hpath::grouped && Weighted) {
    auto const group = tilewise::tile::reduce_by_key(tile, bin, w, plus);
    if (group.leader) atomicAdd(&bins[bin], group.value);
  } else if constexpr (P == hpath::grouped) {
    unsigned const peers = tilewise::tile::match_any(tile, bin);  // W = 32: ranks are lanes
    if (tile.thread_rank() == unsigned(__ffs(peers) - 1)) atomicAdd(&bins[bin], unsigned(__popc(peers)));
  } else {  // one_bin
    std::uint32_t const total = Weighted ? tilewise::tile::reduce(tile, w, plus) : W;
    if (tile.thread_rank() == 0) atomicAdd(&bins[bin], total);
  }
}

/// Shared: a privatised histogram per block (zero, block.sync, add grid-stride, block.sync, merge
/// the non-zero bins into `global_bins` with atomicAdd). Global: add straight into `global_bins`.
/// Weighted: the weight is the run-time `weight` (ATOMS.ADD), otherwise the constant 1, which ptxas
/// turns into ATOMS.POPC.INC on shared memory (lanes hitting one address are combined in hardware).
template <hpath P, bool Shared, bool Weighted>
__global__ void __launch_bounds__(block_threads)
  hist_kernel(std::uint32_t const* __restrict__ in, std::size_t n, std::uint32_t* global_bins, unsigned num_bins,
              std::uint32_t weight) {
  extern __shared__ std::uint32_t smem_bins[];
  auto const block      = cg::this_thread_block();
  auto const tile       = cg::tiled_partition<W>(block);
  std::uint32_t* bins   = Shared ? smem_bins : global_bins;
  std::uint32_t const w = Weighted ? weight : 1u;
  if constexpr (Shared) {
    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) smem_bins[b] = 0;
    block.sync();
  }
  for (std::size_t i = first_index(); i < n; i += grid_stride()) hist_add<P, Weighted>(tile, bins, in[i], w);
  if constexpr (Shared) {
    block.sync();
    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) {
      if (std::uint32_t const c = smem_bins[b]) atomicAdd(&global_bins[b], c);
    }
  }
}

enum class hdist { uniform, zipf, share, same };

struct hdata {
  hdist d;
  unsigned k;  ///< share: lanes of each warp in the warp's hot bin (lane 0 always among them)
  std::string name() const {
    switch (d) {
      case hdist::uniform: return "uniform";
      case hdist::zipf: return "zipf s=" + fmt("%.1f", zipf_s);
      case hdist::share: return "share " + std::to_string(k) + "/32";
      default: return "all same bin";
    }
  }
  /// The one_bin path is correct only when all lanes of a tile hold one bin.
  bool one_bin_valid() const { return d == hdist::same || (d == hdist::share && k == 32); }
};

/// Zipf(s) over `bins` ranks as 32-bit thresholds: rank r is drawn for u < cdf[r] (host, double).
std::vector<std::uint32_t> zipf_cdf(unsigned bins, double s) {
  std::vector<double> w(bins);
  double total = 0;
  for (unsigned r = 0; r < bins; ++r) total += (w[r] = std::pow(double(r + 1), -s));
  std::vector<std::uint32_t> cdf(bins);
  double acc = 0;
  for (unsigned r = 0; r < bins; ++r) {
    acc += w[r] / total;
    cdf[r] = std::uint32_t(std::min(4294967295.0, std::ldexp(acc, 32)));
  }
  cdf[bins - 1] = 0xFFFFFFFFu;
  return cdf;
}

/// P(rank 0): the share of the items in the hottest bin.
double zipf_top_share(unsigned bins, double s) {
  double total = 0;
  for (unsigned r = 0; r < bins; ++r) total += std::pow(double(r + 1), -s);
  return 1.0 / total;
}

void make_bins(context& ctx, hdata const& d, unsigned bins, std::size_t n) {
  unsigned const m = bins - 1;  // bins is a power of two
  switch (d.d) {
    case hdist::uniform: fill(ctx.in, n, [m] __device__(std::size_t i) { return mix32(i, 0x11u) & m; }); break;
    case hdist::same: fill(ctx.in, n, [m] __device__(std::size_t) { return 5u & m; }); break;
    case hdist::zipf: {
      auto const cdf = zipf_cdf(bins, zipf_s);
      TW_BENCH_CUDA(cudaMemcpy(ctx.cdf, cdf.data(), bins * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
      std::uint32_t const* c = ctx.cdf;
      fill(ctx.in, n, [c, m] __device__(std::size_t i) {
        std::uint32_t const u = mix32(i, 0x22u);
        unsigned lo = 0, hi = m;  // first rank with u < cdf[rank]
        while (lo < hi) {
          unsigned const mid = (lo + hi) / 2;
          if (u < c[mid]) hi = mid; else lo = mid + 1;
        }
        return (lo * 0x9E3779B1u) & m;  // scatter ranks over the bins (odd multiplier: a bijection)
      });
      break;
    }
    case hdist::share: {
      unsigned const k = d.k;
      fill(ctx.in, n, [k, m] __device__(std::size_t i) {
        std::size_t const warp = i / 32;
        unsigned const lane    = unsigned(i % 32);
        unsigned const rot     = mix32(warp, 0x33u) % k;  // hot lanes: a rotated run of k that holds lane 0
        bool const hot         = ((lane + rot) & 31u) < k;
        return (hot ? mix32(warp, 0x44u) : mix32(i, 0x55u)) & m;
      });
      break;
    }
  }
}

struct hist_config {
  bool shared;
  bool weighted;
  unsigned bins;
  std::string name() const {
    return std::string(shared ? "shared " : "global ") + std::to_string(bins) + (weighted ? " w" : "");
  }
};

/// The memory spaces (and weighting) tile::histogram's policy tells apart, with the path it takes.
struct hist_space {
  bool shared;
  bool weighted;
  char const* name;
  char const* policy;
};
constexpr hist_space hist_spaces[] = {{true, false, "shared unit", "plain"},
                                      {true, true, "shared w", "plain"},
                                      {false, false, "global unit", "one_bin if the tile holds one bin, else grouped"},
                                      {false, true, "global w", "one_bin if the tile holds one bin, else grouped"}};

/// One table row's verdict: the fastest forced path and ours against it.
struct hist_row {
  hist_config cfg;
  std::string label;
  hpath fastest;      ///< plain, grouped or one_bin
  double vs_fastest;  ///< fastest path's time / ours: >= 0.98 is the goal
};

template <bool Shared, bool Weighted>
hist_row run_hist_row(context& ctx, hist_config const& cfg, hdata const& d) {
  using kernel_t = void (*)(std::uint32_t const*, std::size_t, std::uint32_t*, unsigned, std::uint32_t);
  kernel_t const kernels[num_hpaths] = {
    hist_kernel<hpath::ours, Shared, Weighted>, hist_kernel<hpath::plain, Shared, Weighted>,
    hist_kernel<hpath::grouped, Shared, Weighted>, hist_kernel<hpath::one_bin, Shared, Weighted>};
  std::size_t const n     = big_n;
  std::size_t const smem  = Shared ? cfg.bins * sizeof(std::uint32_t) : 0;
  unsigned const grid     = resident_grid(ctx, block_threads, smem, kernels[0], kernels[1], kernels[2], kernels[3]);
  std::uint32_t const* in = ctx.in;
  std::uint32_t* bins     = ctx.bins;
  unsigned const nb       = cfg.bins;
  int const paths         = d.one_bin_valid() ? num_hpaths : num_hpaths - 1;  // one_bin (last) only where valid
  std::vector<variant> vs;
  for (int p = 0; p < paths; ++p) {
    kernel_t const k = kernels[p];
    vs.push_back({hpath_name[p], [=] { BENCH_LAUNCH(k<<<grid, block_threads, smem>>>(in, n, bins, nb, 1u)); }});
  }
  auto const reset = [=] { TW_BENCH_CUDA(cudaMemsetAsync(bins, 0, nb * sizeof(std::uint32_t))); };

  // Agreement: every variant's histogram equals plain atomicAdd's.
  reset();
  vs[1].launch();
  TW_BENCH_CUDA(cudaMemcpy(ctx.reference, bins, nb * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice));
  for (std::size_t j = 0; j < vs.size(); ++j) {
    if (j == 1) continue;
    reset();
    vs[j].launch();
    if (auto bad = mismatches(ctx, ctx.reference, bins, nb)) {
      warn(ctx, "histogram " + cfg.name() + " " + d.name() + ": " + vs[j].name + " differs from plain in " +
                  std::to_string(bad) + " bins");
    }
  }

  auto us = time_variants(ctx, vs, reset);
  us.resize(num_hpaths, std::nan(""));  // one_bin not run: NaN
  hpath fastest = hpath::plain;
  for (int p = int(hpath::grouped); p < paths; ++p) {
    if (us[p] < us[int(fastest)]) fastest = hpath(p);
  }
  double const vs_fastest = us[int(fastest)] / us[0];
  std::string const label = cfg.name() + " " + d.name();
  std::printf("| %s | %s | %.0f | %.2f | %.1f | %.1f | %.1f | %s | %s | %.2f%s |\n", cfg.name().c_str(),
              d.name().c_str(), n * 4.0 / (us[0] * 1e3), us[1] / us[0], us[0], us[1], us[2],
              cell(us[3], "%.1f").c_str(), hpath_name[int(fastest)], vs_fastest, vs_fastest < 0.98 ? " (< 0.98)" : "");
  std::fflush(stdout);
  for (int p = 0; p < paths; ++p) {
    ctx.records.push_back({"histogram", label, hpath_name[p], us[p], n * 4.0 / (us[p] * 1e3), "GB/s"});  // input GB/s
  }
  return {cfg, label, fastest, vs_fastest};
}

/// Per memory space, which forced path was fastest in how many rows, and how many rows have ours
/// within 0.98x of the fastest path (the worst row named).
std::string hist_conclusion(std::vector<hist_row> const& rows) {
  std::string line = "histogram fastest path:";
  for (auto const& s : hist_spaces) {
    int count[num_hpaths] = {}, total = 0;
    for (auto const& r : rows) {
      if (r.cfg.shared == s.shared && r.cfg.weighted == s.weighted) {
        ++count[int(r.fastest)];
        ++total;
      }
    }
    line += std::string(" ") + s.name + " (policy: " + s.policy + "):";
    char const* sep = " ";
    for (hpath p : {hpath::plain, hpath::grouped, hpath::one_bin}) {
      if (count[int(p)]) {
        line += sep + std::string(hpath_name[int(p)]) + " " + std::to_string(count[int(p)]) + "/" + std::to_string(total);
        sep = ", ";
      }
    }
    line += ";";
  }
  std::size_t ok = 0, worst = 0;
  for (std::size_t j = 0; j < rows.size(); ++j) {
    ok += rows[j].vs_fastest >= 0.98;
    if (rows[j].vs_fastest < rows[worst].vs_fastest) worst = j;
  }
  return line + " ours >= 0.98x fastest path in " + std::to_string(ok) + " of " + std::to_string(rows.size()) +
         " rows, worst " + fmt("%.2fx", rows[worst].vs_fastest) + " at " + rows[worst].label;
}

void run_histograms(context& ctx) {
  std::printf("\n## 2. tile::histogram vs atomicAdd (2^26 uint32 bins as input, uint32 counters)\n\n");
  std::printf("Zipf s=%.1f: the hottest bin holds %.0f%% (256 bins), %.0f%% (4096), %.0f%% (65536) of the items. "
              "\"share k/32\": k lanes of every warp (lane 0 among them) hit the warp's hot bin, the rest uniform. "
              "Rows marked w pass the weight at run time. tile::histogram's policy: shared -> plain; "
              "global -> one_bin if the tile holds one bin (one shuffle + one vote), else grouped. fastest path: the fastest of plain, grouped and one_bin (where valid); "
              "fastest/ours >= 0.98 is the goal.\n\n",
              zipf_s, 100 * zipf_top_share(256, zipf_s), 100 * zipf_top_share(4096, zipf_s),
              100 * zipf_top_share(65536, zipf_s));
  table_header({"bins", "data", "ours GB/s", "plain/ours", "ours us", "plain us", "grouped us", "one_bin us",
                "fastest path", "fastest/ours"});
  std::vector<hdata> sets{{hdist::uniform, 1}, {hdist::zipf, 0}};
  for (unsigned k : share_sweep) sets.push_back({hdist::share, k});
  sets.push_back({hdist::same, 32});
  std::vector<hist_row> rows;
  for (hist_config const cfg : {hist_config{true, false, 256}, hist_config{true, true, 256},
                                hist_config{true, false, 4096}, hist_config{true, true, 4096},
                                hist_config{false, false, 65536}, hist_config{false, true, 65536}}) {
    for (auto const& d : sets) {
      make_bins(ctx, d, cfg.bins, big_n);
      if (cfg.shared) {
        rows.push_back(cfg.weighted ? run_hist_row<true, true>(ctx, cfg, d) : run_hist_row<true, false>(ctx, cfg, d));
      } else {
        rows.push_back(cfg.weighted ? run_hist_row<false, true>(ctx, cfg, d) : run_hist_row<false, false>(ctx, cfg, d));
      }
    }
  }
  std::string const line = hist_conclusion(rows);
  std::printf("\n%s\n", line.c_str());
  ctx.summary.push_back(line);
}

// ==== 3. match_any cost ============================================================================

/// reduce_by_key_redux: match_any + redux.sync over the peer mask (candidate, not in the library:
/// one instruction for 32-bit integer plus, but it serialises per distinct mask).
enum class chain_op { shfl, reduce, match_any, reduce_by_key, reduce_by_key_redux };

/// Dependent chain: r = op(tile, v); v = r ^ x, `reps` times. match_any / reduce_by_key take the key
/// `key_of_lane ^ (v & zero)` (zero is a kernel argument, so the key depends on the chain but holds
/// exactly `Keys` distinct values per tile). Lane 0 of each warp stores its clock64 span in
/// cycles[warp] unless cycles is null.
template <chain_op Op, unsigned Keys>
__global__ void __launch_bounds__(block_threads)
  chain_kernel(std::uint32_t const* __restrict__ in, std::uint32_t* __restrict__ out, long long* cycles, int reps,
               std::uint32_t zero) {
  auto const tile           = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i       = first_index();
  std::uint32_t const x     = in[i];
  std::uint32_t const key   = (tile.thread_rank() % Keys) * 0x9E3779B9u + 0x1234567u;
  std::uint32_t const src   = x & (W - 1);
  cuda::std::plus<std::uint32_t> const plus{};
  std::uint32_t v           = x;
  long long const t0        = clock64();
#pragma unroll 1
  for (int k = 0; k < reps; ++k) {
    std::uint32_t r;
    if constexpr (Op == chain_op::shfl) {
      r = tile.shfl(v, src);
    } else if constexpr (Op == chain_op::reduce) {
      r = tilewise::tile::reduce(tile, v, plus);
    } else if constexpr (Op == chain_op::match_any) {
      r = tilewise::tile::match_any(tile, key ^ (v & zero));
    } else if constexpr (Op == chain_op::reduce_by_key) {
      r = tilewise::tile::reduce_by_key(tile, key ^ (v & zero), v, plus).value;
    } else {
      r = __reduce_add_sync(tilewise::tile::match_any(tile, key ^ (v & zero)), v);  // W = 32: ranks are lanes
    }
    v = r ^ x;
  }
  long long const t1 = clock64();
  out[i]             = v;
  if (cycles != nullptr && tile.thread_rank() == 0) cycles[i / W] = t1 - t0;
}

struct chain_variant {
  char const* op;
  unsigned keys;  ///< distinct keys per tile (match_any / reduce_by_key), 0 where no key
  void (*kernel)(std::uint32_t const*, std::uint32_t*, long long*, int, std::uint32_t);
};

void run_match(context& ctx) {
  std::vector<chain_variant> const cvs{
    {"shfl (tile.shfl)", 0, chain_kernel<chain_op::shfl, 1>},
    {"tile::reduce int32 (redux)", 0, chain_kernel<chain_op::reduce, 1>},
    {"tile::match_any", 1, chain_kernel<chain_op::match_any, 1>},
    {"tile::match_any", 4, chain_kernel<chain_op::match_any, 4>},
    {"tile::match_any", 32, chain_kernel<chain_op::match_any, 32>},
    {"tile::reduce_by_key int32", 1, chain_kernel<chain_op::reduce_by_key, 1>},
    {"tile::reduce_by_key int32", 4, chain_kernel<chain_op::reduce_by_key, 4>},
    {"tile::reduce_by_key int32", 32, chain_kernel<chain_op::reduce_by_key, 32>},
    {"match_any + redux.sync(peers)*", 1, chain_kernel<chain_op::reduce_by_key_redux, 1>},
    {"match_any + redux.sync(peers)*", 4, chain_kernel<chain_op::reduce_by_key_redux, 4>},
    {"match_any + redux.sync(peers)*", 32, chain_kernel<chain_op::reduce_by_key_redux, 32>}};

  fill(ctx.in, big_n, [] __device__(std::size_t i) { return mix32(i, 0x66u) | 1u; });
  std::uint32_t const* in = ctx.in;
  std::uint32_t* out      = ctx.out;
  long long* cycles       = ctx.cycles;

  // Latency: one warp per SM, the per-warp clock64 span over `chain_length` calls (median of SMs and runs).
  std::vector<double> latency;
  for (auto const& c : cvs) {
    std::vector<float> per_call;
    for (int run = 0; run < std::max(2, ctx.time.warmup) + 1; ++run) {
      BENCH_LAUNCH(c.kernel<<<ctx.sms, W>>>(in, out, cycles, chain_length, 0u));
      if (run == 0) continue;  // warm-up
      std::vector<long long> h(ctx.sms);
      TW_BENCH_CUDA(cudaMemcpy(h.data(), cycles, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      for (long long t : h) per_call.push_back(float(double(t) / chain_length));
    }
    latency.push_back(median(per_call));
  }

  // Throughput: a full grid (SMs x occupancy x chain_waves blocks), median kernel time.
  std::vector<variant> vs;
  int per_sm = ctx.max_per_sm;
  for (auto const& c : cvs) {
    int b = 0;
    TW_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, c.kernel, block_threads, 0));
    per_sm = std::min(per_sm, std::max(b, 1));
  }
  unsigned const grid = unsigned(ctx.sms * per_sm * chain_waves);
  for (auto const& c : cvs) {
    auto const k = c.kernel;
    vs.push_back({c.op, [=] { BENCH_LAUNCH(k<<<grid, block_threads>>>(in, out, nullptr, chain_length, 0u)); }});
  }

  // Agreement: 8 chain steps of the candidate reduce-by-key (rows 8..10) equal the library's (rows 5..7).
  std::size_t const threads = std::size_t(grid) * block_threads;
  for (std::size_t j = 8; j < cvs.size(); ++j) {
    BENCH_LAUNCH(cvs[j - 3].kernel<<<grid, block_threads>>>(in, ctx.reference, nullptr, 8, 0u));
    BENCH_LAUNCH(cvs[j].kernel<<<grid, block_threads>>>(in, out, nullptr, 8, 0u));
    if (auto bad = mismatches(ctx, static_cast<std::uint32_t const*>(ctx.reference), out, threads)) {
      warn(ctx, std::string(cvs[j].op) + " keys=" + std::to_string(cvs[j].keys) + ": " + std::to_string(bad) +
                  " results differ from tile::reduce_by_key");
    }
  }
  auto const us            = time_variants(ctx, vs);
  double const warp_calls  = double(grid) * (block_threads / W) * chain_length;
  auto const throughput    = [&](std::size_t j) { return warp_calls / (us[j] * 1e3) / ctx.sms; };  // per ns per SM

  std::printf("\n## 3. match_any cost: dependent chains r = op(tile, v); v = r ^ x (uint32, %d calls per thread)\n\n",
              chain_length);
  std::printf("latency: one warp per SM, clock64 cycles per call (op + one LOP3); throughput: %u blocks of %d, "
              "warp-calls per ns per SM.\n\n",
              grid, block_threads);
  table_header({"op", "keys per tile", "latency cycles/call", "latency / shfl", "warp-calls/ns/SM",
                "shfl throughput / op", "time us", "/ tile::reduce time"});
  for (std::size_t j = 0; j < cvs.size(); ++j) {
    std::printf("| %s | %s | %.1f | %.2f | %.3f | %.1f | %.1f | %.2f |\n", cvs[j].op,
                cvs[j].keys ? std::to_string(cvs[j].keys).c_str() : "-", latency[j], latency[j] / latency[0],
                throughput(j), throughput(0) / throughput(j), us[j], us[j] / us[1]);
    std::string const label = std::string(cvs[j].op) + (cvs[j].keys ? " keys=" + std::to_string(cvs[j].keys) : "");
    ctx.records.push_back({"match", label, "latency", latency[j], latency[j], "cycles/call"});
    ctx.records.push_back({"match", label, "throughput", us[j], throughput(j), "warp-calls/ns/SM"});
  }
  std::fflush(stdout);
  ctx.summary.push_back("match_any(32 keys)/shfl latency " + fmt("%.1fx", latency[4] / latency[0]) + ", throughput " +
                        fmt("%.1fx", throughput(0) / throughput(4)));
}

// ==== 4. tile::compact_append vs per-lane atomicAdd ================================================

template <bool Ours>
__global__ void __launch_bounds__(block_threads)
  compact_kernel(std::int32_t const* __restrict__ in, std::int32_t* __restrict__ out, unsigned* cursor, std::size_t n) {
  [[maybe_unused]] auto const tile = cg::tiled_partition<W>(cg::this_thread_block());
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    std::int32_t const v = in[i];
    bool const keep      = (v & 1) != 0;  // random bit: 50 % kept
    if constexpr (Ours) {
      tilewise::tile::compact_append(tile, keep, v, out, cursor);
    } else if (keep) {
      out[atomicAdd(cursor, 1u)] = v;
    }
  }
}

/// Reference for what one cursor atomic per *block* gives: each thread takes 4 items per step
/// (block-strided), each warp ranks its kept items with ballots, a shared-memory scan of the 8 warp
/// counts and one atomicAdd per block and step (1024 items) reserve the range, tile::compact writes.
/// n must be a multiple of 4 * block_threads.
__global__ void __launch_bounds__(block_threads)
  compact_block_kernel(std::int32_t const* __restrict__ in, std::int32_t* __restrict__ out, unsigned* cursor,
                       std::size_t n) {
  constexpr int items = 4, warps = block_threads / W;
  __shared__ unsigned warp_offset[warps];
  __shared__ unsigned block_base;
  auto const block   = cg::this_thread_block();
  auto const tile    = cg::tiled_partition<W>(block);
  unsigned const wid = threadIdx.x / W;
  for (std::size_t base = std::size_t(blockIdx.x) * items * block_threads; base < n;
       base += std::size_t(gridDim.x) * items * block_threads) {
    std::int32_t v[items];
    bool keep[items];
    unsigned count = 0;
#pragma unroll
    for (int k = 0; k < items; ++k) {
      v[k]    = in[base + k * block_threads + threadIdx.x];
      keep[k] = (v[k] & 1) != 0;
      count += __popc(tile.ballot(keep[k]));
    }
    if (tile.thread_rank() == 0) warp_offset[wid] = count;
    block.sync();
    if (threadIdx.x == 0) {
      unsigned total = 0;
      for (int w = 0; w < warps; ++w) {
        unsigned const c = warp_offset[w];
        warp_offset[w]   = total;
        total += c;
      }
      block_base = atomicAdd(cursor, total);
    }
    block.sync();
    unsigned offset = block_base + warp_offset[wid];
#pragma unroll
    for (int k = 0; k < items; ++k) offset += tilewise::tile::compact(tile, keep[k], v[k], out + offset);
    block.sync();  // warp_offset and block_base are rewritten by the next step
  }
}

void run_compaction(context& ctx) {
  std::size_t const n = big_n;
  fill(reinterpret_cast<std::int32_t*>(ctx.in), n,
       [] __device__(std::size_t i) { return std::int32_t(mix32(i, 0x77u) | 0x100u); });
  auto const* in      = reinterpret_cast<std::int32_t const*>(ctx.in);
  auto* out           = reinterpret_cast<std::int32_t*>(ctx.out);
  auto* cursor        = reinterpret_cast<unsigned*>(ctx.scalar);
  unsigned const grid =
    resident_grid(ctx, block_threads, 0, compact_kernel<true>, compact_kernel<false>, compact_block_kernel);
  std::vector<variant> vs{
    {"ours (compact_append)", [=] { BENCH_LAUNCH(compact_kernel<true><<<grid, block_threads>>>(in, out, cursor, n)); }},
    {"plain (atomicAdd per lane)", [=] { BENCH_LAUNCH(compact_kernel<false><<<grid, block_threads>>>(in, out, cursor, n)); }},
    {"reference: one atomic per block and 1024 items (tile::compact)",
     [=] { BENCH_LAUNCH(compact_block_kernel<<<grid, block_threads>>>(in, out, cursor, n)); }},
    {"reference: cudaMemcpy D2D of the input",
     [=] { TW_BENCH_CUDA(cudaMemcpyAsync(out, in, n * sizeof(std::int32_t), cudaMemcpyDeviceToDevice)); }}};
  auto const reset = [=] { TW_BENCH_CUDA(cudaMemsetAsync(cursor, 0, sizeof(unsigned))); };

  // Agreement: same count, same multiset checksum; remember the count for the byte totals.
  constexpr int kernels          = 3;
  unsigned kept[kernels]           = {};
  unsigned long long sums[kernels] = {};
  for (int j = 0; j < kernels; ++j) {
    reset();
    vs[j].launch();
    TW_BENCH_CUDA(cudaMemcpy(&kept[j], cursor, sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned long long* const sum = ctx.scalar + 1;
    TW_BENCH_CUDA(cudaMemset(sum, 0, sizeof *sum));
    BENCH_LAUNCH(checksum_kernel<<<1024, block_threads>>>(out, kept[j], sum));
    TW_BENCH_CUDA(cudaMemcpy(&sums[j], sum, sizeof *sum, cudaMemcpyDeviceToHost));
  }
  for (int j = 1; j < kernels; ++j) {
    if (kept[j] != kept[0] || sums[j] != sums[0]) {
      warn(ctx, "compaction: " + vs[j].name + " kept " + std::to_string(kept[j]) + " (checksum " +
                  std::to_string(sums[j]) + "), ours kept " + std::to_string(kept[0]) + " (checksum " +
                  std::to_string(sums[0]) + ")");
    }
  }

  auto const us        = time_variants(ctx, vs, reset);
  double const bytes[] = {4.0 * (n + kept[0]), 4.0 * (n + kept[1]), 4.0 * (n + kept[2]), 8.0 * n};  // read + written
  std::printf("\n## 4. tile::compact_append vs per-lane atomicAdd on a global cursor (2^26 int32, %.1f%% kept)\n\n",
              100.0 * kept[0] / n);
  table_header({"variant", "time us", "GB/s (read + written)", "% of copy GB/s", "plain/this"});
  double const copy_gbs = bytes[3] / (us[3] * 1e3);
  for (std::size_t j = 0; j < vs.size(); ++j) {
    double const gbs = bytes[j] / (us[j] * 1e3);
    std::printf("| %s | %.1f | %.0f | %.0f %% | %s |\n", vs[j].name.c_str(), us[j], gbs, 100 * gbs / copy_gbs,
                j < kernels ? fmt("%.2f", us[1] / us[j]).c_str() : "-");
    ctx.records.push_back({"compaction", "2^26 int32 50% kept", vs[j].name, us[j], gbs, "GB/s"});
  }
  std::fflush(stdout);
  ctx.summary.push_back("compact_append/plain " + fmt("%.2fx", us[1] / us[0]) + " (one atomic per block: " +
                        fmt("%.2fx", us[1] / us[2]) + ")");
}

// ==== output =======================================================================================

void write_csv(context const& ctx, char const* path) {
  std::FILE* f = open_csv(bench_name, path);
  std::fprintf(f, "section,case,variant,time_us,rate,unit\n");
  for (auto const& r : ctx.records) {
    std::fprintf(f, "%s,\"%s\",\"%s\",%.4f,%.4f,%s\n", r.section.c_str(), r.label.c_str(), r.variant.c_str(), r.us,
                 r.rate, r.unit);
  }
  close_csv(bench_name, f, path);
}

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: tile_ops_bench [--quick] [--csv FILE] [--help]\n"
               "  when warp aggregation pays: tile::atomic_add, tile::histogram, tile::match_any /\n"
               "  reduce_by_key and tile::compact_append against plain per-lane code (W = 32).\n"
               "  --quick     1 warm-up and 5 timed runs per variant instead of 3 and 15\n"
               "  --csv FILE  also write every measurement to FILE as CSV\n");
}

}  // namespace ops_bench

int main(int argc, char** argv) {
  using namespace ops_bench;
  options opt;
  if (int const rc = parse_options(argc, argv, bench_name, usage, opt); rc >= 0) return rc;
  if (skip_without_device(bench_name)) return exit_skipped;

  context ctx;
  if (opt.quick) ctx.time = {1, 5};
  cudaDeviceProp const prop = device_properties();
  ctx.sms        = prop.multiProcessorCount;
  ctx.max_per_sm = std::max(1, prop.maxThreadsPerMultiProcessor / block_threads);
  TW_BENCH_CUDA(cudaMalloc(&ctx.in, big_n * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.out, big_n * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.counters, atomic_n * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.reference, atomic_n * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.bins, 65536 * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.cdf, 65536 * sizeof(std::uint32_t)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.cycles, std::max(ctx.sms, 64) * sizeof(long long)));
  TW_BENCH_CUDA(cudaMalloc(&ctx.scalar, 2 * sizeof(unsigned long long)));
  ctx.time.create_events();

  std::printf("tile_ops_bench on %s (sm_%d%d, %d SMs): W = 32 tiles, blocks of %d, grid-stride grids of SMs x "
              "occupancy; median of %d interleaved runs (us); ratio plain/ours > 1: aggregation pays\n",
              prop.name, prop.major, prop.minor, ctx.sms, block_threads, ctx.time.timed);

  run_match(ctx);
  run_atomics(ctx);
  run_histograms(ctx);
  run_compaction(ctx);

  if (opt.csv) write_csv(ctx, opt.csv);
  std::printf("\n");
  for (auto const& w : ctx.warnings) std::printf("%s\n", w.c_str());
  std::printf("summary: ");
  for (std::size_t j = 0; j < ctx.summary.size(); ++j) {
    std::printf("%s%s", ctx.summary[j].c_str(), j + 1 < ctx.summary.size() ? "; " : "");
  }
  std::printf("; warnings: %zu\n", ctx.warnings.size());

  for (void* p : {static_cast<void*>(ctx.in), static_cast<void*>(ctx.out), static_cast<void*>(ctx.counters),
                  static_cast<void*>(ctx.reference), static_cast<void*>(ctx.bins), static_cast<void*>(ctx.cdf),
                  static_cast<void*>(ctx.cycles), static_cast<void*>(ctx.scalar)}) {
    TW_BENCH_CUDA(cudaFree(p));
  }
  ctx.time.destroy_events();
  return 0;
}
