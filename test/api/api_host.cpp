// Compiled by the C++ compiler, not nvcc: tilewise/api.hpp is plain C++ and libtilewise.a links
// into a host-only program.
#include <doctest/doctest.h>

#include <tilewise/api.hpp>

TEST_CASE("version matches the project version") {
  auto const v = tilewise::version();
  CHECK(v.major == TILEWISE_EXPECTED_MAJOR);
  CHECK(v.minor == TILEWISE_EXPECTED_MINOR);
  CHECK(v.patch == TILEWISE_EXPECTED_PATCH);
}

TEST_CASE("cuda_device_count never fails, also without a GPU") {
  int const n = tilewise::cuda_device_count();
  CHECK(n >= 0);
  CHECK(tilewise::cuda_device_count() == n);  // stable, and the error state was cleared
}
