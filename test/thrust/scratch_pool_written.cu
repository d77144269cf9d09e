// Writes the memory of the Thrust-style calls' scratch pool once, before the first test case, as
// the device tests poison the temp storage they pass: any contents will do for the calls (their
// look-back records carry a launch epoch), and written bytes keep compute-sanitizer's initcheck
// to reports about real reads of unwritten memory. The pool keeps this memory between calls.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <tilewise/detail/thrust/scratch.cuh>

namespace {

/// Outside a test case doctest's checks do not apply: a failure here ends the run with a message.
void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "writing the scratch pool: %s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct scratch_pool_written : doctest::IReporter {
  explicit scratch_pool_written(doctest::ContextOptions const&) {}

  void test_run_start() override {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    cudaMemPool_t pool = nullptr;
    check(tilewise::detail::scratch_pools::get(dev, pool), "creating the pool");
    if (pool == nullptr) return;
    void* p                   = nullptr;
    std::uint64_t const bytes = tilewise::detail::scratch_pools::keep_bytes;
    check(cudaMallocFromPoolAsync(&p, bytes, pool, nullptr), "cudaMallocFromPoolAsync");
    check(cudaMemsetAsync(p, 0xA5, bytes, nullptr), "cudaMemsetAsync");
    check(cudaFreeAsync(p, nullptr), "cudaFreeAsync");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  void report_query(doctest::QueryData const&) override {}
  void test_run_end(doctest::TestRunStats const&) override {}
  void test_case_start(doctest::TestCaseData const&) override {}
  void test_case_reenter(doctest::TestCaseData const&) override {}
  void test_case_end(doctest::CurrentTestCaseStats const&) override {}
  void test_case_exception(doctest::TestCaseException const&) override {}
  void subcase_start(doctest::SubcaseSignature const&) override {}
  void subcase_end() override {}
  void log_assert(doctest::AssertData const&) override {}
  void log_message(doctest::MessageData const&) override {}
  void test_case_skipped(doctest::TestCaseData const&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("scratch_pool_written", 1, scratch_pool_written);
