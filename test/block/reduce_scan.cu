// block::reduce / inclusive_scan / exclusive_scan on integers (exact, compared with CUB bit for
// bit): every block size and tile width for int32 plus, a subset for max, int64 and a user
// operator without a known identity (the predicated paths), and both plans (one barrier, two
// barriers) forced with the combine on 1, 4 and 32 lanes, and the scans' raking plan (every
// block of whole warps it may be tuned for, W < 32 too), as the benchmark measures them. More
// types: reduce_scan_more.cu.
#include <cuda/functional>
#include <cuda/std/functional>

#include "reduce_scan_check.cuh"

using namespace tw_test;

TEST_CASE("block primitives: int32 plus, every block size and tile width") {
  check_block_all_shapes<std::int32_t, cuda::std::plus<>>();
}

TEST_CASE("block primitives: int32 max") { check_block_some_shapes<std::int32_t, cuda::maximum<>>(); }

TEST_CASE("block primitives: int64 plus") { check_block_some_shapes<std::int64_t, cuda::std::plus<>>(); }

TEST_CASE("block primitives: a user operator (no known identity: predicated paths)") {
  check_block_some_shapes<std::int32_t, user_plus>();
  check_block_seeds<std::int32_t, user_plus, 1024, 8>();
}

TEST_CASE("block primitives: both plans (one barrier, two barriers), combine on 1, 4 and 32 lanes") {
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 32, plan::one_barrier, 1>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 32, plan::one_barrier, 4>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 32, plan::one_barrier, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 1024, 16, plan::one_barrier, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 32, plan::two_barriers, 1>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 32, plan::two_barriers, 4>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 1024, 8, plan::two_barriers, 32>();
  check_block_seeds<std::int32_t, user_plus, 384, 32, plan::one_barrier, 4>();
  check_block_seeds<std::int32_t, user_plus, 384, 32, plan::two_barriers, 4>();
  check_block_seeds<mat2, mat2_mul, 384, 32, plan::one_barrier, 4>();
  check_block_seeds<mat2, mat2_mul, 1024, 32, plan::one_barrier, 32>();
  check_block_seeds<mat2, mat2_mul, 384, 32, plan::two_barriers, 1>();
  check_block_seeds<mat2, mat2_mul, 384, 32, plan::two_barriers, 4>();
  check_block_seeds<mat2, mat2_mul, 48, 16, plan::two_barriers, 16>();
  check_block_seeds<float, cuda::std::plus<>, 1024, 32, plan::one_barrier, 32>();
  check_block_seeds<float, cuda::std::plus<>, 96, 32, plan::two_barriers, 1>();
  // 16 or more totals per combining lane: the serial rescan (scan_totals_warp0), with chunks that
  // do not divide evenly (127 tile totals on 4 lanes of 32), non-commutative and without identity
  check_block_seeds<std::int32_t, cuda::std::plus<>, 1016, 8, plan::two_barriers, 4>();
  check_block_seeds<mat2, mat2_mul, 1016, 8, plan::two_barriers, 4>();
  check_block_seeds<std::int32_t, user_plus, 1016, 8, plan::two_barriers, 4>();
}

TEST_CASE("block scans: raking plan (warp 0 scans every value; reduce on two barriers)") {
  check_block_seeds<std::int32_t, cuda::std::plus<>, 64, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 96, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 128, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 256, 16, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 384, 8, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 512, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::std::plus<>, 1024, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, cuda::maximum<>, 256, 32, plan::raking, 32>();
  check_block_seeds<std::int64_t, cuda::std::plus<>, 256, 32, plan::raking, 32>();
  check_block_seeds<std::int32_t, user_plus, 256, 32, plan::raking, 32>();
  check_block_seeds<mat2, mat2_mul, 256, 32, plan::raking, 32>();
  check_block_seeds<mat2, mat2_mul, 512, 32, plan::raking, 32>();     // 16 per lane: serial rescan
  check_block_seeds<std::int32_t, user_plus, 1024, 32, plan::raking, 32>();  // 32 per lane, no identity
  check_block_seeds<s24, s24_op, 96, 32, plan::raking, 32>();
  check_block_seeds<float, cuda::std::plus<>, 512, 16, plan::raking, 32>();
  check_block_seeds<double, cuda::std::plus<>, 256, 32, plan::raking, 32>();
}
