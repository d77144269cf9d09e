// Explicit instantiations of device::inclusive_scan and device::exclusive_scan for the list in
// detail/device/instantiations.cuh.
#include <tilewise/device/scan.cuh>

namespace tilewise::device {
TILEWISE_PRECOMPILED_LIST(TILEWISE_SCAN_DEFINE)
}  // namespace tilewise::device
