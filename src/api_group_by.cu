// api.hpp's group_by entry points: the precompiled device::group_by (src/group_by.cu) behind
// plain C++ signatures, one overload per key and value type of detail/device/instantiations.cuh.
#include <tilewise/api.hpp>
#include <tilewise/device/group_by.cuh>

#include "api_op.cuh"

#define TILEWISE_API_GROUP_BY(K, T, Unused)                                                                       \
  cudaError_t tilewise::api::group_by(void* temp, std::size_t& temp_bytes, K const* keys_in, T const* values_in,    \
                                      K* keys_out, T* aggregates_out, std::int64_t* num_groups_out, std::int64_t n, \
                                      op o, cudaStream_t s) {                                                       \
    return detail::with_op(o, [&](auto f) {                                                                         \
      return device::group_by(temp, temp_bytes, keys_in, values_in, keys_out, aggregates_out, num_groups_out, n, f, \
                              s);                                                                                   \
    });                                                                                                             \
  }
#define TILEWISE_API_GROUP_BY_KEYS(T, Unused) TILEWISE_PRECOMPILED_GROUP_BY_KEYS(TILEWISE_API_GROUP_BY, T, )
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_API_GROUP_BY_KEYS, )
