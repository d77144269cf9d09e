// tile::atomic_add against the semantics of one plain atomicAdd per lane: for every address, the
// groups of lanes that added to it (one group per tile) must have received back-to-back ranges
// [base, base + group total) starting at the initial value, each lane the base plus the values of
// the lower ranks of its group, and memory must end at the exact sum. All lanes on one address,
// all distinct, a few random addresses per tile, one address per warp; int32, uint64, float
// (float within 32 * eps * sum|v|); every W and coalesced groups.
#include <cooperative_groups.h>

#include <algorithm>
#include <map>

#include <tilewise/tile/atomic.cuh>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

namespace {

constexpr int threads   = 256;
constexpr int blocks    = 40;
constexpr std::size_t n = std::size_t(threads) * blocks;

enum class spread { one_address, distinct, few_per_tile, per_warp };

std::vector<unsigned> address_of(spread s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<unsigned> few(0, 3);
  std::vector<unsigned> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (s) {
      case spread::one_address: a[i] = 0; break;
      case spread::distinct: a[i] = unsigned(i); break;
      case spread::few_per_tile: a[i] = few(rng); break;
      case spread::per_warp: a[i] = unsigned(i / 32); break;
    }
  }
  return a;
}

template <class T>
std::vector<T> small_values(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(1, 1000);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(rng)) / (std::is_floating_point_v<T> ? T(8) : T(1));
  return v;
}

template <int W, class T>
__global__ void atomic_kernel(unsigned const* address, T const* value, T* memory, T* returned) {
  std::size_t const i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (W == 0) {  // coalesced: odd lanes only
    if (threadIdx.x % 2) {
      returned[i] = tilewise::tile::atomic_add(cg::coalesced_threads(), memory + address[i], value[i]);
    }
  } else {
    auto const tile = cg::tiled_partition<W>(cg::this_thread_block());
    returned[i]     = tilewise::tile::atomic_add(tile, memory + address[i], value[i]);
  }
}

/// W == 0 means coalesced groups of the odd lanes of each warp.
template <int W, class T>
void check_atomic(spread s, std::uint64_t seed) {
  auto const address = address_of(s, seed);
  auto const value   = small_values<T>(seed + 1);
  std::vector<T> initial(n);
  for (std::size_t k = 0; k < n; ++k) initial[k] = T(k % 7 + 1);

  device_buffer<unsigned> d_address(address);
  device_buffer<T> d_value(value), d_memory(initial), d_returned(n);
  d_returned.poison();
  atomic_kernel<W, T><<<blocks, threads>>>(d_address.get(), d_value.get(), d_memory.get(), d_returned.get());
  TW_CHECK_LAUNCH();
  auto const memory   = d_memory.download();
  auto const returned = d_returned.download();

  struct group_range {
    T base, total;
    double scale;
  };
  std::map<unsigned, std::vector<group_range>> groups;  // address -> one entry per (tile, address)
  unsigned const group_size = W == 0 ? 32 : W;
  std::size_t bad = 0;
  double const eps = std::is_floating_point_v<T> ? 32 * epsilon<T>() : 0;
  for (std::size_t t = 0; t < n / group_size; ++t) {
    std::map<unsigned, std::vector<std::size_t>> lanes;  // rank order within the group
    for (std::size_t l = 0; l < group_size; ++l) {
      std::size_t const i = t * group_size + l;
      if (W == 0 && l % 2 == 0) continue;
      lanes[address[i]].push_back(i);
    }
    for (auto const& [a, members] : lanes) {
      T const base = returned[members[0]];
      double prefix = 0, scale = std::fabs(double(base));
      for (std::size_t i : members) {
        double const want = double(base) + prefix;
        if (std::fabs(double(returned[i]) - want) > eps * (scale + prefix)) ++bad;
        prefix += double(value[i]);
      }
      groups[a].push_back({base, T(prefix), scale + prefix});
    }
  }
  // Per address: the ranges chain from the initial value to the final memory value.
  for (auto& [a, list] : groups) {
    std::sort(list.begin(), list.end(), [](auto const& x, auto const& y) { return x.base < y.base; });
    double expect = double(initial[a]);
    for (auto const& g : list) {
      if (std::fabs(double(g.base) - expect) > eps * g.scale) ++bad;
      expect = double(g.base) + double(g.total);
    }
    if (std::fabs(double(memory[a]) - expect) > eps * (expect + 1)) ++bad;
  }
  INFO("atomic_add W=" << W << " " << name_of<T>() << " spread " << int(s) << " seed " << seed);
  CHECK(bad == 0);
}

template <int W, class T>
void check_all_spreads() {
  for (int seed = 1; seed <= seeds(2); ++seed) {
    for (spread s : {spread::one_address, spread::distinct, spread::few_per_tile, spread::per_warp}) {
      check_atomic<W, T>(s, seed);
    }
  }
}

template <class T>
void check_type() {
  check_all_spreads<1, T>();
  check_all_spreads<2, T>();
  check_all_spreads<4, T>();
  check_all_spreads<8, T>();
  check_all_spreads<16, T>();
  check_all_spreads<32, T>();
  check_all_spreads<0, T>();
}

}  // namespace

TEST_CASE("tile::atomic_add int32") { check_type<int>(); }
TEST_CASE("tile::atomic_add uint64") { check_type<unsigned long long>(); }
TEST_CASE("tile::atomic_add int64") { check_type<long long>(); }
TEST_CASE("tile::atomic_add float") { check_type<float>(); }
