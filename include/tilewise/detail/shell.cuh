/// @file
/// @brief The shell every block and grid primitive class shares: a nested temp_storage the caller
///        places in shared memory, and the reference to it the primitive keeps.
#pragma once

#include <tilewise/detail/config.cuh>

namespace tilewise::detail {

/// Base of the public primitive classes: `Storage` is the primitive's shared-memory scratch.
template <class Storage>
class primitive_shell {
 public:
  /// The caller's shared-memory scratch: `__shared__ P::temp_storage tmp;` (any contents).
  struct temp_storage : Storage {};

  /// @param storage the caller's shared-memory scratch (any contents: no initialisation needed)
  TILEWISE_DEVICE explicit primitive_shell(temp_storage& storage) : storage_(storage) {}

 protected:
  temp_storage& storage_;
};

}  // namespace tilewise::detail
