/// @file
/// @brief tilewise::group_by: unsorted reduce-by-key on Thrust CUDA policies, in
///        thrust::reduce_by_key's style (but one output row per distinct key, not per run of equal
///        keys, in unspecified order), computed by device::group_by.
#pragma once

#include <cstdint>

#include <cuda/std/functional>

#include <thrust/iterator/iterator_traits.h>
#include <thrust/pair.h>

#include <tilewise/detail/thrust/canonical.cuh>
#include <tilewise/detail/thrust/policy.cuh>
#include <tilewise/detail/thrust/two_phase.cuh>
#include <tilewise/device/group_by.cuh>

namespace tilewise {

/// @brief Group-by: for every distinct key of [keys_first, keys_last), one output row (the key
///        in `keys_result`, the `op`-reduction of its values in `values_result`), rows in
///        unspecified order; pair i is `(keys_first[i], values_first[i])`.
/// @tparam Derived   a Thrust CUDA policy: thrust::cuda::par, par_nosync, their `.on(stream)` and
///                   `(alloc)` forms, thrust::device
/// @tparam KeysIt    random-access iterator to int32, uint32, int64 or uint64 keys (every value valid)
/// @tparam ValuesIt  random-access iterator to trivially copyable values; the aggregates have its
///                   value type
/// @tparam KeysOut   random-access output iterator for the keys
/// @tparam ValuesOut random-access output iterator for the aggregates
/// @tparam Op        commutative, associative binary functor on the values
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param keys_first    the first key
/// @param keys_last     one past the last key
/// @param values_first  the first value
/// @param keys_result   receives the distinct keys
/// @param values_result receives each key's reduction
/// @param op            the reduction operator
/// @return the ends of both outputs, `{keys_result + rows, values_result + rows}`
/// @throws std::invalid_argument when keys_last < keys_first or a pointer is null;
///         thrust::system_error for a CUDA error; what the policy's allocator throws
/// @note Waits for the stream under every policy, par_nosync included: the output ends depend on
///       the row count computed on the device (as thrust::reduce_by_key). Integer aggregates and
///       the set of rows are deterministic; floating-point sums may differ in the last bits from
///       run to run. An empty range returns the outputs' beginnings.
template <class Derived, class KeysIt, class ValuesIt, class KeysOut, class ValuesOut, class Op>
thrust::pair<KeysOut, ValuesOut> group_by(thrust::cuda_cub::execution_policy<Derived> const& policy,
                                          KeysIt keys_first, KeysIt keys_last, ValuesIt values_first,
                                          KeysOut keys_result, ValuesOut values_result, Op op) {
  constexpr char const* call = "tilewise::group_by";
  auto& p                    = detail::derived_policy(policy);
  std::int64_t const n       = detail::checked_count(keys_first, keys_last, call, "keys_last < keys_first");
  if (n == 0) {
    return {keys_result, values_result};
  }
  using V         = typename thrust::iterator_traits<ValuesIt>::value_type;
  auto const keys = detail::canonical_input(keys_first);
  auto const vals = detail::canonical_input(values_first);
  auto const kout = detail::canonical_iterator(keys_result);
  auto const vout = detail::canonical_iterator(values_result);
  detail::check_not_null(keys, call, "keys_first is a null pointer");
  detail::check_not_null(vals, call, "values_first is a null pointer");
  detail::check_not_null(kout, call, "keys_result is a null pointer");
  detail::check_not_null(vout, call, "values_result is a null pointer");
  auto const o            = detail::canonical<V>(op);
  std::int64_t const rows = detail::run_two_phase_result<std::int64_t>(
    p,
    [&](void* temp, std::size_t& bytes, std::int64_t* groups, cudaStream_t s) {
      return device::group_by(temp, bytes, keys, vals, kout, vout, groups, n, o, s);
    },
    call);
  return {keys_result + rows, values_result + rows};
}

/// @brief Group-by with plus: `group_by(policy, keys_first, keys_last, values_first,
///        keys_result, values_result, plus<>)`.
/// @param policy        the Thrust CUDA policy: stream, allocator (scratch), synchronization
/// @param keys_first    the first key
/// @param keys_last     one past the last key
/// @param values_first  the first value
/// @param keys_result   receives the distinct keys
/// @param values_result receives each key's reduction
/// @return the ends of both outputs
/// @note Waits for the stream under every policy, as the form with an operator.
template <class Derived, class KeysIt, class ValuesIt, class KeysOut, class ValuesOut>
thrust::pair<KeysOut, ValuesOut> group_by(thrust::cuda_cub::execution_policy<Derived> const& policy,
                                          KeysIt keys_first, KeysIt keys_last, ValuesIt values_first,
                                          KeysOut keys_result, ValuesOut values_result) {
  return tilewise::group_by(policy, keys_first, keys_last, values_first, keys_result, values_result,
                            cuda::std::plus<>{});
}

}  // namespace tilewise
