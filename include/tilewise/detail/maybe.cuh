/// @file
/// @brief Values that may be empty (the op's identity when it has one, else a presence flag),
///        their joins, the per-thread accumulator and in-order register folds.
#pragma once

#include <cuda/std/bit>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>

namespace tilewise::detail {

// ---- values that may be empty ---------------------------------------------------------------------

/// Whether Op has an identity element tilewise knows (then "empty" is the identity and the
/// combine needs no flags or branches).
template <class Op, class T>
inline constexpr bool has_identity = kind_v<Op, T> != op_kind::other;

/// An optional partial result: the identity stands for "empty" when Op has one.
template <class T, bool Known>
struct maybe;
template <class T>
struct maybe<T, true> {
  T value;
  TILEWISE_DEVICE static constexpr bool has() { return true; }
};
template <class T>
struct maybe<T, false> {
  T value;
  bool present;
  TILEWISE_DEVICE bool has() const { return present; }
};

template <class Op, class T>
using maybe_t = maybe<T, has_identity<Op, T>>;

template <class Op, class T>
TILEWISE_DEVICE maybe_t<Op, T> make_maybe(T const& v, bool present) {
  if constexpr (has_identity<Op, T>) {
    return {present ? v : identity<kind_v<Op, T>, T>()};
  } else {
    return {v, present};
  }
}

/// `a op b` where either side may be empty.
template <class Op, class T>
TILEWISE_DEVICE maybe_t<Op, T> join(maybe_t<Op, T> const& a, maybe_t<Op, T> const& b, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return {T(op(a.value, b.value))};
  } else {
    return {a.present && b.present ? T(op(a.value, b.value)) : (a.present ? a.value : b.value),
            a.present || b.present};
  }
}

/// `a op x` (x present).
template <class Op, class T>
TILEWISE_DEVICE T join_right(maybe_t<Op, T> const& a, T const& x, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return op(a.value, x);
  } else {
    return a.present ? T(op(a.value, x)) : x;
  }
}

/// `x op a` (x present).
template <class Op, class T>
TILEWISE_DEVICE T join_left(T const& x, maybe_t<Op, T> const& a, Op& op) {
  if constexpr (has_identity<Op, T>) {
    return op(x, a.value);
  } else {
    return a.present ? T(op(x, a.value)) : x;
  }
}

// ---- register folds -----------------------------------------------------------------------------

/// In-order balanced fold of x[Lo, Hi) (a register array, indices resolved at compile time).
template <unsigned Lo, unsigned Hi, class T, class Op>
TILEWISE_DEVICE T tree_fold(T const* x, Op& op) {
  if constexpr (Hi - Lo == 1) {
    return x[Lo];
  } else {
    constexpr unsigned mid = Lo + cuda::std::bit_ceil((Hi - Lo + 1) / 2);  // left part a power of two
    constexpr unsigned m   = mid < Hi ? mid : Lo + (Hi - Lo) / 2;
    return op(tree_fold<Lo, m>(x, op), tree_fold<m, Hi>(x, op));
  }
}

/// In-order fold of x[0, n), 0 <= n <= K, empty when n == 0. Identities replace the missing
/// elements of known ops (a balanced tree); other ops fold sequentially under predicates.
template <unsigned K, class T, class Op>
TILEWISE_DEVICE maybe_t<Op, T> prefix_fold(T const* x, unsigned n, Op& op) {
  if constexpr (has_identity<Op, T>) {
    T masked[K];
#pragma unroll
    for (unsigned i = 0; i < K; ++i) {
      masked[i] = i < n ? x[i] : identity<kind_v<Op, T>, T>();
    }
    return {tree_fold<0, K>(masked, op)};
  } else {
    T acc = x[0];
#pragma unroll
    for (unsigned i = 1; i < K; ++i) {
      if (i < n) {
        acc = op(acc, x[i]);
      }
    }
    return {acc, n > 0};
  }
}

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
