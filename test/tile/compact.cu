// tile::compact and tile::compact_append against a CUB-computed stable selection
// (cub::DeviceSelect::Flagged) of the same values and flags: all kept, none kept, alternating,
// random 1 % / 50 % / 99 %; every W and coalesced groups; a raw pointer and a
// transform_output_iterator as outputs.
#include <cooperative_groups.h>

#include <thrust/iterator/transform_output_iterator.h>

#include <algorithm>

#include <tilewise/tile/compact.cuh>

#include "../support/cuda_test.cuh"
#include "../support/select_data.cuh"
#include "../support/test_types.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int threads   = 256;
constexpr int blocks    = 40;
constexpr std::size_t n = std::size_t(threads) * blocks;

using pattern = keep_pattern;
constexpr auto const& patterns = keep_patterns;

std::vector<unsigned char> flags(pattern p, std::uint64_t seed) { return keep_flags(p, n, seed); }

struct negate {
  __host__ __device__ int operator()(int x) const { return -x; }
};

/// Each tile compacts into its own segment out + tile * W; counts[tile] = the returned count.
/// Every lane writes its count so that a disagreement between lanes shows.
template <int W, class T, bool Transform>
__global__ void compact_kernel(T const* in, unsigned char const* keep, T* out, unsigned* counts) {
  auto const tile     = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  T* const segment    = out + i / W * W;
  unsigned c;
  if constexpr (Transform) {
    c = tilewise::tile::compact(tile, keep[i] != 0, in[i], thrust::make_transform_output_iterator(segment, negate{}));
  } else {
    c = tilewise::tile::compact(tile, keep[i] != 0, in[i], segment);
  }
  counts[i] = c;
}

/// All tiles append to one buffer; bases[i] = the returned base on every lane.
template <int W, class T>
__global__ void append_kernel(T const* in, unsigned char const* keep, T* out, unsigned long long* cursor,
                              unsigned long long* bases) {
  auto const tile     = cg::tiled_partition<W>(cg::this_thread_block());
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bases[i]            = tilewise::tile::compact_append(tile, keep[i] != 0, in[i], out, cursor);
}

template <int W, class T, bool Transform = false>
void check_compact(pattern p, std::uint64_t seed) {
  auto const values = random_vector<T>(n, seed);
  auto const f      = flags(p, seed + 17);
  auto expected     = cub_select(values, f);
  if constexpr (Transform) {
    for (auto& x : expected) x = -x;
  }

  device_buffer<T> d_in(values), d_out(n);
  device_buffer<unsigned char> d_flags(f);
  device_buffer<unsigned> d_counts(n);
  d_out.poison();
  d_counts.poison();
  compact_kernel<W, T, Transform><<<blocks, threads>>>(d_in.get(), d_flags.get(), d_out.get(), d_counts.get());
  TW_CHECK_LAUNCH();
  auto const out    = d_out.download();
  auto const counts = d_counts.download();

  std::vector<T> concatenated;
  std::size_t bad = 0;
  for (std::size_t t = 0; t < n / W; ++t) {
    for (std::size_t l = 0; l < std::size_t(W); ++l) bad += counts[t * W + l] != counts[t * W];
    bad += counts[t * W] > unsigned(W);
    for (std::size_t k = 0; k < std::min<std::size_t>(counts[t * W], W); ++k) concatenated.push_back(out[t * W + k]);
  }
  INFO("compact W=" << W << " " << name_of<T>() << " pattern " << int(p) << " seed " << seed);
  CHECK(bad == 0);
  CHECK(concatenated == expected);
}

template <int W, class T>
void check_append(pattern p, std::uint64_t seed) {
  auto const values   = random_vector<T>(n, seed);
  auto const f        = flags(p, seed + 17);
  auto const expected = cub_select(values, f);

  device_buffer<T> d_in(values), d_out(n);
  device_buffer<unsigned char> d_flags(f);
  device_buffer<unsigned long long> d_cursor(std::vector<unsigned long long>{0}), d_bases(n);
  d_out.poison();
  d_bases.poison();
  append_kernel<W, T><<<blocks, threads>>>(d_in.get(), d_flags.get(), d_out.get(), d_cursor.get(), d_bases.get());
  TW_CHECK_LAUNCH();
  auto const out   = d_out.download();
  auto const bases = d_bases.download();
  auto const total = d_cursor.download()[0];

  INFO("compact_append W=" << W << " " << name_of<T>() << " pattern " << int(p) << " seed " << seed);
  REQUIRE(total == expected.size());
  // Each tile's kept values sit at [base, base + kept) in rank order; together a permutation of tiles.
  std::size_t bad = 0;
  for (std::size_t t = 0; t < n / W; ++t) {
    std::size_t k = 0;
    for (std::size_t l = 0; l < std::size_t(W); ++l) {
      std::size_t const i = t * W + l;
      bad += bases[i] != bases[t * W];
      if (f[i]) bad += !(bases[t * W] + k < total && out[bases[t * W] + k++] == values[i]);
    }
  }
  CHECK(bad == 0);
  // As a multiset: CUB's selection, sorted, equals the appended buffer, sorted.
  std::vector<T> got(out.begin(), out.begin() + std::ptrdiff_t(total)), want = expected;
  auto less = [](T const& a, T const& b) { return std::memcmp(&a, &b, sizeof(T)) < 0; };
  std::sort(got.begin(), got.end(), less);
  std::sort(want.begin(), want.end(), less);
  CHECK(got == want);
}

/// Divergent code: the active lanes of a warp compact into the warp's segment, in lane order.
__global__ void coalesced_kernel(int const* in, unsigned char const* active, unsigned char const* keep, int* out,
                                 unsigned* counts) {
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (active[i]) {
    counts[i] = tilewise::tile::compact(cg::coalesced_threads(), keep[i] != 0, in[i], out + i / 32 * 32);
  }
}

template <int W>
void check_width() {
  for (int s = 1; s <= seeds(2); ++s) {
    for (pattern p : patterns) {
      check_compact<W, int>(p, s);
      check_append<W, int>(p, s);
    }
    check_compact<W, s12>(pattern::p50, s);
    check_compact<W, int, true>(pattern::p50, s);
    check_append<W, mat2>(pattern::p50, s);
  }
}

}  // namespace

TEST_CASE("tile::compact and compact_append match CUB's stable selection") {
  check_width<1>();
  check_width<2>();
  check_width<4>();
  check_width<8>();
  check_width<16>();
  check_width<32>();
}

TEST_CASE("tile::compact in divergent code (coalesced groups)") {
  for (int s = 1; s <= seeds(4); ++s) {
    auto const values = random_vector<int>(n, s);
    auto const active = flags(pattern::p50, s + 100);
    auto const keep   = flags(s % 2 ? pattern::p50 : pattern::p99, s + 200);
    device_buffer<int> d_in(values), d_out(n);
    device_buffer<unsigned char> d_active(active), d_keep(keep);
    device_buffer<unsigned> d_counts(n);
    d_out.poison();
    d_counts.poison();
    coalesced_kernel<<<blocks, threads>>>(d_in.get(), d_active.get(), d_keep.get(), d_out.get(), d_counts.get());
    TW_CHECK_LAUNCH();
    auto const out    = d_out.download();
    auto const counts = d_counts.download();
    std::size_t bad = 0;
    for (std::size_t w = 0; w < n / 32; ++w) {
      std::vector<int> want;
      for (std::size_t l = 0; l < 32; ++l)
        if (active[w * 32 + l] && keep[w * 32 + l]) want.push_back(values[w * 32 + l]);
      for (std::size_t l = 0; l < 32; ++l)
        if (active[w * 32 + l]) bad += counts[w * 32 + l] != want.size();
      for (std::size_t k = 0; k < want.size(); ++k) bad += out[w * 32 + k] != want[k];
    }
    INFO("seed " << s);
    CHECK(bad == 0);
  }
}
