/// @file
/// @brief device::histogram_even's precompiled instantiations: the definitions' macro
///        (src/histogram_even.cu) and, where TILEWISE_PRECOMPILED is set, the `extern template`
///        declarations. Included at the end of device/histogram_even.cuh.
#pragma once

#include <tilewise/detail/device/instantiations.cuh>

/// histogram_even for samples S with bounds of type L into Counter: samples `S*` and `S const*`.
/// `Extern` is `extern` or empty.
#define TILEWISE_HISTOGRAM_EVEN_INSTANCES(Extern, S, L, Counter)                                                     \
  Extern template cudaError_t histogram_even<S*, Counter, L>(void*, std::size_t&, S*, Counter*, int, L, L,           \
                                                             std::int64_t, cudaStream_t);                            \
  Extern template cudaError_t histogram_even<S const*, Counter, L>(void*, std::size_t&, S const*, Counter*, int, L, L, \
                                                                   std::int64_t, cudaStream_t);
#define TILEWISE_HISTOGRAM_EVEN_EXTERN(S, L, Counter) TILEWISE_HISTOGRAM_EVEN_INSTANCES(extern, S, L, Counter)
#define TILEWISE_HISTOGRAM_EVEN_DEFINE(S, L, Counter) TILEWISE_HISTOGRAM_EVEN_INSTANCES(, S, L, Counter)

#if TILEWISE_PRECOMPILED_ACTIVE
namespace tilewise::device {
TILEWISE_PRECOMPILED_HISTOGRAM_LIST(TILEWISE_HISTOGRAM_EVEN_EXTERN)
}  // namespace tilewise::device
#endif
