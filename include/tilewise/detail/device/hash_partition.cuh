/// @file
/// @brief Hash partitioning of device::group_by: the part a key hash falls in, the scatter of a
///        tile of pairs to their parts through shared memory (so that each part's pairs leave as
///        one contiguous run), a block-wide drain of a hash table with one reservation, and a
///        HyperLogLog sketch of the number of distinct keys (docs/design/group_by.md).
///
/// Parts take the hash's top bits, the tables (hash_slots.cuh) its low bits, so the keys of one
/// part still spread over a whole table.
#pragma once

#include <cooperative_groups.h>

#include <cuda/cmath>
#include <cuda/std/functional>

#include <tilewise/detail/config.cuh>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// Parts of the first partition pass: the hash's top 8 bits.
inline constexpr unsigned hash_part_bits = 8;
inline constexpr unsigned hash_parts     = 1u << hash_part_bits;

/// The first pass's part of hash h.
TILEWISE_DEVICE unsigned hash_part(unsigned long long h) { return static_cast<unsigned>(h >> (64 - hash_part_bits)); }

/// The sub-part of hash h within its part, from the next `bits` bits (1 <= bits <= 8).
TILEWISE_DEVICE unsigned hash_sub_part(unsigned long long h, unsigned bits) {
  return static_cast<unsigned>((h << hash_part_bits) >> (64 - bits));
}

/// Exclusive prefix sums of c[0, n) into s[0, n), n <= 1024; the 32 lanes of one warp call.
TILEWISE_DEVICE void warp_exclusive_sums(unsigned const* c, unsigned* s, unsigned n) {
  auto const warp    = cg::tiled_partition<32>(cg::this_thread_block());
  unsigned const per = (n + 31) / 32;
  unsigned const lo  = warp.thread_rank() * per;
  unsigned const hi  = lo + per < n ? lo + per : n;
  unsigned sum       = 0;
  for (unsigned i = lo; i < hi; ++i) sum += c[i];
  unsigned run = tile::exclusive_scan(warp, sum, cuda::std::plus<unsigned>{}, 0u);
  for (unsigned i = lo; i < hi; ++i) {
    s[i] = run;
    run += c[i];
  }
}

/// Shared memory of a part_scatter stage of `tile` pairs: the keys, the values and a digit byte each.
template <class U, class T>
__host__ __device__ constexpr std::size_t part_scatter_bytes(unsigned tile) {
  return cuda::round_up(tile * sizeof(U), std::size_t(16)) + cuda::round_up(tile * sizeof(T), std::size_t(16)) + tile;
}

/// The most shared memory a part_scatter stage may take: an sm_90 block may have 227 KB, which
/// leaves 27 KB for the static shared memory of the kernels that scatter (22 KB at most).
inline constexpr std::size_t part_scatter_max_bytes = 200u << 10;

/// Pairs per thread of a part_scatter of Block threads: `items`, halved while the stage would
/// pass part_scatter_max_bytes (wide values), 0 when not even one pair per thread fits.
template <unsigned Block, class U, class T>
__host__ __device__ constexpr unsigned part_scatter_items(unsigned items) {
  while (items > 0 && part_scatter_bytes<U, T>(Block * items) > part_scatter_max_bytes) items /= 2;
  return items;
}

/// Moves a tile of up to Block x Items pairs to the parts their digits name, through shared
/// memory: the tile is ranked by digit (a shared atomic per pair) and laid out part by part, then
/// written out in that order, so a part's pairs of the tile are one contiguous run. `running[d]`
/// is part d's next free place and advances. Order within a part is not kept. With `Ahead`,
/// range() issues the loads of the next tile into the registers the current one leaves once it
/// is staged, so that they are in flight while the current tile is written out.
template <unsigned Block, unsigned Items, class U, class T, bool Ahead = false>
struct part_scatter {
  static constexpr unsigned items        = Items;
  static constexpr unsigned tile         = Block * Items;
  static constexpr std::size_t values_at = cuda::round_up(tile * sizeof(U), std::size_t(16));
  static constexpr std::size_t digits_at = values_at + cuda::round_up(tile * sizeof(T), std::size_t(16));
  static constexpr std::size_t bytes     = part_scatter_bytes<U, T>(tile);  ///< the stage (dynamic shared memory)
  static_assert(bytes == digits_at + tile, "part_scatter: part_scatter_bytes must describe this stage's layout");
  static_assert(Block % 32 == 0 && Block >= hash_parts, "part_scatter: whole warps, a thread per part");
  static_assert(Items > 0, "part_scatter: at least one pair per thread");
  static_assert(tile <= (1u << 24), "part_scatter: a pair's rank in its part and the part share 32 bits");

  /// Per-digit counters of one tile (static shared memory, the caller's).
  struct counters {
    unsigned count[hash_parts];
    unsigned start[hash_parts];
  };

  U* keys;
  T* values;
  unsigned char* staged_digit;  ///< the part of each staged pair
  counters& c;

  TILEWISE_DEVICE part_scatter(unsigned char* stage, counters& ctr)
      : keys(reinterpret_cast<U*>(stage)),
        values(reinterpret_cast<T*>(stage + values_at)),
        staged_digit(stage + digits_at),
        c(ctr) {}

  /// Every thread of the block calls with its pairs: item j is the tile's entry j x Block +
  /// threadIdx.x, present when below `n`; `digit(k[j])` < digits <= 256 its part. `staged()`
  /// runs on every thread once its pairs are in the stage (k and v are no longer read). A pair's
  /// part and its rank among the tile's pairs of that part share one word (rank << 8 | part), so
  /// that a thread holds three words per pair.
  template <class Digit, class Staged>
  TILEWISE_DEVICE void operator()(U const (&k)[Items], T const (&v)[Items], unsigned n, Digit& digit,
                                  unsigned digits, unsigned long long* running, U* keys_out, T* values_out,
                                  Staged&& staged) const {
    if (threadIdx.x < digits) c.count[threadIdx.x] = 0u;
    __syncthreads();
    unsigned dr[Items];
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      if (j * Block + threadIdx.x < n) {
        unsigned const d = digit(k[j]);
        dr[j]            = atomicAdd(c.count + d, 1u) << 8 | d;
      }
    }
    __syncthreads();
    if (threadIdx.x < 32) warp_exclusive_sums(c.count, c.start, digits);
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      if (j * Block + threadIdx.x < n) {
        unsigned const d  = dr[j] & 0xFFu;
        unsigned const at = c.start[d] + (dr[j] >> 8);
        keys[at]          = k[j];
        values[at]        = v[j];
        staged_digit[at]  = static_cast<unsigned char>(d);
      }
    }
    staged();
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {  // unrolled: the lookups of all of a thread's pairs in flight
      unsigned const t = j * Block + threadIdx.x;
      if (t < n) {
        unsigned const dt            = staged_digit[t];
        unsigned long long const pos = running[dt] + (t - c.start[dt]);
        keys_out[pos]                = keys[t];
        values_out[pos]              = values[t];
      }
    }
    __syncthreads();
    if (threadIdx.x < digits) running[threadIdx.x] += c.count[threadIdx.x];
  }

  /// Every thread of the block calls: moves `count` pairs, tile by tile, to their parts.
  /// `load(i, key, value)` reads pair i (0 <= i < count); `digit(key)` < digits is its part.
  template <class Load, class Digit>
  TILEWISE_DEVICE void range(long long count, Load load, Digit digit, unsigned digits, unsigned long long* running,
                             U* keys_out, T* values_out) const {
    U k[Items];
    T v[Items];
    if (Ahead && count > 0) load_tile(0, count, load, k, v);
    for (long long base = 0; base < count; base += tile) {
      if constexpr (!Ahead) load_tile(base, count, load, k, v);
      long long const left = count - base;
      (*this)(k, v, left < tile ? static_cast<unsigned>(left) : tile, digit, digits, running, keys_out, values_out,
              [&] {
                if constexpr (Ahead) {
                  if (base + tile < count) load_tile(base + tile, count, load, k, v);
                }
              });
    }
  }

 private:
  /// This thread's pairs of the tile at `base`: item j is pair base + j x Block + threadIdx.x.
  template <class Load>
  TILEWISE_DEVICE static void load_tile(long long base, long long count, Load& load, U (&k)[Items], T (&v)[Items]) {
#pragma unroll
    for (unsigned j = 0; j < Items; ++j) {
      long long const i = base + j * Block + threadIdx.x;
      if (i < count) load(i, k[j], v[j]);
    }
  }
};

/// Block-wide drain of a block_slots table (after a barrier): one thread calls
/// `reserve(total)` once for all entries and gets the first row; `put(row, key, value)` then
/// takes each entry (slots and the free key's) on some thread, rows consecutive per warp, so
/// that writes indexed by row coalesce. `warp_counts` / `warp_first`: shared, Block / 32 each.
/// A barrier must follow before the table changes.
template <unsigned Block, class Table, class Reserve, class Put>
TILEWISE_DEVICE void drain_table(Table const& table, Reserve&& reserve, Put&& put, unsigned* warp_counts,
                                 unsigned long long* warp_first) {
  constexpr unsigned W = Block / 32;
  static_assert(Block % 32 == 0 && W <= 32);
  auto const warp     = cg::tiled_partition<32>(cg::this_thread_block());
  unsigned const w    = threadIdx.x / 32;
  unsigned const lane = warp.thread_rank();
  unsigned const per  = cuda::round_up((table.slots + W - 1) / W, 32u);
  unsigned const lo   = w * per < table.slots ? w * per : table.slots;
  unsigned const hi   = lo + per < table.slots ? lo + per : table.slots;
  bool const has_free = w == W - 1 && table.free_key_used();
  unsigned count      = has_free ? 1u : 0u;
  for (unsigned b = lo; b < hi; b += 32) count += __popc(warp.ballot(b + lane < hi && table.occupied(b + lane)));
  if (lane == 0) warp_counts[w] = count;
  __syncthreads();
  if (w == 0) {
    unsigned total        = 0;
    unsigned const before = tile::exclusive_scan(warp, lane < W ? warp_counts[lane] : 0u,
                                                 cuda::std::plus<unsigned>{}, 0u, total);
    unsigned long long first = 0;
    if (lane == 0 && total > 0) first = reserve(total);
    first = warp.shfl(first, 0);
    if (lane < W) warp_first[lane] = first + before;
  }
  __syncthreads();
  unsigned long long at = warp_first[w];
  unsigned const below  = (1u << lane) - 1u;
  for (unsigned b = lo; b < hi; b += 32) {
    bool const here   = b + lane < hi && table.occupied(b + lane);
    unsigned const m  = warp.ballot(here);
    if (here) {
      typename Table::key_t kb;
      typename Table::entry_t v;
      table.entry(b + lane, kb, v);
      put(at + __popc(m & below), kb, v);
    }
    at += __popc(m);
  }
  if (has_free && lane == 0) {
    typename Table::key_t kb;
    typename Table::entry_t v;
    table.entry(Table::capacity, kb, v);
    put(at, kb, v);
  }
}

/// A HyperLogLog sketch (1024 registers) of the distinct key hashes, fed one hash in 64 (chosen by
/// hash bits, so by key: the sample's distinct count is about a 64th of the whole's; most warps
/// then skip the update). Standard error about 3 % where thousands of keys are sampled (above
/// about 2^17 distinct keys), more below; it only steers how finely group_by partitions, never
/// what it computes (parts split above about 2^20 keys).
struct distinct_sketch {
  static constexpr unsigned registers = 1024;
  static constexpr unsigned sample    = 64;  ///< one hash in `sample` is fed

  /// Feeds hash h into a block's registers (shared memory).
  TILEWISE_DEVICE static void add(unsigned* regs, unsigned long long h) {
    if (((h >> 10) & (sample - 1)) != 0u) return;
    unsigned const rank = static_cast<unsigned>(__clzll(h >> 16)) - 15u;  // leading zeros of 48 bits, + 1
    atomicMax(regs + (h & (registers - 1)), rank);
  }

  /// Folds a block's registers into the global ones (zeroed before the pass).
  template <unsigned Block>
  TILEWISE_DEVICE static void merge(unsigned const* regs, unsigned* global) {
    for (unsigned i = threadIdx.x; i < registers; i += Block) {
      unsigned const r = regs[i];
      if (r > __ldcg(global + i)) atomicMax(global + i, r);
    }
  }

  /// The estimated number of distinct keys; every thread of the block calls and gets it.
  /// `parts`: shared, 2 x Block / 32 floats.
  template <unsigned Block>
  TILEWISE_DEVICE static float estimate(unsigned const* global, float* parts) {
    auto const warp = cg::tiled_partition<32>(cg::this_thread_block());
    float z = 0.0f, zeros = 0.0f;
    for (unsigned i = threadIdx.x; i < registers; i += Block) {
      unsigned const r = __ldcg(global + i);
      z += exp2f(-static_cast<float>(r));
      zeros += r == 0u ? 1.0f : 0.0f;
    }
    z     = tile::reduce(warp, z, cuda::std::plus<float>{});
    zeros = tile::reduce(warp, zeros, cuda::std::plus<float>{});
    if (warp.thread_rank() == 0) {
      parts[2 * (threadIdx.x / 32)]     = z;
      parts[2 * (threadIdx.x / 32) + 1] = zeros;
    }
    __syncthreads();
    z = zeros = 0.0f;
    for (unsigned w = 0; w < Block / 32; ++w) {
      z += parts[2 * w];
      zeros += parts[2 * w + 1];
    }
    constexpr float m = registers;
    float e           = 0.7213f / (1.0f + 1.079f / m) * m * m / z;
    if (e <= 2.5f * m && zeros > 0.0f) e = m * logf(m / zeros);  // small range: linear counting
    return static_cast<float>(sample) * e;
  }
};

}  // namespace tilewise::detail
