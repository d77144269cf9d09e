/// @file
/// @brief Harness code shared by the benchmarks (tile_bench, tile_ops_bench, block_bench): checked
///        CUDA calls, the command line, the no-device skip, interleaved event timing and CSV files.
///        The kernels, and so what is measured, stay in each benchmark.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include <tilewise/api.hpp>

namespace tilewise_bench {

// ---- checked CUDA calls --------------------------------------------------------------------------

/// Unless e is cudaSuccess: prints "file:line: what failed: ..." and exits with 1.
inline void check(cudaError_t e, char const* what, char const* file, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what, cudaGetErrorString(e),
                 cudaGetErrorName(e));
    std::exit(1);
  }
}
#define TW_BENCH_CUDA(call) ::tilewise_bench::check((call), #call, __FILE__, __LINE__)

// ---- command line and device ---------------------------------------------------------------------

/// Exit code of a benchmark that found no CUDA device (ctest's SKIP_RETURN_CODE).
constexpr int exit_skipped = 77;

struct options {
  bool quick      = false;    ///< --quick: fewer repetitions
  char const* csv = nullptr;  ///< --csv FILE: also write CSV there
  char const* json = nullptr; ///< --json FILE: also write JSON there (benchmarks that support it)
  char const* only = nullptr; ///< --only A,B: run only these sections (benchmarks that have sections)

  /// Whether section `s` runs: no --only, or `s` is one of its comma-separated names.
  bool runs(char const* s) const {
    if (!only) return true;
    std::string const list = std::string(",") + only + ",";
    return list.find(std::string(",") + s + ",") != std::string::npos;
  }
};

/// Parses --quick, --csv FILE, --json FILE, --only LIST and --help/-h into `opt`. Returns -1 to go on, else the exit code:
/// 0 after --help (usage on stdout), 2 after an unknown or incomplete argument (usage on stderr).
inline int parse_options(int argc, char** argv, char const* name, void (*usage)(std::FILE*), options& opt) {
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--quick")) {
      opt.quick = true;
    } else if (!std::strcmp(argv[a], "--csv") && a + 1 < argc) {
      opt.csv = argv[++a];
    } else if (!std::strcmp(argv[a], "--json") && a + 1 < argc) {
      opt.json = argv[++a];
    } else if (!std::strcmp(argv[a], "--only") && a + 1 < argc) {
      opt.only = argv[++a];
    } else if (!std::strcmp(argv[a], "--help") || !std::strcmp(argv[a], "-h")) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", name, argv[a]);
      usage(stderr);
      return 2;
    }
  }
  return -1;
}

/// True (after printing "NAME: no CUDA device, skipping") when there is no CUDA device.
inline bool skip_without_device(char const* name) {
  if (tilewise::cuda_device_count() != 0) return false;
  std::printf("%s: no CUDA device, skipping\n", name);
  return true;
}

/// The properties of the current device.
inline cudaDeviceProp device_properties() {
  int dev = 0;
  TW_BENCH_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  TW_BENCH_CUDA(cudaGetDeviceProperties(&prop, dev));
  return prop;
}

// ---- timing --------------------------------------------------------------------------------------

inline double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  std::size_t const h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (double(v[h - 1]) + double(v[h]));
}

/// Holds the GPU's work queue so that timed launches queue up behind a one-thread kernel and run
/// back to back once it is released, as nvbench times device code: the events then measure the
/// GPU's time (kernels and the gaps between them), not the host's latency in launching the first.
/// The kernel gives up after 1 s (a launch that waits for the host while held; reported).
static __global__ void hold_kernel(int const volatile* release, int* gave_up) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*release == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > 1000000000ull) {
      *gave_up = 1;
      return;
    }
    __nanosleep(500);
  }
}

struct stream_hold {
  int* flag      = nullptr;  ///< host-mapped release flag
  int* gave_up   = nullptr;  ///< host-mapped: set by a hold that timed out
  int* d_flag    = nullptr;  ///< their device addresses, queried once
  int* d_gave_up = nullptr;
  void create() {
    TW_BENCH_CUDA(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocMapped));
    gave_up = flag + 1;
    *gave_up = 0;
    TW_BENCH_CUDA(cudaHostGetDevicePointer(&d_flag, flag, 0));
    TW_BENCH_CUDA(cudaHostGetDevicePointer(&d_gave_up, gave_up, 0));
  }
  void destroy() { TW_BENCH_CUDA(cudaFreeHost(flag)); }
  void hold() const {
    __atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
    hold_kernel<<<1, 1>>>(d_flag, d_gave_up);
    TW_BENCH_CUDA(cudaGetLastError());
  }
  void release() const { __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST); }
};

/// Repetition counts and the two events that time one launch.
struct timer {
  int warmup = 3;
  int timed  = 21;
  cudaEvent_t start{}, stop{};

  void create_events() {
    TW_BENCH_CUDA(cudaEventCreate(&start));
    TW_BENCH_CUDA(cudaEventCreate(&stop));
  }
  void destroy_events() {
    TW_BENCH_CUDA(cudaEventDestroy(start));
    TW_BENCH_CUDA(cudaEventDestroy(stop));
  }

  /// Median kernel time (µs) of each of `count` variants: `warmup` rounds, a device synchronize,
  /// then `timed` rounds in which every variant runs once between the events, round r starting
  /// with variant r % count. launch(k) launches variant k; prepare() runs before every launch,
  /// outside the events. With `held` (a stream_hold), each timed launch is queued behind a held
  /// kernel first and released after its stop event (device time; launch(k) must not wait for
  /// the GPU).
  template <class Launch, class Prepare>
  std::vector<double> interleaved(std::size_t count, Launch const& launch, Prepare const& prepare,
                                  stream_hold const* held = nullptr) const {
    for (int k = 0; k < warmup; ++k) {
      for (std::size_t j = 0; j < count; ++j) {
        prepare();
        launch(j);
      }
    }
    TW_BENCH_CUDA(cudaDeviceSynchronize());
    std::vector<std::vector<float>> ms(count);
    for (int rep = 0; rep < timed; ++rep) {
      for (std::size_t j = 0; j < count; ++j) {
        std::size_t const k = (std::size_t(rep) + j) % count;
        if (held) held->hold();
        prepare();
        TW_BENCH_CUDA(cudaEventRecord(start));
        launch(k);
        TW_BENCH_CUDA(cudaEventRecord(stop));
        if (held) held->release();
        TW_BENCH_CUDA(cudaEventSynchronize(stop));
        float t = 0;
        TW_BENCH_CUDA(cudaEventElapsedTime(&t, start, stop));
        ms[k].push_back(t);
      }
    }
    std::vector<double> us;
    for (auto const& m : ms) us.push_back(1000.0 * median(m));
    return us;
  }
  template <class Launch>
  std::vector<double> interleaved(std::size_t count, Launch const& launch) const {
    return interleaved(count, launch, [] {});
  }
};

// ---- output --------------------------------------------------------------------------------------

/// fopen(path, "w"), or "NAME: cannot open PATH for writing: ..." and exit 1.
inline std::FILE* open_csv(char const* name, char const* path) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "%s: cannot open %s for writing: %s\n", name, path, std::strerror(errno));
    std::exit(1);
  }
  return f;
}

/// fclose(f), or "NAME: error writing PATH" and exit 1.
inline void close_csv(char const* name, std::FILE* f, char const* path) {
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "%s: error writing %s\n", name, path);
    std::exit(1);
  }
}

/// A table cell " 1.23 |", or " - |" for NaN (not measured).
inline void print_time(double us) {
  if (std::isnan(us)) {
    std::printf(" - |");
  } else {
    std::printf(" %.2f |", us);
  }
}

/// A CSV field ",1.2345", or "," for NaN.
inline void csv_time(std::FILE* f, double us) {
  if (std::isnan(us)) {
    std::fprintf(f, ",");
  } else {
    std::fprintf(f, ",%.4f", us);
  }
}

// ---- reduce / scan names and chains (chains: tile_bench, block_bench; names: device_bench too) -----

enum class prim { reduce, inclusive_scan, exclusive_scan };

constexpr char const* prim_name(prim p) {
  return p == prim::reduce ? "reduce" : p == prim::inclusive_scan ? "inclusive_scan" : "exclusive_scan";
}

template <class T>
constexpr char const* type_name() {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    return "int8";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return "int32";
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return "int64";
  } else if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else {
    static_assert(std::is_same_v<T, double>);
    return "double";
  }
}

/// One implementation (`which`, an enum of the benchmark) and two instances of its chain kernel
/// (in, out): `kernel` makes the timed chain, `once` a single call (the agreement check). The
/// chain length is a template argument of the kernels: with a run-time bound, ptxas reloaded it
/// from the constant bank inside the loop of some variants and not of others (block_bench reduce
/// int32 512: 9 % of the loop), which timed register allocation instead of the primitive.
template <class Impl, class T>
struct chain_variant {
  Impl which;
  void (*kernel)(T const*, T*);
  void (*once)(T const*, T*);
};

/// The device buffers, timer and warnings of a chain benchmark with `N` implementations.
template <int N>
struct chain_context {
  int sms = 0;
  timer time{3, 21};         ///< --quick: 1 and 7
  std::size_t capacity = 0;  ///< elements (of up to 8 bytes) per buffer
  void* in             = nullptr;
  void* out[N]         = {};  ///< one output per implementation
  std::vector<std::string> warnings;

  /// Allocates the buffers for `elements` values of up to 8 bytes, and the events.
  void allocate(std::size_t elements, bool quick) {
    if (quick) time = {1, 7};
    capacity = elements;
    TW_BENCH_CUDA(cudaMalloc(&in, capacity * sizeof(double)));
    for (auto& o : out) TW_BENCH_CUDA(cudaMalloc(&o, capacity * sizeof(double)));
    time.create_events();
  }
  void release() {
    for (auto o : out) TW_BENCH_CUDA(cudaFree(o));
    TW_BENCH_CUDA(cudaFree(in));
    time.destroy_events();
  }
};

/// "usage: NAME [--quick] [--csv FILE] [--help]", the description, then the two options.
inline void chain_usage(std::FILE* f, char const* name, char const* description) {
  std::fprintf(f,
               "usage: %s [--quick] [--csv FILE] [--help]\n%s"
               "  --quick     %d timed runs per variant instead of %d\n"
               "  --csv FILE  also write every row to FILE as CSV\n",
               name, description, 7, 21);
}

/// The grid of one row: SMs x the lowest occupancy among the row's kernels (at most `cap_per_sm`,
/// at least 1) x `waves`, so that every variant runs with full multiprocessors.
template <class Impl, class T>
unsigned row_grid(std::vector<chain_variant<Impl, T>> const& vs, int block, int cap_per_sm, int sms, int waves) {
  int per_sm = cap_per_sm;
  for (auto const& v : vs) {
    int b = 0;
    TW_BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, v.kernel, block, 0));
    per_sm = std::min(per_sm, b);
  }
  return unsigned(sms * std::max(per_sm, 1) * waves);
}

/// Sanity check for int32: one chain step (exact for the inputs) of every variant must agree with
/// variant 0 (ours) on the elements `checked(j, i)` selects; a mismatch prints and keeps
/// "WARNING: WHAT: IMPL differs from ours at element i (a vs b)". launch_once(j) runs variant j's
/// one-call kernel into its output `out[j]`.
template <int N, class Impl, class T, class LaunchOnce, class Checked, class ImplName>
void check_agreement(chain_context<N>& ctx, std::vector<chain_variant<Impl, T>> const& vs, std::size_t n,
                     char const* what, LaunchOnce const& launch_once, Checked const& checked,
                     ImplName const& impl_name) {
  std::vector<std::vector<T>> host(vs.size(), std::vector<T>(n));
  for (std::size_t j = 0; j < vs.size(); ++j) {
    launch_once(j);
    TW_BENCH_CUDA(cudaMemcpy(host[j].data(), ctx.out[int(vs[j].which)], n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  for (std::size_t j = 1; j < vs.size(); ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      if (checked(j, i) && host[j][i] != host[0][i]) {
        char msg[256];
        std::snprintf(msg, sizeof msg, "WARNING: %s: %s differs from ours at element %zu (%lld vs %lld)", what,
                      impl_name(vs[j].which), i, (long long)host[j][i], (long long)host[0][i]);
        ctx.warnings.emplace_back(msg);
        std::fprintf(stderr, "%s\n", msg);
        break;
      }
    }
  }
}

/// Copies n random values, never zero, to dst: integers in [1, int_max], floating point in
/// [0.5, 1.5). The seed depends on T only, so every shape of a type gets the same input.
template <class T>
T const* upload_random(void* dst, std::size_t n, [[maybe_unused]] T int_max) {
  std::mt19937 rng(sizeof(T) * 7919u + std::is_integral_v<T>);
  std::vector<T> h(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<T> d(1, int_max);
    for (auto& x : h) x = d(rng);
  } else {
    std::uniform_real_distribution<T> d(T(0.5), T(1.5));
    for (auto& x : h) x = d(rng);
  }
  TW_BENCH_CUDA(cudaMemcpy(dst, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return static_cast<T const*>(dst);
}

}  // namespace tilewise_bench
