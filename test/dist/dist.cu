// tilewise::dist against CUB on the concatenation of the shards. P ranks run as host threads on one
// GPU, each with its own stream and temp, exchanging their totals through a shared buffer at a
// barrier as ncclAllGather / ncclAllReduce would (the rank logic: rank order, uneven and empty
// shards, in-place scans); then the NCCL path itself on a communicator over every visible GPU
// (ncclCommInitAll, one thread per GPU), NCCL's collectives on it, and bad arguments.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cuda/functional>
#include <cuda/std/functional>

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <string>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include <tilewise/dist.cuh>

#include "../support/device_data.cuh"
#include "process_data.cuh"

using namespace tw_test;

namespace dist_test {

template <class C>
__global__ void sum_slots_kernel(C const* slots, int ranks, std::size_t count, C* out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x) {
    C s = 0;
    for (int k = 0; k < ranks; ++k) s += slots[std::size_t(k) * count + i];
    out[i] = s;
  }
}

/// Where each rank's buckets are, for thread_exchange::all_to_all_v.
struct published_sends {
  std::vector<unsigned char const*> base;
  std::vector<std::vector<unsigned long long>> at;
  explicit published_sends(int ranks) : base(std::size_t(ranks)), at(std::size_t(ranks)) {}
};

/// The exchange of `ranks` host threads on one GPU: each copies its part into `staging` (or
/// publishes where its buckets are), waits for the others at the barrier, reads what is its, and
/// waits again before anything is reused.
struct thread_exchange {
  std::barrier<>* sync;
  unsigned char* staging;
  int rank;
  int ranks;
  published_sends* sends;
  std::mutex* turn;  // held by the rank that issues work, given up at the barrier; or null

  void wait_for_all() const {
    if (turn) turn->unlock();
    sync->arrive_and_wait();
    if (turn) turn->lock();
  }

  cudaError_t all_to_all_v(void const* send, unsigned long long const* send_at, unsigned long long const*,
                           void* recv, unsigned long long const* recv_at, unsigned long long const* recv_n,
                           std::size_t item_bytes, int me, int count, cudaStream_t s) const {
    cudaError_t e = cudaStreamSynchronize(s);  // the buckets are complete before others read them
    sends->base[std::size_t(me)] = static_cast<unsigned char const*>(send);
    sends->at[std::size_t(me)].assign(send_at, send_at + count);
    wait_for_all();
    for (int p = 0; p < count && e == cudaSuccess; ++p) {
      if (recv_n[p] == 0) continue;
      e = cudaMemcpyAsync(static_cast<unsigned char*>(recv) + recv_at[p] * item_bytes,
                          sends->base[std::size_t(p)] + sends->at[std::size_t(p)][std::size_t(me)] * item_bytes,
                          recv_n[p] * item_bytes, cudaMemcpyDeviceToDevice, s);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    wait_for_all();
    return e;
  }

  cudaError_t all_gather(void const* send, void* recv, std::size_t bytes, cudaStream_t s) const {
    cudaError_t e = cudaMemcpyAsync(staging + std::size_t(rank) * bytes, send, bytes, cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    wait_for_all();
    if (e == cudaSuccess) e = cudaMemcpyAsync(recv, staging, std::size_t(ranks) * bytes, cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    wait_for_all();
    return e;
  }
  template <class C>
  cudaError_t all_reduce_sum(C* buf, std::size_t count, cudaStream_t s) const {
    C* const slots = reinterpret_cast<C*>(staging);
    cudaError_t e  = cudaMemcpyAsync(slots + std::size_t(rank) * count, buf, count * sizeof(C), cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    wait_for_all();
    if (e == cudaSuccess) {
      sum_slots_kernel<<<256, 256, 0, s>>>(slots, ranks, count, buf);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    wait_for_all();
    return e;
  }
};

/// Runs `call(rank, info, exchange, stream)` on `ranks` threads at once, each on its own stream;
/// returns every rank's result (the call's, or the first failing synchronization's). Under the
/// sanitizers one rank at a time issues work between barriers (the kernels still overlap): with
/// every rank launching at once, racecheck now and then lost track of a launch.
template <class Call>
std::vector<cudaError_t> run_ranks(int ranks, std::size_t staging_bytes, Call call) {
  std::barrier<> sync(ranks);
  std::mutex turn;
  std::mutex* const one_at_a_time = sanitizer_run() ? &turn : nullptr;
  device_buffer<unsigned char> staging(staging_bytes);
  published_sends sends(ranks);
  std::vector<cudaError_t> rc(std::size_t(ranks), cudaErrorUnknown);
  int dev = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k) {
    threads.emplace_back([&, k] {
      if (one_at_a_time) one_at_a_time->lock();
      cudaSetDevice(dev);
      cudaStream_t s = nullptr;
      cudaError_t e  = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      if (e == cudaSuccess) {
        e = call(k, tilewise::detail::rank_info{k, ranks},
                 thread_exchange{&sync, staging.get(), k, ranks, &sends, one_at_a_time}, s);
        cudaError_t const w = cudaStreamSynchronize(s);
        if (e == cudaSuccess) e = w;
        cudaStreamDestroy(s);
      }
      rc[std::size_t(k)] = e;
      if (one_at_a_time) one_at_a_time->unlock();
    });
  }
  for (auto& t : threads) t.join();
  return rc;
}

/// A two-phase call on stream s: the size query, poisoned temp, the call, the temp freed once
/// the stream is done. `call(temp, bytes)` returns the call's cudaError_t.
template <class Call>
cudaError_t with_temp(cudaStream_t s, Call call) {
  std::size_t bytes = 0;
  TILEWISE_RETURN_IF_ERROR(call(nullptr, bytes));
  void* temp = nullptr;
  TILEWISE_RETURN_IF_ERROR(cudaMalloc(&temp, bytes));
  cudaError_t e = cudaMemsetAsync(temp, 0xA5, bytes, s);
  if (e == cudaSuccess) e = call(temp, bytes);
  cudaStreamSynchronize(s);
  cudaFree(temp);
  return e;
}

bool all_success(std::vector<cudaError_t> const& rc) {
  bool ok = true;
  for (std::size_t k = 0; k < rc.size(); ++k) {
    if (rc[k] != cudaSuccess) {
      MESSAGE("rank " << k << ": " << std::string(cudaGetErrorName(rc[k])));
      ok = false;
    }
  }
  return ok;
}

/// Shard sizes per rank count: uneven, empty shards, one-element shards, shards of several tiles;
/// the large ones at most 2^max_log2() (smaller under the sanitizers).
std::vector<std::vector<long long>> shardings() {
  long long const big = std::min(1ll << max_log2(), (1ll << 20) + 3);
  auto const at_most  = [&](long long n) { return std::min(n, big); };
  return {{1000},
          {0, 5},
          {big, 0, 4097},
          {1, 1, 1, 1},
          {33, at_most((1ll << 16) + 1), 0, at_most(1ll << 18), 7},
          {0, 0, 0},
          {8193, 8191, 8192, 1, at_most(65537), 0, 3, at_most(100000)}};
}

std::vector<long long> offsets_of(std::vector<long long> const& sizes) {
  std::vector<long long> off(sizes.size() + 1, 0);
  std::partial_sum(sizes.begin(), sizes.end(), off.begin() + 1);
  return off;
}

template <class T, class Op>
void check_reduce(Op op, T init, values how) {
  for (auto const& sizes : shardings()) {
    CAPTURE(sizes.size());
    int const ranks     = int(sizes.size());
    auto const off      = offsets_of(sizes);
    long long const all = off.back();
    device_buffer<T> in(std::size_t(all) + 1), outs(static_cast<std::size_t>(ranks)), ref(1);
    fill(in.get(), all, 0x5eed + all, how);
    outs.poison();
    std::size_t cub_bytes = 0;
    TW_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, cub_bytes, in.get(), ref.get(), all, op, init));
    device_buffer<unsigned char> cub_temp(cub_bytes);
    TW_CUDA_CHECK(cub::DeviceReduce::Reduce(cub_temp.get(), cub_bytes, in.get(), ref.get(), all, op, init));
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    auto const rc = run_ranks(ranks, std::size_t(ranks) * sizeof(T), [&](int k, auto info, auto x, cudaStream_t s) {
      T const* shard = in.get() + off[std::size_t(k)];
      return with_temp(s, [&](void* temp, std::size_t& bytes) {
        return tilewise::detail::dispatch_dist_reduce(temp, bytes, shard, outs.get() + k, sizes[std::size_t(k)], op,
                                                      init, info, x, s);
      });
    });
    REQUIRE(all_success(rc));
    for (int k = 0; k < ranks; ++k) {
      CAPTURE(k);
      CHECK(compare_bits(outs.get() + k, ref.get(), 1).count == 0);
    }
  }
}

template <bool Exclusive, class T, class Op>
void check_scan(Op op, T init, values how, bool in_place) {
  for (auto const& sizes : shardings()) {
    CAPTURE(sizes.size());
    CAPTURE(in_place);
    int const ranks     = int(sizes.size());
    auto const off      = offsets_of(sizes);
    long long const all = off.back();
    device_buffer<T> in(std::size_t(all) + 1), out(std::size_t(all) + 1), ref(std::size_t(all) + 1);
    fill(in.get(), all, 0xbeef + all, how);
    std::size_t cub_bytes = 0;
    if constexpr (Exclusive) {
      TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, cub_bytes, in.get(), ref.get(), op, init, all));
    } else {
      TW_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, cub_bytes, in.get(), ref.get(), op, all));
    }
    device_buffer<unsigned char> cub_temp(cub_bytes);
    if constexpr (Exclusive) {
      TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(cub_temp.get(), cub_bytes, in.get(), ref.get(), op, init, all));
    } else {
      TW_CUDA_CHECK(cub::DeviceScan::InclusiveScan(cub_temp.get(), cub_bytes, in.get(), ref.get(), op, all));
    }
    if (in_place) {
      TW_CUDA_CHECK(cudaMemcpy(out.get(), in.get(), std::size_t(all) * sizeof(T), cudaMemcpyDeviceToDevice));
    } else {
      out.poison();
    }
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    T const* const source = in_place ? out.get() : in.get();
    auto const rc = run_ranks(ranks, std::size_t(ranks) * sizeof(T), [&](int k, auto info, auto x, cudaStream_t s) {
      T const* shard    = source + off[std::size_t(k)];
      T* dest           = out.get() + off[std::size_t(k)];
      long long const n = sizes[std::size_t(k)];
      return with_temp(s, [&](void* temp, std::size_t& bytes) {
        return tilewise::detail::dispatch_dist_scan<Exclusive>(temp, bytes, shard, dest, n, op, init, info, x, s);
      });
    });
    REQUIRE(all_success(rc));
    auto const m = compare_bits(out.get(), ref.get(), all);
    CAPTURE(m.first);
    CHECK(m.count == 0);
  }
}

template <class S, class Counter, class Level>
void check_histogram(int bins, Level lower, Level upper) {
  for (auto const& sizes : shardings()) {
    CAPTURE(sizes.size());
    int const ranks     = int(sizes.size());
    auto const off      = offsets_of(sizes);
    long long const all = off.back();
    device_buffer<S> in(std::size_t(all) + 1);
    device_buffer<Counter> hists(std::size_t(ranks) * std::size_t(bins)), ref(static_cast<std::size_t>(bins));
    fill(in.get(), all, 0xabc + all, values::bits);
    hists.poison();
    std::size_t cub_bytes = 0;
    TW_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, in.get(), ref.get(), bins + 1, lower, upper, all));
    device_buffer<unsigned char> cub_temp(cub_bytes);
    TW_CUDA_CHECK(
      cub::DeviceHistogram::HistogramEven(cub_temp.get(), cub_bytes, in.get(), ref.get(), bins + 1, lower, upper, all));
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    auto const rc =
      run_ranks(ranks, std::size_t(ranks) * bins * sizeof(Counter), [&](int k, auto info, auto x, cudaStream_t s) {
        S const* shard    = in.get() + off[std::size_t(k)];
        Counter* hist     = hists.get() + std::size_t(k) * bins;
        return with_temp(s, [&](void* temp, std::size_t& bytes) {
          return tilewise::detail::dispatch_dist_histogram_even(temp, bytes, shard, hist, bins, lower, upper,
                                                                sizes[std::size_t(k)], info, x, s);
        });
      });
    REQUIRE(all_success(rc));
    for (int k = 0; k < ranks; ++k) {
      CAPTURE(k);
      CHECK(compare_bits(hists.get() + std::size_t(k) * bins, ref.get(), bins).count == 0);
    }
  }
}

template <class K>
__global__ void group_keys_kernel(K* keys, std::int64_t* values, long long n, unsigned long long distinct,
                                  std::uint64_t seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = mix64(std::uint64_t(i) ^ mix64(seed));
    std::uint64_t const d = distinct == 0 ? std::uint64_t(i) : r % distinct;
    // Spread over the whole key range, extreme values included (d = 0 and 1 give the ends).
    keys[i]   = d == 0 ? cuda::std::numeric_limits<K>::min() : d == 1 ? cuda::std::numeric_limits<K>::max()
                                                                      : K(mix64(d));
    values[i] = std::int64_t(r >> 40) - (1ll << 23);
  }
}

/// dist::group_by's rows of all ranks together against a host reference: every key once (on one
/// rank), its sum and maximum exact.
template <class K>
void check_group_by(unsigned long long distinct) {
  for (auto const& sizes : shardings()) {
    CAPTURE(sizes.size());
    CAPTURE(distinct);
    int const ranks     = int(sizes.size());
    auto const off      = offsets_of(sizes);
    long long const all = off.back();
    device_buffer<K> keys(std::size_t(all) + 1), keys_out(2 * std::size_t(ranks) * (std::size_t(all) + 1));
    device_buffer<std::int64_t> values(std::size_t(all) + 1), sums(std::size_t(ranks) * (std::size_t(all) + 1)),
      maxes(std::size_t(ranks) * (std::size_t(all) + 1)), counts(std::size_t(ranks) * 2);
    if (all > 0) {
      group_keys_kernel<<<1024, 256>>>(keys.get(), values.get(), all, distinct, 99 + all);
      TW_CHECK_LAUNCH();
    }
    counts.poison();
    auto const stride = std::size_t(all) + 1;
    for (int pass = 0; pass < 2; ++pass) {  // plus, then maximum (keys again, through another call)
      auto const rc = run_ranks(ranks, std::size_t(ranks) * (std::size_t(ranks) + 1) * 8,
                                [&](int k, auto info, auto x, cudaStream_t s) -> cudaError_t {
        K const* kin            = keys.get() + off[std::size_t(k)];
        std::int64_t const* vin = values.get() + off[std::size_t(k)];
        K* kout                 = keys_out.get() + (std::size_t(pass) * std::size_t(ranks) + std::size_t(k)) * stride;
        std::int64_t* aout      = (pass == 0 ? sums.get() : maxes.get()) + std::size_t(k) * stride;
        std::int64_t* nout      = counts.get() + std::size_t(k) * 2 + pass;
        long long const n       = sizes[std::size_t(k)];
        auto const call         = [&](void* temp, std::size_t& bytes) {
          return pass == 0 ? tilewise::detail::dispatch_dist_group_by(temp, bytes, kin, vin, kout, aout, nout, n, all,
                                                                      cuda::std::plus<>{}, info, x, s)
                           : tilewise::detail::dispatch_dist_group_by(temp, bytes, kin, vin, kout, aout, nout, n, all,
                                                                      cuda::maximum<>{}, info, x, s);
        };
        return with_temp(s, call);
      });
      REQUIRE(all_success(rc));
    }
    // Host reference.
    auto const hk = keys.download();
    auto const hv = values.download();
    std::map<K, std::pair<std::int64_t, std::int64_t>> ref;
    for (long long i = 0; i < all; ++i) {
      auto [it, fresh] = ref.try_emplace(hk[std::size_t(i)], hv[std::size_t(i)], hv[std::size_t(i)]);
      if (!fresh) {
        it->second.first += hv[std::size_t(i)];
        it->second.second = std::max(it->second.second, hv[std::size_t(i)]);
      }
    }
    auto const hc = counts.download();
    auto const ko = keys_out.download();
    auto const so = sums.download();
    auto const mo = maxes.download();
    std::map<K, std::int64_t> got_sum, got_max;
    long long rows = 0;
    for (int k = 0; k < ranks; ++k) {
      CAPTURE(k);
      CHECK(hc[std::size_t(k) * 2] == hc[std::size_t(k) * 2 + 1]);  // the same owner for a key in both calls
      rows += hc[std::size_t(k) * 2];
      for (std::int64_t j = 0; j < hc[std::size_t(k) * 2]; ++j) {
        std::size_t const at = std::size_t(k) * stride + std::size_t(j);
        CHECK(got_sum.emplace(ko[at], so[at]).second);  // once over all ranks
        CHECK(got_max.emplace(ko[std::size_t(ranks) * stride + at], mo[at]).second);
      }
    }
    CHECK(rows == static_cast<long long>(ref.size()));
    for (auto const& [key, agg] : ref) {
      auto const s_it = got_sum.find(key);
      auto const m_it = got_max.find(key);
      REQUIRE(s_it != got_sum.end());
      REQUIRE(m_it != got_max.end());
      CHECK(s_it->second == agg.first);
      CHECK(m_it->second == agg.second);
    }
  }
}

/// One communicator over every visible GPU (ncclCommInitAll), destroyed with the object.
class all_devices {
 public:
  all_devices() {
    ::setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off
    TW_CUDA_CHECK(cudaGetDeviceCount(&count_));
    comms_.resize(static_cast<std::size_t>(count_));
    REQUIRE(ncclCommInitAll(comms_.data(), count_, nullptr) == ncclSuccess);
  }
  all_devices(all_devices const&)            = delete;
  all_devices& operator=(all_devices const&) = delete;
  ~all_devices() {
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
  }
  int count() const { return count_; }
  ncclComm_t comm(int k) const { return comms_[std::size_t(k)]; }

 private:
  int count_ = 0;
  std::vector<ncclComm_t> comms_;
};

}  // namespace dist_test

using namespace dist_test;

TEST_CASE("dist::reduce over ranks on one GPU: rank order, uneven and empty shards, vs CUB on the concatenation") {
  check_reduce<std::int32_t>(cuda::std::plus<>{}, std::int32_t(7), values::bits);
  check_reduce<std::int64_t>(cuda::maximum<>{}, std::int64_t(-5), values::bits);
  check_reduce<std::uint32_t>(cuda::minimum<>{}, std::uint32_t(0xFFFFFFF0u), values::bits);
  check_reduce<float>(cuda::std::plus<>{}, 0.5f, values::small);  // integer-valued: exact
  check_reduce<double>(cuda::minimum<>{}, 2.0, values::small);
}

TEST_CASE("dist::inclusive_scan and exclusive_scan over ranks on one GPU, in place too, vs CUB") {
  for (bool in_place : {false, true}) {
    check_scan<false, std::int32_t>(cuda::std::plus<>{}, 0, values::bits, in_place);
    check_scan<true, std::int32_t>(cuda::std::plus<>{}, 11, values::bits, in_place);
    check_scan<true, std::int64_t>(cuda::std::plus<>{}, -3, values::bits, in_place);
    check_scan<false, std::uint32_t>(cuda::maximum<>{}, 0u, values::bits, in_place);
    check_scan<true, float>(cuda::std::plus<>{}, 1.0f, values::small, in_place);
    check_scan<false, double>(cuda::std::plus<>{}, 0.0, values::small, in_place);
  }
}

TEST_CASE("dist::histogram_even over ranks on one GPU, every rank gets the sum, vs CUB") {
  // Levels as CUB takes them: CUB refuses ranges whose width overflows the level type (upper -
  // lower is computed in int), so 2^31 - 1 wide at most; not a multiple of 256: bins of unequal
  // integer width.
  check_histogram<std::int32_t, std::int32_t>(256, -(1 << 30), (1 << 30) - 1);
  check_histogram<std::uint8_t, unsigned long long>(256, 0, 256);
  check_histogram<std::int32_t, std::uint32_t>(4096, -(1 << 29), 1 << 29);
}

TEST_CASE("dist::group_by over ranks on one GPU: every key on one rank, sums and maxima exact") {
  for (unsigned long long distinct : {1ull, 64ull, 5000ull, 0ull /* all distinct */}) {
    check_group_by<std::int32_t>(distinct);
  }
  check_group_by<std::uint64_t>(4096);
  check_group_by<std::int64_t>(0);
}

TEST_CASE("dist::group_by: a rank that would receive more than its room fails on every rank alike") {
  int const ranks = 3;
  long long const n = 1000;
  device_buffer<std::int32_t> keys(static_cast<std::size_t>(n)), kout(static_cast<std::size_t>(n));
  device_buffer<std::int64_t> values(static_cast<std::size_t>(n)), aout(static_cast<std::size_t>(n)), count(1);
  group_keys_kernel<<<64, 256>>>(keys.get(), values.get(), n, 0, 5);
  TW_CHECK_LAUNCH();
  auto const rc = run_ranks(ranks, std::size_t(ranks) * (ranks + 1) * 8, [&](int k, auto info, auto x, cudaStream_t s) {
    long long const room = k == 2 ? 10 : n * ranks;  // rank 2 has room for 10 pairs only
    return with_temp(s, [&](void* temp, std::size_t& bytes) {
      return tilewise::detail::dispatch_dist_group_by(temp, bytes, keys.get(), values.get(), kout.get(), aout.get(),
                                                      count.get(), n, room, cuda::std::plus<>{}, info, x, s);
    });
  });
  for (int k = 0; k < ranks; ++k) {
    CAPTURE(k);
    CHECK(rc[std::size_t(k)] == cudaErrorInvalidValue);
  }
}

TEST_CASE("dist calls on an NCCL communicator over every GPU, one thread per GPU, vs CUB") {
  all_devices devs;
  int const ranks     = devs.count();
  long long const per = std::min(1ll << max_log2(), (1ll << 20) + 1);
  long long const all = per * ranks;
  // The whole input on device 0 (the reference), each GPU's shard copied from it.
  TW_CUDA_CHECK(cudaSetDevice(0));
  device_buffer<std::int64_t> whole(static_cast<std::size_t>(all)), ref_scan(static_cast<std::size_t>(all)), ref_sum(1);
  fill(whole.get(), all, 77, values::bits);
  std::size_t b = 0;
  TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, b, whole.get(), ref_scan.get(), cuda::std::plus<>{},
                                               std::int64_t(3), all));
  std::size_t b2 = 0;
  TW_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, b2, whole.get(), ref_sum.get(), all, cuda::std::plus<>{},
                                          std::int64_t(3)));
  device_buffer<unsigned char> cub_temp(std::max(b, b2));
  TW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(cub_temp.get(), b, whole.get(), ref_scan.get(), cuda::std::plus<>{},
                                               std::int64_t(3), all));
  TW_CUDA_CHECK(cub::DeviceReduce::Reduce(cub_temp.get(), b2, whole.get(), ref_sum.get(), all, cuda::std::plus<>{},
                                          std::int64_t(3)));
  std::vector<std::int64_t> const host = whole.download();
  std::vector<std::int64_t> const expect_scan = ref_scan.download();
  std::int64_t const expect_sum               = ref_sum.download()[0];

  std::vector<std::vector<std::int64_t>> scans(static_cast<std::size_t>(ranks));
  std::vector<std::int64_t> sums(std::size_t(ranks), 0);
  std::vector<cudaError_t> rc(std::size_t(ranks), cudaErrorUnknown);
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k) {
    threads.emplace_back([&, k] {
      auto const run = [&]() -> cudaError_t {
        TILEWISE_RETURN_IF_ERROR(cudaSetDevice(k));
        std::int64_t *in = nullptr, *out = nullptr, *sum = nullptr;
        void* temp       = nullptr;
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&in, per * sizeof(std::int64_t)));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&out, per * sizeof(std::int64_t)));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&sum, sizeof(std::int64_t)));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(in, host.data() + per * k, per * sizeof(std::int64_t), cudaMemcpyHostToDevice));
        std::size_t scan_bytes = 0, sum_bytes = 0;
        TILEWISE_RETURN_IF_ERROR(tilewise::dist::exclusive_scan(nullptr, scan_bytes, in, out, per, cuda::std::plus<>{},
                                                                std::int64_t(3), devs.comm(k)));
        TILEWISE_RETURN_IF_ERROR(
          tilewise::dist::reduce(nullptr, sum_bytes, in, sum, per, cuda::std::plus<>{}, std::int64_t(3), devs.comm(k)));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&temp, std::max(scan_bytes, sum_bytes)));
        TILEWISE_RETURN_IF_ERROR(tilewise::dist::exclusive_scan(temp, scan_bytes, in, out, per, cuda::std::plus<>{},
                                                                std::int64_t(3), devs.comm(k)));
        TILEWISE_RETURN_IF_ERROR(
          tilewise::dist::reduce(temp, sum_bytes, in, sum, per, cuda::std::plus<>{}, std::int64_t(3), devs.comm(k)));
        TILEWISE_RETURN_IF_ERROR(cudaDeviceSynchronize());
        scans[std::size_t(k)].resize(static_cast<std::size_t>(per));
        TILEWISE_RETURN_IF_ERROR(
          cudaMemcpy(scans[std::size_t(k)].data(), out, per * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(&sums[std::size_t(k)], sum, sizeof(std::int64_t), cudaMemcpyDeviceToHost));
        cudaFree(in);
        cudaFree(out);
        cudaFree(sum);
        cudaFree(temp);
        return cudaSuccess;
      };
      rc[std::size_t(k)] = run();
    });
  }
  for (auto& t : threads) t.join();
  TW_CUDA_CHECK(cudaSetDevice(0));
  REQUIRE(all_success(rc));
  for (int k = 0; k < ranks; ++k) {
    CAPTURE(k);
    CHECK(sums[std::size_t(k)] == expect_sum);
    CHECK(std::equal(scans[std::size_t(k)].begin(), scans[std::size_t(k)].end(), expect_scan.begin() + per * k));
  }
}

TEST_CASE("dist calls with one process per GPU (ncclCommInitRank), vs CUB and a host reference") {
  if (sanitizer_run()) {  // the thread-rank and ncclCommInitAll cases run the same calls there
    MESSAGE("skipped under compute-sanitizer: the rank processes never finished with the test process "
            "under the tool, even unsanitized themselves; the plain CTest run checks this case");
    return;
  }
  int gpus = 0;
  TW_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  ncclUniqueId id;
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  char hex[2 * sizeof id + 1];
  for (std::size_t b = 0; b < sizeof id; ++b) {
    std::snprintf(hex + 2 * b, 3, "%02x", unsigned(reinterpret_cast<unsigned char const*>(&id)[b]));
  }
  long long const n = std::min(1ll << max_log2(), (1ll << 20) + 5);
  std::vector<std::FILE*> children;
  for (int r = 0; r < gpus; ++r) {  // every rank starts before any is waited for: they meet in init
    std::string const cmd = std::string(TILEWISE_DIST_PROCESS) + " " + std::to_string(r) + " " + std::to_string(gpus) +
                            " " + hex + " " + std::to_string(n) + " 2>&1";
    std::FILE* f = popen(cmd.c_str(), "r");
    REQUIRE(f != nullptr);
    children.push_back(f);
  }
  long long rows = 0, total = 0;
  for (int r = 0; r < gpus; ++r) {
    CAPTURE(r);
    std::string out;
    char line[512];
    while (std::fgets(line, sizeof line, children[std::size_t(r)])) out += line;
    int const status = pclose(children[std::size_t(r)]);
    CAPTURE(out);
    CHECK(status == 0);
    long long rr = 0, ss = 0;
    auto const at = out.find("rows ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(out.c_str() + at, "rows %lld sum %lld", &rr, &ss) == 2);
    rows += rr;
    total += ss;
  }
  // The reference: every rank's shard generated here, grouped on the host.
  device_buffer<std::int32_t> keys(static_cast<std::size_t>(n));
  device_buffer<std::int64_t> values(static_cast<std::size_t>(n));
  std::map<std::int32_t, std::int64_t> ref;
  long long ref_total = 0;
  for (int r = 0; r < gpus; ++r) {
    dist_process::shard_kernel<<<1024, 256>>>(r, n, keys.get(), values.get());
    TW_CHECK_LAUNCH();
    auto const hk = keys.download();
    auto const hv = values.download();
    for (std::size_t i = 0; i < hk.size(); ++i) {
      ref[hk[i]] += hv[i];
      ref_total += hv[i];
    }
  }
  CHECK(rows == static_cast<long long>(ref.size()));
  CHECK(total == ref_total);
}

TEST_CASE("NCCL's all-gather, sum and all-to-all on the communicator, as the distributed calls use them") {
  // One thread per GPU, each with values of its own rank; with one rank these are the collectives
  // (and the copy to itself) that the calls skip or take on their one-rank paths.
  all_devices devs;
  int const ranks = devs.count();
  using u64       = unsigned long long;
  std::vector<std::vector<u64>> gathered(static_cast<std::size_t>(ranks)), summed(gathered), exchanged(gathered);
  std::vector<cudaError_t> rc(static_cast<std::size_t>(ranks), cudaErrorUnknown);
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k) {
    threads.emplace_back([&, k] {
      auto const run = [&]() -> cudaError_t {
        TILEWISE_RETURN_IF_ERROR(cudaSetDevice(k));
        tilewise::detail::nccl_exchange const x{devs.comm(k)};
        std::vector<u64> const send{u64(k) * 10 + 1, u64(k) * 10 + 2, u64(k) * 10 + 3};
        std::vector<u64> const counts{5 + u64(k), 0, 7, (1ull << 40) + u64(k), 9};
        std::vector<u64> to_each(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks)),
          one(static_cast<std::size_t>(ranks), 1);
        for (int p = 0; p < ranks; ++p) {
          to_each[std::size_t(p)] = u64(k) * 100 + u64(p);
          at[std::size_t(p)]      = u64(p);
        }
        u64 *d_send = nullptr, *d_recv = nullptr, *d_counts = nullptr, *d_to = nullptr, *d_from = nullptr;
        std::size_t const r = static_cast<std::size_t>(ranks);
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&d_send, 3 * 8));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&d_recv, 3 * 8 * r));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&d_counts, 5 * 8));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&d_to, 8 * r));
        TILEWISE_RETURN_IF_ERROR(cudaMalloc(&d_from, 8 * r));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(d_send, send.data(), 3 * 8, cudaMemcpyHostToDevice));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(d_counts, counts.data(), 5 * 8, cudaMemcpyHostToDevice));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(d_to, to_each.data(), 8 * r, cudaMemcpyHostToDevice));
        TILEWISE_RETURN_IF_ERROR(cudaMemset(d_recv, 0xA5, 3 * 8 * r));
        TILEWISE_RETURN_IF_ERROR(cudaMemset(d_from, 0xA5, 8 * r));
        TILEWISE_RETURN_IF_ERROR(x.all_gather(d_send, d_recv, 3 * 8, nullptr));
        TILEWISE_RETURN_IF_ERROR(x.all_reduce_sum(d_counts, 5, nullptr));
        TILEWISE_RETURN_IF_ERROR(x.all_to_all_v(d_to, at.data(), one.data(), d_from, at.data(), one.data(), 8, k, ranks,
                                                nullptr));
        TILEWISE_RETURN_IF_ERROR(cudaDeviceSynchronize());
        auto& g = gathered[std::size_t(k)];
        auto& c = summed[std::size_t(k)];
        auto& e = exchanged[std::size_t(k)];
        g.resize(3 * r);
        c.resize(5);
        e.resize(r);
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(g.data(), d_recv, 3 * 8 * r, cudaMemcpyDeviceToHost));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(c.data(), d_counts, 5 * 8, cudaMemcpyDeviceToHost));
        TILEWISE_RETURN_IF_ERROR(cudaMemcpy(e.data(), d_from, 8 * r, cudaMemcpyDeviceToHost));
        for (u64* q : {d_send, d_recv, d_counts, d_to, d_from}) cudaFree(q);
        return cudaSuccess;
      };
      rc[std::size_t(k)] = run();
    });
  }
  for (auto& t : threads) t.join();
  TW_CUDA_CHECK(cudaSetDevice(0));
  REQUIRE(all_success(rc));
  u64 const r = u64(ranks), rank_sum = r * (r - 1) / 2;
  for (int k = 0; k < ranks; ++k) {
    CAPTURE(k);
    std::vector<u64> want_g, want_e;
    for (u64 p = 0; p < r; ++p) {
      for (u64 j = 1; j <= 3; ++j) want_g.push_back(p * 10 + j);
      want_e.push_back(p * 100 + u64(k));  // what rank p sent to rank k
    }
    CHECK(gathered[std::size_t(k)] == want_g);
    CHECK(summed[std::size_t(k)] == std::vector<u64>{5 * r + rank_sum, 0, 7 * r, (1ull << 40) * r + rank_sum, 9 * r});
    CHECK(exchanged[std::size_t(k)] == want_e);
  }
}

TEST_CASE("dist calls: a null communicator and bad arguments give cudaErrorInvalidValue") {
  device_buffer<int> in(16), out(16);
  std::size_t bytes = 0;
  CHECK(tilewise::dist::reduce(nullptr, bytes, in.get(), out.get(), 16, cuda::std::plus<>{}, 0, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::dist::inclusive_scan(nullptr, bytes, in.get(), out.get(), 16, cuda::std::plus<>{}, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::dist::exclusive_scan(nullptr, bytes, in.get(), out.get(), 16, cuda::std::plus<>{}, 0, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(tilewise::dist::histogram_even(nullptr, bytes, in.get(), out.get(), 4, 0, 8, 16, nullptr) ==
        cudaErrorInvalidValue);
  // Through the rank logic with two ranks (no exchange reached): too small a temp, negative sizes, null pointers.
  tilewise::detail::rank_info const two{1, 2};
  tilewise::detail::nccl_exchange const none{nullptr};
  std::size_t need = 0;
  REQUIRE(tilewise::detail::dispatch_dist_scan<true>(nullptr, need, in.get(), out.get(), 16ll, cuda::std::plus<>{}, 0,
                                                     two, none, nullptr) == cudaSuccess);
  device_buffer<unsigned char> temp(need);
  std::size_t small = need - 1;
  CHECK(tilewise::detail::dispatch_dist_scan<true>(temp.get(), small, in.get(), out.get(), 16ll, cuda::std::plus<>{},
                                                   0, two, none, nullptr) == cudaErrorInvalidValue);
  CHECK(tilewise::detail::dispatch_dist_scan<true>(temp.get(), need, in.get(), out.get(), -1ll, cuda::std::plus<>{}, 0,
                                                   two, none, nullptr) == cudaErrorInvalidValue);
  CHECK(tilewise::detail::dispatch_dist_scan<false>(temp.get(), need, static_cast<int const*>(nullptr), out.get(),
                                                    16ll, cuda::std::plus<>{}, 0, two, none,
                                                    nullptr) == cudaErrorInvalidValue);
  std::size_t rneed = 0;
  REQUIRE(tilewise::detail::dispatch_dist_reduce(nullptr, rneed, in.get(), out.get(), 16ll, cuda::std::plus<>{}, 0,
                                                 two, none, nullptr) == cudaSuccess);
  device_buffer<unsigned char> rtemp(rneed);
  CHECK(tilewise::detail::dispatch_dist_reduce(rtemp.get(), rneed, in.get(), static_cast<int*>(nullptr), 16ll,
                                               cuda::std::plus<>{}, 0, two, none, nullptr) == cudaErrorInvalidValue);
}
