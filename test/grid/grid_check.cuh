// Shared by the grid-scope tests: cooperative launches of the test kernels through
// tilewise::launch_cooperative, and the grid sizes every case runs on (1 block, a few, and the
// largest co-resident grid, computed from the occupancy API).
#pragma once

#include <cooperative_groups.h>

#include <tilewise/grid/launch_cooperative.cuh>
#include <tilewise/grid/workspace.cuh>

#include <type_traits>
#include <vector>

#include "../support/cuda_test.cuh"
#include "../support/test_types.cuh"

namespace tw_test {

namespace cg = cooperative_groups;

/// Grid sizes of a kernel's cases: 1, 3 and the largest co-resident grid.
template <class... KArgs>
std::vector<int> grid_sizes(void (*kernel)(KArgs...), unsigned block) {
  int const max = tilewise::max_cooperative_grid(kernel, dim3(block));
  REQUIRE(max >= 1);
  std::vector<int> g{1};
  if (max > 3) g.push_back(3);
  if (max > 1) g.push_back(max);
  return g;
}

}  // namespace tw_test
