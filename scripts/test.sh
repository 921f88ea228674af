#!/usr/bin/env bash
# Installs what is missing, builds gpuadmit four ways and runs every test under CTest:
#   1. build/       RelWithDebInfo with -Werror: the binary that ships;
#   2. build-asan/  Debug with AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. build-tsan/  ThreadSanitizer, -O1: the binary and the webhook and certs tests (the
#      threaded code: the connection pool, reloads, the logger), not the single-threaded rest.
#   4. build-fuzz/  clang++ with libFuzzer: every fuzz target for 60 s (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

start=$SECONDS
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUADMIT_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "test.sh: build/ configured and built in $((SECONDS - start)) s"
rm -f build/attack-results.txt
(cd build && ctest --output-on-failure -j"$jobs")
# The attack tests' numbers (tests/attack; scripts/attack.sh runs them longer).
if [ -f build/attack-results.txt ]; then cat build/attack-results.txt; fi

if [ "${GPUADMIT_SKIP_ASAN:-0}" != 1 ]; then
  start=$SECONDS
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUADMIT_SANITIZE=ON -DGPUADMIT_WERROR=ON -DGPUADMIT_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  echo "test.sh: build-asan/ configured and built in $((SECONDS - start)) s"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs")
fi

if [ "${GPUADMIT_SKIP_TSAN:-0}" != 1 ]; then
  start=$SECONDS
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DGPUADMIT_TSAN=ON -DGPUADMIT_WERROR=ON -DGPUADMIT_BENCH=OFF >/dev/null
  cmake --build build-tsan -j"$jobs" --target gpuadmit test_webhook test_certs
  echo "test.sh: build-tsan/ configured and built in $((SECONDS - start)) s"
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan.supp" \
    ctest --output-on-failure -j"$jobs" --no-tests=error -R '^(webhook|certs):')
fi

if [ "${GPUADMIT_SKIP_FUZZ:-0}" != 1 ]; then
  bash scripts/fuzz.sh 60
fi
