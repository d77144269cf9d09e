// tile::inclusive_scan / tile::exclusive_scan on integers (exact, also the subtract-based exclusive
// path of integer plus and xor), floating point (tolerance), structs and a non-commutative operator.
#include <cooperative_groups/reduce.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include "scan_check.cuh"

using namespace tw_test;

TEST_CASE("tile scans on integers") {
  check_scan_all_widths<std::int8_t, cuda::std::plus<>>();
  check_scan_all_widths<std::int32_t, cuda::std::plus<>>();
  check_scan_all_widths<std::int32_t, cuda::maximum<>>();
  check_scan_all_widths<std::int32_t, cuda::std::bit_xor<>>();
  check_scan_all_widths<std::int32_t, user_plus>();
  check_scan_all_widths<std::uint32_t, cuda::std::plus<>>();
  check_scan_all_widths<std::int64_t, cuda::std::plus<>>();
  check_scan_all_widths<std::int64_t, cuda::minimum<>>();
}

TEST_CASE("tile scans on floating point") {
  check_scan_all_widths<float, cuda::std::plus<>>();
  check_scan_all_widths<float, cuda::maximum<>>();
  check_scan_all_widths<double, cuda::std::plus<>>();
}

TEST_CASE("tile scans on structs") {
  check_scan_all_widths<s12, s12_plus>();
  check_scan_all_widths<s24, s24_op>();
}

TEST_CASE("tile scans with a non-commutative operator (2x2 matrix product)") {
  check_scan_all_widths<mat2, mat2_mul>();
}
