// The shards of the one-process-per-GPU test: pair i of rank r, the same in every process.
#pragma once

#include <cstdint>

#include "../support/device_data.cuh"

namespace dist_process {

/// Keys in [0, 5000) (a histogram over them, and 5000 groups), values around 0.
__global__ void shard_kernel(int rank, long long n, std::int32_t* keys, std::int64_t* values) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const x = tw_test::mix64((std::uint64_t(rank) << 40) ^ std::uint64_t(i));
    keys[i]               = std::int32_t(x % 5000);
    values[i]             = std::int64_t(x >> 40) - (1ll << 23);
  }
}

constexpr int key_range = 5000;

}  // namespace dist_process
