// Non-template host code of libtilewise.a (see tilewise/api.hpp).
#include <cuda_runtime_api.h>

#include <tilewise/api.hpp>

namespace tilewise {

version_info version() noexcept { return {TILEWISE_VERSION_MAJOR, TILEWISE_VERSION_MINOR, TILEWISE_VERSION_PATCH}; }

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" / "no driver" error
    return 0;
  }
  return count;
}

}  // namespace tilewise
