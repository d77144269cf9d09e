/// @file
/// @brief The distributed calls over an NCCL communicator (target tilewise::dist, built when
///        NCCL is found): dist::reduce, dist::inclusive_scan, dist::exclusive_scan,
///        dist::histogram_even.
#pragma once

#include <tilewise/dist/histogram_even.cuh>
#include <tilewise/dist/reduce.cuh>
#include <tilewise/dist/scan.cuh>
