// Explicit instantiations of device::reduce for the list in detail/device/instantiations.cuh.
#include <tilewise/device/reduce.cuh>

namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_REDUCE_DEFINE)
}  // namespace tilewise::device
