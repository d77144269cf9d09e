/// @file
/// @brief block_bench: tilewise::block::reduce / inclusive_scan / exclusive_scan against
///        cub::BlockReduce / cub::BlockScan (their default algorithms, with the result on every
///        thread), for int32, float and double, block sizes 128..1024 (W = 32) and 256 with W = 16.
///
/// Every variant runs the same kernel: each thread loads one value x, then repeats
///   r = primitive(block, v); v = combine(r, x)
/// chain_length times (a dependent chain; combine is one LOP3 or FMA, the same for every variant),
/// and stores v. Variants of one row share the grid, the input and the repetition loop, run
/// interleaved, and the median kernel time (CUDA events) is reported. See README.md.
///
/// Shapes measured (each one a correct use of the primitive called back to back):
/// - ours: one object per call on one temp_storage, no barrier between calls (tilewise's rule),
///   the plan (one or two barriers per call) that detail::block_tuning picks for the shape;
/// - cub, reduce: cub::BlockReduce<T, B> (default BLOCK_REDUCE_WARP_REDUCTIONS), then thread 0
///   broadcasts through shared memory (a second barrier), so every thread has the result;
/// - cub, scans: cub::BlockScan<T, B> (default BLOCK_SCAN_RAKING); two TempStorage used in turn,
///   which makes the barrier CUB asks for between reuses of one TempStorage unnecessary;
/// - cub alt, reduce: the same BlockReduce without the broadcast: result in thread 0 only (CUB's
///   contract; not the same result), two TempStorage in turn, one barrier per call;
/// - cub alt, scans: BLOCK_SCAN_WARP_SCANS, two TempStorage in turn;
/// - ours 1 barrier / 2 barriers / raking (scans): tilewise with each plan forced
///   (detail::block_tuning picks one per shape; the "plan" column is the tuned choice);
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cuda/std/functional>

#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>

#include "bench_common.cuh"

namespace cg = cooperative_groups;

namespace block_bench {

using namespace tilewise_bench;

constexpr char const* bench_name = "block_bench";

// ---- settings ------------------------------------------------------------------------------------

constexpr int chain_length = 128;  ///< dependent primitive calls per thread and launch
constexpr int waves        = 4;    ///< grid = SMs x resident blocks per SM x waves
/// int32 chain values are masked to 20 bits, so no block sum of up to 1024 of them overflows.
constexpr std::int32_t int_mask = (1 << 20) - 1;
constexpr double goal_ratio     = 0.98;

enum class impl { ours, cub, cub_alt, ours_1b, ours_2b, ours_rake };
constexpr int num_impls = 6;

constexpr char const* impl_name(impl i) {
  constexpr char const* names[num_impls] = {"ours",           "cub",           "cub alt",
                                            "ours 1 barrier", "ours 2 barriers", "ours raking"};
  return names[int(i)];
}
// ---- device side ---------------------------------------------------------------------------------

template <prim P, class T, unsigned B, unsigned W>
using ours_t = std::conditional_t<P == prim::reduce, tilewise::block::reduce<T, B, W>,
                                  std::conditional_t<P == prim::inclusive_scan, tilewise::block::inclusive_scan<T, B, W>,
                                                     tilewise::block::exclusive_scan<T, B, W>>>;

template <prim P, impl I, class T, unsigned B>
using cub_t = std::conditional_t<P == prim::reduce, cub::BlockReduce<T, int(B)>,
                                 cub::BlockScan<T, int(B), I == impl::cub ? cub::BLOCK_SCAN_RAKING : cub::BLOCK_SCAN_WARP_SCANS>>;

/// The plans of tilewise's variants: tuned, forced one barrier, two barriers, raking (scans only).
template <prim P, impl I, class T, unsigned B, unsigned W, class plans = tilewise::detail::block_plans<T, B, W>>
inline constexpr tilewise::detail::block_plan plan_of =
  I == impl::ours_1b ? (P == prim::reduce ? plans::reduce_one : plans::scan_one)
  : I == impl::ours_2b                        ? (P == prim::reduce ? plans::reduce_two : plans::scan_two)
  : I == impl::ours_rake                      ? plans::scan_rake
                                              : (P == prim::reduce ? plans::reduce : plans::scan);

/// Which variants a row measures: raking is a scan plan (whole warps).
template <prim P, impl I, unsigned B>
inline constexpr bool measured = I != impl::ours_rake || (P != prim::reduce && B % 32 == 0);

/// Shared memory of one variant.
template <prim P, impl I, class T, unsigned B, unsigned W>
struct storage {
  tilewise::detail::plan_storage<T, B, W, plan_of<P, I, T, B, W>.one_barrier, plan_of<P, I, T, B, W>.raking> tmp;
};
template <prim P, class T, unsigned B, unsigned W>
struct storage<P, impl::ours, T, B, W> {
  typename ours_t<P, T, B, W>::temp_storage tmp;
};
template <prim P, class T, unsigned B, unsigned W>
struct storage<P, impl::cub, T, B, W> {
  typename cub_t<P, impl::cub, T, B>::TempStorage tmp[P == prim::reduce ? 1 : 2];
  T bcast;
};
template <prim P, class T, unsigned B, unsigned W>
struct storage<P, impl::cub_alt, T, B, W> {
  typename cub_t<P, impl::cub_alt, T, B>::TempStorage tmp[2];
};

/// One call of primitive P as implementation I provides it (call number k).
template <prim P, impl I, class T, unsigned B, unsigned W>
__device__ __forceinline__ T primitive(storage<P, I, T, B, W>& s, cg::thread_block const& block, T v, int k) {
  cuda::std::plus<T> op{};
  if constexpr (I == impl::ours) {
    if constexpr (P == prim::exclusive_scan) {
      return ours_t<P, T, B, W>{s.tmp}(block, v, op, T(0));
    } else {
      return ours_t<P, T, B, W>{s.tmp}(block, v, op);
    }
  } else if constexpr (I == impl::ours_1b || I == impl::ours_2b || I == impl::ours_rake) {
    constexpr auto plan = plan_of<P, I, T, B, W>;
    if constexpr (P == prim::reduce) {
      return tilewise::detail::block_reduce<plan, false, B, W>(s.tmp, block, v, op, B);
    } else {
      return tilewise::detail::block_scan<plan, P == prim::exclusive_scan, false, B, W>(s.tmp, block, v, op, T(0),
                                                                                       nullptr);
    }
  } else {
    static_assert(I == impl::cub || I == impl::cub_alt);
    using C = cub_t<P, I, T, B>;  // scans: raking (cub) or warp scans (cub alt)
    if constexpr (P == prim::reduce && I == impl::cub) {
      T const r = C(s.tmp[0]).Sum(v);  // valid in thread 0 only: broadcast it
      if (block.thread_rank() == 0) {
        s.bcast = r;
      }
      block.sync();
      return s.bcast;
    } else if constexpr (P == prim::reduce) {
      return C(s.tmp[k & 1]).Sum(v);  // cub alt: thread 0 only
    } else {
      T r;
      if constexpr (P == prim::inclusive_scan) {
        C(s.tmp[k & 1]).InclusiveSum(v, r);
      } else {
        C(s.tmp[k & 1]).ExclusiveSum(v, r);
      }
      return r;
    }
  }
}

/// Feeds a result back into the chain: one instruction, identical for every implementation.
template <unsigned B, class T>
__device__ __forceinline__ T combine(T r, T x) {
  if constexpr (std::is_integral_v<T>) {
    return (r ^ x) & int_mask;  // one LOP3
  } else {
    return r * (T(1) / T(B)) + x;  // one FMA; the scale 1/B keeps the values finite
  }
}

/// The benchmark kernel: one value per thread, a dependent chain of `Reps` primitive calls
/// (a template argument: see chain_variant).
template <prim P, impl I, class T, unsigned B, unsigned W, int Reps>
__global__ void __launch_bounds__(B) chain_kernel(T const* __restrict__ in, T* __restrict__ out) {
  __shared__ storage<P, I, T, B, W> s;
  auto const block    = cg::this_thread_block();
  std::size_t const i = std::size_t(blockIdx.x) * B + threadIdx.x;
  T const x           = in[i];
  T v                 = x;
#pragma unroll 1
  for (int k = 0; k < Reps; ++k) {
    v = combine<B>(primitive<P, I, T, B, W>(s, block, v, k), x);
  }
  out[i] = v;
}

// ---- host side -----------------------------------------------------------------------------------

template <class T>
using variant = chain_variant<impl, T>;

template <prim P, impl I, class T, unsigned B, unsigned W>
constexpr variant<T> variant_of() {
  return {I, chain_kernel<P, I, T, B, W, chain_length>, chain_kernel<P, I, T, B, W, 1>};
}

struct row_result {
  prim p;
  char const* type;
  unsigned block;
  unsigned w;
  tilewise::detail::block_plan plan;  ///< the tuned plan of ours
  double us[num_impls];  ///< median kernel time per implementation; NaN where not measured

  double ratio() const { return us[int(impl::cub)] / us[int(impl::ours)]; }
  /// Against the faster CUB shape that gives every thread its result (scans: raking or warp scans).
  double ratio_best() const {
    double const alt = p == prim::reduce ? std::nan("") : us[int(impl::cub_alt)];
    return std::fmin(us[int(impl::cub)], alt) / us[int(impl::ours)];
  }
};

struct context : chain_context<num_impls> {
  int max_threads_sm = 0;
  std::vector<row_result> rows;
};

template <class T>
void launch(context& ctx, variant<T> const& v, unsigned grid, unsigned block, T const* in, bool once = false) {
  (once ? v.once : v.kernel)<<<grid, block>>>(in, static_cast<T*>(ctx.out[int(v.which)]));
  TW_BENCH_CUDA(cudaGetLastError());
}

/// "1, lanes" (one barrier), "2, lanes" (two barriers) or "rake".
std::string plan_name(tilewise::detail::block_plan const& p) {
  return p.raking ? std::string("rake") : std::string(p.one_barrier ? "1, " : "2, ") + std::to_string(p.lanes);
}

void print_row(row_result const& r) {
  std::printf("| %s | %s | %u | %u |", prim_name(r.p), r.type, r.block, r.w);
  for (impl i : {impl::ours, impl::cub, impl::cub_alt}) print_time(r.us[int(i)]);
  std::printf(" %.3f | %.3f |", r.ratio(), r.ratio_best());
  std::printf(" %s |", plan_name(r.plan).c_str());
  for (impl i : {impl::ours_1b, impl::ours_2b, impl::ours_rake}) print_time(r.us[int(i)]);
  std::printf("\n");
  std::fflush(stdout);
}

/// Measures one row: every implementation of primitive P for type T, block size B and width W.
template <prim P, class T, unsigned B, unsigned W>
void run_row(context& ctx) {
  std::vector<variant<T>> vs{variant_of<P, impl::ours, T, B, W>(),    variant_of<P, impl::cub, T, B, W>(),
                             variant_of<P, impl::cub_alt, T, B, W>(), variant_of<P, impl::ours_1b, T, B, W>(),
                             variant_of<P, impl::ours_2b, T, B, W>()};
  if constexpr (measured<P, impl::ours_rake, B>) {
    vs.push_back(variant_of<P, impl::ours_rake, T, B, W>());
  }

  unsigned const grid = row_grid(vs, int(B), std::max(1, ctx.max_threads_sm / int(B)), ctx.sms, waves);
  std::size_t const n = std::size_t(grid) * B;
  T const* in         = upload_random<T>(ctx.in, n, T(int_mask));  // the same for every shape

  if constexpr (std::is_same_v<T, std::int32_t>) {
    // on every thread, but on thread 0 of each block for `cub alt` reduce, whose result lives there only
    char what[64];
    std::snprintf(what, sizeof what, "%s %s B=%u W=%u", prim_name(P), type_name<T>(), B, W);
    check_agreement(
      ctx, vs, n, what, [&](std::size_t j) { launch(ctx, vs[j], grid, B, in, true); },
      [&](std::size_t j, std::size_t i) { return !(P == prim::reduce && vs[j].which == impl::cub_alt) || i % B == 0; },
      impl_name);
  }

  auto const us =
    ctx.time.interleaved(vs.size(), [&](std::size_t k) { launch(ctx, vs[k], grid, B, in); });

  constexpr auto plan = plan_of<P, impl::ours, T, B, W>;
  static_assert(plan.one_barrier == ours_t<P, T, B, W>::plan.one_barrier && plan.lanes == ours_t<P, T, B, W>::plan.lanes &&
                plan.raking == ours_t<P, T, B, W>::plan.raking);
  row_result r{P, type_name<T>(), B, W, plan, {}};
  std::fill(std::begin(r.us), std::end(r.us), std::nan(""));
  for (std::size_t k = 0; k < vs.size(); ++k) r.us[int(vs[k].which)] = us[k];
  print_row(r);
  ctx.rows.push_back(r);
}

template <prim P, class T>
void run_shapes(context& ctx) {
  run_row<P, T, 128, 32>(ctx);
  run_row<P, T, 256, 32>(ctx);
  run_row<P, T, 512, 32>(ctx);
  run_row<P, T, 1024, 32>(ctx);
  run_row<P, T, 256, 16>(ctx);
}

template <prim P>
void run_types(context& ctx) {
  run_shapes<P, std::int32_t>(ctx);
  run_shapes<P, float>(ctx);
  run_shapes<P, double>(ctx);
}

void write_csv(context const& ctx, char const* path) {
  std::FILE* f = open_csv(bench_name, path);
  std::fprintf(f, "primitive,type,block,W,ours_us,cub_us,cub_alt_us,ours_1barrier_us,ours_2barriers_us,"
                  "ours_raking_us,barriers,lanes,raking,ratio,ratio_best\n");
  for (auto const& r : ctx.rows) {
    std::fprintf(f, "%s,%s,%u,%u", prim_name(r.p), r.type, r.block, r.w);
    for (impl i : {impl::ours, impl::cub, impl::cub_alt, impl::ours_1b, impl::ours_2b, impl::ours_rake}) {
      csv_time(f, r.us[int(i)]);
    }
    std::fprintf(f, ",%d,%u,%d,%.4f,%.4f\n", r.plan.one_barrier ? 1 : 2, r.plan.lanes, r.plan.raking ? 1 : 0, r.ratio(),
                 r.ratio_best());
  }
  close_csv(bench_name, f, path);
}

void usage(std::FILE* f) {
  chain_usage(f, bench_name,
              "  block-scope reduce / inclusive_scan / exclusive_scan: tilewise vs cub::BlockReduce /\n"
              "  cub::BlockScan, int32/float/double, blocks of 128..1024; prints a markdown table of\n"
              "  median kernel times.\n");
}

}  // namespace block_bench

int main(int argc, char** argv) {
  using namespace block_bench;
  options opt;
  if (int const rc = parse_options(argc, argv, bench_name, usage, opt); rc >= 0) return rc;
  if (skip_without_device(bench_name)) return exit_skipped;

  context ctx;
  cudaDeviceProp const prop = device_properties();
  ctx.sms            = prop.multiProcessorCount;
  ctx.max_threads_sm = prop.maxThreadsPerMultiProcessor;
  ctx.allocate(std::size_t(ctx.sms) * ctx.max_threads_sm * waves, opt.quick);

  std::printf("block_bench on %s (sm_%d%d, %d SMs): %d dependent calls per thread, grid = SMs x occupancy x %d, "
              "median of %d runs (us)\n",
              prop.name, prop.major, prop.minor, ctx.sms, chain_length, waves, ctx.time.timed);
  std::printf("ours: result on every thread, the tuned plan (1 or 2 barriers: see plan), calls back to back on one "
              "temp_storage with no barrier between them.\n"
              "cub: reduce = cub::BlockReduce default (WARP_REDUCTIONS) + broadcast from thread 0 through shared "
              "memory (2 barriers); scans = cub::BlockScan default (RAKING), 2 TempStorage in turn.\n"
              "cub alt: reduce = the same without broadcast (thread 0 only, not comparable), 2 TempStorage in turn; "
              "scans = BLOCK_SCAN_WARP_SCANS, 2 TempStorage in turn.\n"
              "ratio = cub / ours; ratio best = min(cub, cub alt for scans) / ours; plan = ours' tuned plan: barriers, "
              "combine lanes, or rake;\nours 1 barrier / 2 barriers / raking: each plan forced (tuned lanes; raking: "
              "scans of whole warps only)\n\n");
  std::printf("| primitive | T | block | W | ours us | cub us | cub alt us | ratio | ratio best | plan | "
              "ours 1 barrier us | ours 2 barriers us | ours raking us |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");

  run_types<prim::reduce>(ctx);
  run_types<prim::inclusive_scan>(ctx);
  run_types<prim::exclusive_scan>(ctx);

  if (opt.csv) write_csv(ctx, opt.csv);

  for (auto const& w : ctx.warnings) std::printf("%s\n", w.c_str());

  int rows = 0, good = 0, good_best = 0;
  row_result const* worst      = nullptr;
  row_result const* worst_best = nullptr;
  for (auto const& r : ctx.rows) {
    if (std::isnan(r.ratio())) continue;
    ++rows;
    good += r.ratio() >= goal_ratio;
    good_best += r.ratio_best() >= goal_ratio;
    if (!worst || r.ratio() < worst->ratio()) worst = &r;
    if (!worst_best || r.ratio_best() < worst_best->ratio_best()) worst_best = &r;
  }
  if (worst) {
    std::printf("against the best CUB shape: ours >= %.2fx in %d of %d, worst %.3f at (%s,%s,%u,W=%u)\n", goal_ratio,
                good_best, rows, worst_best->ratio_best(), prim_name(worst_best->p), worst_best->type,
                worst_best->block, worst_best->w);
    std::printf("rows: %d, ours >= %.2fx CUB in %d of %d, worst ratio %.3f at (%s,%s,%u,W=%u)\n", rows, goal_ratio,
                good, rows, worst->ratio(), prim_name(worst->p), worst->type, worst->block, worst->w);
  }

  // Which forced plan was fastest per row (the tuning should pick it): rows where the tuned plan
  // is more than 2 % slower than the fastest of ours 1 barrier / 2 barriers / raking.
  for (auto const& r : ctx.rows) {
    impl best = impl::ours_1b;
    for (impl i : {impl::ours_2b, impl::ours_rake}) {
      if (!std::isnan(r.us[int(i)]) && r.us[int(i)] < r.us[int(best)]) best = i;
    }
    if (r.us[int(impl::ours)] > 1.02 * r.us[int(best)]) {
      std::printf("plan check: (%s,%s,%u,W=%u) tuned %s %.2f us, %s faster: %.2f us\n", prim_name(r.p), r.type, r.block,
                  r.w, plan_name(r.plan).c_str(), r.us[int(impl::ours)], impl_name(best), r.us[int(best)]);
    }
  }

  ctx.release();
  return 0;
}
