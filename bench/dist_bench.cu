// dist_bench: weak and strong scaling of tilewise::dist (reduce, inclusive_scan, exclusive_scan,
// histogram_even) over 1, 2, 4, 8 GPUs of this host (as many as there are), one thread per GPU on
// a communicator from ncclCommInitAll, with NCCL's all-reduce bus bandwidth of the same run as
// the ceiling of the exchange. A call's time is the slowest rank's (CUDA events on each rank's
// stream, all ranks started together), the median over the repetitions. Weak scaling: 2^30 int32
// per GPU (--quick: 2^26), efficiency = time on 1 GPU / time on k. Strong scaling: 2^32 int32 in
// all (--quick: 2^28), speed-up = time on 1 GPU / time on k. group_by (2^26 pairs per GPU,
// --quick: 2^24) against its bound: the local group_by on one GPU plus an all-to-all of the
// pairs timed in the same run.
#include <nccl.h>

#include <cuda/std/functional>

#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <tilewise/dist.cuh>

#include "bench_common.cuh"

using namespace tilewise_bench;

namespace {

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: dist_bench [--quick] [--csv FILE] [--help]\n"
               "Weak and strong scaling of tilewise::dist over the GPUs of this host, with NCCL's bus bandwidth.\n");
}

enum class call { reduce, inclusive_scan, exclusive_scan, histogram_even, group_by, nccl_all_reduce, nccl_all_to_all };
constexpr call calls[] = {call::reduce, call::inclusive_scan, call::exclusive_scan, call::histogram_even};

char const* call_name(call c) {
  switch (c) {
    case call::reduce: return "reduce";
    case call::inclusive_scan: return "inclusive_scan";
    case call::exclusive_scan: return "exclusive_scan";
    case call::histogram_even: return "histogram_even";
    case call::group_by: return "group_by";
    case call::nccl_all_to_all: return "all-to-all";
    default: return "ncclAllReduce 256 MiB";
  }
}

constexpr int hist_bins      = 4096;
constexpr unsigned gb_keys  = 4096;  // group_by's distinct keys

__global__ void fill_kernel(std::int32_t* p, long long n, std::uint64_t seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t x = std::uint64_t(i) ^ seed;
    x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull;
    p[i] = std::int32_t((x >> 33) & 0x3FFFFFFF);  // [0, 2^30): every histogram bin
  }
}

__global__ void keys_kernel(std::int32_t const* in, long long n, std::int32_t* keys) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) keys[i] = in[i] % gb_keys;
}

/// One rank's buffers and stream.
struct rank_data {
  std::int32_t* in   = nullptr;
  std::int32_t* out  = nullptr;
  std::int32_t* keys = nullptr;  ///< group_by: in % gb_keys
  std::int32_t* keys_out = nullptr;
  long long* groups  = nullptr;
  unsigned* hist     = nullptr;
  float* nccl_buf    = nullptr;
  void* temp         = nullptr;
  std::size_t bytes  = 0;
  cudaStream_t s     = nullptr;
  cudaEvent_t t0, t1;
};

/// Median over `reps` of the slowest rank's time of `c` on `k` GPUs with `n` elements per rank
/// (all-to-all: n bytes from every rank, n / k to each), us.
double measure(call c, int k, long long n, int reps) {
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(k));
  if (ncclCommInitAll(comms.data(), k, nullptr) != ncclSuccess) {
    std::fprintf(stderr, "dist_bench: ncclCommInitAll over %d GPUs failed\n", k);
    std::exit(1);
  }
  std::size_t const nccl_count = (256u << 20) / sizeof(float);
  std::vector<std::vector<float>> ms(static_cast<std::size_t>(reps), std::vector<float>(static_cast<std::size_t>(k)));
  std::barrier<> start(k);
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r) {
    threads.emplace_back([&, r] {
      TW_BENCH_CUDA(cudaSetDevice(r));
      rank_data d;
      TW_BENCH_CUDA(cudaStreamCreateWithFlags(&d.s, cudaStreamNonBlocking));
      TW_BENCH_CUDA(cudaEventCreate(&d.t0));
      TW_BENCH_CUDA(cudaEventCreate(&d.t1));
      ncclComm_t const comm = comms[static_cast<std::size_t>(r)];
      auto const run = [&](void* temp, std::size_t& bytes) -> cudaError_t {
        switch (c) {
          case call::reduce:
            return tilewise::dist::reduce(temp, bytes, d.in, d.out, n, cuda::std::plus<>{}, 0, comm, d.s);
          case call::inclusive_scan:
            return tilewise::dist::inclusive_scan(temp, bytes, d.in, d.out, n, cuda::std::plus<>{}, comm, d.s);
          case call::exclusive_scan:
            return tilewise::dist::exclusive_scan(temp, bytes, d.in, d.out, n, cuda::std::plus<>{}, 0, comm, d.s);
          case call::histogram_even:
            return tilewise::dist::histogram_even(temp, bytes, d.in, d.hist, hist_bins, 0, 1 << 30, n, comm, d.s);
          case call::group_by:
            return tilewise::dist::group_by(temp, bytes, d.keys, d.in, d.keys_out, d.out, d.groups, n, n * k,
                                            cuda::std::plus<>{}, comm, d.s);
          case call::nccl_all_to_all: {
            if (temp == nullptr) return cudaSuccess;
            std::size_t const part = std::size_t(n) / std::size_t(k);
            auto* const send        = reinterpret_cast<unsigned char*>(d.in);
            auto* const recv        = reinterpret_cast<unsigned char*>(d.out);
            ncclGroupStart();
            for (int p = 0; p < k; ++p) {
              ncclSend(send + p * part, part, ncclUint8, p, comm, d.s);
              ncclRecv(recv + p * part, part, ncclUint8, p, comm, d.s);
            }
            return tilewise::detail::from_nccl(ncclGroupEnd());
          }
          default:
            if (temp == nullptr) return cudaSuccess;
            return tilewise::detail::from_nccl(
              ncclAllReduce(d.nccl_buf, d.nccl_buf, nccl_count, ncclFloat32, ncclSum, comm, d.s));
        }
      };
      if (c == call::nccl_all_reduce) {
        TW_BENCH_CUDA(cudaMalloc(&d.nccl_buf, nccl_count * sizeof(float)));
        TW_BENCH_CUDA(cudaMemset(d.nccl_buf, 0, nccl_count * sizeof(float)));
      } else if (c == call::nccl_all_to_all) {
        TW_BENCH_CUDA(cudaMalloc(&d.in, std::size_t(n)));
        TW_BENCH_CUDA(cudaMalloc(&d.out, std::size_t(n)));
        TW_BENCH_CUDA(cudaMemset(d.in, 1, std::size_t(n)));
      } else {
        long long const room = c == call::group_by ? n * k : n;  // group_by: rows owned, at most all pairs
        TW_BENCH_CUDA(cudaMalloc(&d.in, std::size_t(n) * sizeof(std::int32_t)));
        TW_BENCH_CUDA(cudaMalloc(&d.out, std::size_t(room) * sizeof(std::int32_t)));
        TW_BENCH_CUDA(cudaMalloc(&d.hist, hist_bins * sizeof(unsigned)));
        fill_kernel<<<4096, 256, 0, d.s>>>(d.in, n, 1234 + r);
        TW_BENCH_CUDA(cudaGetLastError());
        if (c == call::group_by) {
          TW_BENCH_CUDA(cudaMalloc(&d.keys, std::size_t(n) * sizeof(std::int32_t)));
          TW_BENCH_CUDA(cudaMalloc(&d.keys_out, std::size_t(room) * sizeof(std::int32_t)));
          TW_BENCH_CUDA(cudaMalloc(&d.groups, sizeof(long long)));
          keys_kernel<<<4096, 256, 0, d.s>>>(d.in, n, d.keys);
          TW_BENCH_CUDA(cudaGetLastError());
        }
      }
      TW_BENCH_CUDA(run(nullptr, d.bytes));
      TW_BENCH_CUDA(cudaMalloc(&d.temp, d.bytes + 1));
      for (int w = 0; w < 2; ++w) TW_BENCH_CUDA(run(d.temp, d.bytes));  // warm-up
      TW_BENCH_CUDA(cudaStreamSynchronize(d.s));
      for (int i = 0; i < reps; ++i) {
        start.arrive_and_wait();
        TW_BENCH_CUDA(cudaEventRecord(d.t0, d.s));
        TW_BENCH_CUDA(run(d.temp, d.bytes));
        TW_BENCH_CUDA(cudaEventRecord(d.t1, d.s));
        TW_BENCH_CUDA(cudaEventSynchronize(d.t1));
        TW_BENCH_CUDA(cudaEventElapsedTime(&ms[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)], d.t0, d.t1));
      }
      cudaFree(d.in);
      cudaFree(d.out);
      cudaFree(d.hist);
      cudaFree(d.keys);
      cudaFree(d.keys_out);
      cudaFree(d.groups);
      cudaFree(d.nccl_buf);
      cudaFree(d.temp);
      cudaEventDestroy(d.t0);
      cudaEventDestroy(d.t1);
      cudaStreamDestroy(d.s);
    });
  }
  for (auto& t : threads) t.join();
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
  std::vector<float> slowest;
  for (auto const& rep : ms) slowest.push_back(*std::max_element(rep.begin(), rep.end()));
  return median(slowest) * 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  if (int const rc = parse_options(argc, argv, "dist_bench", usage, opt); rc >= 0) return rc;
  if (skip_without_device("dist_bench")) return exit_skipped;
  int gpus = 0;
  TW_BENCH_CUDA(cudaGetDeviceCount(&gpus));
  std::vector<int> ks;
  for (int k : {1, 2, 4, 8}) {
    if (k <= gpus) ks.push_back(k);
  }
  int const reps         = opt.quick ? 5 : 21;
  long long const weak_n = opt.quick ? 1ll << 26 : 1ll << 30;
  long long const strong = opt.quick ? 1ll << 28 : 1ll << 32;
  cudaDeviceProp const prop = device_properties();
  std::printf("dist_bench on %d x %s: slowest rank's time, median of %d, us\n\n", gpus, prop.name, reps);
  std::FILE* csv = opt.csv ? open_csv("dist_bench", opt.csv) : nullptr;
  if (csv) std::fprintf(csv, "scaling,call,gpus,n_per_gpu,us,ratio\n");

  std::printf("| NCCL all-reduce (256 MiB float) | GPUs | us | bus GB/s |\n|---|---|---|---|\n");
  for (int k : ks) {
    if (k == 1) continue;
    double const us   = measure(call::nccl_all_reduce, k, 0, reps);
    double const busbw = double(256u << 20) * 2.0 * (k - 1) / k / (us * 1e3);
    std::printf("| ncclAllReduce | %d | %.1f | %.1f |\n", k, us, busbw);
    if (csv) std::fprintf(csv, "nccl,all_reduce,%d,%d,%.4f,%.4f\n", k, 256 << 20, us, busbw);
  }
  if (ks.size() == 1) std::printf("| ncclAllReduce | 1 | - | - |\n");

  std::printf("\n| weak scaling | GPUs | n per GPU | us | efficiency (1 GPU / k) |\n|---|---|---|---|---|\n");
  std::vector<std::string> summary;
  for (call c : calls) {
    double t1 = 0;
    for (int k : ks) {
      double const us = measure(c, k, weak_n, reps);
      if (k == 1) t1 = us;
      std::printf("| %s | %d | %lld | %.1f | %.3f |\n", call_name(c), k, weak_n, us, t1 / us);
      if (csv) std::fprintf(csv, "weak,%s,%d,%lld,%.4f,%.4f\n", call_name(c), k, weak_n, us, t1 / us);
      if (k == ks.back() && k > 1) {
        char line[160];
        std::snprintf(line, sizeof line, "%s %.3f at %d GPUs%s", call_name(c), t1 / us, k,
                      k == 8 ? (t1 / us >= 0.90 ? " (>= 0.90)" : " (< 0.90)") : "");
        summary.push_back(line);
      }
    }
  }
  // group_by against its bound: the local group_by on one GPU plus the all-to-all of the pairs
  // (8 bytes each) at the all-to-all rate of the same run.
  long long const gb_n = opt.quick ? 1ll << 24 : 1ll << 26;
  std::printf("\n| group_by (int32 keys, %u distinct; int32 values) | GPUs | pairs per GPU | us | all-to-all us | bound us "
              "| bound / ours |\n|---|---|---|---|---|---|---|\n", gb_keys);
  double gb1 = 0;
  for (int k : ks) {
    double const us    = measure(call::group_by, k, gb_n, reps);
    double const a2a   = k > 1 ? measure(call::nccl_all_to_all, k, gb_n * 8, reps) : 0.0;
    if (k == 1) gb1 = us;
    double const bound = gb1 + a2a;
    std::printf("| group_by | %d | %lld | %.1f | %.1f | %.1f | %.3f |\n", k, gb_n, us, a2a, bound, bound / us);
    if (csv) std::fprintf(csv, "group_by,group_by,%d,%lld,%.4f,%.4f\n", k, gb_n, us, bound / us);
    if (k == ks.back() && k > 1) {
      char line[160];
      std::snprintf(line, sizeof line, "group_by %.3f of its bound at %d GPUs%s", bound / us, k,
                    k == 8 ? (bound / us >= 0.80 ? " (>= 0.80)" : " (< 0.80)") : "");
      summary.push_back(line);
    }
  }

  std::printf("\n| strong scaling | GPUs | n per GPU | us | speed-up (1 GPU / k) |\n|---|---|---|---|---|\n");
  for (call c : calls) {
    double t1 = 0;
    for (int k : ks) {
      long long const n = strong / k;
      double const us   = measure(c, k, n, reps);
      if (k == 1) t1 = us;
      std::printf("| %s | %d | %lld | %.1f | %.2f |\n", call_name(c), k, n, us, t1 / us);
      if (csv) std::fprintf(csv, "strong,%s,%d,%lld,%.4f,%.4f\n", call_name(c), k, n, us, t1 / us);
    }
  }
  if (csv) close_csv("dist_bench", csv, opt.csv);
  if (summary.empty()) {
    std::printf("\nsummary: one GPU only: no scaling measured (goals at 8 GPUs: weak-scaling efficiency >= 0.90, "
                "group_by >= 0.80 of its bound)\n");
  } else {
    std::printf("\nsummary: weak scaling efficiency:");
    for (std::size_t i = 0; i < summary.size(); ++i) std::printf("%s %s", i ? ";" : "", summary[i].c_str());
    std::printf("\n");
  }
  return 0;
}
