// Tile primitives inside divergent code:
// - cg::coalesced_threads() in a branch (full warp, one lane, random subsets), and a
//   tiled_partition of such a group, against a host reference over the active lanes in lane order;
// - only some W-tiles of a warp calling (each tile must shuffle with its own lane mask);
// - unqualified calls after `using namespace tilewise::tile;` (no ambiguity with cooperative_groups
//   functions found by argument-dependent lookup).
#include <cooperative_groups.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int threads = 256;
constexpr int blocks  = 32;
constexpr std::size_t n = std::size_t(threads) * blocks;
constexpr int outputs   = 5;  // reduce, inclusive, exclusive, aggregate, reduce over a sub-tile of 4 ranks
constexpr unsigned sub  = 4;

template <class T, class Op>
__global__ void coalesced_kernel(T const* in, unsigned char const* active, T init, T* out) {
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  T const v           = in[i];
  Op const op{};
  if (active[i]) {
    auto const g = cg::coalesced_threads();
    T aggregate;
    out[0 * n + i] = tilewise::tile::reduce(g, v, op);
    out[1 * n + i] = tilewise::tile::inclusive_scan(g, v, op);
    out[2 * n + i] = tilewise::tile::exclusive_scan(g, v, op, init, aggregate);
    out[3 * n + i] = aggregate;
    auto const part = cg::tiled_partition(g, sub);  // ranks [4k, 4k + 4) of g
    out[4 * n + i]  = tilewise::tile::reduce(part, v, op);
  }
}

/// Activity pattern per warp: warp 0 full, warp 1 a single lane, warp 2 alternate lanes, others random.
std::vector<unsigned char> activity(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(0.6);
  std::uniform_int_distribution<int> lane(0, 31);
  std::vector<unsigned char> a(n);
  for (std::size_t w = 0; w < n / 32; ++w) {
    int const single = lane(rng);
    for (int l = 0; l < 32; ++l) {
      unsigned char on = 0;
      switch (w % 8) {
        case 0: on = 1; break;
        case 1: on = l == single; break;
        case 2: on = l % 2; break;
        default: on = coin(rng); break;
      }
      a[w * 32 + l] = on;
    }
  }
  return a;
}

template <class T, class Op>
void check_coalesced(std::uint64_t seed) {
  auto const input  = random_vector<T>(n, seed);
  auto const active = activity(seed);
  T const init      = random_vector<T>(1, seed + 7)[0];
  device_buffer<T> d_in(input), d_out(outputs * n);
  device_buffer<unsigned char> d_active(active);
  d_out.poison();
  coalesced_kernel<T, Op><<<blocks, threads>>>(d_in.get(), d_active.get(), init, d_out.get());
  TW_CHECK_LAUNCH();
  auto const out = d_out.download();

  host_op<Op> const hop{};
  std::size_t bad = 0, checked = 0;
  std::string first;
  auto expect = [&](int which, std::size_t i, ref_t<T> const& ref, double scale, char const* what) {
    ++checked;
    if (!close(out[which * n + i], ref, scale) && bad++ == 0) first = std::string(what) + " at item " + std::to_string(i);
  };
  for (std::size_t w = 0; w < n / 32; ++w) {
    std::vector<std::size_t> lanes;  // active lanes in lane order = rank order
    for (std::size_t l = 0; l < 32; ++l)
      if (active[w * 32 + l]) lanes.push_back(w * 32 + l);
    if (lanes.empty()) continue;
    std::vector<T> vals;
    for (auto i : lanes) vals.push_back(input[i]);
    double const scale = magnitude_sum(vals, 0, vals.size()) + magnitude(init);
    auto const total   = fold(vals, 0, vals.size(), hop);
    ref_t<T> incl = ref_t<T>(vals[0]), excl = ref_t<T>(init);
    for (std::size_t r = 0; r < lanes.size(); ++r) {
      if (r > 0) {
        incl = hop(incl, ref_t<T>(vals[r]));
        excl = hop(excl, ref_t<T>(vals[r - 1]));
      }
      std::size_t const b = r / sub * sub, e = std::min<std::size_t>(b + sub, vals.size());
      expect(0, lanes[r], total, scale, "coalesced reduce");
      expect(1, lanes[r], incl, scale, "coalesced inclusive_scan");
      expect(2, lanes[r], excl, scale, "coalesced exclusive_scan");
      expect(3, lanes[r], total, scale, "coalesced aggregate");
      expect(4, lanes[r], fold(vals, b, e, hop), magnitude_sum(vals, b, e), "reduce over tiled_partition(coalesced, 4)");
    }
  }
  INFO("coalesced<" << name_of<T>() << "> seed " << seed << ": " << first);
  CHECK(checked > 0);
  CHECK(bad == 0);
}

template <class T, class Op>
void check_coalesced_seeds() {
  for (int s = 1; s <= seeds(); ++s) check_coalesced<T, Op>(s);
}

/// Only the even tiles of each warp call: the odd tiles' lanes are elsewhere.
template <int W, class T, class Op>
__global__ void even_tiles_kernel(T const* in, T* out) {
  auto const tile     = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tile.meta_group_rank() % 2 == 0) {
    out[2 * i]     = tilewise::tile::reduce(tile, in[i], Op{});
    out[2 * i + 1] = tilewise::tile::inclusive_scan(tile, in[i], Op{});
  } else {
    out[2 * i] = out[2 * i + 1] = in[i];
  }
}

template <int W, class T, class Op>
void check_even_tiles(std::uint64_t seed) {
  auto const input = random_vector<T>(n, seed);
  device_buffer<T> d_in(input), d_out(2 * n);
  d_out.poison();
  even_tiles_kernel<W, T, Op><<<blocks, threads>>>(d_in.get(), d_out.get());
  TW_CHECK_LAUNCH();
  auto const out = d_out.download();
  host_op<Op> const hop{};
  std::size_t bad = 0;
  for (std::size_t t = 0; t < n / W; ++t) {
    std::size_t const b = t * W;
    bool const called   = (t % (threads / W)) % 2 == 0;
    double const scale  = magnitude_sum(input, b, b + W);
    auto const total    = fold(input, b, b + W, hop);
    ref_t<T> incl       = ref_t<T>(input[b]);
    for (std::size_t l = 0; l < std::size_t(W); ++l) {
      if (l > 0) incl = hop(incl, ref_t<T>(input[b + l]));
      bool const ok = called ? close(out[2 * (b + l)], total, scale) && close(out[2 * (b + l) + 1], incl, scale)
                             : same_bits(out[2 * (b + l)], input[b + l]);
      bad += !ok;
    }
  }
  INFO("even tiles W=" << W << " " << name_of<T>() << " seed " << seed);
  CHECK(bad == 0);
}

/// Unqualified calls: `reduce(tile, ...)` finds tilewise::tile::reduce, a function object, so
/// argument-dependent lookup (which would also find cooperative_groups::reduce) does not happen.
__global__ void unqualified_kernel(int const* in, int* out) {
  using namespace tilewise::tile;
  auto const tile     = cg::tiled_partition<16>(cg::this_thread_block());
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int aggregate;
  out[4 * i + 0] = reduce(tile, in[i], cuda::std::plus<>{});
  out[4 * i + 1] = inclusive_scan(tile, in[i], cuda::std::plus<>{});
  out[4 * i + 2] = exclusive_scan(tile, in[i], cuda::std::plus<>{}, 5, aggregate);
  out[4 * i + 3] = aggregate;
}

}  // namespace

TEST_CASE("coalesced groups in divergent code") {
  check_coalesced_seeds<std::int32_t, cuda::std::plus<>>();       // redux.sync with the group's mask
  check_coalesced_seeds<std::uint32_t, cuda::std::bit_xor<>>();
  check_coalesced_seeds<std::int32_t, user_plus>();               // shuffles over arbitrary lanes
  check_coalesced_seeds<std::int64_t, cuda::maximum<>>();
  check_coalesced_seeds<float, cuda::std::plus<>>();
  check_coalesced_seeds<double, cuda::minimum<>>();
  check_coalesced_seeds<s12, s12_plus>();
  check_coalesced_seeds<s24, s24_op>();
  check_coalesced_seeds<mat2, mat2_mul>();                        // in rank order
}

TEST_CASE("only some tiles of a warp call") {
  for (int s = 1; s <= seeds(4); ++s) {
    check_even_tiles<4, std::int32_t, cuda::std::plus<>>(s);
    check_even_tiles<8, std::int32_t, cuda::std::plus<>>(s);
    check_even_tiles<16, std::int32_t, cuda::std::plus<>>(s);
    check_even_tiles<8, float, cuda::std::plus<>>(s);
    check_even_tiles<16, double, cuda::maximum<>>(s);
    check_even_tiles<16, mat2, mat2_mul>(s);
  }
}

TEST_CASE("unqualified calls after using namespace tilewise::tile") {
  auto const input = random_vector<int>(n, 3);
  device_buffer<int> d_in(input), d_out(4 * n);
  d_out.poison();
  unqualified_kernel<<<blocks, threads>>>(d_in.get(), d_out.get());
  TW_CHECK_LAUNCH();
  auto const out  = d_out.download();
  std::size_t bad = 0;
  for (std::size_t b = 0; b < n; b += 16) {
    unsigned total = 0;
    for (std::size_t l = 0; l < 16; ++l) total += unsigned(input[b + l]);
    unsigned incl = 0;
    for (std::size_t l = 0; l < 16; ++l) {
      unsigned const excl = 5u + incl;
      incl += unsigned(input[b + l]);
      bad += out[4 * (b + l)] != int(total) || out[4 * (b + l) + 1] != int(incl) ||
             out[4 * (b + l) + 2] != int(excl) || out[4 * (b + l) + 3] != int(total);
    }
  }
  CHECK(bad == 0);
}
