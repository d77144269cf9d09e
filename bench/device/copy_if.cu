// device_bench section: device::copy_if, copy_flagged and copy_if_unordered against
// cub::DeviceSelect::If / Flagged and thrust::copy_if on the same inputs: int32, int64, float,
// double; 1, 50 and 99 % kept (a threshold on uniform values; copy_flagged takes the same
// selection as uint8 flags); n = 2^16 ... 2^30 (--quick: up to 2^28). Inputs and outputs rotate
// through buffers of at least twice the L2 size. % copy counts the bytes read (n values, and n
// flags for the flagged rows) plus the bytes written (the kept values). Every timed variant's
// output is checked once against CUB's (count and checksum; a WARNING on a mismatch). Then the
// goal rows with their floors (the bytes at this run's copy rate plus one empty launch), and a
// tuning table of alternative copy_if tables.
#include <cub/device/device_select.cuh>

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <tilewise/device/copy_if.cuh>
#include <tilewise/device/copy_if_unordered.cuh>

#include "env.cuh"

namespace tilewise_bench {

/// Keeps values below `bound` (at namespace scope: kernels take it).
template <class T>
struct below {
  T bound;
  __host__ __device__ bool operator()(T const& x) const { return x < bound; }
};

/// A copy_if tuning table with some values changed (at namespace scope: kernels take it).
template <unsigned TileBytes, unsigned MinBlocks, bool WarpCompact, unsigned FlaggedTileBytes = 40960,
          unsigned Block = tilewise::detail::copy_if_tuned::value.block>
struct copy_if_variant {
  static constexpr tilewise::detail::copy_if_tuning value = [] {
    auto t               = tilewise::detail::copy_if_tuned::value;
    t.block              = Block;
    t.tile_bytes         = TileBytes;
    t.min_blocks         = MinBlocks;
    t.warp_compact       = WarpCompact;
    t.flagged_tile_bytes = FlaggedTileBytes;
    return t;
  }();
};

namespace {

__host__ __device__ inline std::uint64_t ci_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr double value_range = 1000000.0;  ///< integers: uniform in [0, 1e6); floats in [0, 1)

template <class T>
__global__ void ci_fill(T* v, std::uint8_t* flags, long long n, below<T> pred) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = ci_mix(std::uint64_t(i));
    T x;
    if constexpr (std::is_integral_v<T>) {
      x = T(r % 1000000);
    } else {
      x = T(double(r >> 11) * 0x1.0p-53);
    }
    v[i]     = x;
    flags[i] = pred(x);
  }
}

template <class T>
below<T> bound_for(int percent) {
  if constexpr (std::is_integral_v<T>) {
    return {T(value_range * percent / 100)};
  } else {
    return {T(percent / 100.0)};
  }
}

/// `count` input, flag and output buffers of n elements in one allocation each, used in turn.
template <class T>
struct select_buffers {
  T* in               = nullptr;
  T* out              = nullptr;
  std::uint8_t* flags = nullptr;
  long long* counts   = nullptr;  ///< one count per variant (Thrust's: thrust_kept, on the host)
  long long thrust_kept = 0;
  std::size_t step = 0, fstep = 0;
  int count = 1, next = 0;

  select_buffers(long long n, std::size_t l2_bytes, below<T> pred, int variants) {
    std::size_t const bytes = std::max<std::size_t>(std::size_t(n) * sizeof(T), 1);
    step                    = (bytes + 255) / 256 * 256 / sizeof(T);
    fstep                   = (std::size_t(n) + 255) / 256 * 256;
    count                   = int(std::max<std::size_t>(1, (2 * l2_bytes + bytes - 1) / bytes));
    TW_BENCH_CUDA(cudaMalloc(&in, step * sizeof(T) * count));
    TW_BENCH_CUDA(cudaMalloc(&out, step * sizeof(T) * count));
    TW_BENCH_CUDA(cudaMalloc(&flags, fstep * count));
    TW_BENCH_CUDA(cudaMalloc(&counts, sizeof(long long) * variants));
    for (int k = 0; k < count; ++k) {
      ci_fill<<<4096, 256>>>(in + step * k, flags + fstep * k, n, pred);
      TW_BENCH_CUDA(cudaGetLastError());
    }
    TW_BENCH_CUDA(cudaMemset(out, 0, step * sizeof(T) * count));
    TW_BENCH_CUDA(cudaDeviceSynchronize());
  }
  ~select_buffers() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(flags);
    cudaFree(counts);
  }
  void rotate() { next = (next + 1) % count; }
  T* input() const { return in + step * next; }
  T* output() const { return out + step * next; }
  std::uint8_t* flag() const { return flags + fstep * next; }
};

/// Sums over out[0, *count): of ci_mix(bits) (any order) and of ci_mix(bits ^ index) (in order).
template <class T>
__global__ void ci_checksum(T const* out, long long const* count, unsigned long long* sums) {
  long long const c = *count;
  unsigned long long any = 0, ordered = 0;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < c; i += 256ll * gridDim.x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, out + i, sizeof(T));
    any += ci_mix(bits);
    ordered += ci_mix(bits ^ (std::uint64_t(i) * 0x9E3779B97F4A7C15ull));
  }
  atomicAdd(sums, any);
  atomicAdd(sums + 1, ordered);
}

struct check_sums {
  long long count = 0;
  unsigned long long any = 0, ordered = 0;
  bool operator==(check_sums const&) const = default;
};

template <class T>
check_sums sums_of(T const* out, long long const* count) {
  unsigned long long* s = nullptr;
  TW_BENCH_CUDA(cudaMalloc(&s, 16));
  TW_BENCH_CUDA(cudaMemset(s, 0, 16));
  ci_checksum<<<1024, 256>>>(out, count, s);
  TW_BENCH_CUDA(cudaGetLastError());
  check_sums r;
  unsigned long long h[2];
  TW_BENCH_CUDA(cudaMemcpy(&r.count, count, 8, cudaMemcpyDeviceToHost));
  TW_BENCH_CUDA(cudaMemcpy(h, s, 16, cudaMemcpyDeviceToHost));
  TW_BENCH_CUDA(cudaFree(s));
  r.any     = h[0];
  r.ordered = h[1];
  return r;
}

enum variant : int { v_copy_if, v_flagged, v_unordered, v_cub_if, v_cub_flagged, v_thrust, v_count };

struct ci_row {
  std::string algorithm, type;
  int percent;
  long long n, kept;
  double ours_us, cub_us, thrust_us, bytes;
};

template <class T>
char const* ci_type() {
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else return "double";
}

/// Variant k on the current buffers, or its size query (temp == nullptr; not Thrust). The count
/// goes to counts[k] (Thrust's to thrust_kept).
template <class T>
void launch_variant(int k, void* temp, std::size_t& sz, select_buffers<T>& b, long long n, below<T> pred) {
  long long* const c = b.counts + k;
  switch (k) {
    case v_copy_if: TW_BENCH_CUDA(tilewise::device::copy_if(temp, sz, b.input(), b.output(), c, n, pred)); break;
    case v_flagged:
      TW_BENCH_CUDA(tilewise::device::copy_flagged(temp, sz, b.input(), b.flag(), b.output(), c, n));
      break;
    case v_unordered:
      TW_BENCH_CUDA(tilewise::device::copy_if_unordered(temp, sz, b.input(), b.output(), c, n, pred));
      break;
    case v_cub_if: TW_BENCH_CUDA(cub::DeviceSelect::If(temp, sz, b.input(), b.output(), c, n, pred)); break;
    case v_cub_flagged:
      TW_BENCH_CUDA(cub::DeviceSelect::Flagged(temp, sz, b.input(), b.flag(), b.output(), c, n));
      break;
    default: {
      thrust::device_ptr<T const> first(b.input());
      auto const end = thrust::copy_if(thrust::cuda::par, first, first + n, thrust::device_ptr<T>(b.output()), pred);
      b.thrust_kept  = end - thrust::device_ptr<T>(b.output());  // copy_if waited for the count
    }
  }
}

/// All variants on one input: the rows (copy_if, copy_flagged, copy_if_unordered) and the check.
template <class T>
void measure(device_env& env, int percent, long long n, std::vector<ci_row>& rows) {
  below<T> const pred = bound_for<T>(percent);
  select_buffers<T> b(n, env.l2_bytes, pred, v_count);
  std::size_t bytes[v_count] = {};
  for (int k = 0; k < v_thrust; ++k) {
    launch_variant(k, nullptr, bytes[k], b, n, pred);
  }
  void* temp = env.temp_for(*std::max_element(bytes, bytes + v_count));
  auto const launch = [&](int k) {
    std::size_t sz = bytes[k];
    launch_variant(k, temp, sz, b, n, pred);
  };
  auto const us = env.tm.interleaved(v_count, [&](std::size_t k) { launch(int(k)); }, [&] { b.rotate(); });

  // Check each variant once on buffer 0 against CUB's If.
  b.next = 0;
  launch(v_cub_if);
  TW_BENCH_CUDA(cudaDeviceSynchronize());
  check_sums const want = sums_of(b.output(), b.counts + v_cub_if);
  int const lg          = int(std::lround(std::log2(double(n))));
  char const* const names[v_count] = {"copy_if", "copy_flagged", "copy_if_unordered", "cub If", "cub Flagged",
                                      "thrust copy_if"};
  for (int k = 0; k < v_count; ++k) {
    if (k == v_cub_if) continue;
    TW_BENCH_CUDA(cudaMemset(b.output(), 0, std::size_t(n) * sizeof(T)));
    launch(k);
    TW_BENCH_CUDA(cudaDeviceSynchronize());
    if (k == v_thrust) {
      TW_BENCH_CUDA(cudaMemcpy(b.counts + k, &b.thrust_kept, sizeof(long long), cudaMemcpyHostToDevice));
    }
    check_sums got = sums_of(b.output(), b.counts + k);
    if (k == v_unordered) got.ordered = want.ordered;  // any order
    if (!(got == want)) {
      std::printf("WARNING: %s %s %d %% 2^%d: count %lld (CUB %lld) or checksum differs from CUB's\n", names[k],
                  ci_type<T>(), percent, lg, got.count, want.count);
    }
  }
  double const in_bytes = double(n) * sizeof(T), out_bytes = double(want.count) * sizeof(T);
  rows.push_back({"copy_if", ci_type<T>(), percent, n, want.count, us[v_copy_if], us[v_cub_if], us[v_thrust],
                  in_bytes + out_bytes});
  rows.push_back({"copy_flagged", ci_type<T>(), percent, n, want.count, us[v_flagged], us[v_cub_flagged], NAN,
                  in_bytes + double(n) + out_bytes});
  rows.push_back({"copy_if_unordered", ci_type<T>(), percent, n, want.count, us[v_unordered], us[v_cub_if], NAN,
                  in_bytes + out_bytes});
}

void print_ci_row(device_env const& env, ci_row const& r) {
  int const lg = int(std::lround(std::log2(double(r.n))));
  std::printf("| %s | %s | %d %% | 2^%d |", r.algorithm.c_str(), r.type.c_str(), r.percent, lg);
  print_time(r.ours_us);
  print_time(r.cub_us);
  print_time(r.thrust_us);
  std::printf(" %.3f | %.1f %% | %.1f %% |\n", r.cub_us / r.ours_us, env.pct_copy(r.bytes, r.ours_us),
              env.pct_copy(r.bytes, r.cub_us));
  std::fflush(stdout);
}

/// The goal of a row (ratio to CUB's stable call), 0 when none; `what` names it.
double goal_of(ci_row const& r, std::string& what) {
  int const lg = int(std::lround(std::log2(double(r.n))));
  if (r.algorithm == "copy_if") {
    if (lg == 28 && r.percent == 50) {
      what = "copy_if 2^28 50 % >= 1.30x";
      return 1.30;
    }
    if (lg == 20) {
      what = "copy_if 2^20 >= 1.30x";
      return 1.30;
    }
    what = "copy_if >= 1.00x";
    return 1.0;
  }
  if (r.algorithm == "copy_if_unordered" && lg == 28 && r.percent == 50) {
    what = "copy_if_unordered 2^28 50 % >= 1.45x CUB If";
    return 1.45;
  }
  return 0;
}

/// Variant `which` (copy_if, copy_flagged or copy_if_unordered) with another table.
template <class Tuning, class T>
cudaError_t tuned_call(void* temp, std::size_t& sz, select_buffers<T>& s, long long* c, long long n, below<T> pred,
                       int which) {
  using namespace tilewise::detail;
  if (which == v_flagged) {
    return dispatch_copy_if<Tuning>(temp, sz, s.input(), keep_flagged<std::uint8_t*>{s.flag()}, s.output(), c, n, 0);
  }
  if (which == v_unordered) {
    return dispatch_copy_if_unordered<Tuning>(temp, sz, s.input(), keep_if<below<T>>{pred}, s.output(), c, n, 0);
  }
  return dispatch_copy_if<Tuning>(temp, sz, s.input(), keep_if<below<T>>{pred}, s.output(), c, n, 0);
}

/// Alternative copy_if tables on one input (the first is the default): median time of each, its
/// ratio to the first, and a check of each one's output against the default's.
template <class T, class... Tunings>
void tune(device_env& env, int which, int percent, long long n) {
  below<T> const pred = bound_for<T>(percent);
  select_buffers<T> b(n, env.l2_bytes, pred, int(sizeof...(Tunings)));
  using fn = cudaError_t (*)(void*, std::size_t&, select_buffers<T>&, long long*, long long, below<T>, int);
  std::vector<fn> const fns{&tuned_call<Tunings, T>...};
  std::vector<std::string> const names{[] {
    auto const v = Tunings::value;
    std::string s = std::to_string(v.block) + " threads, " + std::to_string(v.tile_bytes >> 10) + " KB tiles";
    if (v.min_blocks) s += ", " + std::to_string(v.min_blocks) + " blocks per SM";
    s += ", flagged " + std::to_string(v.flagged_tile_bytes >> 10) + " KB";
    if (v.warp_compact) s += ", warp-compacted stores";
    return s;
  }()...};
  std::size_t bytes = 0;
  for (fn f : fns) {
    std::size_t sz = 0;
    TW_BENCH_CUDA(f(nullptr, sz, b, b.counts, n, pred, which));
    bytes = std::max(bytes, sz);
  }
  void* temp    = env.temp_for(bytes);
  auto const us = env.tm.interleaved(
    fns.size(),
    [&](std::size_t k) {
      std::size_t sz = bytes;
      TW_BENCH_CUDA(fns[k](temp, sz, b, b.counts + k, n, pred, which));
    },
    [&] { b.rotate(); });
  b.next = 0;
  check_sums first;
  int const lg = int(std::lround(std::log2(double(n))));
  for (std::size_t k = 0; k < fns.size(); ++k) {
    std::size_t sz = bytes;
    TW_BENCH_CUDA(fns[k](temp, sz, b, b.counts + k, n, pred, which));
    TW_BENCH_CUDA(cudaDeviceSynchronize());
    check_sums s = sums_of(b.output(), b.counts + k);
    if (which == v_unordered) s.ordered = 0;
    if (k == 0) {
      first = s;
    } else if (!(s == first)) {
      std::printf("WARNING: tuning %s 2^%d: %s differs from the default's output\n", ci_type<T>(), lg,
                  names[k].c_str());
    }
  }
  char const* const algo = which == v_flagged ? "copy_flagged" : which == v_unordered ? "copy_if_unordered" : "copy_if";
  for (std::size_t k = 0; k < fns.size(); ++k) {
    std::printf("| %s | %s | %d %% | 2^%d | %s%s |", algo, ci_type<T>(), percent, lg, names[k].c_str(),
                k ? "" : " (default)");
    print_time(us[k]);
    std::printf(" %.3f |\n", us[0] / us[k]);
  }
  std::fflush(stdout);
}

}  // namespace

void run_copy_if(device_env& env) {
  std::printf("\n## copy_if, copy_flagged, copy_if_unordered\n\n"
              "%% copy: bytes read (n values; copy_flagged also n 1-byte flags) plus bytes written (the kept "
              "values) per time / copy bandwidth. cub: DeviceSelect::If (copy_if, copy_if_unordered) or Flagged "
              "(copy_flagged); thrust: thrust::copy_if.\n\n");
  std::printf("| algorithm | T | kept | n | ours us | cub us | thrust us | cub/ours | ours %% copy | cub %% copy |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<int> logs = env.opt.quick ? std::vector<int>{16, 20, 24, 28} : std::vector<int>{16, 20, 24, 28, 30};
  std::vector<ci_row> rows;
  for (int lg : logs) {
    for (int percent : {1, 50, 99}) {
      long long const n = 1ll << lg;
      std::size_t const before = rows.size();
      measure<std::int32_t>(env, percent, n, rows);
      measure<std::int64_t>(env, percent, n, rows);
      measure<float>(env, percent, n, rows);
      measure<double>(env, percent, n, rows);
      for (std::size_t i = before; i < rows.size(); ++i) print_ci_row(env, rows[i]);
    }
  }

  // Goals: ratios to CUB's stable call (per call), each row's floor: one empty launch plus its
  // bytes at this run's copy rate; "needs" is CUB's time over the goal.
  std::printf("\n| goal | T | kept | n | ours us | cub us | cub/ours | floor us | needs us | %s |\n",
              "floor allows the goal");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  int met = 0, goals = 0, reachable = 0, met_reachable = 0;
  std::vector<std::string> missed;
  for (ci_row const& r : rows) {
    std::string what;
    double const goal = goal_of(r, what);
    if (goal == 0) continue;
    ++goals;
    double const ratio = r.cub_us / r.ours_us;
    double const floor = env.launch_us + r.bytes / (env.copy_gbs * 1e3);
    double const needs = r.cub_us / goal;
    bool const ok      = ratio >= goal;
    bool const reach   = floor <= needs;
    met += ok;
    reachable += reach;
    met_reachable += ok && reach;
    int const lg = int(std::lround(std::log2(double(r.n))));
    if (goal > 1.0 || !ok) {
      std::printf("| %s | %s | %d %% | 2^%d | %.2f | %.2f | %.3f | %.2f | %.2f | %s |\n", what.c_str(), r.type.c_str(),
                  r.percent, lg, r.ours_us, r.cub_us, ratio, floor, needs, reach ? "yes" : "no");
    }
    if (!ok) {
      char line[256];
      std::snprintf(line, sizeof line, "%s %s %d %% 2^%d (%.3fx, floor %s)", what.c_str(), r.type.c_str(), r.percent,
                    lg, ratio, reach ? "allows it" : "out of reach");
      missed.emplace_back(line);
    }
  }
  std::printf("\n");
  for (auto const& m : missed) std::printf("goal missed: %s\n", m.c_str());
  std::printf("summary: copy_if goals met in %d of %d rows (%d of the %d the floor allows); copy %.0f GB/s, "
              "empty launch %.2f us\n",
              met, goals, met_reachable, reachable, env.copy_gbs, env.launch_us);

  // Alternative tables (the first is the default): ratio > 1 means the alternative is faster.
  std::printf("\n| algorithm | T | kept | n | table | us | default/table |\n|---|---|---|---|---|---|---|\n");
  using tilewise::detail::copy_if_tuned;
  {  // 2^20: one launch's latency; smaller tiles put more blocks and fewer items per thread on each SM
    long long const n = 1ll << 20;
    for (int percent : {1, 50, 99}) {
      tune<std::int32_t, copy_if_tuned, copy_if_variant<16384, 6, false>, copy_if_variant<8192, 6, false>>(
        env, v_copy_if, percent, n);
    }
    tune<double, copy_if_tuned, copy_if_variant<16384, 6, false>, copy_if_variant<8192, 6, false>>(env, v_copy_if, 50,
                                                                                                  n);
    tune<std::int32_t, copy_if_tuned, copy_if_variant<16384, 6, false>, copy_if_variant<8192, 6, false>>(
      env, v_unordered, 50, n);
  }
  for (int lg : {24, 28}) {
    long long const n = 1ll << lg;
    // 512 threads: the same 32 KB tiles with half the items (and ballots, stores) per thread
    tune<std::int32_t, copy_if_tuned, copy_if_variant<32768, 6, true>, copy_if_variant<16384, 6, false>,
         copy_if_variant<32768, 5, false>, copy_if_variant<32768, 3, false, 40960, 512>>(env, v_copy_if, 50, n);
    tune<double, copy_if_tuned, copy_if_variant<32768, 6, true>, copy_if_variant<32768, 5, false>>(env, v_copy_if, 50,
                                                                                                  n);
    tune<std::int32_t, copy_if_tuned, copy_if_variant<32768, 6, false, 36864>>(env, v_flagged, 50, n);
    tune<std::int32_t, copy_if_tuned, copy_if_variant<32768, 6, true>, copy_if_variant<32768, 3, false, 40960, 512>>(
      env, v_unordered, 50, n);
  }

  if (env.opt.csv) {
    std::string const path = env.csv_path("copy_if");
    std::FILE* f           = open_csv("device_bench", path.c_str());
    std::fprintf(f, "algorithm,type,percent,n,kept,ours_us,cub_us,thrust_us,speedup,ours_pct_copy,cub_pct_copy,copy_gbs\n");
    for (ci_row const& r : rows) {
      std::fprintf(f, "%s,%s,%d,%lld,%lld", r.algorithm.c_str(), r.type.c_str(), r.percent, r.n, r.kept);
      csv_time(f, r.ours_us);
      csv_time(f, r.cub_us);
      csv_time(f, r.thrust_us);
      std::fprintf(f, ",%.4f,%.2f,%.2f,%.1f\n", r.cub_us / r.ours_us, env.pct_copy(r.bytes, r.ours_us),
                   env.pct_copy(r.bytes, r.cub_us), env.copy_gbs);
    }
    close_csv("device_bench", f, path.c_str());
  }
}

}  // namespace tilewise_bench
