// One rank of the one-process-per-GPU test (started by test_dist, one process per GPU):
//   test_dist_process RANK RANKS UNIQUE_ID_HEX N
// joins the communicator with ncclCommInitRank, runs dist::exclusive_scan, reduce and
// histogram_even on its shard and checks them against CUB on the whole input (which every rank
// can generate), then runs dist::group_by and prints "rows R sum S" for the parent to add up.
// Exit status 0 when every check passed. Not a doctest program: the test support it shares with
// test_dist compiles without doctest's registrations.
#define DOCTEST_CONFIG_DISABLE
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <nccl.h>

#include <cuda/std/functional>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include <tilewise/dist.cuh>

#include "process_data.cuh"

namespace {

int failures = 0;

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::printf("FAIL %s: %s\n", what, cudaGetErrorName(e));
    std::exit(1);
  }
}

template <class T>
T* device_alloc(long long n) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::size_t(n > 0 ? n : 1) * sizeof(T)), "cudaMalloc");
  return static_cast<T*>(p);
}

template <class T>
std::vector<T> download(T const* p, long long n) {
  std::vector<T> h(static_cast<std::size_t>(n));
  check(cudaMemcpy(h.data(), p, std::size_t(n) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return h;
}

template <class T>
void expect_equal(std::vector<T> const& got, std::vector<T> const& want, char const* what) {
  if (got != want) {
    std::printf("FAIL %s differs from CUB\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || std::strlen(argv[3]) != 2 * sizeof(ncclUniqueId)) {
    std::printf("usage: test_dist_process RANK RANKS UNIQUE_ID_HEX N\n");
    return 2;
  }
  int const rank    = std::atoi(argv[1]);
  int const ranks   = std::atoi(argv[2]);
  long long const n = std::atoll(argv[4]);
  ncclUniqueId id;
  for (std::size_t b = 0; b < sizeof id; ++b) {
    unsigned v = 0;
    std::sscanf(argv[3] + 2 * b, "%2x", &v);
    reinterpret_cast<unsigned char*>(&id)[b] = static_cast<unsigned char>(v);
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off
  int gpus = 0;
  check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  check(cudaSetDevice(rank % gpus), "cudaSetDevice");
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, ranks, id, rank) != ncclSuccess) {
    std::printf("FAIL ncclCommInitRank\n");
    return 1;
  }

  // The whole input (every rank's shard), this rank's shard inside it, and CUB on the whole.
  long long const all = n * ranks;
  auto* keys          = device_alloc<std::int32_t>(all);
  auto* values        = device_alloc<std::int64_t>(all);
  for (int r = 0; r < ranks; ++r) {
    dist_process::shard_kernel<<<1024, 256>>>(r, n, keys + r * n, values + r * n);
  }
  check(cudaGetLastError(), "shard_kernel");
  std::int32_t const* my_keys   = keys + rank * n;
  std::int64_t const* my_values = values + rank * n;
  auto* ref_scan                = device_alloc<std::int64_t>(all);
  auto* ref_sum                 = device_alloc<std::int64_t>(1);
  auto* ref_hist                = device_alloc<unsigned>(dist_process::key_range);
  std::size_t b1 = 0, b2 = 0, b3 = 0;
  auto const plus = cuda::std::plus<>{};
  check(cub::DeviceScan::ExclusiveScan(nullptr, b1, values, ref_scan, plus, std::int64_t(3), all), "cub");
  check(cub::DeviceReduce::Reduce(nullptr, b2, values, ref_sum, all, plus, std::int64_t(3)), "cub");
  check(cub::DeviceHistogram::HistogramEven(nullptr, b3, keys, ref_hist, dist_process::key_range + 1, 0,
                                            dist_process::key_range, all),
        "cub");
  void* cub_temp = device_alloc<unsigned char>(static_cast<long long>(std::max({b1, b2, b3})));
  check(cub::DeviceScan::ExclusiveScan(cub_temp, b1, values, ref_scan, plus, std::int64_t(3), all), "cub");
  check(cub::DeviceReduce::Reduce(cub_temp, b2, values, ref_sum, all, plus, std::int64_t(3)), "cub");
  check(cub::DeviceHistogram::HistogramEven(cub_temp, b3, keys, ref_hist, dist_process::key_range + 1, 0,
                                            dist_process::key_range, all),
        "cub");

  // The distributed calls on this rank's shard.
  auto* scan       = device_alloc<std::int64_t>(n);
  auto* sum        = device_alloc<std::int64_t>(1);
  auto* hist       = device_alloc<unsigned>(dist_process::key_range);
  auto* group_keys = device_alloc<std::int32_t>(all);
  auto* group_sums = device_alloc<std::int64_t>(all);
  auto* groups     = device_alloc<long long>(1);
  std::size_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
  check(tilewise::dist::exclusive_scan(nullptr, t1, my_values, scan, n, plus, std::int64_t(3), comm), "query");
  check(tilewise::dist::reduce(nullptr, t2, my_values, sum, n, plus, std::int64_t(3), comm), "query");
  check(tilewise::dist::histogram_even(nullptr, t3, my_keys, hist, dist_process::key_range, 0, dist_process::key_range,
                                       n, comm),
        "query");
  check(tilewise::dist::group_by(nullptr, t4, my_keys, my_values, group_keys, group_sums, groups, n, all, plus, comm),
        "query");
  void* temp = device_alloc<unsigned char>(static_cast<long long>(std::max({t1, t2, t3, t4})));
  check(tilewise::dist::exclusive_scan(temp, t1, my_values, scan, n, plus, std::int64_t(3), comm), "exclusive_scan");
  check(tilewise::dist::reduce(temp, t2, my_values, sum, n, plus, std::int64_t(3), comm), "reduce");
  check(tilewise::dist::histogram_even(temp, t3, my_keys, hist, dist_process::key_range, 0, dist_process::key_range, n,
                                       comm),
        "histogram_even");
  check(tilewise::dist::group_by(temp, t4, my_keys, my_values, group_keys, group_sums, groups, n, all, plus, comm),
        "group_by");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  expect_equal(download(scan, n), download(ref_scan + rank * n, n), "exclusive_scan");
  expect_equal(download(sum, 1), download(ref_sum, 1), "reduce");
  expect_equal(download(hist, dist_process::key_range), download(ref_hist, dist_process::key_range), "histogram_even");
  long long const rows = download(groups, 1)[0];
  long long total      = 0;
  for (std::int64_t v : download(group_sums, rows)) total += v;
  std::printf("rows %lld sum %lld\n", rows, total);
  ncclCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}
