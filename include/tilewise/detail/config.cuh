/// @file
/// @brief Portability macros shared by every tilewise header.
#pragma once

#include <cuda/std/version>

#if __cplusplus < 202002L
#  error "tilewise needs C++20: compile with -std=c++20 (CMake: link tilewise::headers or tilewise::tilewise)"
#endif

/// Namespace-scope function objects (`tilewise::tile::reduce` ...): a `__device__` constant in the
/// device pass, an inline constant in the host pass (the same scheme as CCCL's _CCCL_GLOBAL_CONSTANT).
#if defined(__CUDA_ARCH__)
#  define TILEWISE_GLOBAL_CONSTANT __device__ constexpr
#else
#  define TILEWISE_GLOBAL_CONSTANT inline constexpr
#endif

/// Kernels: `__global__` with hidden visibility, so that two shared objects built against
/// different tilewise versions do not interpose each other's kernels.
#define TILEWISE_KERNEL __global__ __attribute__((visibility("hidden")))

/// Device functions of the primitives: inlined into the caller's kernel.
#define TILEWISE_DEVICE __device__ __forceinline__
