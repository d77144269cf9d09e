// device::histogram_even against cub::DeviceHistogram::HistogramEven on the same inputs, counter for
// counter: num_bins 1, 2, 255, 256, 257, 4096, 65536, 2^20, 2^24; uint8, int32, float and double
// samples; uniform, single-bin and Zipf data with samples below, above, NaN and infinite; every
// size of the size list, input offset by one element; every strategy (shared copies, 16-bit
// shared counters, cluster sizes, several passes, global bins, a hash table of bins per block)
// forced on the same input; the table strategy at 2^20 bins; 16-bit counters carrying, and with
// the next round's loads issued ahead; the automatic plans; two streams.
// histogram_even_more.cu: edges, counters, iterators, > 2^31 samples, graph capture, bad arguments.
#include <thrust/device_ptr.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include <string>
#include <vector>

#include "histogram_even_support.cuh"

using namespace tw_test;

TEST_CASE_TEMPLATE("histogram_even: every bin count, uniform / single-bin / Zipf, vs CUB", T, std::uint8_t,
                   std::int32_t, float, double) {
  // Under the sanitizers a call on 2^20 bins (bins in passes, which racecheck watches word by
  // word) takes minutes, whatever its size: there each of int32, float and double runs one of the
  // three kinds of data, together all three.
  constexpr int kind_at_2_20 = std::is_same_v<T, std::int32_t> ? 0 : std::is_same_v<T, float> ? 1 : 2;
  for (int bins : bin_counts) {
    long long const n = samples_for(bins);
    device_buffer<T> in{std::size_t(n)};
    levels<T> const l(bins);
    for (histogram_data d : all_histogram_data) {
      if (bins == (1 << 24) && d == histogram_data::single_bin && !std::is_same_v<T, std::int32_t>) continue;
      if (bins == (1 << 20) && sizeof(T) > 1 && sanitizer_run() && d != all_histogram_data[kind_at_2_20]) continue;
      for (int s = 0; s < (bins <= 65536 ? seeds(2) : 1); ++s) {
        CAPTURE(bins);
        CAPTURE(histogram_data_name(d));
        CAPTURE(s);
        gen_samples(in.get(), n, spec_for<T>(d, bins, 100 * bins + s));
        CHECK(same_as_cub<T const*, int>(in.get(), bins, l.lo, l.hi, n));
      }
    }
  }
}

/// Every size of `sizes`, the input at each of `offsets` (elements): `bins` bins over [lo, hi) on
/// samples of `data`.
template <class T, class Level>
void every_size_vs_cub(std::vector<long long> const& sizes, int bins, Level lo, Level hi, histogram_data data,
                       std::initializer_list<int> offsets = {0, 1}) {
  device_buffer<T> in(std::size_t(sizes.back()) + 1);
  for (long long n : sizes) {
    gen_samples(in.get(), n + 1, spec_for<T>(data, bins, n));
    for (int offset : offsets) {
      CAPTURE(n);
      CAPTURE(offset);
      CHECK(same_as_cub<T const*, int>(in.get() + offset, bins, lo, hi, n));
    }
  }
}

// One bin count per strategy, each its own case (the sanitizer runs take one case per process).
TEST_CASE("histogram_even: every size, input offset by one: uint8, 256 bins (1-byte samples per value), vs CUB") {
  every_size_vs_cub<std::uint8_t>(test_sizes(), 256, 3, 251, histogram_data::uniform);
}

TEST_CASE("histogram_even: every size, input offset by one: int32, 4096 bins (shared bins), vs CUB") {
  every_size_vs_cub<std::int32_t>(test_sizes(), 4096, levels<std::int32_t>(4096).lo, levels<std::int32_t>(4096).hi,
                                  histogram_data::zipf);
}

TEST_CASE("histogram_even: every size, input offset by one: float, 65536 bins (16-bit shared counters), vs CUB") {
  every_size_vs_cub<float>(test_sizes(), 65536, 0.f, 32768.f, histogram_data::uniform);
}

TEST_CASE("histogram_even: every size up to 2^20, input offset by one: double, 2^20 bins (16-bit shared counters in "
          "passes), vs CUB") {
  auto sizes = test_sizes();
  std::erase_if(sizes, [](long long n) { return n > (1 << 20); });
  // Every call clears and flushes 2^20 bins whatever its size, which racecheck watches word by
  // word: under the sanitizers one call, the largest size at offset 1 (the every-bin-count case
  // runs double samples on 2^20 bins from an aligned input).
  if (sanitizer_run()) {
    every_size_vs_cub<double>({sizes.back()}, 1 << 20, 0.0, double(1 << 19), histogram_data::uniform, {1});
  } else {
    every_size_vs_cub<double>(sizes, 1 << 20, 0.0, double(1 << 19), histogram_data::uniform);
  }
}

TEST_CASE_TEMPLATE("histogram_even: the table strategy at 2^20 bins: skewed, uniform (blocks vote to stop using "
                   "their tables) and one bin, 32- and 64-bit counters, vs CUB",
                   T, std::int32_t, float) {
  int const bins    = 1 << 20;
  long long const n = std::min(1ll << max_log2(), 1ll << 24) + 3;  // 2^24: every block votes several times
  levels<T> const l(bins);
  device_buffer<T> in{std::size_t(n)};
  for (histogram_data d : all_histogram_data) {
    CAPTURE(int(d));
    gen_samples(in.get(), n, spec_for<T>(d, bins, 11 * n + int(d)));
    histogram_plan p;
    p.strategy = histogram_strategy::table;
    CHECK(same_as_cub<T const*, int>(in.get(), bins, l.lo, l.hi, n, &p));
    CHECK(p.strategy == histogram_strategy::table);
    p = {};
    p.strategy = histogram_strategy::table;
    CHECK(same_as_cub<T const*, unsigned long long>(in.get(), bins, l.lo, l.hi, n, &p));
  }
}

TEST_CASE_TEMPLATE("histogram_even: every strategy forced on the same input, vs CUB", T, std::int32_t, float) {
  struct forced {
    histogram_strategy s;
    unsigned copies, cluster, passes, bits = 0;
  };
  forced const ways[] = {{histogram_strategy::shared, 1, 0, 0},      {histogram_strategy::shared, 4, 0, 0},
                         {histogram_strategy::shared, 32, 0, 0},     {histogram_strategy::shared, 1, 0, 3},
                         {histogram_strategy::shared, 2, 0, 2},      {histogram_strategy::shared, 0, 0, 5},
                         {histogram_strategy::shared, 0, 0, 0, 16},  {histogram_strategy::shared, 1, 0, 2, 16},
                         {histogram_strategy::shared, 4, 0, 0, 16},  {histogram_strategy::shared, 0, 0, 5, 16},
                         {histogram_strategy::cluster, 0, 2, 1},
                         {histogram_strategy::cluster, 0, 4, 1},     {histogram_strategy::cluster, 0, 8, 1},
                         {histogram_strategy::cluster, 0, 3, 3},     {histogram_strategy::cluster, 0, 8, 5},
                         {histogram_strategy::cluster, 0, 0, 0},     {histogram_strategy::global, 0, 0, 0},
                         {histogram_strategy::table, 0, 0, 0},       {histogram_strategy::automatic, 0, 0, 0}};
  long long const big = std::min(1ll << max_log2(), (1ll << 20)) + 7;
  for (int bins : {257, 4096, 65536}) {
    levels<T> const l(bins);
    device_buffer<T> in{std::size_t(big)};
    for (long long n : {1ll, 1025ll, big}) {
      gen_samples(in.get(), n, spec_for<T>(histogram_data::zipf, bins, 7 * n + bins));
      for (forced const& w : ways) {
        std::size_t const per_pass = (std::size_t(bins) + (w.passes ? w.passes : 1) - 1) / (w.passes ? w.passes : 1);
        std::size_t const word_bytes = w.bits == 16 ? 2 : 4;
        if (w.s == histogram_strategy::shared && per_pass * word_bytes * std::max(w.copies, 1u) > 200 * 1024) continue;
        histogram_plan p;
        p.strategy     = w.s;
        p.copies       = w.copies;
        p.cluster      = w.cluster;
        p.passes       = w.passes;
        p.counter_bits = w.bits;
        CAPTURE(bins);
        CAPTURE(n);
        CAPTURE(strategy_name(w.s));
        CAPTURE(w.copies);
        CAPTURE(w.cluster);
        CAPTURE(w.passes);
        CAPTURE(w.bits);
        CHECK(same_as_cub<T const*, int>(in.get(), bins, l.lo, l.hi, n, &p));
        if (w.s != histogram_strategy::automatic) CHECK(p.strategy == w.s);
        if (w.cluster) CHECK(p.cluster == w.cluster);
        if (w.passes) CHECK(p.passes == w.passes);
        if (w.copies) CHECK(p.copies == w.copies);
        if (w.s == histogram_strategy::shared) CHECK(p.counter_bits == (w.bits ? w.bits : 32u));
      }
    }
  }
}

TEST_CASE_TEMPLATE("histogram_even: 16-bit shared counters handing on their carries, vs CUB", T, std::int16_t,
                   std::int32_t, float, double) {
  // A block's 16-bit counter gives up narrow_carry (4096) counts each time it reaches them: one
  // bin taking every sample, Zipf's hot bins, and two bins taking half each (one in a low, one
  // in a high half-word) make the blocks carry, many times each in the full-size run, in the
  // first and the second pass; 16-bit samples make the largest rounds (one barrier per round).
  using tilewise::detail::narrow_carry;
  long long const n = std::min(1ll << max_log2(), 1ll << 24) + 5;
  device_buffer<T> in{std::size_t(n)};
  for (int bins : {2, 257, 65536}) {
    if (sizeof(T) == 2 && bins > 4096) continue;  // the test's integer levels need 3 * bins values
    levels<T> const l(bins);
    for (histogram_data d : {histogram_data::single_bin, histogram_data::zipf, histogram_data::uniform}) {
      gen_samples(in.get(), n, spec_for<T>(d, bins, 31 * bins + int(d)));
      for (unsigned passes : {1u, 2u}) {
        if (passes > unsigned(bins)) continue;
        histogram_plan p;
        p.strategy     = histogram_strategy::shared;
        p.counter_bits = 16;
        p.passes       = passes;
        p.copies       = 1;  // the automatic 32 copies of few bins would share a hot bin's counts out
        CAPTURE(sizeof(T));
        CAPTURE(bins);
        CAPTURE(histogram_data_name(d));
        CAPTURE(passes);
        CHECK(same_as_cub<T const*, int>(in.get(), bins, l.lo, l.hi, n, &p));
        CHECK(p.counter_bits == 16);
        CHECK(p.passes == passes);
        // one bin takes all: the blocks take more than narrow_carry samples each on average, so they carry
        CHECK(p.copies == 1);
        if (d == histogram_data::single_bin) CHECK(n / p.blocks > (long long)narrow_carry);
      }
    }
  }
}

// The 16-bit counters' kernel with the next round's loads issued before a round is counted.
struct narrow_loads_ahead {
  static constexpr tilewise::detail::histogram_even_tuning value = [] {
    auto t         = tilewise::detail::histogram_even_tuned::value;
    t.narrow_ahead = 1;
    return t;
  }();
};

TEST_CASE_TEMPLATE("histogram_even: 16-bit shared counters with the next round's loads ahead, vs CUB", T,
                   std::int16_t, std::int32_t) {
  // A block loads a round ahead only if it takes two full rounds or more: the grid is at most
  // the blocks resident at once (SMs x threads per SM / block), so the full-size input has over
  // twice that many rounds, and ends inside a round and inside a vector (the last full round has
  // no next one to load ahead; the rest is read after it). One bin taking every sample makes the
  // blocks carry. The sanitizer runs (inputs up to 2^16) take one round per block.
  using tilewise::detail::narrow_carry;
  constexpr auto tune           = narrow_loads_ahead::value;
  constexpr long long per_round = static_cast<long long>(tune.narrow_block) * tune.narrow_vectors * (16 / sizeof(T));
  int dev = 0, sms = 0, threads = 0;
  REQUIRE(cudaGetDevice(&dev) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev) == cudaSuccess);
  long long const full = (2ll * sms * (threads / tune.narrow_block) + 1) * per_round + 5;
  long long const big  = std::min(1ll << max_log2(), full);
  device_buffer<T> in{std::size_t(big)};
  for (int bins : {257, 4096}) {
    levels<T> const l(bins);
    for (long long n : {1ll, 1025ll, big}) {
      for (histogram_data d : {histogram_data::single_bin, histogram_data::zipf}) {
        gen_samples(in.get(), n, spec_for<T>(d, bins, 13 * n + 5 * bins + int(d)));
        for (unsigned passes : {1u, 2u}) {
          histogram_plan p;
          p.strategy     = histogram_strategy::shared;
          p.counter_bits = 16;
          p.passes       = passes;
          p.copies       = 1;
          CAPTURE(sizeof(T));
          CAPTURE(bins);
          CAPTURE(n);
          CAPTURE(histogram_data_name(d));
          CAPTURE(passes);
          CHECK(same_as_cub<T const*, int, typename levels<T>::level_t, narrow_loads_ahead>(in.get(), bins, l.lo,
                                                                                              l.hi, n, &p));
          CHECK(p.counter_bits == 16);
          CHECK(p.passes == passes);
          if (n == full) {
            CHECK(n / per_round >= 2ll * p.blocks);  // every block takes two full rounds or more
            if (d == histogram_data::single_bin) CHECK(n / p.blocks > (long long)narrow_carry);
          }
        }
      }
    }
  }
}

TEST_CASE("histogram_even: the automatic plan per bin count") {
  // Shared bins up to one block's 32-bit counters (several copies when few), then 16-bit ones
  // (one pass, then bin ranges in up to max_shared_passes passes), then a block table of bins
  // (where its 128 KB fit a block; else a cluster's bins or global ones); 1-byte samples always
  // per value.
  device_buffer<std::int32_t> in(4096);
  gen_samples(in.get(), 4096, spec_for<std::int32_t>(histogram_data::uniform, 256, 1));
  device_buffer<std::uint8_t> u8(4096);
  gen_samples(u8.get(), 4096, spec_for<std::uint8_t>(histogram_data::uniform, 256, 1));
  auto plan_of = [&](auto const* p, int bins) {
    histogram_plan plan;
    device_buffer<int> h{std::size_t(bins)};
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    levels<T> const l(bins);
    ours(p, h.get(), bins, l.lo, l.hi, 4096, &plan);
    return plan;
  };
  histogram_plan const p256 = plan_of(in.get(), 256);
  CHECK(p256.strategy == histogram_strategy::shared);
  CHECK(p256.copies == 32);
  histogram_plan const p4096 = plan_of(in.get(), 4096);
  CHECK(p4096.strategy == histogram_strategy::shared);
  CHECK(p4096.copies >= 1);
  CHECK(p4096.counter_bits == 32);
  // beyond one block's 32-bit counters: 16-bit ones (one pass where a block may take 128 KB)
  histogram_plan const p64k = plan_of(in.get(), 65536);
  CHECK(p64k.strategy == histogram_strategy::shared);
  CHECK(p64k.counter_bits == 16);
  CHECK(p64k.copies == 1);
  int smem_optin = 0, dev = 0;
  TW_CUDA_CHECK(cudaGetDevice(&dev));
  TW_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (smem_optin >= 128 * 1024) CHECK(p64k.passes == 1);
  histogram_plan const p256k = plan_of(in.get(), 1 << 18);  // 16-bit bins in a few passes
  if (smem_optin >= 128 * 1024) CHECK((p256k.strategy == histogram_strategy::shared && p256k.passes > 1));
  histogram_plan const p1m  = plan_of(in.get(), 1 << 20);
  histogram_plan const p16m = plan_of(in.get(), 1 << 24);
  for (int const bins : {1 << 20, 1 << 24}) {
    CAPTURE(bins);
    histogram_plan const& p = bins == 1 << 20 ? p1m : p16m;
    if (smem_optin >= 160 * 1024) CHECK(p.strategy == histogram_strategy::table);
    CHECK((p.strategy == histogram_strategy::table || p.strategy == histogram_strategy::cluster ||
           p.strategy == histogram_strategy::global));
  }
  histogram_plan const b16m = plan_of(u8.get(), 1 << 24);
  CHECK(b16m.strategy == histogram_strategy::shared);
  CHECK(b16m.bytes);
  auto const name = [](histogram_plan const& p) {
    return std::string(strategy_name(p.strategy)) + " copies " + std::to_string(p.copies) + " cluster " +
           std::to_string(p.cluster) + " passes " + std::to_string(p.passes) + " counter bits " +
           std::to_string(p.counter_bits);
  };
  MESSAGE("plans: 256: " << name(p256) << "; 4096: " << name(p4096) << "; 65536: " << name(p64k) << "; 2^20: "
                         << name(p1m) << "; 2^24: " << name(p16m));
}

TEST_CASE("histogram_even: two streams at once") {
  long long const n = std::min(1ll << max_log2(), 1ll << 24);
  device_buffer<std::int32_t> x{std::size_t(n)};
  device_buffer<float> y{std::size_t(n)};
  gen_samples(x.get(), n, spec_for<std::int32_t>(histogram_data::zipf, 4096, 11));
  gen_samples(y.get(), n, spec_for<float>(histogram_data::uniform, 65536, 12));
  device_buffer<int> hx{4096}, hy{65536}, rx{4096}, ry{65536};
  levels<std::int32_t> const lx(4096);
  cub_histogram_even(x.get(), rx.get(), 4096, lx.lo, lx.hi, n);
  cub_histogram_even(y.get(), ry.get(), 65536, 0.f, 32768.f, n);
  cudaStream_t s[2];
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::size_t bx = 0, by = 0;
  REQUIRE(tilewise::device::histogram_even(nullptr, bx, x.get(), hx.get(), 4096, lx.lo, lx.hi, n) == cudaSuccess);
  REQUIRE(tilewise::device::histogram_even(nullptr, by, y.get(), hy.get(), 65536, 0.f, 32768.f, n) == cudaSuccess);
  device_buffer<unsigned char> tx(bx), ty(by);
  tx.poison();
  ty.poison();
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < 4; ++rep) {
    REQUIRE(tilewise::device::histogram_even(tx.get(), bx, x.get(), hx.get(), 4096, lx.lo, lx.hi, n, s[0]) ==
            cudaSuccess);
    REQUIRE(tilewise::device::histogram_even(ty.get(), by, y.get(), hy.get(), 65536, 0.f, 32768.f, n, s[1]) ==
            cudaSuccess);
  }
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamSynchronize(st));
  TW_CHECK_LAUNCH();
  CHECK(compare_bits(hx.get(), rx.get(), 4096).count == 0);
  CHECK(compare_bits(hy.get(), ry.get(), 65536).count == 0);
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamDestroy(st));
}

