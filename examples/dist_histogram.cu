// dist_histogram: request records sharded over every GPU of this host, one rank per GPU (one
// thread each, a communicator from ncclCommInitAll): a latency histogram of all records on every
// rank (dist::histogram_even) and bytes served per endpoint, each endpoint on one rank
// (dist::group_by). Checks that the histogram counts every record and that the per-endpoint
// totals of all ranks add up to the bytes of all records; exits 77 without a GPU.
#include <nccl.h>

#include <cuda/std/functional>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <tilewise/dist.cuh>

#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    cudaError_t const err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

constexpr long long records_per_rank = 1 << 24;
constexpr int latency_bins           = 50;  // 0-500 ms in 10 ms bins
constexpr int endpoints              = 10000;

/// Record i of rank r: a latency in [0, 600) ms (some beyond the histogram's range), an endpoint,
/// a response size.
__global__ void make_records(int rank, long long n, float* latency_ms, std::int32_t* endpoint, std::int64_t* bytes) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned long long x = (static_cast<unsigned long long>(rank) << 40) ^ static_cast<unsigned long long>(i);
    x                    = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull;
    x                    = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ull;
    latency_ms[i]        = float(x % 60000) / 100.0f;
    endpoint[i]          = std::int32_t((x >> 20) % endpoints);
    bytes[i]             = std::int64_t((x >> 40) % 100000);
  }
}

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("dist_histogram: no CUDA device, skipping\n");
    return 77;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(gpus));
  if (ncclCommInitAll(comms.data(), gpus, nullptr) != ncclSuccess) {
    std::fprintf(stderr, "dist_histogram: ncclCommInitAll failed\n");
    return 1;
  }
  long long const all = records_per_rank * gpus;
  std::vector<std::vector<unsigned long long>> hists(static_cast<std::size_t>(gpus));
  std::vector<long long> groups(static_cast<std::size_t>(gpus));
  std::vector<long long> bytes_total(static_cast<std::size_t>(gpus));
  std::vector<std::thread> ranks;
  for (int r = 0; r < gpus; ++r) {
    ranks.emplace_back([&, r] {
      CUDA_CHECK(cudaSetDevice(r));
      cudaStream_t s;
      CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      long long const n = records_per_rank;
      float* latency;
      std::int32_t *endpoint, *owned_endpoints;
      std::int64_t *bytes, *owned_bytes;
      long long* owned;
      unsigned long long* hist;
      CUDA_CHECK(cudaMalloc(&latency, n * sizeof(float)));
      CUDA_CHECK(cudaMalloc(&endpoint, n * sizeof(std::int32_t)));
      CUDA_CHECK(cudaMalloc(&bytes, n * sizeof(std::int64_t)));
      CUDA_CHECK(cudaMalloc(&owned_endpoints, all * sizeof(std::int32_t)));
      CUDA_CHECK(cudaMalloc(&owned_bytes, all * sizeof(std::int64_t)));
      CUDA_CHECK(cudaMalloc(&owned, sizeof(long long)));
      CUDA_CHECK(cudaMalloc(&hist, latency_bins * sizeof(unsigned long long)));
      make_records<<<1024, 256, 0, s>>>(r, n, latency, endpoint, bytes);
      CUDA_CHECK(cudaGetLastError());
      ncclComm_t const comm = comms[static_cast<std::size_t>(r)];

      std::size_t hist_bytes = 0, group_bytes = 0;
      CUDA_CHECK(tilewise::dist::histogram_even(nullptr, hist_bytes, latency, hist, latency_bins, 0.0f, 500.0f, n, comm, s));
      CUDA_CHECK(tilewise::dist::group_by(nullptr, group_bytes, endpoint, bytes, owned_endpoints, owned_bytes, owned, n,
                                          all, cuda::std::plus<>{}, comm, s));
      void* temp;
      CUDA_CHECK(cudaMalloc(&temp, std::max(hist_bytes, group_bytes)));
      CUDA_CHECK(tilewise::dist::histogram_even(temp, hist_bytes, latency, hist, latency_bins, 0.0f, 500.0f, n, comm, s));
      CUDA_CHECK(tilewise::dist::group_by(temp, group_bytes, endpoint, bytes, owned_endpoints, owned_bytes, owned, n,
                                          all, cuda::std::plus<>{}, comm, s));
      CUDA_CHECK(cudaStreamSynchronize(s));

      auto& h = hists[static_cast<std::size_t>(r)];
      h.resize(latency_bins);
      CUDA_CHECK(cudaMemcpy(h.data(), hist, latency_bins * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      long long g = 0;
      CUDA_CHECK(cudaMemcpy(&g, owned, sizeof g, cudaMemcpyDeviceToHost));
      std::vector<std::int64_t> b(static_cast<std::size_t>(g));
      CUDA_CHECK(cudaMemcpy(b.data(), owned_bytes, g * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
      long long sum = 0;
      for (std::int64_t v : b) sum += v;
      groups[static_cast<std::size_t>(r)]      = g;
      bytes_total[static_cast<std::size_t>(r)] = sum;
      for (void* p : {static_cast<void*>(latency), static_cast<void*>(endpoint), static_cast<void*>(bytes),
                      static_cast<void*>(owned_endpoints), static_cast<void*>(owned_bytes), static_cast<void*>(owned),
                      static_cast<void*>(hist), temp}) {
        cudaFree(p);
      }
      cudaStreamDestroy(s);
    });
  }
  for (auto& t : ranks) t.join();
  for (ncclComm_t c : comms) ncclCommDestroy(c);

  // The reference totals, from the same generator on the host side of device 0.
  CUDA_CHECK(cudaSetDevice(0));
  long long expected_bytes = 0, expected_in_range = 0;
  {
    float* latency;
    std::int32_t* endpoint;
    std::int64_t* bytes;
    CUDA_CHECK(cudaMalloc(&latency, records_per_rank * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&endpoint, records_per_rank * sizeof(std::int32_t)));
    CUDA_CHECK(cudaMalloc(&bytes, records_per_rank * sizeof(std::int64_t)));
    std::vector<float> hl(records_per_rank);
    std::vector<std::int64_t> hb(records_per_rank);
    for (int r = 0; r < gpus; ++r) {
      make_records<<<1024, 256>>>(r, records_per_rank, latency, endpoint, bytes);
      CUDA_CHECK(cudaMemcpy(hl.data(), latency, hl.size() * sizeof(float), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(hb.data(), bytes, hb.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
      for (long long i = 0; i < records_per_rank; ++i) {
        expected_bytes += hb[static_cast<std::size_t>(i)];
        expected_in_range += hl[static_cast<std::size_t>(i)] < 500.0f;
      }
    }
    cudaFree(latency);
    cudaFree(endpoint);
    cudaFree(bytes);
  }

  bool ok = true;
  long long counted = 0, rows = 0, served = 0;
  for (unsigned long long c : hists[0]) counted += static_cast<long long>(c);
  for (int r = 0; r < gpus; ++r) {
    ok = ok && hists[static_cast<std::size_t>(r)] == hists[0];  // the same histogram on every rank
    rows += groups[static_cast<std::size_t>(r)];
    served += bytes_total[static_cast<std::size_t>(r)];
    std::printf("rank %d: owns %lld endpoints, %lld bytes\n", r, groups[static_cast<std::size_t>(r)],
                bytes_total[static_cast<std::size_t>(r)]);
  }
  std::printf("%d GPUs, %lld records: %lld latencies under 500 ms (expected %lld), %lld endpoints (expected %d), "
              "%lld bytes (expected %lld)\n",
              gpus, all, counted, expected_in_range, rows, endpoints, served, expected_bytes);
  ok = ok && counted == expected_in_range && rows == endpoints && served == expected_bytes;
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
