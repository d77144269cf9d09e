// api.hpp's scan entry points: the precompiled device scans (src/scan.cu) behind plain C++
// signatures, one overload per value type of detail/device/instantiations.cuh.
#include <tilewise/api.hpp>
#include <tilewise/device/scan.cuh>

#include "api_op.cuh"

#define TILEWISE_API_SCANS(T, Unused)                                                                         \
  cudaError_t tilewise::api::inclusive_scan(void* temp, std::size_t& temp_bytes, T const* in, T* out,               \
                                            std::int64_t n, op o, cudaStream_t s) {                                 \
    return detail::with_op(o, [&](auto f) { return device::inclusive_scan(temp, temp_bytes, in, out, n, f, s); });  \
  }                                                                                                                 \
  cudaError_t tilewise::api::exclusive_scan(void* temp, std::size_t& temp_bytes, T const* in, T* out,               \
                                            std::int64_t n, op o, T init, cudaStream_t s) {                         \
    return detail::with_op(o, [&](auto f) { return device::exclusive_scan(temp, temp_bytes, in, out, n, f, init, s); }); \
  }
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_API_SCANS, )
