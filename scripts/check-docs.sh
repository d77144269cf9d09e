#!/usr/bin/env bash
# Builds the API reference from the public headers (docs/Doxyfile.in, as the CMake `docs` target
# does) into a temporary directory with warnings as errors: prints every warning and exits 1 if
# there is any. Installs doxygen with apt-get when it is missing. No CMake configure needed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if ! command -v doxygen >/dev/null 2>&1; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  echo "check-docs: installing doxygen"
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq doxygen >/dev/null
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
version="$(sed -n 's/^project(tilewise VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
sed -e "s|@TILEWISE_DOCS_INCLUDE_DIR@|$root/include|g" \
    -e "s|@TILEWISE_DOCS_OUTPUT_DIR@|$out|g" \
    -e "s|@PROJECT_VERSION@|${version:-0}|g" \
    "$root/docs/Doxyfile.in" >"$out/Doxyfile"
if grep -n '@[A-Z_]*@' "$out/Doxyfile"; then
  echo "check-docs: placeholders of docs/Doxyfile.in left unfilled (above)" >&2
  exit 2
fi

rc=0
(cd "$out" && doxygen Doxyfile) >"$out/doxygen.log" 2>"$out/warnings.log" || rc=$?
sed -i "s|$root/||g" "$out/warnings.log"
if [ -s "$out/warnings.log" ] || [ "$rc" -ne 0 ]; then
  cat "$out/warnings.log" >&2
  n="$(grep -c -E '(warning|error):' "$out/warnings.log" || true)"
  echo "check-docs: FAILED ($n warnings, doxygen exit status $rc)" >&2
  exit 1
fi
echo "check-docs: the API reference builds without warnings ($(doxygen --version))"
