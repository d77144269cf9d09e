/// @file
/// @brief Umbrella header: every tilewise primitive.
#pragma once

#include <tilewise/api.hpp>
#include <tilewise/block/compact.cuh>
#include <tilewise/block/histogram.cuh>
#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>
#include <tilewise/device/reduce.cuh>
#include <tilewise/device/scan.cuh>
#include <tilewise/grid/compact.cuh>
#include <tilewise/grid/launch_cooperative.cuh>
#include <tilewise/grid/reduce.cuh>
#include <tilewise/grid/scan.cuh>
#include <tilewise/grid/workspace.cuh>
#include <tilewise/tile/atomic.cuh>
#include <tilewise/tile/compact.cuh>
#include <tilewise/tile/group_by.cuh>
#include <tilewise/tile/histogram.cuh>
#include <tilewise/tile/match.cuh>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>
