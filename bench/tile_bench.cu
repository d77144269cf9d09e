/// @file
/// @brief tile_bench: tilewise::tile::reduce / inclusive_scan / exclusive_scan against Cooperative
///        Groups (cg::reduce, cg::inclusive_scan, cg::exclusive_scan) and CUB (cub::WarpReduce,
///        cub::WarpScan), for int32, float and double and every tile width W in {1, 2, 4, 8, 16, 32}.
///
/// Every variant runs the same kernel: each thread loads one value x, then repeats
///   r = primitive(tile, v); v = combine(r, x)
/// chain_length times (a dependent chain; combine is one LOP3 or FMA, the same for every variant),
/// and stores v. The variants of one row share the grid, the input and the repetition loop, run
/// interleaved, and the median kernel time (CUDA events) is reported. See README.md.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cuda/std/functional>

#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

#include "bench_common.cuh"

namespace cg = cooperative_groups;

namespace tile_bench {

using namespace tilewise_bench;

constexpr char const* bench_name = "tile_bench";

// ---- settings ------------------------------------------------------------------------------------

constexpr int block_threads = 256;
constexpr int chain_length  = 256;  ///< dependent primitive calls per thread and launch
constexpr int waves         = 4;    ///< grid = SMs x resident blocks per SM x waves
/// int32 chain values are masked to 26 bits, so no tile sum overflows (no signed-overflow UB).
constexpr std::int32_t int_mask = (1 << 26) - 1;
/// int32 inputs lie in [1, 2^21): the first step's tile sums (< 2^26) survive the mask exactly.
constexpr std::int32_t int_input_max = (1 << 21) - 1;
constexpr double goal_ratio          = 0.98;

enum class impl { ours, cg, cub, ours_redux, ours_shfl };
constexpr int num_impls = 5;

constexpr char const* impl_name(impl i) {
  constexpr char const* names[num_impls] = {"ours", "cg", "cub", "ours(redux)", "ours(shfl)"};
  return names[int(i)];
}
// ---- device side ---------------------------------------------------------------------------------

template <prim P, class T, unsigned W>
using cub_warp = std::conditional_t<P == prim::reduce, cub::WarpReduce<T, int(W)>, cub::WarpScan<T, int(W)>>;

/// One call of primitive P as implementation I provides it.
template <prim P, impl I, unsigned W, class Tile, class T, class CubTemp>
__device__ __forceinline__ T primitive(Tile const& tile, T v, CubTemp& temp) {
  if constexpr (I == impl::ours) {
    if constexpr (P == prim::reduce) {
      return tilewise::tile::reduce(tile, v, cuda::std::plus<T>{});
    } else if constexpr (P == prim::inclusive_scan) {
      return tilewise::tile::inclusive_scan(tile, v, cuda::std::plus<T>{});
    } else {
      return tilewise::tile::exclusive_scan(tile, v, cuda::std::plus<T>{}, T(0));
    }
  } else if constexpr (I == impl::ours_redux || I == impl::ours_shfl) {
    static_assert(P == prim::reduce, "the forced paths exist for reduce only");
    cuda::std::plus<T> op{};
    constexpr tilewise::detail::tile_tuning forced{.redux_min_width = I == impl::ours_redux ? 1u : 64u};
    return tilewise::detail::dispatch_reduce_tile<forced>(tilewise::detail::tile_lanes<W>{}, v, op);
  } else if constexpr (I == impl::cg) {
    if constexpr (P == prim::reduce) {
      return cg::reduce(tile, v, cg::plus<T>());  // CG's fastest functor (redux.sync for int, W >= 16)
    } else if constexpr (P == prim::inclusive_scan) {
      return cg::inclusive_scan(tile, v, cg::plus<T>());
    } else {
      return cg::exclusive_scan(tile, v, cg::plus<T>());
    }
  } else {
    static_assert(I == impl::cub);
    using warp = cub_warp<P, T, W>;
    if constexpr (P == prim::reduce) {
      return warp(temp).Sum(v);  // valid in lane 0 only: CUB's contract, so no broadcast
    } else {
      T r;
      if constexpr (P == prim::inclusive_scan) {
        warp(temp).InclusiveSum(v, r);
      } else {
        warp(temp).ExclusiveSum(v, r);
      }
      return r;
    }
  }
}

/// Feeds a result back into the chain: one instruction, identical for every implementation.
template <unsigned W, class T>
__device__ __forceinline__ T combine(T r, T x) {
  if constexpr (std::is_integral_v<T>) {
    return (r ^ x) & int_mask;  // one LOP3
  } else {
    return r * (T(1) / T(W)) + x;  // one FMA; the scale 1/W keeps the values finite
  }
}

/// The benchmark kernel: one value per thread, a dependent chain of `Reps` primitive calls
/// (a template argument: see chain_variant).
template <prim P, impl I, class T, unsigned W, int Reps>
__global__ void __launch_bounds__(block_threads) chain_kernel(T const* __restrict__ in, T* __restrict__ out) {
  // CUB's scratch, one per tile (empty for the shuffle-based specialisations of power-of-two W).
  __shared__ typename cub_warp<P, T, W>::TempStorage cub_temp[block_threads / W];
  auto const tile             = cg::tiled_partition<W>(cg::this_thread_block());
  auto& temp                  = cub_temp[threadIdx.x / W];
  std::size_t const i         = std::size_t(blockIdx.x) * block_threads + threadIdx.x;
  T const x                   = in[i];
  T v                         = x;
#pragma unroll 1
  for (int k = 0; k < Reps; ++k) {
    v = combine<W>(primitive<P, I, W>(tile, v, temp), x);
  }
  out[i] = v;
}

// ---- host side -----------------------------------------------------------------------------------

template <class T>
using variant = chain_variant<impl, T>;

template <prim P, impl I, class T, unsigned W>
constexpr variant<T> variant_of() {
  return {I, chain_kernel<P, I, T, W, chain_length>, chain_kernel<P, I, T, W, 1>};
}

struct row_result {
  prim p;
  char const* type;
  unsigned w;
  double us[num_impls];  ///< median kernel time per implementation; NaN where not measured

  double best_other() const { return std::fmin(us[int(impl::cg)], us[int(impl::cub)]); }  // fmin skips NaN
  double ratio() const { return best_other() / us[int(impl::ours)]; }
};

struct context : chain_context<num_impls> {
  int max_per_sm = 0;  ///< resident-block cap from threads per SM
  std::vector<row_result> rows;
};

template <class T>
void launch(context& ctx, variant<T> const& v, unsigned grid, T const* in, bool once = false) {
  (once ? v.once : v.kernel)<<<grid, block_threads>>>(in, static_cast<T*>(ctx.out[int(v.which)]));
  TW_BENCH_CUDA(cudaGetLastError());
}

void print_row(row_result const& r) {
  std::printf("| %s | %s | %u |", prim_name(r.p), r.type, r.w);
  for (impl i : {impl::ours, impl::cg, impl::cub}) print_time(r.us[int(i)]);
  std::printf(" %.3f |", r.ratio());
  for (impl i : {impl::ours_redux, impl::ours_shfl}) print_time(r.us[int(i)]);
  std::printf("\n");
  std::fflush(stdout);
}

/// Measures one row: every implementation of primitive P for type T and width W.
template <prim P, class T, unsigned W>
void run_row(context& ctx) {
  std::vector<variant<T>> vs{variant_of<P, impl::ours, T, W>(), variant_of<P, impl::cg, T, W>(),
                             variant_of<P, impl::cub, T, W>()};
  if constexpr (P == prim::reduce && std::is_same_v<T, std::int32_t>) {
    vs.push_back(variant_of<P, impl::ours_redux, T, W>());
    vs.push_back(variant_of<P, impl::ours_shfl, T, W>());
  }

  unsigned const grid = row_grid(vs, block_threads, ctx.max_per_sm, ctx.sms, waves);
  std::size_t const n = std::size_t(grid) * block_threads;
  T const* in         = upload_random<T>(ctx.in, n, T(int_input_max));  // the same for every W

  if constexpr (std::is_same_v<T, std::int32_t>) {
    // on every lane for the scans, on lane 0 of each tile for reduce (CUB's result lives there only)
    char what[64];
    std::snprintf(what, sizeof what, "%s %s W=%u", prim_name(P), type_name<T>(), W);
    check_agreement(
      ctx, vs, n, what, [&](std::size_t j) { launch(ctx, vs[j], grid, in, true); },
      [](std::size_t, std::size_t i) { return P != prim::reduce || i % W == 0; }, impl_name);
  }

  auto const us =
    ctx.time.interleaved(vs.size(), [&](std::size_t k) { launch(ctx, vs[k], grid, in); });

  row_result r{P, type_name<T>(), W, {}};
  std::fill(std::begin(r.us), std::end(r.us), std::nan(""));
  for (std::size_t k = 0; k < vs.size(); ++k) r.us[int(vs[k].which)] = us[k];
  print_row(r);
  ctx.rows.push_back(r);
}

template <prim P, class T>
void run_widths(context& ctx) {
  run_row<P, T, 1>(ctx);
  run_row<P, T, 2>(ctx);
  run_row<P, T, 4>(ctx);
  run_row<P, T, 8>(ctx);
  run_row<P, T, 16>(ctx);
  run_row<P, T, 32>(ctx);
}

template <prim P>
void run_types(context& ctx) {
  run_widths<P, std::int32_t>(ctx);
  run_widths<P, float>(ctx);
  run_widths<P, double>(ctx);
}

void write_csv(context const& ctx, char const* path) {
  std::FILE* f = open_csv(bench_name, path);
  std::fprintf(f, "primitive,type,W,ours_us,cg_us,cub_us,ours_redux_us,ours_shfl_us,ratio_vs_best\n");
  for (auto const& r : ctx.rows) {
    std::fprintf(f, "%s,%s,%u", prim_name(r.p), r.type, r.w);
    for (impl i : {impl::ours, impl::cg, impl::cub, impl::ours_redux, impl::ours_shfl}) csv_time(f, r.us[int(i)]);
    std::fprintf(f, ",%.4f\n", r.ratio());
  }
  close_csv(bench_name, f, path);
}

void usage(std::FILE* f) {
  chain_usage(f, bench_name,
              "  tile-scope reduce / inclusive_scan / exclusive_scan: tilewise vs cg:: vs cub::Warp*,\n"
              "  int32/float/double, W = 1..32; prints a markdown table of median kernel times.\n");
}

}  // namespace tile_bench

int main(int argc, char** argv) {
  using namespace tile_bench;
  options opt;
  if (int const rc = parse_options(argc, argv, bench_name, usage, opt); rc >= 0) return rc;
  if (skip_without_device(bench_name)) return exit_skipped;

  context ctx;
  cudaDeviceProp const prop = device_properties();
  ctx.sms        = prop.multiProcessorCount;
  ctx.max_per_sm = std::max(1, prop.maxThreadsPerMultiProcessor / block_threads);
  ctx.allocate(std::size_t(ctx.sms) * ctx.max_per_sm * waves * block_threads, opt.quick);

  std::printf("tile_bench on %s (sm_%d%d, %d SMs): block %d, %d dependent calls per thread, "
              "grid = SMs x occupancy x %d, median of %d runs (us); ratio = min(cg, cub) / ours\n\n",
              prop.name, prop.major, prop.minor, ctx.sms, block_threads, chain_length, waves, ctx.time.timed);
  std::printf("| primitive | T | W | ours us | cg us | cub us | ratio vs best | ours(redux) us | ours(shfl) us |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");

  run_types<prim::reduce>(ctx);
  run_types<prim::inclusive_scan>(ctx);
  run_types<prim::exclusive_scan>(ctx);

  if (opt.csv) write_csv(ctx, opt.csv);

  // The faster int32 reduce path per W (tuning: tile_tuning_sm80.redux_min_width).
  std::printf("\nint32 reduce, faster tilewise path per W:");
  for (auto const& r : ctx.rows) {
    if (r.p == prim::reduce && !std::strcmp(r.type, "int32")) {
      double const rx = r.us[int(impl::ours_redux)], sh = r.us[int(impl::ours_shfl)];
      char const* faster = r.w == 1 ? "same code" : rx < sh ? "redux" : "shfl";  // W = 1: no-op either way
      std::printf(" W=%u %s (%.3f)%s", r.w, faster, sh / rx, r.w < 32 ? "," : "");
    }
  }
  std::printf("  [shfl/redux time]; today redux from W=%u\n", tilewise::detail::tile_sm90.redux_min_width);
  for (auto const& w : ctx.warnings) std::printf("%s\n", w.c_str());

  int rows = 0, good = 0;
  row_result const* worst = nullptr;
  for (auto const& r : ctx.rows) {
    if (std::isnan(r.ratio())) continue;
    ++rows;
    good += r.ratio() >= goal_ratio;
    if (!worst || r.ratio() < worst->ratio()) worst = &r;
  }
  if (worst) {
    std::printf("rows: %d, ours >= %.2fx best in %d of %d, worst ratio %.3f at (%s,%s,%u)\n", rows, goal_ratio,
                good, rows, worst->ratio(), prim_name(worst->p), worst->type, worst->w);
  }

  ctx.release();
  return 0;
}
