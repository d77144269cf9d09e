/// @file
/// @brief Plain C++ declarations of the entry points precompiled into libtilewise.a; a .cpp
///        file compiled by any C++20 compiler (no nvcc) can include this and link the library.
///        The calls are tilewise::device's two-phase calls on raw device pointers, with the same
///        semantics and errors (docs/api/precompiled.md lists them).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tilewise {

/// @brief The library version, as compiled into libtilewise.a.
struct version_info {
  int major;  ///< major version
  int minor;  ///< minor version
  int patch;  ///< patch version
};

/// @return the version of the linked library.
/// @note Host only; does not touch the GPU.
version_info version() noexcept;

/// @brief Number of CUDA devices this process can use.
/// @return 0 when there is no device or no usable driver (never throws, never aborts).
/// @note Host only; the first call initialises the CUDA runtime.
int cuda_device_count() noexcept;

}  // namespace tilewise

/// @brief The precompiled device-wide calls, for {int32, uint32, int64, uint64, float, double}
///        (group_by: int32 and int64 keys).
///
/// Every call is two-phase, as CUB's: with `temp == nullptr` it stores the scratch size in
/// `temp_bytes` and does nothing else; otherwise it runs on `s` with `temp_bytes` of device
/// scratch at `temp`. `n` is a 64-bit count; 0 is valid (reduce then writes `init`). Each call
/// returns cudaSuccess; cudaErrorInvalidValue for a null `in` / `out` with work to do, n < 0, an
/// `op` outside the enumeration or too small a `temp_bytes`; or the launch's error.
namespace tilewise::api {

/// @brief The operators of the precompiled calls.
enum class op {
  plus,     ///< a + b
  minimum,  ///< the smaller of a and b
  maximum,  ///< the larger of a and b
};

/** @name reduce */
///@{

/// @brief `*out = init o in[0] o ... o in[n - 1]`, as tilewise::device::reduce: one launch,
///        bitwise run-to-run deterministic for a fixed n (floating point included).
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the input, `n` elements
/// @param out        receives the reduction (one element)
/// @param n          number of elements, >= 0
/// @param o          the operator
/// @param init       the initial value
/// @param s          the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t reduce(void* temp, std::size_t& temp_bytes, std::int32_t const* in, std::int32_t* out,
                   std::int64_t n, op o, std::int32_t init, cudaStream_t s = 0);
cudaError_t reduce(void* temp, std::size_t& temp_bytes, std::uint32_t const* in, std::uint32_t* out,
                   std::int64_t n, op o, std::uint32_t init, cudaStream_t s = 0);
cudaError_t reduce(void* temp, std::size_t& temp_bytes, std::int64_t const* in, std::int64_t* out,
                   std::int64_t n, op o, std::int64_t init, cudaStream_t s = 0);
cudaError_t reduce(void* temp, std::size_t& temp_bytes, std::uint64_t const* in, std::uint64_t* out,
                   std::int64_t n, op o, std::uint64_t init, cudaStream_t s = 0);
cudaError_t reduce(void* temp, std::size_t& temp_bytes, float const* in, float* out, std::int64_t n, op o,
                   float init, cudaStream_t s = 0);
cudaError_t reduce(void* temp, std::size_t& temp_bytes, double const* in, double* out, std::int64_t n, op o,
                   double init, cudaStream_t s = 0);
///@}

/** @name inclusive_scan */
///@{

/// @brief `out[i] = in[0] o ... o in[i]` for i < n, as tilewise::device::inclusive_scan;
///        `in == out` allowed (in place).
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the input, `n` elements
/// @param out        receives the `n` prefixes (may equal `in`)
/// @param n          number of elements, >= 0
/// @param o          the operator
/// @param s          the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, std::int32_t const* in, std::int32_t* out,
                           std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, std::uint32_t const* in, std::uint32_t* out,
                           std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, std::int64_t const* in, std::int64_t* out,
                           std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, std::uint64_t const* in, std::uint64_t* out,
                           std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, float const* in, float* out, std::int64_t n,
                           op o, cudaStream_t s = 0);
cudaError_t inclusive_scan(void* temp, std::size_t& temp_bytes, double const* in, double* out, std::int64_t n,
                           op o, cudaStream_t s = 0);
///@}

/** @name exclusive_scan */
///@{

/// @brief `out[0] = init`, `out[i] = init o in[0] o ... o in[i - 1]`, as
///        tilewise::device::exclusive_scan; `in == out` allowed (in place).
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in         the input, `n` elements
/// @param out        receives the `n` prefixes (may equal `in`)
/// @param n          number of elements, >= 0
/// @param o          the operator
/// @param init       the first output and the scan's start
/// @param s          the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, std::int32_t const* in, std::int32_t* out,
                           std::int64_t n, op o, std::int32_t init, cudaStream_t s = 0);
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, std::uint32_t const* in, std::uint32_t* out,
                           std::int64_t n, op o, std::uint32_t init, cudaStream_t s = 0);
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, std::int64_t const* in, std::int64_t* out,
                           std::int64_t n, op o, std::int64_t init, cudaStream_t s = 0);
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, std::uint64_t const* in, std::uint64_t* out,
                           std::int64_t n, op o, std::uint64_t init, cudaStream_t s = 0);
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, float const* in, float* out, std::int64_t n,
                           op o, float init, cudaStream_t s = 0);
cudaError_t exclusive_scan(void* temp, std::size_t& temp_bytes, double const* in, double* out, std::int64_t n,
                           op o, double init, cudaStream_t s = 0);
///@}

/** @name copy_flagged */
///@{

/// @brief Stable compaction by flags, as tilewise::device::copy_flagged: `in[i]` for every i < n
///        with `flags[i] != 0`, in order, to `out[0, count)`; count to `*num_selected_out`.
/// @param temp             device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes       size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param in               the input, `n` elements
/// @param flags            `n` flags: nonzero keeps the element
/// @param out              receives the kept elements (must not overlap `in`)
/// @param num_selected_out receives the number kept (device memory)
/// @param n                number of elements, >= 0
/// @param s                the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, std::int32_t const* in, std::uint8_t const* flags,
                         std::int32_t* out, std::int64_t* num_selected_out, std::int64_t n, cudaStream_t s = 0);
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, std::uint32_t const* in,
                         std::uint8_t const* flags, std::uint32_t* out, std::int64_t* num_selected_out,
                         std::int64_t n, cudaStream_t s = 0);
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, std::int64_t const* in, std::uint8_t const* flags,
                         std::int64_t* out, std::int64_t* num_selected_out, std::int64_t n, cudaStream_t s = 0);
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, std::uint64_t const* in,
                         std::uint8_t const* flags, std::uint64_t* out, std::int64_t* num_selected_out,
                         std::int64_t n, cudaStream_t s = 0);
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, float const* in, std::uint8_t const* flags,
                         float* out, std::int64_t* num_selected_out, std::int64_t n, cudaStream_t s = 0);
cudaError_t copy_flagged(void* temp, std::size_t& temp_bytes, double const* in, std::uint8_t const* flags,
                         double* out, std::int64_t* num_selected_out, std::int64_t n, cudaStream_t s = 0);
///@}

/** @name histogram_even */
///@{

/// @brief `num_bins` equal bins over [lower, upper), as tilewise::device::histogram_even (CUB's
///        HistogramEven bins; out-of-range samples and NaN ignored; `hist` overwritten);
///        cudaErrorInvalidValue also for num_bins < 1 or !(lower < upper).
/// @param temp       device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param samples    the samples, `n` of them
/// @param hist       `num_bins` counters, overwritten
/// @param num_bins   number of bins, >= 1
/// @param lower      lower bound of the first bin (inclusive)
/// @param upper      upper bound of the last bin (exclusive)
/// @param n          number of samples, >= 0
/// @param s          the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint8_t const* samples, std::int32_t* hist,
                           int num_bins, std::int32_t lower, std::int32_t upper, std::int64_t n,
                           cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::int32_t const* samples, std::int32_t* hist,
                           int num_bins, std::int32_t lower, std::int32_t upper, std::int64_t n,
                           cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint32_t const* samples,
                           std::int32_t* hist, int num_bins, std::uint32_t lower, std::uint32_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::int64_t const* samples, std::int32_t* hist,
                           int num_bins, std::int64_t lower, std::int64_t upper, std::int64_t n,
                           cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint64_t const* samples,
                           std::int32_t* hist, int num_bins, std::uint64_t lower, std::uint64_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, float const* samples, std::int32_t* hist,
                           int num_bins, float lower, float upper, std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, double const* samples, std::int32_t* hist,
                           int num_bins, double lower, double upper, std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint8_t const* samples,
                           std::uint64_t* hist, int num_bins, std::int32_t lower, std::int32_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::int32_t const* samples,
                           std::uint64_t* hist, int num_bins, std::int32_t lower, std::int32_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint32_t const* samples,
                           std::uint64_t* hist, int num_bins, std::uint32_t lower, std::uint32_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::int64_t const* samples,
                           std::uint64_t* hist, int num_bins, std::int64_t lower, std::int64_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, std::uint64_t const* samples,
                           std::uint64_t* hist, int num_bins, std::uint64_t lower, std::uint64_t upper,
                           std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, float const* samples, std::uint64_t* hist,
                           int num_bins, float lower, float upper, std::int64_t n, cudaStream_t s = 0);
cudaError_t histogram_even(void* temp, std::size_t& temp_bytes, double const* samples, std::uint64_t* hist,
                           int num_bins, double lower, double upper, std::int64_t n, cudaStream_t s = 0);
///@}

/** @name group_by */
///@{

/// @brief Unsorted reduce-by-key, as tilewise::device::group_by: one row (key, reduction of its
///        values under `o`) per distinct key of `keys_in[0, n)`, in unspecified order, the row
///        count to `*num_groups_out`; `temp_bytes` grows with n (about 32 bytes per pair).
/// @param temp           device scratch, or nullptr to query `temp_bytes`
/// @param temp_bytes     size of `temp` (in), or the size needed (out, when `temp == nullptr`)
/// @param keys_in        the keys, `n` of them
/// @param values_in      the values (pair i is `(keys_in[i], values_in[i])`)
/// @param keys_out       receives the distinct keys
/// @param aggregates_out receives each key's reduction
/// @param num_groups_out receives the number of rows (device memory)
/// @param n              number of pairs, >= 0
/// @param o              the operator (commutative)
/// @param s              the stream to run on
/// @return cudaSuccess, cudaErrorInvalidValue for invalid arguments (see above), or the launch's error
/// @note Asynchronous in `s`, never synchronizes; the result is in device memory once `s` gets there.
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in,
                     std::int32_t const* values_in, std::int32_t* keys_out, std::int32_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in,
                     std::uint32_t const* values_in, std::int32_t* keys_out, std::uint32_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in,
                     std::int64_t const* values_in, std::int32_t* keys_out, std::int64_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in,
                     std::uint64_t const* values_in, std::int32_t* keys_out, std::uint64_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in, float const* values_in,
                     std::int32_t* keys_out, float* aggregates_out, std::int64_t* num_groups_out,
                     std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int32_t const* keys_in, double const* values_in,
                     std::int32_t* keys_out, double* aggregates_out, std::int64_t* num_groups_out,
                     std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in,
                     std::int32_t const* values_in, std::int64_t* keys_out, std::int32_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in,
                     std::uint32_t const* values_in, std::int64_t* keys_out, std::uint32_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in,
                     std::int64_t const* values_in, std::int64_t* keys_out, std::int64_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in,
                     std::uint64_t const* values_in, std::int64_t* keys_out, std::uint64_t* aggregates_out,
                     std::int64_t* num_groups_out, std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in, float const* values_in,
                     std::int64_t* keys_out, float* aggregates_out, std::int64_t* num_groups_out,
                     std::int64_t n, op o, cudaStream_t s = 0);
cudaError_t group_by(void* temp, std::size_t& temp_bytes, std::int64_t const* keys_in, double const* values_in,
                     std::int64_t* keys_out, double* aggregates_out, std::int64_t* num_groups_out,
                     std::int64_t n, op o, cudaStream_t s = 0);
///@}

}  // namespace tilewise::api
