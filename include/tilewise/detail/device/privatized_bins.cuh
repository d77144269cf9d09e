/// @file
/// @brief The privatized-bins pass of the device-wide histogram (and group_by): counters in a
///        block's shared memory (32-bit, or 16-bit halves of words that hand their count on every
///        `narrow_carry` adds, for twice the bins), or in the distributed shared memory of a
///        thread-block cluster, zeroed, accumulated with shared-memory atomics, then flushed into
///        global memory. Plus the host side: the device's shared-memory limits (cached per
///        device), occupancy and cluster queries (cached per kernel and device) and the cluster
///        launch.
#pragma once

#include <cooperative_groups.h>

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include <cuda/cmath>
#include <cuda/std/bit>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/device/temp_storage.cuh>

namespace tilewise::detail {

// ---- host: the device's limits and cached launch queries -------------------------------------------

/// What the privatized strategies need to know about a device (queried, never assumed).
struct device_limits {
  int sms                = 0;
  int smem_per_sm        = 0;  ///< cudaDevAttrMaxSharedMemoryPerMultiprocessor
  int smem_per_block     = 0;  ///< cudaDevAttrMaxSharedMemoryPerBlockOptin
  int smem_reserved      = 0;  ///< cudaDevAttrReservedSharedMemoryPerBlock
  bool clusters          = false;  ///< cudaDevAttrClusterLaunch

  /// Dynamic shared memory one block may take when `k` blocks share a multiprocessor.
  std::size_t per_block(int k) const {
    long long const share = static_cast<long long>(smem_per_sm) / (k > 0 ? k : 1) - smem_reserved;
    long long const cap   = share < smem_per_block ? share : smem_per_block;
    return cap > 0 ? static_cast<std::size_t>(cap) : 0;
  }
};

/// The current device's limits, queried once per device.
inline cudaError_t get_device_limits(device_limits& out) {
  static std::mutex mu;
  static std::array<device_limits, 64> known{};
  int dev = 0;
  TILEWISE_RETURN_IF_ERROR(cudaGetDevice(&dev));
  bool const cacheable = dev >= 0 && dev < static_cast<int>(known.size());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu);
    if (known[dev].sms > 0) {
      out = known[dev];
      return cudaSuccess;
    }
  }
  device_limits l;
  int cl = 0;
  TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, dev));
  TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l.smem_per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l.smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
  TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&cl, cudaDevAttrClusterLaunch, dev));
  l.clusters = cl != 0;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu);
    known[dev] = l;
  }
  out = l;
  return cudaSuccess;
}

/// Lets `kernel` take `smem` bytes of dynamic shared memory (beyond the default 48 KB: up to the
/// block's opt-in maximum) and, for clusters of more than 8 blocks, non-portable cluster sizes.
/// Called before every query and launch that needs it, not once: a template kernel instantiated in
/// several translation units has one host stub but one device function per unit, and the runtime
/// may resolve the stub to another of them later (measured: a launch that had run failed with
/// cudaErrorInvalidValue after the other unit's module came into use).
inline cudaError_t allow_launch(void const* kernel, std::size_t smem, unsigned cluster) {
  if (smem <= (std::size_t(48) << 10) && cluster <= 8) return cudaSuccess;
  device_limits lim;
  TILEWISE_RETURN_IF_ERROR(get_device_limits(lim));
  if (smem > (std::size_t(48) << 10)) {
    TILEWISE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, lim.smem_per_block));
  }
  if (cluster > 8 && lim.clusters) {
    TILEWISE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  return cudaSuccess;
}

/// Occupancy and cluster queries of one kernel, remembered per device, block size, shared memory
/// and cluster size (a dispatch function keeps one as a static per kernel): each query costs
/// microseconds of host time.
class launch_cache {
 public:
  /// Blocks of `kernel` (block size `block`, `smem` bytes of dynamic shared memory, clusters of
  /// `cluster` blocks) that fit on one multiprocessor (cluster == 1) or co-resident clusters on
  /// the device (cluster > 1); 0 when none fits.
  cudaError_t fit(void const* kernel, int block, std::size_t smem, unsigned cluster, int& out) {
    int dev = 0;
    TILEWISE_RETURN_IF_ERROR(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(mu_);
    for (entry const& e : entries_) {
      if (e.dev == dev && e.block == block && e.smem == smem && e.cluster == cluster) {
        out = e.value;
        return cudaSuccess;
      }
    }
    TILEWISE_RETURN_IF_ERROR(allow_launch(kernel, smem, cluster));
    int value = 0;
    if (cluster <= 1) {
      TILEWISE_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&value, kernel, block, smem));
    } else {
      cudaLaunchConfig_t cfg{};
      cudaLaunchAttribute attr{};
      attr.id               = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = cluster;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      cfg.gridDim           = dim3(cluster);
      cfg.blockDim          = dim3(static_cast<unsigned>(block));
      cfg.dynamicSmemBytes  = smem;
      cfg.attrs             = &attr;
      cfg.numAttrs          = 1;
      cudaError_t const e   = cudaOccupancyMaxActiveClusters(&value, kernel, &cfg);
      if (e != cudaSuccess) {  // a cluster size the device refuses: none fits
        (void)cudaGetLastError();
        value = 0;
      }
    }
    if (entries_.size() < 4096) entries_.push_back({dev, block, smem, cluster, value});
    out = value;
    return cudaSuccess;
  }

 private:
  struct entry {
    int dev;
    int block;
    std::size_t smem;
    unsigned cluster;
    int value;
  };
  std::mutex mu_;
  std::vector<entry> entries_;
};

/// Launches `kernel` on `stream` with `grid` blocks of `block` threads, `smem` bytes of dynamic
/// shared memory, in clusters of `cluster` blocks (`grid` a multiple of it; 1: no cluster).
/// A failed launch's error is returned and not left behind for the next cudaPeekAtLastError.
template <class... Params, class... Args>
cudaError_t launch_in_clusters(void (*kernel)(Params...), unsigned grid, unsigned block, std::size_t smem,
                               unsigned cluster, cudaStream_t stream, Args&&... args) {
  TILEWISE_RETURN_IF_ERROR(allow_launch(reinterpret_cast<void const*>(kernel), smem, cluster));
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
  attr.id               = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.gridDim           = dim3(grid);
  cfg.blockDim          = dim3(block);
  cfg.dynamicSmemBytes  = smem;
  cfg.stream            = stream;
  cfg.attrs             = &attr;
  cfg.numAttrs          = cluster > 1 ? 1 : 0;
  cudaError_t const e   = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

// ---- the layout of the privatized counters -----------------------------------------------------

/// Where slot s (a bin, or a sample value) is counted. A block holds `copies` copies of each of
/// its slots, interleaved word by word: copy c of local slot i is word i * copies + c, and a
/// thread uses copy (lane mod copies). The copies of one slot thus sit in distinct banks (this is
/// the padding against bank conflicts), and with 32 copies every lane of a warp has a bank of its
/// own. Without a cluster a block holds all `slots`; in a cluster of `cluster` blocks block r
/// holds slots [r * slice, (r + 1) * slice) (the CUDA Programming Guide's distributed
/// shared-memory histogram). Narrow counters (a block's own slots only) are 16-bit halves of
/// 32-bit words: slot i < half in the low half of local slot i's words, slot i >= half in the
/// high half of local slot (i - half)'s, so neighbouring slots sit in different words (but for
/// a block of two slots).
struct privatized_layout {
  unsigned slots      = 0;  ///< slots of one pass (of the whole cluster)
  unsigned slice      = 0;  ///< slots one block holds
  unsigned copy_shift = 0;  ///< log2 of the copies per slot
  unsigned cluster    = 1;  ///< blocks sharing the slots
  unsigned half       = 0;  ///< narrow counters: the slots in low halves, ceil(slice / 2); 0: 32-bit
  cuda::std::uint64_t slice_magic = 0;  ///< s / slice == (s * slice_magic) >> 40 for s < 2^20

  /// `slots` slots in `copies` copies (a power of two, at most 32), spread over `cluster` blocks,
  /// in 16-bit halves of words if `narrow` (then `cluster` must be 1); slots * slice must stay
  /// below 2^40 (at most 2^20 slots with a cluster).
  __host__ __device__ static constexpr privatized_layout make(unsigned slots, unsigned copies, unsigned cluster,
                                                              bool narrow = false) {
    privatized_layout l;
    l.slots       = slots;
    l.cluster     = cluster < 1 ? 1 : cluster;
    l.slice       = static_cast<unsigned>(cuda::ceil_div(slots, l.cluster));
    l.copy_shift  = static_cast<unsigned>(cuda::std::countr_zero(copies < 1 ? 1u : copies));
    l.half        = narrow ? static_cast<unsigned>(cuda::ceil_div(l.slice, 2u)) : 0u;
    l.slice_magic = (cuda::std::uint64_t(1) << 40) / (l.slice < 1 ? 1 : l.slice) + 1;
    return l;
  }
  /// Counter words of one block (all copies).
  __host__ __device__ constexpr unsigned words() const { return (half ? half : slice) << copy_shift; }
  /// Shared memory of one block for counters of `counter_bytes` bytes (narrow: 4-byte words).
  __host__ __device__ std::size_t smem_bytes(std::size_t counter_bytes) const {
    return static_cast<std::size_t>(words()) * (half ? 4 : counter_bytes);
  }
};

/// Narrow counters: every add that takes a 16-bit half across a multiple of `narrow_carry` takes
/// `narrow_carry` back out of it, and its caller adds them to the slot's total elsewhere. A half
/// thus stays below narrow_carry + (adds since every block thread last passed a barrier), which
/// the caller keeps below 2^16 by a barrier at least every `narrow_adds_per_barrier` adds to the
/// block's counters (see privatized_bins::add_narrow).
inline constexpr unsigned narrow_carry            = 1u << 12;
inline constexpr unsigned narrow_adds_per_barrier = (1u << 16) - narrow_carry;

/// The dynamic shared memory of the privatized-bins kernels (16-byte aligned).
TILEWISE_DEVICE unsigned char* privatized_smem() {
  extern __shared__ __align__(16) unsigned char tilewise_privatized_smem[];
  return tilewise_privatized_smem;
}

// ---- device: the pass ----------------------------------------------------------------------------

/// One block's view of the privatized counters (type T, e.g. unsigned) in `smem`
/// (layout.smem_bytes(sizeof(T)) bytes). The pass: zero(); sync(); add(...) for every item;
/// sync(); flush(f) (which zeroes again, so another pass may follow after a sync()).
/// `Cluster`: the counters are spread over the blocks of the launch's thread-block cluster and
/// every add goes to the block owning the slot (cluster.map_shared_rank).
/// `Narrow`: 16-bit counters (T unsigned, no cluster, a layout made narrow): add_narrow instead
/// of add, with a barrier at least every narrow_adds_per_barrier adds of the block.
template <class T, bool Cluster, bool Narrow = false>
class privatized_bins {
  static_assert(!Narrow || (cuda::std::is_same_v<T, unsigned> && !Cluster),
                "tilewise: narrow privatized counters are the halves of a block's own 32-bit words");

 public:
  TILEWISE_DEVICE privatized_bins(T* smem, privatized_layout const& layout)
      : smem_(smem), layout_(layout), copy_(threadIdx.x & ((1u << layout.copy_shift) - 1)) {}

  /// Zeroes this block's counters (all copies). No barrier.
  TILEWISE_DEVICE void zero() {
    unsigned const words = layout_.words();
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) smem_[i] = T(0);
  }

  /// A barrier over the blocks sharing the counters: the block, or the cluster (which also
  /// orders the remote adds before it against the accesses after it).
  TILEWISE_DEVICE void sync() const {
    if constexpr (Cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      cooperative_groups::this_cluster().sync();
#endif
    } else {
      __syncthreads();
    }
  }

  /// Adds `w` to slot `slot` (< layout.slots): one shared-memory atomic, local or remote.
  TILEWISE_DEVICE void add(unsigned slot, T w = T(1)) const {
    static_assert(!Narrow, "tilewise: narrow privatized counters take add_narrow");
    if constexpr (Cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      unsigned const owner = static_cast<unsigned>((static_cast<cuda::std::uint64_t>(slot) * layout_.slice_magic) >> 40);
      unsigned const local = slot - owner * layout_.slice;
      T* const remote      = cooperative_groups::this_cluster().map_shared_rank(smem_, owner);
      atomicAdd(remote + ((local << layout_.copy_shift) | copy_), w);
#endif
    } else {
      atomicAdd(smem_ + ((slot << layout_.copy_shift) | copy_), w);
    }
  }

  /// Narrow counters: adds 1 to slot `slot` (< layout.slots) with one shared-memory atomic.
  /// Returns true when that add took the slot's half across a multiple of `narrow_carry`: the
  /// call has taken `narrow_carry` back out of it, and the caller must add `narrow_carry` to the
  /// slot's total.
  /// Why a half never spills into its neighbour: taking a carry out subtracts narrow_carry,
  /// which keeps the half modulo narrow_carry, so exactly the adds that find it at
  /// narrow_carry - 1 modulo narrow_carry carry (however many carries are pending at once), and
  /// once every thread has passed a barrier, the half is below narrow_carry. Until the next
  /// barrier every carry is taken out after the add that owes it, so the half is never negative
  /// and never above its value at the barrier plus the adds since: below
  /// narrow_carry + narrow_adds_per_barrier = 2^16 when the caller keeps its block to at most
  /// narrow_adds_per_barrier adds between two barriers.
  [[nodiscard]] TILEWISE_DEVICE bool add_narrow(unsigned slot) const {
    static_assert(Narrow, "tilewise: add_narrow is for narrow privatized counters");
    // selects rather than shifts by a computed amount: this runs once per sample
    bool const high       = slot >= layout_.half;
    unsigned const one    = high ? 0x10000u : 1u;  // 1 in the slot's half
    unsigned const local  = high ? slot - layout_.half : slot;
    T* const word         = smem_ + ((local << layout_.copy_shift) | copy_);
    unsigned const low    = high ? (narrow_carry - 1) << 16 : narrow_carry - 1;  // its bits below narrow_carry
    unsigned const old    = atomicAdd(word, one);
    if ((old & low) != low) return false;
    atomicSub(word, narrow_carry * one);
    return true;
  }

  /// For every slot of this block whose copies add up to non-zero (`Zeros`: every slot):
  /// `f(slot, sum)` (slot in the numbering of `add`); zeroes the counters as it reads them. Call
  /// after sync(). Each thread reads the copies of a slot starting at a different one, so a
  /// warp's reads hit 32 banks.
  template <bool Zeros = false, class F>
  TILEWISE_DEVICE void flush(F&& f) {
    unsigned const copies = 1u << layout_.copy_shift;
    unsigned first        = 0;
    if constexpr (Cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      first = cooperative_groups::this_cluster().block_rank() * layout_.slice;
#endif
    }
    unsigned const rows = Narrow ? layout_.half : layout_.slice;  // words of one copy
    for (unsigned s = threadIdx.x; s < rows; s += blockDim.x) {
      T* const p = smem_ + (s << layout_.copy_shift);
      T sum{}, high{};
      for (unsigned c = 0; c < copies; ++c) {
        unsigned const k = (c + s) & (copies - 1);
        if constexpr (Narrow) {
          sum += p[k] & 0xFFFFu;
          high += p[k] >> 16;
        } else {
          sum += p[k];
        }
        p[k] = T(0);
      }
      if ((Zeros || sum != T(0)) && first + s < layout_.slots) f(first + s, sum);
      if constexpr (Narrow) {
        if ((Zeros || high != T(0)) && s + layout_.half < layout_.slice) f(s + layout_.half, high);
      }
    }
  }

 private:
  T* smem_;
  privatized_layout layout_;
  unsigned copy_;
};

}  // namespace tilewise::detail
