// Grid scope under stress and tilewise::launch_cooperative on a GPU:
// - 10,000 grid::reduce calls back to back in one kernel (sum and max alternating), each result
//   checked in the kernel against its known value, failures counted; fewer calls when
//   TILEWISE_TEST_SEEDS is below its default (the compute-sanitizer runs: 500); in int64 (partials and
//   grid.sync() for both ops) and in uint32 (sums through the counted arrival word, wrapping
//   past 2^32, alternating with max through the partials);
// - one workspace reused by launches of different grid sizes (its epochs stay in step);
// - two cooperative kernels on two streams at once, each with its own workspace;
// - launch_cooperative: the default grid is occupancy x multiprocessors (computed here with the
//   occupancy API), one block more is refused with a message stating that limit, and a zero
//   block, an oversized block and too much dynamic shared memory are refused; nothing hangs.
#include <cooperative_groups.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/grid/reduce.cuh>

#include <stdexcept>
#include <string>

#include "grid_check.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

/// `calls` reductions: call k reduces v = k + rank + offset over the grid, with plus (k even:
/// expected N k + N (N - 1) / 2 + N offset, wrapping in T) or max (k odd: k + N - 1 + offset).
template <class T, unsigned B>
__global__ void __launch_bounds__(B) many_reduce_kernel(int calls, long long offset, unsigned long long* failures,
                                                        tilewise::grid::workspace ws) {
  using grid_reduce = tilewise::grid::reduce<T, B>;
  __shared__ typename grid_reduce::temp_storage tmp;
  auto const grid   = cg::this_grid();
  T const r         = T(grid.thread_rank());
  T const N         = T(grid.size());
  unsigned long long bad = 0;
  for (int k = 0; k < calls; ++k) {
    T const v = T(k) + r + T(offset);
    if (k % 2 == 0) {
      T const triangle = N % 2 == 0 ? T(N / 2 * (N - 1)) : T(N * ((N - 1) / 2));  // N (N - 1) / 2, wrapping in T
      bad += grid_reduce{tmp}(grid, v, cuda::std::plus<>{}, ws) != T(N * T(k) + triangle + N * T(offset));
    } else {
      bad += grid_reduce{tmp}(grid, v, cuda::maximum<>{}, ws) != T(T(k) + N - 1 + T(offset));
    }
  }
  if (bad != 0) {
    atomicAdd(failures, bad);
  }
}

constexpr unsigned many_block = 256;

int many_calls() { return seeds() >= 8 ? 10000 : 250 * seeds(); }  // sanitizer runs: 500 calls per case

template <class T = long long>
unsigned long long run_many(int blocks, int calls, long long offset, tilewise::grid::workspace ws, cudaStream_t s,
                            unsigned long long* d_failures) {
  int const g = tilewise::launch_cooperative(many_reduce_kernel<T, many_block>, tilewise::cooperative_grid{blocks},
                                             dim3(many_block), 0, s, calls, offset, d_failures, ws);
  TW_CUDA_CHECK(cudaGetLastError());
  return (unsigned long long)g;
}

/// What the many-call tests share: the largest co-resident grid of many_reduce_kernel<T>, a
/// workspace for it, and a zeroed failure counter.
template <class T>
struct many_setup {
  int max = tilewise::max_cooperative_grid(many_reduce_kernel<T, many_block>, dim3(many_block));
  tilewise::grid::workspace_owner ws = tilewise::grid::make_workspace<T>(max);
  device_buffer<unsigned long long> failures{1};

  many_setup() { reset(); }
  void reset() { TW_CUDA_CHECK(cudaMemset(failures.get(), 0, sizeof(unsigned long long))); }
};

/// The co-resident limit as the CUDA occupancy API gives it (the test's own computation).
template <class... KArgs>
int occupancy_limit(void (*kernel)(KArgs...), int threads, std::size_t smem) {
  int dev = 0, sms = 0, per_sm = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  TW_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TW_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return per_sm * sms;
}

__global__ void grid_size_kernel(unsigned* blocks_seen) {
  auto const grid = cg::this_grid();
  grid.sync();
  if (grid.thread_rank() == 0) {
    *blocks_seen = unsigned(grid.num_blocks());
  }
}

}  // namespace

TEST_CASE_TEMPLATE("grid::reduce: 10,000 calls back to back in one kernel, each checked in the kernel", T, long long,
                   unsigned) {
  many_setup<T> m;
  int const max   = m.max;
  int const calls = many_calls();
  // uint32: offset 2^31 makes every sum wrap; small grids too
  for (int blocks : {max, 1, 7}) {
    m.reset();
    run_many<T>(blocks, calls, sizeof(T) == 4 ? (1ll << 31) + 12345 : 0, m.ws.get(), cudaStream_t{}, m.failures.get());
    TW_CHECK_LAUNCH();
    INFO(calls << " calls on " << blocks << " blocks of " << many_block);
    CHECK(m.failures.download()[0] == 0);
  }
}

TEST_CASE_TEMPLATE("grid::reduce: one workspace, launches of different grid sizes and odd call counts", T, long long,
                   unsigned) {
  many_setup<T> m;
  int const max = m.max;
  for (int blocks : {max, (max + 1) / 2, 1, max, 3 < max ? 3 : max, max}) {
    run_many<T>(blocks, 7, blocks, m.ws.get(), cudaStream_t{}, m.failures.get());  // 7: the bank parity changes
  }
  TW_CHECK_LAUNCH();
  CHECK(m.failures.download()[0] == 0);
}

TEST_CASE("grid::reduce: two cooperative kernels on two streams at once, separate workspaces") {
  int const max    = tilewise::max_cooperative_grid(many_reduce_kernel<long long, many_block>, dim3(many_block));
  int const blocks = max / 2 > 0 ? max / 2 : 1;  // both grids can be resident together
  auto const ws_a  = tilewise::grid::make_workspace<long long>(blocks);
  auto const ws_b  = tilewise::grid::make_workspace<long long>(blocks);
  device_buffer<unsigned long long> d_failures(2);
  TW_CUDA_CHECK(cudaMemset(d_failures.get(), 0, 2 * sizeof(unsigned long long)));
  cudaStream_t a{}, b{};
  TW_CUDA_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  TW_CUDA_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  TW_CUDA_CHECK(cudaDeviceSynchronize());  // the workspaces' zeroed epochs, before the other streams
  int const calls = many_calls() / 4 * 2 + 1;
  run_many(blocks, calls, 0, ws_a.get(), a, d_failures.get());
  run_many(blocks, calls, 1000, ws_b.get(), b, d_failures.get() + 1);
  TW_CHECK_LAUNCH();
  auto const failures = d_failures.download();
  CHECK(failures[0] == 0);
  CHECK(failures[1] == 0);
  TW_CUDA_CHECK(cudaStreamDestroy(a));
  TW_CUDA_CHECK(cudaStreamDestroy(b));
}

TEST_CASE("launch_cooperative: default grid = occupancy x SMs; one block more is refused with the limit") {
  int const limit = occupancy_limit(grid_size_kernel, 256, 0);
  REQUIRE(limit >= 1);
  CHECK(tilewise::max_cooperative_grid(grid_size_kernel, dim3(256)) == limit);

  device_buffer<unsigned> d_seen(1);
  d_seen.poison();
  int const g = tilewise::launch_cooperative(grid_size_kernel, dim3(256), 0, cudaStream_t{}, d_seen.get());
  TW_CHECK_LAUNCH();
  CHECK(g == limit);
  CHECK(d_seen.download()[0] == unsigned(limit));

  d_seen.poison();
  CHECK(tilewise::launch_cooperative(grid_size_kernel, tilewise::cooperative_grid{limit}, dim3(256), 0, cudaStream_t{},
                                     d_seen.get()) == limit);
  TW_CHECK_LAUNCH();
  CHECK(d_seen.download()[0] == unsigned(limit));

  std::string message;
  try {
    tilewise::launch_cooperative(grid_size_kernel, tilewise::cooperative_grid{limit + 1}, dim3(256), 0, cudaStream_t{},
                                 d_seen.get());
  } catch (std::invalid_argument const& e) {
    message = e.what();
  }
  INFO("message: " << message);
  CHECK(message.find("grid of " + std::to_string(limit + 1) + " blocks cannot be co-resident") != std::string::npos);
  CHECK(message.find("the limit is " + std::to_string(limit) + " ") != std::string::npos);
  TW_CUDA_CHECK(cudaGetLastError());  // nothing was launched, no error left behind
  TW_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("launch_cooperative: bad blocks and shared memory are refused, naming the cause") {
  device_buffer<unsigned> d_seen(1);
  auto message_of = [&](auto&& call) {
    try {
      call();
    } catch (std::invalid_argument const& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  std::string const zero = message_of([&] {
    tilewise::launch_cooperative(grid_size_kernel, dim3(0), 0, cudaStream_t{}, d_seen.get());
  });
  CHECK(zero.find("block size is zero") != std::string::npos);
  std::string const big = message_of([&] {
    tilewise::launch_cooperative(grid_size_kernel, dim3(2048), 0, cudaStream_t{}, d_seen.get());
  });
  CHECK(big.find("threads per block") != std::string::npos);
  cudaFuncAttributes attr{};
  TW_CUDA_CHECK(cudaFuncGetAttributes(&attr, grid_size_kernel));
  std::string const smem = message_of([&] {
    tilewise::launch_cooperative(grid_size_kernel, dim3(256), std::size_t(attr.maxDynamicSharedSizeBytes) + 1,
                                 cudaStream_t{}, d_seen.get());
  });
  CHECK(smem.find("dynamic shared memory exceed") != std::string::npos);
  std::string const empty = message_of([&] {
    tilewise::launch_cooperative(grid_size_kernel, tilewise::cooperative_grid{0}, dim3(256), 0, cudaStream_t{},
                                 d_seen.get());
  });
  CHECK(empty.find(">= 1 block") != std::string::npos);
  TW_CUDA_CHECK(cudaGetLastError());
}
