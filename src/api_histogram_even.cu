// api.hpp's histogram_even entry points: the precompiled device::histogram_even
// (src/histogram_even.cu) behind plain C++ signatures, one overload per (samples, bounds,
// counters) of detail/device/instantiations.cuh.
#include <tilewise/api.hpp>
#include <tilewise/device/histogram_even.cuh>

#define TILEWISE_API_HISTOGRAM_EVEN(S, L, Counter)                                                             \
  cudaError_t tilewise::api::histogram_even(void* temp, std::size_t& temp_bytes, S const* samples, Counter* hist, \
                                            int num_bins, L lower, L upper, std::int64_t n, cudaStream_t s) {    \
    return device::histogram_even(temp, temp_bytes, samples, hist, num_bins, lower, upper, n, s);                \
  }
TILEWISE_PRECOMPILED_HISTOGRAM_LIST(TILEWISE_API_HISTOGRAM_EVEN)
