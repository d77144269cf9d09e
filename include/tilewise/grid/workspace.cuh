/// @file
/// @brief grid::workspace: the device scratch of the grid-scope primitives (grid::reduce,
///        grid::exclusive_scan, grid::compact), and grid::make_workspace, its host RAII owner.
///
/// Layout (one cudaMalloc): two banks of `blocks` partial slots of `slot_bytes` (double-buffered
/// per-block partials), `blocks` epoch counters (grid primitives called per block; the low bit
/// picks the bank), then 10 cache lines of grid::reduce: 4 arrival, 2 result and 4 copy lines.
/// Why back-to-back calls are safe: `docs/design/grid_partials.md`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include <tilewise/detail/config.cuh>
#include <tilewise/detail/grid/workspace_handle.cuh>

namespace tilewise::grid {

/// @brief Trivially copyable handle to the device scratch of the grid primitives; pass it to the
///        cooperative kernel by value. Made by grid::make_workspace, which owns the memory.
/// @note One workspace per grid running at once: two cooperative kernels running at the same
///       time (two streams) need two workspaces. A workspace serves any number of launches, one
///       after the other, of at most `blocks` blocks, each calling any sequence of grid
///       primitives with values of at most `slot_bytes` bytes.
using workspace = detail::workspace_handle;

/// @brief Host owner of a grid::workspace's device memory (move-only; frees it on destruction).
class workspace_owner {
 public:
  /// An empty owner (no memory; `get()` is a null handle).
  workspace_owner() = default;
  workspace_owner(workspace_owner const&)            = delete;
  workspace_owner& operator=(workspace_owner const&) = delete;
  /// @brief Takes over `o`'s memory; `o` is left empty.
  /// @param o the owner moved from
  workspace_owner(workspace_owner&& o) noexcept : ws_(o.ws_) { o.ws_ = {}; }
  /// @brief Frees this owner's memory, then takes over `o`'s; `o` is left empty.
  /// @param o the owner moved from
  /// @return `*this`
  workspace_owner& operator=(workspace_owner&& o) noexcept {
    if (this != &o) {
      release();
      ws_   = o.ws_;
      o.ws_ = {};
    }
    return *this;
  }
  /// Frees the device memory (cudaFree, which synchronizes the device as it always does).
  ~workspace_owner() { release(); }

  /// @brief The handle to pass to the kernel.
  /// @return the handle (null members when empty)
  workspace get() const noexcept { return ws_; }
  /// @brief Converts to the handle, so an owner can be passed where a launch expects a workspace.
  /// @return `get()`
  operator workspace() const noexcept { return ws_; }  // NOLINT: a launch argument converts implicitly
  /// @brief Device bytes held.
  /// @return the allocation's size, 0 when empty
  std::size_t bytes() const noexcept { return ws_.slots != nullptr ? bytes_of(ws_.blocks, ws_.slot_bytes) : 0; }

  static constexpr unsigned line_bytes = detail::workspace_line_bytes;  ///< one cache line per arrival or result line
  static constexpr unsigned line_count = detail::workspace_line_count;  ///< 4 arrival, 2 result and 4 copy lines

  /// @brief Device bytes of a workspace for `blocks` blocks and slots of `slot_bytes`.
  /// @param blocks     the largest grid it serves
  /// @param slot_bytes the slot size (a multiple of 16)
  /// @return bytes of the one allocation
  static std::size_t bytes_of(unsigned blocks, unsigned slot_bytes) noexcept {
    return lines_offset(blocks, slot_bytes) + line_count * line_bytes;
  }
  /// @brief Byte offset of the arrival and result lines: after the epochs, at a 128-byte boundary.
  /// @param blocks     the largest grid it serves
  /// @param slot_bytes the slot size (a multiple of 16)
  /// @return the offset from the start of the allocation
  static std::size_t lines_offset(unsigned blocks, unsigned slot_bytes) noexcept {
    return (2 * std::size_t(blocks) * slot_bytes + std::size_t(blocks) * sizeof(unsigned) + line_bytes - 1) /
           line_bytes * line_bytes;
  }

 private:
  friend workspace_owner make_workspace(int, std::size_t, cudaStream_t);
  void release() noexcept {
    if (ws_.slots != nullptr) {
      cudaFree(ws_.slots);  // nothing to report from a destructor
    }
    ws_ = {};
  }
  workspace ws_{};
};

/// @brief Allocates the scratch of the grid primitives for launches of up to `blocks` blocks
///        and values of up to `max_value_bytes` bytes (`sizeof(T)` of every T used), and zeroes
///        its epoch counters, arrival and result words.
/// @param blocks          the grid size of the launch (e.g. launch_cooperative's or
///                        tilewise::max_cooperative_grid's result), >= 1
/// @param max_value_bytes the largest sizeof(T) passed to a grid primitive, 1 .. 2^20
/// @param stream          the counters are zeroed with cudaMemsetAsync on this stream
/// @return the owner of the new workspace
/// @throw std::invalid_argument naming the bad argument; std::runtime_error when cudaMalloc or
///        cudaMemsetAsync fails (the CUDA error in the message)
/// @note The block size does not enter: the per-block stage of the primitives uses the caller's
///       shared-memory temp_storage. Ready in stream order on `stream`; does not synchronize.
inline workspace_owner make_workspace(int blocks, std::size_t max_value_bytes, cudaStream_t stream = 0) {
  if (blocks < 1) {
    throw std::invalid_argument("tilewise::grid::make_workspace: blocks must be >= 1 (got " + std::to_string(blocks) +
                                ")");
  }
  if (max_value_bytes < 1 || max_value_bytes > (std::size_t(1) << 20)) {
    throw std::invalid_argument("tilewise::grid::make_workspace: max_value_bytes must lie in [1, 2^20] (got " +
                                std::to_string(max_value_bytes) + ")");
  }
  workspace_owner owner;
  workspace ws;
  ws.blocks            = unsigned(blocks);
  ws.slot_bytes        = unsigned((max_value_bytes + 15) / 16 * 16);
  std::size_t const n  = workspace_owner::bytes_of(ws.blocks, ws.slot_bytes);
  void* p              = nullptr;
  cudaError_t e        = cudaMalloc(&p, n);
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("tilewise::grid::make_workspace: cudaMalloc of ") + std::to_string(n) +
                             " bytes failed: " + cudaGetErrorString(e));
  }
  ws.slots  = static_cast<unsigned char*>(p);
  ws.epochs   = reinterpret_cast<unsigned*>(ws.slots + 2 * std::size_t(ws.blocks) * ws.slot_bytes);
  ws.lines    = reinterpret_cast<unsigned long long*>(ws.slots + workspace_owner::lines_offset(ws.blocks, ws.slot_bytes));
  owner.ws_   = ws;
  std::size_t const counters = n - 2 * std::size_t(ws.blocks) * ws.slot_bytes;  // epochs, padding, lines
  e = cudaMemsetAsync(ws.epochs, 0, counters, stream);
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("tilewise::grid::make_workspace: cudaMemsetAsync failed: ") +
                             cudaGetErrorString(e));
  }
  return owner;
}

/// @brief make_workspace for values of type T (and smaller).
/// @tparam T      the largest value type passed to a grid primitive
/// @param blocks  the grid size of the launch, >= 1
/// @param stream  the counters are zeroed with cudaMemsetAsync on this stream
/// @return the owner of the new workspace
/// @throw as make_workspace(int, std::size_t, cudaStream_t)
template <class T>
workspace_owner make_workspace(int blocks, cudaStream_t stream = 0) {
  return make_workspace(blocks, sizeof(T), stream);
}

}  // namespace tilewise::grid
