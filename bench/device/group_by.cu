// device_bench section: device::group_by (not written yet).
#include "env.cuh"

namespace tilewise_bench {

void run_group_by(device_env&) {}

}  // namespace tilewise_bench
