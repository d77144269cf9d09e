/// @file
/// @brief Umbrella header: every tilewise primitive.
#pragma once

#include <tilewise/api.hpp>
#include <tilewise/tile/reduce.cuh>
#include <tilewise/tile/scan.cuh>
