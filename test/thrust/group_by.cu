// tilewise::group_by against the Thrust way of grouping (thrust::sort_by_key, then
// thrust::reduce_by_key) on the same pairs: our rows, sorted by key, must equal Thrust's; int32 and
// int64 keys with 1, 100 and ~n distinct values, int32 and float values (integer-valued: exact
// sums), plus (the form without an operator too), typed minimum and maximum, device_vector
// iterators, device_ptr, raw pointers and fancy values, under every policy form.
#include <thrust/reduce.h>
#include <thrust/sort.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/thrust/group_by.cuh>

#include "thrust_check.cuh"

using namespace tw_thrust;

namespace group_by_test {

template <class K>
struct keys_mod {
  std::uint64_t distinct;
  __host__ __device__ K operator()(std::int64_t i) const {
    return K(tw_test::mix64(std::uint64_t(i) + 99) % distinct) * K(3) - K(7);  // negative keys too
  }
};

/// Sorts (keys, values) [0, rows) by key and returns both, resized to rows.
template <class K, class V>
void sort_rows(thrust::device_vector<K>& keys, thrust::device_vector<V>& values, std::int64_t rows) {
  keys.resize(std::size_t(rows));
  values.resize(std::size_t(rows));
  thrust::sort_by_key(thrust::cuda::par, keys.begin(), keys.end(), values.begin());
}

/// Thrust's grouping of (keys, values) under op: sort_by_key on copies, then reduce_by_key.
template <class K, class V, class Op>
std::int64_t thrust_group(thrust::device_vector<K> keys, thrust::device_vector<V> values, Op op,
                          thrust::device_vector<K>& keys_out, thrust::device_vector<V>& values_out) {
  thrust::sort_by_key(thrust::cuda::par, keys.begin(), keys.end(), values.begin());
  keys_out.resize(keys.size());
  values_out.resize(values.size());
  auto const ends = thrust::reduce_by_key(thrust::cuda::par, keys.begin(), keys.end(), values.begin(),
                                          keys_out.begin(), values_out.begin(), cuda::std::equal_to<>{}, op);
  std::int64_t const rows = ends.first - keys_out.begin();
  keys_out.resize(std::size_t(rows));
  values_out.resize(std::size_t(rows));
  return rows;
}

template <class K, class V>
void check() {
  test_stream stream;
  for (std::int64_t n : sizes()) {
    for (std::uint64_t distinct : {std::uint64_t(1), std::uint64_t(100), std::uint64_t(n) + 1}) {
      CAPTURE(n);
      CAPTURE(distinct);
      auto const keys          = materialize<K>(n, keys_mod<K>{distinct});
      small_values<V> const gv = {std::uint64_t(n) * 5 + distinct};
      auto const values        = materialize<V>(n, gv);
      auto const fv            = fancy(gv);
      thrust::device_vector<K> sk, mk, xk;
      thrust::device_vector<V> sv, mv, xv;
      std::int64_t const sum_rows = thrust_group(keys, values, cuda::std::plus<>{}, sk, sv);
      std::int64_t const min_rows = thrust_group(keys, values, thrust::minimum<V>{}, mk, mv);
      std::int64_t const max_rows = thrust_group(keys, values, cuda::maximum<>{}, xk, xv);
      auto const expect = [&](auto& ko, auto& vo, auto ends, std::int64_t rows, auto const& ek, auto const& ev) {
        CHECK(ends.first - ko.begin() == rows);
        CHECK(ends.second - vo.begin() == rows);
        sort_rows(ko, vo, ends.first - ko.begin());
        CHECK(differences(ko, ek) == 0);
        CHECK(differences(vo, ev) == 0);
      };
      each_policy(stream.get(), n > 0, [&](auto const& p) {
        std::size_t const m = std::size_t(n) + 1;
        {
          thrust::device_vector<K> ko(m);
          thrust::device_vector<V> vo(m);
          expect(ko, vo, tilewise::group_by(p, keys.begin(), keys.end(), values.begin(), ko.begin(), vo.begin()),
                 sum_rows, sk, sv);
        }
        {
          thrust::device_vector<K> ko(m);
          thrust::device_vector<V> vo(m);
          auto const e = tilewise::group_by(p, keys.data(), keys.data() + n, values.data(), ko.data(), vo.data(),
                                            thrust::minimum<V>{});
          expect(ko, vo, thrust::make_pair(ko.begin() + (e.first - ko.data()), vo.begin() + (e.second - vo.data())),
                 min_rows, mk, mv);
        }
        {
          thrust::device_vector<K> ko(m);
          thrust::device_vector<V> vo(m);
          K const* rk = thrust::raw_pointer_cast(keys.data());
          K* const ok = thrust::raw_pointer_cast(ko.data());
          V* const ov = thrust::raw_pointer_cast(vo.data());
          auto const e = tilewise::group_by(p, rk, rk + n, fv, ok, ov, cuda::maximum<>{});  // fancy values
          expect(ko, vo, thrust::make_pair(ko.begin() + (e.first - ok), vo.begin() + (e.second - ov)), max_rows, xk,
                 xv);
        }
      });
    }
  }
}

}  // namespace group_by_test

using namespace group_by_test;

TEST_CASE("tilewise::group_by = thrust sort_by_key + reduce_by_key: int32 keys, int32 values") {
  check<std::int32_t, std::int32_t>();
}
TEST_CASE("tilewise::group_by = thrust sort_by_key + reduce_by_key: int64 keys, float values") {
  check<std::int64_t, float>();
}

TEST_CASE("tilewise::group_by: invalid arguments") {
  thrust::device_vector<int> k(10, 1), v(10, 2), ko(10), vo(10);
  thrust::device_ptr<int> const null(static_cast<int*>(nullptr));
  using E = std::invalid_argument;
  auto const par = thrust::cuda::par;
  CHECK_THROWS_WITH_AS(tilewise::group_by(par, k.end(), k.begin(), v.begin(), ko.begin(), vo.begin()),
                       "tilewise::group_by: keys_last < keys_first", E);
  CHECK_THROWS_WITH_AS(tilewise::group_by(par, k.begin(), k.end(), null, ko.begin(), vo.begin()),
                       "tilewise::group_by: values_first is a null pointer", E);
  CHECK_THROWS_WITH_AS(tilewise::group_by(par, k.begin(), k.end(), v.begin(), null, vo.begin()),
                       "tilewise::group_by: keys_result is a null pointer", E);
  auto const e = tilewise::group_by(par, null, null, null, ko.begin(), vo.begin());
  CHECK(e.first == ko.begin());
  CHECK(e.second == vo.begin());
}
