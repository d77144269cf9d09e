// device_bench section: device::histogram_even against cub::DeviceHistogram::HistogramEven at 2^28
// samples: uint8, int32 and float samples, num_bins 1 ... 2^24, uniform and Zipf (s = 1.1) data.
// Per row: both medians (the two interleaved), the speed-up, each one's share of the read
// bandwidth (samples' bytes per time against a read-only kernel measured in this run), and the
// plan ours ran. Two probes measure the floors first: that read bandwidth, and the shared-memory
// atomic rate (the floor of 1-byte samples, which need one shared atomic per byte). A 1 GB (int32,
// float) or 256 MB (uint8) input is more than twice the L2, so one buffer serves every call.
// Every timed variant's result is checked once against CUB's (WARNING on a mismatch). Then
// alternative plans (copies, 16- or 32-bit counters, cluster sizes, passes, global bins) on a few
// rows, kernel shapes, and the summary.
#include <cub/device/device_histogram.cuh>

#include <thrust/equal.h>
#include <thrust/execution_policy.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <tilewise/device/histogram_even.cuh>

#include "env.cuh"

namespace tilewise_bench {

__host__ __device__ inline std::uint64_t hist_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Sample i: a bin k (uniform, or Zipf through the cumulative weights `cdf` of `bins` ranks,
/// rank r -> bin (r * 1000003 + 12345) mod bins, a bijection), as a value of T inside bin k of
/// the row's levels: uint8 k (levels [0, 256)), int32 k ([0, bins)), float k + 0.5 ([0, bins)).
template <class T>
__global__ void hist_fill_kernel(T* out, long long n, int bins, double const* cdf, std::uint64_t seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = hist_mix(std::uint64_t(i) ^ seed);
    double const u        = double(r >> 11) * 0x1.0p-53;
    long long k;
    if (cdf) {
      int a = 0, b = bins - 1;
      while (a < b) {
        int const m = (a + b) / 2;
        if (cdf[m] > u) b = m; else a = m + 1;
      }
      k = (static_cast<long long>(a) * 1000003 + 12345) % bins;
    } else {
      k = static_cast<long long>(u * bins);
      k = k < bins ? k : bins - 1;
    }
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      out[i] = static_cast<std::uint8_t>(bins == 256 ? k : r >> 56);
    } else if constexpr (std::is_floating_point_v<T>) {
      out[i] = T(k) + T(0.5);
    } else {
      out[i] = T(k);
    }
  }
}

/// A read-only pass over `n` 16-byte vectors (4 in flight per thread, streaming loads).
__global__ void __launch_bounds__(512) hist_read_probe(uint4 const* p, long long n, unsigned* sink) {
  unsigned acc = 0;
  long long const stride = 512ll * 4 * gridDim.x;
  for (long long i = blockIdx.x * 2048ll + threadIdx.x; i < n; i += stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = i + u * 512 < n ? __ldcs(p + i + u * 512) : uint4{};
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

/// Shared-memory atomics only: each thread adds 1 to `iters` x 4 pseudo-random bins of 256, in
/// 2^shift interleaved copies (copy = lane mod copies, as the library lays them out).
__global__ void __launch_bounds__(512) hist_atomic_probe(unsigned* sink, int iters, unsigned shift) {
  extern __shared__ unsigned probe_bins[];
  unsigned const words = 256u << shift;
  for (unsigned i = threadIdx.x; i < words; i += 512) probe_bins[i] = 0;
  __syncthreads();
  unsigned x          = static_cast<unsigned>(hist_mix(blockIdx.x * 512ull + threadIdx.x)) | 1u;
  unsigned const copy = threadIdx.x & ((1u << shift) - 1);
  for (int it = 0; it < iters; ++it) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
#pragma unroll
    for (int b = 0; b < 4; ++b) atomicAdd(&probe_bins[(((x >> (8 * b)) & 255u) << shift) | copy], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0 && probe_bins[0] == 0xFFFFFFFFu) *sink = 1;
}

/// A kernel shape other than the tuning table's: B threads x V vectors, __launch_bounds__ for M
/// blocks per SM (a register cap), the table's values otherwise (outside the unnamed namespace:
/// kernels named by it would have internal linkage).
template <unsigned B, unsigned V, unsigned M>
struct hist_shape {
  static constexpr tilewise::detail::histogram_even_tuning value = [] {
    auto t       = tilewise::detail::histogram_even_tuned::value;
    t.block      = B;
    t.vectors    = V;
    t.min_blocks = M;
    return t;
  }();
};

/// The table with the 16-bit counters' kernel (one block per SM) at B threads x V vectors, and
/// the next round's loads issued early (Ahead = 1) or not.
template <unsigned B, unsigned V, unsigned Ahead = tilewise::detail::histogram_even_tuned::value.narrow_ahead>
struct hist_narrow_shape {
  static constexpr tilewise::detail::histogram_even_tuning value = [] {
    auto t           = tilewise::detail::histogram_even_tuned::value;
    t.narrow_block   = B;
    t.narrow_vectors = V;
    t.narrow_ahead   = Ahead;
    return t;
  }();
};

/// The table with the table strategy's kernel changed: probes that read first (1) or not, slots,
/// threads (one block per SM).
template <unsigned ProbeReads, unsigned Slots, unsigned B>
struct hist_table_shape {
  static constexpr tilewise::detail::histogram_even_tuning value = [] {
    auto t              = tilewise::detail::histogram_even_tuned::value;
    t.table_probe_reads = ProbeReads;
    t.table_slots       = Slots;
    t.table_block       = B;
    return t;
  }();
};

namespace {

using tilewise::detail::histogram_plan;
using tilewise::detail::histogram_strategy;

enum class dist { uniform, zipf };
char const* dist_name(dist d) { return d == dist::uniform ? "uniform" : "zipf s=1.1"; }

template <class T>
char const* sample_name() {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    return "uint8";
  } else if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else {
    return "int32";
  }
}

std::string plan_name(histogram_plan const& p) {
  switch (p.strategy) {
    case histogram_strategy::shared:
      return std::string(p.bytes ? "shared per value" : "shared") + (p.counter_bits == 16 ? " 16-bit" : "") + " x" +
             std::to_string(p.copies) + (p.passes > 1 ? ", " + std::to_string(p.passes) + " passes" : "");
    case histogram_strategy::cluster:
      return "cluster " + std::to_string(p.cluster) + (p.passes > 1 ? ", " + std::to_string(p.passes) + " passes" : "");
    case histogram_strategy::global: return "global";
    case histogram_strategy::table: return "table";
    default: return "?";
  }
}

struct hist_row {
  std::string type;
  int bins;
  dist d;
  double ours_us, cub_us, bytes;
  std::string plan;
};

struct floors {
  double read_gbs        = 0;  ///< read-only kernel, GB/s
  double atomics_per_us  = 0;  ///< shared atomics, 32 interleaved copies
  double atomics1_per_us = 0;  ///< shared atomics, one copy (random banks)
};

/// Levels of a row (see hist_fill_kernel).
template <class T>
auto row_levels(int bins) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    (void)bins;
    return std::pair<int, int>{0, 256};
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::pair<T, T>{T(0), T(bins)};
  } else {
    return std::pair<int, int>{0, bins};
  }
}

/// The cumulative Zipf weights (s = 1.1) of `bins` ranks, on the device.
double* zipf_cdf(int bins) {
  std::vector<double> c(static_cast<std::size_t>(bins));
  double acc = 0;
  for (int k = 0; k < bins; ++k) c[std::size_t(k)] = acc += 1.0 / std::pow(k + 1.0, 1.1);
  for (auto& x : c) x /= acc;
  double* d = nullptr;
  TW_BENCH_CUDA(cudaMalloc(&d, c.size() * sizeof(double)));
  TW_BENCH_CUDA(cudaMemcpy(d, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
struct hist_input {
  T* samples = nullptr;
  long long n;
  hist_input(long long count, int bins, dist d) : n(count) {
    TW_BENCH_CUDA(cudaMalloc(&samples, std::size_t(n) * sizeof(T)));
    double* cdf = d == dist::zipf ? zipf_cdf(bins) : nullptr;
    hist_fill_kernel<<<8192, 256>>>(samples, n, bins, cdf, 0x5EEDull * bins + unsigned(d));
    TW_BENCH_CUDA(cudaGetLastError());
    TW_BENCH_CUDA(cudaDeviceSynchronize());
    if (cdf) TW_BENCH_CUDA(cudaFree(cdf));
  }
  ~hist_input() { cudaFree(samples); }
};

template <class T, class Tuning = tilewise::detail::histogram_even_tuned>
cudaError_t ours_call(device_env& env, T const* in, unsigned* hist, int bins, long long n, histogram_plan* plan) {
  auto const lv     = row_levels<T>(bins);
  std::size_t bytes = tilewise::detail::histogram_temp_bytes;
  return tilewise::detail::dispatch_histogram_even<Tuning>(env.temp_for(bytes), bytes, in, hist, bins, lv.first,
                                                           lv.second, n, 0, plan);
}

template <class T>
std::size_t cub_bytes(T const* in, unsigned* hist, int bins, long long n) {
  auto const lv     = row_levels<T>(bins);
  std::size_t bytes = 0;
  TW_BENCH_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, hist, bins + 1, lv.first, lv.second, n));
  return bytes;
}

template <class T>
void cub_call(void* temp, std::size_t bytes, T const* in, unsigned* hist, int bins, long long n) {
  auto const lv = row_levels<T>(bins);
  TW_BENCH_CUDA(cub::DeviceHistogram::HistogramEven(temp, bytes, in, hist, bins + 1, lv.first, lv.second, n));
}

/// Whether two device histograms agree; prints a WARNING otherwise.
bool agree(unsigned const* a, unsigned const* b, int bins, std::string const& what) {
  TW_BENCH_CUDA(cudaDeviceSynchronize());
  bool const ok = thrust::equal(thrust::device, a, a + bins, b);
  if (!ok) std::printf("WARNING: histogram_even %s differs from CUB's result\n", what.c_str());
  return ok;
}

/// The shortest timer for the largest bin counts (CUB's global path takes ~0.1 s a call there).
timer timer_for(device_env const& env, int bins) {
  timer t = env.tm;
  if (bins >= (1 << 24)) {
    t.warmup = 1;
    t.timed  = 3;
  }
  return t;
}

/// Above 256 bins CUB keeps one copy of the bins per block in temp storage (`cb` bytes) and
/// offsets it by int(block * bins): at blocks * bins >= 2^31 that overflows (an illegal address:
/// 2^24 bins), so CUB is not run there.
double cub_bin_blocks(std::size_t cb, int bins) { return bins > 256 ? double(cb) / (double(bins) * 4) : 0; }
bool cub_overflows_at(std::size_t cb, int bins) { return cub_bin_blocks(cb, bins) * bins >= 2147483648.0; }

template <class T>
hist_row measure_row(device_env& env, long long n, int bins, dist d) {
  hist_input<T> const in(n, bins, d);
  unsigned *ho = nullptr, *hc = nullptr;
  TW_BENCH_CUDA(cudaMalloc(&ho, std::size_t(bins) * 4));
  TW_BENCH_CUDA(cudaMalloc(&hc, std::size_t(bins) * 4));
  std::size_t const cb = cub_bytes<T>(in.samples, hc, bins, n);
  std::size_t free_b = 0, total_b = 0;
  TW_BENCH_CUDA(cudaMemGetInfo(&free_b, &total_b));
  double const cub_blocks  = cub_bin_blocks(cb, bins);
  bool const cub_overflows = cub_overflows_at(cb, bins);
  bool const cub_fits      = !cub_overflows && cb + (std::size_t(1) << 30) < free_b;
  void* ctemp         = nullptr;
  if (cub_fits) TW_BENCH_CUDA(cudaMalloc(&ctemp, std::max<std::size_t>(cb, 1)));
  histogram_plan plan;
  TW_BENCH_CUDA(ours_call<T>(env, in.samples, ho, bins, n, &plan));
  auto const launch = [&](std::size_t k) {
    if (k == 0) {
      histogram_plan p;
      TW_BENCH_CUDA(ours_call<T>(env, in.samples, ho, bins, n, &p));
    } else {
      cub_call<T>(ctemp, cb, in.samples, hc, bins, n);
    }
  };
  auto const us = timer_for(env, bins).interleaved(cub_fits ? 2 : 1, launch);
  hist_row r{sample_name<T>(), bins, d, us[0], cub_fits ? us[1] : NAN, double(n) * sizeof(T), plan_name(plan)};
  if (cub_fits) {
    launch(0);
    launch(1);
    agree(ho, hc, bins, std::string(sample_name<T>()) + " " + std::to_string(bins) + " bins " + dist_name(d));
    TW_BENCH_CUDA(cudaFree(ctemp));
  } else if (cub_overflows) {
    std::printf("note: CUB %s %d bins: its %.0f blocks x %d bins pass 2^31 (int offsets into its temp storage: an "
                "illegal address); not run\n", sample_name<T>(), bins, cub_blocks, bins);
  } else {
    std::printf("note: CUB's temp storage for %s %d bins (%zu MB) does not fit; not timed\n", sample_name<T>(), bins,
                cb >> 20);
  }
  TW_BENCH_CUDA(cudaFree(ho));
  TW_BENCH_CUDA(cudaFree(hc));
  return r;
}

floors measure_floors(device_env& env) {
  floors f;
  std::size_t const bytes = std::size_t(1) << 30;
  uint4* buf              = nullptr;
  unsigned* sink          = nullptr;
  TW_BENCH_CUDA(cudaMalloc(&buf, bytes));
  TW_BENCH_CUDA(cudaMalloc(&sink, 4));
  TW_BENCH_CUDA(cudaMemset(buf, 1, bytes));
  int per_sm = 0;
  TW_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_read_probe, 512, 0));
  unsigned const grid = unsigned(env.prop.multiProcessorCount * std::max(per_sm, 1));
  long long const nv  = static_cast<long long>(bytes / 16);
  auto const rd       = env.tm.interleaved(1, [&](std::size_t) {
    hist_read_probe<<<grid, 512>>>(buf, nv, sink);
    TW_BENCH_CUDA(cudaGetLastError());
  });
  f.read_gbs = double(bytes) / (rd[0] * 1e3);
  TW_BENCH_CUDA(cudaFree(buf));
  // 2^28 shared atomics in all: iters x 4 per thread over a full wave of blocks
  for (unsigned shift : {5u, 0u}) {
    std::size_t const smem = std::size_t(256u << shift) * 4;
    TW_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_atomic_probe, 512, smem));
    unsigned const blocks = unsigned(env.prop.multiProcessorCount * std::max(per_sm, 1));
    int const iters       = int((1ll << 28) / (4ll * 512 * blocks)) + 1;
    auto const at         = env.tm.interleaved(1, [&](std::size_t) {
      hist_atomic_probe<<<blocks, 512, smem>>>(sink, iters, shift);
      TW_BENCH_CUDA(cudaGetLastError());
    });
    double const rate = 4.0 * iters * 512.0 * blocks / at[0];
    (shift ? f.atomics_per_us : f.atomics1_per_us) = rate;
  }
  TW_BENCH_CUDA(cudaFree(sink));
  return f;
}

/// The floor of a row: its bytes at the read rate; 1-byte samples: also one shared atomic per
/// sample at the probe's rate (32 copies).
double floor_us(floors const& f, hist_row const& r) {
  double const read = r.bytes / (f.read_gbs * 1e3);
  if (r.type == "uint8") return std::max(read, r.bytes / f.atomics_per_us);
  return read;
}

void print_row(device_env const& env, floors const& f, hist_row const& r) {
  (void)env;
  std::printf("| %s | %d | %s | %s |", r.type.c_str(), r.bins, dist_name(r.d), r.plan.c_str());
  print_time(r.ours_us);
  print_time(r.cub_us);
  double const rate = f.read_gbs * 1e3;
  std::printf(" %.2f | %.1f %% | %.1f %% |", r.cub_us / r.ours_us, 100.0 * r.bytes / r.ours_us / rate,
              100.0 * r.bytes / r.cub_us / rate);
  std::printf(" %.1f | %.2f |\n", floor_us(f, r), r.cub_us / floor_us(f, r));
  std::fflush(stdout);
}

/// A row of a variants table: its input, a buffer for our histogram, and the reference every
/// variant is checked against: CUB's histogram of the input, or where CUB cannot run
/// (cub_overflows_at) our global strategy's, which the tests check against CUB at these bin
/// counts on inputs small enough for CUB's grid.
template <class T>
struct reference_row {
  hist_input<T> in;
  unsigned* ours = nullptr;
  unsigned* cub  = nullptr;
  reference_row(device_env& env, long long n, int bins, dist d) : in(n, bins, d) {
    TW_BENCH_CUDA(cudaMalloc(&ours, std::size_t(bins) * 4));
    TW_BENCH_CUDA(cudaMalloc(&cub, std::size_t(bins) * 4));
    std::size_t const cb = cub_bytes<T>(in.samples, cub, bins, n);
    if (cub_overflows_at(cb, bins)) {
      std::printf("note: %s %d bins: checked against the global strategy (CUB does not run here)\n",
                  sample_name<T>(), bins);
      histogram_plan global;
      global.strategy = histogram_strategy::global;
      TW_BENCH_CUDA(ours_call<T>(env, in.samples, cub, bins, n, &global));
      return;
    }
    void* ctemp = nullptr;
    TW_BENCH_CUDA(cudaMalloc(&ctemp, std::max<std::size_t>(cb, 1)));
    cub_call<T>(ctemp, cb, in.samples, cub, bins, n);
    TW_BENCH_CUDA(cudaFree(ctemp));
  }
  reference_row(reference_row const&)            = delete;
  reference_row& operator=(reference_row const&) = delete;
  ~reference_row() {
    cudaFree(ours);
    cudaFree(cub);
  }
};

/// Alternatives to the default plan on one row: each variant's median and its ratio to the
/// default's, each checked once against CUB.
template <class T>
void tune_row(device_env& env, long long n, int bins, dist d, std::vector<histogram_plan> const& variants) {
  reference_row<T> const ref(env, n, bins, d);
  hist_input<T> const& in = ref.in;
  unsigned* const ho      = ref.ours;
  unsigned const* hc      = ref.cub;
  std::vector<histogram_plan> all{histogram_plan{}};
  all.insert(all.end(), variants.begin(), variants.end());
  std::vector<histogram_plan> ran(all.size());
  std::vector<bool> ok(all.size(), true);
  for (std::size_t k = 0; k < all.size(); ++k) {
    ran[k]            = all[k];
    cudaError_t const e = ours_call<T>(env, in.samples, ho, bins, n, &ran[k]);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      ok[k] = false;
      continue;
    }
    agree(ho, hc, bins, std::string("tuning ") + sample_name<T>() + " " + std::to_string(bins) + " " + plan_name(ran[k]));
  }
  auto const us = timer_for(env, bins).interleaved(all.size(), [&](std::size_t k) {
    if (!ok[k]) return;
    histogram_plan p = all[k];
    TW_BENCH_CUDA(ours_call<T>(env, in.samples, ho, bins, n, &p));
  });
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::printf("| %s | %d | %s | %s%s |", sample_name<T>(), bins, dist_name(d),
                ok[k] ? plan_name(ran[k]).c_str() : "(refused)", k ? "" : " (default)");
    print_time(ok[k] ? us[k] : NAN);
    std::printf(" %.3f |\n", ok[k] ? us[0] / us[k] : NAN);
  }
  std::fflush(stdout);
}

template <class T>
using call_t = cudaError_t (*)(device_env&, T const*, unsigned*, int, long long, histogram_plan*);
template <class T>
using shape_list = std::vector<std::pair<std::string, call_t<T>>>;

/// The table's shape of 32-bit counters and three others.
template <class T>
shape_list<T> wide_shapes() {
  auto const& table = tilewise::detail::histogram_even_tuned::value;
  return {{std::to_string(table.block) + " x " + std::to_string(table.vectors) + " x " +
             std::to_string(table.min_blocks) + " (default)",
           &ours_call<T>},
          {"512 x 2 x 3", &ours_call<T, hist_shape<512, 2, 3>>},
          {"512 x 2 x 2", &ours_call<T, hist_shape<512, 2, 2>>},
          {"384 x 4 x 3", &ours_call<T, hist_shape<384, 4, 3>>}};
}

/// The table's shape of 16-bit counters (one block per SM), the same with the next round's loads
/// issued early or not (whichever the table does not), and three others.
template <class T>
shape_list<T> narrow_shapes() {
  constexpr auto table  = tilewise::detail::histogram_even_tuned::value;
  std::string const tbl =
    "16-bit " + std::to_string(table.narrow_block) + " x " + std::to_string(table.narrow_vectors) + " x 1";
  return {{tbl + (table.narrow_ahead ? ", next round ahead" : "") + " (default)", &ours_call<T>},
          {tbl + (table.narrow_ahead ? "" : ", next round ahead"),
           &ours_call<T, hist_narrow_shape<table.narrow_block, table.narrow_vectors, table.narrow_ahead ? 0 : 1>>},
          {"16-bit 512 x 8 x 1", &ours_call<T, hist_narrow_shape<512, 8>>},
          {"16-bit 1024 x 2 x 1", &ours_call<T, hist_narrow_shape<1024, 2>>},
          {"16-bit 768 x 4 x 1", &ours_call<T, hist_narrow_shape<768, 4>>}};
}

/// The table strategy's kernel as the table has it and with other probes, slots and threads.
template <class T>
shape_list<T> table_shapes() {
  auto const& table = tilewise::detail::histogram_even_tuned::value;
  return {{"table " + std::to_string(table.table_block) + " x " + std::to_string(table.table_slots) + " slots, " +
             (table.table_probe_reads ? "read" : "CAS") + " probes (default)",
           &ours_call<T>},
          {"table 1024 x 16384 slots, read probes", &ours_call<T, hist_table_shape<1, 16384, 1024>>},
          {"table 512 x 8192 slots, read probes", &ours_call<T, hist_table_shape<1, 8192, 512>>}};
}

/// Kernel shapes on one row (each with the default plan, or the plan `request` asks for; the
/// table's first), each checked once against CUB: what a change of block, vectors or register
/// cap would give.
template <class T>
void shape_row(device_env& env, long long n, int bins, dist d, shape_list<T> const& shapes,
               histogram_plan const* request = nullptr) {
  reference_row<T> const ref(env, n, bins, d);
  hist_input<T> const& in = ref.in;
  unsigned* const ho      = ref.ours;
  unsigned const* hc      = ref.cub;
  auto const call         = [&](std::size_t k) {
    histogram_plan p = request ? *request : histogram_plan{};
    return shapes[k].second(env, in.samples, ho, bins, n, request ? &p : nullptr);
  };
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    TW_BENCH_CUDA(call(k));
    agree(ho, hc, bins, "shape " + shapes[k].first + " " + sample_name<T>() + " " + std::to_string(bins));
  }
  auto const us = timer_for(env, bins).interleaved(shapes.size(), [&](std::size_t k) { TW_BENCH_CUDA(call(k)); });
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    std::printf("| %s | %d | %s | %s |", sample_name<T>(), bins, dist_name(d), shapes[k].first.c_str());
    print_time(us[k]);
    std::printf(" %.3f |\n", us[0] / us[k]);
  }
  std::fflush(stdout);
}

histogram_plan req(histogram_strategy s, unsigned copies = 0, unsigned cluster = 0, unsigned passes = 0,
                   unsigned counter_bits = 0) {
  histogram_plan p;
  p.strategy     = s;
  p.copies       = copies;
  p.cluster      = cluster;
  p.passes       = passes;
  p.counter_bits = counter_bits;
  return p;
}

}  // namespace

void run_histogram_even(device_env& env) {
  long long const n = 1ll << 28;
  floors const f    = measure_floors(env);
  std::printf("\n## device::histogram_even vs cub::DeviceHistogram::HistogramEven (2^28 samples, uint32 counters)\n\n");
  std::printf("Floors measured in this run: read-only kernel %.0f GB/s (copy %.0f GB/s read + write); shared-memory "
              "atomics %.0f G/s with 32 interleaved copies (one bank per lane), %.0f G/s with one copy (random "
              "banks), i.e. %.1f us for 2^28 atomics. %% read = samples' bytes per time / the read rate. floor: the "
              "row's bytes at the read rate (uint8: or 2^28 shared atomics, whichever is slower); cub/floor: the "
              "largest speed-up the floor allows.\n\n",
              f.read_gbs, env.copy_gbs, f.atomics_per_us * 1e-3, f.atomics1_per_us * 1e-3,
              double(n) / f.atomics_per_us);
  std::printf("| samples | bins | data | ours: plan | ours us | cub us | cub/ours | ours %% read | cub %% read | "
              "floor us | cub/floor |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<hist_row> rows;
  auto const run = [&](auto tag, std::vector<int> const& bin_list) {
    using T = decltype(tag);
    for (int bins : bin_list) {
      for (dist d : {dist::uniform, dist::zipf}) {
        if (std::is_same_v<T, std::uint8_t> && bins != 256 && d == dist::zipf) continue;  // values are bins only at 256
        rows.push_back(measure_row<T>(env, n, bins, d));
        print_row(env, f, rows.back());
      }
    }
  };
  run(std::uint8_t{}, {1, 256, 4096});
  run(std::int32_t{}, {1, 2, 255, 256, 257, 4096, 65536, 1 << 20, 1 << 24});
  run(float{}, {256, 4096, 65536, 1 << 20, 1 << 24});

  std::printf("\nAlternative plans (the default first; ratio > 1: the alternative is faster)\n\n"
              "| samples | bins | data | plan | us | default/plan |\n|---|---|---|---|---|---|\n");
  tune_row<std::uint8_t>(env, n, 256, dist::uniform,
                         {req(histogram_strategy::shared, 8), req(histogram_strategy::shared, 1)});
  for (dist d : {dist::uniform, dist::zipf}) {
    tune_row<std::int32_t>(env, n, 4096, d,
                           {req(histogram_strategy::shared, 1), req(histogram_strategy::shared, 8),
                            req(histogram_strategy::cluster, 0, 2)});
  }
  for (dist d : {dist::uniform, dist::zipf}) {
    tune_row<std::int32_t>(env, n, 65536, d,
                           {req(histogram_strategy::shared, 0, 0, 3, 32), req(histogram_strategy::shared, 0, 0, 2, 32),
                            req(histogram_strategy::shared, 0, 0, 2, 16), req(histogram_strategy::cluster, 0, 2),
                            req(histogram_strategy::global), req(histogram_strategy::table)});
  }
  // 87K to 463K bins took a cluster's bins in one pass before 16-bit shared counters
  for (dist d : {dist::uniform, dist::zipf}) {
    tune_row<std::int32_t>(env, n, 1 << 18, d,
                           {req(histogram_strategy::cluster), req(histogram_strategy::cluster, 0, 4),
                            req(histogram_strategy::global), req(histogram_strategy::table)});
  }
  for (dist d : {dist::uniform, dist::zipf}) {
    tune_row<std::int32_t>(env, n, 1 << 20, d,
                           {req(histogram_strategy::cluster, 0, 16, 3), req(histogram_strategy::global),
                            req(histogram_strategy::cluster, 0, 4), req(histogram_strategy::cluster, 0, 8),
                            req(histogram_strategy::table)});
  }
  for (dist d : {dist::uniform, dist::zipf}) {
    tune_row<std::int32_t>(env, n, 1 << 24, d, {req(histogram_strategy::table)});
  }

  std::printf("\nKernel shapes (threads x 16-byte vectors per thread x blocks per SM of the register cap; the "
              "table's first; ratio > 1: the shape is faster)\n\n"
              "| samples | bins | data | shape | us | default/shape |\n|---|---|---|---|---|---|\n");
  shape_row<float>(env, n, 256, dist::uniform, wide_shapes<float>());
  shape_row<std::int32_t>(env, n, 256, dist::uniform, wide_shapes<std::int32_t>());
  shape_row<std::int32_t>(env, n, 4096, dist::uniform, wide_shapes<std::int32_t>());
  shape_row<std::int32_t>(env, n, 65536, dist::uniform, narrow_shapes<std::int32_t>());
  shape_row<std::int32_t>(env, n, 65536, dist::zipf, narrow_shapes<std::int32_t>());
  histogram_plan const table_plan = req(histogram_strategy::table);
  for (int bins : {65536, 1 << 20}) {
    for (dist d : {dist::uniform, dist::zipf}) {
      shape_row<std::int32_t>(env, n, bins, d, table_shapes<std::int32_t>(), &table_plan);
    }
  }

  // Goals: uint8 256 uniform >= 1.3x; int32 4096 >= 10x (uniform and Zipf); 65536 >= 15x;
  // 2^20 >= 3x; every row >= 1.0x. A goal above the row's cub/floor is out of the floor's reach.
  std::printf("\n");
  int goals = 0, met = 0, below_one = 0;
  std::string goal_text, below_text;
  for (hist_row const& r : rows) {
    double goal = 0;
    if (r.type == "uint8" && r.bins == 256 && r.d == dist::uniform) goal = 1.3;
    if (r.type == "int32" && r.bins == 4096) goal = 10;
    if (r.type == "int32" && r.bins == 65536) goal = 15;
    if (r.type == "int32" && r.bins == (1 << 20)) goal = 3;
    double const ratio = r.cub_us / r.ours_us;
    if (!std::isnan(ratio) && ratio < 1.0) {
      ++below_one;
      below_text += " " + r.type + "/" + std::to_string(r.bins) + "/" + dist_name(r.d);
    }
    if (goal == 0) continue;
    ++goals;
    bool const ok = ratio >= goal;
    met += ok;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s%s %d %s %.2fx %s %.1fx (floor %.2fx%s)", goal_text.empty() ? "" : "; ",
                  r.type.c_str(), r.bins, r.d == dist::uniform ? "uniform" : "zipf", ratio, ok ? ">=" : "<", goal,
                  r.cub_us / floor_us(f, r), r.cub_us / floor_us(f, r) < goal ? ", out of reach" : "");
    goal_text += buf;
  }
  std::printf("summary: histogram_even goals met in %d of %d rows: %s; rows below 1.0x: %s; read %.0f GB/s, shared "
              "atomics %.0f G/s\n",
              met, goals, goal_text.c_str(), below_one ? below_text.c_str() : "none", f.read_gbs,
              f.atomics_per_us * 1e-3);

  if (std::string const path = env.csv_path("histogram_even"); !path.empty()) {
    std::FILE* out = open_csv("device_bench", path.c_str());
    std::fprintf(out, "samples,bins,data,plan,ours_us,cub_us,speedup,ours_pct_read,cub_pct_read,floor_us,read_gbs\n");
    for (hist_row const& r : rows) {
      std::fprintf(out, "%s,%d,%s,%s,%.4f,%.4f,%.4f,%.2f,%.2f,%.4f,%.1f\n", r.type.c_str(), r.bins, dist_name(r.d),
                   r.plan.c_str(), r.ours_us, r.cub_us, r.cub_us / r.ours_us,
                   100.0 * r.bytes / r.ours_us / (f.read_gbs * 1e3), 100.0 * r.bytes / r.cub_us / (f.read_gbs * 1e3),
                   floor_us(f, r), f.read_gbs);
    }
    close_csv("device_bench", out, path.c_str());
  }
}

}  // namespace tilewise_bench
