/// @file
/// @brief Hash slots of device::group_by: the key hash, how a slot's value is combined (native
///        atomics, or a per-slot lock for any other value and operator) and a block's table in
///        shared memory.
///
/// No key value is reserved: a table is cleared by its block, marks free slots with a fixed key
/// and keeps that key's value in a slot of its own (docs/design/group_by.md).
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/bit>
#include <cuda/std/cstdint>
#include <cuda/std/cstring>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/mix_bits.cuh>

namespace tilewise::detail {

/// Keys are hashed and compared as unsigned words of their width.
template <class K>
using key_bits_t = cuda::std::conditional_t<sizeof(K) == 4, unsigned, unsigned long long>;

/// The hash every group_by pass takes of a key's bits (the table slot from its low bits, the part
/// from its top 8, the sub-part from the 8 below those, the distinct-key sketch): splitmix64's
/// finaliser for 8-byte keys; for 4-byte keys murmur3's 32-bit finaliser, a bijection on 32 bits
/// with a third of the 64-bit one's instructions, its word in both halves so that those bits are
/// where the 64-bit hash has them.
TILEWISE_DEVICE unsigned long long key_hash(unsigned long long kb) { return mix_bits(kb); }
TILEWISE_DEVICE unsigned long long key_hash(unsigned kb) {
  kb ^= kb >> 16;
  kb *= 0x85EBCA6Bu;
  kb ^= kb >> 13;
  kb *= 0xC2B2AE35u;
  kb ^= kb >> 16;
  return static_cast<unsigned long long>(kb) << 32 | kb;
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

/// A relaxed, block-scope atomic load of a 4- or 8-byte word in shared memory. (cuda::atomic_ref
/// emits a generic-address load; this one stays in the shared window, as a plain access would.)
template <class U>
TILEWISE_DEVICE U shared_load_relaxed(U const* p) {
  static_assert(sizeof(U) == 4 || sizeof(U) == 8, "shared_load_relaxed: 4- or 8-byte words");
  auto const at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (sizeof(U) == 4) {
    unsigned v;
    asm volatile("ld.relaxed.cta.shared.b32 %0, [%1];" : "=r"(v) : "r"(at));
    return static_cast<U>(v);
  } else {
    unsigned long long v;
    asm volatile("ld.relaxed.cta.shared.b64 %0, [%1];" : "=l"(v) : "r"(at));
    return static_cast<U>(v);
  }
}

// ---- a block's table in shared memory -----------------------------------------------------------

/// Open addressing with linear probing in shared memory, cleared by the block: room for
/// `Capacity` slots (a power of two), of which a call uses `slots` (a power of two, at least 32).
/// Every access during the aggregation is an atomic: a probe is one CAS (free key -> key) that
/// returns the slot's key, so it inserts or finds in one step. Values: atomic_combine pairs start
/// at op's identity and take one atomic per update; other values sit behind a lock word per slot
/// (0: no value yet, 1: a value, 2: locked). Slot `Capacity` holds the free key's value.
template <class U, class T, class Op, unsigned Capacity>
struct block_slots {
  static_assert((Capacity & (Capacity - 1)) == 0 && Capacity >= 32, "block table slots: a power of two, >= 32");
  using key_t                      = U;
  using entry_t                    = T;
  using value_t                    = slot_value_t<Op, T>;
  static constexpr unsigned capacity = Capacity;
  static constexpr bool atomic     = atomic_combine<Op, T>;
  static constexpr unsigned words  = atomic ? 1 : Capacity + 1;  ///< lock words (atomic: the free key's "used" flag)
  static constexpr unsigned free_word    = atomic ? 0 : Capacity;
  static constexpr std::size_t values_at = (Capacity * sizeof(U) + 15) / 16 * 16;
  static constexpr std::size_t words_at  = (values_at + (Capacity + 1) * sizeof(value_t) + 15) / 16 * 16;
  static constexpr std::size_t bytes     = words_at + words * 4;

  U* keys;
  value_t* values;  ///< Capacity + 1: the last holds the free key's value
  unsigned* words_;
  unsigned slots;

  TILEWISE_DEVICE block_slots(unsigned char* smem, unsigned used_slots)
      : keys(reinterpret_cast<U*>(smem)),
        values(reinterpret_cast<value_t*>(smem + values_at)),
        words_(reinterpret_cast<unsigned*>(smem + words_at)),
        slots(used_slots) {}

  /// Every thread of the block calls; a barrier must follow before the first add.
  template <unsigned Block>
  TILEWISE_DEVICE void clear() const {
    for (unsigned i = threadIdx.x; i < slots; i += Block) {
      keys[i] = free_key<U>;
      if constexpr (atomic) {
        values[i] = identity<kind_v<Op, T>, T>();
      } else {
        words_[i] = 0u;
      }
    }
    if (threadIdx.x == 0) {
      if constexpr (atomic) values[Capacity] = identity<kind_v<Op, T>, T>();
      words_[free_word] = 0u;
    }
  }

  /// The slot a key of this hash probes first.
  TILEWISE_DEVICE unsigned home(unsigned long long hash) const { return static_cast<unsigned>(hash) & (slots - 1); }

  /// Adds v to key kb's slot. False when kb is not in the table and none of the `probes` slots
  /// from its home was free (the caller takes the pair elsewhere; the key can then never enter
  /// this table, as slots are never freed: a key's pairs are either all here or all elsewhere).
  /// `read_first`: a probe reads the slot's key (a relaxed atomic load: many lanes of a warp read
  /// one hot slot at once, where their CASes would queue) and CASes only a free slot; a slot's
  /// key, once set, never changes, so a key read is a key found or a slot to pass.
  TILEWISE_DEVICE bool add(U kb, T const& v, Op op, unsigned long long hash, unsigned probes,
                           bool read_first = false) const {
    if (kb == free_key<U>) {
      combine(Capacity, v, op);
      if constexpr (atomic) atomicOr(words_, 1u);
      return true;
    }
    unsigned const mask = slots - 1;
    unsigned i          = home(hash);
    for (unsigned p = 0; p < probes; ++p) {
      U old = read_first ? shared_load_relaxed(keys + i) : free_key<U>;
      if (old == free_key<U>) old = atomicCAS(keys + i, free_key<U>, kb);
      if (old == free_key<U> || old == kb) {
        combine(i, v, op);
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }

  /// add's first probe, as a CAS that every lane makes, so that no branch separates the home
  /// probes of a thread's keys and they are all in flight before the first returns: where `go`,
  /// kb (not the free key) into its home slot i, returning the slot's key before (kb is there now
  /// if that was the free key or kb); elsewhere a CAS of the free key into slot `lane` where the
  /// free key is, which changes nothing.
  TILEWISE_DEVICE U home_cas(bool go, U kb, unsigned i) const {
    return atomicCAS(keys + (go ? i : threadIdx.x % 32u), free_key<U>, go ? kb : free_key<U>);
  }

  /// Adds v to the value of slot i, a slot that holds its key (i == Capacity: the free key's).
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

  /// After a barrier: whether slot i < slots holds a key, and whether the free key has a value.
  TILEWISE_DEVICE bool occupied(unsigned i) const { return keys[i] != free_key<U>; }
  TILEWISE_DEVICE bool free_key_used() const { return words_[free_word] != 0u; }

  /// After a barrier: the key and value of an occupied slot i (i == Capacity: the free key's).
  TILEWISE_DEVICE void entry(unsigned i, U& kb, T& v) const {
    kb = i == Capacity ? free_key<U> : keys[i];
    if constexpr (atomic) {
      v = values[i];
    } else {
      unsigned w[value_words<T>::count];
#pragma unroll
      for (unsigned j = 0; j < value_words<T>::count; ++j) w[j] = values[i].w[j];
      cuda::std::memcpy(&v, w, sizeof(T));
    }
  }
};

/// A block's running vote on whether its table still pays: each thread counts its adds and
/// those that found no room; every `Rounds` calls of round() (made by every thread of the block,
/// a barrier) the block stops using the table for good once most threads missed it at least
/// `Percent` % of the time (many more keys in use than slots). With MaxRounds > Rounds, a vote
/// after which no thread has missed at all doubles the rounds to the next vote, up to MaxRounds
/// (a table that holds every key stops paying for barriers); any miss sets them back to Rounds.
template <unsigned Block, unsigned Rounds, unsigned Percent, unsigned MaxRounds = Rounds>
struct table_vote {
  static_assert(MaxRounds >= Rounds, "table_vote: MaxRounds >= Rounds");
  unsigned tries = 0, misses = 0, rounds = 0, interval = Rounds;
  bool bypass    = false;  ///< the same in every thread of the block

  TILEWISE_DEVICE void count(bool in_table) {
    ++tries;
    misses += in_table ? 0u : 1u;
  }
  /// Whether the block voted (every thread gets the same answer).
  TILEWISE_DEVICE bool round() {
    if (bypass || ++rounds != interval) return false;
    bool const vote = tries > 0 && misses * 100ull >= tries * static_cast<unsigned long long>(Percent);
    bypass          = __syncthreads_count(vote) > static_cast<int>(Block / 2);
    if constexpr (MaxRounds > Rounds) {
      if (!bypass) {
        bool const missed = __syncthreads_or(misses != 0u) != 0;
        interval          = missed ? Rounds : 2 * interval < MaxRounds ? 2 * interval : MaxRounds;
      }
    }
    tries = misses = rounds = 0;
    return true;
  }
};

}  // namespace tilewise::detail
