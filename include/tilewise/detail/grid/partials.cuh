/// @file
/// @brief Internals of the grid scope: the per-block partials in the workspace, their epochs,
///        and the in-order fold of the partials every block reads after the grid barrier.
///
/// One call: every thread reads its block's epoch e; the block computes its partial; thread 0
/// writes it to bank e & 1 (block 0 prepares the next call's lines); the grid-wide barrier
/// (grid.sync() or the arrival words); thread 0 moves the epoch on; every block folds the bank in
/// one fixed order. A slot, an arrival word or a result word is rewritten only after its last
/// reader has passed a later barrier (`docs/design/grid_partials.md`).
#pragma once

#include <cooperative_groups.h>

#include <cuda/std/type_traits>

#include <cstdio>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/gpu_word.cuh>
#include <tilewise/detail/group.cuh>
#include <tilewise/detail/grid/workspace_handle.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// The compile-time rules of every grid primitive.
template <class T, unsigned BlockSize, unsigned W>
struct check_grid_args {
  static_assert(BlockSize % 32 == 0 && BlockSize >= 32 && BlockSize <= 1024,
                "tilewise::grid: BlockSize must be a multiple of 32 in [32, 1024]");
  static_assert(valid_tile_width<W>,
                "tilewise::grid: tile width W must be a power of two no larger than 32 (1, 2, 4, 8, 16 or 32)");
  static_assert(cuda::std::is_trivially_copyable_v<T> && cuda::std::is_default_constructible_v<T>,
                "tilewise::grid: T must be trivially copyable and default constructible");
  static constexpr bool value = true;
};

/// A misused workspace (more blocks or larger values than it was made for, or a launch whose block
/// size is not BlockSize): every thread traps, so the launch fails (cudaErrorLaunchFailure or
/// similar) — never a hang, never a silent overwrite. Debug builds (NDEBUG undefined) first print
/// one line from thread 0 of block 0 saying what was made and what was used.
__device__ __noinline__ inline void grid_workspace_error(unsigned blocks, unsigned ws_blocks, unsigned bytes,
                                                         unsigned ws_bytes, unsigned block_threads, unsigned block_size) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
      threadIdx.z == 0) {
    printf("tilewise::grid: workspace made for %u blocks and values of %u bytes, used by %u blocks of %u threads "
           "(BlockSize %u) with values of %u bytes\n",
           ws_blocks, ws_bytes, blocks, block_threads, block_size, bytes);
  }
  __trap();
}

/// Words at the start of each arrival line that prepare_next zeroes: the arrival word and the
/// other words of an exact float sum (detail::exact_words, checked there).
inline constexpr unsigned arrival_words = 8;  // all used by exact float sums; an even count for 16-byte stores

/// One call's view of the workspace (`docs/design/grid_partials.md#one-call`).
template <class T, unsigned BlockSize>
struct grid_call {
  workspace_handle ws;
  unsigned block;   ///< this block's rank in the grid
  unsigned blocks;  ///< blocks in the grid
  unsigned rank;    ///< this thread's rank in the block
  unsigned epoch;

  TILEWISE_DEVICE grid_call(cg::grid_group const& g, workspace_handle const& w)
      : ws(w),
        block(unsigned(g.block_rank())),
        blocks(unsigned(g.num_blocks())),
        rank(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) {
    unsigned const threads = blockDim.x * blockDim.y * blockDim.z;
    if (blocks > ws.blocks || sizeof(T) > ws.slot_bytes || threads != BlockSize) {  // uniform over the grid
#ifndef NDEBUG
      grid_workspace_error(blocks, ws.blocks, unsigned(sizeof(T)), ws.slot_bytes, threads, BlockSize);
#else
      __trap();  // release builds: no printf call (it costs registers and a stack frame on the hot path)
#endif
    }
    epoch = ws.epochs[block];
  }

  /// Bank e & 1, as an array of T (banks start at multiples of 16 bytes).
  TILEWISE_DEVICE T* bank() const {
    return reinterpret_cast<T*>(ws.slots + std::size_t(epoch & 1u) * ws.blocks * ws.slot_bytes);
  }

  /// Line `i` of the workspace (128 bytes, 16 words): 0..3 the arrival ring, 4..5 the result
  /// words, 6..9 the ring of copies.
  TILEWISE_DEVICE unsigned long long* line(unsigned i) const {
    return ws.lines + i * (workspace_line_bytes / sizeof(unsigned long long));
  }
  /// This call's arrival word (ring of 4), the first of the arrival_words words of its line that
  /// prepare_next zeroes (grid::reduce's exact float sums use them all, detail/exact_sum.cuh).
  TILEWISE_DEVICE unsigned long long* arrival_word() const { return line(epoch % 4); }
  /// This call's copies line (ring of 4, zeroed with the arrival line): where grid::reduce's exact
  /// float sums on large grids copy each complete word, for every block to spin on away from the
  /// line the atomics hit.
  TILEWISE_DEVICE unsigned long long* copies() const { return line(6 + epoch % 4); }

  /// Adds `add` to `word` (release, or relaxed after the caller's own release fence) and spins
  /// (acquire) until the word reaches `all`; the value it reached. The counted arrival that
  /// grid::reduce's integer and exact float sums share on small grids: each word counts the blocks
  /// in its high bits, so the word that shows every block holds every block's add.
  template <bool Relaxed = false>
  TILEWISE_DEVICE static unsigned long long add_and_wait(unsigned long long* word, unsigned long long add,
                                                         unsigned long long all) {
    if constexpr (Relaxed) {
      gpu_word::add_relaxed(word, add);
    } else {
      gpu_word::add_release(word, add);
    }
    return gpu_word::spin(word, [all](unsigned long long seen) { return seen >= all; });
  }

  /// This call's result word, tagged with epoch + 1: grid::reduce's last block publishes the bits
  /// of a value of at most 4 bytes there, the other blocks spin on it.
  struct result_word {
    unsigned long long* word;
    unsigned long long tag;  ///< (epoch + 1) << 32

    /// One thread of one block; release.
    TILEWISE_DEVICE void publish(unsigned bits) const { gpu_word::store_release(word, tag | bits); }
    /// Spins (acquire) until the result is published; its value bits.
    TILEWISE_DEVICE unsigned await() const {
      unsigned long long const t = tag;
      return static_cast<unsigned>(
          gpu_word::spin(word, [t](unsigned long long seen) { return (seen & ~0xFFFFFFFFull) == t; }));
    }
  };
  TILEWISE_DEVICE result_word result() const {
    return {line(4 + (epoch & 1u)), static_cast<unsigned long long>(epoch + 1u) << 32};
  }

  /// The partial to the bank, then prepare_next(). Every thread calls it,
  /// after a block barrier that follows every thread's construction of this object.
  TILEWISE_DEVICE void publish(T const& partial) const {
    if (rank == 0) {
      bank()[block] = partial;
    }
    prepare_next();
  }

  /// Block 0 zeroes the arrival words and the copies of the next call (the first arrival_words
  /// words of both lines) and moves on the epochs of the slots no block of this launch owns (which
  /// no block reads). Every thread calls it, before this call's grid-wide barrier (on thread 0 of
  /// block 0, before its arrival's release: the counted sums' release is thread 0's own atomic).
  TILEWISE_DEVICE void prepare_next() const {
    if (block == 0) {
      if (rank == 0) {  // 128-byte aligned lines
        auto* const arrival = reinterpret_cast<ulonglong2*>(line((epoch + 1) % 4));
        auto* const copies  = reinterpret_cast<ulonglong2*>(line(6 + (epoch + 1) % 4));
#pragma unroll
        for (unsigned i = 0; i < arrival_words / 2; ++i) {
          arrival[i] = ulonglong2{0, 0};
          copies[i]  = ulonglong2{0, 0};
        }
      }
      for (unsigned j = blocks + rank; j < ws.blocks; j += BlockSize) {  // nobody reads them now
        ws.epochs[j] = epoch + 1;
      }
    }
  }

  /// Thread 0 moves the block's epoch on. Call it after a block barrier that follows every
  /// thread's construction of this object and before a block barrier that precedes the return.
  /// The grid primitives call it after the grid-wide wait, so that the release of the arrival has
  /// no store of its own to wait for (`docs/tuning.md#grid-reduce`).
  TILEWISE_DEVICE void commit() const {
    if (rank == 0) {
      ws.epochs[block] = epoch + 1;
    }
  }
};

/// grid::reduce of integer sums of at most 32 bits: one 64-bit arrival word carries both the count
/// of blocks arrived (bits 46..63) and the sum of their partials taken as 32-bit unsigned values
/// (bits 0..45: exact for up to 2^14 - 1 blocks, far more than any GPU holds at once). One atomic
/// add per block is the arrival and the reduction; the word that tells a block everybody arrived
/// also holds the sum, whose low bits are the wrapped result.
template <class Op, class T>
inline constexpr bool counted_sum = cuda::std::is_integral_v<T> && !cuda::std::is_same_v<T, bool> &&
                                    sizeof(T) <= 4 && kind_v<Op, T> == op_kind::plus;
inline constexpr unsigned counted_shift      = 46;
inline constexpr unsigned counted_max_blocks = (1u << (counted_shift - 32)) - 1;  // N (2^32 - 1) < 2^46

/// The chunk of the partials that thread `rank` folds after the barrier: [first, first + count).
/// Chunks are contiguous and in thread order, so the block reduction of the chunk folds combines
/// the partials in block order (op need not commute); the layout depends only on the grid size,
/// so every block computes bitwise the same result.
struct grid_chunk {
  unsigned per_thread;  ///< K = ceil(blocks / BlockSize)
  unsigned first;
  unsigned count;       ///< 0 for threads past the last chunk
  unsigned threads;     ///< threads holding a chunk: ceil(blocks / K) >= 1

  TILEWISE_DEVICE grid_chunk(unsigned blocks, unsigned rank, unsigned block_size) {
    per_thread = (blocks + block_size - 1) / block_size;
    first      = rank * per_thread;
    count      = first < blocks ? (blocks - first < per_thread ? blocks - first : per_thread) : 0u;
    threads    = (blocks + per_thread - 1) / per_thread;
  }
};

/// Folds, in order, p[first, first + count) into `all` and its first `pre_count` elements into
/// `pre` (when `WantPrefix`); count >= 1 for the threads whose result is used. Loads go out four
/// at a time (one batch for grids of up to 4 * BlockSize blocks) so their latencies overlap.
template <bool WantPrefix, class T, class Op>
TILEWISE_DEVICE void fold_partials(T const* p, unsigned first, unsigned count, unsigned pre_count, Op& op, T& all,
                                   T& pre, bool& has_pre) {
  constexpr unsigned batch = 4;
  has_pre                  = false;
  for (unsigned base = 0; base < count; base += batch) {
    T x[batch];
#pragma unroll
    for (unsigned j = 0; j < batch; ++j) {
      if (base + j < count) {
        x[j] = p[first + base + j];
      }
    }
#pragma unroll
    for (unsigned j = 0; j < batch; ++j) {
      unsigned const i = base + j;
      if (i < count) {
        all = i == 0 ? x[j] : T(op(all, x[j]));
        if constexpr (WantPrefix) {
          if (i < pre_count) {
            pre     = i == 0 ? x[j] : T(op(pre, x[j]));
            has_pre = true;
          }
        }
      }
    }
  }
}

}  // namespace tilewise::detail
