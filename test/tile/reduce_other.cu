// tile::reduce on floating point (tolerance against a float64 host reference), on 12-, 16- and
// 24-byte structs shuffled word by word, and with a non-commutative operator (2x2 matrix product),
// whose result must be the in-order product on every lane.
#include <cuda/functional>
#include <cuda/std/functional>

#include "reduce_check.cuh"

using namespace tw_test;

TEST_CASE("tile::reduce float") {
  check_reduce_all_widths<float, cuda::std::plus<>>();
  check_reduce_all_widths<float, cuda::minimum<>>();
  check_reduce_all_widths<float, cuda::maximum<>>();
}

TEST_CASE("tile::reduce double") {
  check_reduce_all_widths<double, cuda::std::plus<>>();
  check_reduce_all_widths<double, cuda::maximum<>>();
}

TEST_CASE("tile::reduce structs") {
  check_reduce_all_widths<s12, s12_plus>();
  check_reduce_all_widths<s24, s24_op>();
}

TEST_CASE("tile::reduce non-commutative op gives the in-order product") {
  check_reduce_all_widths<mat2, mat2_mul>();
}
