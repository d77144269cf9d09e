// main() of every GPU test executable: exits 77 (CTest SKIP_RETURN_CODE) with one line when no
// CUDA device is usable, so CI machines without a GPU skip instead of failing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  int count               = 0;
  cudaError_t const error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", error != cudaSuccess ? cudaGetErrorString(error) : "0 devices");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
