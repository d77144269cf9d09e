// device::group_by against CUB's DeviceRadixSort::SortPairs + DeviceReduce::ReduceByKey on the
// same input, rows compared as sets (both sorted by key) with the exact count: int32 keys and
// values on every size (0, 1, 2, 31, 33, 1023, 1025, 2^k +- 1 up to 2^26) with 1, 2, 64, 4096,
// 2^16, 2^20 distinct keys and all keys distinct (plus a host reference for small sizes);
// uint32 / int64 / uint64 keys; the extreme key values (min, max, -1, 0, 1, the block tables'
// free key) mixed in and alone; float and double sums within 32 * eps * sum|x| of a float64
// reference; min and max; values combined under a lock (16- and 12-byte structs, a user functor,
// int16); Zipf key frequencies; two streams; a captured graph launched three times on changing
// input; many calls on one temp storage; temp storage at any address; Thrust iterators and count
// types; more than 2^31 pairs; tables of 64 slots and one probe (the paths the default tables rarely
// take) with the bucket pass's split in tiles of 16 pairs per thread; atomic values
// pre-aggregated with match_any, with partition tiles of 8 pairs per thread loaded one after the
// other; the distinct-key sketch's estimate; bad arguments. Outputs are poisoned: rows past the
// count must stay so.
#include <thrust/device_ptr.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <algorithm>
#include <map>

#include <tilewise/device/group_by.cuh>

#include "../support/group_by_data.cuh"

using namespace tw_test;

namespace {

__global__ void count_changed_kernel(unsigned char const* p, long long bytes, unsigned long long* changed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < bytes; i += 256ll * gridDim.x) {
    if (p[i] != 0xA5) atomicAdd(changed, 1ull);
  }
}

/// Bytes of p[0, bytes) that are no longer the poison 0xA5.
long long changed_bytes(void const* p, long long bytes) {
  if (bytes <= 0) return 0;
  device_buffer<unsigned long long> c(1);
  TW_CUDA_CHECK(cudaMemset(c.get(), 0, sizeof(unsigned long long)));
  count_changed_kernel<<<unsigned(std::min<long long>(cuda::ceil_div(bytes, 256ll), 4096)), 256>>>(
    static_cast<unsigned char const*>(p), bytes, c.get());
  TW_CHECK_LAUNCH();
  return static_cast<long long>(read_one(c.get()));
}

template <class T>
std::vector<T> download(T const* p, long long n) {
  std::vector<T> h(std::size_t(n > 0 ? n : 0));
  if (n > 0) TW_CUDA_CHECK(cudaMemcpy(h.data(), p, std::size_t(n) * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T, class Op>
inline constexpr bool tolerance_v = std::is_floating_point_v<T> && tilewise::detail::kind_v<Op, T> ==
                                                                      tilewise::detail::op_kind::plus;

/// op on the host; signed integer sums wrap as on the device.
template <class T, class Op>
T host_combine(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T> && tilewise::detail::kind_v<Op, T> == tilewise::detail::op_kind::plus) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) + U(b));
  } else {
    return T(op(a, b));
  }
}

/// Our rows of pairs (keys, vals)[0, n) into ko / vo, compared with the oracle's; ko and vo hold
/// `cap` rows, poisoned here, and rows from the count on must stay poisoned.
template <class K, class T, class Op>
void verify(K const* keys, T const* vals, long long n, Op op, K const* ko, T const* vo, long long count,
            long long cap) {
  sorted_rows<K, T> ref(n + 1);
  cub_group_by(keys, vals, n, op, ref);
  CHECK(count == ref.count);
  if (count != ref.count || count < 0 || count > cap) return;
  CHECK(changed_bytes(ko + count, (cap - count) * long(sizeof(K))) == 0);
  CHECK(changed_bytes(vo + count, (cap - count) * long(sizeof(T))) == 0);
  sorted_rows<K, T> mine(count + 1);
  sort_rows(ko, vo, count, mine);
  mismatch const mk = compare_bits(mine.keys.get(), ref.keys.get(), count);
  CHECK(mk.count == 0);
  if (mk.count) MESSAGE("first key difference at row " << mk.first);
  if constexpr (tolerance_v<T, Op>) {
    std::vector<K> rk;
    std::vector<double> sums, mags;
    float64_reference(keys, vals, n, rk, sums, mags);
    REQUIRE(long(rk.size()) == count);
    auto const got = mine.values.download();
    long long bad  = 0;
    for (long long i = 0; i < count; ++i) {
      double const tol = 32.0 * double(std::numeric_limits<T>::epsilon()) * mags[std::size_t(i)];
      bad += std::fabs(double(got[std::size_t(i)]) - sums[std::size_t(i)]) > tol;
    }
    CHECK(bad == 0);
  } else {
    mismatch const mv = compare_bits(mine.values.get(), ref.values.get(), count);
    CHECK(mv.count == 0);
    if (mv.count) MESSAGE("first value difference at row " << mv.first);
    if (n <= 4096 && mv.count == 0) {  // the host reference too
      auto const hk = download(keys, n);
      auto const hv = download(vals, n);
      std::map<K, T> m;
      for (long long i = 0; i < n; ++i) {
        auto [it, fresh] = m.try_emplace(hk[std::size_t(i)], hv[std::size_t(i)]);
        if (!fresh) it->second = host_combine(op, it->second, hv[std::size_t(i)]);
      }
      auto const gk = mine.keys.download();
      auto const gv = mine.values.download();
      bool same     = long(m.size()) == count;
      std::size_t r = 0;
      for (auto const& [k, v] : m) {
        if (!same) break;
        same = gk[r] == k && same_bits(gv[r], v);
        ++r;
      }
      CHECK(same);
    }
  }
}

/// Our group_by with poisoned temp storage starting `temp_shift` bytes into its allocation and a
/// poisoned count of type C; returns the count.
template <class C = long long, class KIt, class VIt, class KOut, class VOut, class Op>
long long ours(KIt keys, VIt vals, long long n, Op op, KOut ko, VOut vo, std::size_t temp_shift = 0) {
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::group_by(nullptr, bytes, keys, vals, ko, vo, static_cast<C*>(nullptr), n, op) ==
          cudaSuccess);
  device_buffer<unsigned char> temp(bytes + temp_shift);
  temp.poison();
  device_buffer<C> count(1);
  count.poison();
  REQUIRE(tilewise::device::group_by(temp.get() + temp_shift, bytes, keys, vals, ko, vo, count.get(), n, op) ==
          cudaSuccess);
  TW_CHECK_LAUNCH();
  return static_cast<long long>(read_one(count.get()));
}

template <class K, class T, class Op>
void check_case(long long n, key_spec const& spec, Op op, std::size_t temp_shift = 0) {
  CAPTURE(n);
  CAPTURE(spec.distinct);
  CAPTURE(dist_name(spec.dist));
  CAPTURE(spec.extremes);
  CAPTURE(spec.seed);
  device_buffer<K> keys(std::size_t(n) + 1), ko(std::size_t(n) + 1);
  device_buffer<T> vals(std::size_t(n) + 1), vo(std::size_t(n) + 1);
  fill_pairs(keys.get(), vals.get(), n, spec);
  ko.poison();
  vo.poison();
  long long const count = ours(keys.get(), vals.get(), n, op, ko.get(), vo.get(), temp_shift);
  verify(keys.get(), vals.get(), n, op, ko.get(), vo.get(), count, n + 1);
}

/// test_sizes() up to 2^min(26, TILEWISE_TEST_MAX_LOG2), with 2^26 +- 1.
std::vector<long long> group_by_sizes() {
  int const top = std::min(26, max_log2());
  std::vector<long long> s;
  for (long long n : test_sizes()) {
    if (n <= (1ll << top) + 1) s.push_back(n);
  }
  if (top == 26) {
    for (long long d : {-1, 0, 1}) s.push_back((1ll << 26) + d);
  }
  return s;
}

long long capped(long long n) { return std::min(n, (1ll << max_log2()) + 1); }

constexpr unsigned long long all_distinct = 0;

key_spec spec_of(unsigned long long d, std::uint64_t seed, key_dist dist = key_dist::uniform, bool extremes = false) {
  return d == all_distinct ? key_spec{key_dist::distinct, 1, extremes, seed} : key_spec{dist, d, extremes, seed};
}

}  // namespace

TEST_CASE("group_by: int32 keys and values, plus: every size and number of distinct keys, vs CUB") {
  for (long long n : group_by_sizes()) {
    for (unsigned long long d : {1ull, 2ull, 64ull, 4096ull, 1ull << 16, 1ull << 20, all_distinct}) {
      if (d != all_distinct && d > 2ull * std::uint64_t(n) + 2) continue;
      int const rounds = n <= (1 << 16) ? seeds(2) : 1;
      for (int s = 0; s < rounds; ++s) {
        check_case<std::int32_t, std::int32_t>(n, spec_of(d, 100 * n + s), cuda::std::plus<>{});
      }
    }
  }
}

TEST_CASE_TEMPLATE("group_by: other key types with int64 values, plus, vs CUB", K, std::uint32_t, std::int64_t,
                   std::uint64_t) {
  for (long long n : {0ll, 1ll, 1000ll, (1ll << 16) + 1, capped((1ll << 20) + 3), capped((1ll << 24) - 1)}) {
    for (unsigned long long d : {1ull, 64ull, 4096ull, 1ull << 16, all_distinct}) {
      check_case<K, std::int64_t>(n, spec_of(d, 7 + n), cuda::std::plus<>{});
    }
  }
}

TEST_CASE_TEMPLATE("group_by: extreme key values (min, max, -1, 0, 1, the free key) mixed in, vs CUB", K,
                   std::int32_t, std::uint32_t, std::int64_t, std::uint64_t) {
  for (long long n : {8ll, 1000ll, capped((1ll << 18) + 1), capped((1ll << 22) + 1)}) {
    for (unsigned long long d : {8ull, 64ull, 4096ull, all_distinct}) {
      check_case<K, std::int64_t>(n, spec_of(d, 3, key_dist::uniform, true), cuda::std::plus<>{});
      check_case<K, std::uint32_t>(n, spec_of(d, 4, key_dist::zipf, true), cuda::maximum<>{});
    }
  }
}

namespace {
template <class K>
__global__ void one_key_kernel(K* keys, long long n, K k) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) keys[i] = k;
}
}  // namespace

TEST_CASE_TEMPLATE("group_by: every pair with the same extreme key", K, std::int32_t, std::uint64_t) {
  long long const n = capped((1ll << 20) + 7);
  device_buffer<K> keys{std::size_t(n)}, ko{std::size_t(n)};
  device_buffer<std::int32_t> vals{std::size_t(n)}, vo{std::size_t(n)};
  fill_pairs(keys.get(), vals.get(), n, spec_of(1, 5));
  for (unsigned e = 0; e < 8; ++e) {
    CAPTURE(e);
    one_key_kernel<<<1024, 256>>>(keys.get(), n, extreme_key<K>(e));
    TW_CHECK_LAUNCH();
    ko.poison();
    vo.poison();
    long long const count = ours(keys.get(), vals.get(), n, cuda::std::plus<>{}, ko.get(), vo.get());
    CHECK(count == 1);
    verify(keys.get(), vals.get(), n, cuda::std::plus<>{}, ko.get(), vo.get(), count, n);
  }
}

TEST_CASE_TEMPLATE("group_by: floating-point sums within 32 * eps * sum|x| of a float64 reference", T, float, double) {
  using K = std::conditional_t<std::is_same_v<T, float>, std::int32_t, std::int64_t>;
  for (long long n : {1ll, 4097ll, capped((1ll << 20) + 1), capped((1ll << 24) + 1)}) {
    for (unsigned long long d : {1ull, 64ull, 4096ull, 1ull << 20, all_distinct}) {
      check_case<K, T>(n, spec_of(d, 11 + n), cuda::std::plus<>{});
    }
  }
}

TEST_CASE("group_by: minimum and maximum (integers and floating point, exact)") {
  for (long long n : {1ll, 1025ll, capped((1ll << 20) + 1)}) {
    for (unsigned long long d : {1ull, 64ull, 4096ull, all_distinct}) {
      check_case<std::int32_t, std::int32_t>(n, spec_of(d, 21), cuda::minimum<>{});
      check_case<std::int64_t, std::int64_t>(n, spec_of(d, 22), cuda::maximum<>{});
      check_case<std::uint32_t, std::uint64_t>(n, spec_of(d, 23), cuda::minimum<>{});
      check_case<std::int32_t, float>(n, spec_of(d, 24), cuda::minimum<>{});
      check_case<std::uint64_t, double>(n, spec_of(d, 25), cuda::maximum<>{});
    }
  }
}

TEST_CASE("group_by: values under a lock (16-, 12- and 48-byte structs, a user functor, int16), vs CUB") {
  for (long long n : {1ll, 33ll, 4097ll, capped((1ll << 20) + 1)}) {
    for (unsigned long long d : {1ull, 2ull, 64ull, 4096ull, 1ull << 16, all_distinct}) {
      check_case<std::uint64_t, s16>(n, spec_of(d, 31), s16_op{});
      check_case<std::int32_t, s16>(n, spec_of(d, 32, key_dist::zipf), s16_op{});
      check_case<std::int32_t, s12>(n, spec_of(d, 33), s12_plus{});
      check_case<std::int32_t, std::int32_t>(n, spec_of(d, 34), user_plus{});
      check_case<std::int64_t, std::int16_t>(n, spec_of(d, 35), cuda::std::plus<>{});
      check_case<std::int64_t, s48>(n, spec_of(d, 36), s48_plus{});  // fewer pairs per partition tile
    }
  }
}

TEST_CASE("group_by: Zipf key frequencies") {
  for (long long n : {capped((1ll << 20) + 1), capped((1ll << 24) + 3)}) {
    for (unsigned long long d : {64ull, 4096ull, 1ull << 20}) {
      check_case<std::int32_t, std::int32_t>(n, spec_of(d, 41, key_dist::zipf), cuda::std::plus<>{});
      check_case<std::int64_t, double>(n, spec_of(d, 42, key_dist::zipf), cuda::std::plus<>{});
    }
  }
}

TEST_CASE("group_by: temp storage at any address") {
  for (std::size_t shift : {1, 8, 200}) {
    CAPTURE(shift);
    check_case<std::int64_t, double>(capped(100003), spec_of(4096, 51), cuda::std::plus<>{}, shift);
    check_case<std::int32_t, s16>(capped(100003), spec_of(64, 52), s16_op{}, shift);
  }
}

TEST_CASE("group_by: many calls on one temp storage, each vs CUB (slots of earlier calls are stale)") {
  long long const big = capped((1ll << 20) + 1);
  struct step {
    long long n;
    unsigned long long d;
  };
  std::vector<step> const steps{{big, all_distinct}, {big, 64}, {capped(1 << 16), all_distinct}, {big, 4096},
                                {1000, all_distinct}, {big, all_distinct}, {big, 1}, {capped((1 << 18) + 5), 1 << 16}};
  device_buffer<std::int32_t> keys{std::size_t(big)}, ko(std::size_t(big) + 1);
  device_buffer<std::int32_t> vals{std::size_t(big)}, vo(std::size_t(big) + 1);
  device_buffer<long long> count(1);
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::group_by(nullptr, bytes, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), big,
                                     cuda::std::plus<>{}) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CAPTURE(i);
    long long const n = steps[i].n;
    fill_pairs(keys.get(), vals.get(), n, spec_of(steps[i].d, 60 + i));
    ko.poison();
    vo.poison();
    count.poison();
    std::size_t b = bytes;  // the largest call's size serves every smaller one
    REQUIRE(tilewise::device::group_by(temp.get(), b, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), n,
                                       cuda::std::plus<>{}) == cudaSuccess);
    TW_CHECK_LAUNCH();
    verify(keys.get(), vals.get(), n, cuda::std::plus<>{}, ko.get(), vo.get(), read_one(count.get()), big + 1);
  }
}

TEST_CASE("group_by: two streams at once with separate temp storage") {
  long long const n = capped((1ll << 22) + 9);
  device_buffer<std::int32_t> k1{std::size_t(n)}, k2{std::size_t(n)}, ko1(std::size_t(n) + 1), ko2(std::size_t(n) + 1);
  device_buffer<std::int32_t> v1{std::size_t(n)}, v2{std::size_t(n)}, vo1(std::size_t(n) + 1), vo2(std::size_t(n) + 1);
  device_buffer<long long> c1(1), c2(1);
  fill_pairs(k1.get(), v1.get(), n, spec_of(4096, 71));
  fill_pairs(k2.get(), v2.get(), n, spec_of(all_distinct, 72));
  std::size_t b1 = 0, b2 = 0;
  auto const plus = cuda::std::plus<>{};
  REQUIRE(tilewise::device::group_by(nullptr, b1, k1.get(), v1.get(), ko1.get(), vo1.get(), c1.get(), n, plus) ==
          cudaSuccess);
  b2 = b1;
  device_buffer<unsigned char> t1(b1), t2(b2);
  t1.poison();
  t2.poison();
  ko1.poison();
  vo1.poison();
  ko2.poison();
  vo2.poison();
  TW_CUDA_CHECK(cudaDeviceSynchronize());  // the memsets ran on the legacy stream
  cudaStream_t s[2];
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int rep = 0; rep < 4; ++rep) {
    REQUIRE(tilewise::device::group_by(t1.get(), b1, k1.get(), v1.get(), ko1.get(), vo1.get(), c1.get(), n, plus,
                                       s[0]) == cudaSuccess);
    REQUIRE(tilewise::device::group_by(t2.get(), b2, k2.get(), v2.get(), ko2.get(), vo2.get(), c2.get(), n, plus,
                                       s[1]) == cudaSuccess);
  }
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamSynchronize(st));
  TW_CHECK_LAUNCH();
  verify(k1.get(), v1.get(), n, plus, ko1.get(), vo1.get(), read_one(c1.get()), n + 1);
  verify(k2.get(), v2.get(), n, plus, ko2.get(), vo2.get(), read_one(c2.get()), n + 1);
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamDestroy(st));
}

TEST_CASE("group_by: stream capture, the graph launched three times on changing input") {
  // uint32 keys and values: this instantiation's first call is the captured one.
  long long const n = capped((1ll << 20) + 3);
  device_buffer<std::uint32_t> keys{std::size_t(n)}, vals{std::size_t(n)}, ko(std::size_t(n) + 1),
    vo(std::size_t(n) + 1);
  device_buffer<unsigned> count(1);
  auto const plus = cuda::std::plus<>{};
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::group_by(nullptr, bytes, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), n,
                                     plus) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  TW_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  TW_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaError_t const e =
    tilewise::device::group_by(temp.get(), bytes, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), n, plus, s);
  TW_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  REQUIRE(e == cudaSuccess);
  cudaGraphExec_t exec;
  TW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  unsigned long long const ds[] = {4096, all_distinct, 64};
  for (int rep = 0; rep < 3; ++rep) {
    CAPTURE(rep);
    fill_pairs(keys.get(), vals.get(), n, spec_of(ds[rep], 80 + rep));
    ko.poison();
    vo.poison();
    count.poison();
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    TW_CUDA_CHECK(cudaGraphLaunch(exec, s));
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
    verify(keys.get(), vals.get(), n, plus, ko.get(), vo.get(), read_one(count.get()), n + 1);
  }
  TW_CUDA_CHECK(cudaGraphExecDestroy(exec));
  TW_CUDA_CHECK(cudaGraphDestroy(graph));
  TW_CUDA_CHECK(cudaStreamDestroy(s));
}

// At namespace scope (not anonymous): kernels take them. Tables of 64 slots and a single probe
// make the paths the default tables rarely take run on every call: spills in the first pass, its
// bypass vote, parts split into sub-parts, and bucket rounds that defer pairs to the next round.
// The bucket pass's split takes tiles of 16 pairs per thread (8 by default).
struct tiny_tables {
  static constexpr tilewise::detail::group_by_tuning value = [] {
    auto t                 = tilewise::detail::group_by_tuned::value;
    t.bucket_scatter_items = 16;
    t.table_slots          = 64;
    t.table_probes         = 1;
    t.bucket_table_slots   = 64;
    t.bucket_probes        = 1;
    t.bucket_fill_percent  = 50;
    return t;
  }();
};
// Atomic values pre-aggregated with match_any (tile::reduce_by_key) where 8 lanes of a warp
// share lane 0's key, as values under a lock are by default; 2 chunks, so that the partition
// pass takes chunks of more than one tile whenever many pairs reach it; and partition tiles of 8
// pairs per thread (half the default), each loaded only once the one before is written out
// (scatter_ahead = 0).
struct matching_peers {
  static constexpr tilewise::detail::group_by_tuning value = [] {
    auto t          = tilewise::detail::group_by_tuned::value;
    t.peer_min      = 8;
    t.chunks        = 2;
    t.scatter_items = 8;
    t.scatter_ahead = 0;
    return t;
  }();
};

namespace {
/// group_by under tuning table Tuning (through the dispatch) against CUB, int32 pairs, plus.
template <class Tuning>
void check_tuning(int seed) {
  for (long long n : {1000ll, capped((1ll << 16) + 1), capped((1ll << 20) + 3)}) {
    // 2 keys: about half of a warp's lanes hold lane 0's key, so warps pre-aggregate with
    // match_any wherever the table allows it (8 peers); 64 keys and more almost never do
    for (unsigned long long d : {2ull, 64ull, 4096ull, 1ull << 16, all_distinct}) {
      CAPTURE(n);
      CAPTURE(d);
      device_buffer<std::int32_t> keys(std::size_t(n) + 1), ko(std::size_t(n) + 1);
      device_buffer<std::int32_t> vals(std::size_t(n) + 1), vo(std::size_t(n) + 1);
      fill_pairs(keys.get(), vals.get(), n, spec_of(d, seed + n));
      ko.poison();
      vo.poison();
      device_buffer<long long> count(1);
      count.poison();
      auto const call = [&](void* temp, std::size_t& bytes) {
        return tilewise::detail::dispatch_group_by<Tuning>(
          temp, bytes, static_cast<std::int32_t const*>(keys.get()), static_cast<std::int32_t const*>(vals.get()),
          ko.get(), vo.get(), count.get(), n, cuda::std::plus<>{}, cudaStream_t{});
      };
      std::size_t bytes = 0;
      REQUIRE(call(nullptr, bytes) == cudaSuccess);
      device_buffer<unsigned char> temp(bytes);
      temp.poison();
      REQUIRE(call(temp.get(), bytes) == cudaSuccess);
      TW_CHECK_LAUNCH();
      verify(keys.get(), vals.get(), n, cuda::std::plus<>{}, ko.get(), vo.get(), read_one(count.get()), n + 1);
    }
  }
}
}  // namespace

TEST_CASE(
  "group_by: tables of 64 slots and one probe (spills, bypass, split parts, deferred rounds), bucket split tiles of "
  "16 pairs per thread, vs CUB") {
  check_tuning<tiny_tables>(90);
}

TEST_CASE(
  "group_by: atomic values pre-aggregated with match_any, chunks of several tiles, 8-pair tiles, no loads ahead, "
  "vs CUB") {
  check_tuning<matching_peers>(190);
}

// At namespace scope (not anonymous): kernels taking them keep external linkage.
struct key_mod_1000 {
  __host__ __device__ std::int32_t operator()(long long i) const { return std::int32_t(i * 7 % 1000) - 500; }
};

namespace {
/// The counts the keys of key_mod_1000 over [0, n) have, by key + 500.
std::vector<long long> mod_1000_counts(long long n) {
  std::vector<long long> c(1000, 0);
  for (long long k = 0; k < 1000; ++k) {
    long long const i0 = k * 143 % 1000;  // 7 * 143 = 1001: i * 7 = k (mod 1000) for i = 143 k
    c[std::size_t(k)]  = i0 < n ? (n - 1 - i0) / 1000 + 1 : 0;
  }
  return c;
}

template <class C>
void check_counting(long long n) {
  CAPTURE(n);
  auto const keys = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), key_mod_1000{});
  auto const ones = thrust::constant_iterator<long long>(1);
  device_buffer<std::int32_t> ko(1001);
  device_buffer<long long> vo(1001);
  ko.poison();
  vo.poison();
  long long const count = ours<C>(keys, ones, n, cuda::std::plus<>{}, thrust::device_ptr<std::int32_t>(ko.get()),
                                  thrust::device_ptr<long long>(vo.get()));
  auto const expect = mod_1000_counts(n);
  CHECK(count == std::count_if(expect.begin(), expect.end(), [](long long c) { return c > 0; }));
  auto const hk = ko.download();
  auto const hv = vo.download();
  bool ok       = count <= 1000;
  for (long long r = 0; ok && r < count; ++r) {
    long long const k = hk[std::size_t(r)] + 500;
    ok                = k >= 0 && k < 1000 && hv[std::size_t(r)] == expect[std::size_t(k)];
  }
  CHECK(ok);
}
}  // namespace

TEST_CASE("group_by: Thrust iterators in (counting, transform, constant), device_ptr out, count types") {
  check_counting<long long>(1);
  check_counting<int>(999);
  check_counting<unsigned long long>(capped((1ll << 20) + 11));
  check_counting<short>(capped(123457));
  check_counting<unsigned>(capped(1ll << 24));
  // device_ptr everywhere, on a materialized input
  long long const n = capped(300007);
  device_buffer<std::int64_t> keys{std::size_t(n)}, ko(std::size_t(n) + 1);
  device_buffer<double> vals{std::size_t(n)}, vo(std::size_t(n) + 1);
  fill_pairs(keys.get(), vals.get(), n, spec_of(4096, 91));
  ko.poison();
  vo.poison();
  device_buffer<std::int32_t> count(1);
  count.poison();
  std::size_t bytes = 0;
  auto const kin    = thrust::device_ptr<std::int64_t const>(keys.get());
  auto const vin    = thrust::device_ptr<double const>(vals.get());
  auto const kout   = thrust::device_ptr<std::int64_t>(ko.get());
  auto const vout   = thrust::device_ptr<double>(vo.get());
  auto const cout   = thrust::device_ptr<std::int32_t>(count.get());
  REQUIRE(tilewise::device::group_by(nullptr, bytes, kin, vin, kout, vout, cout, n, cuda::std::plus<>{}) ==
          cudaSuccess);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  REQUIRE(tilewise::device::group_by(temp.get(), bytes, kin, vin, kout, vout, cout, n, cuda::std::plus<>{}) ==
          cudaSuccess);
  TW_CHECK_LAUNCH();
  verify(keys.get(), vals.get(), n, cuda::std::plus<>{}, ko.get(), vo.get(), read_one(count.get()), n + 1);
}

TEST_CASE("group_by: more than 2^31 pairs (counting iterators)") {
  if (!above_2_31()) {
    MESSAGE("skipped: TILEWISE_TEST_MAX_LOG2 < 31 (the sanitizer runs); the plain CTest run covers it");
    return;
  }
  long long const n = (1ll << 31) + 4099;
  auto const keys   = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), key_mod_1000{});
  auto const ones   = thrust::constant_iterator<long long>(1);
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::group_by(nullptr, bytes, keys, ones, static_cast<std::int32_t*>(nullptr),
                                     static_cast<long long*>(nullptr), static_cast<long long*>(nullptr), n,
                                     cuda::std::plus<>{}) == cudaSuccess);
  std::size_t free_b = 0, total_b = 0;
  TW_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes + (std::size_t(8) << 30) > free_b || bytes > total_b / 10 * 6) {
    MESSAGE("skipped: temp storage for " << n << " pairs is " << (bytes >> 30) << " GiB, free " << (free_b >> 30)
                                         << " GiB");
    return;
  }
  check_counting<long long>(n);
  MESSAGE("ran: " << n << " pairs, " << (bytes >> 30) << " GiB of temp storage, " << (free_b >> 30) << " GiB free");
}

namespace {

using tilewise::detail::distinct_sketch;

constexpr unsigned sketch_block = 256;

/// Feeds the hashes of `distinct` distinct keys, each `copies` times, through per-block registers
/// merged into `global` (zeroed), as group_by's first pass does.
template <class U>
__global__ void sketch_feed_kernel(long long distinct, int copies, unsigned long long seed, unsigned* global) {
  __shared__ unsigned regs[distinct_sketch::registers];
  for (unsigned i = threadIdx.x; i < distinct_sketch::registers; i += sketch_block) regs[i] = 0u;
  __syncthreads();
  long long const total = distinct * copies;
  for (long long j = blockIdx.x * static_cast<long long>(sketch_block) + threadIdx.x; j < total;
       j += static_cast<long long>(sketch_block) * gridDim.x) {
    // an odd multiplier is a bijection modulo 2^bits: the keys of [0, distinct) are distinct
    auto const key = static_cast<U>(static_cast<unsigned long long>(j % distinct) * 0x9E3779B97F4A7C15ull + seed);
    distinct_sketch::add(regs, tilewise::detail::key_hash(key));
  }
  __syncthreads();
  distinct_sketch::merge<sketch_block>(regs, global);
}

__global__ void sketch_estimate_kernel(unsigned const* global, float* out) {
  __shared__ float parts[2 * sketch_block / 32];
  float const e = distinct_sketch::estimate<sketch_block>(global, parts);
  if (threadIdx.x == 0) *out = e;
}

template <class U>
float sketch_estimate(long long distinct, int copies, unsigned long long seed) {
  device_buffer<unsigned> global(distinct_sketch::registers);
  device_buffer<float> out(1);
  TW_CUDA_CHECK(cudaMemset(global.get(), 0, distinct_sketch::registers * sizeof(unsigned)));
  out.poison();
  sketch_feed_kernel<U><<<64, sketch_block>>>(distinct, copies, seed, global.get());
  TW_CHECK_LAUNCH();
  sketch_estimate_kernel<<<1, sketch_block>>>(global.get(), out.get());
  TW_CHECK_LAUNCH();
  return read_one(out.get());
}

}  // namespace

TEST_CASE_TEMPLATE("group_by: the distinct-key sketch estimates 2^15 to 2^21 distinct keys within 20 %", K,
                   std::int32_t, std::int64_t) {
  using U = tilewise::detail::key_bits_t<K>;  // the key's bits, hashed as group_by hashes them
  // One hash in 64 is sampled: at 2^15 keys 512 samples (a standard error near 4.5 %), above
  // that the registers' own 3.3 %. A sample and rank taken from overlapping bits, or a wrong
  // scale, puts the estimate off by a factor of two or more.
  CHECK(sketch_estimate<U>(0, 1, 1) == 0.0f);
  std::vector<long long> sizes{1ll << 15, 1ll << 18};
  if (!sanitizer_run()) sizes.push_back(1ll << 21);
  for (int seed = 1; seed <= seeds(); ++seed) {
    for (long long d : sizes) {
      float const once = sketch_estimate<U>(d, 1, seed);
      CAPTURE(d);
      CAPTURE(seed);
      CHECK(once > 0.8f * static_cast<float>(d));
      CHECK(once < 1.2f * static_cast<float>(d));
      CHECK(sketch_estimate<U>(d, 3, seed) == once);  // repeated keys change nothing
    }
  }
}

TEST_CASE("group_by: num_items == 0 writes 0 groups; bad arguments give cudaErrorInvalidValue") {
  device_buffer<int> keys(64), vals(64), ko(64), vo(64);
  device_buffer<long long> count(1);
  auto const plus = cuda::std::plus<>{};
  std::size_t bytes = 0;
  REQUIRE(tilewise::device::group_by(nullptr, bytes, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), 64ll,
                                     plus) == cudaSuccess);
  CHECK(bytes > 0);
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  int* const no_int        = nullptr;
  long long* const no_count = nullptr;
  auto const call = [&](int* k, int* v, int* kout, int* vout, long long* c, long long n, std::size_t b) {
    return tilewise::device::group_by(temp.get(), b, k, v, kout, vout, c, n, plus);
  };
  CHECK(call(no_int, vals.get(), ko.get(), vo.get(), count.get(), 64, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), no_int, ko.get(), vo.get(), count.get(), 64, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), no_int, vo.get(), count.get(), 64, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), ko.get(), no_int, count.get(), 64, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), ko.get(), vo.get(), no_count, 64, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), ko.get(), vo.get(), no_count, 0, bytes) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), ko.get(), vo.get(), count.get(), 64, bytes - 1) == cudaErrorInvalidValue);
  CHECK(call(keys.get(), vals.get(), ko.get(), vo.get(), count.get(), -1, bytes) == cudaErrorInvalidValue);
  std::size_t q = 0;
  CHECK(tilewise::device::group_by(nullptr, q, keys.get(), vals.get(), ko.get(), vo.get(), count.get(), -1ll, plus) ==
        cudaErrorInvalidValue);
  TW_CHECK_LAUNCH();  // nothing was launched, nothing failed
  // num_items == 0: the count becomes 0, nothing else is written; null inputs and outputs are fine
  ko.poison();
  vo.poison();
  count.poison();
  CHECK(call(keys.get(), vals.get(), ko.get(), vo.get(), count.get(), 0, bytes) == cudaSuccess);
  TW_CHECK_LAUNCH();
  CHECK(read_one(count.get()) == 0);
  CHECK(changed_bytes(ko.get(), 64 * sizeof(int)) == 0);
  CHECK(changed_bytes(vo.get(), 64 * sizeof(int)) == 0);
  count.poison();
  CHECK(call(no_int, no_int, no_int, no_int, count.get(), 0, bytes) == cudaSuccess);
  TW_CHECK_LAUNCH();
  CHECK(read_one(count.get()) == 0);
}
