// tile::reduce (full and partial tiles) against cub::WarpReduce with LOGICAL_WARP_THREADS = W and a
// host reference, on the same random input, for every W in {1, 2, 4, 8, 16, 32}.
#pragma once

#include <cooperative_groups.h>

#include <cub/warp/warp_reduce.cuh>

#include <tilewise/tile/reduce.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

namespace tw_test {

namespace cg = cooperative_groups;

inline constexpr int block_threads = 256;
inline constexpr int grid_blocks   = 48;
inline constexpr std::size_t items = std::size_t(block_threads) * grid_blocks;

template <int W, class T, class Op>
__global__ void reduce_vs_cub(T const* in, unsigned const* valid, T* ours_full, T* ours_part, T* cub_full,
                              T* cub_part) {
  using warp_reduce = cub::WarpReduce<T, W>;
  __shared__ typename warp_reduce::TempStorage full_storage[block_threads / W];
  __shared__ typename warp_reduce::TempStorage part_storage[block_threads / W];

  auto const tile       = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i   = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t const t   = i / W;
  unsigned const n      = valid[t];
  T const v             = in[i];
  Op const op{};

  ours_full[i] = tilewise::tile::reduce(tile, v, op);
  ours_part[i] = tilewise::tile::reduce(tile, v, op, n);

  T const c_full = warp_reduce(full_storage[threadIdx.x / W]).Reduce(v, op);
  T const c_part = warp_reduce(part_storage[threadIdx.x / W]).Reduce(v, op, int(n));
  if (tile.thread_rank() == 0) {  // CUB's result is valid in lane 0 only
    cub_full[t] = c_full;
    cub_part[t] = c_part;
  }
}

/// Runs one (W, T, Op) case for one seed; every mismatch is counted and the first one reported.
template <int W, class T, class Op>
void check_reduce(std::uint64_t seed) {
  std::size_t const tiles = items / W;
  auto const input        = random_vector<T>(items, seed);
  auto const counts       = random_counts(tiles, 1, W, seed);

  device_buffer<T> d_in(input);
  device_buffer<unsigned> d_valid(counts);
  device_buffer<T> ours_full(items), ours_part(items), cub_full(tiles), cub_part(tiles);
  ours_full.poison();
  ours_part.poison();
  cub_full.poison();
  cub_part.poison();

  reduce_vs_cub<W, T, Op><<<grid_blocks, block_threads>>>(d_in.get(), d_valid.get(), ours_full.get(),
                                                         ours_part.get(), cub_full.get(), cub_part.get());
  TW_CHECK_LAUNCH();

  auto const of = ours_full.download();
  auto const op = ours_part.download();
  auto const cf = cub_full.download();
  auto const cp = cub_part.download();

  std::size_t bad = 0;
  std::string first;
  auto fail = [&](std::size_t t, char const* what) {
    if (bad++ == 0) first = std::string(what) + " at tile " + std::to_string(t);
  };
  for (std::size_t t = 0; t < tiles; ++t) {
    std::size_t const b = t * W;
    auto const ref_full = fold(input, b, b + W, host_op<Op>{});
    auto const ref_part = fold(input, b, b + counts[t], host_op<Op>{});
    double const s_full = magnitude_sum(input, b, b + W);
    double const s_part = magnitude_sum(input, b, b + counts[t]);
    for (std::size_t l = 0; l < std::size_t(W); ++l) {
      if (!same_bits(of[b + l], of[b])) fail(t, "full: lanes differ");
      if (!same_bits(op[b + l], op[b])) fail(t, "partial: lanes differ");
    }
    if (!close(of[b], ref_full, s_full)) fail(t, "full vs host reference");
    if (!close(op[b], ref_part, s_part)) fail(t, "partial vs host reference");
    if constexpr (commutative_v<Op>) {
      if (!close(cf[t], ref_full, s_full)) fail(t, "CUB full vs host reference (oracle)");
      if (!close(cp[t], ref_part, s_part)) fail(t, "CUB partial vs host reference (oracle)");
      if constexpr (exact_v<T>) {
        if (!(of[b] == cf[t])) fail(t, "full vs CUB");
        if (!(op[b] == cp[t])) fail(t, "partial vs CUB");
      }
    }
  }
  INFO("reduce<W=" << W << ", " << name_of<T>() << "> seed " << seed << ": " << first);
  CHECK(bad == 0);
}

template <class T, class Op>
void check_reduce_all_widths() {
  for (int s = 1; s <= seeds(); ++s) {
    check_reduce<1, T, Op>(s);
    check_reduce<2, T, Op>(s);
    check_reduce<4, T, Op>(s);
    check_reduce<8, T, Op>(s);
    check_reduce<16, T, Op>(s);
    check_reduce<32, T, Op>(s);
  }
}

}  // namespace tw_test
