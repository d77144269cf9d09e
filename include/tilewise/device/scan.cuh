/// @file
/// @brief device::inclusive_scan and device::exclusive_scan: host-launched prefix scans over
///        num_items elements, CUB-style two-phase calls, in a single pass over the data.
///
/// How (detail::scan_kernel): one block per tile of `block * items` elements. Each warp copies
/// its segment into shared memory with coalesced loads (16-byte `cp.async` when possible), where
/// every thread owns `items` consecutive elements (detail::warp_stage); a thread folds its
/// elements, the block scans the thread totals (block::exclusive_scan), warp 0 publishes the
/// tile's aggregate and finds the prefix of all earlier tiles by decoupled look-back
/// (detail::look_back), every thread rewrites its elements as their prefixes in place, and the
/// warp stores the segment back coalesced. The tile never sits in registers, so more tiles are in
/// flight per multiprocessor. Each element is read once and written once. Tiles only wait for
/// tiles with lower indices.
#pragma once

#include <cooperative_groups.h>

#include <cuda/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <thrust/type_traits/unwrap_contiguous_iterator.h>

#include <tilewise/block/scan.cuh>
#include <tilewise/detail/block/plan.cuh>
#include <tilewise/detail/block/rules.cuh>
#include <tilewise/detail/block/storage.cuh>
#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/look_back.cuh>
#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/device/tile_status.cuh>
#include <tilewise/detail/device/warp_stage.cuh>
#include <tilewise/detail/functional.cuh>
#include <tilewise/detail/maybe.cuh>

namespace tilewise::detail {

namespace cg = cooperative_groups;

/// The knobs of a scan policy besides its tile shape; every policy derives from this and may
/// override them:
/// - `min_blocks`: blocks per multiprocessor ptxas must fit (`__launch_bounds__`' second argument,
///   a register cap); 0, which nvcc drops, leaves ptxas' choice alone (an explicit 1 changed it:
///   64 -> 80 registers for int32);
/// - `first_delay_ns`, `poll_delay_ns`: the look-back's sleeps (detail::look_back); 0: none;
/// - `delay_min_tiles`: grids of fewer tiles skip the sleeps (as CUB's, below 500 tiles). There
///   all tiles start at once and a sleep only delays the chain; on larger grids the tiles of later
///   waves find their predecessors finished after the first sleep;
/// - `long_delay_ns`, `long_delay_min_tiles`: grids of at least `long_delay_min_tiles` tiles sleep
///   `long_delay_ns` before the first window instead (0: no such tier).
struct scan_knobs {
  static constexpr unsigned min_blocks           = 0;
  static constexpr unsigned first_delay_ns       = 0;
  static constexpr unsigned poll_delay_ns        = 0;
  static constexpr unsigned delay_min_tiles      = 0;
  static constexpr unsigned long_delay_ns        = 0;
  static constexpr unsigned long_delay_min_tiles = 0;
};

/// Measured on the H200 by bench/device_bench (int32 and float, 2^28: sleeps 1.09-1.11x faster;
/// grids of 512 tiles 0.92x, of 1024 1.01x, of 2048 1.02-1.05x). The first sleep does it: 1245
/// ns before the first window alone gave the same, 648 ns between polls alone nothing. Since the
/// records are relaxed (detail::tile_status), a longer first sleep pays on grids of 2048 tiles or
/// more: 2500 ns against 1245 at 2^28 2.6-3.6 % (int32, float) and 1.6-2.3 % (int64, double)
/// faster, at 2^24 (2048 tiles of 4 bytes, 4096 of 8) 0-4 % in 7 of 8 rows (one 0.7 % slower);
/// 4000 ns no better; 600 ns or none slower at 2^28 (1-2.5 % and 3-7 %). At 1024 tiles (2^23 of
/// 4 bytes) 2500 ns was 2-4 % slower than 1245 in 3 of 4 rows, so smaller grids keep 1245 ns.
struct scan_sleeps : scan_knobs {
  static constexpr unsigned first_delay_ns       = 1245;
  static constexpr unsigned poll_delay_ns        = 648;
  static constexpr unsigned delay_min_tiles      = 1024;
  static constexpr unsigned long_delay_ns        = 2500;
  static constexpr unsigned long_delay_min_tiles = 2048;
};

/// Tile shape of the device-wide scan of T under Op (measured on the H200 by bench/device_bench):
/// 32 KB tiles of 256 threads for values of up to 8 bytes (int8: 128 items per thread).
/// scan_kernel holds the tile in shared memory, so a thread needs 40 registers and 6 blocks fit per
/// multiprocessor (shared memory: 6 x 33 KB); tiles held in registers fitted 4 (int32: 64
/// registers, 8-byte types: 5 blocks of 128 x 32). More bytes in flight per multiprocessor, which
/// is what bounds the scan: 2^28 int32 and float 1.09-1.10x faster than with tiles in registers
/// (74 -> 81 % of copy), int64 and double 1.04x (82 -> 85 %), int8 1.6x (8 KB tiles before); 5
/// blocks per multiprocessor (48 registers) is 3-4 % slower at 2^28. ptxas -v: no spills for the
/// standard operators. 8-byte values under an operator without a known identity (they carry a
/// presence flag) spill 32-82 bytes under the 40-register cap, 4-36 under 48: they get 5 blocks,
/// 3-5 % faster than 6 (int64 user plus, affine maps; 2^24 and 2^27). Larger values: 256 x 4, no
/// cap.
template <class T, class Op>
struct scan_policy : scan_sleeps {
  static constexpr unsigned block      = 256;
  static constexpr unsigned items      = sizeof(T) <= 8 ? unsigned(128 / sizeof(T)) : 4u;
  static constexpr unsigned min_blocks = sizeof(T) > 8 ? 0u : sizeof(T) == 8 && !has_identity<Op, T> ? 5u : 6u;
};

/// Block-wide exclusive scan of the thread totals (empty before thread 0) and their aggregate.
template <unsigned Block, class T, class Op>
struct totals_scan {
  static constexpr bool known = has_identity<Op, T>;
  using value_t               = maybe_t<Op, T>;
  using scan_t = block::exclusive_scan<cuda::std::conditional_t<known, T, value_t>, Block>;
  using temp_storage = typename scan_t::temp_storage;

  TILEWISE_DEVICE static value_t run(temp_storage& tmp, T total, Op& op, T& aggregate) {
    auto const block = cg::this_thread_block();
    if constexpr (known) {
      return {scan_t{tmp}(block, total, op, identity<kind_v<Op, T>, T>(), aggregate)};
    } else {
      value_t agg;
      value_t const r = scan_t{tmp}(block, value_t{total, true}, maybe_op<T, Op>{op}, value_t{total, false}, agg);
      aggregate       = agg.value;
      return r;
    }
  }
};

/// One tile per block; `Exclusive` seeds tile 0 with `init`. The tile stays in shared memory
/// (detail::warp_stage) from load to store; the registers hold only the thread's running values.
/// Out-of-range elements of the last tile are copies of its first element and are never written.
template <class Policy, bool Exclusive, class InIt, class OutIt, class T, class Op>
TILEWISE_KERNEL void __launch_bounds__(Policy::block, Policy::min_blocks)
  scan_kernel(InIt in, OutIt out, long long n, Op op, T init, tile_status<T> status) {
  constexpr unsigned B          = Policy::block;
  constexpr unsigned I          = Policy::items;
  constexpr long long tile_size = static_cast<long long>(B) * I;
  using scan_t                  = totals_scan<B, T, Op>;
  using value_t                 = typename scan_t::value_t;

  __shared__ warp_stage<T, I> stage[B / 32];
  __shared__ typename scan_t::temp_storage scan_tmp;
  __shared__ value_t tile_prefix;

  long long const tile     = blockIdx.x;
  long long const base     = tile * tile_size;
  unsigned const warp      = threadIdx.x / 32;
  long long const seg      = base + static_cast<long long>(warp) * 32 * I;
  long long const left     = n - seg;
  unsigned const count     = left <= 0 ? 0u : left >= 32 * I ? 32u * I : static_cast<unsigned>(left);

  // The fill in its own statement: as load()'s argument, ptxas spilled 20 bytes (int64).
  T const fill = n - base >= tile_size ? T{} : T(in[base]);
  stage[warp].load(in + seg, count, fill);
  T aggregate;
  value_t const before = scan_t::run(scan_tmp, stage[warp].fold(op), op, aggregate);
  if constexpr (Exclusive) {
    if (tile == 0) {
      aggregate = op(init, aggregate);
    }
  }
  if (threadIdx.x == 0) {  // tile 0 knows its inclusive prefix, the others their aggregate
    status.publish(tile, tile == 0 ? status_inclusive : status_partial, aggregate);
  }
  if (warp == 0) {
    value_t prefix;
    if (tile == 0) {
      prefix = make_maybe<Op, T>(Exclusive ? init : aggregate, Exclusive);
    } else {
      bool delay     = true;  // both uniform over the grid
      unsigned first = Policy::first_delay_ns;
      if constexpr (Policy::delay_min_tiles > 0) {
        delay = gridDim.x >= Policy::delay_min_tiles;
      }
      if constexpr (Policy::long_delay_ns > 0) {
        if (gridDim.x >= Policy::long_delay_min_tiles) {
          first = Policy::long_delay_ns;
        }
      }
      T const p = look_back<Policy::poll_delay_ns>(status, tile, op, delay, first);
      if (threadIdx.x == 0) {
        status.publish(tile, status_inclusive, T(op(p, aggregate)));
      }
      prefix = make_maybe<Op, T>(p, true);
    }
    if (threadIdx.x == 0) {
      tile_prefix = prefix;
    }
  }
  __syncthreads();

  maybe_t<Op, T> running = join<Op, T>(tile_prefix, before, op);
  if constexpr (Exclusive) {  // always present: tile 0 starts from init
    stage[warp].transform([&](T const& x) {
      T const y = running.value;
      running   = make_maybe<Op, T>(T(op(running.value, x)), true);
      return y;
    });
  } else {
    stage[warp].transform([&](T const& x) {
      T const y = join_right<Op, T>(running, x, op);
      running   = make_maybe<Op, T>(y, true);
      return y;
    });
  }
  stage[warp].store(out + seg, count);
}

/// Shared by both scans: argument checks, the temp-storage layout, the launch.
template <class Policy, bool Exclusive, class InIt, class OutIt, class T, class Op>
cudaError_t dispatch_scan(void* temp, std::size_t& temp_bytes, InIt in, OutIt out, long long num_items, Op op,
                          T init, cudaStream_t stream) {
  if (num_items < 0) {
    return cudaErrorInvalidValue;
  }
  constexpr long long tile_size = static_cast<long long>(Policy::block) * Policy::items;
  long long const tiles         = cuda::ceil_div(num_items, tile_size);
  if (tiles > 0x7FFFFFFFll) {
    return cudaErrorInvalidValue;
  }
  temp_layout layout;
  std::size_t const tags   = layout.add(tile_status<T>::tag_bytes(tiles));
  std::size_t const part   = layout.add(tile_status<T>::value_bytes(tiles));
  std::size_t const incl   = layout.add(tile_status<T>::value_bytes(tiles));
  bool query               = false;
  TILEWISE_RETURN_IF_ERROR(check_temp(temp, temp_bytes, layout.bytes(), query));
  if (query || num_items == 0) {
    return cudaSuccess;
  }
  if (null_pointer(in) || null_pointer(out)) {
    return cudaErrorInvalidValue;
  }
  tile_status<T> const status{temp_layout::at<unsigned long long>(temp, tags), temp_layout::at<T>(temp, part),
                              temp_layout::at<T>(temp, incl), next_epoch()};
  scan_kernel<Policy, Exclusive><<<static_cast<unsigned>(tiles), Policy::block, 0, stream>>>(in, out, num_items, op,
                                                                                             init, status);
  return cudaPeekAtLastError();
}

}  // namespace tilewise::detail

namespace tilewise::device {

/// @brief Inclusive prefix scan: `out[i] = in[0] op in[1] op ... op in[i]` for i < num_items.
/// @tparam InputIt  random-access iterator (raw pointer, thrust::device_ptr, Thrust fancy
///                  iterators); the scan runs in its value type T (any trivially copyable type)
/// @tparam OutputIt random-access output iterator accepting T; may equal `in` (in-place)
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param num_items  number of elements, 0 <= num_items (64-bit)
/// @param op         associative binary functor on T; need not be commutative
/// @return cudaSuccess, cudaErrorInvalidValue for null pointers with num_items > 0, a negative
///         num_items or too small a `temp_bytes`, or the launch's error
/// @note Asynchronous in `stream`; never synchronizes. One kernel launch; num_items == 0 writes
///       nothing. `temp` needs no initialisation (compute-sanitizer's initcheck
///       reports reads of temp storage the program never wrote: any contents will do; a
///       cudaMemset once silences it).
template <class InputIt, class OutputIt, class Op>
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, cudaStream_t stream = 0) {
  using T = detail::iter_value_t<InputIt>;
  // Contiguous iterators (thrust::device_ptr, device_vector's iterators) go in as the raw pointers
  // they wrap, so the kernel takes its vector paths.
  return detail::dispatch_scan<detail::scan_policy<T, Op>, false>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), thrust::try_unwrap_contiguous_iterator(out),
    num_items, op, T{}, stream);
}

/// @brief Exclusive prefix scan: `out[0] = init`, `out[i] = init op in[0] op ... op in[i-1]`.
/// @tparam T the scan's value type (that of `init`); the elements are converted to it
/// @note As inclusive_scan: asynchronous, one launch, in-place allowed, `op` need not commute.
template <class InputIt, class OutputIt, class Op, class T>
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, InputIt in, OutputIt out, std::int64_t num_items,
                           Op op, T init, cudaStream_t stream = 0) {
  return detail::dispatch_scan<detail::scan_policy<T, Op>, true>(
    temp, temp_bytes, thrust::try_unwrap_contiguous_iterator(in), thrust::try_unwrap_contiguous_iterator(out),
    num_items, op, init, stream);
}

}  // namespace tilewise::device
