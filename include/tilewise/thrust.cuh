/// @file
/// @brief Umbrella header of the Thrust-style calls (`tilewise::reduce`, `inclusive_scan`,
///        `exclusive_scan`, `copy_if`, `histogram_even`, `group_by` on Thrust CUDA policies).
///        Separate from tilewise.cuh, which stays device-side; see docs/api/thrust.md.
#pragma once

#include <tilewise/thrust/copy_if.cuh>
#include <tilewise/thrust/group_by.cuh>
#include <tilewise/thrust/histogram_even.cuh>
#include <tilewise/thrust/reduce.cuh>
#include <tilewise/thrust/scan.cuh>
