#!/usr/bin/env bash
# Builds and runs the whole test suite. Installs doctest-dev with apt-get (through sudo when not
# root) when doctest is missing and no CMAKE_PREFIX_PATH provides it. GPU suites are skipped
# (exit 77) where no GPU is present.
# Usage: scripts/test.sh [build-dir]   (default: build-tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tests}

have_doctest() {
  [ -f /usr/include/doctest/doctest.h ] && return 0
  local p
  local prefixes=${CMAKE_PREFIX_PATH:-}
  for p in ${prefixes//:/ }; do [ -f "$p/include/doctest/doctest.h" ] && return 0; done
  return 1
}
if ! have_doctest; then
  echo "doctest not found: installing doctest-dev"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq doctest-dev
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DTILEWISE_BUILD_TESTS=ON -DTILEWISE_BUILD_EXAMPLES=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
