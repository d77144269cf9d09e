// tile::match_any and tile::reduce_by_key against a host reference, with 1, 2, 5, 16 and 32
// distinct keys per tile, 32- and 64-bit keys (64-bit keys that differ only in the high word),
// every W and coalesced groups. With W < 32 several tiles share a hardware warp and hold the same
// keys: a lane must only ever match lanes of its own tile.
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <tilewise/tile/group_by.cuh>
#include <tilewise/tile/match.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int threads   = 256;
constexpr int blocks    = 32;
constexpr std::size_t n = std::size_t(threads) * blocks;

/// Keys drawn from `distinct` values; 64-bit keys differ only above bit 31.
template <class Key>
std::vector<Key> keys_with(unsigned distinct, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<unsigned> pick(0, distinct - 1);
  std::vector<Key> k(n);
  for (auto& x : k) {
    unsigned const id = pick(rng);
    if constexpr (sizeof(Key) == 8) {
      x = Key((std::uint64_t(id) + 1) << 32 | 0x1234u);
    } else {
      x = Key(id * 2654435761u);
    }
  }
  return k;
}

template <int W, class Key, class T>
__global__ void group_kernel(Key const* keys, T const* values, unsigned* masks, T* sums, unsigned* info) {
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  auto run            = [&](auto const& g) {
    masks[i]     = tilewise::tile::match_any(g, keys[i]);
    auto const r = tilewise::tile::reduce_by_key(g, keys[i], values[i], cuda::std::plus<>{});
    sums[i]      = r.value;
    info[i]      = r.count << 1 | unsigned(r.leader);
  };
  if constexpr (W == 0) {
    if (threadIdx.x % 3 != 1) run(cg::coalesced_threads());  // two lanes of three
  } else {
    run(cg::tiled_partition<W>(cg::this_thread_block()));
  }
}

template <int W, class Key, class T>
void check_group(unsigned distinct, std::uint64_t seed) {
  auto const keys   = keys_with<Key>(distinct, seed);
  auto const values = random_vector<T>(n, seed + 5);
  device_buffer<Key> d_keys(keys);
  device_buffer<T> d_values(values), d_sums(n);
  device_buffer<unsigned> d_masks(n), d_info(n);
  d_masks.poison();
  d_sums.poison();
  d_info.poison();
  group_kernel<W, Key, T><<<blocks, threads>>>(d_keys.get(), d_values.get(), d_masks.get(), d_sums.get(), d_info.get());
  TW_CHECK_LAUNCH();
  auto const masks = d_masks.download();
  auto const sums  = d_sums.download();
  auto const info  = d_info.download();

  std::size_t const group = W == 0 ? 32 : W;
  std::size_t bad = 0;
  for (std::size_t t = 0; t < n / group; ++t) {
    std::vector<std::size_t> lanes;  // members in rank order
    for (std::size_t l = 0; l < group; ++l)
      if (W != 0 || (t * group + l) % threads % 3 != 1) lanes.push_back(t * group + l);
    for (std::size_t r = 0; r < lanes.size(); ++r) {
      std::size_t const i = lanes[r];
      unsigned want_mask  = 0;
      std::vector<T> peer_values;
      std::size_t first = lanes.size();
      for (std::size_t q = 0; q < lanes.size(); ++q) {
        if (keys[lanes[q]] == keys[i]) {
          want_mask |= 1u << q;
          peer_values.push_back(values[lanes[q]]);
          first = std::min(first, q);
        }
      }
      auto const want_sum = fold(peer_values, 0, peer_values.size(), cuda::std::plus<>{});
      bad += masks[i] != want_mask;
      bad += !close(sums[i], want_sum, magnitude_sum(peer_values, 0, peer_values.size()));
      bad += info[i] != (unsigned(peer_values.size()) << 1 | unsigned(first == r));
    }
  }
  INFO("group W=" << W << " key " << sizeof(Key) * 8 << "-bit " << name_of<T>() << " distinct " << distinct
                  << " seed " << seed);
  CHECK(bad == 0);
}

template <int W>
void check_width() {
  for (int s = 1; s <= seeds(2); ++s) {
    for (unsigned distinct : {1u, 2u, 5u, 16u, 32u}) {
      check_group<W, std::uint32_t, int>(distinct, s);
      check_group<W, std::uint64_t, int>(distinct, s);
      check_group<W, std::int64_t, double>(distinct, s);
    }
    check_group<W, float, float>(5, s);  // a 4-byte key of another type (compared bitwise)
  }
}

}  // namespace

TEST_CASE("tile::match_any and tile::reduce_by_key") {
  check_width<1>();
  check_width<2>();
  check_width<4>();
  check_width<8>();
  check_width<16>();
  check_width<32>();
  check_width<0>();  // coalesced groups
}
