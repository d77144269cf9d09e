/// @file
/// @brief device::histogram_even: num_bins equal bins over [lower, upper), CUB's HistogramEven
///        semantics, with a strategy per bin count chosen at run time from the device's shared
///        memory: per-block shared-memory bins (several interleaved copies when bins are few;
///        1-byte samples counted per value; 16-bit counters in one or more passes over the input
///        when bins are many), a thread-block cluster's distributed shared memory (one or more
///        passes), or global bins with tile::histogram's combining of equal bins. Strategies,
///        selection rule and measurements: docs/design/histogram_even.md.
#pragma once

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>

#include <cuda/cmath>
#include <cuda/functional>
#include <cuda/std/bit>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/for_each_round.cuh>
#include <tilewise/detail/device/hash_slots.cuh>
#include <tilewise/detail/device/histogram_scale.cuh>
#include <tilewise/detail/device/privatized_bins.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/detail/vec.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/histogram.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// Where the bins of a histogram_even call live (histogram_plan::strategy).
enum class histogram_strategy : unsigned char {
  automatic,  ///< (a request) let plan_histogram choose
  shared,     ///< each block's own shared-memory bins, `copies` interleaved copies, `passes` bin ranges
  cluster,    ///< a cluster's distributed shared memory, `passes` bin ranges one after the other
  global,     ///< the output bins themselves, equal bins of a warp combined (tile::histogram)
  table,      ///< a hash table of bins per block, misses to the output bins
};

/// How a call runs: a request (zeros: automatic) and, filled in by the dispatch, the plan.
struct histogram_plan {
  histogram_strategy strategy = histogram_strategy::automatic;
  unsigned copies             = 0;  ///< shared: copies of every bin per block (a power of two)
  unsigned cluster            = 0;  ///< cluster: blocks per cluster
  unsigned passes             = 0;  ///< shared, cluster: passes over the input (one bin range each)
  unsigned counter_bits       = 0;  ///< shared: 32, or 16 (narrow: twice the bins per block, one block per SM)
  unsigned blocks             = 0;  ///< (out) the grid
  std::size_t smem            = 0;  ///< (out) dynamic shared memory per block
  bool bytes                  = false;  ///< (out) 1-byte samples counted per value (256 slots)
};

/// Temp storage of histogram_even: the counters are merged into `hist` itself (zeroed first), so
/// the caller's temp holds nothing; a few bytes keep the two-phase protocol.
inline constexpr std::size_t histogram_temp_bytes = 16;

/// A grid-strided walk over the samples: raw pointers to 1-, 2-, 4- or 8-byte samples read
/// 16-byte vectors from the first 16-byte boundary on (`head` elements before it, the elements
/// from `tail` on after the last whole vector); anything else reads one sample at a time.
struct sample_split {
  long long head = 0;
  long long vecs = 0;
  long long tail = 0;
  bool vectorized = false;
};

template <class InIt>
sample_split split_samples(InIt in, long long n) {
  using T = iter_value_t<InIt>;
  sample_split s;
  if constexpr (vec_elems<T> > 1 && std::is_pointer_v<InIt>) {
    constexpr long long V = vec_elems<T>;
    auto const addr        = reinterpret_cast<std::uintptr_t>(in);
    if (addr % sizeof(T) == 0) {
      long long const head = static_cast<long long>(((16 - addr % 16) % 16) / sizeof(T));
      if (n >= head + V) {
        s.vectorized = true;
        s.head       = head;
        s.vecs       = (n - head) / V;
        s.tail       = head + s.vecs * V;
      }
    }
  }
  return s;
}

/// Calls f(sample) for this block's share of the samples (for_each_round: rounds of U loads per
/// thread, the grid striding over them, then one partial round with checked loads), and the head
/// and tail of a vectorized walk in the last block. After a round_begin() a block calls f at most
/// B * U * vec_elems<T> times before the next, after the last one that many plus 2 * vec_elems<T>.
/// Vector loads are streaming (evict-first): the samples are read once, the bins stay cached.
/// `Ahead` (for_each_round): a vectorized walk issues the next full round's loads before it
/// counts this round's samples.
template <unsigned B, unsigned U, bool Ahead = false, class InIt, class F, class R>
TILEWISE_DEVICE void for_each_sample(InIt in, long long n, sample_split const& sp, F const& f, R const& round_begin) {
  using T                = iter_value_t<InIt>;
  constexpr unsigned V   = vec_elems<T>;
  long long const stride = static_cast<long long>(gridDim.x) * (B * U);
  long long const first  = static_cast<long long>(blockIdx.x) * (B * U);
  if constexpr (V > 1 && cuda::std::is_pointer_v<InIt>) {
    if (sp.vectorized) {
      using vec_t    = vec<cuda::std::remove_cv_t<T>, V>;
      uint4 const* p = reinterpret_cast<uint4 const*>(in + sp.head);
      for_each_round<B, U, Ahead>(
        first, stride, sp.vecs, [&](long long i) { return __ldcs(p + i); },
        [&](uint4 raw) {
          vec_t const v = cuda::std::bit_cast<vec_t>(raw);
#pragma unroll
          for (unsigned e = 0; e < V; ++e) f(v.e[e]);
        },
        round_begin);
      if (blockIdx.x == gridDim.x - 1) {
        for (long long j = threadIdx.x; j < sp.head; j += B) f(in[j]);
        for (long long j = sp.tail + threadIdx.x; j < n; j += B) f(in[j]);
      }
      return;
    }
  }
  for_each_round<B, U, false>(
    first, stride, n, [&](long long i) -> cuda::std::remove_cv_t<T> { return in[i]; }, f, round_begin);
}

/// The privatized strategies (shared, cluster). Slots are bins ([first, first + layout.slots)
/// in pass p, first = p * layout.slots) or, for 1-byte samples (`Bytes`), the 256 sample values,
/// turned into bins when flushed. `Fast`: scale.fast_bin for integer samples. `Narrow`: 16-bit
/// counters (shared only), a barrier every few rounds and each carry added to `hist` at once.
template <class Tuning, bool Cluster, bool Bytes, bool Fast, bool Narrow, class InIt, class Scale, class Counter>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.block,
                                       Bytes ? Tuning::value.byte_min_blocks : Tuning::value.min_blocks)
  histogram_privatized_kernel(InIt in, long long n, sample_split split, Scale scale, privatized_layout layout,
                              unsigned passes, Counter* hist) {
  using T              = cuda::std::remove_cv_t<iter_value_t<InIt>>;
  constexpr unsigned B = Tuning::value.block;
  constexpr unsigned U = Bytes ? Tuning::value.byte_vectors : Tuning::value.vectors;
  // Narrow: rounds between barriers, each round B * U * vec_elems<T> adds at most, the last one
  // 2 * vec_elems<T> more (for_each_sample); a barrier before a round once that many are done.
  constexpr unsigned round_adds      = B * U * vec_elems<T>;
  constexpr unsigned rounds_per_sync = (narrow_adds_per_barrier - 2 * vec_elems<T>) / round_adds;
  static_assert(!Narrow || rounds_per_sync >= 1,
                "tilewise: narrow histogram counters need a round of the block (block x vectors x "
                "samples per vector) below 2^16 - narrow_carry samples");
  privatized_bins<unsigned, Cluster, Narrow> bins(reinterpret_cast<unsigned*>(privatized_smem()), layout);
  bins.zero();
  bins.sync();
  for (unsigned p = 0; p < passes; ++p) {
    unsigned const first = p * layout.slots;
    // this pass's bins: [first, first + in_pass), which ends at num_bins at most
    unsigned const in_pass = first < scale.num_bins ? cuda::minimum<>{}(scale.num_bins - first, layout.slots) : 0u;
    auto const count = [&](T x) {
      if constexpr (Bytes) {
        bins.add(static_cast<unsigned char>(x));
      } else {
        unsigned bin;
        // one comparison bounds the bin by the pass and so by num_bins (below first, bin - first wraps)
        if (scale.template in_range<Fast>(x, bin) && bin - first < in_pass) {
          if constexpr (Narrow) {
            if (bins.add_narrow(bin - first)) atomic_fetch_add(hist + bin, static_cast<Counter>(narrow_carry));
          } else {
            bins.add(bin - first);
          }
        }
      }
    };
    if constexpr (Narrow) {
      unsigned rounds = 0;  // since the last barrier
      for_each_sample<B, U, Tuning::value.narrow_ahead != 0>(in, n, split, count, [&] {
        if (rounds == rounds_per_sync) {
          rounds = 0;
          bins.sync();
        }
        ++rounds;
      });
    } else {
      for_each_sample<B, U>(in, n, split, count, no_round_barrier{});
    }
    bins.sync();
    bins.flush([&](unsigned slot, unsigned c) {
      if constexpr (Bytes) {
        // many values can share a bin (few bins): one atomic per distinct bin of the warp, not per value
        int const bin = scale.bin_or_none(cuda::std::bit_cast<T>(static_cast<unsigned char>(slot)));
        if (bin >= 0) tilewise::tile::histogram(cg::coalesced_threads(), hist, bin, static_cast<Counter>(c));
      } else {
        atomic_fetch_add(hist + (first + slot), static_cast<Counter>(c));
      }
    });
    if (p + 1 < passes) bins.sync();
  }
}

/// The global strategy: every sample's bin straight into `hist`, the equal bins of the lanes
/// that have one combined first (tile::histogram over the coalesced lanes).
template <class Tuning, bool Fast, class InIt, class Scale, class Counter>
TILEWISE_KERNEL void __launch_bounds__(Tuning::value.block, Tuning::value.min_blocks)
  histogram_global_kernel(InIt in, long long n, sample_split split, Scale scale, Counter* hist) {
  using T = cuda::std::remove_cv_t<iter_value_t<InIt>>;
  for_each_sample<Tuning::value.block, Tuning::value.vectors>(
    in, n, split,
    [&](T x) {
      unsigned bin;
      if (scale.template bin_of<Fast>(x, bin)) tilewise::tile::histogram(cg::coalesced_threads(), hist, bin);
    },
    no_round_barrier{});
}

/// The table kernel's shape (tuning.cuh's table_shape) and its table: bin -> count.
template <class Tuning>
struct histogram_table_tuning {
  static constexpr histogram_even_tuning value = table_shape(Tuning::value);
  using table_t = block_slots<unsigned, unsigned, cuda::std::plus<>, Tuning::value.table_slots>;
};

/// The table strategy: each block counts the bins of its samples in a hash table in shared
/// memory (block_slots, as group_by's first pass: linear probing from the bin's hash, each probe
/// a CAS or, with `table_probe_reads`, a read and a CAS only at a free slot; slots never freed);
/// a sample whose bin is not in the table and finds no free slot within `table_probes` goes to
/// `hist` (tile::histogram over the lanes that have one). Under skew the frequent bins take slots
/// early and keep them; where most samples miss (many more bins in use than slots) the block
/// votes to stop using its table (table_vote). At the end each block adds its table's counts to
/// `hist`.
template <class Tuning, bool Fast, class InIt, class Scale, class Counter>
TILEWISE_KERNEL void __launch_bounds__(histogram_table_tuning<Tuning>::value.block, 1)
  histogram_table_kernel(InIt in, long long n, sample_split split, Scale scale, Counter* hist) {
  using T              = cuda::std::remove_cv_t<iter_value_t<InIt>>;
  using table_t        = typename histogram_table_tuning<Tuning>::table_t;
  constexpr auto tune  = histogram_table_tuning<Tuning>::value;
  constexpr unsigned B = tune.block;
  extern __shared__ __align__(16) unsigned char histogram_table_smem[];
  table_t const table(histogram_table_smem, table_t::capacity);
  table.template clear<B>();
  __syncthreads();
  cuda::std::plus<> const plus{};
  table_vote<B, tune.table_vote_rounds, tune.table_bypass_at> vote;
  for_each_sample<B, tune.vectors>(
    in, n, split,
    [&](T x) {
      unsigned bin;
      if (!scale.template bin_of<Fast>(x, bin)) return;
      if (!vote.bypass) {
        bool const in_table =
          table.add(bin, 1u, plus, mix_bits(bin), tune.table_probes, tune.table_probe_reads != 0);
        vote.count(in_table);
        if (in_table) return;
      }
      tilewise::tile::histogram(cg::coalesced_threads(), hist, bin);
    },
    [&] { vote.round(); });
  __syncthreads();
  auto const flush = [&](unsigned i) {
    unsigned bin, c;
    table.entry(i, bin, c);
    atomic_fetch_add(hist + bin, static_cast<Counter>(c));
  };
  for (unsigned i = threadIdx.x; i < table_t::capacity; i += B) {
    if (table.occupied(i)) flush(i);
  }
  if (threadIdx.x == 0 && table.free_key_used()) flush(table_t::capacity);
}

/// Counters of one block (shared) or cluster must not pass 2^32: each gets at most this many
/// samples.
inline constexpr long long histogram_max_unit_items = 1ll << 31;

/// The tuning of the 16-bit shared-counter kernel (tuning.cuh's narrow_shape).
template <class Tuning>
struct histogram_narrow_tuning {
  static constexpr histogram_even_tuning value = narrow_shape(Tuning::value);
};

template <class Tuning, class InIt, class Counter, class Scale>
struct histogram_runner {
  using T                     = cuda::std::remove_cv_t<iter_value_t<InIt>>;
  static constexpr bool bytes = sizeof(T) == 1 && cuda::std::is_integral_v<T>;
  static constexpr auto tune  = Tuning::value;
  static constexpr auto narrow_tune = histogram_narrow_tuning<Tuning>::value;

  template <bool Fast>
  static auto shared_kernel() {
    return histogram_privatized_kernel<Tuning, false, bytes, Fast && !bytes, false, InIt, Scale, Counter>;
  }
  template <bool Fast>
  static auto narrow_kernel() {
    static_assert(!bytes, "1-byte samples are counted per value in 256 32-bit slots");
    return histogram_privatized_kernel<histogram_narrow_tuning<Tuning>, false, false, Fast, true, InIt, Scale, Counter>;
  }
  template <bool Fast>
  static auto cluster_kernel() {
    return histogram_privatized_kernel<Tuning, true, false, Fast, false, InIt, Scale, Counter>;
  }
  template <bool Fast>
  static auto global_kernel() {
    return histogram_global_kernel<Tuning, Fast, InIt, Scale, Counter>;
  }
  template <bool Fast>
  static auto table_kernel() {
    return histogram_table_kernel<Tuning, Fast, InIt, Scale, Counter>;
  }
  static constexpr auto table_tune          = histogram_table_tuning<Tuning>::value;
  static constexpr std::size_t table_bytes  = histogram_table_tuning<Tuning>::table_t::bytes;

  /// Fills in `plan` (a request: zeros are automatic) for n samples of num_bins bins; see
  /// docs/design/histogram_even.md for the rule.
  template <bool Fast>
  static cudaError_t plan_histogram(unsigned num_bins, long long n, bool vectorized, histogram_plan& plan) {
    static launch_cache shared_cache, narrow_cache, cluster_cache, global_cache, table_cache;
    device_limits lim;
    TILEWISE_RETURN_IF_ERROR(get_device_limits(lim));
    constexpr unsigned B      = tune.block;
    long long const elems     = vectorized ? vec_elems<T> : 1;
    long long const per_round = static_cast<long long>(B) * (bytes ? tune.byte_vectors : tune.vectors) * elems;
    long long const narrow_per_round = static_cast<long long>(narrow_tune.block) * narrow_tune.vectors * elems;
    long long const min_units = cuda::ceil_div(n, histogram_max_unit_items);
    unsigned const slots      = bytes ? 256u : num_bins;
    std::size_t const budget  = lim.per_block(static_cast<int>(tune.min_blocks_per_sm));
    std::size_t const room    = budget / 4;  // 32-bit slots of one block
    std::size_t const narrow_room = lim.per_block(1) / 4 * 2;  // 16-bit slots of one block alone on its SM
    bool const forced         = plan.strategy != histogram_strategy::automatic;
    plan.bytes                = bytes;
    if (plan.counter_bits != 0 && plan.counter_bits != 32 && (plan.counter_bits != 16 || bytes)) {
      return cudaErrorInvalidValue;
    }
    if (plan.counter_bits == 16 && forced && plan.strategy != histogram_strategy::shared) return cudaErrorInvalidValue;
    auto const grid_of        = [&](long long resident, long long per_unit, long long unit) {
      long long const work = cuda::ceil_div(n, per_unit);
      long long g          = resident < work ? resident : work;
      g                    = g > min_units ? g : min_units;
      g                    = g > 0 ? g : 1;
      return static_cast<unsigned>(g * unit);
    };
    if constexpr (bytes) plan.strategy = histogram_strategy::shared;
    int table_per_sm = 0;  // table blocks that fit an SM (0: the table strategy cannot run here)
    auto const fit_table = [&]() -> cudaError_t {
      if constexpr (!bytes) {
        if (table_bytes <= std::size_t(lim.smem_per_block)) {
          return table_cache.fit(reinterpret_cast<void const*>(table_kernel<Fast>()), table_tune.block, table_bytes, 1,
                                 table_per_sm);
        }
      }
      return cudaSuccess;
    };
    if (plan.strategy == histogram_strategy::automatic) {
      // one pass of 32-bit counters; else 16-bit ones in a few passes; else the table, a cluster's
      // bins or the output's
      std::size_t const shared_passes = room ? cuda::ceil_div(std::size_t(slots), room) : ~std::size_t(0);
      std::size_t const narrow_passes = narrow_room ? cuda::ceil_div(std::size_t(slots), narrow_room) : ~std::size_t(0);
      bool const in_shared = shared_passes <= 1 || narrow_passes <= tune.max_shared_passes;
      if (!in_shared) TILEWISE_RETURN_IF_ERROR(fit_table());
      plan.strategy     = in_shared          ? histogram_strategy::shared
                          : table_per_sm > 0 ? histogram_strategy::table
                          : lim.clusters     ? histogram_strategy::cluster
                                             : histogram_strategy::global;
      plan.counter_bits = plan.strategy != histogram_strategy::shared ? 0 : shared_passes <= 1 ? 32 : 16;
    } else if (plan.strategy == histogram_strategy::table) {
      TILEWISE_RETURN_IF_ERROR(fit_table());
    }
    if constexpr (!bytes) {
      if (plan.strategy == histogram_strategy::table) {
        if (table_per_sm == 0) return cudaErrorInvalidValue;
        long long const table_per_round = static_cast<long long>(table_tune.block) * table_tune.vectors * elems;
        plan.copies = plan.cluster = plan.passes = plan.counter_bits = 0;
        plan.smem   = table_bytes;
        plan.blocks = grid_of(static_cast<long long>(table_per_sm) * lim.sms, table_per_round, 1);
        return cudaSuccess;
      }
    }
    if (plan.strategy == histogram_strategy::shared) {
      bool const narrow = plan.counter_bits == 16;
      unsigned passes   = bytes ? 1u : plan.passes;
      if (passes == 0) {
        std::size_t const r = narrow ? narrow_room : room;
        passes              = r ? static_cast<unsigned>(cuda::ceil_div(std::size_t(slots), r)) : 1u;
        passes              = passes < 1 ? 1 : passes;
      }
      unsigned const per_pass = static_cast<unsigned>(cuda::ceil_div(slots, passes));
      std::size_t const copy_bytes = privatized_layout::make(per_pass, 1, 1, narrow).smem_bytes(4);
      unsigned c              = plan.copies;
      if (c == 0) {
        std::size_t const copy_room = budget < tune.copies_bytes ? budget : tune.copies_bytes;
        c                           = 1;
        while (c * 2 <= tune.max_copies && copy_bytes * c * 2 <= copy_room) c *= 2;
      }
      if (c > 32 || !cuda::std::has_single_bit(c)) return cudaErrorInvalidValue;
      plan.copies       = c;
      plan.passes       = passes;
      plan.cluster      = 1;
      plan.counter_bits = narrow ? 16 : 32;
      plan.smem         = copy_bytes * c;
      int per_sm        = 0;
      if (plan.smem <= std::size_t(lim.smem_per_block)) {
        if constexpr (!bytes) {
          if (narrow) {
            TILEWISE_RETURN_IF_ERROR(narrow_cache.fit(reinterpret_cast<void const*>(narrow_kernel<Fast>()),
                                                      narrow_tune.block, plan.smem, 1, per_sm));
          }
        }
        if (!narrow) {
          TILEWISE_RETURN_IF_ERROR(
            shared_cache.fit(reinterpret_cast<void const*>(shared_kernel<Fast>()), B, plan.smem, 1, per_sm));
        }
      }
      if (per_sm > 0) {
        plan.blocks = grid_of(static_cast<long long>(per_sm) * lim.sms, narrow ? narrow_per_round : per_round, 1);
        return cudaSuccess;
      }
      if (forced) return cudaErrorInvalidValue;
      plan.strategy = lim.clusters ? histogram_strategy::cluster : histogram_strategy::global;
      plan.copies = plan.passes = plan.counter_bits = 0;
    }
    if constexpr (bytes) {
      return cudaErrorInvalidValue;  // 256 slots always fit one block
    } else {
      if (plan.strategy == histogram_strategy::cluster) {
        if (!lim.clusters) {
          if (forced) return cudaErrorInvalidValue;
          plan.strategy = histogram_strategy::global;
        } else {
          auto const clusters_for = [&](unsigned cs, unsigned passes, int& fit) -> cudaError_t {
            unsigned const per_pass = static_cast<unsigned>(cuda::ceil_div(slots, passes));
            std::size_t const smem  = privatized_layout::make(per_pass, 1, cs).smem_bytes(4);
            fit                     = 0;
            if (smem > std::size_t(lim.smem_per_block) || (!forced && smem > budget)) return cudaSuccess;
            return cluster_cache.fit(reinterpret_cast<void const*>(cluster_kernel<Fast>()), B, smem, cs, fit);
          };
          unsigned const lo_cs = plan.cluster ? plan.cluster : 2;
          unsigned const hi_cs = plan.cluster ? plan.cluster : tune.max_cluster;
          unsigned best_cs = 0, best_passes = 0;
          int best_fit = 0;
          if (plan.passes) {  // a forced number of passes: the smallest cluster that fits
            for (unsigned cs = lo_cs; cs <= hi_cs && !best_cs; ++cs) {
              int fit = 0;
              TILEWISE_RETURN_IF_ERROR(clusters_for(cs, plan.passes, fit));
              if (fit > 0) best_cs = cs, best_passes = plan.passes, best_fit = fit;
            }
          } else {
            // one pass in the smallest cluster that holds all bins; else as few passes as the
            // largest cluster that runs allows
            for (unsigned cs = lo_cs; cs <= hi_cs && !best_cs; ++cs) {
              int fit = 0;
              TILEWISE_RETURN_IF_ERROR(clusters_for(cs, 1, fit));
              if (fit > 0) best_cs = cs, best_passes = 1, best_fit = fit;
            }
            for (unsigned cs = hi_cs; cs >= lo_cs && cs >= 1 && !best_cs; --cs) {
              std::size_t const per_block = (forced ? std::size_t(lim.smem_per_block) : budget) / 4;
              if (per_block == 0) break;
              unsigned const passes =
                static_cast<unsigned>(cuda::ceil_div(std::size_t(slots), per_block * cs));
              if (passes > tune.max_passes && !forced) break;
              int fit = 0;
              TILEWISE_RETURN_IF_ERROR(clusters_for(cs, passes, fit));
              if (fit > 0) best_cs = cs, best_passes = passes, best_fit = fit;
              if (cs == 1) break;
            }
          }
          if (best_cs) {
            unsigned const per_pass = static_cast<unsigned>(cuda::ceil_div(slots, best_passes));
            plan.cluster            = best_cs;
            plan.passes             = best_passes;
            plan.counter_bits       = 0;
            plan.copies             = 1;
            plan.smem               = privatized_layout::make(per_pass, 1, best_cs).smem_bytes(4);
            plan.blocks             = grid_of(best_fit, per_round * best_cs, best_cs);
            return cudaSuccess;
          }
          if (forced) return cudaErrorInvalidValue;
          plan.strategy = histogram_strategy::global;
        }
      }
      // global bins
      int per_sm = 0;
      TILEWISE_RETURN_IF_ERROR(global_cache.fit(reinterpret_cast<void const*>(global_kernel<Fast>()), B, 0, 1, per_sm));
      plan.copies       = 0;
      plan.cluster      = 0;
      plan.passes       = 0;
      plan.counter_bits = 0;
      plan.smem         = 0;
      plan.blocks  = grid_of(static_cast<long long>(per_sm > 0 ? per_sm : 1) * lim.sms, per_round, 1);
      return cudaSuccess;
    }
  }

  template <bool Fast>
  static cudaError_t run(InIt in, Counter* hist, Scale const& scale, long long n, cudaStream_t stream,
                         histogram_plan& plan) {
    sample_split const split = split_samples(in, n);
    TILEWISE_RETURN_IF_ERROR(plan_histogram<Fast>(scale.num_bins, n, split.vectorized, plan));
    constexpr unsigned B = tune.block;
    if (plan.strategy == histogram_strategy::shared) {
      unsigned const slots  = bytes ? 256u : scale.num_bins;
      bool const narrow     = plan.counter_bits == 16;
      auto const layout     = privatized_layout::make(static_cast<unsigned>(cuda::ceil_div(slots, plan.passes)),
                                                      plan.copies, 1, narrow);
      if constexpr (!bytes) {
        if (narrow) {
          return launch_in_clusters(narrow_kernel<Fast>(), plan.blocks, narrow_tune.block, plan.smem, 1, stream, in,
                                    n, split, scale, layout, plan.passes, hist);
        }
      }
      return launch_in_clusters(shared_kernel<Fast>(), plan.blocks, B, plan.smem, 1, stream, in, n, split, scale,
                                layout, plan.passes, hist);
    }
    if constexpr (!bytes) {
      if (plan.strategy == histogram_strategy::table) {
        return launch_in_clusters(table_kernel<Fast>(), plan.blocks, table_tune.block, plan.smem, 1, stream, in, n,
                                  split, scale, hist);
      }
      if (plan.strategy == histogram_strategy::cluster) {
        unsigned const per_pass = static_cast<unsigned>(cuda::ceil_div(scale.num_bins, plan.passes));
        auto const layout       = privatized_layout::make(per_pass, 1, plan.cluster);
        return launch_in_clusters(cluster_kernel<Fast>(), plan.blocks, B, plan.smem, plan.cluster, stream, in, n,
                                  split, scale, layout, plan.passes, hist);
      }
      return launch_in_clusters(global_kernel<Fast>(), plan.blocks, B, 0, 1, stream, in, n, split, scale, hist);
    }
    return cudaErrorInvalidValue;
  }
};

/// The whole call (see device::histogram_even); `plan` (optional) requests a strategy and
/// receives the plan that ran.
template <class Tuning, class InIt, class Counter, class Level>
cudaError_t dispatch_histogram_even(void* temp, std::size_t& temp_bytes, InIt in, Counter* hist, int num_bins,
                                    Level lower, Level upper, long long num_items, cudaStream_t stream,
                                    histogram_plan* plan = nullptr) {
  using T     = cuda::std::remove_cv_t<iter_value_t<InIt>>;
  using scale = even_scale<T, Level>;
  bool query  = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, histogram_temp_bytes, query));
  if (query) return cudaSuccess;
  if (num_items < 0 || hist == nullptr || (num_items > 0 && null_pointer(in))) return cudaErrorInvalidValue;
  scale s;
  TILEWISE_RETURN_IF_ERROR(s.init(num_bins, lower, upper));
  TILEWISE_RETURN_IF_ERROR(cudaMemsetAsync(hist, 0, std::size_t(num_bins) * sizeof(Counter), stream));
  histogram_plan local;
  histogram_plan& p = plan ? *plan : local;
  if (num_items == 0) return cudaSuccess;
  // Signed and unsigned counters of one size add the same bits: one set of kernels per size.
  using word   = cuda::std::conditional_t<sizeof(Counter) == 4, unsigned, unsigned long long>;
  using runner = histogram_runner<Tuning, InIt, word, scale>;
  word* const h = reinterpret_cast<word*>(hist);
  if constexpr (scale::floating) {
    return runner::template run<false>(in, h, s, num_items, stream, p);
  } else if constexpr (sizeof(typename scale::wide_t) == 4) {  // 16-bit differences: always the fast form
    return runner::template run<true>(in, h, s, num_items, stream, p);
  } else {
    return s.fast ? runner::template run<true>(in, h, s, num_items, stream, p)
                  : runner::template run<false>(in, h, s, num_items, stream, p);
  }
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Histogram of `num_bins` equal bins over [lower, upper): `hist[b]` = the number of
///        samples in bin b, each sample's bin exactly the one cub::DeviceHistogram::HistogramEven
///        gives it (CUB's arithmetic, in the common type of sample and level; integers in a wider
///        type); samples outside [lower, upper) and NaN are ignored.
/// @tparam SampleIt random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                  iterators) to arithmetic samples (integer or floating point, uint8 included)
/// @tparam Counter  int32, uint32, int64 or uint64
/// @tparam Level    the type of the bounds (integers for integer samples, the floating type for
///                  floating samples, as CUB's LevelT)
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`): 16
///                   bytes whatever `num_bins` and the device (the bins merge into `hist`)
/// @param samples    the samples `samples[0, num_items)`
/// @param hist       device pointer to `num_bins` counters, overwritten (not accumulated into)
/// @param num_bins   number of bins, >= 1
/// @param lower      lower bound of the first bin (inclusive)
/// @param upper      upper bound of the last bin (exclusive), `lower < upper`
/// @param num_items  number of samples, >= 0 (64-bit); 0 zeroes `hist`
/// @param stream     the stream to run on
/// @return cudaSuccess; cudaErrorInvalidValue for `num_bins < 1`, `!(lower < upper)` (NaN
///         bounds), integer bounds whose `(upper - lower) * num_bins` may overflow CUB's wide type
///         (as CUB), `num_bins` not representable in the common type, a null `hist`, null
///         `samples` with `num_items > 0`, a negative `num_items` or too small a `temp_bytes`;
///         or the launch's error
/// @note Asynchronous in `stream` (a cudaMemsetAsync of `hist`, then one kernel); never
///       synchronizes; works in stream capture. Counters wrap modulo 2^bits of Counter, as CUB's:
///       2^33 uint8 samples of one value into int32 counters count 0 (2^33 mod 2^32). Where CUB
///       itself departs from its arithmetic, ours keeps to it: a floating-point sample whose
///       computed bin is `num_bins` (rounding at `upper`) is ignored, and negative 1-byte samples
///       in range are counted (CUB's 1-byte path drops them).
template <class SampleIt, class Counter, class Level>
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, SampleIt samples, Counter* hist, int num_bins,
                           Level lower, Level upper, std::int64_t num_items, cudaStream_t stream = 0) {
  static_assert(cuda::std::is_integral_v<Counter> && (sizeof(Counter) == 4 || sizeof(Counter) == 8) &&
                  detail::atomic_add_type<Counter>,
                "tilewise::device::histogram_even: Counter must be int32, uint32, int64 or uint64");
  // Contiguous iterators go in as the raw pointers they wrap (the vector path), and T* as T const*
  // (one set of kernels for both).
  auto const in = thrust::try_unwrap_contiguous_iterator(samples);
  if constexpr (cuda::std::is_pointer_v<decltype(in)>) {
    using value = cuda::std::remove_pointer_t<decltype(in)>;
    return detail::dispatch_histogram_even<detail::histogram_even_tuned>(
      temp, temp_bytes, static_cast<value const*>(in), hist, num_bins, lower, upper, num_items, stream);
  } else {
    return detail::dispatch_histogram_even<detail::histogram_even_tuned>(temp, temp_bytes, in, hist, num_bins, lower,
                                                                         upper, num_items, stream);
  }
}

}  // namespace tilewise::device

#include <tilewise/detail/device/extern_histogram_even.cuh>
