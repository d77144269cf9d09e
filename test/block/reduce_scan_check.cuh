// block::reduce, block::inclusive_scan and block::exclusive_scan against cub::BlockReduce /
// cub::BlockScan and a host reference, on the same random input, for one (T, Op, BlockSize, W).
//
// Every thread's result is checked (the results are broadcast), and every primitive is called
// three times back to back on the same temp_storage with no barrier in between (the documented
// reuse rule), with different inputs, so that a race between consecutive calls shows. Blocks
// differ in what their temp_storage holds before the first call: whatever was there, bytes that
// differ from thread to thread (phases that disagree), or all 0xFF.
#pragma once

#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

namespace tw_test {

namespace cg = cooperative_groups;

inline constexpr int block_grid = 6;  ///< blocks per launch: two of each scribble pattern

/// Outputs per thread, in this order.
enum block_out : int {
  o_reduce,         ///< reduce(v)
  o_reduce_valid,   ///< reduce(v2, valid)
  o_reduce2,        ///< reduce(v2)
  o_incl,           ///< inclusive_scan(v)
  o_incl2,          ///< inclusive_scan(v2, aggregate)
  o_incl2_agg,      ///< its aggregate
  o_incl3,          ///< inclusive_scan(v) again
  o_excl,           ///< exclusive_scan(v, init)
  o_excl2,          ///< exclusive_scan(v2, init, aggregate)
  o_excl2_agg,      ///< its aggregate
  o_excl3,          ///< exclusive_scan(v, init) again
  o_cub_incl,       ///< cub::BlockScan::InclusiveScan(v)
  o_cub_excl,       ///< cub::BlockScan::ExclusiveScan(v, init, aggregate)
  o_cub_excl_agg,   ///< its aggregate
  block_outputs
};

/// Fills `bytes` of shared memory with a pattern: 0 leaves it, 1 writes bytes that differ between
/// neighbours (so the per-thread phase bytes disagree), 2 writes 0xFF.
__device__ inline void scribble(void* p, std::size_t bytes, unsigned pattern, unsigned rank, unsigned threads) {
  if (pattern == 0) return;
  auto* b = static_cast<unsigned char*>(p);
  for (std::size_t k = rank; k < bytes; k += threads) {
    b[k] = pattern == 1 ? static_cast<unsigned char>(k * 7u + 3u) : 0xFFu;
  }
}

/// How the block primitives under test are called: the public classes (their tuned plan), or the
/// detail functions with a forced plan (one or two barriers, combine shared by `Lanes` lanes, or
/// raking for the scans, with reduce on two barriers), as the benchmark forces them.
enum class plan { tuned, one_barrier, two_barriers, raking };

/// The forced plan of the scans (`scan`) and of reduce (`reduce`).
template <plan P, unsigned Lanes>
inline constexpr tilewise::detail::block_plan scan_plan_of{P == plan::one_barrier, Lanes, P == plan::raking};
template <plan P, unsigned Lanes>
inline constexpr tilewise::detail::block_plan reduce_plan_of{P == plan::one_barrier, Lanes};

template <class T, unsigned BS, unsigned W, plan P>
struct storage_of {
  using reduce = typename tilewise::block::reduce<T, BS, W>::temp_storage;
  using incl   = typename tilewise::block::inclusive_scan<T, BS, W>::temp_storage;
  using excl   = typename tilewise::block::exclusive_scan<T, BS, W>::temp_storage;
};
template <class T, unsigned BS, unsigned W, plan P>
  requires(P != plan::tuned)
struct storage_of<T, BS, W, P> {
  using reduce = tilewise::detail::plan_storage<T, BS, W, P == plan::one_barrier, false>;
  using incl   = tilewise::detail::plan_storage<T, BS, W, P == plan::one_barrier, P == plan::raking>;
  using excl   = incl;
};

template <class T, class Op, unsigned BS, unsigned W, plan P, unsigned Lanes>
__global__ void __launch_bounds__(BS) block_vs_cub(T const* in, T const* in2, T const* inits, unsigned const* valid,
                                                   T* out, T* cub_reduce) {
  using reduce_t = tilewise::block::reduce<T, BS, W>;
  using incl_t   = tilewise::block::inclusive_scan<T, BS, W>;
  using excl_t   = tilewise::block::exclusive_scan<T, BS, W>;
  using cub_red  = cub::BlockReduce<T, int(BS)>;
  using cub_scan = cub::BlockScan<T, int(BS)>;
  __shared__ typename storage_of<T, BS, W, P>::reduce red_tmp;
  __shared__ typename storage_of<T, BS, W, P>::incl incl_tmp;
  __shared__ typename storage_of<T, BS, W, P>::excl excl_tmp;
  __shared__ typename cub_red::TempStorage cub_red_tmp;
  __shared__ typename cub_scan::TempStorage cub_scan_tmp;

  auto const block    = cg::this_thread_block();
  unsigned const rank = block.thread_rank();
  std::size_t const i = std::size_t(blockIdx.x) * BS + rank;
  std::size_t const n = std::size_t(gridDim.x) * BS;
  unsigned const pat  = blockIdx.x % 3;
  scribble(&red_tmp, sizeof(red_tmp), pat, rank, BS);
  scribble(&incl_tmp, sizeof(incl_tmp), pat, rank, BS);
  scribble(&excl_tmp, sizeof(excl_tmp), pat, rank, BS);
  block.sync();

  T const v      = in[i];
  T const v2     = in2[i];
  T const init   = inits[blockIdx.x];
  unsigned const nv = valid[blockIdx.x];
  Op op{};
  T* o = out + i;
  T agg;

  if constexpr (P == plan::tuned) {
    o[o_reduce * n]       = reduce_t{red_tmp}(block, v, op);
    o[o_reduce_valid * n] = reduce_t{red_tmp}(block, v2, op, nv);
    o[o_reduce2 * n]      = reduce_t{red_tmp}(block, v2, op);
    o[o_incl * n]         = incl_t{incl_tmp}(block, v, op);
    o[o_incl2 * n]        = incl_t{incl_tmp}(block, v2, op, agg);
    o[o_incl2_agg * n]    = agg;
    o[o_incl3 * n]        = incl_t{incl_tmp}(block, v, op);
    o[o_excl * n]         = excl_t{excl_tmp}(block, v, op, init);
    o[o_excl2 * n]        = excl_t{excl_tmp}(block, v2, op, init, agg);
    o[o_excl2_agg * n]    = agg;
    o[o_excl3 * n]        = excl_t{excl_tmp}(block, v, op, init);
  } else {
    namespace d          = tilewise::detail;
    constexpr auto red   = reduce_plan_of<P, P == plan::raking ? 1 : Lanes>;
    constexpr auto scan  = scan_plan_of<P, Lanes>;
    o[o_reduce * n]       = d::block_reduce<red, false, BS, W>(red_tmp, block, v, op, BS);
    o[o_reduce_valid * n] = d::block_reduce<red, true, BS, W>(red_tmp, block, v2, op, nv);
    o[o_reduce2 * n]      = d::block_reduce<red, false, BS, W>(red_tmp, block, v2, op, BS);
    o[o_incl * n]         = d::block_scan<scan, false, false, BS, W>(incl_tmp, block, v, op, v, nullptr);
    o[o_incl2 * n]        = d::block_scan<scan, false, true, BS, W>(incl_tmp, block, v2, op, v2, &agg);
    o[o_incl2_agg * n]    = agg;
    o[o_incl3 * n]        = d::block_scan<scan, false, false, BS, W>(incl_tmp, block, v, op, v, nullptr);
    o[o_excl * n]         = d::block_scan<scan, true, false, BS, W>(excl_tmp, block, v, op, init, nullptr);
    o[o_excl2 * n]        = d::block_scan<scan, true, true, BS, W>(excl_tmp, block, v2, op, init, &agg);
    o[o_excl2_agg * n]    = agg;
    o[o_excl3 * n]        = d::block_scan<scan, true, false, BS, W>(excl_tmp, block, v, op, init, nullptr);
  }

  // The oracle. CUB's reductions are valid in thread 0 only; its storage needs a barrier between uses.
  T const c_full = cub_red(cub_red_tmp).Reduce(v, op);
  block.sync();
  T const c_part = cub_red(cub_red_tmp).Reduce(v2, op, int(nv));
  if (rank == 0) {
    cub_reduce[2 * blockIdx.x]     = c_full;
    cub_reduce[2 * blockIdx.x + 1] = c_part;
  }
  T c_incl, c_excl, c_agg;
  cub_scan(cub_scan_tmp).InclusiveScan(v, c_incl, op);
  block.sync();
  cub_scan(cub_scan_tmp).ExclusiveScan(v, c_excl, init, op, c_agg);
  o[o_cub_incl * n]     = c_incl;
  o[o_cub_excl * n]     = c_excl;
  o[o_cub_excl_agg * n] = c_agg;
}

/// Runs one (T, Op, BS, W[, plan, lanes]) case for one seed; every mismatch is counted, the first reported.
template <class T, class Op, unsigned BS, unsigned W, plan P = plan::tuned, unsigned Lanes = 0>
void check_block(std::uint64_t seed) {
  std::size_t const n = std::size_t(block_grid) * BS;
  auto const x        = random_vector<T>(n, seed);
  auto const x2       = random_vector<T>(n, seed + 7777);
  auto const inits    = random_vector<T>(block_grid, seed + 99);
  auto const valid    = random_counts(block_grid, 1, BS, seed);

  device_buffer<T> d_x(x), d_x2(x2), d_init(inits);
  device_buffer<unsigned> d_valid(valid);
  device_buffer<T> d_out(std::size_t(block_outputs) * n), d_cub(2 * block_grid);
  d_out.poison();
  d_cub.poison();
  block_vs_cub<T, Op, BS, W, P, Lanes><<<block_grid, BS>>>(d_x.get(), d_x2.get(), d_init.get(), d_valid.get(),
                                                        d_out.get(), d_cub.get());
  TW_CHECK_LAUNCH();
  auto const out = d_out.download();
  auto const cub = d_cub.download();
  auto at        = [&](int which, std::size_t k) -> T const& { return out[std::size_t(which) * n + k]; };

  host_op<Op> const hop{};
  std::size_t bad = 0;
  std::string first;
  auto fail = [&](std::size_t k, char const* what) {
    if (bad++ == 0) first = std::string(what) + " at thread " + std::to_string(k % BS) + " of block " + std::to_string(k / BS);
  };
  for (std::size_t b = 0; b < std::size_t(block_grid); ++b) {
    std::size_t const base = b * BS;
    std::size_t const end  = base + BS;
    auto const r_full      = fold(x, base, end, hop);
    auto const r_full2     = fold(x2, base, end, hop);
    auto const r_part2     = fold(x2, base, base + valid[b], hop);
    double const s_full    = magnitude_sum(x, base, end);
    double const s_full2   = magnitude_sum(x2, base, end);
    double const s_part2   = magnitude_sum(x2, base, base + valid[b]);
    if (!close(at(o_reduce, base), r_full, s_full)) fail(base, "reduce vs host reference");
    if (!close(at(o_reduce_valid, base), r_part2, s_part2)) fail(base, "reduce(valid) vs host reference");
    if (!close(at(o_reduce2, base), r_full2, s_full2)) fail(base, "reduce (third call) vs host reference");
    if (!close(at(o_incl2_agg, base), r_full2, s_full2)) fail(base, "inclusive aggregate vs host reference");
    if (!close(at(o_excl2_agg, base), r_full2, s_full2)) fail(base, "exclusive aggregate vs host reference");
    if constexpr (commutative_v<Op>) {
      if (!close(cub[2 * b], r_full, s_full)) fail(base, "CUB reduce vs host reference (oracle)");
      if (!close(cub[2 * b + 1], r_part2, s_part2)) fail(base, "CUB reduce(valid) vs host reference (oracle)");
      if constexpr (exact_v<T>) {
        if (!(at(o_reduce, base) == cub[2 * b])) fail(base, "reduce vs CUB");
        if (!(at(o_reduce_valid, base) == cub[2 * b + 1])) fail(base, "reduce(valid) vs CUB");
      }
    }
    if (!close(at(o_cub_excl_agg, base), r_full, s_full)) fail(base, "CUB aggregate vs host reference (oracle)");

    ref_t<T> incl  = ref_t<T>(x[base]);
    ref_t<T> incl2 = ref_t<T>(x2[base]);
    ref_t<T> excl  = ref_t<T>(inits[b]);
    ref_t<T> excl2 = ref_t<T>(inits[b]);
    double scale = magnitude(inits[b]), scale2 = magnitude(inits[b]);
    for (std::size_t k = base; k < end; ++k) {
      if (k > base) {
        incl  = hop(incl, ref_t<T>(x[k]));
        incl2 = hop(incl2, ref_t<T>(x2[k]));
        excl  = hop(excl, ref_t<T>(x[k - 1]));
        excl2 = hop(excl2, ref_t<T>(x2[k - 1]));
      }
      scale += magnitude(x[k]);
      scale2 += magnitude(x2[k]);
      // broadcast: every thread holds bitwise what thread 0 of its block holds
      for (int which : {o_reduce, o_reduce_valid, o_reduce2, o_incl2_agg, o_excl2_agg}) {
        if (!same_bits(at(which, k), at(which, base))) fail(k, "broadcast result differs between threads");
      }
      if (!close(at(o_incl, k), incl, scale)) fail(k, "inclusive vs host reference");
      if (!close(at(o_incl2, k), incl2, scale2)) fail(k, "inclusive(aggregate) vs host reference");
      if (!close(at(o_excl, k), excl, scale)) fail(k, "exclusive vs host reference");
      if (!close(at(o_excl2, k), excl2, scale2)) fail(k, "exclusive(aggregate) vs host reference");
      if (!same_bits(at(o_incl3, k), at(o_incl, k))) fail(k, "inclusive: third call differs from the first");
      if (!same_bits(at(o_excl3, k), at(o_excl, k))) fail(k, "exclusive: third call differs from the first");
      if (!close(at(o_cub_incl, k), incl, scale)) fail(k, "CUB inclusive vs host reference (oracle)");
      if (!close(at(o_cub_excl, k), excl, scale)) fail(k, "CUB exclusive vs host reference (oracle)");
      if constexpr (exact_v<T>) {
        if (!(at(o_incl, k) == at(o_cub_incl, k))) fail(k, "inclusive vs CUB");
        if (!(at(o_excl, k) == at(o_cub_excl, k))) fail(k, "exclusive vs CUB");
        if (!(at(o_excl2_agg, k) == at(o_incl2_agg, k))) fail(k, "aggregates of the two scans differ");
      }
    }
  }
  INFO("block<" << name_of<T>() << ", BlockSize=" << BS << ", W=" << W << ", plan=" << int(P) << ", lanes=" << Lanes
                << "> seed " << seed << ": " << first);
  CHECK(bad == 0);
}

template <class T, class Op, unsigned BS, unsigned W, plan P = plan::tuned, unsigned Lanes = 0>
void check_block_seeds() {
  for (int s = 1; s <= seeds(); ++s) check_block<T, Op, BS, W, P, Lanes>(s);
}

/// Every block size of the contract's list with every tile width that divides it, the
/// non-power-of-two 96 and 384, a partial last warp (48 / 16) and a block below one warp (24 / 8).
template <class T, class Op>
void check_block_all_shapes() {
  check_block_seeds<T, Op, 32, 32>();
  check_block_seeds<T, Op, 64, 32>();
  check_block_seeds<T, Op, 96, 32>();
  check_block_seeds<T, Op, 128, 32>();
  check_block_seeds<T, Op, 256, 32>();
  check_block_seeds<T, Op, 384, 32>();
  check_block_seeds<T, Op, 512, 32>();
  check_block_seeds<T, Op, 1024, 32>();
  check_block_seeds<T, Op, 96, 16>();
  check_block_seeds<T, Op, 256, 16>();
  check_block_seeds<T, Op, 1024, 16>();
  check_block_seeds<T, Op, 96, 8>();
  check_block_seeds<T, Op, 384, 8>();
  check_block_seeds<T, Op, 1024, 8>();
  check_block_seeds<T, Op, 48, 16>();
  check_block_seeds<T, Op, 24, 8>();
}

/// A smaller set of shapes for the other types: non-power-of-two, W < 32, the largest block and
/// a partial last warp.
template <class T, class Op>
void check_block_some_shapes() {
  check_block_seeds<T, Op, 96, 32>();
  check_block_seeds<T, Op, 256, 16>();
  check_block_seeds<T, Op, 384, 8>();
  check_block_seeds<T, Op, 1024, 32>();
  check_block_seeds<T, Op, 48, 16>();
}

}  // namespace tw_test
