/// @file
/// @brief The scratch memory of a Thrust-style call, as an RAII guard: from the policy's
///        allocator when it has one (`par(alloc)`), else stream-ordered from a memory pool of the
///        call's device (cudaMallocFromPoolAsync / cudaFreeAsync on the call's stream), so that no
///        allocation ever synchronizes; calls that wait for their kernels reuse scratch their
///        thread keeps. Also the thread's page-locked buffer for results.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include <tilewise/detail/device/temp_storage.cuh>
#include <tilewise/detail/thrust/policy.cuh>

namespace tilewise::detail {

/// One stream-ordered pool per device for the scratch of calls without an allocator. The
/// device's default pool releases its memory at every synchronization (release threshold 0), so
/// each call would map memory anew; this pool keeps up to `keep_bytes` between calls (scratch is
/// small: tile records, not copies of the data). Thread-safe; created on first use; `nullptr` when
/// the device has no memory pools (then scratch comes from cudaMalloc / cudaFree).
class scratch_pools {
 public:
  static constexpr std::uint64_t keep_bytes = 64ull << 20;

  static cudaError_t get(int device, cudaMemPool_t& pool) {
    static scratch_pools pools;
    if (device < 0 || device >= max_devices) {
      pool = nullptr;
      return cudaSuccess;
    }
    slot& s = pools.slots_[device];
    std::call_once(s.once, [&] { s.status = create(device, s.pool); });
    pool = s.pool;
    return s.status;
  }

 private:
  static constexpr int max_devices = 64;
  struct slot {
    std::once_flag once;
    cudaMemPool_t pool = nullptr;
    cudaError_t status = cudaSuccess;
  };

  static cudaError_t create(int device, cudaMemPool_t& pool) {
    int supported = 0;
    TILEWISE_RETURN_IF_ERROR(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    if (!supported) {
      pool = nullptr;
      return cudaSuccess;
    }
    cudaMemPoolProps props{};
    props.allocType     = cudaMemAllocationTypePinned;
    props.handleTypes   = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = device;
    TILEWISE_RETURN_IF_ERROR(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = keep_bytes;
    return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }

  slot slots_[max_devices];  // pools live as long as the process (the driver frees them at exit)
};

/// What a thread keeps between its Thrust-style calls, freed when the thread ends:
/// - a page-locked host buffer for the results a call copies back and waits for (a copy into
///   pageable memory takes about 6 us more per call on the H200), allocated on first use;
/// - device scratch, one buffer per device, for the calls that wait for their kernels before they
///   return: once such a call has returned its scratch is idle, so the thread's next such call,
///   on any stream, takes it again without the stream-ordered allocation and free (1.3-4.6 us a
///   call in a probe on the H200). Grown in stream order from the device's scratch pool, up to
///   `scratch_bytes`.
class thread_kept {
 public:
  static constexpr std::size_t pinned_bytes  = 64;
  static constexpr std::size_t scratch_bytes = std::size_t(4) << 20;

  /// The thread's page-locked buffer of pinned_bytes, or nullptr when none can be had (the
  /// caller then copies into pageable memory).
  static void* pinned() {
    thread_kept& k = mine();
    if (!k.pinned_tried_) {
      k.pinned_tried_ = true;
      if (cudaMallocHost(&k.pinned_, pinned_bytes) != cudaSuccess) {
        k.pinned_ = nullptr;
        (void)cudaGetLastError();
      }
    }
    return k.pinned_;
  }

  /// Whether the thread keeps scratch of `bytes` on `device` (devices 0 .. 63).
  static bool keeps(int device, std::size_t bytes) {
    return device >= 0 && device < max_devices && bytes <= scratch_bytes;
  }

  /// At least `bytes` (keeps(device, bytes)) of the thread's scratch on `device`, for work
  /// queued on `stream` from now on; the caller waits for that work before the thread's next
  /// call, or gives the scratch up with drop_scratch.
  static cudaError_t take_scratch(int device, cudaMemPool_t pool, std::size_t bytes, cudaStream_t stream, void*& p) {
    buffer& b = mine().scratch_[device];
    if (b.bytes < bytes) {
      if (b.p != nullptr) {
        TILEWISE_RETURN_IF_ERROR(cudaFreeAsync(b.p, stream));
        b = {};
      }
      std::size_t const grown = std::max(bytes, std::size_t(64) << 10);
      TILEWISE_RETURN_IF_ERROR(cudaMallocFromPoolAsync(&b.p, grown, pool, stream));
      b.bytes = grown;
    }
    p = b.p;
    return cudaSuccess;
  }

  /// Forgets the thread's scratch on `device` and frees it in `stream`'s order, for a call that
  /// ends without waiting for its kernels (an error after a launch): they may still use it.
  static void drop_scratch(int device, cudaStream_t stream) {
    buffer& b = mine().scratch_[device];
    if (b.p != nullptr && cudaFreeAsync(b.p, stream) != cudaSuccess) {
      (void)cudaGetLastError();
    }
    b = {};
  }

  /// Bytes of scratch the thread keeps on `device` (0: none).
  static std::size_t scratch_held(int device) {
    return device >= 0 && device < max_devices ? mine().scratch_[device].bytes : 0;
  }

  thread_kept(thread_kept const&)            = delete;
  thread_kept& operator=(thread_kept const&) = delete;

 private:
  static constexpr int max_devices = 64;
  struct buffer {
    void* p           = nullptr;
    std::size_t bytes = 0;
  };

  thread_kept() = default;
  // The thread's calls waited for their kernels, so its scratch is idle: each buffer goes back to
  // its device's pool through the thread's default stream, waited for so that the pool has it back
  // when the thread is joined. Failures (a context already gone) have nowhere to go.
  ~thread_kept() {
    if (pinned_ != nullptr) {
      (void)cudaFreeHost(pinned_);
    }
    for (int device = 0; device < max_devices; ++device) {
      buffer& b = scratch_[device];
      if (b.p != nullptr && cudaSetDevice(device) == cudaSuccess &&
          cudaFreeAsync(b.p, cudaStreamPerThread) == cudaSuccess) {
        (void)cudaStreamSynchronize(cudaStreamPerThread);
      }
    }
    (void)cudaGetLastError();
  }
  static thread_kept& mine() {
    thread_local thread_kept kept;
    return kept;
  }

  void* pinned_      = nullptr;
  bool pinned_tried_ = false;
  buffer scratch_[max_devices];
};

/// `bytes` of device scratch for one call under `policy`, returned when the guard is destroyed:
/// to the allocator (right away, as Thrust returns its temporary buffers; under par_nosync the
/// kernels may still run, so the allocator must hand memory out again in stream order, as a
/// caching allocator used on one stream does), or with cudaFreeAsync on the call's stream. A call
/// that `waits` for its kernels before it returns and has no allocator takes the thread's kept
/// scratch (thread_kept) when it is small enough, and says `waited()` once it has waited.
/// Scratch is returned after the wait, never before: a stream-ordered free queued before a
/// synchronization lets the pool give memory above its release threshold back to the system at
/// that synchronization, so every large call (group_by's table at 2^28 pairs) would map its
/// scratch anew, about 13 ms a call on an H100; freed after the wait, it is there for the next.
/// Throws what the allocator throws (std::bad_alloc ...) or thrust::system_error.
template <class Derived>
class scratch {
 public:
  scratch(Derived& policy, std::size_t bytes, bool waits, char const* call)
      : policy_(policy), stream_(policy_stream(policy)), bytes_(bytes == 0 ? 1 : bytes) {
    if constexpr (has_allocator_v<Derived>) {
      p_ = thrust::detail::get_temporary_buffer<unsigned char>(policy_, static_cast<std::ptrdiff_t>(bytes_)).first;
      if (p_ == nullptr) {
        throw_on_error(cudaErrorMemoryAllocation, call);
      }
    } else {
      throw_on_error(cudaGetDevice(&device_), call);
      throw_on_error(scratch_pools::get(device_, pool_), call);
      void* p = nullptr;
      if (pool_ != nullptr && waits && thread_kept::keeps(device_, bytes_)) {
        kept_ = true;
        throw_on_error(thread_kept::take_scratch(device_, pool_, bytes_, stream_, p), call);
      } else if (pool_ != nullptr) {
        throw_on_error(cudaMallocFromPoolAsync(&p, bytes_, pool_, stream_), call);
      } else {
        throw_on_error(cudaMalloc(&p, bytes_), call);
      }
      p_ = static_cast<unsigned char*>(p);
    }
  }
  scratch(scratch const&)            = delete;
  scratch& operator=(scratch const&) = delete;

  ~scratch() {
    if (kept_ && p_ != nullptr) {
      thread_kept::drop_scratch(device_, stream_);  // the call did not wait: its kernels may still run
      p_ = nullptr;
    }
    release();
  }

  /// Returns the memory now (the destructor then does nothing): with no allocator, a
  /// stream-ordered free. The thread's kept scratch stays with the guard until waited().
  void release() {
    if (p_ == nullptr || kept_) {
      return;
    }
    if constexpr (has_allocator_v<Derived>) {
      thrust::detail::return_temporary_buffer(policy_, p_, static_cast<std::ptrdiff_t>(bytes_));
    } else {
      // A failure here (the context already broken by the error being thrown) has no better
      // place to go; the runtime's last error is cleared so it does not reach unrelated calls.
      cudaError_t const e = pool_ != nullptr ? cudaFreeAsync(p_, stream_) : cudaFree(p_);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
      }
    }
    p_ = nullptr;
  }

  /// The call has waited for its kernels: the memory is idle (kept scratch goes back to the
  /// thread, anything else is returned).
  void waited() {
    if (kept_) {
      p_ = nullptr;
    }
    release();
  }

  void* get() const { return p_; }

 private:
  Derived& policy_;
  cudaStream_t stream_;
  std::size_t bytes_;
  int device_          = 0;
  cudaMemPool_t pool_  = nullptr;
  unsigned char* p_    = nullptr;
  bool kept_           = false;
};

}  // namespace tilewise::detail
