// grid::reduce and grid::exclusive_scan against float64 / exact host references and CUB
// (DeviceReduce::Sum, DeviceScan::ExclusiveScan for int32): grids of 1 block, 3 blocks and the
// largest co-resident grid, block sizes 32..1024, W in {8, 16, 32}; int32 over its whole range
// (the sums wrap, as the host reference's), int64 (an operator
// without a known identity), float, double, 2x2 matrices under the (non-commutative) product,
// and 4-byte affine maps under (non-commutative) composition. Each kernel makes two rounds of reduce + scan back to back on one workspace; every
// thread's reduce result must be bitwise the same; outputs are poisoned first.
#include <cooperative_groups.h>

#include <algorithm>
#include <string>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/grid/reduce.cuh>
#include <tilewise/grid/scan.cuh>

#include "grid_check.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int rounds = 2;

// Blocks of 32 ask for 32 per multiprocessor (at most 64 registers): the largest grid then passes
// the exact float sum's 4095 blocks (4224 on an H200), so the float test reaches the last-block way.
template <class T, class Op, unsigned B, unsigned W>
__global__ void __launch_bounds__(B, B == 32 ? 32 : 1) reduce_scan_kernel(T const* in, T* red, T* scan, T* tot, T init, std::size_t n,
                                                        tilewise::grid::workspace ws) {
  using grid_reduce = tilewise::grid::reduce<T, B, W>;
  using grid_scan   = tilewise::grid::exclusive_scan<T, B, W>;
  __shared__ typename grid_reduce::temp_storage rt;
  __shared__ typename grid_scan::temp_storage st;
  auto const grid     = cg::this_grid();
  std::size_t const i = grid.thread_rank();
  for (int k = 0; k < rounds; ++k) {
    T const v       = in[k * n + i];
    red[k * n + i]  = grid_reduce{rt}(grid, v, Op{}, ws);
    T total;
    scan[k * n + i] = grid_scan{st}(grid, v, Op{}, init, ws, &total);
    tot[k * n + i]  = total;
  }
}

/// Host reference operator: wrapping integer plus (no signed overflow on the host).
template <class T, class Op>
auto reference_op() {
  if constexpr (std::is_integral_v<T>) {
    return user_plus{};
  } else {
    return host_op<Op>{};
  }
}

template <class T>
std::vector<T> cub_exclusive_sum(std::vector<T> const& x, std::size_t first, std::size_t n, T init, T& sum) {
  device_buffer<T> d_in(std::vector<T>(x.begin() + first, x.begin() + first + n)), d_out(n), d_sum(1);
  std::size_t bytes = 0, bytes2 = 0;
  TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, bytes, d_in.get(), d_out.get(), cuda::std::plus<>{}, init, int(n)));
  TW_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes2, d_in.get(), d_sum.get(), int(n)));
  device_buffer<unsigned char> temp(std::max(bytes, bytes2));
  TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.get(), bytes, d_in.get(), d_out.get(), cuda::std::plus<>{}, init, int(n)));
  TW_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes2, d_in.get(), d_sum.get(), int(n)));
  TW_CHECK_LAUNCH();
  sum = d_sum.download()[0];
  return d_out.download();
}

template <class T, class Op, unsigned B, unsigned W>
void check_grid(int blocks, int seed) {
  auto kernel         = reduce_scan_kernel<T, Op, B, W>;
  std::size_t const n = std::size_t(blocks) * B;
  auto const in       = random_vector<T>(rounds * n, seed);
  T const init        = random_vector<T>(1, seed + 1000)[0];
  device_buffer<T> d_in(in), d_red(rounds * n), d_scan(rounds * n), d_tot(rounds * n);
  d_red.poison();
  d_scan.poison();
  d_tot.poison();
  auto const ws = tilewise::grid::make_workspace<T>(blocks);
  int const g = tilewise::launch_cooperative(kernel, tilewise::cooperative_grid{blocks}, dim3(B), 0, cudaStream_t{},
                                             d_in.get(), d_red.get(), d_scan.get(), d_tot.get(), init, n, ws.get());
  REQUIRE(g == blocks);
  TW_CHECK_LAUNCH();
  auto const red  = d_red.download();
  auto const scan = d_scan.download();
  auto const tot  = d_tot.download();
  auto const op   = reference_op<T, Op>();

  std::size_t bad_red = 0, not_same = 0, bad_scan = 0, bad_tot = 0, bad_cub = 0;
  for (int k = 0; k < rounds; ++k) {
    std::size_t const f   = k * n;
    ref_t<T> const want   = fold(in, f, f + n, op);
    double const scale    = magnitude_sum(in, f, f + n);
    ref_t<T> acc          = ref_t<T>(init);
    double acc_scale      = magnitude(init);
    for (std::size_t i = 0; i < n; ++i) {
      bad_red += !close(red[f + i], want, scale);
      not_same += !same_bits(red[f + i], red[f]);
      bad_tot += !close(tot[f + i], want, scale);
      bad_scan += !close(scan[f + i], acc, acc_scale);
      acc = op(acc, ref_t<T>(in[f + i]));
      acc_scale += magnitude(in[f + i]);
    }
    if constexpr (std::is_same_v<T, std::int32_t> && std::is_same_v<Op, cuda::std::plus<>>) {
      T sum{};
      auto const cub_scan = cub_exclusive_sum(in, f, n, init, sum);
      for (std::size_t i = 0; i < n; ++i) bad_cub += cub_scan[i] != scan[f + i];
      bad_cub += sum != red[f];
    }
  }
  INFO("grid<" << name_of<T>() << ", B " << B << ", W " << W << "> blocks " << blocks << " seed " << seed);
  CHECK(bad_red == 0);
  CHECK(not_same == 0);
  CHECK(bad_tot == 0);
  CHECK(bad_scan == 0);
  CHECK(bad_cub == 0);
}

template <class T, class Op, unsigned B, unsigned W>
void check_shape() {
  for (int blocks : grid_sizes(reduce_scan_kernel<T, Op, B, W>, B)) {
    for (int seed = 1; seed <= seeds(2); ++seed) {
      check_grid<T, Op, B, W>(blocks, seed);
    }
  }
}

}  // namespace

TEST_CASE("grid::reduce / exclusive_scan: int32 plus, block sizes 64..1024, W 8/16/32 (vs CUB)") {
  check_shape<std::int32_t, cuda::std::plus<>, 64, 32>();
  check_shape<std::int32_t, cuda::std::plus<>, 128, 16>();
  check_shape<std::int32_t, cuda::std::plus<>, 256, 32>();
  check_shape<std::int32_t, cuda::std::plus<>, 256, 8>();
  check_shape<std::int32_t, cuda::std::plus<>, 512, 16>();
  check_shape<std::int32_t, cuda::std::plus<>, 1024, 32>();
  check_shape<std::int32_t, cuda::std::plus<>, 1024, 8>();
}

TEST_CASE("grid::reduce / exclusive_scan: int64 with an operator without a known identity") {
  check_shape<std::int64_t, user_plus, 256, 16>();
  check_shape<std::int64_t, user_plus, 96, 32>();
}

// Float sums on grids above detail::exact_max_blocks (4095) blocks take the last-block way: blocks
// of 32 fill an H200 with 4224.
TEST_CASE("grid::reduce / exclusive_scan: float and double within tolerance, deterministic reduce") {
  check_shape<float, cuda::std::plus<>, 256, 32>();
  int const max32 = tilewise::max_cooperative_grid(reduce_scan_kernel<float, cuda::std::plus<>, 32, 32>, dim3(32));
  std::string const way = max32 > int(tilewise::detail::exact_max_blocks)
                              ? "above the exact sum's limit (last-block way)"
                              : "within the exact sum's limit";
  MESSAGE("float sums in blocks of 32: largest grid " << max32 << " blocks, " << way);
  check_shape<float, cuda::std::plus<>, 32, 32>();
  check_shape<double, cuda::std::plus<>, 512, 8>();
  check_shape<double, cuda::std::plus<>, 64, 16>();
}

TEST_CASE("grid::reduce / exclusive_scan: 16-byte 2x2 matrices, non-commutative product") {
  check_shape<mat2, mat2_mul, 256, 32>();
  check_shape<mat2, mat2_mul, 64, 8>();
  check_shape<mat2, mat2_mul, 1024, 16>();
}

// 4 bytes, not commutative: on the largest grids (>= reduce::last_block_min_blocks blocks) one
// block folds the partials, in block order, and publishes the result word.
TEST_CASE("grid::reduce / exclusive_scan: 4-byte affine maps, non-commutative composition") {
  check_shape<aff16, aff16_then, 256, 32>();
  check_shape<aff16, aff16_then, 128, 16>();
}
