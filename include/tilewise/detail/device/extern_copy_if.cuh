/// @file
/// @brief device::copy_flagged's precompiled instantiations (copy_if and copy_if_unordered take
///        user predicates: nothing to precompile): the definitions' macro (src/copy_if.cu) and,
///        where TILEWISE_PRECOMPILED is set, the `extern template` declarations. Included at the
///        end of device/copy_if.cuh.
#pragma once

#include <tilewise/detail/device/instantiations.cuh>

/// copy_flagged for value type T: inputs `T*` with `std::uint8_t*` flags and `T const*` with
/// `std::uint8_t const*` flags, output `T*`, count `std::int64_t*`. `Extern` is `extern` or empty.
#define TILEWISE_COPY_FLAGGED_INSTANCES(Extern, T)                                                                \
  Extern template cudaError_t copy_flagged<T*, std::uint8_t*, T*, std::int64_t*>(                                 \
    void*, std::size_t&, T*, std::uint8_t*, T*, std::int64_t*, std::int64_t, cudaStream_t);                       \
  Extern template cudaError_t copy_flagged<T const*, std::uint8_t const*, T*, std::int64_t*>(                     \
    void*, std::size_t&, T const*, std::uint8_t const*, T*, std::int64_t*, std::int64_t, cudaStream_t);
#define TILEWISE_COPY_FLAGGED_EXTERN(T, Unused) TILEWISE_COPY_FLAGGED_INSTANCES(extern, T)
#define TILEWISE_COPY_FLAGGED_DEFINE(T, Unused) TILEWISE_COPY_FLAGGED_INSTANCES(, T)

#if TILEWISE_PRECOMPILED_ACTIVE
namespace tilewise::device {
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_COPY_FLAGGED_EXTERN, )
}  // namespace tilewise::device
#endif
