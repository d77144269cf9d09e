// device::copy_if / copy_flagged / copy_if_unordered against cub::DeviceSelect::If / Flagged on the
// same inputs: every size (0, 1, 2, 31, 33, 1023, 1025, 2^k +- 1 up to 2^28), selectivities 0, 1,
// 50, 99 and 100 %, alternating items and long runs kept or dropped, inputs offset by one
// element, int8 / int32 / int64 / float / double / a 16- and a 12-byte struct, counting and transform
// iterators and device_ptr in, flags of other types and fancy flags, counts of other integer
// types, device lambdas, more than 2^31 elements (32- and 64-bit offsets), two streams at once,
// graph capture (launched twice, the input changed in between), repeated launches on one temp
// storage, temp storage at any address, bad arguments.
// copy_if and copy_flagged must equal CUB bit for bit; copy_if_unordered must give the same
// multiset (both sorted) and the same count. Outputs are poisoned first: everything past the
// count must stay poisoned.
#include <cub/device/device_select.cuh>

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstring>

#include <tilewise/device/copy_if.cuh>
#include <tilewise/device/copy_if_unordered.cuh>

#include "../support/device_data.cuh"
#include "../support/select_data.cuh"

using namespace tw_test;

// The stages of the tuned compactions address their rows with one XOR and an immediate
// (warp_stage::row_item): values, and copy_flagged's values and 1-byte flags.
template <class T, bool Flagged>
constexpr bool rows_by_xor = tilewise::detail::warp_stage<
  T, tilewise::detail::select_params<tilewise::detail::copy_if_tuned, T, Flagged>::items>::rows_by_xor();
template <class T>
constexpr bool flags_by_xor = tilewise::detail::warp_stage<
  std::uint8_t, tilewise::detail::select_params<tilewise::detail::copy_if_tuned, T, true>::items>::rows_by_xor();
static_assert(rows_by_xor<std::int8_t, false> && rows_by_xor<std::int32_t, false> && rows_by_xor<std::int64_t, false> &&
              rows_by_xor<float, false> && rows_by_xor<double, false> && rows_by_xor<mat2, false>);
static_assert(rows_by_xor<std::int32_t, true> && rows_by_xor<double, true> && flags_by_xor<std::int8_t> &&
              flags_by_xor<std::int32_t> && flags_by_xor<double>);
static_assert(!rows_by_xor<s12, false>);

// At namespace scope (not anonymous): kernels taking them keep external linkage.

/// Keeps a value whose lowest bit (of its first byte) is set: the generator below plants the
/// pattern's keep flag there, so copy_if and copy_flagged select the same items.
struct select_bit {
  template <class T>
  __host__ __device__ bool operator()(T const& x) const {
    return (reinterpret_cast<unsigned char const*>(&x)[0] & 1u) != 0;
  }
};

/// Keeps about 1 in 1000 indices (a hash of the index).
struct one_in_1000 {
  __host__ __device__ bool operator()(long long i) const { return mix64(std::uint64_t(i)) % 1000 == 0; }
};
struct mod7_is3 {
  __host__ __device__ bool operator()(long long i) const { return i % 7 == 3; }
};
struct cube_mod {
  __host__ __device__ std::int64_t operator()(long long i) const { return (i * i % 10007) * i % 1000003; }
};
struct odd_i64 {
  __host__ __device__ bool operator()(std::int64_t x) const { return (x & 1) != 0; }
};
struct mod3_is0 {
  __host__ __device__ bool operator()(std::int32_t x) const { return x % 3 == 0; }
};
struct every_third {
  __host__ __device__ bool operator()(long long i) const { return i % 3 == 0; }
};

namespace {

enum class call { copy_if, copy_flagged, unordered };
constexpr call calls[] = {call::copy_if, call::copy_flagged, call::unordered};
char const* call_name(call c) {
  return c == call::copy_if ? "copy_if" : c == call::copy_flagged ? "copy_flagged" : "copy_if_unordered";
}

enum class pattern { none, p1, p50, p99, all, alternating, runs };
constexpr pattern all_patterns[] = {pattern::none, pattern::p1,          pattern::p50, pattern::p99,
                                    pattern::all,  pattern::alternating, pattern::runs};
char const* pattern_name(pattern p) {
  switch (p) {
    case pattern::none: return "0 %";
    case pattern::p1: return "1 %";
    case pattern::p50: return "50 %";
    case pattern::p99: return "99 %";
    case pattern::all: return "100 %";
    case pattern::alternating: return "alternating";
    default: return "runs";
  }
}

__host__ __device__ bool keeps(pattern p, long long i, std::uint64_t r, std::uint64_t seed) {
  switch (p) {
    case pattern::none: return false;
    case pattern::p1: return r % 1000 < 10;
    case pattern::p50: return r % 1000 < 500;
    case pattern::p99: return r % 1000 < 990;
    case pattern::all: return true;
    case pattern::alternating: return i % 2 == 1;
    default: return (mix64(std::uint64_t(i / 4099) ^ seed) & 1) != 0;  // runs of 4099 kept or dropped
  }
}

/// v[i]: random bits with the pattern's keep flag in the lowest bit; flags[i]: the flag.
template <class T>
__global__ void select_input_kernel(T* v, std::uint8_t* flags, long long n, std::uint64_t seed, pattern p) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    std::uint64_t const r = mix64(std::uint64_t(i) ^ mix64(seed));
    bool const k          = keeps(p, i, r, seed);
    T x                   = make_value<T>(mix64(r), values::bits);
    auto* const b         = reinterpret_cast<unsigned char*>(&x);
    b[0]                  = static_cast<unsigned char>((b[0] & ~1u) | (k ? 1u : 0u));
    v[i]                  = x;
    flags[i]              = k;
  }
}

template <class T>
void select_input(T* v, std::uint8_t* flags, long long n, std::uint64_t seed, pattern p) {
  if (n == 0) return;
  select_input_kernel<<<unsigned(std::min(cuda::ceil_div(n, 256ll), 8192ll)), 256>>>(v, flags, n, seed, p);
  TW_CHECK_LAUNCH();
}

__global__ void not_poison_kernel(unsigned char const* p, long long bytes, unsigned long long* bad) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < bytes; i += 256ll * gridDim.x) {
    if (p[i] != 0xA5) atomicAdd(bad, 1ull);
  }
}

/// Bytes of p[0, n) that are not the poison 0xA5.
template <class T>
unsigned long long not_poison(T const* p, long long n) {
  device_buffer<unsigned long long> bad(1);
  bad.upload({0});
  long long const bytes = n * static_cast<long long>(sizeof(T));
  if (bytes > 0) {
    not_poison_kernel<<<unsigned(std::min(cuda::ceil_div(bytes, 256ll), 8192ll)), 256>>>(
      reinterpret_cast<unsigned char const*>(p), bytes, bad.get());
    TW_CHECK_LAUNCH();
  }
  return bad.download()[0];
}

/// Lexicographic order of the 4-byte words of a value (the structs' multiset order).
struct words_less {
  template <class T>
  __host__ __device__ bool operator()(T const& a, T const& b) const {
    std::uint32_t x[sizeof(T) / 4], y[sizeof(T) / 4];  // copies: T may be less aligned than its words
    memcpy(x, &a, sizeof x);
    memcpy(y, &b, sizeof y);
    for (unsigned k = 0; k < sizeof(T) / 4; ++k) {
      if (x[k] != y[k]) return x[k] < y[k];
    }
    return false;
  }
};

template <std::size_t N>
using uint_of = std::conditional_t<N == 1, std::uint8_t,
                                   std::conditional_t<N == 2, std::uint16_t,
                                                      std::conditional_t<N == 4, std::uint32_t, std::uint64_t>>>;

/// Sorts p[0, n) by the bits of its values (a multiset's canonical order).
template <class T>
void sort_bits(T* p, long long n) {
  if (n < 2) return;
  if constexpr (sizeof(T) <= 8) {
    using U = uint_of<sizeof(T)>;
    static_assert(sizeof(U) == sizeof(T));
    if (n <= (1 << 16)) {  // small: on the host (cheap under compute-sanitizer)
      std::vector<U> h(static_cast<std::size_t>(n));
      TW_CUDA_CHECK(cudaMemcpy(h.data(), p, h.size() * sizeof(U), cudaMemcpyDeviceToHost));
      std::sort(h.begin(), h.end());
      TW_CUDA_CHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice));
    } else {
      U* const u = reinterpret_cast<U*>(p);
      thrust::sort(thrust::device, u, u + n);
    }
  } else {
    static_assert(sizeof(T) % 4 == 0);
    thrust::sort(thrust::device, p, p + n, words_less{});
  }
  TW_CHECK_LAUNCH();
}

/// One of our three calls (flags are ignored by copy_if and copy_if_unordered, pred by copy_flagged).
template <class In, class Flags, class Out, class Num, class Pred>
cudaError_t ours_call(call c, void* temp, std::size_t& bytes, In in, Flags flags, Out out, Num num, long long n,
                      Pred pred, cudaStream_t s = 0) {
  switch (c) {
    case call::copy_if: return tilewise::device::copy_if(temp, bytes, in, out, num, n, pred, s);
    case call::copy_flagged: return tilewise::device::copy_flagged(temp, bytes, in, flags, out, num, n, s);
    default: return tilewise::device::copy_if_unordered(temp, bytes, in, out, num, n, pred, s);
  }
}

/// Our call with poisoned temp storage that starts `shift` bytes into its allocation; the count
/// goes to a poisoned Count in device memory and is returned.
template <class Count = long long, class In, class Flags, class Out, class Pred>
long long ours(call c, In in, Flags flags, Out out, long long n, Pred pred, std::size_t shift = 0) {
  device_buffer<Count> count(1);
  count.poison();
  std::size_t bytes = 0;
  REQUIRE(ours_call(c, nullptr, bytes, in, flags, out, count.get(), n, pred) == cudaSuccess);
  device_buffer<unsigned char> temp(bytes + shift);
  temp.poison();
  REQUIRE(ours_call(c, temp.get() + shift, bytes, in, flags, out, count.get(), n, pred) == cudaSuccess);
  TW_CHECK_LAUNCH();
  return static_cast<long long>(read_one(count.get()));
}

/// CUB's stable selection: If with `pred` (copy_if, copy_if_unordered), Flagged with `flags`.
template <class In, class Flags, class Out, class Pred>
long long cub_select_into(call c, In in, Flags flags, Out out, long long n, Pred pred) {
  device_buffer<long long> count(1);
  std::size_t bytes = 0;
  if (c == call::copy_flagged) {
    TW_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, in, flags, out, count.get(), n));
  } else {
    TW_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, count.get(), n, pred));
  }
  device_buffer<unsigned char> temp(bytes);
  if (c == call::copy_flagged) {
    TW_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.get(), bytes, in, flags, out, count.get(), n));
  } else {
    TW_CUDA_CHECK(cub::DeviceSelect::If(temp.get(), bytes, in, out, count.get(), n, pred));
  }
  TW_CHECK_LAUNCH();
  return read_one(count.get());
}

/// Ours against CUB on in[0, n): the counts, the first `count` values (bitwise; unordered: both
/// sorted) and ours past the count still poisoned (a = ours, b = CUB's, both of n + 1 elements).
template <class T, class In, class Flags, class Pred>
void check_call(call c, In in, Flags flags, T* a, T* b, long long n, Pred pred, std::size_t shift = 0) {
  CAPTURE(call_name(c));
  poison(a, n + 1);
  poison(b, n + 1);
  long long const got  = ours(c, in, flags, a, n, pred, shift);
  long long const want = cub_select_into(c, in, flags, b, n, pred);
  REQUIRE(got == want);
  if (c == call::unordered) {
    sort_bits(a, want);
    sort_bits(b, want);
  }
  mismatch const m = compare_bits(a, b, want);
  CHECK(m.count == 0);
  if (m.count) MESSAGE("first difference at index " << m.first);
  CHECK(not_poison(a + want, n + 1 - want) == 0);
}

/// All three calls on one generated input of n (+ 1 for the offset) elements.
template <class T>
void check_pattern(long long n, pattern p, int offset, std::uint64_t seed, device_buffer<T>& in,
                   device_buffer<std::uint8_t>& flags, device_buffer<T>& a, device_buffer<T>& b) {
  CAPTURE(n);
  CAPTURE(offset);
  CAPTURE(pattern_name(p));
  CAPTURE(seed);
  select_input(in.get(), flags.get(), n + offset, seed, p);
  for (call c : calls) {
    check_call(c, in.get() + offset, flags.get() + offset, a.get(), b.get(), n, select_bit{});
  }
}

template <class T>
struct select_buffers {
  device_buffer<T> in, a, b;
  device_buffer<std::uint8_t> flags;
  explicit select_buffers(long long largest)
      : in(std::size_t(largest) + 2), a(std::size_t(largest) + 2), b(std::size_t(largest) + 2),
        flags(std::size_t(largest) + 2) {}
};

/// Sizes for the types other than int32: a subset of test_sizes() (every size class, fewer sizes).
std::vector<long long> some_sizes() {
  std::vector<long long> s;
  for (long long n : test_sizes()) {
    if (n <= 33 || n == 1023 || n == 1025 || n == (1 << 12) + 1 || n == (1 << 13) - 1 || n == (1 << 16) + 1 ||
        n == (1 << 20) - 1 || n == (1 << 24) + 1 || n == (1 << 28) - 1) {
      s.push_back(n);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: int32, every size and selectivity, vs CUB") {
  auto const sizes = test_sizes();
  select_buffers<std::int32_t> buf(sizes.back());
  for (long long n : sizes) {
    int const rounds = n <= (1 << 16) + 1 ? seeds(2) : 1;
    for (int s = 0; s < rounds; ++s) {
      for (pattern p : all_patterns) {
        check_pattern(n, p, 0, 1000 * n + s, buf.in, buf.flags, buf.a, buf.b);
      }
      for (pattern p : {pattern::p50, pattern::runs}) {  // offset by one element: unaligned segments
        check_pattern(n, p, 1, 7000 * n + s, buf.in, buf.flags, buf.a, buf.b);
      }
    }
  }
}

TEST_CASE_TEMPLATE("copy_if, copy_flagged, copy_if_unordered: other types, vs CUB", T, std::int8_t, std::int64_t,
                   float, double, mat2, s12) {
  // int8 tiles hold 128 items per thread (copy_flagged: 80, beside its flags), 8-byte ones 16, the
  // 16-byte struct 4 (element by element, no vectors). The 12-byte struct's slots are not a power
  // of two bytes: its rows are addressed item by item (warp_stage::row_item's other path).
  auto const sizes = some_sizes();
  select_buffers<T> buf(sizes.back());
  for (long long n : sizes) {
    for (pattern p : {pattern::p1, pattern::p50, pattern::runs, pattern::all}) {
      check_pattern(n, p, 0, 31 * n + 5, buf.in, buf.flags, buf.a, buf.b);
    }
    check_pattern(n, pattern::p50, 1, 37 * n + 5, buf.in, buf.flags, buf.a, buf.b);
  }
}

TEST_CASE("copy_if: counting and transform iterators in, device_ptr in and out, vs CUB") {
  for (long long n : {1ll, 3000ll, (1ll << 20) + 3}) {
    CAPTURE(n);
    device_buffer<long long> a{std::size_t(n) + 1}, b{std::size_t(n) + 1};
    thrust::counting_iterator<long long> first(-7);
    for (call c : {call::copy_if, call::unordered}) {
      check_call(c, first, static_cast<std::uint8_t const*>(nullptr), a.get(), b.get(), n, mod7_is3{});
    }
    device_buffer<std::int64_t> x{std::size_t(n) + 1}, y{std::size_t(n) + 1};
    auto cubes = thrust::make_transform_iterator(first, cube_mod{});
    for (call c : {call::copy_if, call::unordered}) {
      check_call(c, cubes, static_cast<std::uint8_t const*>(nullptr), x.get(), y.get(), n, odd_i64{});
    }
    // the counting input against its closed form
    a.poison();
    long long const got = ours(call::copy_if, first, static_cast<std::uint8_t const*>(nullptr), a.get(), n, mod7_is3{});
    auto const h        = a.download();
    long long k         = 0;
    bool ok             = true;
    for (long long i = -7; i < n - 7; ++i) {
      if (i % 7 == 3) ok &= h[std::size_t(k++)] == i;
    }
    CHECK(got == k);
    CHECK(ok);
  }
  // device_ptr in, out and count (an unsigned count), aligned and offset by one
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 5);
  select_buffers<std::int32_t> buf(n);
  for (int offset : {0, 1}) {
    CAPTURE(offset);
    select_input(buf.in.get(), buf.flags.get(), n + 1, 44, pattern::p50);
    for (call c : calls) {
      CAPTURE(call_name(c));
      buf.a.poison();
      buf.b.poison();
      long long const got = ours<unsigned>(c, thrust::device_ptr<std::int32_t const>(buf.in.get() + offset),
                                           thrust::device_ptr<std::uint8_t const>(buf.flags.get() + offset),
                                           thrust::device_ptr<std::int32_t>(buf.a.get()), n, select_bit{});
      long long const want =
        cub_select_into(c, buf.in.get() + offset, buf.flags.get() + offset, buf.b.get(), n, select_bit{});
      REQUIRE(got == want);
      if (c == call::unordered) {
        sort_bits(buf.a.get(), want);
        sort_bits(buf.b.get(), want);
      }
      CHECK(compare_bits(buf.a.get(), buf.b.get(), want).count == 0);
    }
  }
}

TEST_CASE("copy_flagged: flags of other types and fancy flags; counts of other integer types") {
  long long const n = std::min(1ll << max_log2(), (1ll << 20) + 7);
  select_buffers<std::int32_t> buf(n);
  select_input(buf.in.get(), buf.flags.get(), n, 9, pattern::p50);
  auto const f8 = buf.flags.download();
  std::vector<int> fi(f8.size());
  std::vector<char> fb(f8.size());  // bool's bytes
  for (std::size_t i = 0; i < f8.size(); ++i) {
    fi[i] = f8[i] ? (i % 2 ? -int(i % 5) - 1 : int(i % 5) * 256 + 256) : 0;  // any non-zero value, 256 too
    fb[i] = f8[i];
  }
  device_buffer<int> flags_int(fi);
  device_buffer<bool> flags_bool(f8.size());
  TW_CUDA_CHECK(cudaMemcpy(flags_bool.get(), fb.data(), fb.size(), cudaMemcpyHostToDevice));
  long long const want = cub_select_into(call::copy_flagged, buf.in.get(), buf.flags.get(), buf.b.get(), n, select_bit{});
  auto const check = [&](long long got) {
    REQUIRE(got == want);
    CHECK(compare_bits(buf.a.get(), buf.b.get(), want).count == 0);
    CHECK(not_poison(buf.a.get() + want, n - want) == 0);
  };
  buf.a.poison();
  check(ours(call::copy_flagged, buf.in.get(), flags_int.get(), buf.a.get(), n, select_bit{}));
  buf.a.poison();
  check(ours(call::copy_flagged, buf.in.get(), flags_bool.get(), buf.a.get(), n, select_bit{}));
  // fancy flags: every third index, against CUB on the same iterator
  auto const thirds = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), every_third{});
  check_call(call::copy_flagged, buf.in.get(), thirds, buf.a.get(), buf.b.get(), n, select_bit{});
  // counts of other integer types
  for (call c : calls) {
    CAPTURE(call_name(c));
    long long const w = cub_select_into(c, buf.in.get(), buf.flags.get(), buf.b.get(), n, select_bit{});
    CHECK(ours<int>(c, buf.in.get(), buf.flags.get(), buf.a.get(), n, select_bit{}) == w);
    CHECK(ours<unsigned long long>(c, buf.in.get(), buf.flags.get(), buf.a.get(), n, select_bit{}) == w);
    CHECK(ours<std::int16_t>(c, buf.in.get(), buf.flags.get(), buf.a.get(), 3000, select_bit{}) ==
          cub_select_into(c, buf.in.get(), buf.flags.get(), buf.b.get(), 3000, select_bit{}));
  }
}

TEST_CASE("copy_if, copy_if_unordered: a device lambda as the predicate") {
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 3);
  select_buffers<std::int32_t> buf(n);
  fill(buf.in.get(), n, 5);
  auto const pred      = [] __device__(std::int32_t x) { return x % 3 == 0; };
  long long const want = cub_select_into(call::copy_if, buf.in.get(), buf.flags.get(), buf.b.get(), n, mod3_is0{});
  for (call c : {call::copy_if, call::unordered}) {
    CAPTURE(call_name(c));
    buf.a.poison();
    REQUIRE(ours(c, buf.in.get(), buf.flags.get(), buf.a.get(), n, pred) == want);
    if (c == call::unordered) {  // CUB's order against ours, both sorted
      sort_bits(buf.a.get(), want);
      sort_bits(buf.b.get(), want);
    }
    CHECK(compare_bits(buf.a.get(), buf.b.get(), want).count == 0);
    CHECK(not_poison(buf.a.get() + want, n - want) == 0);
  }
}

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: temp storage at any address, as CUB accepts") {
  // 32-bit offsets: 8-byte records; the cursor: 8-byte words
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 3);
  select_buffers<std::int64_t> buf(n);
  select_input(buf.in.get(), buf.flags.get(), n, 77, pattern::p50);
  for (call c : calls) {
    for (std::size_t shift : {1, 8, 200}) {
      CAPTURE(shift);
      check_call(c, buf.in.get(), buf.flags.get(), buf.a.get(), buf.b.get(), n, select_bit{}, shift);
    }
  }
}

TEST_CASE("copy_if, copy_if_unordered: 20 launches in a row on one temp storage, the input changing") {
  // Records of earlier launches (look-back) and the cursor (unordered) must never be taken for
  // this launch's.
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 1);
  select_buffers<std::int32_t> buf(n);
  for (call c : {call::copy_if, call::unordered}) {
    CAPTURE(call_name(c));
    device_buffer<long long> count(1);
    std::size_t bytes = 0;
    REQUIRE(ours_call(c, nullptr, bytes, buf.in.get(), buf.flags.get(), buf.a.get(), count.get(), n, select_bit{}) ==
            cudaSuccess);
    device_buffer<unsigned char> temp(bytes);
    temp.poison();
    int failures = 0;
    for (int rep = 0; rep < 20; ++rep) {
      select_input(buf.in.get(), buf.flags.get(), n, 100 + rep, rep % 2 ? pattern::p50 : pattern::p99);
      buf.a.poison();
      REQUIRE(ours_call(c, temp.get(), bytes, buf.in.get(), buf.flags.get(), buf.a.get(), count.get(), n,
                        select_bit{}) == cudaSuccess);
      TW_CHECK_LAUNCH();
      long long const want = cub_select_into(c, buf.in.get(), buf.flags.get(), buf.b.get(), n, select_bit{});
      long long const got  = read_one(count.get());
      if (c == call::unordered) {
        sort_bits(buf.a.get(), std::min(got, n));
        sort_bits(buf.b.get(), want);
      }
      failures += got != want || compare_bits(buf.a.get(), buf.b.get(), want).count != 0;
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: temp storage never written (straight from cudaMalloc)") {
  // Right results on whatever the memory held; under compute-sanitizer's initcheck the calls'
  // marks (look-back tags, the unordered cursor) must keep it from reporting reads of it.
  long long const n = std::min(1ll << max_log2(), (1ll << 20) + 5);
  select_buffers<std::int32_t> buf(n);
  select_input(buf.in.get(), buf.flags.get(), n, 91, pattern::p50);
  for (call c : calls) {
    CAPTURE(call_name(c));
    device_buffer<long long> count(1);
    std::size_t bytes = 0;
    REQUIRE(ours_call(c, nullptr, bytes, buf.in.get(), buf.flags.get(), buf.a.get(), count.get(), n, select_bit{}) ==
            cudaSuccess);
    void* temp = nullptr;
    TW_CUDA_CHECK(cudaMalloc(&temp, bytes));
    buf.a.poison();
    cudaError_t const rc =
      ours_call(c, temp, bytes, buf.in.get(), buf.flags.get(), buf.a.get(), count.get(), n, select_bit{});
    cudaError_t const done = cudaDeviceSynchronize();
    TW_CUDA_CHECK(cudaFree(temp));
    REQUIRE(rc == cudaSuccess);
    REQUIRE(done == cudaSuccess);
    long long const want = cub_select_into(c, buf.in.get(), buf.flags.get(), buf.b.get(), n, select_bit{});
    long long const got  = read_one(count.get());
    REQUIRE(got == want);
    if (c == call::unordered) {
      sort_bits(buf.a.get(), got);
      sort_bits(buf.b.get(), want);
    }
    CHECK(compare_bits(buf.a.get(), buf.b.get(), want).count == 0);
  }
}

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: more than 2^31 elements (counting input, ~1 in 1000 kept)") {
  if (!above_2_31()) {
    MESSAGE("skipped: TILEWISE_TEST_MAX_LOG2 < 31 (the sanitizer runs); the plain CTest run covers it");
    return;
  }
  thrust::counting_iterator<long long> first(0);
  auto const flags = thrust::make_transform_iterator(first, one_in_1000{});
  // 2^31 + 4099: 32-bit offsets; 2^32 + 12345: 64-bit offsets (counts past 2^32 cannot occur
  // here, but the offset type changes at num_items > 2^32 - 1)
  for (long long n : {(1ll << 31) + 4099, (1ll << 32) + 12345}) {
    CAPTURE(n);
    std::size_t const cap = std::size_t(n / 900);
    device_buffer<long long> a{cap}, b{cap};
    for (call c : calls) {
      CAPTURE(call_name(c));
      a.poison();
      b.poison();
      long long const got  = ours(c, first, flags, a.get(), n, one_in_1000{});
      long long const want = cub_select_into(c, first, flags, b.get(), n, one_in_1000{});
      REQUIRE(got == want);
      REQUIRE(want < static_cast<long long>(cap));
      if (c == call::unordered) {
        sort_bits(a.get(), want);
        sort_bits(b.get(), want);
      }
      CHECK(compare_bits(a.get(), b.get(), want).count == 0);
      CHECK(not_poison(a.get() + want, static_cast<long long>(cap) - want) == 0);
    }
  }
}

TEST_CASE("copy_if, copy_if_unordered: two streams at once with separate temp storage") {
  long long const n = std::min(1ll << max_log2(), 1ll << 26);
  select_buffers<float> x(n), y(n);
  select_input(x.in.get(), x.flags.get(), n, 1, pattern::p50);
  select_input(y.in.get(), y.flags.get(), n, 2, pattern::p99);
  long long const wx = cub_select_into(call::copy_if, x.in.get(), x.flags.get(), x.b.get(), n, select_bit{});
  long long const wy = cub_select_into(call::unordered, y.in.get(), y.flags.get(), y.b.get(), n, select_bit{});
  cudaStream_t s[2];
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  device_buffer<long long> cx(1), cy(1);
  std::size_t bx = 0, by = 0;
  REQUIRE(tilewise::device::copy_if(nullptr, bx, x.in.get(), x.a.get(), cx.get(), n, select_bit{}) == cudaSuccess);
  REQUIRE(tilewise::device::copy_if_unordered(nullptr, by, y.in.get(), y.a.get(), cy.get(), n, select_bit{}) ==
          cudaSuccess);
  device_buffer<unsigned char> tx(bx), ty(by);
  tx.poison();
  ty.poison();
  x.a.poison();
  y.a.poison();
  // The memsets above run on the legacy default stream, which non-blocking streams do not wait for.
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < 8; ++rep) {
    REQUIRE(tilewise::device::copy_if(tx.get(), bx, x.in.get(), x.a.get(), cx.get(), n, select_bit{}, s[0]) ==
            cudaSuccess);
    REQUIRE(tilewise::device::copy_if_unordered(ty.get(), by, y.in.get(), y.a.get(), cy.get(), n, select_bit{},
                                                s[1]) == cudaSuccess);
  }
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamSynchronize(st));
  TW_CHECK_LAUNCH();
  REQUIRE(read_one(cx.get()) == wx);
  REQUIRE(read_one(cy.get()) == wy);
  CHECK(compare_bits(x.a.get(), x.b.get(), wx).count == 0);
  sort_bits(y.a.get(), wy);
  sort_bits(y.b.get(), wy);
  CHECK(compare_bits(y.a.get(), y.b.get(), wy).count == 0);
  for (auto& st : s) TW_CUDA_CHECK(cudaStreamDestroy(st));
}

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: captured in a graph, launched twice with new input") {
  // A graph repeats its kernels' arguments, launch epochs included: the calls clear their records
  // (and the cursor) when captured, so the second launch cannot read the first one's.
  long long const n = std::min(1ll << max_log2(), (1ll << 22) + 9);
  select_buffers<std::int32_t> buf(n);
  device_buffer<std::int32_t> a2{std::size_t(n) + 1}, a3{std::size_t(n) + 1};
  device_buffer<long long> counts(3);
  std::size_t b1 = 0, b2 = 0, b3 = 0;
  REQUIRE(tilewise::device::copy_if(nullptr, b1, buf.in.get(), buf.a.get(), counts.get(), n, select_bit{}) ==
          cudaSuccess);
  REQUIRE(tilewise::device::copy_flagged(nullptr, b2, buf.in.get(), buf.flags.get(), a2.get(), counts.get() + 1, n) ==
          cudaSuccess);
  REQUIRE(tilewise::device::copy_if_unordered(nullptr, b3, buf.in.get(), a3.get(), counts.get() + 2, n,
                                              select_bit{}) == cudaSuccess);
  device_buffer<unsigned char> t1(b1), t2(b2), t3(b3);
  t1.poison();
  t2.poison();
  t3.poison();
  TW_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  TW_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  TW_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  REQUIRE(tilewise::device::copy_if(t1.get(), b1, buf.in.get(), buf.a.get(), counts.get(), n, select_bit{}, s) ==
          cudaSuccess);
  REQUIRE(tilewise::device::copy_flagged(t2.get(), b2, buf.in.get(), buf.flags.get(), a2.get(), counts.get() + 1, n,
                                         s) == cudaSuccess);
  REQUIRE(tilewise::device::copy_if_unordered(t3.get(), b3, buf.in.get(), a3.get(), counts.get() + 2, n,
                                              select_bit{}, s) == cudaSuccess);
  TW_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  TW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 2; ++launch) {
    CAPTURE(launch);
    select_input(buf.in.get(), buf.flags.get(), n, 500 + launch, launch ? pattern::p50 : pattern::p99);
    buf.a.poison();
    a2.poison();
    a3.poison();
    TW_CUDA_CHECK(cudaDeviceSynchronize());
    TW_CUDA_CHECK(cudaGraphLaunch(exec, s));
    TW_CUDA_CHECK(cudaStreamSynchronize(s));
    TW_CHECK_LAUNCH();
    auto const got       = counts.download();
    long long const want = cub_select_into(call::copy_if, buf.in.get(), buf.flags.get(), buf.b.get(), n, select_bit{});
    REQUIRE(got[0] == want);
    REQUIRE(got[1] == want);
    REQUIRE(got[2] == want);
    CHECK(compare_bits(buf.a.get(), buf.b.get(), want).count == 0);
    CHECK(compare_bits(a2.get(), buf.b.get(), want).count == 0);
    sort_bits(a3.get(), want);
    sort_bits(buf.b.get(), want);
    CHECK(compare_bits(a3.get(), buf.b.get(), want).count == 0);
    CHECK(not_poison(a3.get() + want, n + 1 - want) == 0);
  }
  TW_CUDA_CHECK(cudaGraphExecDestroy(exec));
  TW_CUDA_CHECK(cudaGraphDestroy(graph));
  TW_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_CASE("copy_if, copy_flagged, copy_if_unordered: num_items == 0 writes 0 only; bad arguments") {
  device_buffer<int> in(64), out(64);
  device_buffer<std::uint8_t> flags(64);
  device_buffer<long long> count(1);
  fill(in.get(), 64, 4);
  fill(flags.get(), 64, 4);
  auto const pred      = select_bit{};
  int* const null_int  = nullptr;
  long long* const nc  = nullptr;
  std::uint8_t* const nf = nullptr;
  long long poisoned;
  std::memset(&poisoned, 0xA5, sizeof poisoned);
  for (call c : calls) {
    CAPTURE(call_name(c));
    std::size_t bytes = 0;
    REQUIRE(ours_call(c, nullptr, bytes, in.get(), flags.get(), out.get(), count.get(), 64, pred) == cudaSuccess);
    device_buffer<unsigned char> temp(bytes);
    temp.poison();
    std::size_t small = bytes - 1;
    out.poison();
    count.poison();
    // num_items == 0: the count is 0, nothing else is written; null in / out / flags allowed
    CHECK(ours_call(c, temp.get(), bytes, in.get(), flags.get(), out.get(), count.get(), 0, pred) == cudaSuccess);
    TW_CHECK_LAUNCH();
    CHECK(read_one(count.get()) == 0);
    count.poison();
    CHECK(ours_call(c, temp.get(), bytes, null_int, nf, null_int, count.get(), 0, pred) == cudaSuccess);
    TW_CHECK_LAUNCH();
    CHECK(read_one(count.get()) == 0);
    count.poison();
    CHECK(ours_call(c, temp.get(), bytes, null_int, flags.get(), out.get(), count.get(), 64, pred) ==
          cudaErrorInvalidValue);
    CHECK(ours_call(c, temp.get(), bytes, in.get(), flags.get(), null_int, count.get(), 64, pred) ==
          cudaErrorInvalidValue);
    CHECK(ours_call(c, temp.get(), bytes, in.get(), flags.get(), out.get(), nc, 64, pred) == cudaErrorInvalidValue);
    CHECK(ours_call(c, temp.get(), bytes, in.get(), flags.get(), out.get(), nc, 0, pred) == cudaErrorInvalidValue);
    CHECK(ours_call(c, temp.get(), bytes, thrust::device_ptr<int>(), flags.get(), out.get(), count.get(), 64, pred) ==
          cudaErrorInvalidValue);  // a null device_ptr is a null pointer too
    CHECK(ours_call(c, temp.get(), small, in.get(), flags.get(), out.get(), count.get(), 64, pred) ==
          cudaErrorInvalidValue);
    CHECK(ours_call(c, temp.get(), bytes, in.get(), flags.get(), out.get(), count.get(), -3, pred) ==
          cudaErrorInvalidValue);
    if (c == call::copy_flagged) {
      CHECK(ours_call(c, temp.get(), bytes, in.get(), nf, out.get(), count.get(), 64, pred) == cudaErrorInvalidValue);
    }
    TW_CHECK_LAUNCH();
    CHECK(read_one(count.get()) == poisoned);
    CHECK(not_poison(out.get(), 64) == 0);
  }
}
