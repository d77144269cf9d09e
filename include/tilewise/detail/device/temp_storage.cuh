/// @file
/// @brief Host side of the device-wide algorithms: argument checks, the temp-storage layout of
///        the two-phase calls, the device's size (SMs, occupancy) and the launch epoch that lets
///        kernels tell this launch's tile records from stale ones without clearing them.
#pragma once

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMemCudaRt.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include <cuda/cmath>

#include <tilewise/detail/mix_bits.cuh>

namespace tilewise::detail {

/// Evaluates a cudaError_t expression and returns it from the enclosing function unless it is
/// cudaSuccess.
#define TILEWISE_RETURN_IF_ERROR(expr)            \
  do {                                          \
    cudaError_t const tw_e_ = (expr);           \
    if (tw_e_ != cudaSuccess) return tw_e_;     \
  } while (0)

/// A raw pointer argument that must not be null when there is work (iterators always pass).
template <class It>
bool null_pointer(It const& it) {
  if constexpr (std::is_pointer_v<It>) {
    return it == nullptr;
  } else {
    return false;
  }
}

/// Carves one caller-provided temp allocation into 256-byte aligned parts (the two-phase API:
/// with `temp == nullptr` only the size is computed). Like CUB, it accepts any `temp` pointer:
/// the parts start at `temp` rounded up to 256 bytes, and the size asks for 255 bytes more.
class temp_layout {
 public:
  static constexpr std::size_t alignment = 256;

  /// Reserves `bytes` and returns the offset of the part.
  std::size_t add(std::size_t bytes) {
    std::size_t const at = size_;
    size_ += cuda::round_up(bytes == 0 ? std::size_t(1) : bytes, alignment);
    return at;
  }
  std::size_t bytes() const { return size_ + alignment - 1; }

  /// Part `offset` of `temp`, as T*.
  template <class T>
  static T* at(void* temp, std::size_t offset) {
    auto const base = cuda::round_up(reinterpret_cast<std::uintptr_t>(temp), std::uintptr_t(alignment));
    return reinterpret_cast<T*>(base + offset);
  }

 private:
  std::size_t size_ = 0;
};

/// The two-phase protocol: with `temp == nullptr`, stores the size and returns cudaSuccess
/// (`query` true); otherwise fails with cudaErrorInvalidValue when the caller's `temp_bytes` is
/// smaller than needed.
inline cudaError_t check_temp(void const* temp, std::size_t& temp_bytes, std::size_t needed, bool& query) {
  query = temp == nullptr;
  if (query) {
    temp_bytes = needed;
    return cudaSuccess;
  }
  return temp_bytes < needed ? cudaErrorInvalidValue : cudaSuccess;
}

/// SM count of the current device.
inline cudaError_t sm_count(int& sms) {
  int dev = 0;
  TILEWISE_RETURN_IF_ERROR(cudaGetDevice(&dev));
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
}

/// Blocks of `kernel` that fit on the whole current device at once (occupancy x SMs).
template <class Kernel>
cudaError_t resident_blocks(Kernel kernel, int block_threads, std::size_t smem, int& blocks) {
  int sms = 0, per_sm = 0;
  TILEWISE_RETURN_IF_ERROR(sm_count(sms));
  TILEWISE_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, smem));
  blocks = sms * (per_sm > 0 ? per_sm : 1);
  return cudaSuccess;
}

/// resident_blocks of one kernel, block size and shared memory, remembered per device (a
/// dispatch function keeps one as a static): the occupancy query costs microseconds of host time.
class resident_cache {
 public:
  template <class Kernel>
  cudaError_t get(Kernel kernel, int block_threads, std::size_t smem, int& blocks) {
    int dev = 0;
    TILEWISE_RETURN_IF_ERROR(cudaGetDevice(&dev));
    if (dev >= 0 && dev < max_devices) {
      blocks = blocks_[dev].load(std::memory_order_relaxed);
      if (blocks > 0) return cudaSuccess;
    }
    TILEWISE_RETURN_IF_ERROR(resident_blocks(kernel, block_threads, smem, blocks));
    if (dev >= 0 && dev < max_devices) blocks_[dev].store(blocks, std::memory_order_relaxed);
    return cudaSuccess;
  }

 private:
  static constexpr int max_devices = 64;
  std::atomic<int> blocks_[max_devices]{};
};

/// Where the launch-epoch counter at `counter` starts: its address and the clock, mixed
/// (mix_bits), so that two copies of it (two shared objects, loaded at different addresses) do
/// not walk in step.
inline std::uint64_t epoch_seed(void const* counter) {
  return mix_bits(reinterpret_cast<std::uintptr_t>(counter) ^
                  std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
}

/// Launch epochs: a 62-bit number, different for every launch of this process, stored with each
/// record a kernel publishes in temp storage. A reader takes a record as written by this launch
/// only when its epoch matches, so temp storage never needs clearing (no memset, no init kernel)
/// and a record left by an earlier launch, or garbage, reads as "not yet written".
inline std::uint64_t next_epoch() {
  static std::atomic<std::uint64_t> counter{epoch_seed(&counter)};
  // Low 30 bits never all zero (packed records keep only those), so that zero-filled or cleared
  // records never match.
  std::uint64_t e = 0;
  while ((e & ((std::uint64_t(1) << 30) - 1)) == 0) {
    e = counter.fetch_add(1, std::memory_order_relaxed) & ((std::uint64_t(1) << 62) - 1);
  }
  return e;
}

/// The value type of an input iterator (raw pointers, Thrust iterators).
template <class It>
using iter_value_t = typename std::iterator_traits<It>::value_type;

/// Whether any of the raw pointer arguments is null.
template <class... It>
bool any_null(It const&... it) {
  return (null_pointer(it) || ...);
}

/// The grid of a single-pass launch, one block per tile of `tile_size` items: cudaErrorInvalidValue
/// for a negative num_items or more tiles than a grid has blocks.
inline cudaError_t count_tiles(long long num_items, long long tile_size, long long& tiles) {
  if (num_items < 0) {
    return cudaErrorInvalidValue;
  }
  tiles = cuda::ceil_div(num_items, tile_size);
  return tiles > 0x7FFFFFFFll ? cudaErrorInvalidValue : cudaSuccess;
}

/// Whether `stream` is being captured into a graph. A graph repeats its kernels' arguments, launch
/// epochs included, so a kernel that relies on epochs clears its records first when captured.
inline cudaError_t capturing(cudaStream_t stream, bool& yes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TILEWISE_RETURN_IF_ERROR(cudaStreamIsCapturing(stream, &status));
  yes = status != cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

/// Tells compute-sanitizer's initcheck that temp storage [p, p + bytes) counts as initialized for
/// work queued on `stream` from now on. For the parts that kernels read before this launch writes
/// them, by design: epoch-tagged records, whose stale or garbage contents read as "not written by
/// this launch" (so they need no memset). Other parts stay checked. NVTX does nothing unless a
/// tool has attached itself to the process: one indirect call.
inline void mark_any_contents(void const* p, std::size_t bytes, cudaStream_t stream) {
  static nvtxDomainHandle_t const domain = nvtxDomainCreateA("tilewise");
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr  = p;
  range.size = bytes;
  nvtxMemMarkInitializedBatch_t batch{};
  batch.extCompatID           = NVTX_EXT_COMPATID_MEM;
  batch.structSize            = sizeof(batch);
  batch.regionType            = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.regionDescCount       = 1;
  batch.regionDescElementSize = sizeof(range);
  batch.regionDescElements    = &range;
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  nvtxMemCudaMarkInitialized(domain, stream, 1, &batch);
#else
  nvtxMemCudaMarkInitialized(domain, stream, 0, &batch);
#endif
}

/// Readies a temp-storage part that kernels read before they write it (epoch-tagged records):
/// inside stream capture it is cleared (a memset in `stream`: every launch of the graph repeats
/// the captured epoch); outside, tools are told that any contents will do (mark_any_contents).
inline cudaError_t prepare_tagged_part(void* p, std::size_t bytes, cudaStream_t stream) {
  bool captured = false;
  TILEWISE_RETURN_IF_ERROR(capturing(stream, captured));
  if (captured) {
    return cudaMemsetAsync(p, 0, bytes, stream);
  }
  mark_any_contents(p, bytes, stream);
  return cudaSuccess;
}

}  // namespace tilewise::detail
