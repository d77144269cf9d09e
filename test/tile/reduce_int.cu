// tile::reduce on integers: the redux.sync path (<= 32-bit with plus/min/max/and/or/xor, libcu++
// and CG functors), the shuffle path (int64, user operators) and int8 widening.
#include <cooperative_groups/reduce.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include "reduce_check.cuh"

using namespace tw_test;
namespace cg = cooperative_groups;

TEST_CASE("tile::reduce int8") {
  check_reduce_all_widths<std::int8_t, cuda::std::plus<>>();
  check_reduce_all_widths<std::int8_t, cuda::minimum<>>();
  check_reduce_all_widths<std::int8_t, cuda::maximum<>>();
  check_reduce_all_widths<std::int8_t, cuda::std::bit_xor<>>();
}

TEST_CASE("tile::reduce int32") {
  check_reduce_all_widths<std::int32_t, cuda::std::plus<>>();
  check_reduce_all_widths<std::int32_t, cuda::std::plus<std::int32_t>>();
  check_reduce_all_widths<std::int32_t, cuda::minimum<>>();
  check_reduce_all_widths<std::int32_t, cuda::maximum<>>();
  check_reduce_all_widths<std::int32_t, cuda::std::bit_and<>>();
  check_reduce_all_widths<std::int32_t, cuda::std::bit_or<>>();
  check_reduce_all_widths<std::int32_t, cuda::std::bit_xor<>>();
  check_reduce_all_widths<std::int32_t, cg::plus<std::int32_t>>();
  check_reduce_all_widths<std::int32_t, cg::greater<std::int32_t>>();
  check_reduce_all_widths<std::int32_t, user_plus>();
}

TEST_CASE("tile::reduce uint32") {
  check_reduce_all_widths<std::uint32_t, cuda::std::plus<>>();
  check_reduce_all_widths<std::uint32_t, cuda::minimum<>>();
  check_reduce_all_widths<std::uint32_t, cuda::maximum<>>();
  check_reduce_all_widths<std::uint32_t, cuda::std::bit_or<>>();
}

TEST_CASE("tile::reduce int64") {
  check_reduce_all_widths<std::int64_t, cuda::std::plus<>>();
  check_reduce_all_widths<std::int64_t, cuda::minimum<>>();
  check_reduce_all_widths<std::int64_t, cuda::maximum<>>();
  check_reduce_all_widths<std::int64_t, cuda::std::bit_xor<>>();
  check_reduce_all_widths<std::int64_t, user_plus>();
}
