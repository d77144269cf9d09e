/// @file
/// @brief The device view of the grid primitives' scratch (grid::workspace) and the size of its
///        lines; grid/workspace.cuh owns the memory on the host.
#pragma once

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// What a cooperative kernel gets of a grid::workspace (that public name is an alias of this).
struct workspace_handle {
  unsigned char* slots = nullptr;  ///< 2 banks x `blocks` slots of `slot_bytes`
  unsigned* epochs     = nullptr;  ///< `blocks` per-block call counters
  unsigned long long* lines = nullptr;  ///< 4 arrival, 2 result and 4 copy lines, 128 bytes each
  unsigned blocks      = 0;        ///< largest grid (blocks) it serves
  unsigned slot_bytes  = 0;        ///< largest sizeof(T) it serves (a multiple of 16)
};

inline constexpr unsigned workspace_line_bytes = 128;  ///< one cache line per arrival or result line
inline constexpr unsigned workspace_line_count = 10;   ///< 4 arrival lines, 2 result lines, 4 copy lines

}  // namespace tilewise::detail
