/// @file
/// @brief grid_bench: the grid scope inside cooperative kernels.
///  (a) µs per grid::reduce call (a dependent chain of calls in one kernel) against a bare
///      grid.sync(), block sizes 128..1024, one block per multiprocessor and the largest
///      co-resident grid; the goal is reduce <= 1.5x sync. Two columns: int32 plus (the counted
///      arrival word) and float plus (the exact fixed-point sum: every block spins on its words
///      below 512 blocks, on their copies from 512 on);
///  (b) a persistent single-launch exclusive sum of n int32 held in registers across the one grid
///      barrier (read once, write once; grid::exclusive_scan of the per-thread sums) against
///      cub::DeviceScan::ExclusiveSum, n = 2^16..2^24 (each size takes the fastest of a few
///      items-per-thread choices; outputs checked against CUB); reports up to which n it wins;
///  (c) µs per grid::exclusive_scan and grid::compact call (chains as in (a)).
/// Kernels are launched with cudaLaunchCooperativeKernel on grids validated once with
/// tilewise::max_cooperative_grid, so the timed region holds no host-side occupancy queries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cooperative_groups.h>

#include <cub/device/device_scan.cuh>

#include <cuda/std/functional>

#include <tilewise/grid/compact.cuh>
#include <tilewise/grid/launch_cooperative.cuh>
#include <tilewise/grid/reduce.cuh>
#include <tilewise/grid/scan.cuh>
#include <tilewise/grid/workspace.cuh>

#include "bench_common.cuh"

namespace cg = cooperative_groups;

namespace grid_bench {

using namespace tilewise_bench;

constexpr char const* bench_name = "grid_bench";

// ---- device side ---------------------------------------------------------------------------------

enum class chain { sync, reduce, reduce_float, scan, compact };
constexpr char const* chain_name(chain c) {
  return c == chain::sync           ? "grid.sync"
         : c == chain::reduce       ? "grid::reduce"
         : c == chain::reduce_float ? "grid::reduce<float>"
         : c == chain::scan         ? "grid::exclusive_scan"
                                    : "grid::compact";
}

/// `reps` dependent calls; the value fed back is one LOP3 away from the result. Launch bounds ask
/// for a full multiprocessor (2048 threads), so the largest grid is occupancy-limited by threads
/// only (1056 blocks of 256 on an H200), as for a bare grid.sync().
template <chain C, unsigned B>
__global__ void __launch_bounds__(B, 2048 / B) chain_kernel(int const* in, int* out, int reps, tilewise::grid::workspace ws) {
  using reduce_t  = tilewise::grid::reduce<int, B>;
  using reduce_f  = tilewise::grid::reduce<float, B>;
  using scan_t    = tilewise::grid::exclusive_scan<int, B>;
  using compact_t = tilewise::grid::compact<B>;
  __shared__ union storage {
    typename reduce_t::temp_storage r;
    typename reduce_f::temp_storage f;
    typename scan_t::temp_storage s;
    typename compact_t::temp_storage c;
  } tmp;
  auto const grid     = cg::this_grid();
  std::size_t const i = grid.thread_rank();
  int const x         = in[i];
  int v               = x;
#pragma unroll 1
  for (int k = 0; k < reps; ++k) {
    int r;
    if constexpr (C == chain::sync) {
      grid.sync();
      r = v;
    } else if constexpr (C == chain::reduce) {
      r = reduce_t{tmp.r}(grid, v, cuda::std::plus<int>{}, ws);
    } else if constexpr (C == chain::reduce_float) {
      r = int(reduce_f{tmp.f}(grid, float(v), cuda::std::plus<float>{}, ws));
    } else if constexpr (C == chain::scan) {
      r = scan_t{tmp.s}(grid, v, cuda::std::plus<int>{}, 0, ws);
    } else {
      r = int(compact_t{tmp.c}(grid, (v & 1) != 0, v, out + grid.size(), ws));
    }
    v = (r ^ x) & 0xFFFF;
  }
  out[i] = v;
}

/// Persistent exclusive sum: thread t holds items [t * Items, t * Items + Items) in registers
/// across the one grid barrier of grid::exclusive_scan.
template <unsigned B, unsigned Items>
__global__ void __launch_bounds__(B) onchip_scan_kernel(int const* __restrict__ in, int* __restrict__ out,
                                                        std::size_t n, tilewise::grid::workspace ws) {
  using scan_t = tilewise::grid::exclusive_scan<int, B>;
  __shared__ typename scan_t::temp_storage tmp;
  auto const grid         = cg::this_grid();
  std::size_t const first = grid.thread_rank() * Items;
  int x[Items];
  bool const whole = first + Items <= n;
  if (whole && Items % 4 == 0) {
#pragma unroll
    for (unsigned j = 0; j < Items; j += 4) {
      int4 const q = *reinterpret_cast<int4 const*>(in + first + j);
      x[j] = q.x, x[j + 1] = q.y, x[j + 2] = q.z, x[j + 3] = q.w;
    }
  } else {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      x[j] = first + j < n ? in[first + j] : 0;
    }
  }
  int sum = 0;
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) sum += x[j];
  int acc = scan_t{tmp}(grid, sum, cuda::std::plus<int>{}, 0, ws);
  if (whole && Items % 4 == 0) {
#pragma unroll
    for (unsigned j = 0; j < Items; j += 4) {
      int4 q;
      q.x = acc, acc += x[j];
      q.y = acc, acc += x[j + 1];
      q.z = acc, acc += x[j + 2];
      q.w = acc, acc += x[j + 3];
      *reinterpret_cast<int4*>(out + first + j) = q;
    }
  } else {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      if (first + j < n) out[first + j] = acc;
      acc += x[j];
    }
  }
}

// ---- host side -----------------------------------------------------------------------------------

template <class... KArgs, class... Args>
void coop_launch(void (*kernel)(KArgs...), int blocks, unsigned block, Args... args) {
  auto go = [&](KArgs... params) {
    void* p[] = {static_cast<void*>(&params)...};
    TW_BENCH_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void const*>(kernel), dim3(unsigned(blocks)), dim3(block),
                                              p, 0, cudaStream_t{}));
  };
  go(args...);
}

struct context {
  options opt;
  timer t;
  int sms = 0;
  std::FILE* csv = nullptr;
  int* d_in = nullptr;
  int* d_out = nullptr;
  std::size_t capacity = 0;  // elements of d_in / d_out
};

/// (a) and (c): µs per call of each chain at blocks = SMs and the largest grid.
template <unsigned B>
void chains(context& c, std::vector<chain> const& which) {
  int const reps = c.opt.quick ? 200 : 2000;
  int const max  = tilewise::max_cooperative_grid(chain_kernel<chain::reduce, B>, dim3(B));
  for (int blocks : {std::min(c.sms, max), max}) {
    auto const ws = tilewise::grid::make_workspace<int>(blocks);
    std::vector<void (*)(int const*, int*, int, tilewise::grid::workspace)> k;
    for (chain ch : which) {
      k.push_back(ch == chain::sync     ? chain_kernel<chain::sync, B>
                  : ch == chain::reduce ? chain_kernel<chain::reduce, B>
                  : ch == chain::reduce_float ? chain_kernel<chain::reduce_float, B>
                  : ch == chain::scan   ? chain_kernel<chain::scan, B>
                                        : chain_kernel<chain::compact, B>);
      if (tilewise::max_cooperative_grid(k.back(), dim3(B)) < blocks) k.back() = nullptr;
    }
    auto const us = c.t.interleaved(k.size(), [&](std::size_t j) {
      if (k[j]) coop_launch(k[j], blocks, B, (int const*)c.d_in, c.d_out, reps, ws.get());
    });
    std::printf("| %u | %d |", B, blocks);
    double const sync_us = us[0] / reps;
    for (std::size_t j = 0; j < k.size(); ++j) {
      double const per = k[j] ? us[j] / reps : std::nan("");
      print_time(per);
      if (j > 0) std::printf(" %.2fx |", per / sync_us);
      if (c.csv) {
        std::fprintf(c.csv, "chain,%s,%u,%d,", chain_name(which[j]), B, blocks);
        csv_time(c.csv, per);
        std::fprintf(c.csv, ",%.4f\n", per / sync_us);
      }
    }
    std::printf("\n");
  }
}

/// (b) one n: the fastest items-per-thread choice of the persistent scan against CUB.
template <unsigned B, unsigned Items>
void try_onchip(context& c, std::size_t n, int const* in, int* out, double& best, unsigned& best_items,
                int& best_blocks) {
  auto kernel   = onchip_scan_kernel<B, Items>;
  int const max = tilewise::max_cooperative_grid(kernel, dim3(B));
  std::size_t const per_block = std::size_t(B) * Items;
  std::size_t const blocks    = (n + per_block - 1) / per_block;
  if (blocks > std::size_t(max) || (Items > 1 && blocks < std::size_t(c.sms) / 2)) return;  // does not fit / too few
  auto const ws = tilewise::grid::make_workspace<int>(int(blocks));
  auto const us = c.t.interleaved(1, [&](std::size_t) { coop_launch(kernel, int(blocks), B, in, out, n, ws.get()); });
  if (us[0] < best) {
    best        = us[0];
    best_items  = Items;
    best_blocks = int(blocks);
  }
}

void onchip(context& c) {
  constexpr unsigned B = 256;
  std::printf("\n(b) exclusive sum of n int32: persistent single launch (held on chip across the barrier) vs "
              "cub::DeviceScan::ExclusiveSum\n\n| n | items/thread | blocks | ours us | cub us | speed-up |\n|---|---|---|---|---|---|\n");
  std::size_t win_up_to = 0;
  bool lost             = false;
  for (int lg = 16; lg <= 24; ++lg) {
    std::size_t const n = std::size_t(1) << lg;
    int const* in       = c.d_in;
    int* out            = c.d_out;
    double best         = INFINITY;
    unsigned items      = 0;
    int blocks          = 0;
    try_onchip<B, 1>(c, n, in, out, best, items, blocks);
    try_onchip<B, 2>(c, n, in, out, best, items, blocks);
    try_onchip<B, 4>(c, n, in, out, best, items, blocks);
    try_onchip<B, 8>(c, n, in, out, best, items, blocks);
    try_onchip<B, 16>(c, n, in, out, best, items, blocks);
    try_onchip<B, 32>(c, n, in, out, best, items, blocks);
    try_onchip<B, 64>(c, n, in, out, best, items, blocks);
    // CUB on the same input, its output in the second half of the buffer; the outputs must agree.
    int* cub_out      = c.d_out + c.capacity / 2;
    std::size_t bytes = 0;
    TW_BENCH_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, cub_out, int(n)));
    void* temp = nullptr;
    TW_BENCH_CUDA(cudaMalloc(&temp, bytes));
    auto const cub_us =
      c.t.interleaved(1, [&](std::size_t) { TW_BENCH_CUDA(cub::DeviceScan::ExclusiveSum(temp, bytes, in, cub_out, int(n))); });
    TW_BENCH_CUDA(cudaDeviceSynchronize());
    TW_BENCH_CUDA(cudaFree(temp));
    bool ok = false;
    if (items != 0) {  // rerun the best choice, then compare with CUB's output
      double b2 = INFINITY;
      unsigned i2 = 0;
      int g2      = 0;
      switch (items) {
        case 1: try_onchip<B, 1>(c, n, in, out, b2, i2, g2); break;
        case 2: try_onchip<B, 2>(c, n, in, out, b2, i2, g2); break;
        case 4: try_onchip<B, 4>(c, n, in, out, b2, i2, g2); break;
        case 8: try_onchip<B, 8>(c, n, in, out, b2, i2, g2); break;
        case 16: try_onchip<B, 16>(c, n, in, out, b2, i2, g2); break;
        case 32: try_onchip<B, 32>(c, n, in, out, b2, i2, g2); break;
        default: try_onchip<B, 64>(c, n, in, out, b2, i2, g2); break;
      }
      TW_BENCH_CUDA(cudaDeviceSynchronize());
      std::vector<int> a(n), b(n);
      TW_BENCH_CUDA(cudaMemcpy(a.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
      TW_BENCH_CUDA(cudaMemcpy(b.data(), cub_out, n * sizeof(int), cudaMemcpyDeviceToHost));
      ok = a == b;
    }
    double const ratio = cub_us[0] / best;
    if (items != 0 && ok && ratio > 1.0 && !lost) win_up_to = n;
    if (items == 0 || ratio <= 1.0) lost = true;
    std::printf("| 2^%d | %u | %d |", lg, items, blocks);
    print_time(items ? best : std::nan(""));
    print_time(cub_us[0]);
    std::printf(" %.2fx%s |\n", items ? ratio : 0.0, items == 0 ? " (does not fit)" : ok ? "" : " (MISMATCH vs CUB)");
    if (c.csv) {
      std::fprintf(c.csv, "onchip_scan,exclusive_sum,%u,%d,%zu,%u,", B, blocks, n, items);
      csv_time(c.csv, items ? best : std::nan(""));
      csv_time(c.csv, cub_us[0]);
      std::fprintf(c.csv, ",%d\n", ok ? 1 : 0);
    }
    if (items != 0 && !ok) {
      std::fprintf(stderr, "%s: persistent scan output differs from CUB at n = 2^%d\n", bench_name, lg);
      std::exit(1);
    }
  }
  std::printf("\npersistent scan faster than CUB from 2^16 up to n = %zu%s\n", win_up_to,
              win_up_to == 0 ? " (never)" : "");
}

void usage(std::FILE* f) {
  std::fprintf(f, "usage: %s [--quick] [--csv FILE]\n", bench_name);
}

int run(int argc, char** argv) {
  context c;
  if (int const rc = parse_options(argc, argv, bench_name, usage, c.opt); rc >= 0) return rc;
  if (skip_without_device(bench_name)) return exit_skipped;
  cudaDeviceProp const prop = device_properties();
  c.sms                     = prop.multiProcessorCount;
  if (c.opt.quick) {
    c.t.warmup = 2;
    c.t.timed  = 7;
  }
  c.t.create_events();
  c.capacity = std::size_t(2) << 24;
  TW_BENCH_CUDA(cudaMalloc(&c.d_in, c.capacity * sizeof(int)));
  TW_BENCH_CUDA(cudaMalloc(&c.d_out, c.capacity * sizeof(int)));
  upload_random<int>(c.d_in, c.capacity, 100);  // sums of 2^24 stay below 2^31
  if (c.opt.csv) {
    c.csv = open_csv(bench_name, c.opt.csv);
    std::fprintf(c.csv, "case,variant,block,blocks,n_or_items...,us,ratio_or_baseline\n");
  }
  std::printf("# %s on %s (%d SMs)\n\n(a) us per call: grid::reduce vs a bare grid.sync(); goal <= 1.5x\n\n",
              bench_name, prop.name, c.sms);
  std::printf("| block | blocks | grid.sync us | reduce int32 sum us | ratio | reduce float sum us | ratio |\n"
              "|---|---|---|---|---|---|---|\n");
  std::vector<chain> const a{chain::sync, chain::reduce, chain::reduce_float};
  chains<128>(c, a);
  chains<256>(c, a);
  chains<512>(c, a);
  chains<1024>(c, a);
  onchip(c);
  std::printf("\n(c) us per call: grid::exclusive_scan and grid::compact (int32) vs grid.sync()\n\n"
              "| block | blocks | grid.sync us | scan us | ratio | compact us | ratio |\n|---|---|---|---|---|---|---|\n");
  std::vector<chain> const s{chain::sync, chain::scan, chain::compact};
  chains<256>(c, s);
  chains<1024>(c, s);
  if (c.csv) close_csv(bench_name, c.csv, c.opt.csv);
  c.t.destroy_events();
  TW_BENCH_CUDA(cudaFree(c.d_in));
  TW_BENCH_CUDA(cudaFree(c.d_out));
  return 0;
}

}  // namespace grid_bench

int main(int argc, char** argv) {
  try {
    return grid_bench::run(argc, argv);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "grid_bench: %s\n", e.what());
    return 1;
  }
}
