/// @file
/// @brief Hash slots of device::group_by: the key hash, how a slot's value is combined (native
///        atomics, or a per-slot lock for any other value and operator), a block's table in shared
///        memory and the global table in temp storage.
///
/// No key value is reserved. A block table is cleared by its block, so it marks free slots with a
/// fixed key and keeps that key's value in a slot of its own. The global table is never cleared:
/// each slot has a 64-bit state word `epoch * 4 + code` beside its key, and a state that does not
/// carry this launch's epoch reads as free (docs/design/group_by.md has the protocol).
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/bit>
#include <cuda/std/cstdint>
#include <cuda/std/cstring>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/gpu_word.cuh>

namespace tilewise::detail {

/// Keys are hashed and compared as unsigned words of their width.
template <class K>
using key_bits_t = cuda::std::conditional_t<sizeof(K) == 4, unsigned, unsigned long long>;

/// splitmix64's finaliser: a bijection on 64 bits whose every output bit depends on every input bit.
TILEWISE_DEVICE unsigned long long mix_bits(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The key that marks a free block-table slot (any value would do: that key lives in a slot of
/// its own). Chosen far from the small, extreme and sequential values keys tend to take.
template <class U>
inline constexpr U free_key = static_cast<U>(0x9E3779B97F4A7C15ull);

// ---- combining values ---------------------------------------------------------------------------

/// Value and operator pairs combined with one atomic (or a CAS loop for floating min/max): 4- and
/// 8-byte arithmetic values under plus, min, max, and integers under and/or/xor.
template <class Op, class T>
inline constexpr bool atomic_combine =
  (sizeof(T) == 4 || sizeof(T) == 8) && is_arithmetic_value<T> &&
  (kind_v<Op, T> == op_kind::plus || kind_v<Op, T> == op_kind::min || kind_v<Op, T> == op_kind::max ||
   (cuda::std::is_integral_v<T> && kind_v<Op, T> != op_kind::other));

/// A value stored word by word (locked slots): 4-byte words, aligned as T.
template <class T>
struct alignas(alignof(T) > 4 ? alignof(T) : 4) value_words {
  static constexpr unsigned count = (sizeof(T) + 3) / 4;
  unsigned w[count];
};

/// What a slot stores: T itself when combined atomically, else T's words.
template <class Op, class T>
using slot_value_t = cuda::std::conditional_t<atomic_combine<Op, T>, T, value_words<T>>;

/// One atomic `*p = op(*p, v)` for the pairs of atomic_combine (shared or global memory).
template <class Op, class T>
TILEWISE_DEVICE void atomic_apply(T* p, T v, Op op) {
  constexpr op_kind K = kind_v<Op, T>;
  using U             = cuda::std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
  using S             = cuda::std::conditional_t<sizeof(T) == 4, int, long long>;
  if constexpr (K == op_kind::plus && cuda::std::is_floating_point_v<T>) {
    atomicAdd(p, v);
  } else if constexpr (cuda::std::is_floating_point_v<T>) {  // min, max: CAS on the bits
    U* const q = reinterpret_cast<U*>(p);
    U seen     = cuda::std::bit_cast<U>(identity<K, T>());  // a guess; the first CAS corrects it
    for (;;) {
      U const next = cuda::std::bit_cast<U>(T(op(cuda::std::bit_cast<T>(seen), v)));
      if (next == seen) return;
      U const old = atomicCAS(q, seen, next);
      if (old == seen) return;
      seen = old;
    }
  } else if constexpr (K == op_kind::plus) {  // two's complement: the unsigned add
    atomicAdd(reinterpret_cast<U*>(p), static_cast<U>(v));
  } else if constexpr (K == op_kind::min || K == op_kind::max) {
    using W = cuda::std::conditional_t<cuda::std::is_signed_v<T>, S, U>;
    if constexpr (K == op_kind::min) {
      atomicMin(reinterpret_cast<W*>(p), static_cast<W>(v));
    } else {
      atomicMax(reinterpret_cast<W*>(p), static_cast<W>(v));
    }
  } else if constexpr (K == op_kind::bit_and) {
    atomicAnd(reinterpret_cast<U*>(p), static_cast<U>(v));
  } else if constexpr (K == op_kind::bit_or) {
    atomicOr(reinterpret_cast<U*>(p), static_cast<U>(v));
  } else {
    static_assert(K == op_kind::bit_xor);
    atomicXor(reinterpret_cast<U*>(p), static_cast<U>(v));
  }
}

/// A locked value's words in shared memory, read and written with atomics (the lock orders them;
/// atomics keep compute-sanitizer's racecheck, which does not see locks, from flagging them).
template <class T>
TILEWISE_DEVICE T shared_words_load(value_words<T>* c) {
  unsigned w[value_words<T>::count];
#pragma unroll
  for (unsigned i = 0; i < value_words<T>::count; ++i) w[i] = atomicOr(c->w + i, 0u);
  T v;
  cuda::std::memcpy(&v, w, sizeof(T));
  return v;
}
template <class T>
TILEWISE_DEVICE void shared_words_store(value_words<T>* c, T const& v) {
  unsigned w[value_words<T>::count] = {};
  cuda::std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (unsigned i = 0; i < value_words<T>::count; ++i) atomicExch(c->w + i, w[i]);
}
/// A locked value's words in global memory, past L1 (another multiprocessor wrote them last).
template <class T>
TILEWISE_DEVICE T global_words_load(value_words<T> const* c) {
  unsigned w[value_words<T>::count];
#pragma unroll
  for (unsigned i = 0; i < value_words<T>::count; ++i) w[i] = __ldcg(c->w + i);
  T v;
  cuda::std::memcpy(&v, w, sizeof(T));
  return v;
}
template <class T>
TILEWISE_DEVICE void global_words_store(value_words<T>* c, T const& v) {
  unsigned w[value_words<T>::count] = {};
  cuda::std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (unsigned i = 0; i < value_words<T>::count; ++i) __stcg(c->w + i, w[i]);
}

/// A slot's value once every update has landed (after a barrier or in a later kernel).
template <class Op, class T>
TILEWISE_DEVICE T slot_value_load(slot_value_t<Op, T> const* p) {
  if constexpr (atomic_combine<Op, T>) {
    using W = cuda::std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
    return cuda::std::bit_cast<T>(__ldcg(reinterpret_cast<W const*>(p)));
  } else {
    return global_words_load<T>(p);
  }
}

// ---- a block's table in shared memory -----------------------------------------------------------

/// Open addressing with linear probing over `Slots` slots (a power of two) in shared memory,
/// cleared by the block. Every access during the aggregation is an atomic: a probe is one CAS
/// (free key -> key) that returns the slot's key, so it inserts or finds in one step.
/// Values: atomic_combine pairs start at op's identity and take one atomic per update; other
/// values sit behind a lock word per slot (0: no value yet, 1: a value, 2: locked).
template <class U, class T, class Op, unsigned Slots>
struct block_slots {
  static_assert((Slots & (Slots - 1)) == 0, "block table slots: a power of two");
  using value_t                    = slot_value_t<Op, T>;
  static constexpr bool atomic     = atomic_combine<Op, T>;
  static constexpr unsigned words  = atomic ? 1 : Slots + 1;  ///< lock words (atomic: the free key's "used" flag)
  static constexpr std::size_t values_at = (Slots * sizeof(U) + 15) / 16 * 16;
  static constexpr std::size_t words_at  = (values_at + (Slots + 1) * sizeof(value_t) + 15) / 16 * 16;
  static constexpr std::size_t bytes     = words_at + words * 4;

  U* keys;
  value_t* values;  ///< Slots + 1: the last holds the free key's value
  unsigned* words_;

  TILEWISE_DEVICE explicit block_slots(unsigned char* smem)
      : keys(reinterpret_cast<U*>(smem)),
        values(reinterpret_cast<value_t*>(smem + values_at)),
        words_(reinterpret_cast<unsigned*>(smem + words_at)) {}

  /// Every thread of the block calls; a barrier must follow before the first add.
  template <unsigned Block>
  TILEWISE_DEVICE void clear() const {
    for (unsigned i = threadIdx.x; i < Slots; i += Block) keys[i] = free_key<U>;
    if constexpr (atomic) {
      for (unsigned i = threadIdx.x; i <= Slots; i += Block) values[i] = identity<kind_v<Op, T>, T>();
    }
    for (unsigned i = threadIdx.x; i < words; i += Block) words_[i] = 0u;
  }

  /// Adds v to key kb's slot. False when kb is not in the table and none of the `probes` slots
  /// from its home was free (the caller takes the pair to the global table).
  TILEWISE_DEVICE bool add(U kb, T const& v, Op op, unsigned long long hash, unsigned probes) const {
    if (kb == free_key<U>) {
      combine(Slots, v, op);
      if constexpr (atomic) atomicOr(words_, 1u);
      return true;
    }
    unsigned i = static_cast<unsigned>(hash) & (Slots - 1);
    for (unsigned p = 0; p < probes; ++p) {
      U const old = atomicCAS(keys + i, free_key<U>, kb);
      if (old == free_key<U> || old == kb) {
        combine(i, v, op);
        return true;
      }
      i = (i + 1) & (Slots - 1);
    }
    return false;
  }

  TILEWISE_DEVICE void combine(unsigned i, T const& v, Op op) const {
    if constexpr (atomic) {
      atomic_apply(values + i, v, op);
    } else {
      unsigned* const lock = words_ + i;
      unsigned expect      = 0u;  // free slots hold no value; once locked a slot always has one
      for (;;) {
        unsigned const old = atomicCAS(lock, expect, 2u);
        if (old == expect) break;
        expect = old == 0u ? 0u : 1u;
      }
      __threadfence_block();
      shared_words_store<T>(values + i, expect == 1u ? T(op(shared_words_load<T>(values + i), v)) : v);
      __threadfence_block();
      atomicExch(lock, 1u);
    }
  }

  /// Slot i's key and value after a barrier: false when it holds none. i == Slots is the free key's slot.
  TILEWISE_DEVICE bool entry(unsigned i, U& kb, T& v) const {
    if (i == Slots) {
      kb = free_key<U>;
      if (words_[atomic ? 0 : Slots] == 0u) return false;
    } else {
      kb = keys[i];
      if (kb == free_key<U>) return false;
    }
    if constexpr (atomic) {
      v = values[i];
    } else {
      unsigned w[value_words<T>::count];
#pragma unroll
      for (unsigned j = 0; j < value_words<T>::count; ++j) w[j] = values[i].w[j];
      cuda::std::memcpy(&v, w, sizeof(T));
    }
    return true;
  }
};

// ---- the global table in temp storage -----------------------------------------------------------

/// State codes of a global slot, below the epoch: claimed (the key is being written), ready.
inline constexpr unsigned long long slot_claimed = 1, slot_ready = 2;

/// The launch's epoch: the host's per-call epoch mixed with a generation word that the output
/// kernel of every call bumps, so replays of a captured graph (same host epoch) differ too.
/// 62 bits, never 0 (zero-filled temp storage never matches).
TILEWISE_DEVICE unsigned long long slots_epoch(unsigned long long host_epoch, unsigned long long generation) {
  unsigned long long const e = mix_bits(host_epoch ^ mix_bits(generation)) >> 2;
  return e == 0 ? 1 : e;
}

/// Device view of the global table (a kernel argument). Slot i: `headers[2i]` its state,
/// `headers[2i + 1]` its key, `values[i]`, and (locked values) `locks[i]`. `rows` lists the
/// slots that received a key, in the order rows were reserved.
template <class U, class T, class Op>
struct global_slots {
  using value_t                = slot_value_t<Op, T>;
  static constexpr bool atomic = atomic_combine<Op, T>;

  unsigned long long* headers;
  value_t* values;
  unsigned* locks;
  unsigned long long* rows;
  unsigned long long* row_count;
  unsigned long long* generation;
  unsigned long long slots;
  unsigned long long host_epoch;
  unsigned long long epoch;  ///< set by begin() in the kernel

  /// Reads the generation (every thread, at kernel start; the previous call's output kernel wrote it).
  TILEWISE_DEVICE void begin() { epoch = slots_epoch(host_epoch, __ldcg(generation)); }

  TILEWISE_DEVICE unsigned long long home(unsigned long long hash) const { return __umul64hi(hash, slots); }

  /// Adds v to key kb's slot; true when this call inserted kb (`slot` then names the new slot,
  /// whose row the caller records).
  TILEWISE_DEVICE bool add(U kb, T const& v, Op op, unsigned long long hash, unsigned long long& slot) const {
    unsigned long long const ready = epoch << 2 | slot_ready, claimed = epoch << 2 | slot_claimed;
    unsigned long long i = home(hash);
    for (unsigned spins = 0;;) {
      unsigned long long state, key;
      gpu_word::load_relaxed_pair(headers + 2 * i, state, key);
      if (state == ready) {  // state and key came in one access: the key is this launch's
        if (static_cast<U>(key) == kb) {
          combine(i, v, op);
          return false;
        }
        i = i + 1 == slots ? 0 : i + 1;
        spins = 0;
      } else if (state == claimed) {  // another thread is writing the key: look again
        if (++spins > 4) __nanosleep(32);
      } else if (atomicCAS(headers + 2 * i, state, claimed) == state) {  // free for this launch
        if constexpr (atomic) {
          values[i] = v;
        } else {
          global_words_store<T>(values + i, v);
          locks[i] = 0u;
        }
        __threadfence();  // the value before the key: a reader that sees the key may combine
        gpu_word::store_relaxed_pair(headers + 2 * i, ready, static_cast<unsigned long long>(kb));
        slot = i;
        return true;
      }
    }
  }

  TILEWISE_DEVICE void combine(unsigned long long i, T const& v, Op op) const {
    if constexpr (atomic) {
      atomic_apply(values + i, v, op);
    } else {
      for (unsigned k = 0; atomicCAS(locks + i, 0u, 1u) != 0u; ++k) {
        if (k > 2) __nanosleep(64);
      }
      __threadfence();
      global_words_store<T>(values + i, T(op(global_words_load<T>(values + i), v)));
      __threadfence();
      atomicExch(locks + i, 0u);
    }
  }
};

}  // namespace tilewise::detail
