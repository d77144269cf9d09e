/// @file
/// @brief device::group_by: unsorted reduce-by-key (hash aggregation): one output row per distinct
///        key, in no particular order, CUB-style two-phase call, no key value reserved.
///
/// How: one wave of blocks splits the pairs into contiguous ranges (detail::group_by_aggregate_kernel).
/// A cheap probe per warp and pair (does lane 0's key repeat?) sends a warp whose lanes all hold
/// one key through one tile::reduce, one with many repeats through tile::reduce_by_key, and
/// otherwise each lane on its own; then the pair goes into the block's hash table in shared
/// memory, or, when that table has no room for its key, into the global table in temp storage.
/// Finally each block flushes its table into the global one, and group_by_emit_kernel writes the
/// rows the global table recorded. docs/design/group_by.md: the slot protocol, the temp bound,
/// determinism and the measurements.
#pragma once

#include <cooperative_groups.h>

#include <cuda/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/hash_slots.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/tile/group_by.cuh>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// Slots of a block's table for these types (a power of two, 0: no block table).
template <class Tuning, class U, class T, class Op>
__host__ __device__ constexpr unsigned group_by_table_slots() {
  constexpr group_by_tuning t = Tuning::value;
  using local_t               = block_slots<U, T, Op, 64>;
  constexpr std::size_t per   = sizeof(U) + sizeof(typename local_t::value_t) + (local_t::atomic ? 0 : 4);
  unsigned s                  = t.table_slots;
  while (s >= 64 && s * per + 64 > t.table_bytes) s /= 2;
  return s >= 64 ? s : 0;
}

/// Dynamic shared memory of the aggregation kernel.
template <class Tuning, class U, class T, class Op>
__host__ __device__ constexpr std::size_t group_by_smem_bytes() {
  constexpr unsigned s = group_by_table_slots<Tuning, U, T, Op>();
  if constexpr (s == 0) {
    return 0;
  } else {
    return block_slots<U, T, Op, s>::bytes;
  }
}

/// Loads element i; raw pointers to 4- and 8-byte arithmetic values stream past L1 and leave L2
/// early (`ld.global.cs`), so the global table stays in L2.
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

inline constexpr unsigned long long no_slot = ~0ull;

/// Appends the slots this round inserted into the global table (`fresh`, no_slot where none) to
/// its row list: one atomic per warp and round, and nothing at all in a warp that inserted
/// nothing (the common case at low cardinality). Every lane of the warp calls.
template <unsigned Items, class Table>
TILEWISE_DEVICE void group_by_record_rows(unsigned long long const (&fresh)[Items], Table const& table) {
  unsigned mine = 0;
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) mine += fresh[j] != no_slot;
  auto const warp = cg::tiled_partition<32>(cg::this_thread_block());
  if (!warp.any(mine != 0)) return;
  unsigned total       = 0;
  unsigned const below = tile::exclusive_scan(warp, mine, cuda::std::plus<unsigned>{}, 0u, total);
  unsigned long long base = 0;
  if (warp.thread_rank() == 0) base = atomicAdd(table.row_count, static_cast<unsigned long long>(total));
  unsigned long long at = warp.shfl(base, 0) + below;
#pragma unroll
  for (unsigned j = 0; j < Items; ++j) {
    if (fresh[j] != no_slot) table.rows[at++] = fresh[j];
  }
}

template <class Tuning, class KeysIn, class ValuesIn, class K, class T, class Op>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.block, Tuning::value.min_blocks)
  group_by_aggregate_kernel(KeysIn keys, ValuesIn values, long long n, long long per_block, Op op,
                            global_slots<key_bits_t<K>, T, Op> table) {
  constexpr group_by_tuning tune = Tuning::value;
  constexpr unsigned B           = tune.block;
  constexpr unsigned I           = tune.items;
  using U                        = key_bits_t<K>;
  constexpr unsigned S           = group_by_table_slots<Tuning, U, T, Op>();
  constexpr bool local_table     = S > 0;
  using local_t                  = block_slots<U, T, Op, local_table ? S : 64>;
  static_assert(B % 32 == 0 && B <= 1024, "group_by: the block is whole warps");

  extern __shared__ __align__(16) unsigned char group_by_smem[];
  local_t const local{group_by_smem};
  table.begin();
  if constexpr (local_table) {
    local.template clear<B>();
    __syncthreads();
  }

  // Per warp (uniform): whether its pairs skip the block table; per lane: this window's tries.
  bool bypass       = !local_table;
  unsigned window   = 0;
  unsigned tries    = 0;
  unsigned misses   = 0;
  auto const insert = [&](U kb, T const& v, unsigned long long& fresh) {
    unsigned long long const h = mix_bits(kb);
    if constexpr (local_table) {
      if (!bypass) {
        ++tries;
        if (local.add(kb, v, op, h, tune.table_probes)) return;
        ++misses;
      }
    }
    unsigned long long slot;
    if (table.add(kb, v, op, h, slot)) fresh = slot;
  };
  // The probe: lane 0's key against every lane's (one shuffle, one vote). `g` is the whole warp
  // in full rounds (the shuffle, vote and reduction are then single instructions) and the lanes
  // that hold a pair in the last, partial round.
  auto const accumulate = [&](auto const& g, K k, T const& v, unsigned long long& fresh) {
    U const kb           = static_cast<U>(k);
    U const k0           = g.shfl(kb, 0);
    unsigned const same  = __popc(g.ballot(kb == k0));
    if (same == g.size()) {
      T const r = tile::reduce(g, v, op);
      if (g.thread_rank() == 0) insert(kb, r, fresh);
    } else if (same >= tune.peer_min) {
      auto const r = tile::reduce_by_key(g, kb, v, op);
      if (r.leader) insert(kb, r.value, fresh);
    } else {
      insert(kb, v, fresh);
    }
  };

  auto const warp    = cg::tiled_partition<32>(cg::this_thread_block());
  long long const lo = static_cast<long long>(blockIdx.x) * per_block;
  long long const hi = lo + per_block < n ? lo + per_block : n;
  for (long long base = lo; base < hi; base += static_cast<long long>(B) * I) {
    bool const full = base + static_cast<long long>(B) * I <= hi;
    K k[I];
    T v[I];
#pragma unroll
    for (unsigned j = 0; j < I; ++j) {
      long long const i = base + j * B + threadIdx.x;
      if (full || i < hi) {
        k[j] = group_by_load(keys, i);
        v[j] = group_by_load(values, i);
      }
    }
    unsigned long long fresh[I];
#pragma unroll 1
    for (unsigned j = 0; j < I; ++j) {  // one copy of the pair's code (registers: 2 blocks per SM)
      fresh[j] = no_slot;
      if (full) {
        accumulate(warp, k[j], v[j], fresh[j]);
      } else if (base + j * B + threadIdx.x < hi) {
        accumulate(cg::coalesced_threads(), k[j], v[j], fresh[j]);
      }
    }
    if constexpr (local_table) {
      if (!bypass && ++window == tune.bypass_window) {
        bool const vote = tries > 0 && misses * 100ull >= tries * static_cast<unsigned long long>(tune.bypass_miss_percent);
        bypass          = __popc(__ballot_sync(~0u, vote)) > 16;
        window = tries = misses = 0;
      }
    }
    group_by_record_rows<I>(fresh, table);
  }

  if constexpr (local_table) {  // the block's table (and the free key's slot S) into the global one
    __syncthreads();
    for (unsigned c = 0; c <= S; c += B * I) {
      unsigned long long fresh[I];
#pragma unroll
      for (unsigned j = 0; j < I; ++j) {
        fresh[j]         = no_slot;
        unsigned const i = c + j * B + threadIdx.x;
        U kb;
        T val;
        if (i <= S && local.entry(i, kb, val)) {
          unsigned long long slot;
          if (table.add(kb, val, op, mix_bits(kb), slot)) fresh[j] = slot;
        }
      }
      group_by_record_rows<I>(fresh, table);
    }
  }
}

/// Writes the recorded rows, the count, and bumps the generation (the next call's epoch).
template <unsigned Block, class K, class T, class Op, class KeysOut, class AggregatesOut, class NumGroupsOut>
TILEWISE_KERNEL void __launch_bounds__(Block)
  group_by_emit_kernel(global_slots<key_bits_t<K>, T, Op> table, KeysOut keys_out, AggregatesOut aggregates_out,
                       NumGroupsOut num_groups_out) {
  using U                        = key_bits_t<K>;
  using count_v                  = iter_value_t<NumGroupsOut>;
  using count_t                  = cuda::std::conditional_t<cuda::std::is_void_v<count_v>, long long, count_v>;
  unsigned long long const count = __ldcg(table.row_count);
  unsigned long long const step  = static_cast<unsigned long long>(Block) * gridDim.x;
  for (unsigned long long r = static_cast<unsigned long long>(blockIdx.x) * Block + threadIdx.x; r < count; r += step) {
    unsigned long long const s = __ldcg(table.rows + r);
    long long const at         = static_cast<long long>(r);
    keys_out[at]       = static_cast<K>(static_cast<U>(__ldcg(table.headers + 2 * s + 1)));
    aggregates_out[at] = slot_value_load<Op, T>(table.values + s);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    num_groups_out[0]  = static_cast<count_t>(count);
    *table.generation = __ldcg(table.generation) + 1;
  }
}

/// The most distinct keys of num_items pairs, and the global table's slots (load <= 2/3).
struct group_by_sizes {
  unsigned long long groups;
  unsigned long long slots;
};
template <class K>
constexpr group_by_sizes group_by_size(long long num_items) {
  unsigned long long d = static_cast<unsigned long long>(num_items);
  if (sizeof(K) == 4 && d > (1ull << 32)) d = 1ull << 32;
  unsigned long long const g = cuda::round_up(d + d / 2 + 1, 64ull);
  return {d, g};
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
  using U       = key_bits_t<K>;
  using table_t = global_slots<U, T, Op>;
  using value_t = typename table_t::value_t;
  constexpr group_by_tuning tune = Tuning::value;
  if (num_items < 0 || num_items > group_by_max_items) {
    return cudaErrorInvalidValue;
  }
  group_by_sizes const sz = group_by_size<K>(num_items);
  temp_layout layout;
  std::size_t const control = layout.add(2 * sizeof(unsigned long long));
  std::size_t const headers = layout.add(sz.slots * 16);
  std::size_t const vals    = layout.add(sz.slots * sizeof(value_t));
  std::size_t const locks   = layout.add(table_t::atomic ? 0 : sz.slots * sizeof(unsigned));
  std::size_t const rows    = layout.add(sz.groups * sizeof(unsigned long long));
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
  auto* const words = temp_layout::at<unsigned long long>(temp, control);
  table_t const table{temp_layout::at<unsigned long long>(temp, headers),
                      temp_layout::at<value_t>(temp, vals),
                      table_t::atomic ? nullptr : temp_layout::at<unsigned>(temp, locks),
                      temp_layout::at<unsigned long long>(temp, rows),
                      words,
                      words + 1,
                      sz.slots,
                      next_epoch(),
                      0};
  TILEWISE_RETURN_IF_ERROR(cudaMemsetAsync(table.row_count, 0, sizeof(unsigned long long), stream));
  // Read as they are: the generation word and the slot headers (epoch-tagged states).
  mark_any_contents(table.generation, sizeof(unsigned long long), stream);
  mark_any_contents(table.headers, sz.slots * 16, stream);

  if (num_items > 0) {
    auto const kernel           = group_by_aggregate_kernel<Tuning, KeysIn, ValuesIn, K, T, Op>;
    constexpr std::size_t smem  = group_by_smem_bytes<Tuning, U, T, Op>();
    if constexpr (smem > (48u << 10)) {
      TILEWISE_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    }
    static resident_cache cache;
    int wave = 0;
    TILEWISE_RETURN_IF_ERROR(cache.get(kernel, tune.block, smem, wave));
    long long const round = static_cast<long long>(tune.block) * tune.items;
    long long blocks      = cuda::ceil_div(num_items, round * tune.min_rounds);
    long long const most  = static_cast<long long>(wave) * tune.waves;
    blocks                = blocks < 1 ? 1 : blocks > most ? most : blocks;
    long long const per_block = cuda::round_up(cuda::ceil_div(num_items, blocks), round);
    blocks                    = cuda::ceil_div(num_items, per_block);
    kernel<<<static_cast<unsigned>(blocks), tune.block, smem, stream>>>(keys_in, values_in, num_items, per_block, op,
                                                                      table);
    TILEWISE_RETURN_IF_ERROR(cudaPeekAtLastError());
  }

  auto const emit = group_by_emit_kernel<tune.emit_block, K, T, Op, KeysOut, AggregatesOut, NumGroupsOut>;
  static resident_cache emit_cache;
  int emit_wave = 0;
  TILEWISE_RETURN_IF_ERROR(emit_cache.get(emit, tune.emit_block, 0, emit_wave));
  long long emit_blocks = cuda::ceil_div(static_cast<long long>(sz.groups), static_cast<long long>(tune.emit_block));
  emit_blocks           = emit_blocks < 1 ? 1 : emit_blocks > 2ll * emit_wave ? 2ll * emit_wave : emit_blocks;
  emit<<<static_cast<unsigned>(emit_blocks), tune.emit_block, 0, stream>>>(table, keys_out, aggregates_out,
                                                                          num_groups_out);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Unsorted reduce-by-key: for every distinct key among `keys_in[0, num_items)`, one output
///        row `(key, op-reduction of the values of its pairs)`, rows in unspecified order.
/// @tparam KeysInputIt   random-access iterator to int32, uint32, int64 or uint64 keys (raw pointer,
///                       thrust::device_ptr, Thrust fancy iterators); every key value is valid
/// @tparam ValuesInputIt random-access iterator to values of any trivially copyable type T (the
///                       aggregate type is the iterator's value type)
/// @tparam KeysOutputIt  random-access output iterator for keys
/// @tparam AggregatesOutputIt random-access output iterator for aggregates (T)
/// @tparam NumGroupsOutputIt random-access output iterator to an integer (device memory)
/// @tparam Op            commutative, associative binary functor on T. plus, minimum, maximum (and
///                       bit_and/or/xor on integers) on 4- and 8-byte arithmetic T combine with
///                       atomics; any other T or functor through a lock per slot
/// @param temp           device scratch, or nullptr to query `temp_bytes`; needs no initialisation
/// @param temp_bytes     size of `temp` (in), or the size needed (out, when `temp == nullptr`).
///                       With D = min(num_items, 2^32) for 4-byte keys, D = num_items for 8-byte
///                       keys, and G = 64 * ceil((D + floor(D / 2) + 1) / 64) slots:
///                       temp_bytes <= 16 + G * (16 + s + l) + 8 * D + 5 * 256 + 255, where s is
///                       sizeof(T) rounded up to 4 bytes and l = 0 for atomic combinations, 4 for
///                       locked ones (int32 keys and values: about 38 bytes per pair)
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
/// @note Asynchronous in `stream`: a memset and two kernel launches, never a synchronization;
///       works inside stream capture (a captured graph may be launched any number of times).
///       Outputs beyond the row count are never written. Deterministic: the set of rows, and
///       every integer aggregate (exact). Floating-point sums are combined in an order that
///       depends on timing, so they may differ in the last bits from run to run (the error is
///       that of some summation order: within (m - 1) * eps(T) * sum|x_i| for a key of m pairs);
///       min and max are exact. Row order differs from run to run. `temp` may hold anything: a
///       slot counts as taken only when it carries this launch's 62-bit epoch (compute-sanitizer's
///       initcheck is told so through NVTX).
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
