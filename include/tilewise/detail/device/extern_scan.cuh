/// @file
/// @brief device::inclusive_scan's and device::exclusive_scan's precompiled instantiations: the
///        definitions' macro (src/scan.cu) and, where TILEWISE_PRECOMPILED is set, the `extern
///        template` declarations that make a user's translation unit link them. Included at the
///        end of device/scan.cuh.
#pragma once

#include <tilewise/detail/device/instantiations.cuh>

/// The instantiations of both scans for value type T and operator Op: input `T*` and `T const*`,
/// output `T*` (exclusive: `init` of type T). `Extern` is `extern` or empty.
#define TILEWISE_SCAN_INSTANCES(Extern, T, Op)                                                                  \
  Extern template cudaError_t inclusive_scan<T*, T*, Op>(void*, std::size_t&, T*, T*, std::int64_t, Op,             \
                                                         cudaStream_t);                                             \
  Extern template cudaError_t inclusive_scan<T const*, T*, Op>(void*, std::size_t&, T const*, T*, std::int64_t, Op, \
                                                               cudaStream_t);                                       \
  Extern template cudaError_t exclusive_scan<T*, T*, Op, T>(void*, std::size_t&, T*, T*, std::int64_t, Op, T,       \
                                                            cudaStream_t);                                          \
  Extern template cudaError_t exclusive_scan<T const*, T*, Op, T>(void*, std::size_t&, T const*, T*, std::int64_t,  \
                                                                  Op, T, cudaStream_t);
#define TILEWISE_SCAN_EXTERN(T, Op) TILEWISE_SCAN_INSTANCES(extern, T, Op)
#define TILEWISE_SCAN_DEFINE(T, Op) TILEWISE_SCAN_INSTANCES(, T, Op)

#if TILEWISE_PRECOMPILED_ACTIVE
namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_SCAN_EXTERN)
}  // namespace tilewise::device
#endif
