// consumer_cuda: one kernel that sums 1..N with tilewise::tile::reduce on 32-wide tiles, and the
// same sum through the Thrust-style tilewise::reduce (the library's precompiled instantiation).
#include <cooperative_groups.h>

#include <cuda/std/functional>

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>

#include <cstdio>
#include <vector>

#include <tilewise/api.hpp>
#include <tilewise/thrust.cuh>
#include <tilewise/tile/reduce.cuh>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t const err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

constexpr int tile_width = 32;

__global__ void tile_sums(int const* in, int* out) {
  auto const tile = cg::tiled_partition<tile_width>(cg::this_thread_block());
  int const i     = blockIdx.x * blockDim.x + threadIdx.x;
  int const sum   = tilewise::tile::reduce(tile, in[i], cuda::std::plus<>{});
  if (tile.thread_rank() == 0) {
    out[i / tile_width] = sum;
  }
}

int main() {
  if (tilewise::cuda_device_count() == 0) {
    std::printf("consumer_cuda: no CUDA device found; built fine, nothing to run.\n");
    return 0;
  }
  constexpr int n = 4096, tiles = n / tile_width;
  std::vector<int> values(n), sums(tiles, -1);
  for (int k = 0; k < n; ++k) {
    values[k] = k + 1;
  }
  int *d_in, *d_out;
  CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_out, tiles * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_in, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, tiles * sizeof(int)));
  tile_sums<<<n / 256, 256>>>(d_in, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(sums.data(), d_out, tiles * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));

  long long total = 0;
  for (int t = 0; t < tiles; ++t) {
    total += sums[t];
  }
  long long const expected = 1LL * n * (n + 1) / 2;
  if (total != expected) {
    std::printf("consumer_cuda: FAILED, sum of 1..%d is %lld, expected %lld\n", n, total, expected);
    return 1;
  }
  thrust::device_vector<int> const d_values(values.begin(), values.end());
  long long const thrust_style = tilewise::reduce(thrust::cuda::par, d_values.begin(), d_values.end(), 0ll);
  int const typed              = tilewise::reduce(thrust::cuda::par, d_values.begin(), d_values.end());
  if (thrust_style != expected || typed != expected) {
    std::printf("consumer_cuda: FAILED, tilewise::reduce gave %lld / %d, expected %lld\n", thrust_style, typed, expected);
    return 1;
  }
  std::printf("consumer_cuda: sum of 1..%d = %lld (tile::reduce and tilewise::reduce), ok\n", n, total);
  return 0;
}
