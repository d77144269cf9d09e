#!/usr/bin/env bash
# Compile time of one user translation unit that calls the six precompiled device-wide algorithms
# (reduce, inclusive_scan, exclusive_scan, copy_flagged, histogram_even, group_by) on three types
# (int32, float, double; raw pointers, cuda::std::plus<>), compiled with the library's precompiled
# instantiations (TILEWISE_PRECOMPILED=1: the extern templates apply, as for a target that links
# tilewise::tilewise) and without them (headers only: every kernel compiled here). Also the same
# calls through <tilewise/api.hpp> compiled by the C++ compiler. Host only (no GPU).
# Usage: scripts/measure_compile_time.sh [--repeat N] [--lib path/to/libtilewise.a]
#   --repeat N  compile each variant N times and keep the fastest (default 3)
#   --lib A     also link the precompiled object with A, to show the symbols resolve
# Prints one line per variant, the floor (the includes alone) and "ratio: X.XXx" (without / with).
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=3
lib=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift ;;
    --lib) lib=$2; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cxx=${CXX:-g++}
cuda_inc=$(dirname "$(dirname "$nvcc")")/include
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# copy_if takes a user predicate, so its flagged form stands for it. Inputs are `T const*`, as in
# a function that only reads them.
calls=""
api_calls=""
params=""
for t in std::int32_t float double; do
  v=${t//:/_}
  params+=", ${t} const* in_$v, ${t}* out_$v"
  for ns in device api; do
    if [ $ns = device ]; then p="tilewise::device::"; o="plus"; else p="api::"; o="api::op::plus"; fi
    line="  e |= ${p}reduce(temp, bytes, in_$v, out_$v, n, $o, ${t}(0), s);
  e |= ${p}inclusive_scan(temp, bytes, in_$v, out_$v, n, $o, s);
  e |= ${p}exclusive_scan(temp, bytes, in_$v, out_$v, n, $o, ${t}(0), s);
  e |= ${p}copy_flagged(temp, bytes, in_$v, flags, out_$v, count, n, s);
  e |= ${p}histogram_even(temp, bytes, in_$v, hist, 100, ${t}(0), ${t}(1000), n, s);
  e |= ${p}group_by(temp, bytes, keys, in_$v, keys_out, out_$v, count, n, $o, s);
"
    if [ $ns = device ]; then calls+="$line"; else api_calls+="$line"; fi
  done
done
signature="int user(void* temp, std::size_t& bytes, std::int64_t n, cudaStream_t s, std::uint8_t const* flags,
         std::int64_t* count, std::int32_t* hist, std::int32_t const* keys, std::int32_t* keys_out${params})"
{
  echo "#include <cstdint>"
  echo "#include <cuda/std/functional>"
  for a in copy_if group_by histogram_even reduce scan; do echo "#include <tilewise/device/$a.cuh>"; done
  echo "$signature {"
  echo "  cuda::std::plus<> plus;"
  echo "  int e = 0;"
  echo -n "$calls"
  echo "  return e;"
  echo "}"
} >"$work/user.cu"
# The floor of the precompiled variant: the same includes and no call (a TU cannot compile faster
# than it parses the headers it includes).
sed -n '/^#include/p' "$work/user.cu" >"$work/includes.cu"
echo "int user() { return 0; }" >>"$work/includes.cu"
{
  echo "#include <tilewise/api.hpp>"
  echo "$signature {"
  echo "  namespace api = tilewise::api;"
  echo "  int e = 0;"
  echo -n "$api_calls"
  echo "  return e;"
  echo "}"
} >"$work/user_api.cpp"

# best_of CMD...: the fastest of $repeat runs, in seconds.
best_of() {
  local best=""
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { d = b - a; if (m == "" || d < m) m = d; printf "%.2f", m }')
  done
  echo "$best"
}

flags=(-std=c++20 -arch=sm_90 -O3 -Iinclude -DCUB_DISABLE_CDP -c "$work/user.cu")
with=$(best_of "$nvcc" "${flags[@]}" -DTILEWISE_PRECOMPILED=1 -o "$work/with.o")
without=$(best_of "$nvcc" "${flags[@]}" -o "$work/without.o")
floor=$(best_of "$nvcc" "${flags[@]/$work\/user.cu/$work/includes.cu}" -o "$work/includes.o")
api=$(best_of "$cxx" -std=c++20 -O3 -Iinclude -I"$cuda_inc" -c "$work/user_api.cpp" -o "$work/api.o")
kernels_with=$(nm -C "$work/with.o" | grep -c "__device_stub__" || true)
kernels_without=$(nm -C "$work/without.o" | grep -c "__device_stub__" || true)

echo "user TU: 6 algorithms x int32, float, double (best of $repeat; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo "  with the precompiled instantiations (TILEWISE_PRECOMPILED=1): ${with} s, kernel stubs: ${kernels_with}"
echo "  without (headers only):                                     ${without} s, kernel stubs: ${kernels_without}"
echo "  through <tilewise/api.hpp>, $cxx:                            ${api} s"
echo "  floor: the same includes, no call:                          ${floor} s"
awk -v a="$without" -v b="$with" -v f="$floor" \
  'BEGIN { printf "ratio: %.2fx (without / with); the floor allows at most %.2fx (without / floor)\n", a / b, a / f }'
if [ -n "$lib" ]; then
  printf 'int main() { return 0; }\n' >"$work/main.cpp"
  "$cxx" -c "$work/main.cpp" -o "$work/main.o"
  "$nvcc" -arch=sm_90 "$work/main.o" "$work/with.o" "$lib" -o "$work/linked"
  echo "linked the precompiled object with $lib: ok"
fi
