// block::compact against CUB's stable selection (cub::DeviceSelect::Flagged) of each block's
// segment: all kept, none kept, alternating, random 1 % / 50 % / 99 %; block sizes 32 … 1024,
// W in {8, 32}; three calls back to back on one temp_storage.
#include <cooperative_groups.h>

#include <tilewise/block/compact.cuh>

#include "../support/cuda_test.cuh"
#include "../support/select_data.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int blocks = 24;

/// Three rounds back to back: round k compacts the values of flags[k] into out + k * n.
template <unsigned BlockSize, unsigned W>
__global__ void compact_kernel(int const* in, unsigned char const* flags, int* out, unsigned* counts, std::size_t n) {
  using block_compact = tilewise::block::compact<BlockSize, W>;
  __shared__ typename block_compact::temp_storage storage;
  auto const block    = cg::this_thread_block();
  std::size_t const b = std::size_t(blockIdx.x) * BlockSize;
  for (int k = 0; k < 3; ++k) {
    unsigned const c = block_compact{storage}(block, flags[k * n + b + threadIdx.x] != 0, in[b + threadIdx.x],
                                              out + k * n + b);
    counts[k * n + b + threadIdx.x] = c;
  }
}

template <unsigned BlockSize, unsigned W>
void check_block_compact() {
  std::size_t const n = std::size_t(BlockSize) * blocks;
  for (int seed = 1; seed <= seeds(2); ++seed) {
    for (int pattern = 0; pattern < 6; ++pattern) {
      auto const values = random_vector<int>(n, seed);
      std::vector<unsigned char> flags;
      for (int k = 0; k < 3; ++k) {
        auto const f = keep_flags(keep_patterns[(pattern + k) % 6], n, seed * 7 + k);
        flags.insert(flags.end(), f.begin(), f.end());
      }
      device_buffer<int> d_in(values), d_out(3 * n);
      device_buffer<unsigned char> d_flags(flags);
      device_buffer<unsigned> d_counts(3 * n);
      d_out.poison();
      d_counts.poison();
      compact_kernel<BlockSize, W><<<blocks, BlockSize>>>(d_in.get(), d_flags.get(), d_out.get(), d_counts.get(), n);
      TW_CHECK_LAUNCH();
      auto const out    = d_out.download();
      auto const counts = d_counts.download();

      // The oracle: CUB's stable selection of the whole round, cut into the blocks' segments.
      std::size_t bad = 0;
      for (int k = 0; k < 3; ++k) {
        std::vector<unsigned char> const f(flags.begin() + k * n, flags.begin() + (k + 1) * n);
        auto const want    = cub_select(values, f);
        std::size_t offset = 0;
        for (int blk = 0; blk < blocks; ++blk) {
          std::size_t const b = std::size_t(blk) * BlockSize;
          unsigned count      = 0;
          for (unsigned t = 0; t < BlockSize; ++t) count += f[b + t];
          for (unsigned t = 0; t < BlockSize; ++t) bad += counts[k * n + b + t] != count;
          for (unsigned j = 0; j < count; ++j) bad += offset + j >= want.size() || out[k * n + b + j] != want[offset + j];
          offset += count;
        }
        bad += offset != want.size();
      }
      INFO("block::compact<" << BlockSize << ", W " << W << "> pattern " << pattern << " seed " << seed);
      CHECK(bad == 0);
    }
  }
}

}  // namespace

TEST_CASE("block::compact matches CUB's stable selection") {
  check_block_compact<32, 32>();
  check_block_compact<96, 32>();
  check_block_compact<256, 32>();
  check_block_compact<256, 8>();
  check_block_compact<1024, 32>();
}
