/// @file
/// @brief grid::reduce: the reduction of one value per thread over a whole cooperative grid,
///        every thread getting the result; one grid-wide barrier per call, back-to-back calls safe.
///
/// Each block reduces its values to a partial; then, fastest first: integer sums of at most 32
/// bits add the partial and the block's arrival in one atomic (detail::counted_sum); float sums on
/// grids of up to 4095 blocks add it exactly in fixed point and round once (detail::exact_value);
/// values of at most 4 bytes on large grids let the last block to arrive fold the partials;
/// otherwise grid.sync(), then every block folds them. Each way combines the partials in one fixed
/// order per grid size, so every thread gets bitwise the same result, run after run. Memory
/// ordering: `docs/design/grid_partials.md`, `docs/design/exact_float_sum.md`.
#pragma once

#include <cooperative_groups.h>

#include <cuda/atomic>
#include <cuda/std/type_traits>

#include <tilewise/detail/block/plan.cuh>
#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/block/storage.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/grid/exact_sum.cuh>
#include <tilewise/detail/grid/partials.cuh>
#include <tilewise/detail/maybe.cuh>
#include <tilewise/detail/shell.cuh>
#include <tilewise/detail/tuning.cuh>
#include <tilewise/grid/workspace.cuh>
#include <tilewise/tile/reduce.cuh>

namespace tilewise::detail {

/// Shared-memory scratch of grid::reduce's block stages (any contents, no initialisation needed).
template <class T, unsigned BlockSize>
struct grid_reduce_storage {
  static constexpr unsigned warps = BlockSize / 32;
  alignas(16) unsigned char before[warps * sizeof(T)];  ///< warp totals before the grid barrier
  alignas(16) unsigned char after[warps * sizeof(T)];   ///< warp totals of the partials after it
  unsigned last;                                        ///< this block arrived last (last-block way)
  /// float: warp 0's values, which warp 1 reduces in the exact sum while warp 0 fences
  alignas(16) unsigned char first_warp[cuda::std::is_same_v<T, float> && warps > 1 ? 32 * sizeof(T) : 1];
};

}  // namespace tilewise::detail

namespace tilewise::grid {

namespace cg = cooperative_groups;

/// @brief Grid-wide reduction inside a cooperative kernel: every thread of the grid gets the
///        reduction of one value per thread, combined in one fixed order for a given grid size
///        (grid thread_rank order for ops tilewise does not know to commute; float sums add the
///        block partials exactly and round once; see the file comment).
/// @tparam T         any trivially copyable, default constructible type, sizeof(T) <= the
///                   workspace's slot_bytes
/// @tparam BlockSize threads per block of the launch, a multiple of 32 in [32, 1024]
/// @tparam W         tile width, as in the other grid primitives; the reduction's block stages
///                   use whole warps whatever W (the result is the same in-order reduction)
/// @note Usage:
///       `using grid_reduce = tilewise::grid::reduce<double, 256>;`
///       `__shared__ grid_reduce::temp_storage tmp;`
///       `double s = grid_reduce{tmp}(cg::this_grid(), v, cuda::std::plus<>{}, ws);`
/// @note Requires a cooperative launch (tilewise::launch_cooperative): a grid barrier in an ordinary
///       launch of more blocks than fit at once hangs. Collective: every thread of the grid calls
///       it, with the same op and workspace. One grid-wide barrier per call (grid.sync(), or the
///       arrival and result words), plus two to four block barriers. Like grid.sync(), a call
///       orders memory: writes made before it by any thread of the grid are visible to every
///       thread after it.
///       Back-to-back calls (also of grid::exclusive_scan / grid::compact on the same workspace
///       and temp_storage) need no synchronization in between. The workspace is passed by value;
///       its state lives in device memory.
template <class T, unsigned BlockSize, unsigned W = 32>
class reduce : public detail::primitive_shell<detail::grid_reduce_storage<T, BlockSize>> {
  static_assert(detail::check_grid_args<T, BlockSize, W>::value);
  static constexpr unsigned warps = BlockSize / 32;
  using shell                     = detail::primitive_shell<detail::grid_reduce_storage<T, BlockSize>>;
  using shell::storage_;

 public:
  using typename shell::temp_storage;
  using shell::shell;

  /// Grids of at least this many blocks spin on what is published in a result word or a copy
  /// line instead of on the arrival words (detail/tuning.cuh).
  static constexpr unsigned last_block_min_blocks = detail::grid_reduce_tuned.last_block_min_blocks;

  /// @brief Reduction of `v` over every thread of the grid.
  /// @param grid `cg::this_grid()` of a cooperative launch
  /// @param v    this thread's value
  /// @param op   associative binary functor (commutativity not needed)
  /// @param ws   the workspace made for this launch (grid::make_workspace)
  /// @return the reduction, on every thread of the grid (bitwise identical everywhere)
  /// @note Collective over the grid: one grid-wide barrier (grid.sync() or its equivalent on the
  ///       workspace's arrival words) and two to four block barriers.
  template <class Op>
  TILEWISE_DEVICE T operator()(cg::grid_group const& grid, T v, Op op, workspace ws) {
    detail::grid_call<T, BlockSize> const call(grid, ws);
    // Each way is compiled only for the values that can take it (fewer registers held in a loop).
    if constexpr (detail::exact_float_sum<Op, T>) {
      if (call.blocks <= detail::exact_max_blocks) {  // uniform over the grid
        return exact(call, v, op);
      }
      // Grids above 4095 blocks: the last-block way, inline (out of line it does not build with
      // -rdc under launch bounds; what its presence costs: `docs/tuning.md#grid-reduce`).
      return last_block(call, block_partial(call, v, op), op);
    } else if constexpr (detail::counted_sum<Op, T>) {
      static_assert(detail::counted_max_blocks >= last_block_min_blocks);
      T const partial = block_partial(call, v, op);  // on warp 0; one block barrier
      if (call.blocks <= detail::counted_max_blocks) {  // uniform over the grid
        return counted(call, partial);
      }
      return last_block(call, partial, op);
    } else {
      T const partial = block_partial(call, v, op);
      if constexpr (sizeof(T) <= 4) {
        if (call.blocks >= last_block_min_blocks) {  // uniform over the grid
          return last_block(call, partial, op);
        }
      }
      call.publish(partial);
      grid.sync();
      call.commit();  // see grid_call::commit: after the wait, the next call finds the epoch in L1
      return fold_bank(call, op);
    }
  }

 private:
  using word_t = unsigned long long;

  /// The block's partial, on the lanes of warp 0 (thread 0 publishes it): one block barrier.
  template <class Op>
  TILEWISE_DEVICE T block_partial(detail::grid_call<T, BlockSize> const& call, T v, Op& op) {
    detail::converged_lanes<32> const lanes;
    T* const before = reinterpret_cast<T*>(storage_.before);
    T const w       = detail::reduce_lanes(lanes, v, op);  // in lane order
    if (lanes.rank == 0) {
      before[call.rank / 32] = w;
    }
    __syncthreads();  // also orders every thread's earlier writes before thread 0's release
    T partial{};
    if (call.rank < 32) {
      if constexpr (totals_in_registers) {
        T x[warps];
#pragma unroll
        for (unsigned i = 0; i < warps; ++i) {
          x[i] = before[i];
        }
        partial = detail::tree_fold<0, warps>(x, op);
      } else {
        partial = fold_in_turn(before, warps, op);
      }
    }
    return partial;
  }

  /// Every thread of the block folds the n partials of the call's bank, in one fixed order: one
  /// block barrier; the result on every thread.
  template <class Op>
  TILEWISE_DEVICE T fold_bank(detail::grid_call<T, BlockSize> const& call, Op& op) {
    detail::converged_lanes<32> const lanes;
    unsigned const warp = call.rank / 32;
    T* const after      = reinterpret_cast<T*>(storage_.after);
    T const* const bank = call.bank();
    unsigned const n    = call.blocks;
    unsigned holding_warps;  // warps whose totals take part
    if constexpr (detail::known_commutative<Op, T>) {
      // Order does not change the value bits of these ops on integers, and for floating point
      // every block still folds in the same fixed order: coalesced loads, one request per warp
      // and 32 partials (thread t takes partials t, t + BlockSize, ...).
      constexpr auto none = detail::identity<detail::kind_v<Op, T>, T>();
      T acc               = none;
      for (unsigned j = call.rank; j < n; j += 4 * BlockSize) {
        T x[4];
#pragma unroll
        for (unsigned u = 0; u < 4; ++u) {
          x[u] = j + u * BlockSize < n ? bank[j + u * BlockSize] : none;
        }
#pragma unroll
        for (unsigned u = 0; u < 4; ++u) {
          acc = op(acc, x[u]);
        }
      }
      T const t = detail::reduce_lanes(lanes, acc, op);
      if (lanes.rank == 0) {
        after[warp] = t;
      }
      holding_warps = warps;
    } else {  // thread t folds a contiguous chunk, chunks in block order: grid thread_rank order
      detail::grid_chunk const c(n, call.rank, BlockSize);
      T all{}, pre{};
      bool has_pre = false;
      detail::fold_partials<false>(bank, c.first, c.count, 0u, op, all, pre, has_pre);
      unsigned const in_warp = c.threads > warp * 32 ? c.threads - warp * 32 : 0u;
      T const t              = detail::reduce_tile_partial(lanes, all, op, in_warp < 32 ? (in_warp ? in_warp : 1u) : 32u);
      if (lanes.rank == 0) {
        after[warp] = t;
      }
      holding_warps = (c.threads + 31) / 32;
    }
    __syncthreads();
    if constexpr (totals_in_registers) {
      T x[warps];
#pragma unroll
      for (unsigned i = 0; i < warps; ++i) {
        x[i] = after[i];
      }
      return detail::prefix_fold<warps>(x, holding_warps, op).value;
    } else {
      return fold_in_turn(after, holding_warps, op);
    }
  }

  /// Whether the block stages fold the warp totals as a tree in registers: while they take at most
  /// 256 bytes; larger ones would spill, so they are folded one at a time from shared memory, in
  /// the same order.
  static constexpr bool totals_in_registers = sizeof(T) * warps <= 256;

  /// w[0] op w[1] op ... op w[count - 1] (count >= 1), left to right.
  template <class Op>
  TILEWISE_DEVICE static T fold_in_turn(T const* w, unsigned count, Op& op) {
    T acc = w[0];
    for (unsigned i = 1; i < count; ++i) {
      acc = T(op(acc, w[i]));
    }
    return acc;
  }

  /// Integer sums of at most 32 bits: the block's partial and its arrival are one atomic add to
  /// the arrival word of this call (detail::counted_sum), which also carries the result back.
  /// Small grids spin on that word; on grids of at least last_block_min_blocks blocks the spinning
  /// would slow the atomics on the same line, so the block whose add completes the count (its
  /// atomic returns the final word) publishes the sum in the result word, and the others spin there.
  TILEWISE_DEVICE T counted(detail::grid_call<T, BlockSize> const& call, T partial) {
    using bits_t   = cuda::std::make_unsigned_t<T>;
    T* const after = reinterpret_cast<T*>(storage_.after);
    call.prepare_next();  // on thread 0 of block 0: the next call's word, zeroed before this arrival
    if (call.rank == 0) {
      word_t const add = (word_t(1) << detail::counted_shift) + word_t(bits_t(partial));
      word_t const all = word_t(call.blocks) << detail::counted_shift;  // the sum bits stay below 2^46
      word_t seen;
      if (call.blocks < last_block_min_blocks) {
        seen = call.add_and_wait(call.arrival_word(), add, all);
      } else {
        auto const result = call.result();
        seen              = detail::gpu_word::add_acq_rel(call.arrival_word(), add) + add;
        if (seen >= all) {  // the last arrival: acquired every block's release
          result.publish(unsigned(seen));
        } else {
          seen = result.await();
        }
      }
      call.commit();
      after[0] = T(bits_t(seen));  // the sum modulo 2^(8 sizeof(T)): wrapping integer addition
    }
    __syncthreads();
    return after[0];
  }

  /// Float sums on grids of up to exact_max_blocks blocks: lanes 0..7 of warp 0 add the block's
  /// partial, as fixed-point digits and counts, to the call's 8 exact-sum words (one relaxed
  /// atomic each, which also counts the block in); every block rounds the same exact sum. Small
  /// grids spin on the words; on large ones the add that completes a word copies it to the copy
  /// line, where the blocks spin. Warp 0's release fence overlaps the other warps' reductions
  /// (three block barriers). Ordering: `docs/design/exact_float_sum.md`, `docs/design/grid_partials.md`.
  template <class Op>
  TILEWISE_DEVICE T exact(detail::grid_call<T, BlockSize> const& call, T v, Op& op) {
    static_assert(last_block_min_blocks <= detail::exact_max_blocks);
    detail::converged_lanes<32> const lanes;
    T* const before     = reinterpret_cast<T*>(storage_.before);
    T* const after      = reinterpret_cast<T*>(storage_.after);
    T* const first_warp = reinterpret_cast<T*>(storage_.first_warp);
    unsigned const warp = call.rank / 32;
    call.prepare_next();  // block 0's zeroing of the next call's words goes before warp 0's fence
    if constexpr (warps > 1) {
      if (warp == 0) {
        first_warp[lanes.rank] = v;
      }
    }
    __syncthreads();  // orders every thread's earlier writes before warp 0's fence
    T partial{};
    if (warp == 0) {
      // The release half of each lane's add below (a fence, then a relaxed add: a release pattern).
      cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
    }
    if constexpr (warps == 1) {
      partial = detail::reduce_lanes(lanes, v, op);
    } else {
      if (warp != 0) {
        T const x = warp == 1 ? T(op(first_warp[lanes.rank], v)) : v;
        T const w = detail::reduce_lanes(lanes, x, op);
        if (lanes.rank == 0) {
          before[warp] = w;
        }
      }
      __syncthreads();
      if (warp == 0) {
        T x[warps - 1];
#pragma unroll
        for (unsigned i = 0; i + 1 < warps; ++i) {
          x[i] = before[i + 1];
        }
        partial = detail::tree_fold<0, warps - 1>(x, op);
      }
    }
    if (warp == 0) {
      unsigned const lane = lanes.rank;
      word_t seen         = 0;
      if (lane < detail::exact_words) {
        word_t* const word = call.arrival_word() + lane;
        word_t const add   = detail::exact_addend(partial, lane);
        if (call.blocks < last_block_min_blocks) {  // every block spins on the words
          seen = call.template add_and_wait<true>(word, add, word_t(call.blocks) << detail::exact_shift);
        } else {  // the add that completes a word copies it; every block spins on the copy
          word_t* const copy = call.copies() + lane;
          word_t const all   = word_t(call.blocks) << detail::exact_shift;
          word_t const old   = detail::gpu_word::add_relaxed(word, add);
          if (old + add >= all) {
            // acquires every block's add to this word (each after its block's release fence) and
            // releases the copy
            cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
            detail::gpu_word::store_relaxed(copy, old + add);
          }
          seen = detail::gpu_word::spin(copy, [all](word_t x) { return x >= all; });
        }
      }
      __syncwarp();
      T const r = detail::exact_value(seen, lane, call.blocks);
      if (lane == 0) {
        call.commit();
        after[0] = r;
      }
    }
    __syncthreads();
    return after[0];
  }

  /// Values of at most 4 bytes on large grids: the last block to arrive folds the partials and
  /// publishes the result, tagged with epoch + 1, in the call's result word.
  template <class Op>
  TILEWISE_DEVICE T last_block(detail::grid_call<T, BlockSize> const& call, T partial, Op& op) {
    T* const after = reinterpret_cast<T*>(storage_.after);
    call.prepare_next();
    if (call.rank == 0) {
      call.bank()[call.block] = partial;
      // acq_rel: releases this block's writes; the last block acquires everybody's
      storage_.last = detail::gpu_word::add_acq_rel(call.arrival_word(), 1) == call.blocks - 1;
    }
    __syncthreads();
    auto const result = call.result();
    if (storage_.last) {  // uniform over the block
      T const r = fold_bank(call, op);
      if (call.rank == 0) {
        unsigned bits = 0;
        __builtin_memcpy(&bits, &r, sizeof(T));
        result.publish(bits);
        call.commit();
      }
      __syncthreads();  // the epoch store before the block's next call
      return r;
    }
    if (call.rank == 0) {
      unsigned const bits = result.await();
      call.commit();
      __builtin_memcpy(&after[0], &bits, sizeof(T));
    }
    __syncthreads();
    return after[0];
  }
};

}  // namespace tilewise::grid
