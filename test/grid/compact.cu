// grid::compact against CUB's stable selection (cub::DeviceSelect::Flagged): all kept, none,
// alternating, random 1 % / 50 % / 99 %; grids of 1, 3 and the largest co-resident number of
// blocks; block sizes 64..1024, W in {8, 16, 32}; int32 and a 16-byte struct; two rounds back to
// back on one workspace; the count on every thread; outputs poisoned first.
#include <cooperative_groups.h>

#include <tilewise/grid/compact.cuh>

#include "../support/select_data.cuh"
#include "grid_check.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int rounds = 2;

template <class T, unsigned B, unsigned W>
__global__ void __launch_bounds__(B) compact_kernel(T const* in, unsigned char const* flags, T* out, unsigned* counts,
                                                    std::size_t n, tilewise::grid::workspace ws) {
  using grid_compact = tilewise::grid::compact<B, W>;
  __shared__ typename grid_compact::temp_storage tmp;
  auto const grid     = cg::this_grid();
  std::size_t const i = grid.thread_rank();
  for (int k = 0; k < rounds; ++k) {
    counts[k * n + i] = grid_compact{tmp}(grid, flags[k * n + i] != 0, in[k * n + i], out + k * n, ws);
  }
}

template <class T, unsigned B, unsigned W>
void check_compact() {
  auto kernel = compact_kernel<T, B, W>;
  for (int blocks : grid_sizes(kernel, B)) {
    std::size_t const n = std::size_t(blocks) * B;
    for (int seed = 1; seed <= seeds(2); ++seed) {
      for (int pattern = 0; pattern < 6; pattern += (seeds(2) > 2 ? 1 : 2)) {
        auto const values = random_vector<T>(rounds * n, seed);
        std::vector<unsigned char> flags;
        for (int k = 0; k < rounds; ++k) {
          auto const f = keep_flags(keep_patterns[(pattern + k) % 6], n, seed * 7 + k);
          flags.insert(flags.end(), f.begin(), f.end());
        }
        device_buffer<T> d_in(values), d_out(rounds * n);
        device_buffer<unsigned char> d_flags(flags);
        device_buffer<unsigned> d_counts(rounds * n);
        d_out.poison();
        d_counts.poison();
        auto const ws = tilewise::grid::make_workspace<unsigned>(blocks);
        tilewise::launch_cooperative(kernel, tilewise::cooperative_grid{blocks}, dim3(B), 0, cudaStream_t{}, d_in.get(),
                                     d_flags.get(), d_out.get(), d_counts.get(), n, ws.get());
        TW_CHECK_LAUNCH();
        auto const out    = d_out.download();
        auto const counts = d_counts.download();
        std::size_t bad   = 0;
        for (int k = 0; k < rounds; ++k) {
          std::vector<T> const v(values.begin() + k * n, values.begin() + (k + 1) * n);
          std::vector<unsigned char> const f(flags.begin() + k * n, flags.begin() + (k + 1) * n);
          auto const want = cub_select(v, f);
          for (std::size_t i = 0; i < n; ++i) bad += counts[k * n + i] != want.size();
          for (std::size_t j = 0; j < want.size(); ++j) bad += !(out[k * n + j] == want[j]);
        }
        INFO("grid::compact<" << B << ", W " << W << "> " << name_of<T>() << " blocks " << blocks << " pattern "
                              << pattern << " seed " << seed);
        CHECK(bad == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("grid::compact matches CUB's stable selection") {
  check_compact<std::int32_t, 64, 32>();
  check_compact<std::int32_t, 256, 8>();
  check_compact<std::int32_t, 1024, 16>();
  check_compact<mat2, 256, 32>();
}
