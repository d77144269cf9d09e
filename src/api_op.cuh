// The api.hpp entry points' operator enumeration, mapped onto the precompiled functors.
#pragma once

#include <cuda_runtime_api.h>

#include <cuda/functional>
#include <cuda/std/functional>

#include <tilewise/api.hpp>

namespace tilewise::api::detail {

/// f(functor) for the functor that `o` names; cudaErrorInvalidValue for a value outside the enum.
template <class F>
cudaError_t with_op(op o, F&& f) {
  switch (o) {
    case op::plus: return f(cuda::std::plus<>{});
    case op::minimum: return f(cuda::minimum<>{});
    case op::maximum: return f(cuda::maximum<>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace tilewise::api::detail
