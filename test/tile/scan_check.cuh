// tile::inclusive_scan and both forms of tile::exclusive_scan against cub::WarpScan with
// LOGICAL_WARP_THREADS = W and a host reference, on the same random input, every W in 1..32.
#pragma once

#include <cooperative_groups.h>

#include <cub/warp/warp_scan.cuh>

#include <tilewise/tile/scan.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

namespace tw_test {

namespace cg = cooperative_groups;

inline constexpr int scan_block_threads = 256;
inline constexpr int scan_grid_blocks   = 48;
inline constexpr std::size_t scan_items = std::size_t(scan_block_threads) * scan_grid_blocks;

struct scan_outputs {
  static constexpr int count = 7;  // ours: incl, excl, excl2, aggregate; CUB: incl, excl, aggregate
};

template <int W, class T, class Op>
__global__ void scan_vs_cub(T const* in, T const* init, T* out) {
  using warp_scan = cub::WarpScan<T, W>;
  __shared__ typename warp_scan::TempStorage incl_storage[scan_block_threads / W];
  __shared__ typename warp_scan::TempStorage excl_storage[scan_block_threads / W];

  auto const tile     = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t const n = std::size_t(gridDim.x) * blockDim.x;
  T const v           = in[i];
  T const seed        = init[i / W];
  Op const op{};

  T aggregate;
  out[0 * n + i] = tilewise::tile::inclusive_scan(tile, v, op);
  out[1 * n + i] = tilewise::tile::exclusive_scan(tile, v, op, seed);
  out[2 * n + i] = tilewise::tile::exclusive_scan(tile, v, op, seed, aggregate);
  out[3 * n + i] = aggregate;

  T c_incl, c_excl, c_aggregate;
  warp_scan(incl_storage[threadIdx.x / W]).InclusiveScan(v, c_incl, op);
  warp_scan(excl_storage[threadIdx.x / W]).ExclusiveScan(v, c_excl, seed, op, c_aggregate);
  out[4 * n + i] = c_incl;
  out[5 * n + i] = c_excl;
  out[6 * n + i] = c_aggregate;
}

template <int W, class T, class Op>
void check_scan(std::uint64_t seed) {
  std::size_t const n     = scan_items;
  std::size_t const tiles = n / W;
  auto const input        = random_vector<T>(n, seed);
  auto const inits        = random_vector<T>(tiles, seed + 1000);

  device_buffer<T> d_in(input), d_init(inits);
  device_buffer<T> d_out(scan_outputs::count * n);
  d_out.poison();
  scan_vs_cub<W, T, Op><<<scan_grid_blocks, scan_block_threads>>>(d_in.get(), d_init.get(), d_out.get());
  TW_CHECK_LAUNCH();
  auto const out = d_out.download();
  auto at        = [&](int which, std::size_t i) -> T const& { return out[which * n + i]; };

  host_op<Op> const hop{};
  std::size_t bad = 0;
  std::string first;
  auto fail = [&](std::size_t i, char const* what) {
    if (bad++ == 0) first = std::string(what) + " at item " + std::to_string(i);
  };
  for (std::size_t t = 0; t < tiles; ++t) {
    std::size_t const b   = t * W;
    double const scale    = magnitude_sum(input, b, b + W) + magnitude(inits[t]);
    auto const ref_total  = fold(input, b, b + W, hop);
    ref_t<T> incl         = ref_t<T>(input[b]);
    ref_t<T> excl         = ref_t<T>(inits[t]);
    for (std::size_t l = 0; l < std::size_t(W); ++l) {
      std::size_t const i = b + l;
      if (l > 0) {
        incl = hop(incl, ref_t<T>(input[i]));
        excl = hop(excl, ref_t<T>(input[i - 1]));
      }
      if (!close(at(0, i), incl, scale)) fail(i, "inclusive vs host reference");
      if (!close(at(1, i), excl, scale)) fail(i, "exclusive vs host reference");
      if (!close(at(2, i), excl, scale)) fail(i, "exclusive(aggregate) vs host reference");
      if (!close(at(3, i), ref_total, scale)) fail(i, "aggregate vs host reference");
      if (!close(at(4, i), incl, scale)) fail(i, "CUB inclusive vs host reference (oracle)");
      if (!close(at(5, i), excl, scale)) fail(i, "CUB exclusive vs host reference (oracle)");
      if (!close(at(6, i), ref_total, scale)) fail(i, "CUB aggregate vs host reference (oracle)");
      if constexpr (exact_v<T>) {
        if (!(at(0, i) == at(4, i))) fail(i, "inclusive vs CUB");
        if (!(at(1, i) == at(5, i))) fail(i, "exclusive vs CUB");
        if (!(at(3, i) == at(6, i))) fail(i, "aggregate vs CUB");
      }
      if (!same_bits(at(3, i), at(3, b))) fail(i, "aggregate differs between lanes");
    }
  }
  INFO("scan<W=" << W << ", " << name_of<T>() << "> seed " << seed << ": " << first);
  CHECK(bad == 0);
}

template <class T, class Op>
void check_scan_all_widths() {
  for (int s = 1; s <= seeds(); ++s) {
    check_scan<1, T, Op>(s);
    check_scan<2, T, Op>(s);
    check_scan<4, T, Op>(s);
    check_scan<8, T, Op>(s);
    check_scan<16, T, Op>(s);
    check_scan<32, T, Op>(s);
  }
}

}  // namespace tw_test
