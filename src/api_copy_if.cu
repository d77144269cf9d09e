// api.hpp's copy_flagged entry points: the precompiled device::copy_flagged (src/copy_if.cu)
// behind a plain C++ signature, one overload per value type of detail/device/instantiations.cuh.
#include <tilewise/api.hpp>
#include <tilewise/device/copy_if.cuh>

#define TILEWISE_API_COPY_FLAGGED(T, Unused)                                                                  \
  cudaError_t tilewise::api::copy_flagged(void* temp, std::size_t& temp_bytes, T const* in,                     \
                                          std::uint8_t const* flags, T* out, std::int64_t* num_selected_out,   \
                                          std::int64_t n, cudaStream_t s) {                                     \
    return device::copy_flagged(temp, temp_bytes, in, flags, out, num_selected_out, n, s);                     \
  }
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_API_COPY_FLAGGED, )
