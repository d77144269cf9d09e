// consumer_host: plain C++ (no nvcc) that links libtilewise.a through <tilewise/api.hpp> only.
#include <cstdio>
#include <tuple>

#include <tilewise/api.hpp>

int main() {
  tilewise::version_info const v = tilewise::version();
  int const devices              = tilewise::cuda_device_count();
  std::printf("consumer_host: tilewise %d.%d.%d, %d CUDA device(s)\n", v.major, v.minor, v.patch, devices);
  if (std::tie(v.major, v.minor, v.patch) < std::make_tuple(0, 1, 0)) {
    std::printf("consumer_host: FAILED, expected tilewise >= 0.1.0\n");
    return 1;
  }
  return 0;
}
