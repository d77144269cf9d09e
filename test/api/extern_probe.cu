// A user's translation unit: device::reduce on float with plus<>, float* in and out, as a CUB-style
// caller writes it. Built twice: linking tilewise::tilewise (TILEWISE_PRECOMPILED: the extern
// template applies, the object must hold no kernel) and with the headers only (a control that
// must hold the reduce kernel, so the check can fail). check_extern.cmake inspects both objects.
#include <cuda/std/functional>

#include <tilewise/device/reduce.cuh>

cudaError_t user_sum(void* temp, std::size_t& temp_bytes, float* in, float* out, std::int64_t n, cudaStream_t s) {
  return tilewise::device::reduce(temp, temp_bytes, in, out, n, cuda::std::plus<>{}, 0.0f, s);
}
