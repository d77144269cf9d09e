// tile::histogram in shared memory (privatised per block, merged to global) and straight into
// global memory, against cub::DeviceHistogram::HistogramEven of the same samples, on uniform,
// single-bin and Zipf-skewed data (which exercise the plain, one-bin and match_any paths);
// weighted counts against a host reference; every W and coalesced groups.
#include <cooperative_groups.h>

#include <tilewise/tile/histogram.cuh>

#include "../support/cuda_test.cuh"
#include "../support/histogram_data.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int threads = 256;
constexpr int blocks  = 64;
constexpr std::size_t n = std::size_t(threads) * blocks * 4;  // 4 samples per thread
constexpr int bins      = 512;

using data = histogram_data;

std::vector<int> samples(data d, std::uint64_t seed) { return histogram_samples(d, n, bins, seed); }

/// W == 0: coalesced groups of the lanes whose sample index is not a multiple of 5.
template <int W, bool Shared>
__global__ void histogram_kernel(int const* s, unsigned* global_bins, unsigned* skipped) {
  __shared__ unsigned local[bins];
  auto const block = cg::this_thread_block();
  if constexpr (Shared) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    block.sync();
  }
  unsigned* const target = Shared ? local : global_bins;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    if constexpr (W == 0) {
      if (i % 5 != 0) {
        tilewise::tile::histogram(cg::coalesced_threads(), target, s[i]);
      } else {
        atomicAdd(skipped, 1u);
        atomicAdd(&target[s[i]], 1u);  // counted by hand so the totals still match CUB's
      }
    } else {
      tilewise::tile::histogram(cg::tiled_partition<W>(block), target, s[i]);
    }
  }
  if constexpr (Shared) {
    block.sync();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
      if (local[b]) atomicAdd(&global_bins[b], local[b]);
  }
}

template <int W, bool Shared>
void check_histogram(data d, std::uint64_t seed) {
  auto const s    = samples(d, seed);
  auto const want = cub_histogram(s, bins);
  device_buffer<int> d_s(s);
  device_buffer<unsigned> d_h(std::vector<unsigned>(bins, 0)), d_skipped(std::vector<unsigned>{0});
  histogram_kernel<W, Shared><<<blocks, threads>>>(d_s.get(), d_h.get(), d_skipped.get());
  TW_CHECK_LAUNCH();
  auto const got = d_h.download();
  INFO("histogram W=" << W << (Shared ? " shared" : " global") << " data " << int(d) << " seed " << seed);
  CHECK(got == want);
  if (W == 0) CHECK(d_skipped.download()[0] == n / 5 + (n % 5 != 0));
}

/// Weighted counts (w = sample % 3 + 1) into float bins, against a host reference.
template <int W>
__global__ void weighted_kernel(int const* s, float* global_bins) {
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  tilewise::tile::histogram(cg::tiled_partition<W>(cg::this_thread_block()),
                            cuda::std::span<float>(global_bins, bins), s[i], float(s[i] % 3 + 1));
}

template <int W>
void check_widths_for() {
  for (int seed = 1; seed <= seeds(2); ++seed) {
    for (data d : all_histogram_data) {
      check_histogram<W, true>(d, seed);
      check_histogram<W, false>(d, seed);
    }
    auto const s = samples(data::zipf, seed);
    std::vector<float> want(bins, 0.0f);
    std::size_t const m = std::size_t(threads) * blocks;
    for (std::size_t i = 0; i < m; ++i) want[s[i]] += float(s[i] % 3 + 1);  // exact: small integers
    device_buffer<int> d_s(s);
    device_buffer<float> d_h(std::vector<float>(bins, 0.0f));
    weighted_kernel<W><<<blocks, threads>>>(d_s.get(), d_h.get());
    TW_CHECK_LAUNCH();
    INFO("weighted histogram W=" << W << " seed " << seed);
    CHECK(d_h.download() == want);
  }
}

}  // namespace

TEST_CASE("tile::histogram matches cub::DeviceHistogram::HistogramEven") {
  check_widths_for<1>();
  check_widths_for<2>();
  check_widths_for<4>();
  check_widths_for<8>();
  check_widths_for<16>();
  check_widths_for<32>();
}

TEST_CASE("tile::histogram in divergent code (coalesced groups)") {
  for (int seed = 1; seed <= seeds(2); ++seed) {
    for (data d : all_histogram_data) {
      check_histogram<0, true>(d, seed);
      check_histogram<0, false>(d, seed);
    }
  }
}
