// Links tilewise::dist as a user would: a size query on a communicator of this process's GPUs
// (nothing to check here: the consumer test only builds this program; test_dist runs the calls).
#include <cuda/std/functional>

#include <cstdio>

#include <tilewise/dist.cuh>

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) return 77;
  ncclComm_t comm = nullptr;
  int const dev   = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) return 1;
  std::size_t bytes = 0;
  cudaError_t const e =
    tilewise::dist::reduce(nullptr, bytes, static_cast<int const*>(nullptr), static_cast<int*>(nullptr), 1 << 20,
                           cuda::std::plus<>{}, 0, comm);
  std::printf("dist::reduce temp for 2^20 int32 on one rank: %zu bytes (%s)\n", bytes, cudaGetErrorName(e));
  ncclCommDestroy(comm);
  return e == cudaSuccess ? 0 : 1;
}
