// api.hpp's reduce entry points: the precompiled device::reduce (src/reduce.cu) behind a plain
// C++ signature, one overload per value type of detail/device/instantiations.cuh.
#include <tilewise/api.hpp>
#include <tilewise/device/reduce.cuh>

#include "api_op.cuh"

#define TILEWISE_API_REDUCE(T, Unused)                                                                  \
  cudaError_t tilewise::api::reduce(void* temp, std::size_t& temp_bytes, T const* in, T* out, std::int64_t n, \
                                    op o, T init, cudaStream_t s) {                                          \
    return detail::with_op(o, [&](auto f) { return device::reduce(temp, temp_bytes, in, out, n, f, init, s); }); \
  }
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_API_REDUCE, )
