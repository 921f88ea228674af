#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang++, ASan + UBSan) in build-fuzz/ and runs each for
# SECONDS (default 60), seeded from bench/, tests/cases and ../shared/corpus; a crash stops the
# script with the input in build-fuzz/fuzz/. For hours: scripts/fuzz.sh 14400.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DGPUADMIT_FUZZ=ON -DGPUADMIT_TESTS=OFF -DGPUADMIT_BENCH=OFF >/dev/null
targets=$(sed -n 's/^gpuadmit_fuzz_target(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
cmake --build build-fuzz -j"$(nproc)" --target $(for t in $targets; do echo "${t}_fuzz"; done)
seeds=build-fuzz/fuzz/seeds
mkdir -p "$seeds"/{admission_review,request_framing,json_patch,quantity}
cp bench/webhook-review.json "$seeds/admission_review/"
find ../shared/corpus -name '*AdmissionReview*.json' -exec cp {} "$seeds/admission_review/" \; 2>/dev/null || true
printf 'POST /mutate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}' \
  >"$seeds/request_framing/review"
printf 'POST /m HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n' >"$seeds/request_framing/expect"
printf '{"a":[1,2,{"b":null}],"c":"x"}\0{"a":[1,{"b":true}],"d":{}}' >"$seeds/json_patch/pair"
for q in 1 1500m 3Ki 64Gi 1e3 0.5 100M; do printf '%s' "$q" >"$seeds/quantity/$q"; done
for t in $targets; do
  mkdir -p "build-fuzz/fuzz/corpus/$t"
  regressions="tests/fuzz_regressions/$t"
  [ -d "$regressions" ] || regressions=""
  echo "fuzz.sh: $t for ${seconds}s"
  (cd build-fuzz/fuzz && "./${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "corpus/$t" "seeds/$t" ${regressions:+"../../$regressions"}) 2>&1 | tail -12
done
