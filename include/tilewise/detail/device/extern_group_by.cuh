/// @file
/// @brief device::group_by's precompiled instantiations: the definitions' macro (src/group_by.cu)
///        and, where TILEWISE_PRECOMPILED is set, the `extern template` declarations. Included at
///        the end of device/group_by.cuh.
#pragma once

#include <tilewise/detail/device/instantiations.cuh>

/// group_by for keys K, values T and operator Op: inputs `K const*`, `T const*`, outputs `K*`,
/// `T*`, count `std::int64_t*` (const inputs only, to halve the library's largest source; the
/// Thrust-style calls pass `T*` inputs on as `T const*`). `Extern` is `extern` or empty.
#define TILEWISE_GROUP_BY_INSTANCES(Extern, K, T, Op)                                                            \
  Extern template cudaError_t group_by<K const*, T const*, K*, T*, std::int64_t*, Op>(                           \
    void*, std::size_t&, K const*, T const*, K*, T*, std::int64_t*, std::int64_t, Op, cudaStream_t);
#define TILEWISE_GROUP_BY_EXTERN_ONE(K, T, Op) TILEWISE_GROUP_BY_INSTANCES(extern, K, T, Op)
#define TILEWISE_GROUP_BY_DEFINE_ONE(K, T, Op) TILEWISE_GROUP_BY_INSTANCES(, K, T, Op)
#define TILEWISE_GROUP_BY_EXTERN(T, Op) TILEWISE_PRECOMPILED_GROUP_BY_KEYS(TILEWISE_GROUP_BY_EXTERN_ONE, T, Op)
#define TILEWISE_GROUP_BY_DEFINE(T, Op) TILEWISE_PRECOMPILED_GROUP_BY_KEYS(TILEWISE_GROUP_BY_DEFINE_ONE, T, Op)

#if TILEWISE_PRECOMPILED_ACTIVE
namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_GROUP_BY_EXTERN)
}  // namespace tilewise::device
#endif
