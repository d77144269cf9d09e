// Must NOT compile: a value type that is not trivially copyable cannot be shuffled word by word.
// The CONTROL build uses a trivially copyable struct of the same layout and must compile.
#include <cooperative_groups.h>

#include <tilewise/tile/reduce.cuh>

struct value {
  int x;
#ifndef CONTROL
  __host__ __device__ value(value const& other) : x(other.x + 0) {}  // user-provided copy
  __host__ __device__ value(int v) : x(v) {}
#endif
};

struct combine {
  __device__ value operator()(value a, value b) const { return value{a.x + b.x}; }
};

__device__ value use(cooperative_groups::thread_block_tile<32, cooperative_groups::thread_block> const& tile, value v) {
  return tilewise::tile::reduce(tile, v, combine{});
}
