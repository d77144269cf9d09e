/// @file
/// @brief device::reduce's precompiled instantiations: the definitions' macro (src/reduce.cu)
///        and, where TILEWISE_PRECOMPILED is set, the `extern template` declarations that make a
///        user's translation unit link them. Included at the end of device/reduce.cuh.
#pragma once

#include <tilewise/detail/device/instantiations.cuh>

/// The instantiations of device::reduce for value type T and operator Op: input `T*` and
/// `T const*`, output `T*`, `init` of type T. `Extern` is `extern` or empty.
#define TILEWISE_REDUCE_INSTANCES(Extern, T, Op)                                                          \
  Extern template cudaError_t reduce<T*, T*, Op, T>(void*, std::size_t&, T*, T*, std::int64_t, Op, T,          \
                                                    cudaStream_t);                                             \
  Extern template cudaError_t reduce<T const*, T*, Op, T>(void*, std::size_t&, T const*, T*, std::int64_t, Op, \
                                                          T, cudaStream_t);
#define TILEWISE_REDUCE_EXTERN(T, Op) TILEWISE_REDUCE_INSTANCES(extern, T, Op)
#define TILEWISE_REDUCE_DEFINE(T, Op) TILEWISE_REDUCE_INSTANCES(, T, Op)

#if TILEWISE_PRECOMPILED_ACTIVE
namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_REDUCE_EXTERN)
}  // namespace tilewise::device
#endif
