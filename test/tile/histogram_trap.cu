// Built without NDEBUG: a bin index outside a span-sized histogram traps (device assert), and so
// does a negative index with the pointer overload. A device assert leaves the CUDA context
// unusable, so every case runs in a fresh process (this executable re-run with --case N).
// Own main (no doctest): exit 0 when every case behaves, 1 otherwise, 77 without a GPU. Not run
// under compute-sanitizer, which reports the assert as the error it is.
#include <cooperative_groups.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <tilewise/api.hpp>
#include <tilewise/tile/histogram.cuh>

#ifdef NDEBUG
#  error "this test checks debug-build traps: compile it without NDEBUG"
#endif

namespace cg = cooperative_groups;

namespace {

__global__ void span_kernel(unsigned* bins, int bin) {
  tilewise::tile::histogram(cg::tiled_partition<32>(cg::this_thread_block()), cuda::std::span<unsigned>(bins, 16),
                            threadIdx.x == 5 ? bin : 0);
}

__global__ void pointer_kernel(unsigned* bins, int bin) {
  tilewise::tile::histogram(cg::tiled_partition<8>(cg::this_thread_block()), bins, threadIdx.x == 3 ? bin : 1);
}

struct test_case {
  char const* name;
  void (*kernel)(unsigned*, int);
  int bin;
  bool traps;
};
test_case const cases[] = {
  {"span, last bin", span_kernel, 15, false},
  {"span, one past the end", span_kernel, 16, true},
  {"pointer, bin 0", pointer_kernel, 0, false},
  {"pointer, negative bin", pointer_kernel, -1, true},
};

/// Child: 0 = ran cleanly, 1 = device assert, 2 = any other error.
int run_case(test_case const& c) {
  unsigned* bins = nullptr;
  if (cudaMalloc(&bins, 64 * sizeof(unsigned)) != cudaSuccess) return 2;
  if (cudaMemset(bins, 0, 64 * sizeof(unsigned)) != cudaSuccess) return 2;
  c.kernel<<<1, 32>>>(bins, c.bin);
  cudaError_t const e = cudaDeviceSynchronize();
  return e == cudaSuccess ? 0 : e == cudaErrorAssert ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--case") == 0) {
    return run_case(cases[std::atoi(argv[2])]);
  }
  if (tilewise::cuda_device_count() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  int failures = 0;
  for (int k = 0; k < int(sizeof(cases) / sizeof(cases[0])); ++k) {
    pid_t const pid = fork();
    if (pid == 0) {
      char index[16];
      std::snprintf(index, sizeof index, "%d", k);
      execl("/proc/self/exe", argv[0], "--case", index, static_cast<char*>(nullptr));
      _exit(3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int const code  = WIFEXITED(status) ? WEXITSTATUS(status) : 4;
    bool const pass = code == (cases[k].traps ? 1 : 0);
    std::printf("%-28s %s (child exit %d)\n", cases[k].name, pass ? "ok" : "FAILED", code);
    failures += !pass;
  }
  std::printf("%d passed, %d failed\n", int(sizeof(cases) / sizeof(cases[0])) - failures, failures);
  return failures == 0 ? 0 : 1;
}
