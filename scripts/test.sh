#!/usr/bin/env bash
# CI (.ci/run runs this): installs what is missing, builds gpuadmit three ways and runs every
# check, each phase timed (wall and CPU seconds; docs/performance.md, "Test suite"):
#   install      Debian packages (scripts/setup.sh test-packages); the npm packages
#                (scripts/setup-npm.sh) download beside the first build
#   build        build/       g++ -O2 -g1 with -Werror: the binary, the benchmarks and the attack
#                tests (the shipped build; its libraries are what the tests link in build-asan/)
#   test         the tests that need the unsanitized build (CTest label "unsanitized"): the
#                chart's, SARIF's, the parser's memory measurement, and the attack tests one at a time at CI scale (the soak and
#                the scaled runs: scripts/attack.sh); the native harness's Go build runs beside
#   budget       scripts/budget-check.sh on build/: the instruction budgets of bench/budgets.tsv
#                under callgrind, and the size-doubling review (linear in the object)
#   build-asan   build-asan/  clang++ -O1 with AddressSanitizer + UndefinedBehaviorSanitizer (test
#                code -O0), libFuzzer's coverage for the libraries the fuzz targets link: every
#                test and the fuzz targets, one build for both
#   test-asan    every other test (unit, golden, parity, controllers, CLI, ...) under ASan + UBSan
#   fuzz         every fuzz target of build-asan/ (scripts/fuzz.sh), two at a time, for the
#                seconds fuzz/NAME.seconds gives it (where the bugs were found, longer)
#   build-tsan   build-tsan/  g++ -O1 with ThreadSanitizer: the binary and the webhook, certs and
#   test-tsan    lint --jobs tests (the threaded code: the connection pool, reloads, the logger,
#                lint's workers)
#   native       scripts/native-test.sh, when present (the native-policy harness)
# Every build here compiles each target's sources in batches of 16 (unity builds, CMakeLists.txt
# GPUADMIT_UNITY): a third of the CPU time of file-by-file builds. (The shipped build,
# scripts/run.sh, is file by file: g++ inlines less in a batch.)
# Environment: GPUADMIT_SKIP_ASAN=1, GPUADMIT_SKIP_FUZZ=1, GPUADMIT_SKIP_TSAN=1 skip phases (with
# the ASan phases skipped, build/ builds and runs every test instead);
# GPUADMIT_FUZZ_SECONDS=N runs every target N seconds instead.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
summary=()

# cpu_now: sets CPU_NOW to the CPU seconds (user + system) of every process this shell has waited
# for so far. `times` must run in this shell: in a $(...) subshell it would count none of them.
cpu_now() {
  local file
  file=$(mktemp)
  times >"$file"
  CPU_NOW=$(awk 'NR == 2 {
    split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2]
  }' "$file")
  rm -f "$file"
}

# phase NAME COMMAND...: runs COMMAND and records its wall and CPU seconds; a failure ends the run.
phase() {
  local name=$1 wall_start=$SECONDS cpu_start cpu status=0
  shift
  echo "test.sh: == $name" >&2
  cpu_now
  cpu_start=$CPU_NOW
  "$@" || status=$?
  cpu_now
  cpu=$(awk -v a="$cpu_start" -v b="$CPU_NOW" 'BEGIN { printf "%.0f", b - a }')
  summary+=("$(printf '%-12s %7d %7d' "$name" $((SECONDS - wall_start)) "$cpu")")
  echo "test.sh: $name: $((SECONDS - wall_start)) s wall, $cpu s CPU" >&2
  if [ "$status" != 0 ]; then
    echo "test.sh: $name FAILED (exit $status)" >&2
    exit "$status"
  fi
}

print_summary() {
  # A download still running when a phase failed is not wanted any more.
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  echo "test.sh: phase          wall s   CPU s" >&2
  local line
  for line in "${summary[@]}"; do echo "test.sh: $line" >&2; done
  echo "test.sh: total        $((SECONDS - start_all)) s wall" >&2
}
start_all=$SECONDS
trap print_summary EXIT

# build DIR TARGETS -- CMAKE_FLAGS...: configures DIR (Ninja when it is new; an existing folder
# keeps its generator) and builds TARGETS (all when none).
build() {
  local dir=$1 targets=() generator=()
  shift
  while [ "$1" != -- ]; do
    targets+=(--target "$1")
    shift
  done
  shift
  [ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
  cmake "${generator[@]}" -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" "${targets[@]}"
}

phase install bash scripts/setup.sh test-packages
# The npm packages download while build/ compiles; the tests that need them wait for it.
# The downloads (the tests' npm packages; the native harness's Go toolchain and libraries, when
# this checkout has it) run beside the first build: they wait on the network, the build on the
# CPU. The phases that need them wait for them.
background() {
  local name=$1 log=$2
  shift 2
  (
    start=$SECONDS
    status=0
    "$@" || status=$?
    cpu_now
    echo "test.sh: $name (beside the build): $((SECONDS - start)) s wall, $CPU_NOW s CPU"
    exit $status
  ) >"$log" 2>&1 &
}
wait_background() {
  local name=$1 log=$2 pid=$3
  if ! wait "$pid"; then
    cat "$log" >&2
    echo "test.sh: $name FAILED" >&2
    exit 1
  fi
  cat "$log" >&2
}
npm_log=$(mktemp)
background "npm packages" "$npm_log" bash scripts/setup-npm.sh
npm_pid=$!
native_log=$(mktemp)
if [ -f scripts/native-test.sh ]; then
  background "native harness downloads" "$native_log" bash scripts/native-test.sh deps
  native_pid=$!
fi

# -g1: line tables only (backtraces keep file:line); full debug information cost a third of the
# compile time and CI never debugs.
ci_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
# Every build here is a unity build and links with lld (scripts/setup.sh test installs it): the
# sanitizer build's 79 links took 88 s of its time with GNU ld.
every_build=(-DGPUADMIT_UNITY=ON -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
# Every test executable is built once, in build-asan/, and run there under the sanitizers; this
# build makes what runs outside them. Without the ASan phases it builds and runs everything.
plain_targets=(gpuadmit test_attack test_memory benchmarks)
plain_tests=(-L unsanitized -LE long)
if [ "${GPUADMIT_SKIP_ASAN:-0}" = 1 ]; then
  plain_targets=()
  plain_tests=(-LE long)
fi
phase build build build "${plain_targets[@]}" -- "${ci_flags[@]}" "${every_build[@]}" \
  -DGPUADMIT_WERROR=ON

wait_background "npm packages" "$npm_log" "$npm_pid"
# The harness's Go build uses the core the one-at-a-time attack tests leave idle.
if [ -f scripts/native-test.sh ]; then
  wait_background "native harness downloads" "$native_log" "$native_pid"
  native_build_log=$(mktemp)
  background "native harness build" "$native_build_log" bash scripts/native-test.sh build
  native_build_pid=$!
fi
rm -f build/attack-results.txt
# Label "long": the soak and the scaled attack runs, too long or big for CI (scripts/attack.sh
# runs them).
phase test bash -c "cd build && ctest --output-on-failure -j$jobs ${plain_tests[*]}"
# The attack tests' numbers (tests/attack; scripts/attack.sh runs them longer).
if [ -f build/attack-results.txt ]; then cat build/attack-results.txt; fi
phase budget bash scripts/budget-check.sh build

if [ "${GPUADMIT_SKIP_ASAN:-0}" != 1 ]; then
  # One clang build for the sanitizer tests and the fuzz targets (docs/fuzzing.md).
  phase build-asan build build-asan -- -DCMAKE_CXX_COMPILER=clang++ "${every_build[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DGPUADMIT_FUZZ=ON -DGPUADMIT_BENCH=OFF
  phase test-asan bash -c "cd build-asan && ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$jobs -LE long"
  if [ "${GPUADMIT_SKIP_FUZZ:-0}" != 1 ]; then
    phase fuzz env GPUADMIT_FUZZ_BUILD=build-asan GPUADMIT_FUZZ_JOBS=2 \
      bash scripts/fuzz.sh "${GPUADMIT_FUZZ_SECONDS:-}"
  fi
fi

if [ "${GPUADMIT_SKIP_TSAN:-0}" != 1 ]; then
  # No test PCH here: the test targets reuse the first test folder's, and that dependency would
  # build test_engine too.
  phase build-tsan build build-tsan gpuadmit test_webhook test_certs test_lint_jobs -- "${every_build[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DGPUADMIT_TSAN=ON -DGPUADMIT_WERROR=ON -DGPUADMIT_BENCH=OFF -DGPUADMIT_TEST_PCH=OFF
  phase test-tsan bash -c "cd build-tsan && TSAN_OPTIONS='halt_on_error=1 second_deadlock_stack=1 \
    suppressions=$PWD/tests/tsan.supp' ctest --output-on-failure -j$jobs --no-tests=error \
    -R '^(webhook|certs|lint_jobs):' -LE long"
fi

# The native-policy harness (tests/native), when this checkout has it; its downloads and build
# are done (beside the build and the test phase).
if [ -f scripts/native-test.sh ]; then
  wait_background "native harness build" "$native_build_log" "$native_build_pid"
  phase native bash scripts/native-test.sh
fi
