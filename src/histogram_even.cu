// Explicit instantiations of device::histogram_even for the samples, bounds and counters of
// detail/device/instantiations.cuh.
#include <tilewise/device/histogram_even.cuh>

namespace tilewise::device {
TILEWISE_PRECOMPILED_HISTOGRAM_LIST(TILEWISE_HISTOGRAM_EVEN_DEFINE)
}  // namespace tilewise::device
