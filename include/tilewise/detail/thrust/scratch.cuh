/// @file
/// @brief The scratch memory of a Thrust-style call, as an RAII guard: from the policy's
///        allocator when it has one (`par(alloc)`), else stream-ordered from a memory pool of the
///        call's device (cudaMallocFromPoolAsync / cudaFreeAsync on the call's stream), so that no
///        allocation ever synchronizes.
#pragma once

#include <cuda_runtime_api.h>

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

/// A page-locked host buffer per thread for the results a call copies back and waits for: a
/// copy into pageable memory takes about 6 us more per call on the H200 (bench/RESULTS.md,
/// Thrust-style calls). Allocated on the thread's first use, freed when the thread ends; nullptr
/// when it cannot be allocated (the caller then copies into pageable memory).
class pinned_slot {
 public:
  static constexpr std::size_t bytes = 64;

  static void* get() {
    thread_local pinned_slot slot;
    return slot.p_;
  }

  pinned_slot(pinned_slot const&)            = delete;
  pinned_slot& operator=(pinned_slot const&) = delete;

 private:
  pinned_slot() {
    if (cudaMallocHost(&p_, bytes) != cudaSuccess) {
      p_ = nullptr;
      (void)cudaGetLastError();
    }
  }
  ~pinned_slot() {
    if (p_ != nullptr) {
      (void)cudaFreeHost(p_);
    }
  }

  void* p_ = nullptr;
};

/// `bytes` of device scratch for one call under `policy`, returned when the guard is destroyed:
/// to the allocator (right away, as Thrust returns its temporary buffers; under par_nosync the
/// kernels may still run, so the allocator must hand memory out again in stream order, as a
/// caching allocator used on one stream does), or with cudaFreeAsync on the call's stream.
/// Throws what the allocator throws (std::bad_alloc ...) or thrust::system_error.
template <class Derived>
class scratch {
 public:
  scratch(Derived& policy, std::size_t bytes, char const* call)
      : policy_(policy), stream_(policy_stream(policy)), bytes_(bytes == 0 ? 1 : bytes) {
    if constexpr (has_allocator_v<Derived>) {
      p_ = thrust::detail::get_temporary_buffer<unsigned char>(policy_, static_cast<std::ptrdiff_t>(bytes_)).first;
      if (p_ == nullptr) {
        throw_on_error(cudaErrorMemoryAllocation, call);
      }
    } else {
      int device = 0;
      throw_on_error(cudaGetDevice(&device), call);
      throw_on_error(scratch_pools::get(device, pool_), call);
      void* p = nullptr;
      if (pool_ != nullptr) {
        throw_on_error(cudaMallocFromPoolAsync(&p, bytes_, pool_, stream_), call);
      } else {
        throw_on_error(cudaMalloc(&p, bytes_), call);
      }
      p_ = static_cast<unsigned char*>(p);
    }
  }
  scratch(scratch const&)            = delete;
  scratch& operator=(scratch const&) = delete;

  ~scratch() { release(); }

  /// Returns the memory now (the destructor then does nothing): with no allocator, a
  /// stream-ordered free, which a call may make before it waits for its kernels.
  void release() {
    if (p_ == nullptr) {
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

  void* get() const { return p_; }

 private:
  Derived& policy_;
  cudaStream_t stream_;
  std::size_t bytes_;
  cudaMemPool_t pool_ = nullptr;
  unsigned char* p_   = nullptr;
};

}  // namespace tilewise::detail
