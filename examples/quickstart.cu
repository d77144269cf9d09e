// quickstart: tilewise's tile primitives next to CUB's warp primitives, on the same values.
//
// For W in {8, 32} one kernel splits each block into cg::thread_block_tile<W> and computes, per
// tile, a reduction and both scans twice: with tilewise::tile::* and with cub::WarpReduce /
// cub::WarpScan (logical warp W). The host compares them: int32 exactly, float within a relative
// tolerance (the two libraries add floats in different orders).
#include <cooperative_groups.h>

#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/std/functional>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#include <tilewise/api.hpp>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t const err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

constexpr int block_size = 256;
constexpr int num_items  = 1 << 20;  // a multiple of block_size
enum primitive { reduce_p, inclusive_scan_p, exclusive_scan_p, num_primitives };
char const* const primitive_names[] = {"reduce", "inclusive_scan", "exclusive_scan"};

template <class T>
struct results {  // one value per thread and primitive, from each library
  T* ours[num_primitives];
  T* cub[num_primitives];
};

template <int W, class T>
__global__ void tile_vs_cub(T const* in, results<T> out, T init) {
  using warp_reduce = cub::WarpReduce<T, W>;
  using warp_scan   = cub::WarpScan<T, W>;
  __shared__ typename warp_reduce::TempStorage reduce_storage[block_size / W];
  __shared__ typename warp_scan::TempStorage scan_storage[block_size / W];

  auto const tile = cg::tiled_partition<W>(cg::this_thread_block());
  int const warp  = threadIdx.x / W;
  size_t const i  = blockIdx.x * size_t{block_size} + threadIdx.x;
  T const v       = in[i];
  cuda::std::plus<> const plus{};

  // tilewise: the tile is the first argument; every lane gets its result.
  out.ours[reduce_p][i]         = tilewise::tile::reduce(tile, v, plus);
  out.ours[inclusive_scan_p][i] = tilewise::tile::inclusive_scan(tile, v, plus);
  out.ours[exclusive_scan_p][i] = tilewise::tile::exclusive_scan(tile, v, plus, init);

  // CUB: the same values; WarpReduce's result is valid in lane 0 only.
  T incl, excl;
  out.cub[reduce_p][i] = warp_reduce(reduce_storage[warp]).Reduce(v, plus);
  warp_scan(scan_storage[warp]).InclusiveScan(v, incl, plus);
  tile.sync();  // CUB asks for a barrier before its temp storage is reused
  warp_scan(scan_storage[warp]).ExclusiveScan(v, excl, init, plus);
  out.cub[inclusive_scan_p][i] = incl;
  out.cub[exclusive_scan_p][i] = excl;
}

template <class T>
bool agree(T a, T b, double scale) {
  if constexpr (std::is_integral_v<T>) {
    return a == b;
  } else {
    return std::abs(double(a) - double(b)) <= 1e-5 * scale;
  }
}

/// Runs the kernel for one (T, W), prints one table row per primitive, returns the mismatches.
template <int W, class T>
size_t check(char const* type_name, std::vector<T> const& input, T init) {
  size_t const bytes = input.size() * sizeof(T);
  T* d_in;
  results<T> d_out;
  CUDA_CHECK(cudaMalloc(&d_in, bytes));
  CUDA_CHECK(cudaMemcpy(d_in, input.data(), bytes, cudaMemcpyHostToDevice));
  for (int p = 0; p < num_primitives; ++p) {
    for (T** ptr : {&d_out.ours[p], &d_out.cub[p]}) {
      CUDA_CHECK(cudaMalloc(ptr, bytes));
      CUDA_CHECK(cudaMemset(*ptr, 0xFF, bytes));  // poison: an unwritten output cannot pass
    }
  }
  tile_vs_cub<W><<<num_items / block_size, block_size>>>(d_in, d_out, init);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());

  size_t const tiles = input.size() / W;
  size_t total       = 0;
  std::vector<T> ours(input.size()), theirs(input.size());
  for (int p = 0; p < num_primitives; ++p) {
    CUDA_CHECK(cudaMemcpy(ours.data(), d_out.ours[p], bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(theirs.data(), d_out.cub[p], bytes, cudaMemcpyDeviceToHost));
    size_t mismatches = 0;
    for (size_t t = 0; t < tiles; ++t) {
      double scale = std::abs(double(init));  // sum |x| over the tile (and the scan's init)
      for (size_t k = t * W; k < (t + 1) * W; ++k) {
        scale += std::abs(double(input[k]));
      }
      bool ok = true;
      for (size_t k = t * W; k < (t + 1) * W; ++k) {  // reduce: every lane against CUB's lane 0
        ok = ok && agree(ours[k], theirs[p == reduce_p ? t * W : k], scale);
      }
      mismatches += !ok;
    }
    std::printf("| %-14s | %-5s | %2d | %7zu | %10zu |\n", primitive_names[p], type_name, W, tiles, mismatches);
    total += mismatches;
    CUDA_CHECK(cudaFree(d_out.ours[p]));
    CUDA_CHECK(cudaFree(d_out.cub[p]));
  }
  CUDA_CHECK(cudaFree(d_in));
  return total;
}

int main() {
  if (tilewise::cuda_device_count() == 0) {
    std::printf("quickstart: no CUDA device found; built fine, nothing to run.\n");
    return 0;
  }

  std::mt19937 rng(2024);  // fixed seed: the same input on every run
  std::uniform_int_distribution<int> int_dist(-1000, 1000);
  std::uniform_real_distribution<float> float_dist(-1.0f, 1.0f);
  std::vector<int> ints(num_items);
  std::vector<float> floats(num_items);
  for (int k = 0; k < num_items; ++k) {
    ints[k]   = int_dist(rng);
    floats[k] = float_dist(rng);
  }

  std::printf("| primitive      | type  |  W |   tiles | mismatches |\n");
  std::printf("|----------------|-------|----|---------|------------|\n");
  size_t failed = 0;
  failed += check<8>("int32", ints, 7);
  failed += check<32>("int32", ints, 7);
  failed += check<8>("float", floats, 0.5f);
  failed += check<32>("float", floats, 0.5f);

  int const checks = 4 * num_primitives;
  if (failed != 0) {
    std::printf("quickstart: FAILED, %zu tiles disagree with CUB\n", failed);
    return 1;
  }
  std::printf("quickstart: all %d checks passed\n", checks);
  return 0;
}
