#!/usr/bin/env bash
# The full check on a machine with a CUDA GPU:
#   configure (Ninja) -> build everything with all cores -> the whole CTest suite ->
#   every GPU test executable under compute-sanitizer (memcheck, racecheck, synccheck, initcheck) ->
#   optionally the benchmarks in quick mode.
# Usage: scripts/gpu-check.sh LOG_DIR [--bench] [--no-sanitizers] [--no-ctest] [--sanitizers-part K/N]
#                              [--time-limit SECS] [--suites REGEX] [--build DIR] [--no-build]
#   --no-sanitizers skips the compute-sanitizer runs (one per core at a time): for a benchmark run;
#   resolving an issue needs the full run. --no-ctest skips the CTest suite (for a run split in
#   parts: build and ctest, then --no-ctest for the sanitizers and benchmarks).
#   --sanitizers-part K/N runs the K-th of N about equal shares of the sanitizer processes (for a
#   check split over N device calls; the shares together are every run). --time-limit SECS ends the
#   sanitizer pass SECS seconds after the script started: a process that would start later is not
#   started and one still running then is stopped, both counted as failures, so that a check run
#   under a call's time limit still reports what it did. --suites REGEX puts only the GPU test
#   executables whose name matches (grep -E) under the sanitizers: a targeted re-check, never the
#   full one. --no-build takes the configured build directory as it is (the targets a targeted
#   re-check needs, built before): no configure, no build.
# doctest: found where it is installed, through CMAKE_PREFIX_PATH, or in ./.deps when present (a copy
# of doctest for a GPU machine that cannot install packages: .deps/include/doctest and
# .deps/lib/cmake/doctest, git-ignored).
# Ends with one line "N passed, N failed" counting CTest tests and sanitizer runs.
set -uo pipefail
cd "$(dirname "$0")/.."

logs=${1:?usage: scripts/gpu-check.sh LOG_DIR [--bench] [--no-sanitizers] [--no-ctest] [--sanitizers-part K/N] [--time-limit SECS] [--suites REGEX] [--build DIR]}
shift
bench=0
sanitize=1
ctest_run=1
part=1/1
limit=0
suites=.
build=build-gpu
build_run=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --no-sanitizers) sanitize=0 ;;
    --no-ctest) ctest_run=0 ;;
    --sanitizers-part) part=$2; shift ;;
    --time-limit) limit=$2; shift ;;
    --suites) suites=$2; shift ;;
    --build) build=$2; shift ;;
    --no-build) build_run=0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)

prefix=${CMAKE_PREFIX_PATH:-}
[ -d .deps ] && prefix="$PWD/.deps${prefix:+:$prefix}"
jobs=$(nproc)
passed=0
failed=0
failures=()

record() {  # record NAME STATUS
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}

# What the run needs: the examples are CTest tests, the benchmarks only run with --bench.
examples=$([ "$ctest_run" -eq 1 ] && echo ON || echo OFF)
benches=$([ "$bench" -eq 1 ] && echo ON || echo OFF)
if [ "$build_run" -eq 0 ]; then
  echo "== configure + build: skipped (--no-build; $build as it is)"
else
  echo "== configure + build ($jobs jobs)"
  if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
        -DTILEWISE_BUILD_TESTS=ON -DTILEWISE_BUILD_EXAMPLES="$examples" -DTILEWISE_BUILD_BENCH="$benches" \
        >"$logs/configure.log" 2>&1; then
    tail -n 40 "$logs/configure.log"
    echo "configure failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
  # Whether tilewise::dist (and so test_dist, dist_bench, dist_histogram) is part of this check.
  grep -E "Found NCCL|Could NOT find NCCL" "$logs/configure.log" | sed 's/^-- /configure: /'
  # Everything that builds is built (ninja -k 0) and checked: a target that fails to build counts
  # as one failure, and its tests fail below as not run.
  if ! cmake --build "$build" -j "$jobs" -- -k 0 >"$logs/build.log" 2>&1; then
    grep -E "^FAILED:" "$logs/build.log" | sed 's/^/build: /'
    grep -E -m 20 "error" "$logs/build.log"
    record build 1
  fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$logs/gpu.txt" 2>&1 || true

if [ "$ctest_run" -eq 1 ]; then
  echo "== ctest (at ${SECONDS} s)"
  # A hung test (a kernel that never finishes) fails after 180 s instead of eating the device time:
  # the slowest test takes about 25 s on an H200 with the others running beside it.
  ctest --test-dir "$build" -j "$jobs" --timeout 180 --output-on-failure --output-junit "$logs/ctest.xml" \
    >"$logs/ctest.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ Test" "$logs/ctest.log"
  while read -r line; do
    name=$(sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .*/\1/' <<<"$line")
    if grep -q "Passed" <<<"$line"; then record "$name" 0; else record "ctest:$name" 1; fi
  done < <(grep -E "^ *[0-9]+/[0-9]+ Test" "$logs/ctest.log")
else
  echo "== ctest: skipped (--no-ctest)"
fi

if [ "$sanitize" -eq 0 ]; then
  echo "== compute-sanitizer: skipped (--no-sanitizers)"
elif ! command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer"
  echo "compute-sanitizer not found"
  record compute-sanitizer 1
else
  echo "== compute-sanitizer (at ${SECONDS} s)"
  # Fewer random seeds and smaller inputs under the sanitizers: every case still runs, on one seed,
  # the device-wide ones on one or two sizes per size class up to 2^16 + 1 elements (still several
  # tiles and blocks in every algorithm; the plain CTest run above covers every size, many seeds,
  # 2^28 and > 2^31).
  export TILEWISE_TEST_SEEDS=1 TILEWISE_TEST_MAX_LOG2=16
  # The runs are mostly host-side work: TILEWISE_SANITIZER_JOBS of them (default: one per core) go at once,
  # each a process of its own (the GPU time-slices between them); results print in a fixed order.
  # racecheck watches every shared-memory access and runs the device-wide suites 6-10x slower than
  # memcheck: its inputs stop at 2^13 + 1 (a block's hazards need only a few tiles), CUB's kernels
  # (the reference results) are not watched where the tool takes the filter (a group_by case: 103 s
  # watched, 36 s not), and the device-wide suites and test_dist run one test case per process.
  # The full sanitizer pass takes well over 10 minutes on an H200: --sanitizers-part splits it over
  # several calls, --time-limit keeps each inside its call.
  # Only the test process is checked: test_dist's child processes (one rank each, over NCCL) run
  # natively.
  proc_name() { echo "$(basename "$1").$2${3:+.$3}"; }  # proc_name EXE TOOL [CASE]: its logs' name
  sanitize_one() {  # sanitize_one SECS EXE TOOL [CASE]: writes NAME.log, NAME.rc and NAME.secs
    local secs_max=$1
    shift
    local name extra start max_log2
    name=$(proc_name "$@")
    extra=()
    [ "$2" = memcheck ] && extra=(--leak-check full)
    # NCCL's communicator setup asks cudaFuncGetAttributes about kernels built for other GPUs and
    # handles the cudaErrorNoKernelImageForDevice itself; test_dist checks every call of its own.
    [ "$2:$(basename "$1")" = memcheck:test_dist ] && extra+=(--report-api-errors no)
    [ "$2" = racecheck ] && extra=("${racecheck_extra[@]}")
    max_log2=$([ "$2" = racecheck ] && echo 13 || echo "$TILEWISE_TEST_MAX_LOG2")
    start=$(date +%s)
    TILEWISE_TEST_MAX_LOG2=$max_log2 timeout -k 10 "$secs_max" compute-sanitizer --tool "$2" "${extra[@]}" \
      --target-processes application-only --error-exitcode 99 "$1" ${3:+--first=$3 --last=$3} \
      >"$logs/$name.log" 2>&1
    echo $? >"$logs/$name.rc"
    echo $(( $(date +%s) - start )) >"$logs/$name.secs"
  }
  racecheck_extra=(--kernel-name-exclude kns=CUB_)  # CUB's kernels: namespace cub::CUB_<version>_SM_<arch>
  # a doctest suite that is built (--list-test-cases)
  probe_exe=$(grep -v _trap "$build/gpu_tests.txt" | while read -r e; do [ -x "$e" ] && echo "$e" && break; done)
  if ! compute-sanitizer --tool racecheck "${racecheck_extra[@]}" --error-exitcode 99 "$probe_exe" \
      --list-test-cases >/dev/null 2>&1; then
    echo "warning: compute-sanitizer refuses ${racecheck_extra[*]}: racecheck watches CUB's kernels too"
    racecheck_extra=()
  fi
  par=${TILEWISE_SANITIZER_JOBS:-$jobs}
  part_k=${part%/*}
  part_n=${part#*/}
  # The heavy suites: the device-wide ones and test_dist (minutes each under racecheck and initcheck).
  heavy_suite() {  # heavy_suite EXE
    case "$(basename "$1")" in test_device_* | test_thrust* | test_api_gpu | test_dist) return 0 ;; esac
    return 1
  }
  # A run (one suite under one tool) is one process, or one process per test case (doctest
  # --first/--last) for racecheck on a heavy suite.
  cases_of() {  # cases_of EXE TOOL: the case numbers, or one empty line
    local n=""
    if [ "$2" = racecheck ] && heavy_suite "$1"; then
      n=$("$1" --count 2>/dev/null | sed -nE 's/.*passing the current filters: ([0-9]+).*/\1/p')
    fi
    if [ "${n:-0}" -gt 0 ]; then seq 1 "$n"; else echo; fi  # else (or without a count) the suite in one
  }
  # The heavy suites' processes go first, so that the short runs fill the gaps at the end.
  # Processes, not runs, are dealt round-robin to the parts, so that the parts take about equally
  # long.
  all_procs=()
  declare -A run_procs=()
  for heavy in 1 0; do
    for tool in racecheck initcheck memcheck synccheck; do
      while read -r exe; do
        [ -n "$exe" ] || continue
        grep -qE "$suites" <<<"$(basename "$exe")" || continue
        h=0
        heavy_suite "$exe" && h=1
        [ "$h" -eq "$heavy" ] || continue
        while read -r c; do
          all_procs+=("$exe $tool $c")
          run_procs["$exe $tool"]=$(( ${run_procs["$exe $tool"]:-0} + 1 ))
        done < <(cases_of "$exe" "$tool")
      done <"$build/gpu_tests.txt"
    done
  done
  procs=()
  runs=()
  declare -A in_part=()
  for i in "${!all_procs[@]}"; do
    [ $((i % part_n)) -eq $((part_k - 1)) ] || continue
    procs+=("${all_procs[$i]}")
    read -r exe tool _ <<<"${all_procs[$i]}"
    [ -n "${in_part["$exe $tool"]:-}" ] || runs+=("$exe $tool")
    in_part["$exe $tool"]=1
  done
  [ "$suites" = . ] || echo "only the suites matching $suites"
  echo "part $part: ${#procs[@]} of ${#all_procs[@]} processes (${#runs[@]} of ${#run_procs[@]} runs), $par at a time"
  # A process gets at most 400 s (a hung kernel fails instead of eating the device time), and no
  # more than what --time-limit leaves.
  for proc in "${procs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n; done
    secs_max=400
    if [ "$limit" -gt 0 ] && [ $((limit - SECONDS)) -lt "$secs_max" ]; then secs_max=$((limit - SECONDS)); fi
    if [ "$secs_max" -lt 10 ]; then
      name=$(proc_name $proc)
      echo "not started: --time-limit $limit reached" >"$logs/$name.log"
      echo 125 >"$logs/$name.rc"
      echo 0 >"$logs/$name.secs"
      continue
    fi
    sanitize_one "$secs_max" $proc &
  done
  wait
  # What a process's log says of its outcome: the tool's counts and internal errors, doctest's
  # counts and a crashed case, or why it did not start.
  outcome() { grep -E "Internal Sanitizer Error|ERROR SUMMARY|RACECHECK SUMMARY|test cases:|CRASHED|not started" "$1" | tr '\n' ' '; }
  # One line and one count per run: its worst exit status and its slowest process.
  for run in "${runs[@]}"; do
    read -r exe tool <<<"$run"
    name=$(proc_name "$exe" "$tool")
    rc=0 secs=0 n=0 summary=""
    for f in "$logs/$name".rc "$logs/$name".*.rc; do
      [ -f "$f" ] || continue
      base=${f%.rc}
      r=$(cat "$f")
      s=$(cat "$base.secs" 2>/dev/null || echo 0)
      [ "$r" -ne 0 ] && rc=$r && summary+="[${base##*/}] $(outcome "$base.log") "
      [ "$s" -gt "$secs" ] && secs=$s
      n=$((n + 1))
      rm -f "$f" "$base.secs"
    done
    [ "$n" -eq 0 ] && rc=1 && summary="no process ran"
    if [ -z "$summary" ]; then
      if [ "${run_procs["$exe $tool"]}" -gt 1 ]; then
        summary="$n of ${run_procs["$exe $tool"]} processes (one test case each): all clean"
      else
        summary=$(outcome "$base.log")
      fi
    fi
    printf '%-44s rc=%-3s %4ss  %s\n' "$name" "$rc" "$secs" "$summary"
    record "$name" "$rc"
  done
  unset TILEWISE_TEST_SEEDS TILEWISE_TEST_MAX_LOG2
fi

if [ "$bench" -eq 1 ]; then
  echo "== benchmarks (quick, at ${SECONDS} s)"
  for b in "$build"/bench/*_bench; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    "$b" --quick --csv "$logs/$name.csv" >"$logs/$name.md" 2>&1
    rc=$?
    cat "$logs/$name.md"
    record "$name" "$rc"
  done
fi

[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed (${SECONDS} s)"
[ "$failed" -eq 0 ]
