/// @file
/// @brief Running values that may be empty, for ops with or without a known identity: the
///        per-thread accumulator of the device-wide algorithms and the lifted op their block
///        collectives use when the op has no identity.
#pragma once

#include <tilewise/detail/block_exchange.cuh>
#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// `op` over maybe-empty values (block collectives of ops without a known identity).
template <class T, class Op>
struct maybe_op {
  Op op;
  TILEWISE_DEVICE maybe_t<Op, T> operator()(maybe_t<Op, T> const& a, maybe_t<Op, T> const& b) {
    return join<Op, T>(a, b, op);
  }
};

/// A thread's running value: the op's identity when it has one, else a presence flag.
template <class T, class Op>
struct accumulator {
  maybe_t<Op, T> acc = make_maybe<Op, T>(T{}, false);
  TILEWISE_DEVICE void add(T const& x, Op& op) { acc = make_maybe<Op, T>(join_right<Op, T>(acc, x, op), true); }
};

}  // namespace tilewise::detail
