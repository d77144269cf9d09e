/// @file
/// @brief Umbrella header: every tilewise primitive.
#pragma once

/// @namespace tilewise
/// @brief tilewise: parallel primitives on Cooperative Groups. At namespace scope: the Thrust-style
///        calls (tilewise/thrust.cuh) and tilewise::launch_cooperative.
/// @namespace tilewise::tile
/// @brief Tile scope: collectives of a `cg::thread_block_tile<W>` or `cg::coalesced_group`.
/// @namespace tilewise::block
/// @brief Block scope: classes over a whole thread block, with caller-owned shared temp_storage.
/// @namespace tilewise::grid
/// @brief Grid scope: classes over a whole cooperative grid (cooperative launch), with a workspace.
/// @namespace tilewise::device
/// @brief Device-wide, host-launched calls: CUB-style two-phase temp storage, never synchronizing.

#include <tilewise/api.hpp>
#include <tilewise/block/compact.cuh>
#include <tilewise/block/histogram.cuh>
#include <tilewise/block/reduce.cuh>
#include <tilewise/block/scan.cuh>
#include <tilewise/device/copy_if.cuh>
#include <tilewise/device/copy_if_unordered.cuh>
#include <tilewise/device/group_by.cuh>
#include <tilewise/device/histogram_even.cuh>
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
