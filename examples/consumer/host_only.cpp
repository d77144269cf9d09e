// consumer_host: plain C++ (no nvcc) that links libtilewise.a through <tilewise/api.hpp> only:
// reduce, inclusive_scan, exclusive_scan, copy_flagged, histogram_even and group_by on the GPU
// through the precompiled entry points, each checked against a host reference. Without a CUDA
// device it says so and exits 0.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include <tilewise/api.hpp>

namespace {

bool ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) std::printf("consumer_host: FAILED, %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

/// cudaMalloc of `bytes` into a typed pointer.
template <class T>
bool device_alloc(T*& p, std::size_t bytes) {
  void* q = nullptr;
  bool const good = ok(cudaMalloc(&q, bytes), "cudaMalloc");
  p               = static_cast<T*>(q);
  return good;
}

/// Runs the two phases of one entry point (`call(temp, bytes)`) on stream s and waits for it.
template <class Call>
bool two_phase(Call call, cudaStream_t s, char const* what) {
  std::size_t bytes = 0;
  if (!ok(call(nullptr, bytes), what)) return false;
  void* temp = nullptr;
  if (!ok(cudaMallocAsync(&temp, bytes, s), "cudaMallocAsync")) return false;
  bool const good = ok(call(temp, bytes), what);
  return ok(cudaFreeAsync(temp, s), "cudaFreeAsync") && ok(cudaStreamSynchronize(s), what) && good;
}

/// Sum, maximum, inclusive and exclusive prefix sums of 1 000 003 int64 values.
bool run_gpu() {
  namespace api         = tilewise::api;
  std::int64_t const n  = 1'000'003;
  std::vector<std::int64_t> h(n);
  for (std::int64_t i = 0; i < n; ++i) h[i] = (i * 7919) % 1000 - 500;

  std::int64_t sum = 0, max = h[0];
  std::vector<std::int64_t> inc(n), exc(n);
  for (std::int64_t i = 0; i < n; ++i) {
    exc[i] = sum + 10;
    sum += h[i];
    inc[i] = sum;
    max    = h[i] > max ? h[i] : max;
  }

  cudaStream_t s{};
  std::int64_t *d_in = nullptr, *d_out = nullptr;
  if (!ok(cudaStreamCreate(&s), "cudaStreamCreate") || !device_alloc(d_in, n * sizeof(std::int64_t)) ||
      !device_alloc(d_out, n * sizeof(std::int64_t)) ||
      !ok(cudaMemcpy(d_in, h.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice), "cudaMemcpy")) {
    return false;
  }
  bool good = true;
  std::int64_t got[2] = {0, 0};
  std::vector<std::int64_t> out(n);

  good &= two_phase([&](void* t, std::size_t& b) { return api::reduce(t, b, d_in, d_out, n, api::op::plus, std::int64_t(0), s); },
                    s, "api::reduce plus");
  good &= ok(cudaMemcpy(&got[0], d_out, sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  good &= two_phase(
    [&](void* t, std::size_t& b) { return api::reduce(t, b, d_in, d_out, n, api::op::maximum, std::int64_t(-1000), s); },
    s, "api::reduce maximum");
  good &= ok(cudaMemcpy(&got[1], d_out, sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (good && (got[0] != sum || got[1] != max)) {
    std::printf("consumer_host: FAILED, reduce gave %lld / %lld, expected %lld / %lld\n", (long long)got[0],
                (long long)got[1], (long long)sum, (long long)max);
    good = false;
  }

  for (int exclusive = 0; good && exclusive < 2; ++exclusive) {
    good &= two_phase(
      [&](void* t, std::size_t& b) {
        return exclusive ? api::exclusive_scan(t, b, d_in, d_out, n, api::op::plus, std::int64_t(10), s)
                         : api::inclusive_scan(t, b, d_in, d_out, n, api::op::plus, s);
      },
      s, exclusive ? "api::exclusive_scan" : "api::inclusive_scan");
    good &= ok(cudaMemcpy(out.data(), d_out, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<std::int64_t> const& expected = exclusive ? exc : inc;
    for (std::int64_t i = 0; good && i < n; ++i) {
      if (out[i] != expected[i]) {
        std::printf("consumer_host: FAILED, %s scan differs at %lld: %lld, expected %lld\n",
                    exclusive ? "exclusive" : "inclusive", (long long)i, (long long)out[i], (long long)expected[i]);
        good = false;
      }
    }
  }

  // copy_flagged: the values at positions whose flag is set (every third), in order.
  std::vector<std::uint8_t> flags(n);
  std::vector<std::int64_t> kept;
  for (std::int64_t i = 0; i < n; ++i) {
    flags[i] = i % 3 == 0;
    if (flags[i]) kept.push_back(h[i]);
  }
  std::uint8_t* d_flags = nullptr;
  std::int64_t* d_count = nullptr;
  std::int64_t count    = -1;
  good &= device_alloc(d_flags, n) && device_alloc(d_count, sizeof(std::int64_t)) &&
          ok(cudaMemcpy(d_flags, flags.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  good &= good && two_phase([&](void* t, std::size_t& b) {
    return api::copy_flagged(t, b, d_in, d_flags, d_out, d_count, n, s);
  }, s, "api::copy_flagged");
  good &= ok(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy") &&
          ok(cudaMemcpy(out.data(), d_out, kept.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (good && (count != std::int64_t(kept.size()) || !std::equal(kept.begin(), kept.end(), out.begin()))) {
    std::printf("consumer_host: FAILED, copy_flagged kept %lld values, expected %zu\n", (long long)count, kept.size());
    good = false;
  }

  // histogram_even: 100 bins of width 10 over [-500, 500); every value falls in one.
  std::vector<std::int32_t> expected_hist(100, 0), hist(100, -1);
  for (std::int64_t x : h) expected_hist[(x + 500) / 10]++;
  std::int32_t* d_hist = nullptr;
  good &= device_alloc(d_hist, 100 * sizeof(std::int32_t));
  good &= good && two_phase([&](void* t, std::size_t& b) {
    return api::histogram_even(t, b, d_in, d_hist, 100, std::int64_t(-500), std::int64_t(500), n, s);
  }, s, "api::histogram_even");
  good &= ok(cudaMemcpy(hist.data(), d_hist, 100 * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (good && hist != expected_hist) {
    std::printf("consumer_host: FAILED, histogram_even differs from the host's\n");
    good = false;
  }

  // group_by: keys i % 1000, the sum of their values.
  std::map<std::int64_t, std::int64_t> groups;
  std::vector<std::int64_t> keys(n);
  for (std::int64_t i = 0; i < n; ++i) {
    keys[i] = i % 1000;
    groups[keys[i]] += h[i];
  }
  std::int64_t *d_keys = nullptr, *d_keys_out = nullptr;
  good &= device_alloc(d_keys, n * sizeof(std::int64_t)) &&
          device_alloc(d_keys_out, n * sizeof(std::int64_t)) &&
          ok(cudaMemcpy(d_keys, keys.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice), "cudaMemcpy");
  good &= good && two_phase([&](void* t, std::size_t& b) {
    return api::group_by(t, b, d_keys, d_in, d_keys_out, d_out, d_count, n, api::op::plus, s);
  }, s, "api::group_by");
  std::vector<std::int64_t> row_keys(groups.size()), row_sums(groups.size());
  good &= ok(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy") &&
          count == std::int64_t(groups.size()) &&
          ok(cudaMemcpy(row_keys.data(), d_keys_out, count * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy") &&
          ok(cudaMemcpy(row_sums.data(), d_out, count * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (good) {
    std::map<std::int64_t, std::int64_t> got;
    for (std::size_t r = 0; r < row_keys.size(); ++r) got[row_keys[r]] = row_sums[r];
    if (got != groups) {
      std::printf("consumer_host: FAILED, group_by rows differ from the host's\n");
      good = false;
    }
  } else {
    std::printf("consumer_host: FAILED, group_by gave %lld rows, expected %zu\n", (long long)count, groups.size());
  }

  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_flags);
  cudaFree(d_count);
  cudaFree(d_hist);
  cudaFree(d_keys);
  cudaFree(d_keys_out);
  cudaStreamDestroy(s);
  if (good) {
    std::printf("consumer_host: reduce, inclusive_scan, exclusive_scan, copy_flagged, histogram_even, group_by of %lld "
                "int64 on the GPU: ok\n", (long long)n);
  }
  return good;
}

}  // namespace

int main() {
  tilewise::version_info const v = tilewise::version();
  int const devices              = tilewise::cuda_device_count();
  std::printf("consumer_host: tilewise %d.%d.%d, %d CUDA device(s)\n", v.major, v.minor, v.patch, devices);
  if (std::tie(v.major, v.minor, v.patch) < std::make_tuple(0, 1, 0)) {
    std::printf("consumer_host: FAILED, expected tilewise >= 0.1.0\n");
    return 1;
  }
  if (devices == 0) {
    std::printf("consumer_host: no CUDA device; the GPU part is skipped\n");
    return 0;
  }
  return run_gpu() ? 0 : 1;
}
