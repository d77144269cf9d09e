// block::reduce / inclusive_scan / exclusive_scan on floating point (within the tolerance of
// test_types.cuh against a float64 host reference), on a 24-byte struct, and with a
// non-commutative operator (2x2 matrix product: the scans must combine in thread order; compared
// with the host and with cub::BlockScan, which is in order too). Integers: reduce_scan.cu.
#include <cuda/std/functional>

#include "reduce_scan_check.cuh"

using namespace tw_test;

TEST_CASE("block primitives: float plus, every block size and tile width") {
  check_block_all_shapes<float, cuda::std::plus<>>();
}

TEST_CASE("block primitives: double plus") { check_block_some_shapes<double, cuda::std::plus<>>(); }

TEST_CASE("block primitives: 24-byte struct") { check_block_some_shapes<s24, s24_op>(); }

TEST_CASE("block primitives: non-commutative operator (2x2 matrix product), every shape") {
  check_block_all_shapes<mat2, mat2_mul>();
}
