// device_bench section: device::histogram_even (not written yet).
#include "env.cuh"

namespace tilewise_bench {

void run_histogram_even(device_env&) {}

}  // namespace tilewise_bench
