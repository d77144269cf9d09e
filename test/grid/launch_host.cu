// launch_cooperative's sizing and argument checks, and make_workspace's, on the host: no GPU
// needed (the pure functions behind them take the occupancy and multiprocessor counts as inputs).
#include <doctest/doctest.h>

#include <tilewise/grid/launch_cooperative.cuh>
#include <tilewise/grid/workspace.cuh>

#include <stdexcept>
#include <string>

namespace {

std::string message_of(auto&& call) {
  try {
    call();
  } catch (std::invalid_argument const& e) {
    return e.what();
  }
  return "no exception";
}

}  // namespace

TEST_CASE("cooperative grid size: occupancy x SMs by default, requests validated against it") {
  using tilewise::detail::cooperative_grid_size;
  for (int per_sm : {1, 2, 8}) {
    for (int sms : {1, 78, 132}) {
      int const limit = per_sm * sms;
      CHECK(cooperative_grid_size(0, per_sm, sms, 256, 0) == limit);
      CHECK(cooperative_grid_size(limit, per_sm, sms, 256, 0) == limit);
      CHECK(cooperative_grid_size(1, per_sm, sms, 256, 0) == 1);
      std::string const m = message_of([&] { cooperative_grid_size(limit + 1, per_sm, sms, 256, 0); });
      CHECK(m.find("grid of " + std::to_string(limit + 1) + " blocks cannot be co-resident") != std::string::npos);
      CHECK(m.find("the limit is " + std::to_string(limit) + " ") != std::string::npos);
    }
  }
  // The H200 case of the contract: 8 blocks of 256 per SM x 132 SMs.
  CHECK(message_of([] { cooperative_grid_size(1057, 8, 132, 256, 0); }).find("the limit is 1056 ") != std::string::npos);
  CHECK(message_of([] { cooperative_grid_size(0, 0, 132, 1024, 300000); }).find("cannot run") != std::string::npos);
  CHECK(message_of([] { cooperative_grid_size(-1, 8, 132, 256, 0); }).find(">= 1 block") != std::string::npos);
}

TEST_CASE("cooperative block and shared-memory checks") {
  using namespace tilewise::detail;
  CHECK(cooperative_block_threads(dim3(32, 4, 2), 1024) == 256);
  CHECK(message_of([] { cooperative_block_threads(dim3(0), 1024); }).find("block size is zero") != std::string::npos);
  CHECK(message_of([] { cooperative_block_threads(dim3(16, 0, 1), 1024); }).find("block size is zero") !=
        std::string::npos);
  CHECK(message_of([] { cooperative_block_threads(dim3(1025), 1024); }).find("limit of 1024 threads") !=
        std::string::npos);
  CHECK(message_of([] { cooperative_block_threads(dim3(512), 256); }).find("limit of 256 threads") != std::string::npos);
  CHECK(message_of([] { cooperative_check_smem(49153, 49152); }).find("49153 bytes of dynamic shared memory") !=
        std::string::npos);
  CHECK(message_of([] { cooperative_check_smem(49152, 49152); }) == "no exception");
}

TEST_CASE("make_workspace refuses bad sizes before touching the GPU") {
  CHECK(message_of([] { tilewise::grid::make_workspace(0, 4); }).find("blocks must be >= 1") != std::string::npos);
  CHECK(message_of([] { tilewise::grid::make_workspace(-5, 4); }).find("blocks must be >= 1") != std::string::npos);
  CHECK(message_of([] { tilewise::grid::make_workspace(8, 0); }).find("max_value_bytes") != std::string::npos);
  // two banks of slots, the epochs, then 10 lines of 128 bytes at a 128-byte boundary
  CHECK(tilewise::grid::workspace_owner::bytes_of(10, 16) == 384 + 10 * 128);   // 2 * 10 * 16 + 10 * 4 = 360
  CHECK(tilewise::grid::workspace_owner::bytes_of(4, 16) == 256 + 10 * 128);    // 144
  CHECK(tilewise::grid::workspace_owner::bytes_of(32, 16) == 1152 + 10 * 128);  // exactly 9 lines, no padding
  tilewise::grid::workspace_owner empty;
  CHECK(empty.get().slots == nullptr);
  CHECK(empty.bytes() == 0);
}
