/// @file
/// @brief What every section of device_bench shares: the options, the timer, the held stream, the
///        device's L2 size, the copy bandwidth and empty-launch time measured at the start of the
///        run, and one growing temp allocation. Each algorithm's rows live in a file of their own
///        (bench/device/*.cu) and are declared here.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "../bench_common.cuh"

namespace tilewise_bench {

struct device_env {
  options opt;
  timer tm;
  stream_hold held;
  cudaDeviceProp prop{};
  std::size_t l2_bytes = 0;
  double copy_gbs      = 0;  ///< GB/s of a device-to-device copy (bytes read + written)
  double launch_us     = 0;  ///< an empty kernel launch, timed as the rows are
  void* temp           = nullptr;
  std::size_t temp_cap = 0;

  /// A device allocation of at least `bytes` (kept and grown across rows).
  void* temp_for(std::size_t bytes) {
    if (bytes > temp_cap) {
      if (temp) TW_BENCH_CUDA(cudaFree(temp));
      temp_cap = std::max<std::size_t>(bytes, 1 << 20);
      TW_BENCH_CUDA(cudaMalloc(&temp, temp_cap));
    }
    return temp;
  }
  /// Percent of the copy bandwidth: `bytes` moved in `us`.
  double pct_copy(double bytes, double us) const { return 100.0 * bytes / (us * 1e3) / copy_gbs; }
  /// The CSV path of section `section`: --csv FILE with "_section" before its extension, or null.
  std::string csv_path(char const* section) const {
    if (!opt.csv) return {};
    std::string p = opt.csv;
    std::size_t const dot = p.rfind('.');
    std::string const tail = std::string("_") + section;
    return dot == std::string::npos || p.find('/', dot) != std::string::npos ? p + tail : p.insert(dot, tail);
  }
};

/// The sections besides reduce and the scans (device_bench.cu): each prints its markdown table
/// and one `summary:` line, and writes env.csv_path(name) when --csv is given.
void run_copy_if(device_env& env);         // bench/device/copy_if.cu
void run_histogram_even(device_env& env);  // bench/device/histogram_even.cu
void run_group_by(device_env& env);        // bench/device/group_by.cu

}  // namespace tilewise_bench
