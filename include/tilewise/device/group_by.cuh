/// @file
/// @brief device::group_by: unsorted reduce-by-key (hash aggregation): one output row per distinct
///        key, in no particular order, CUB-style two-phase call, no key value reserved.
///
/// Three passes. group_by_spill_kernel: each block pre-aggregates its chunks of the input in a hash
/// table in shared memory; pairs whose key finds no room are spilled, and where the table keeps
/// missing the block stops using it and only counts its keys. Every block also counts, per chunk,
/// the pairs of each of 256 hash parts and feeds a sketch of the number of distinct keys.
/// group_by_scatter_kernel: after a scan of those counts, writes every pair still to be combined
/// (spilled, table entries, and the input the tables skipped) into its part. group_by_bucket_kernel:
/// one block per part combines its pairs in shared memory (splitting the part further first when the
/// sketch says its keys would not fit) and writes the rows. docs/design/group_by.md: the passes,
/// the temp bound, determinism and the measurements.
#pragma once

#include <cooperative_groups.h>

#include <cuda/cmath>
#include <cuda/std/bit>
#include <cuda/std/cstdint>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/for_each_round.cuh>
#include <tilewise/detail/device/hash_partition.cuh>
#include <tilewise/detail/device/hash_slots.cuh>
#include <tilewise/detail/device/privatized_bins.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/device/scan.cuh>
#include <tilewise/tile/group_by.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// Slots of a block table of at most `bytes` and `slots` for these types (a power of two; 0 when
/// not even 64 fit).
template <class U, class T, class Op>
__host__ __device__ constexpr unsigned group_by_slots(unsigned bytes, unsigned slots) {
  using probe_t             = block_slots<U, T, Op, 64>;
  constexpr std::size_t per = sizeof(U) + sizeof(typename probe_t::value_t) + (probe_t::atomic ? 0 : 4);
  unsigned s                = slots;
  while (s >= 64 && s * per + 64 > bytes) s /= 2;
  return s >= 64 ? s : 0;
}

/// Copies of the per-part counters of a block of W warps (privatized_bins: thread t adds to copy
/// t mod copies): as many as warps, at most 32.
template <unsigned W>
inline constexpr unsigned group_by_count_copies = cuda::std::bit_floor(W < 32u ? W : 32u);

/// Loads element i; raw pointers to 4- and 8-byte arithmetic values stream past L1 and leave L2
/// early (`ld.global.cs`).
template <class It>
TILEWISE_DEVICE iter_value_t<It> group_by_load(It it, long long i) {
  using V = iter_value_t<It>;
  if constexpr (cuda::std::is_pointer_v<It> && is_arithmetic_value<V> && (sizeof(V) == 4 || sizeof(V) == 8)) {
    using W = cuda::std::conditional_t<sizeof(V) == 4, unsigned, unsigned long long>;
    return cuda::std::bit_cast<V>(__ldcs(reinterpret_cast<W const*>(it + i)));
  } else {
    return it[i];
  }
}

/// Where a chunk's pairs are after the first pass: spilled to [spill_begin, spill_end) of the
/// spill arrays, and the input pairs [input_begin, input_end) that skipped the table.
struct group_by_chunk {
  long long spill_begin, spill_end, input_begin, input_end;
};

/// The temp storage parts, as the kernels see them.
template <class U, class T>
struct group_by_parts {
  U* spill_keys;                  ///< first pass -> partition pass; the bucket pass's second buffer
  T* spill_values;
  U* part_keys;                   ///< the pairs by part (partition pass -> bucket pass)
  T* part_values;
  unsigned long long* offsets;    ///< [part * chunks + chunk]: counts, then their exclusive scan;
                                  ///< entry hash_parts * chunks: the total
  group_by_chunk* chunk;          ///< per chunk
  unsigned* sketch;               ///< distinct_sketch registers (zeroed)
  unsigned long long* row_count;  ///< rows reserved so far (zeroed)
  unsigned* done;                 ///< bucket blocks finished (zeroed)
  long long chunks;
  long long chunk_pairs;
};

/// Lanes holding lane 0's key from which a warp pre-aggregates with match_any (0: never): the
/// tuning's peer_min for values combined by atomics, locked_peer_min for values under a lock.
template <class Tuning, class T, class Op>
inline constexpr unsigned group_by_peer_min =
  atomic_combine<Op, T> ? Tuning::value.peer_min : Tuning::value.locked_peer_min;

/// Pre-aggregation of one pair by a warp (g: the warp as a tile in full rounds, where the shuffle,
/// vote and reduction are single instructions; the lanes holding a pair in a partial round): if
/// every lane holds lane 0's key, one tile::reduce and one lane puts; if at least PeerMin lanes
/// do (PeerMin > 0), tile::reduce_by_key and one lane per key puts; otherwise every lane puts its
/// own pair.
template <unsigned PeerMin, class G, class U, class T, class Op, class Put>
TILEWISE_DEVICE void group_by_combine(G const& g, U kb, T const& v, Op op, Put&& put) {
  U const k0          = g.shfl(kb, 0);
  unsigned const same = __popc(g.ballot(kb == k0));
  if (same == g.size()) {
    T const r = tile::reduce(g, v, op);
    if (g.thread_rank() == 0) put(kb, r);
  } else if (PeerMin > 0 && same >= PeerMin) {
    auto const r = tile::reduce_by_key(g, kb, v, op);
    if (r.leader) put(kb, r.value);
  } else {
    put(kb, v);
  }
}

/// Appends the pairs each lane marks (bit j of `marked`: ks[j], vs[j]) at `base + place`, places
/// from one atomicAdd per warp on the shared `cursor`, in order of j so that each store
/// instruction writes a contiguous run; calls on_each(key) per pair. The whole warp calls.
template <unsigned I, class U, class T, class F>
TILEWISE_DEVICE void group_by_append(unsigned marked, U const (&ks)[I], T const (&vs)[I], unsigned* cursor,
                                     U* keys_out, T* values_out, long long base, F&& on_each) {
  auto const warp      = cg::tiled_partition<32>(cg::this_thread_block());
  unsigned const total = tile::reduce(warp, static_cast<unsigned>(__popc(marked)), cuda::std::plus<unsigned>{});
  if (total == 0) return;
  unsigned first = 0;
  if (warp.thread_rank() == 0) first = atomicAdd(cursor, total);
  unsigned at          = warp.shfl(first, 0);
  unsigned const below = (1u << warp.thread_rank()) - 1u;
#pragma unroll
  for (unsigned j = 0; j < I; ++j) {
    bool const mine  = (marked >> j & 1u) != 0u;
    unsigned const m = warp.ballot(mine);
    if (mine) {
      long long const q = base + at + __popc(m & below);
      keys_out[q]       = ks[j];
      values_out[q]     = vs[j];
      on_each(ks[j]);
    }
    at += __popc(m);
  }
}

/// One round of block x I pairs [base, base + block x I) of a range ending at `hi`, as the first
/// pass's table rounds and the bucket pass's rounds run it: loads the thread's pairs (pair j:
/// base + j * block + threadIdx.x), combines each through group_by_combine and
/// `insert(key, value)` (false: no room), and appends the pairs that found no room
/// (group_by_append). Block-uniform call.
///
/// `home`, a group_by_home_probes* or nullptr (never): where its `batched` is set (full rounds
/// only), the warp pre-aggregates all I pairs first, then probes every pair's home slot at once
/// (`table.home_cas`: the CASes all in flight together), adds the values of the keys found at
/// home (`table.combine`), and only then inserts the rest one by one from home (`insert`);
/// `home->count` learns how many pairs missed their home.
template <unsigned B, unsigned I, unsigned PeerMin, class U, class T, class Op, class Load, class Insert, class Home,
          class OnEach>
TILEWISE_DEVICE void group_by_round(long long base, long long hi, Load&& load, Op op, Insert&& insert, Home home,
                                    unsigned* cursor, U* keys_out, T* values_out, long long out_base,
                                    OnEach&& on_each) {
  auto const warp = cg::tiled_partition<32>(cg::this_thread_block());
  bool const full = base + static_cast<long long>(B) * I <= hi;
  U k[I];
  T v[I];
#pragma unroll
  for (unsigned j = 0; j < I; ++j) {
    if (full || base + j * B + threadIdx.x < hi) load(base + j * B + threadIdx.x, k[j], v[j]);
  }
  if constexpr (!cuda::std::is_same_v<Home, cuda::std::nullptr_t>) {
    if (full && home->batched) {  // every index below is a constant: the pairs stay in registers
      unsigned lead = 0;           // bit j: this lane puts pair j (its own, or the warp's)
#pragma unroll
      for (unsigned j = 0; j < I; ++j) {  // group_by_combine without match_any, the put deferred
        bool const whole = warp.all(k[j] == warp.shfl(k[j], 0));
        if (whole) v[j] = tile::reduce(warp, v[j], op);
        lead |= (!whole || warp.thread_rank() == 0) ? 1u << j : 0u;
      }
      auto const& table = home->table;
      unsigned at[I];
      U seen[I];
#pragma unroll
      for (unsigned j = 0; j < I; ++j) {  // (the free key has a value slot of its own: insert)
        at[j]   = table.home(key_hash(k[j]));
        seen[j] = table.home_cas((lead >> j & 1u) && k[j] != free_key<U>, k[j], at[j]);
      }
      unsigned marked = 0, missed = 0;
#pragma unroll
      for (unsigned j = 0; j < I; ++j) {
        if (!(lead >> j & 1u)) continue;
        if (k[j] != free_key<U> && (seen[j] == free_key<U> || seen[j] == k[j])) {
          table.combine(at[j], v[j], op);
          home->found();
        } else {
          missed += k[j] != free_key<U> ? 1u : 0u;
          if (!insert(k[j], v[j])) marked |= 1u << j;
        }
      }
      home->count(static_cast<unsigned>(__popc(lead)), missed);
      group_by_append<I>(marked, k, v, cursor, keys_out, values_out, out_base, on_each);
      return;
    }
  }
  unsigned marked = 0;
#pragma unroll
  for (unsigned j = 0; j < I; ++j) {  // every index a constant: the pairs stay in registers
    auto const put = [&](U kb, T const& r) {  // kb is k[j]: a lane puts only its own key
      if (insert(kb, r)) return;
      v[j] = r;
      marked |= 1u << j;
    };
    if (full) {
      group_by_combine<PeerMin>(warp, k[j], v[j], op, put);
    } else if (base + j * B + threadIdx.x < hi) {
      group_by_combine<PeerMin>(cg::coalesced_threads(), k[j], v[j], op, put);
    }
  }
  group_by_append<I>(marked, k, v, cursor, keys_out, values_out, out_base, on_each);
}

/// The first pass's choice of group_by_round's batched home probes, per block: on at the start
/// (where the table holds few keys, nearly every pair finds its key at home); at each of the
/// block's table votes, off for good once most threads saw at least `Percent` % of their pairs
/// miss their home (a home probe that misses costs a second probe from home, one at a time).
template <class Table, unsigned Block, unsigned Percent, class Found>
struct group_by_home_probes {
  Table const& table;
  Found found;  ///< called per pair added at its home
  unsigned tries = 0, misses = 0;
  bool batched   = Percent > 0;  ///< the same in every thread of the block

  TILEWISE_DEVICE void count(unsigned pairs, unsigned missed) {
    tries += pairs;
    misses += missed;
  }
  /// Every thread of the block, when the block votes on its table (a barrier).
  TILEWISE_DEVICE void vote() {
    if (!batched) return;
    bool const mine = tries > 0 && misses * 100ull >= tries * static_cast<unsigned long long>(Percent);
    batched         = __syncthreads_count(mine) <= static_cast<int>(Block / 2);
    tries = misses = 0;
  }
};

/// The first pass's dynamic shared memory: its table, if one fits.
template <class Tuning, class U, class T, class Op>
__host__ __device__ constexpr std::size_t group_by_spill_smem() {
  constexpr group_by_tuning tune = Tuning::value;
  constexpr unsigned S           = group_by_slots<U, T, Op>(tune.table_bytes, tune.table_slots);
  return S > 0 ? block_slots<U, T, Op, S == 0 ? 64 : S>::bytes : 0;
}

/// First pass: block b takes chunks [b * chunks / grid, (b + 1) * chunks / grid). Pairs go
/// through group_by_round into the block table; those that find no room are spilled. Every
/// bypass_rounds rounds the block votes (table_vote; while no insert misses, the rounds between
/// votes double up to bypass_rounds_max): when most threads' inserts missed at least
/// bypass_miss_percent of the time, the table keeps what it has and the block's later pairs only
/// have their keys counted (the partition pass reads them from the input). The block's last
/// chunk also spills the table's entries. Per chunk: the pairs of each part (privatized_bins),
/// and where its pairs are.
template <class Tuning, class KeysIn, class ValuesIn, class K, class T, class Op>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.block, Tuning::value.min_blocks)
  group_by_spill_kernel(KeysIn keys, ValuesIn values, long long n, Op op, group_by_parts<key_bits_t<K>, T> p) {
  constexpr group_by_tuning tune = Tuning::value;
  constexpr unsigned B           = tune.block;
  constexpr unsigned I           = tune.items;
  constexpr unsigned W           = B / 32;
  using U                        = key_bits_t<K>;
  constexpr unsigned S           = group_by_slots<U, T, Op>(tune.table_bytes, tune.table_slots);
  constexpr bool local_table     = S > 0;
  using table_t                  = block_slots<U, T, Op, local_table ? S : 64>;
  static_assert(B % 32 == 0 && B <= 1024 && I <= 32, "group_by: whole warps, at most 32 items");

  extern __shared__ __align__(16) unsigned char group_by_smem[];
  constexpr unsigned copies      = group_by_count_copies<W>;
  __shared__ unsigned part_count[hash_parts * copies];
  __shared__ unsigned sketch[distinct_sketch::registers];
  __shared__ unsigned spilled;  // pairs the current chunk spilled so far
  __shared__ unsigned warp_counts[W];
  __shared__ unsigned long long warp_first[W];

  table_t const table{group_by_smem, local_table ? S : 64u};
  if constexpr (local_table) table.template clear<B>();
  for (unsigned i = threadIdx.x; i < distinct_sketch::registers; i += B) sketch[i] = 0u;
  if (blockIdx.x == 0 && threadIdx.x == 0) p.offsets[hash_parts * p.chunks] = 0;  // the scan's total
  privatized_bins<unsigned, false> parts{part_count, privatized_layout::make(hash_parts, copies, 1)};
  parts.zero();  // and again by each chunk's flush

  auto const count_key = [&](U kb) {
    unsigned long long const h = key_hash(kb);
    parts.add(hash_part(h));
    distinct_sketch::add(sketch, h);
  };
  auto const load = [&](long long i, U& kb, T& v) {
    kb = static_cast<U>(group_by_load(keys, i));
    v  = group_by_load(values, i);
  };
  long long const c0 = static_cast<long long>(blockIdx.x) * p.chunks / gridDim.x;
  long long const c1 = static_cast<long long>(blockIdx.x + 1) * p.chunks / gridDim.x;
  long long at       = c0 * p.chunk_pairs;  // the block's next spill place (its spill never outgrows its pairs)
  table_vote<B, tune.bypass_rounds, tune.bypass_miss_percent, tune.bypass_rounds_max> vote;
  vote.bypass = !local_table;
  // batched home probes: atomic values without match_any, where the tuning allows them
  constexpr bool batch_homes = table_t::atomic && group_by_peer_min<Tuning, T, Op> == 0 && tune.home_miss_percent > 0;
  auto const found_home      = [&] { vote.count(true); };
  group_by_home_probes<table_t, B, tune.home_miss_percent, decltype(found_home)> homes{table, found_home};
  constexpr long long round = static_cast<long long>(B) * I;
  for (long long c = c0; c < c1; ++c) {
    long long const lo = c * p.chunk_pairs;
    long long const hi = lo + p.chunk_pairs < n ? lo + p.chunk_pairs : n;
    if (threadIdx.x == 0) spilled = 0u;
    __syncthreads();
    long long base = lo;
    for (; !vote.bypass && base < hi; base += round) {
      auto const insert = [&](U kb, T const& r) {
        bool const in = table.add(kb, r, op, key_hash(kb), tune.table_probes, tune.probe_reads != 0);
        vote.count(in);
        return in;
      };
      constexpr unsigned peer_min = group_by_peer_min<Tuning, T, Op>;
      if constexpr (batch_homes) {
        group_by_round<B, I, peer_min, U, T>(base, hi, load, op, insert, &homes, &spilled, p.spill_keys,
                                             p.spill_values, at, count_key);
      } else {
        group_by_round<B, I, peer_min, U, T>(base, hi, load, op, insert, nullptr, &spilled, p.spill_keys,
                                             p.spill_values, at, count_key);
      }
      if (vote.round()) {
        if constexpr (batch_homes) homes.vote();
      }
    }
    // the rest of the chunk, once the block has given up its table: keys only counted, each round
    // issuing the next round's loads before it counts its own keys
    long long const input_begin = base < hi ? base : hi;
    for_each_round<B, I, true>(
      input_begin, round, hi, [&](long long i) { return static_cast<U>(group_by_load(keys, i)); }, count_key,
      no_round_barrier{});
    if constexpr (local_table) {
      if (c == c1 - 1) {  // the table's entries join the block's last chunk
        __syncthreads();
        drain_table<B>(
          table, [&](unsigned total) { return static_cast<unsigned long long>(atomicAdd(&spilled, total)); },
          [&](unsigned long long r, U kb, T const& val) {
            long long const q = at + static_cast<long long>(r);
            p.spill_keys[q]   = kb;
            p.spill_values[q] = val;
            count_key(kb);
          },
          warp_counts, warp_first);
      }
    }
    __syncthreads();
    long long const spill_end = at + spilled;
    parts.template flush<true>([&](unsigned part, unsigned total) { p.offsets[part * p.chunks + c] = total; });
    if (threadIdx.x == 0) p.chunk[c] = group_by_chunk{at, spill_end, input_begin, hi};
    at = spill_end;
    __syncthreads();
  }
  distinct_sketch::merge<B>(sketch, p.sketch);
}

/// The scatter of Block threads with Items pairs each, fewer where wide values would not fit the
/// stage (part_scatter_items): the partition pass's (scatter_block, scatter_items) and the bucket
/// pass's split (bucket_block, bucket_scatter_items). The kernels and the host's shared-memory
/// sizes name the same type.
template <class Tuning, unsigned Block, unsigned Items, class U, class T>
using group_by_scatter_t =
  part_scatter<Block, part_scatter_items<Block, U, T>(Items), U, T, Tuning::value.scatter_ahead != 0>;

/// Partition pass: block c writes chunk c's pairs (spilled ones, then input ones) into their
/// parts, at the places the scanned counts give.
template <class Tuning, class KeysIn, class ValuesIn, class U, class T>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.scatter_block, Tuning::value.scatter_min_blocks)
  group_by_scatter_kernel(KeysIn keys, ValuesIn values, group_by_parts<U, T> p) {
  constexpr unsigned B = Tuning::value.scatter_block;
  using scatter_t      = group_by_scatter_t<Tuning, B, Tuning::value.scatter_items, U, T>;
  extern __shared__ __align__(16) unsigned char group_by_smem[];
  __shared__ typename scatter_t::counters ctr;
  __shared__ unsigned long long running[hash_parts];

  long long const c        = blockIdx.x;
  group_by_chunk const rec = p.chunk[c];
  for (unsigned i = threadIdx.x; i < hash_parts; i += B) running[i] = p.offsets[i * p.chunks + c];
  long long const spilled = rec.spill_end - rec.spill_begin;
  long long const total   = spilled + rec.input_end - rec.input_begin;
  scatter_t{group_by_smem, ctr}.range(
    total,
    [&](long long t, U& k, T& v) {
      if (t < spilled) {
        k = p.spill_keys[rec.spill_begin + t];
        v = p.spill_values[rec.spill_begin + t];
      } else {
        k = static_cast<U>(group_by_load(keys, rec.input_begin + (t - spilled)));
        v = group_by_load(values, rec.input_begin + (t - spilled));
      }
    },
    [](U k) { return hash_part(key_hash(k)); }, hash_parts, running, p.part_keys, p.part_values);
}

/// The sub-part bits of a part of `pairs` pairs: none when they fit the table even if all
/// distinct, else enough that its share of the estimated distinct keys (with 10 % to spare) fills
/// at most bucket_fill_percent of the table, at most 8.
template <class Tuning>
TILEWISE_DEVICE unsigned group_by_sub_bits(long long pairs, float distinct, unsigned slots) {
  float const room = static_cast<float>(slots) * Tuning::value.bucket_fill_percent / 100.0f;
  if (static_cast<float>(pairs) <= room) return 0;
  float keys    = distinct / hash_parts * 1.1f;
  unsigned bits = 0;
  while (bits < 8 && keys > room) {
    keys /= 2.0f;
    ++bits;
  }
  return bits;
}

/// The bucket pass's dynamic shared memory: its table, or (splitting a part, not at the same
/// time) part_scatter's stage.
template <class Tuning, class U, class T, class Op>
__host__ __device__ constexpr std::size_t group_by_bucket_smem() {
  constexpr group_by_tuning tune = Tuning::value;
  constexpr unsigned S           = group_by_slots<U, T, Op>(tune.bucket_table_bytes, tune.bucket_table_slots);
  constexpr std::size_t table    = block_slots<U, T, Op, S < 64 ? 64 : S>::bytes;
  constexpr std::size_t stage =
    group_by_scatter_t<Tuning, tune.bucket_block, tune.bucket_scatter_items, U, T>::bytes;
  return table > stage ? table : stage;
}

/// Bucket pass: block b combines part b's pairs and writes its rows. Rounds of: clear a table
/// sized for the pairs left (a power of two, at least twice their count, at most the capacity),
/// run every pair through group_by_round (pairs of keys that find no room move to the other
/// buffer), drain the table to the output with one atomicAdd on the row count. A round takes at
/// least one key, so the rounds end; usually there is one. When the sketch says the part has too
/// many keys for one table, the part is first split into 2^bits sub-parts (a count in
/// privatized_bins, a scan and a part_scatter into the other buffer), each then combined in
/// rounds. The last block to finish writes the row count.
template <class Tuning, class K, class T, class Op, class KeysOut, class AggregatesOut, class NumGroupsOut>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.bucket_block, Tuning::value.bucket_min_blocks)
  group_by_bucket_kernel(group_by_parts<key_bits_t<K>, T> p, Op op, KeysOut keys_out, AggregatesOut aggregates_out,
                         NumGroupsOut num_groups_out) {
  constexpr group_by_tuning tune = Tuning::value;
  constexpr unsigned B           = tune.bucket_block;
  constexpr unsigned I           = tune.items;
  constexpr unsigned W           = B / 32;
  using U                        = key_bits_t<K>;
  constexpr unsigned S           = group_by_slots<U, T, Op>(tune.bucket_table_bytes, tune.bucket_table_slots);
  static_assert(S >= 64, "group_by: a bucket table must hold 64 slots (bucket_table_bytes is too small for T)");
  using table_t                  = block_slots<U, T, Op, S>;
  using scatter_t                = group_by_scatter_t<Tuning, B, tune.bucket_scatter_items, U, T>;
  constexpr unsigned SI          = scatter_t::items;
  using count_v                  = iter_value_t<NumGroupsOut>;
  using count_t                  = cuda::std::conditional_t<cuda::std::is_void_v<count_v>, long long, count_v>;

  extern __shared__ __align__(16) unsigned char group_by_smem[];  // the table, or the scatter's stage
  __shared__ typename scatter_t::counters ctr;
  // at most 16 copies: 22 KB of static shared memory, beside a stage of part_scatter_max_bytes
  constexpr unsigned copies      = group_by_count_copies<W < 16u ? W : 16u>;
  __shared__ unsigned sub_bins[hash_parts * copies];  // sub-part counts (privatized_bins)
  __shared__ unsigned long long running[hash_parts];
  __shared__ unsigned sub_count[hash_parts];
  __shared__ unsigned sub_start[hash_parts];
  __shared__ unsigned deferred;
  __shared__ unsigned warp_counts[W];
  __shared__ unsigned long long warp_first[W];
  __shared__ float sketch_parts[2 * W];

  // Combines the pairs src[a, z) in rounds, moving the pairs that wait to alt[a, ...).
  auto const combine_range = [&](U* sk, T* sv, U* ak, T* av, long long a, long long z) {
    for (;;) {
      long long const left = z - a;
      unsigned slots       = S;
      while (slots > 64 && static_cast<long long>(slots / 2) >= 2 * left) slots /= 2;
      table_t const table{group_by_smem, slots};
      table.template clear<B>();
      if (threadIdx.x == 0) deferred = 0u;
      __syncthreads();
      auto const load   = [&](long long i, U& kb, T& v) {
        kb = sk[i];
        v  = sv[i];
      };
      auto const insert = [&](U kb, T const& r) {
        return table.add(kb, r, op, key_hash(kb), tune.bucket_probes, tune.probe_reads != 0);
      };
      for (long long base = a; base < z; base += static_cast<long long>(B) * I) {
        constexpr unsigned peer_min = group_by_peer_min<Tuning, T, Op>;
        group_by_round<B, I, peer_min, U, T>(base, z, load, op, insert, nullptr, &deferred, ak, av, a, [](U) {});
      }
      __syncthreads();
      drain_table<B>(
        table, [&](unsigned total) { return atomicAdd(p.row_count, static_cast<unsigned long long>(total)); },
        [&](unsigned long long r, U kb, T const& val) {
          keys_out[static_cast<long long>(r)]       = static_cast<K>(kb);
          aggregates_out[static_cast<long long>(r)] = val;
        },
        warp_counts, warp_first);
      unsigned const waiting = deferred;
      __syncthreads();  // the table is read and `deferred` seen before the next round clears them
      if (waiting == 0u) return;
      cuda::std::swap(sk, ak);
      cuda::std::swap(sv, av);
      z = a + waiting;
    }
  };

  long long const s    = static_cast<long long>(p.offsets[blockIdx.x * p.chunks]);
  long long const e    = static_cast<long long>(p.offsets[(blockIdx.x + 1) * p.chunks]);
  float const distinct = distinct_sketch::estimate<B>(p.sketch, sketch_parts);
  if (e > s) {
    unsigned const bits = group_by_sub_bits<Tuning>(e - s, distinct, S);
    if (bits == 0) {
      combine_range(p.part_keys, p.part_values, p.spill_keys, p.spill_values, s, e);
    } else {
      unsigned const digits = 1u << bits;
      privatized_bins<unsigned, false> subs{sub_bins, privatized_layout::make(digits, copies, 1)};
      subs.zero();
      __syncthreads();
      for (long long base = s; base < e; base += static_cast<long long>(B) * SI) {
        U k[SI];
#pragma unroll
        for (unsigned j = 0; j < SI; ++j) {
          long long const i = base + j * B + threadIdx.x;
          if (i < e) k[j] = p.part_keys[i];
        }
#pragma unroll
        for (unsigned j = 0; j < SI; ++j) {
          if (base + j * B + threadIdx.x < e) subs.add(hash_sub_part(key_hash(k[j]), bits));
        }
      }
      __syncthreads();
      subs.template flush<true>([&](unsigned d, unsigned total) { sub_count[d] = total; });
      __syncthreads();
      if (threadIdx.x < 32) warp_exclusive_sums(sub_count, sub_start, digits);
      __syncthreads();
      if (threadIdx.x < digits) running[threadIdx.x] = static_cast<unsigned long long>(s) + sub_start[threadIdx.x];
      scatter_t{group_by_smem, ctr}.range(
        e - s,
        [&](long long i, U& k, T& v) {
          k = p.part_keys[s + i];
          v = p.part_values[s + i];
        },
        [bits](U k) { return hash_sub_part(key_hash(k), bits); }, digits, running, p.spill_keys, p.spill_values);
      __syncthreads();
      for (unsigned dgt = 0; dgt < digits; ++dgt) {
        long long const a = s + sub_start[dgt];
        long long const z = a + sub_count[dgt];
        if (z > a) combine_range(p.spill_keys, p.spill_values, p.part_keys, p.part_values, a, z);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // this block's rows and reservations before its arrival
    if (atomicAdd(p.done, 1u) == gridDim.x - 1) {
      __threadfence();
      num_groups_out[0] = static_cast<count_t>(atomicAdd(p.row_count, 0ull));
    }
  }
}

/// num_items == 0: the row count alone.
template <class NumGroupsOut>
TILEWISE_KERNEL void group_by_empty_kernel(NumGroupsOut num_groups_out) {
  using count_v     = iter_value_t<NumGroupsOut>;
  using count_t     = cuda::std::conditional_t<cuda::std::is_void_v<count_v>, long long, count_v>;
  num_groups_out[0] = count_t(0);
}

/// How the input splits into chunks: whole rounds of the first pass, about `tune.chunks` of them
/// (fewer for inputs of fewer rounds).
struct group_by_plan {
  long long chunk_pairs;
  long long chunks;
};
template <class Tuning>
constexpr group_by_plan group_by_plan_of(long long num_items) {
  constexpr group_by_tuning tune = Tuning::value;
  long long const round          = static_cast<long long>(tune.block) * tune.items;
  long long const rounds         = cuda::ceil_div(num_items, round);
  long long const per_chunk      = rounds > tune.chunks ? cuda::ceil_div(rounds, static_cast<long long>(tune.chunks)) : 1;
  long long const chunk_pairs    = per_chunk * round;
  return {chunk_pairs, cuda::ceil_div(num_items, chunk_pairs)};
}

/// Larger inputs are refused (their temp size would overflow size_t arithmetic).
inline constexpr long long group_by_max_items = 1ll << 48;

template <class Tuning, class KeysIn, class ValuesIn, class KeysOut, class AggregatesOut, class NumGroupsOut, class Op>
cudaError_t dispatch_group_by(void* temp, std::size_t& temp_bytes, KeysIn keys_in, ValuesIn values_in, KeysOut keys_out,
                              AggregatesOut aggregates_out, NumGroupsOut num_groups_out, long long num_items, Op op,
                              cudaStream_t stream) {
  using K = iter_value_t<KeysIn>;
  using T = iter_value_t<ValuesIn>;
  static_assert(cuda::std::is_integral_v<K> && !cuda::std::is_same_v<K, bool> && (sizeof(K) == 4 || sizeof(K) == 8),
                "tilewise::device::group_by: keys must be 4- or 8-byte integers (int32, uint32, int64, uint64)");
  static_assert(cuda::std::is_trivially_copyable_v<T>, "tilewise::device::group_by: values must be trivially copyable");
  static_assert(part_scatter_items<Tuning::value.scatter_block, key_bits_t<K>, T>(1) > 0 &&
                  part_scatter_items<Tuning::value.bucket_block, key_bits_t<K>, T>(1) > 0,
                "tilewise::device::group_by: values too large for the partition pass (a pair per thread of a "
                "block must fit 200 KB of shared memory: at most about 190 bytes)");
  using U                        = key_bits_t<K>;
  using parts_t                  = group_by_parts<U, T>;
  constexpr group_by_tuning tune = Tuning::value;
  if (num_items < 0 || num_items > group_by_max_items) {
    return cudaErrorInvalidValue;
  }
  group_by_plan const plan  = group_by_plan_of<Tuning>(num_items);
  long long const entries   = hash_parts * plan.chunks + 1;
  std::size_t scan_bytes    = 0;
  auto const plus           = cuda::std::plus<unsigned long long>{};
  TILEWISE_RETURN_IF_ERROR(device::exclusive_scan(nullptr, scan_bytes, static_cast<unsigned long long*>(nullptr),
                                                  static_cast<unsigned long long*>(nullptr), entries, plus, 0ull));
  std::size_t const n       = static_cast<std::size_t>(num_items);
  temp_layout layout;
  std::size_t const control_bytes = distinct_sketch::registers * sizeof(unsigned) + 2 * sizeof(unsigned long long);
  std::size_t const control = layout.add(control_bytes);
  std::size_t const offsets = layout.add(static_cast<std::size_t>(entries) * sizeof(unsigned long long));
  std::size_t const scan    = layout.add(scan_bytes);
  std::size_t const chunk   = layout.add(static_cast<std::size_t>(plan.chunks) * sizeof(group_by_chunk));
  std::size_t const xk      = layout.add(n * sizeof(U));
  std::size_t const xv      = layout.add(n * sizeof(T));
  std::size_t const yk      = layout.add(n * sizeof(U));
  std::size_t const yv      = layout.add(n * sizeof(T));
  bool query                = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query) {
    return cudaSuccess;
  }
  if ((num_items > 0 && (null_pointer(keys_in) || null_pointer(values_in) || null_pointer(keys_out) ||
                         null_pointer(aggregates_out))) ||
      null_pointer(num_groups_out)) {
    return cudaErrorInvalidValue;
  }
  if (num_items == 0) {
    group_by_empty_kernel<<<1, 1, 0, stream>>>(num_groups_out);
    return cudaPeekAtLastError();
  }
  auto* const words = temp_layout::at<unsigned>(temp, control);
  parts_t const p{temp_layout::at<U>(temp, xk),
                  temp_layout::at<T>(temp, xv),
                  temp_layout::at<U>(temp, yk),
                  temp_layout::at<T>(temp, yv),
                  temp_layout::at<unsigned long long>(temp, offsets),
                  temp_layout::at<group_by_chunk>(temp, chunk),
                  words,
                  reinterpret_cast<unsigned long long*>(words + distinct_sketch::registers),
                  words + distinct_sketch::registers + 2,
                  plan.chunks,
                  plan.chunk_pairs};
  TILEWISE_RETURN_IF_ERROR(cudaMemsetAsync(words, 0, control_bytes, stream));

  auto const spill                 = group_by_spill_kernel<Tuning, KeysIn, ValuesIn, K, T, Op>;
  constexpr std::size_t spill_smem = group_by_spill_smem<Tuning, U, T, Op>();
  // Each kernel is told its dynamic shared memory: with its static part it may pass 48 KB.
  if constexpr (spill_smem > 0) {
    TILEWISE_RETURN_IF_ERROR(
      cudaFuncSetAttribute(spill, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(spill_smem)));
  }
  static resident_cache cache;
  int wave = 0;
  TILEWISE_RETURN_IF_ERROR(cache.get(spill, tune.block, spill_smem, wave));
  long long const blocks = plan.chunks < wave ? plan.chunks : wave;
  spill<<<static_cast<unsigned>(blocks), tune.block, spill_smem, stream>>>(keys_in, values_in, num_items, op, p);
  TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());

  TILEWISE_RETURN_IF_ERROR(device::exclusive_scan(temp_layout::at<unsigned char>(temp, scan), scan_bytes, p.offsets,
                                                  p.offsets, entries, plus, 0ull, stream));

  auto const scatter                 = group_by_scatter_kernel<Tuning, KeysIn, ValuesIn, U, T>;
  constexpr std::size_t scatter_smem =
    group_by_scatter_t<Tuning, tune.scatter_block, tune.scatter_items, U, T>::bytes;
  if constexpr (scatter_smem > 0) {
    TILEWISE_RETURN_IF_ERROR(
      cudaFuncSetAttribute(scatter, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(scatter_smem)));
  }
  scatter<<<static_cast<unsigned>(plan.chunks), tune.scatter_block, scatter_smem, stream>>>(keys_in, values_in, p);
  TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());

  auto const bucket                 = group_by_bucket_kernel<Tuning, K, T, Op, KeysOut, AggregatesOut, NumGroupsOut>;
  constexpr std::size_t bucket_smem = group_by_bucket_smem<Tuning, U, T, Op>();
  if constexpr (bucket_smem > 0) {
    TILEWISE_RETURN_IF_ERROR(
      cudaFuncSetAttribute(bucket, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bucket_smem)));
  }
  bucket<<<hash_parts, tune.bucket_block, bucket_smem, stream>>>(p, op, keys_out, aggregates_out, num_groups_out);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Unsorted reduce-by-key: for every distinct key among `keys_in[0, num_items)`, one output
///        row `(key, op-reduction of the values of its pairs)`, rows in unspecified order.
/// @tparam KeysInputIt   random-access iterator to int32, uint32, int64 or uint64 keys (raw pointer,
///                       thrust::device_ptr, Thrust fancy iterators); every key value is valid
/// @tparam ValuesInputIt random-access iterator to values of any trivially copyable type T of at
///                       most about 190 bytes (the aggregate type is the iterator's value type;
///                       a larger T stops at compile time)
/// @tparam KeysOutputIt  random-access output iterator for keys
/// @tparam AggregatesOutputIt random-access output iterator for aggregates (T)
/// @tparam NumGroupsOutputIt random-access output iterator to an integer (device memory)
/// @tparam Op            commutative, associative binary functor on T. plus, minimum, maximum (and
///                       bit_and/or/xor on integers) on 4- and 8-byte arithmetic T combine with
///                       atomics; any other T or functor through a lock per slot
/// @param temp           device scratch, or nullptr to query `temp_bytes`; needs no initialisation
/// @param temp_bytes     size of `temp` (in), or the size needed (out, when `temp == nullptr`):
///                       at most 2 * num_items * (sizeof(K) + sizeof(T)) + 5 MiB (two copies of
///                       the pairs, for the spill and the parts, plus per-chunk counts)
/// @param keys_in        the first key
/// @param values_in      the first value (pair i is `(keys_in[i], values_in[i])`)
/// @param keys_out       receives the distinct keys, rows [0, *num_groups_out)
/// @param aggregates_out receives each row's reduction
/// @param num_groups_out receives the number of rows (written even when num_items == 0)
/// @param num_items      number of pairs, 0 <= num_items < 2^48 (64-bit)
/// @param op             the reduction functor
/// @param stream         the stream of the launches
/// @return cudaSuccess; cudaErrorInvalidValue for a negative or too large num_items, a null pointer
///         (inputs and outputs with num_items > 0, num_groups_out always) or too small a
///         `temp_bytes`; or a launch's error
/// @note Asynchronous in `stream`: a memset, three kernel launches and a device scan, never a
///       synchronization; works inside stream capture (a captured graph may be launched any
///       number of times). Outputs beyond the row count are never written. Deterministic: the set
///       of rows, and every integer aggregate (exact). Floating-point sums are combined in an
///       order that depends on timing, so they may differ in the last bits from run to run (the
///       error is that of some summation order: within (m - 1) * eps(T) * sum|x_i| for a key of m
///       pairs); min and max are exact. Row order differs from run to run. `temp` may hold
///       anything: every part is written before it is read.
template <class KeysInputIt, class ValuesInputIt, class KeysOutputIt, class AggregatesOutputIt,
          class NumGroupsOutputIt, class Op>
cudaError_t group_by(void* temp, std::size_t& temp_bytes, KeysInputIt keys_in, ValuesInputIt values_in,
                     KeysOutputIt keys_out, AggregatesOutputIt aggregates_out, NumGroupsOutputIt num_groups_out,
                     std::int64_t num_items, Op op, cudaStream_t stream = 0) {
  return detail::dispatch_group_by<detail::group_by_tuned>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(keys_in), thrust::try_unwrap_contiguous_iterator(values_in),
    thrust::try_unwrap_contiguous_iterator(keys_out), thrust::try_unwrap_contiguous_iterator(aggregates_out),
    thrust::try_unwrap_contiguous_iterator(num_groups_out), num_items, op, stream);
}

}  // namespace tilewise::device

#include <tilewise/detail/device/extern_group_by.cuh>
