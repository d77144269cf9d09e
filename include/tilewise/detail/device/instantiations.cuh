/// @file
/// @brief The one list of what libtilewise.a precompiles: value types x operators (and the key,
///        sample and counter types of group_by and histogram_even). src/ expands
///        it into explicit instantiation definitions, detail/device/extern_*.cuh into the matching
///        `extern template` declarations (active where TILEWISE_PRECOMPILED is set: targets that
///        link tilewise::tilewise), src/api_*.cu into the api.hpp entry points.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <cuda/functional>
#include <cuda/std/functional>

/// X(T, Op) for T in {int32, uint32, int64, uint64, float, double}.
#define TILEWISE_PRECOMPILED_VALUE_TYPES(X, Op) \
  X(std::int32_t, Op)                           \
  X(std::uint32_t, Op)                          \
  X(std::int64_t, Op)                           \
  X(std::uint64_t, Op)                          \
  X(float, Op)                                  \
  X(double, Op)

/// X(T, Op) for every precompiled value type T and operator Op in {plus<>, minimum<>, maximum<>}
/// (the `<void>` forms: a call spelled `plus<T>{}` is another instantiation).
#define TILEWISE_PRECOMPILED_LIST(X)                            \
  TILEWISE_PRECOMPILED_VALUE_TYPES(X, ::cuda::std::plus<>)      \
  TILEWISE_PRECOMPILED_VALUE_TYPES(X, ::cuda::minimum<>)        \
  TILEWISE_PRECOMPILED_VALUE_TYPES(X, ::cuda::maximum<>)

/// X(Key, T, Op) for group_by's key types {int32, int64} and every (T, Op) of the list above.
#define TILEWISE_PRECOMPILED_GROUP_BY_KEYS(X, T, Op) \
  X(std::int32_t, T, Op)                             \
  X(std::int64_t, T, Op)

/// X(Sample, Level, Counter) for histogram_even: uint8 samples with int32 bounds (256 bins need an
/// upper bound of 256), other integer and floating samples with bounds of their own type, and the
/// counters {int32, uint64}.
#define TILEWISE_PRECOMPILED_HISTOGRAM_SAMPLES(X, Counter) \
  X(std::uint8_t, std::int32_t, Counter)                   \
  X(std::int32_t, std::int32_t, Counter)                   \
  X(std::uint32_t, std::uint32_t, Counter)                 \
  X(std::int64_t, std::int64_t, Counter)                   \
  X(std::uint64_t, std::uint64_t, Counter)                 \
  X(float, float, Counter)                                 \
  X(double, double, Counter)
#define TILEWISE_PRECOMPILED_HISTOGRAM_LIST(X)            \
  TILEWISE_PRECOMPILED_HISTOGRAM_SAMPLES(X, std::int32_t) \
  TILEWISE_PRECOMPILED_HISTOGRAM_SAMPLES(X, std::uint64_t)

/// Whether the extern template declarations are active in this translation unit.
#if defined(TILEWISE_PRECOMPILED) && TILEWISE_PRECOMPILED
#  define TILEWISE_PRECOMPILED_ACTIVE 1
#else
#  define TILEWISE_PRECOMPILED_ACTIVE 0
#endif
