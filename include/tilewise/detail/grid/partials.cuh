/// @file
/// @brief Internals of the grid scope: the per-block partials in the workspace, their epochs,
///        and the in-order fold of the partials every block reads after the grid barrier.
///
/// Every grid primitive makes one call of this shape (B = BlockSize, n = blocks of the grid):
///   1. every thread reads its block's epoch e = ws.epochs[block] (one word, shared by the block);
///   2. the block computes its partial (a block-scope reduce or scan, with its own barriers);
///   3. thread 0 writes the partial to bank (e & 1), slot `block`, and ws.epochs[block] = e + 1
///      (block 0 also advances the epochs of the slots no block of this launch owns, and zeroes
///      arrival word (e + 1) & 3, see below; grid::reduce writes ws.epochs[block] after step 4);
///   4. grid.sync() — the one grid-wide barrier;
///   5. every block reads the n partials of bank (e & 1) and folds them in one fixed order (block
///      order; grid::reduce of ops tilewise knows to commute takes them strided, coalesced).
/// Why a slot is never overwritten while it is read: call k of a block writes bank k & 1 before
/// barrier k; the slots of bank k & 1 are read only between barrier k and the reader's arrival at
/// barrier k + 1; the next write to bank k & 1 (call k + 2) comes after barrier k + 1, which no
/// block passes before every block has arrived there, i.e. finished reading. grid.sync() is the
/// fence (release before, acquire after, through thread 0 of each block and the block barriers
/// around it), so the reads after barrier k see every write made before it.
/// The arrival ring (grid::reduce without grid.sync(): counted sums add to word e & 3 and spin on
/// it until every block has arrived; on large grids the last block to count itself in on word
/// e & 3 folds the partials and publishes the result in result word e & 1, tagged with e + 1, on
/// which the other blocks spin): call e's block 0 zeroes word (e + 1) & 3
/// before its own arrival at call e's barrier, so the zero is ordered before every arrival of call
/// e + 1 (which comes after that barrier). Word (e + 1) & 3 was last used by call e - 3, whose
/// readers all finished before arriving at barrier e - 2, which block 0 has passed. Float sums
/// (detail/exact_sum.cuh) use the 8 words of the arrival line, and on large grids the 8 words of
/// copy line 6 + (e & 3) as well, which block 0 zeroes with the arrival words: thread 0 of block 0
/// zeroes them all before a block barrier, after which each lane of warp 0 fences (release) before
/// its relaxed add (a release pattern, which the barrier makes cover thread 0's stores), and every
/// block acquires its words (or their copies) before a block barrier that precedes its adds to any
/// word of the next call, so the same argument holds. An atomic reads the value of the one before
/// it on the same word, so the add that completes a word follows every block's add to it in PTX's
/// observation order: after it, an acquire fence synchronizes with every block's release, and a
/// relaxed store of the complete word releases it to the blocks spinning on its copy (a copy is
/// complete or zero: its count of blocks tells which).
/// A result word is rewritten (call e + 2, tag e + 3) only after every block has arrived at call
/// e + 1, i.e. has finished spinning on it for call e.
/// Why the epoch is safe to update: every thread of the block reads it in step 1, before the
/// block barrier of step 2, and thread 0 writes it after that barrier; the next call reads it after
/// the block barrier that ends this call. All blocks start a launch with equal epochs (make_workspace zeroes them, and every
/// call advances all `ws.blocks` of them by one), so all agree on the bank.
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

/// One call's view of the workspace (steps 1, 3 and 5 above).
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

  /// Step 3 but the epoch: the partial to the bank, then prepare_next(). Every thread calls it,
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
  /// grid::reduce calls it after its grid-wide wait, which measured faster than before it (a
  /// prototype in grid_bench's setting: 1.19x -> 1.04x grid.sync at 132 blocks): the release of
  /// the arrival no longer has this store to wait for, and the store may leave the epoch in L1
  /// for the next call's read (not verified separately).
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
