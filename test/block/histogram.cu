// block::histogram (privatised in shared memory, merged into a global histogram) against
// cub::DeviceHistogram::HistogramEven on uniform, single-bin and Zipf-skewed samples, for block
// sizes 64 … 1024, W in {8, 32}, 256 and 4096 bins; racecheck and synccheck run it too.
#include <cooperative_groups.h>

#include <tilewise/block/histogram.cuh>

#include "../support/cuda_test.cuh"
#include "../support/histogram_data.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr std::size_t n = std::size_t(1) << 18;

template <unsigned Bins, unsigned BlockSize, unsigned W>
__global__ void block_histogram_kernel(int const* s, unsigned* global_bins) {
  using histogram = tilewise::block::histogram<unsigned, Bins, BlockSize, W>;
  __shared__ typename histogram::temp_storage storage;
  auto const block = cg::this_thread_block();
  histogram h(storage);
  h.init(block);
  std::size_t const stride = std::size_t(gridDim.x) * BlockSize;
  for (std::size_t first = std::size_t(blockIdx.x) * BlockSize; first < n; first += stride) {
    std::size_t const i = first + threadIdx.x;  // whole tiles call add: past the end adds 0 to bin 0
    bool const in_range = i < n;
    h.add(block, in_range ? s[i] : 0, in_range ? 1u : 0u);
  }
  h.merge(block, global_bins);
}

template <unsigned Bins, unsigned BlockSize, unsigned W>
void check_block_histogram() {
  for (int seed = 1; seed <= seeds(2); ++seed) {
    for (auto d : all_histogram_data) {
      auto const s    = histogram_samples(d, n, int(Bins), seed);
      auto const want = cub_histogram(s, int(Bins));
      device_buffer<int> d_s(s);
      device_buffer<unsigned> d_h(std::vector<unsigned>(Bins, 0));
      block_histogram_kernel<Bins, BlockSize, W><<<96, BlockSize>>>(d_s.get(), d_h.get());
      TW_CHECK_LAUNCH();
      INFO("block::histogram<" << Bins << " bins, block " << BlockSize << ", W " << W << "> data " << int(d)
                               << " seed " << seed);
      CHECK(d_h.download() == want);
    }
  }
}

}  // namespace

TEST_CASE("block::histogram matches cub::DeviceHistogram::HistogramEven") {
  check_block_histogram<256, 64, 32>();
  check_block_histogram<256, 96, 32>();
  check_block_histogram<256, 256, 8>();
  check_block_histogram<4096, 256, 32>();
  check_block_histogram<4096, 1024, 32>();
  check_block_histogram<256, 1024, 8>();
}
