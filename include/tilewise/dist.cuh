/// @file
/// @brief The distributed calls over an NCCL communicator (target tilewise::dist, built when
///        NCCL is found): dist::reduce, dist::inclusive_scan, dist::exclusive_scan,
///        dist::histogram_even, dist::group_by.
#pragma once

#include <tilewise/dist/group_by.cuh>
#include <tilewise/dist/histogram_even.cuh>
#include <tilewise/dist/reduce.cuh>
#include <tilewise/dist/scan.cuh>
