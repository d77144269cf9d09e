// thrust_pipeline: request-log analytics written twice, once with thrust:: calls and once with
// tilewise:: calls in their place, on the same 2^24 generated log records:
//   records -> thrust::transform (latency in us) -> copy_if (successful requests)
//           -> group_by (per-endpoint request count and total latency)
//           -> histogram_even (latency histogram, 100 bins of 1 ms)
//           -> thrust::sort (endpoints by total latency, the top 5 printed)
// Thrust has no group-by or histogram: its version sorts and reduces by key. Both versions must
// give the same answers; both times are printed (median of 5 runs, synchronized per stage).
// Usage: thrust_pipeline [log2 of the record count, default 24]
// Exit code: 0 when the answers agree, 1 when they differ, 77 without a CUDA device (the CTest test
// example_thrust_pipeline skips then).
#include <thrust/adjacent_difference.h>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tilewise/api.hpp>
#include <tilewise/thrust.cuh>

namespace pipeline {

constexpr int endpoints = 5000;
constexpr int bins      = 100;      // 1 ms bins over [0, 100 ms)
constexpr int max_us    = 100'000;  // latencies at or above are outside the histogram

/// One log record, as it might come from a parsed access log.
struct record {
  std::int32_t endpoint;
  std::int32_t status;       // 200, 404 or 500
  std::int32_t latency_ns;   // raw, in units of 100 ns (as the log happens to write it)
  std::int32_t bytes;
};

__host__ __device__ std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct make_record {
  __host__ __device__ record operator()(std::int64_t i) const {
    std::uint64_t const r = mix(std::uint64_t(i));
    int const e           = int((r % endpoints) * ((r >> 20) % endpoints) / endpoints);  // skewed toward 0
    int const s           = (r >> 40) % 20 == 0 ? 500 : (r >> 40) % 20 == 1 ? 404 : 200;
    int const lat         = int((r >> 8) % 12000) * (1 + e % 7) * 10;  // up to ~84 ms, in 100 ns
    return {e, s, lat, int((r >> 48) % 4096)};
  }
};
struct to_us {  // thrust::transform: raw latency -> microseconds
  __host__ __device__ record operator()(record x) const {
    x.latency_ns /= 10;
    return x;
  }
};
struct ok_status {
  __host__ __device__ bool operator()(record const& x) const { return x.status == 200; }
};
struct endpoint_of {
  __host__ __device__ std::int32_t operator()(record const& x) const { return x.endpoint; }
};
struct latency_of {  // per-endpoint (requests, total latency) packed into one int64: count << 40 | sum
  __host__ __device__ std::int64_t operator()(record const& x) const { return (1ll << 40) + x.latency_ns; }
};
struct latency_us {
  __host__ __device__ std::int32_t operator()(record const& x) const { return x.latency_ns; }
};
struct bin_of {
  __host__ __device__ std::int32_t operator()(std::int32_t us) const { return us < max_us ? us / 1000 : bins; }
};
/// Sort key of a row: total latency (descending), ties by endpoint (ascending), whatever the order.
struct rank_of {
  __host__ __device__ std::int64_t operator()(std::int64_t packed, std::int32_t endpoint) const {
    return ((packed & ((1ll << 40) - 1)) << 13) | (8191 - endpoint);
  }
};

/// A pipeline's answers: kept records, per-endpoint rows sorted by endpoint, the histogram, top 5.
struct answers {
  std::int64_t kept = 0;
  thrust::device_vector<std::int32_t> row_keys;
  thrust::device_vector<std::int64_t> row_values;
  thrust::device_vector<std::int32_t> hist;
  std::vector<std::int32_t> top;
  double ms[4] = {};  // transform + filter, group, histogram, sort
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The top 5 endpoints by total latency (thrust::sort of the rows' ranks).
void top5(answers& a) {
  thrust::device_vector<std::int64_t> rank(a.row_values.size());
  thrust::transform(thrust::cuda::par, a.row_values.begin(), a.row_values.end(), a.row_keys.begin(), rank.begin(),
                    rank_of{});
  thrust::sort(thrust::cuda::par, rank.begin(), rank.end(), thrust::greater<std::int64_t>{});
  std::size_t const k = std::min<std::size_t>(5, rank.size());
  std::vector<std::int64_t> r(k);
  thrust::copy(rank.begin(), rank.begin() + k, r.begin());
  a.top.clear();
  for (std::int64_t x : r) a.top.push_back(8191 - int(x & 8191));
}

/// The Thrust version: copy_if, sort_by_key + reduce_by_key, sort + upper_bound + adjacent_difference.
void with_thrust(thrust::device_vector<record> const& log, answers& a) {
  auto const par = thrust::cuda::par;
  double t0      = now_ms();
  thrust::device_vector<record> us(log.size()), kept(log.size());
  thrust::transform(par, log.begin(), log.end(), us.begin(), to_us{});
  a.kept = thrust::copy_if(par, us.begin(), us.end(), kept.begin(), ok_status{}) - kept.begin();
  kept.resize(std::size_t(a.kept));
  double t1 = now_ms();
  thrust::device_vector<std::int32_t> keys(kept.size());
  thrust::device_vector<std::int64_t> vals(kept.size());
  thrust::transform(par, kept.begin(), kept.end(), keys.begin(), endpoint_of{});
  thrust::transform(par, kept.begin(), kept.end(), vals.begin(), latency_of{});
  thrust::sort_by_key(par, keys.begin(), keys.end(), vals.begin());
  a.row_keys.resize(kept.size());
  a.row_values.resize(kept.size());
  auto const ends = thrust::reduce_by_key(par, keys.begin(), keys.end(), vals.begin(), a.row_keys.begin(),
                                          a.row_values.begin());
  a.row_keys.resize(std::size_t(ends.first - a.row_keys.begin()));
  a.row_values.resize(a.row_keys.size());
  double t2 = now_ms();
  thrust::device_vector<std::int32_t> b(kept.size());
  thrust::transform(par, thrust::make_transform_iterator(kept.begin(), latency_us{}),
                    thrust::make_transform_iterator(kept.end(), latency_us{}), b.begin(), bin_of{});
  thrust::sort(par, b.begin(), b.end());
  a.hist.resize(bins);
  thrust::upper_bound(par, b.begin(), b.end(), thrust::counting_iterator<std::int32_t>(0),
                      thrust::counting_iterator<std::int32_t>(bins), a.hist.begin());
  thrust::adjacent_difference(par, a.hist.begin(), a.hist.end(), a.hist.begin());
  double t3 = now_ms();
  top5(a);
  double t4 = now_ms();
  a.ms[0] = t1 - t0, a.ms[1] = t2 - t1, a.ms[2] = t3 - t2, a.ms[3] = t4 - t3;
}

/// The tilewise version: the same stages, tilewise::copy_if / group_by / histogram_even in place of
/// Thrust's; group_by's rows are unordered, so they are sorted by endpoint (after the timed stages)
/// for the comparison.
void with_tilewise(thrust::device_vector<record> const& log, answers& a) {
  auto const par = thrust::cuda::par;
  double t0      = now_ms();
  thrust::device_vector<record> us(log.size()), kept(log.size());
  thrust::transform(par, log.begin(), log.end(), us.begin(), to_us{});
  a.kept = tilewise::copy_if(par, us.begin(), us.end(), kept.begin(), ok_status{}) - kept.begin();
  kept.resize(std::size_t(a.kept));
  double t1 = now_ms();
  a.row_keys.resize(endpoints);
  a.row_values.resize(endpoints);
  auto const ends = tilewise::group_by(par, thrust::make_transform_iterator(kept.begin(), endpoint_of{}),
                                       thrust::make_transform_iterator(kept.end(), endpoint_of{}),
                                       thrust::make_transform_iterator(kept.begin(), latency_of{}),
                                       a.row_keys.begin(), a.row_values.begin());
  a.row_keys.resize(std::size_t(ends.first - a.row_keys.begin()));
  a.row_values.resize(a.row_keys.size());
  double t2 = now_ms();
  a.hist.resize(bins);
  tilewise::histogram_even(par, thrust::make_transform_iterator(kept.begin(), latency_us{}),
                           thrust::make_transform_iterator(kept.end(), latency_us{}), a.hist.begin(), bins, 0, max_us);
  double t3 = now_ms();
  top5(a);
  double t4 = now_ms();
  a.ms[0] = t1 - t0, a.ms[1] = t2 - t1, a.ms[2] = t3 - t2, a.ms[3] = t4 - t3;
  thrust::sort_by_key(par, a.row_keys.begin(), a.row_keys.end(), a.row_values.begin());  // for the comparison only
}

template <class Run>
answers median_of_5(Run run, thrust::device_vector<record> const& log) {
  std::vector<answers> runs(5);
  for (auto& r : runs) run(log, r);
  answers out = std::move(runs[4]);
  for (int s = 0; s < 4; ++s) {
    std::vector<double> t;
    for (int k = 0; k < 4; ++k) t.push_back(runs[k].ms[s]);
    t.push_back(out.ms[s]);
    std::sort(t.begin(), t.end());
    out.ms[s] = t[2];
  }
  return out;
}

}  // namespace pipeline

using namespace pipeline;

int main(int argc, char** argv) {
  if (tilewise::cuda_device_count() == 0) {
    std::printf("thrust_pipeline: no CUDA device, nothing to run\n");
    return 77;
  }
  int const lg      = argc > 1 ? std::atoi(argv[1]) : 24;
  std::int64_t const n = 1ll << std::clamp(lg, 1, 28);
  thrust::device_vector<record> records(static_cast<std::size_t>(n));
  thrust::transform(thrust::cuda::par, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(n), records.begin(), make_record{});

  answers const t = median_of_5(with_thrust, records);
  answers const w = median_of_5(with_tilewise, records);

  bool const same = t.kept == w.kept && t.row_keys == w.row_keys && t.row_values == w.row_values && t.hist == w.hist &&
                    t.top == w.top;
  std::printf("thrust_pipeline: %lld log records, %lld successful, %zu endpoints\n", (long long)n, (long long)t.kept,
              t.row_keys.size());
  std::printf("top endpoints by total latency:");
  for (int e : w.top) std::printf(" %d", e);
  std::printf("\n| stage | thrust ms | tilewise ms |\n|---|---|---|\n");
  char const* stage[4] = {"transform + copy_if", "group_by (thrust: sort_by_key + reduce_by_key)",
                          "histogram_even (thrust: sort + upper_bound)", "sort (top 5)"};
  double tt = 0, tw = 0;
  for (int s = 0; s < 4; ++s) {
    std::printf("| %s | %.3f | %.3f |\n", stage[s], t.ms[s], w.ms[s]);
    tt += t.ms[s];
    tw += w.ms[s];
  }
  std::printf("| total | %.3f | %.3f |\n", tt, tw);
  std::printf("thrust_pipeline: answers %s; tilewise %.2fx faster\n", same ? "identical" : "DIFFER", tt / tw);
  return same ? 0 : 1;
}
