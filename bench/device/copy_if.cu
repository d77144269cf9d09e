// device_bench section: device::copy_if (not written yet).
#include "env.cuh"

namespace tilewise_bench {

void run_copy_if(device_env&) {}

}  // namespace tilewise_bench
