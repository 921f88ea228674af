#!/usr/bin/env bash
# The attack tests of tests/attack/attack_test.cpp, longer and bigger: every count and duration
# multiplied by SCALE (default 10: 11,000 slowloris connections, 50 s per attack), with the
# latency limits as written (GPUADMIT_ATTACK_STRICT=1: not scaled by the machine's slowdown, as
# the default CTest run does), so run it on an otherwise idle machine. Traffic goes to 127.0.0.1
# only; each attack stops by itself. Numbers: build/attack-results.txt.
#   scripts/attack.sh [SCALE]
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-10}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target gpuadmit test_attack
rm -f build/attack-results.txt
(cd build && GPUADMIT_ATTACK_STRICT=1 GPUADMIT_ATTACK_SCALE="$scale" tests/test_attack "[attack]") ||
  status=$?
cat build/attack-results.txt
exit "${status:-0}"
