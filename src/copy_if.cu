// Explicit instantiations of device::copy_flagged for the value types of
// detail/device/instantiations.cuh (copy_if takes user predicates: nothing to precompile).
#include <tilewise/device/copy_if.cuh>

namespace tilewise::device {
TILEWISE_PRECOMPILED_VALUE_TYPES(TILEWISE_COPY_FLAGGED_DEFINE, )
}  // namespace tilewise::device
