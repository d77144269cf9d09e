// dist::reduce with an operator tilewise knows no identity for must fail with the rule's message;
// with -DCONTROL (plus) it compiles.
#include <cuda/std/functional>

#include <tilewise/dist/reduce.cuh>

struct user_add {
  __host__ __device__ int operator()(int a, int b) const { return a + b; }
};

cudaError_t call(void* temp, std::size_t& bytes, int const* in, int* out, ncclComm_t comm) {
#ifdef CONTROL
  return tilewise::dist::reduce(temp, bytes, in, out, 1, cuda::std::plus<>{}, 0, comm);
#else
  return tilewise::dist::reduce(temp, bytes, in, out, 1, user_add{}, 0, comm);
#endif
}
