// device_bench: tilewise::device::reduce / inclusive_scan / exclusive_scan against
// cub::DeviceReduce / cub::DeviceScan and Thrust on the same inputs in one process, with the
// device-to-device copy bandwidth measured in the same run.
//
// Per row: both (three) times as medians of CUDA-event-timed single calls (warm-up first, the
// implementations interleaved), the speed-up CUB / ours, and each one's share of the copy
// bandwidth (bytes the algorithm must move: n for reduce, 2n for scans, per time); then ours and
// CUB's device time ("held": each call queued behind a held kernel, as nvbench times, so the
// host's launch latency is not in it) and that speed-up. Inputs (and
// scan outputs) rotate through a pool of buffers at least twice the L2 size, so every call reads
// from DRAM. A tuning section times alternative tile shapes of our kernels (detail policies).
//
// Usage: device_bench [--quick] [--csv FILE] [--json FILE] [--only SECTIONS]
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <thrust/device_ptr.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>

#include <cuda/std/functional>

#include <string>

#include <tilewise/device/reduce.cuh>
#include <tilewise/device/scan.cuh>

#include "bench_common.cuh"
#include "device/env.cuh"

using namespace tilewise_bench;

/// The library's scan tuning (what the public calls use).
using default_scan = tilewise::detail::device_scan_tuned;

// Tile shapes to compare (the defaults are detail::device_scan_tuned / reduce_tuned); at namespace
// scope, not anonymous, so the kernels they parametrize keep external linkage.
/// A scan tuning of B threads x I items for every T, M blocks per multiprocessor for ptxas to fit
/// (a register cap; 0: none) and the look-back's sleeps in ns (0: none), on every grid.
template <unsigned B, unsigned I, unsigned M = 0, unsigned FirstNs = 0, unsigned PollNs = 0>
struct scan_shape_knobs {
  static constexpr tilewise::detail::device_scan_tuning value{
    .block               = B,
    .tile_bytes          = 0,
    .wide_items          = I,
    .items               = I,
    .min_blocks          = M,
    .min_blocks_flagged8 = M,
    .min_blocks_wide     = M,
    .look_back = {.first_delay_ns = FirstNs, .poll_delay_ns = PollNs, .delay_min_tiles = 0, .long_delay_ns = 0,
                  .long_delay_min_tiles = 0}};
};
template <unsigned B, unsigned I>
using scan_shape = scan_shape_knobs<B, I>;
/// A reduce tuning (detail::reduce_tuned or a shape below) with its values spelled out for shape_name.
template <class Tuning>
struct reduce_variant : Tuning {
  static constexpr unsigned block = Tuning::value.block, unroll = Tuning::value.unroll;
  static constexpr unsigned min_waves = Tuning::value.min_waves, max_waves = Tuning::value.max_waves;
  static constexpr long long chunk_bytes = Tuning::value.chunk_bytes;
};
using default_reduce = reduce_variant<tilewise::detail::reduce_tuned>;
/// A reduce shape with a fixed grid of `Waves` waves (min = max waves).
template <unsigned B, unsigned U, unsigned Waves = 1>
struct reduce_fixed {
  static constexpr tilewise::detail::reduce_tuning value{
    .block = B, .unroll = U, .chunk_bytes = 1, .min_waves = Waves, .max_waves = Waves};
};
template <unsigned B, unsigned U, unsigned Waves = 1>
using reduce_shape = reduce_variant<reduce_fixed<B, U, Waves>>;

namespace {

char const* const name = "device_bench";

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: device_bench [--quick] [--csv FILE] [--json FILE] [--only SECTIONS]\n"
               "  --quick      n = 2^16, 2^20, 2^24, 2^28 and fewer repetitions (about half a minute)\n"
               "  --csv FILE   also write the rows as CSV (sections other than scan: FILE_section.csv)\n"
               "  --only LIST  run only these comma-separated sections: scan (reduce and the scans, with\n"
               "               the tuning table), copy_if, histogram_even, group_by\n"
               "  --json FILE  also write the rows as JSON\n");
}

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Random non-zero values: integers in [1, 1000], floating point in [0.5, 1.5).
template <class T>
__global__ void fill_kernel(T* p, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = mix64(std::uint64_t(i));
    if constexpr (std::is_integral_v<T>) {
      p[i] = T(1 + r % 1000);
    } else {
      p[i] = T(0.5 + double(r >> 11) * 0x1.0p-53);
    }
  }
}

/// `count` input and output buffers of n elements in one allocation each, used in turn.
template <class T>
struct buffers {
  T* in            = nullptr;
  T* out           = nullptr;
  std::size_t step = 0;  // elements between buffers (256-byte aligned)
  int count        = 1;
  int next         = 0;

  buffers(long long n, std::size_t l2_bytes) {
    std::size_t const bytes = std::max<std::size_t>(std::size_t(n) * sizeof(T), 1);
    step                    = (bytes + 255) / 256 * 256 / sizeof(T);
    count                   = int(std::max<std::size_t>(1, (2 * l2_bytes + bytes - 1) / bytes));
    TW_BENCH_CUDA(cudaMalloc(&in, step * sizeof(T) * count));
    TW_BENCH_CUDA(cudaMalloc(&out, step * sizeof(T) * count));
    long long const total = static_cast<long long>(step) * count;
    fill_kernel<<<4096, 256>>>(in, total);
    TW_BENCH_CUDA(cudaGetLastError());
    TW_BENCH_CUDA(cudaMemset(out, 0, step * sizeof(T) * count));
    TW_BENCH_CUDA(cudaDeviceSynchronize());
  }
  ~buffers() {
    cudaFree(in);
    cudaFree(out);
  }
  void rotate() { next = (next + 1) % count; }
  T* input() const { return in + step * next; }
  T* output() const { return out + step * next; }
};

/// Our call with a given policy (the public calls use the default policy): reduce policies have
/// `unroll`; scan tunings are detail::device_scan_tuning tables (`value`).
template <class Policy, class T>
cudaError_t ours(prim a, void* temp, std::size_t& bytes, T const* in, T* out, long long n) {
  auto const plus = cuda::std::plus<>{};
  if constexpr (requires { Policy::unroll; }) {
    (void)a;
    return tilewise::detail::dispatch_reduce<Policy>(temp, bytes, in, out, n, plus, T(0), 0);
  } else if (a == prim::inclusive_scan) {
    return tilewise::detail::dispatch_scan<Policy, false>(temp, bytes, in, out, n, plus, T(0), 0);
  } else {
    return tilewise::detail::dispatch_scan<Policy, true>(temp, bytes, in, out, n, plus, T(0), 0);
  }
}

template <class T>
cudaError_t cub_call(prim a, void* temp, std::size_t& bytes, T const* in, T* out, long long n) {
  auto const plus = cuda::std::plus<>{};
  switch (a) {
    case prim::reduce: return cub::DeviceReduce::Reduce(temp, bytes, in, out, n, plus, T(0));
    case prim::inclusive_scan: return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, plus, n);
    default: return cub::DeviceScan::ExclusiveScan(temp, bytes, in, out, plus, T(0), n);
  }
}

template <class T>
void thrust_call(prim a, T const* in, T* out, long long n) {
  thrust::device_ptr<T const> first(in);
  thrust::device_ptr<T> result(out);
  switch (a) {
    case prim::reduce: {
      T const r = thrust::reduce(thrust::cuda::par, first, first + n, T(0), cuda::std::plus<>{});
      (void)r;
      break;
    }
    case prim::inclusive_scan: thrust::inclusive_scan(thrust::cuda::par, first, first + n, result); break;
    default: thrust::exclusive_scan(thrust::cuda::par, first, first + n, result, T(0)); break;
  }
}

struct row {
  std::string algorithm, type;
  long long n;
  double ours_us, cub_us, thrust_us, bytes;
  double ours_held_us, cub_held_us;  ///< device time: the launches queued behind a held kernel
};

using context = device_env;

__global__ void empty_kernel() {}

/// Median µs of an empty kernel launch timed like the rows (the floor of every small size): single
/// calls, and (second) queued behind a held kernel.
std::pair<double, double> measure_launch(timer const& tm, stream_hold const& held) {
  auto const launch = [&](std::size_t) {
    empty_kernel<<<1, 32>>>();
    TW_BENCH_CUDA(cudaGetLastError());
  };
  return {tm.interleaved(1, launch)[0], tm.interleaved(1, launch, [] {}, &held)[0]};
}

/// Median µs of a 1 GiB device-to-device copy -> GB/s (read + write).
double measure_copy(timer const& tm) {
  std::size_t const bytes = std::size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  TW_BENCH_CUDA(cudaMalloc(&a, bytes));
  TW_BENCH_CUDA(cudaMalloc(&b, bytes));
  TW_BENCH_CUDA(cudaMemset(a, 1, bytes));
  auto const us = tm.interleaved(1, [&](std::size_t) { TW_BENCH_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  TW_BENCH_CUDA(cudaFree(a));
  TW_BENCH_CUDA(cudaFree(b));
  return 2.0 * double(bytes) / (us[0] * 1e3);
}

template <class T>
row measure(context& c, prim a, long long n) {
  buffers<T> buf(n, c.l2_bytes);
  std::size_t ob = 0, cb = 0;
  if (a == prim::reduce) {
    TW_BENCH_CUDA(ours<default_reduce>(a, nullptr, ob, buf.input(), buf.output(), n));
  } else {
    TW_BENCH_CUDA(ours<default_scan>(a, nullptr, ob, buf.input(), buf.output(), n));
  }
  TW_BENCH_CUDA(cub_call(a, nullptr, cb, buf.input(), buf.output(), n));
  void* temp = c.temp_for(std::max(ob, cb));
  auto const launch = [&](std::size_t k) {
    if (k == 0) {
      std::size_t b = ob;
      if (a == prim::reduce) {
        TW_BENCH_CUDA(ours<default_reduce>(a, temp, b, buf.input(), buf.output(), n));
      } else {
        TW_BENCH_CUDA(ours<default_scan>(a, temp, b, buf.input(), buf.output(), n));
      }
    } else if (k == 1) {
      std::size_t b = cb;
      TW_BENCH_CUDA(cub_call(a, temp, b, buf.input(), buf.output(), n));
    } else {
      thrust_call(a, buf.input(), buf.output(), n);
    }
  };
  auto const us   = c.tm.interleaved(3, launch, [&] { buf.rotate(); });
  auto const held = c.tm.interleaved(2, launch, [&] { buf.rotate(); }, &c.held);  // not Thrust: it waits
  double const bytes = double(n) * sizeof(T) * (a == prim::reduce ? 1 : 2);
  return {prim_name(a), type_name<T>(), n, us[0], us[1], us[2], bytes, held[0], held[1]};
}

double pct_copy(context const& c, double bytes, double us) { return c.pct_copy(bytes, us); }

void print_row(context const& c, row const& r) {
  int const lg = int(std::lround(std::log2(double(r.n))));
  std::printf("| %s | %s | 2^%d |", r.algorithm.c_str(), r.type.c_str(), lg);
  print_time(r.ours_us);
  print_time(r.cub_us);
  print_time(r.thrust_us);
  std::printf(" %.3f | %.1f %% | %.1f %% |", r.cub_us / r.ours_us, pct_copy(c, r.bytes, r.ours_us),
              pct_copy(c, r.bytes, r.cub_us));
  print_time(r.ours_held_us);
  print_time(r.cub_held_us);
  std::printf(" %.3f |\n", r.cub_held_us / r.ours_held_us);
  std::fflush(stdout);
}

template <class P, class T>
std::string shape_name() {
  if constexpr (requires { P::unroll; }) {
    std::string const s = std::to_string(P::block) + " threads x " + std::to_string(P::unroll) + " vectors, ";
    if (P::min_waves == P::max_waves) {
      return s + std::to_string(P::max_waves) + (P::max_waves > 1 ? " waves" : " wave");
    }
    return s + "1 block per " + std::to_string(P::chunk_bytes >> 10) + " KB (" + std::to_string(P::min_waves) +
           " to " + std::to_string(P::max_waves) + " waves)";
  } else {
    using params  = tilewise::detail::scan_params<P, T, cuda::std::plus<>>;
    auto const lb = P::value.look_back;
    std::string s = std::to_string(params::block) + " threads x " + std::to_string(params::items) + " items";
    if (params::min_blocks) s += ", " + std::to_string(params::min_blocks) + " blocks per SM";
    if (lb.first_delay_ns || lb.poll_delay_ns) {
      s += ", look-back sleeps " + std::to_string(lb.first_delay_ns) + "/" + std::to_string(lb.poll_delay_ns) + " ns";
      if (lb.delay_min_tiles) s += " from " + std::to_string(lb.delay_min_tiles) + " tiles";
      if (lb.long_delay_ns) {
        s += ", first " + std::to_string(lb.long_delay_ns) + " ns from " + std::to_string(lb.long_delay_min_tiles) +
             " tiles";
      }
    }
    return s;
  }
}

/// Alternative tile shapes of our kernels (the first is the default): median time of each and
/// its ratio to the first, one table row per shape.
template <class T, class... Shapes>
void tune(context& c, prim a, long long n) {
  buffers<T> buf(n, c.l2_bytes);
  using fn = cudaError_t (*)(prim, void*, std::size_t&, T const*, T*, long long);
  std::vector<fn> const fns{&ours<Shapes, T>...};
  std::vector<std::string> const names{shape_name<Shapes, T>()...};
  std::size_t bytes = 0;
  for (fn f : fns) {
    std::size_t b = 0;
    TW_BENCH_CUDA(f(a, nullptr, b, buf.input(), buf.output(), n));
    bytes = std::max(bytes, b);
  }
  void* temp    = c.temp_for(bytes);
  auto const us = c.tm.interleaved(
    fns.size(),
    [&](std::size_t k) {
      std::size_t b = bytes;
      TW_BENCH_CUDA(fns[k](a, temp, b, buf.input(), buf.output(), n));
    },
    [&] { buf.rotate(); });
  int const lg = int(std::lround(std::log2(double(n))));
  if constexpr (std::is_integral_v<T>) {  // integer results do not depend on the shape: check them
    std::size_t const m = a == prim::reduce ? 1 : std::size_t(n);
    T* ref              = nullptr;
    TW_BENCH_CUDA(cudaMalloc(&ref, m * sizeof(T)));
    for (std::size_t k = 0; k < fns.size(); ++k) {
      std::size_t b = bytes;
      TW_BENCH_CUDA(fns[k](a, temp, b, buf.input(), buf.output(), n));
      if (k == 0) {
        TW_BENCH_CUDA(cudaMemcpy(ref, buf.output(), m * sizeof(T), cudaMemcpyDeviceToDevice));
      } else if (!thrust::equal(thrust::device, ref, ref + m, buf.output())) {
        std::printf("WARNING: %s %s 2^%d: %s differs from the default's result\n", prim_name(a), type_name<T>(), lg,
                    names[k].c_str());
      }
    }
    TW_BENCH_CUDA(cudaFree(ref));
  }
  for (std::size_t k = 0; k < fns.size(); ++k) {
    std::printf("| %s | %s | 2^%d | %s%s |", prim_name(a), type_name<T>(), lg, names[k].c_str(), k ? "" : " (default)");
    print_time(us[k]);
    std::printf(" %.3f |\n", us[0] / us[k]);
  }
  std::fflush(stdout);
}

void reduce_and_scans(context& c, cudaDeviceProp const& prop) {
  std::printf("| algorithm | T | n | ours us | cub us | thrust us | cub/ours | ours %% copy | cub %% copy | ours held us "
              "| cub held us | cub/ours held |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");

  std::vector<int> logs;
  if (c.opt.quick) {
    logs = {16, 20, 24, 28};
  } else {
    for (int k = 10; k <= 30; ++k) logs.push_back(k);
  }
  std::vector<row> rows;
  for (prim a : {prim::reduce, prim::inclusive_scan, prim::exclusive_scan}) {
    for (int k : logs) {
      long long const n = 1ll << k;
      rows.push_back(measure<std::int32_t>(c, a, n));
      print_row(c, rows.back());
      rows.push_back(measure<std::int64_t>(c, a, n));
      print_row(c, rows.back());
      rows.push_back(measure<float>(c, a, n));
      print_row(c, rows.back());
      rows.push_back(measure<double>(c, a, n));
      print_row(c, rows.back());
    }
  }

  // Goals: reduce >= 1.00x at 2^28 and >= 1.8x at 2^16..2^20; scans >= 1.3x at 2^28 and 2^20.
  std::printf("\n");
  int met = 0, goals = 0, met_held = 0;
  for (row const& r : rows) {
    int const lg    = int(std::lround(std::log2(double(r.n))));
    double goal     = 0;
    bool const scan = r.algorithm != "reduce";
    if (!scan && lg == 28) goal = 1.0;
    if (!scan && lg >= 16 && lg <= 20) goal = 1.8;
    if (scan && (lg == 28 || lg == 20)) goal = 1.3;
    if (goal == 0) continue;
    ++goals;
    double const ratio = r.cub_us / r.ours_us, ratio_held = r.cub_held_us / r.ours_held_us;
    met += ratio >= goal;
    met_held += ratio_held >= goal;
    if (ratio < goal || ratio_held < goal) {
      std::printf("goal missed%s: %s %s 2^%d: %.3fx per call, %.3fx held; goal %.2fx\n",
                  ratio < goal ? (ratio_held < goal ? "" : " per call") : " held", r.algorithm.c_str(),
                  r.type.c_str(), lg, ratio, ratio_held, goal);
    }
  }
  std::printf("summary: goals met in %d of %d rows; copy %.0f GB/s\n", met, goals, c.copy_gbs);
  std::printf("summary (held, device time): goals met in %d of %d rows\n", met_held, goals);
  if (*c.held.gave_up) std::printf("WARNING: a held kernel gave up after 1 s: the held times are not valid\n");

  // Tile shapes: default first; ratio > 1 means the alternative is faster.
  std::printf("\n| algorithm | T | n | shape | us | default/shape |\n|---|---|---|---|---|---|\n");
  for (int k : c.opt.quick ? std::vector<int>{20, 24, 28} : std::vector<int>{16, 20, 24, 28, 30}) {
    long long const n = 1ll << k;
    tune<std::int32_t, default_reduce, reduce_shape<512, 4, 1>, reduce_shape<512, 4, 4>,
         reduce_shape<512, 4, 32>, reduce_shape<256, 4, 4>, reduce_shape<512, 8, 4>, reduce_shape<1024, 4, 4>,
         reduce_shape<512, 2, 4>>(c, prim::reduce, n);
    tune<double, default_reduce, reduce_shape<512, 4, 1>, reduce_shape<512, 4, 4>, reduce_shape<512, 4, 32>,
         reduce_shape<512, 2, 4>, reduce_shape<256, 4, 4>, reduce_shape<1024, 2, 4>, reduce_shape<512, 8, 2>>(
      c, prim::reduce, n);
    // the defaults (32 KB tiles held in shared memory, 6 blocks per SM, sleeps from 1024 tiles)
    // against 5 blocks per SM, 128-thread blocks, and CUB's sm_90 tuning for 4-byte plus:
    // 128 x 24, look-back sleeps 1245 ns first, 648 between polls
    tune<std::int32_t, default_scan, scan_shape_knobs<256, 32, 5, 1245, 648>,
         scan_shape_knobs<128, 64, 12, 1245, 648>, scan_shape_knobs<128, 24, 0, 1245, 648>>(c, prim::inclusive_scan,
                                                                                            n);
    tune<double, default_scan, scan_shape_knobs<256, 16, 5, 1245, 648>,
         scan_shape_knobs<128, 32, 12, 1245, 648>, scan_shape<256, 16>>(c, prim::inclusive_scan, n);
  }
  // where the sleeps start (device_scan_tuning::look_back.delay_min_tiles): 4-byte tiles of 8192 items, 2^22 = 512 tiles
  for (int k : {22, 23}) {
    tune<std::int32_t, default_scan, scan_shape_knobs<256, 32, 6>,
         scan_shape_knobs<256, 32, 6, 1245, 648>>(c, prim::inclusive_scan, 1ll << k);
  }
  // 1-byte values: 32 KB tiles (256 x 128) against 8 KB ones (256 x 32)
  for (int k : {24, 28}) {
    tune<std::int8_t, default_scan, scan_shape_knobs<256, 32, 6, 1245, 648>>(c, prim::inclusive_scan,
                                                                                         1ll << k);
  }
  // 8-byte at 2^28: CUB's sm_90 tuning: 224 x 24, sleeps 1290/632 ns (int64), 1215/576 (double)
  tune<std::int64_t, default_scan, scan_shape_knobs<256, 16, 5, 1245, 648>,
       scan_shape_knobs<224, 24, 0, 1290, 632>>(c, prim::inclusive_scan, 1ll << 28);
  tune<double, default_scan, scan_shape_knobs<224, 24, 0, 1215, 576>>(c, prim::inclusive_scan, 1ll << 28);

  if (c.opt.csv) {
    std::FILE* f = open_csv(name, c.opt.csv);
    std::fprintf(f, "algorithm,type,n,ours_us,cub_us,thrust_us,speedup,ours_pct_copy,cub_pct_copy,copy_gbs,"
                    "ours_held_us,cub_held_us,speedup_held\n");
    for (row const& r : rows) {
      std::fprintf(f, "%s,%s,%lld", r.algorithm.c_str(), r.type.c_str(), r.n);
      csv_time(f, r.ours_us);
      csv_time(f, r.cub_us);
      csv_time(f, r.thrust_us);
      std::fprintf(f, ",%.4f,%.2f,%.2f,%.1f", r.cub_us / r.ours_us, pct_copy(c, r.bytes, r.ours_us),
                   pct_copy(c, r.bytes, r.cub_us), c.copy_gbs);
      csv_time(f, r.ours_held_us);
      csv_time(f, r.cub_held_us);
      std::fprintf(f, ",%.4f\n", r.cub_held_us / r.ours_held_us);
    }
    close_csv(name, f, c.opt.csv);
  }
  if (c.opt.json) {
    std::FILE* f = open_csv(name, c.opt.json);
    std::fprintf(f, "{\"device\": \"%s\", \"copy_gbs\": %.1f, \"rows\": [\n", prop.name, c.copy_gbs);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      row const& r = rows[i];
      std::fprintf(f,
                   "  {\"algorithm\": \"%s\", \"type\": \"%s\", \"n\": %lld, \"ours_us\": %.4f, \"cub_us\": %.4f, "
                   "\"thrust_us\": %.4f, \"speedup\": %.4f, \"ours_pct_copy\": %.2f, \"cub_pct_copy\": %.2f, "
                   "\"ours_held_us\": %.4f, \"cub_held_us\": %.4f, \"speedup_held\": %.4f}%s\n",
                   r.algorithm.c_str(), r.type.c_str(), r.n, r.ours_us, r.cub_us, r.thrust_us, r.cub_us / r.ours_us,
                   pct_copy(c, r.bytes, r.ours_us), pct_copy(c, r.bytes, r.cub_us), r.ours_held_us, r.cub_held_us,
                   r.cub_held_us / r.ours_held_us, i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    close_csv(name, f, c.opt.json);
  }
}

}  // namespace

int main(int argc, char** argv) {
  context c;
  if (int const rc = parse_options(argc, argv, name, usage, c.opt); rc >= 0) return rc;
  if (skip_without_device(name)) return exit_skipped;
  cudaDeviceProp const prop = device_properties();
  c.prop                    = prop;
  c.l2_bytes                = std::size_t(prop.l2CacheSize);
  if (c.opt.quick) {
    c.tm.warmup = 2;
    c.tm.timed  = 9;
  } else {
    c.tm.warmup = 3;
    c.tm.timed  = 21;
  }
  c.tm.create_events();
  c.held.create();
  c.copy_gbs          = measure_copy(c.tm);
  auto const launch_us = measure_launch(c.tm, c.held);
  c.launch_us          = launch_us.first;
  std::printf("device_bench on %s (sm_%d%d, %d SMs, L2 %zu MB): median of %d single calls (us), CUDA events;\n"
              "device-to-device copy %.0f GB/s (read + write) measured in this run; %% copy = bytes moved "
              "(reduce n, scans 2n) per time / copy bandwidth; an empty kernel timed the same way: %.2f us.\n"
              "\"held\" columns: device time, each call queued behind a held kernel and released after its stop "
              "event (as nvbench times), so the host's latency in launching is not counted: empty kernel %.2f us\n\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, c.l2_bytes >> 20, c.tm.timed, c.copy_gbs,
              launch_us.first, launch_us.second);
  if (c.opt.runs("scan")) {
    reduce_and_scans(c, prop);
  }
  if (c.opt.runs("copy_if")) run_copy_if(c);
  if (c.opt.runs("histogram_even")) run_histogram_even(c);
  if (c.opt.runs("group_by")) run_group_by(c);
  if (c.temp) TW_BENCH_CUDA(cudaFree(c.temp));
  c.held.destroy();
  c.tm.destroy_events();
  return 0;
}
