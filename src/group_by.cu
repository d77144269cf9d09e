// Explicit instantiations of device::group_by for the keys, values and operators of
// detail/device/instantiations.cuh.
#include <tilewise/device/group_by.cuh>

namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_GROUP_BY_DEFINE)
}  // namespace tilewise::device
