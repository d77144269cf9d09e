/// @file
/// @brief Plain C++ declarations of the entry points precompiled into libtilewise.a; a .cpp
///        file compiled by any C++20 compiler (no nvcc) can include this and link the library.
#pragma once

namespace tilewise {

/// @brief The library version, as compiled into libtilewise.a.
struct version_info {
  int major;
  int minor;
  int patch;
};

/// @return the version of the linked library.
/// @note Host only; does not touch the GPU.
version_info version() noexcept;

/// @brief Number of CUDA devices this process can use.
/// @return 0 when there is no device or no usable driver (never throws, never aborts).
/// @note Host only; the first call initialises the CUDA runtime.
int cuda_device_count() noexcept;

}  // namespace tilewise
