/// @file
/// @brief tilewise::launch_cooperative: launches a kernel that uses grid-scope primitives
///        (grid.sync(), grid::reduce, ...) as a cooperative launch of a grid that fits on the GPU
///        at once, sized to the largest such grid or validated against it; and
///        tilewise::max_cooperative_grid, that size.
///
/// Errors are exceptions thrown before anything is launched, naming the cause:
/// std::invalid_argument for what the caller chose (block, dynamic shared memory, a grid that
/// cannot be co-resident: the message states the limit), std::runtime_error for what the device
/// or the runtime refused. Never a hang: a grid that cannot be co-resident is refused up front.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tilewise {

/// @brief A requested grid size for launch_cooperative (its own type, so a grid size cannot be
///        taken for a block size).
struct cooperative_grid {
  /// blocks of the 1-D grid, >= 1 (launch_cooperative checks it)
  int blocks;
  /// @param b the number of blocks
  explicit constexpr cooperative_grid(int b) noexcept : blocks(b) {}
};

namespace detail {

inline std::string dim3_text(dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

/// Throws std::runtime_error "tilewise::launch_cooperative: WHAT failed: ERROR" unless e == cudaSuccess.
inline void cooperative_check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("tilewise::launch_cooperative: ") + what + " failed: " + cudaGetErrorName(e) +
                             ": " + cudaGetErrorString(e));
  }
}

/// What the sizing needs to know about a kernel on the current device.
struct cooperative_limits {
  int max_threads_per_block;  ///< the kernel's (cudaFuncAttributes::maxThreadsPerBlock)
  int max_dynamic_smem;       ///< the kernel's (cudaFuncAttributes::maxDynamicSharedSizeBytes)
  int blocks_per_sm;          ///< occupancy for this block size and dynamic shared memory
  int sms;                    ///< multiprocessors of the device
};

/// Threads of a block, or std::invalid_argument for an empty one or one above the kernel's limit.
/// Host only, no GPU: tested without a device.
inline long long cooperative_block_threads(dim3 block, int max_threads_per_block) {
  long long const threads = (long long)block.x * block.y * block.z;
  if (threads == 0) {
    throw std::invalid_argument("tilewise::launch_cooperative: the block size is zero (block = " + dim3_text(block) +
                                ")");
  }
  if (threads > max_threads_per_block) {
    throw std::invalid_argument("tilewise::launch_cooperative: a block of " + std::to_string(threads) +
                                " threads exceeds the kernel's limit of " + std::to_string(max_threads_per_block) +
                                " threads per block");
  }
  return threads;
}

/// Std::invalid_argument when `smem` exceeds the kernel's dynamic shared memory limit. Host only.
inline void cooperative_check_smem(std::size_t smem, int max_dynamic_smem) {
  if (smem > std::size_t(max_dynamic_smem)) {
    throw std::invalid_argument("tilewise::launch_cooperative: " + std::to_string(smem) +
                                " bytes of dynamic shared memory exceed the kernel's limit of " +
                                std::to_string(max_dynamic_smem) +
                                " bytes (raise it with cudaFuncSetAttribute(kernel, "
                                "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes))");
  }
}

/// The grid to launch: `requested` blocks (0: the largest co-resident grid) checked against
/// blocks_per_sm x sms, or std::invalid_argument stating the limit. Host only, no GPU.
inline int cooperative_grid_size(int requested, int blocks_per_sm, int sms, long long threads, std::size_t smem) {
  long long const limit = (long long)blocks_per_sm * sms;
  std::string const shape =
    " blocks of " + std::to_string(threads) + " threads with " + std::to_string(smem) + " bytes of dynamic shared memory";
  if (limit < 1) {
    throw std::invalid_argument("tilewise::launch_cooperative: the kernel cannot run" + shape +
                                " (0 blocks fit on a multiprocessor)");
  }
  if (requested < 0) {
    throw std::invalid_argument("tilewise::launch_cooperative: the requested grid must be >= 1 block (got " +
                                std::to_string(requested) + ")");
  }
  if (requested > limit) {
    throw std::invalid_argument("tilewise::launch_cooperative: a grid of " + std::to_string(requested) +
                                " blocks cannot be co-resident; the limit is " + std::to_string(limit) + shape + " (" +
                                std::to_string(blocks_per_sm) + " per multiprocessor x " + std::to_string(sms) +
                                " multiprocessors)");
  }
  return requested == 0 ? int(limit > 0x7fffffff ? 0x7fffffff : limit) : requested;
}

/// The kernel's limits on the current device, after checking that it supports cooperative launches.
/// Queried on every call, unlike the occupancy of the device-wide kernels (detail::resident_cache):
/// the caller's kernel may change between launches what it may use and how many blocks fit
/// (cudaFuncSetAttribute: the dynamic shared-memory limit, the carveout), and a remembered limit
/// would then refuse a launch that fits or wave through one that does not.
template <class... KArgs>
cooperative_limits query_cooperative(void (*kernel)(KArgs...), dim3 block, std::size_t smem, long long& threads) {
  if (kernel == nullptr) {
    throw std::invalid_argument("tilewise::launch_cooperative: the kernel is a null pointer");
  }
  int device = 0;
  cooperative_check(cudaGetDevice(&device), "cudaGetDevice");
  int coop = 0;
  cooperative_check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device),
                    "cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch)");
  if (coop == 0) {
    throw std::runtime_error("tilewise::launch_cooperative: device " + std::to_string(device) +
                             " does not support cooperative launches (cudaDevAttrCooperativeLaunch is 0)");
  }
  cudaFuncAttributes attr{};
  cooperative_check(cudaFuncGetAttributes(&attr, reinterpret_cast<void const*>(kernel)), "cudaFuncGetAttributes");
  cooperative_limits l{};
  l.max_threads_per_block = attr.maxThreadsPerBlock;
  l.max_dynamic_smem      = attr.maxDynamicSharedSizeBytes;
  threads                 = cooperative_block_threads(block, l.max_threads_per_block);
  cooperative_check_smem(smem, l.max_dynamic_smem);
  cooperative_check(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, device),
                    "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
  cooperative_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&l.blocks_per_sm, kernel, int(threads), smem),
                    "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return l;
}

template <class... KArgs, class... Args>
int launch_cooperative_impl(void (*kernel)(KArgs...), int requested, dim3 block, std::size_t smem,
                            cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(KArgs) == sizeof...(Args), "tilewise::launch_cooperative: pass one argument per kernel parameter");
  long long threads             = 0;
  cooperative_limits const l    = query_cooperative(kernel, block, smem, threads);
  int const grid                = cooperative_grid_size(requested, l.blocks_per_sm, l.sms, threads, smem);
  // Each argument converted to its parameter's type; the launch copies them before returning.
  auto launch = [&](std::decay_t<KArgs>... params) {
    void* pointers[sizeof...(KArgs) + 1] = {static_cast<void*>(&params)..., nullptr};
    return cudaLaunchCooperativeKernel(reinterpret_cast<void const*>(kernel), dim3(unsigned(grid)), block, pointers,
                                       smem, stream);
  };
  cooperative_check(launch(std::forward<Args>(args)...), "cudaLaunchCooperativeKernel");
  return grid;
}

}  // namespace detail

/// @brief The largest grid of `kernel` that is co-resident on the current device with blocks of
///        `block` and `smem` bytes of dynamic shared memory (occupancy x multiprocessors): what
///        launch_cooperative launches without a requested size. Size a grid::workspace with it.
/// @param kernel the `__global__` function
/// @param block  the block shape (its threads: blockDim.x * blockDim.y * blockDim.z)
/// @param smem   bytes of dynamic shared memory per block
/// @return the number of blocks, >= 1
/// @throw as launch_cooperative (nothing is launched)
/// @note Host only; does not synchronize.
template <class... KArgs>
int max_cooperative_grid(void (*kernel)(KArgs...), dim3 block, std::size_t smem = 0) {
  long long threads          = 0;
  detail::cooperative_limits const l = detail::query_cooperative(kernel, block, smem, threads);
  return detail::cooperative_grid_size(0, l.blocks_per_sm, l.sms, threads, smem);
}

/// @brief Launches `kernel<<<G, block, smem, stream>>>(args...)` as a cooperative launch
///        (cudaLaunchCooperativeKernel) on the largest co-resident grid G.
/// @param kernel the `__global__` function
/// @param block  the block shape
/// @param smem   bytes of dynamic shared memory per block
/// @param stream the stream of the launch
/// @param args   one per kernel parameter, converted to the kernel's parameter types
/// @return G, the number of blocks launched (1-D grid)
/// @throw std::invalid_argument: zero-sized block, more threads per block or more dynamic shared
///        memory than the kernel may use, a kernel that cannot run with this block at all;
///        std::runtime_error: no cooperative launch on this device, or a failing CUDA call (the
///        CUDA error in the message). Nothing is launched when it throws.
/// @note Host; asynchronous like a `<<<>>>` launch (the kernel's own errors show at the next
///       synchronizing call). Grid primitives are only safe in kernels launched this way.
template <class... KArgs, class... Args>
int launch_cooperative(void (*kernel)(KArgs...), dim3 block, std::size_t smem, cudaStream_t stream, Args&&... args) {
  return detail::launch_cooperative_impl(kernel, 0, block, smem, stream, std::forward<Args>(args)...);
}

/// @brief As above on a grid of `grid.blocks` blocks, validated first: a grid larger than the
///        co-resident limit throws std::invalid_argument whose message states the limit (on an
///        H200, 1057 blocks of 256 threads: "... the limit is 1056 ...").
/// @param kernel the `__global__` function
/// @param grid   the requested number of blocks, >= 1
/// @param block  the block shape
/// @param smem   bytes of dynamic shared memory per block
/// @param stream the stream of the launch
/// @param args   one per kernel parameter, converted to the kernel's parameter types
/// @return grid.blocks
/// @throw std::invalid_argument for grid.blocks < 1 or above the co-resident limit, otherwise as
///        the launch on the largest grid
template <class... KArgs, class... Args>
int launch_cooperative(void (*kernel)(KArgs...), cooperative_grid grid, dim3 block, std::size_t smem,
                       cudaStream_t stream, Args&&... args) {
  if (grid.blocks < 1) {
    throw std::invalid_argument("tilewise::launch_cooperative: the requested grid must be >= 1 block (got " +
                                std::to_string(grid.blocks) + ")");
  }
  return detail::launch_cooperative_impl(kernel, grid.blocks, block, smem, stream, std::forward<Args>(args)...);
}

}  // namespace tilewise
