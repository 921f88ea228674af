#!/usr/bin/env bash
# Builds every libFuzzer target of fuzz/ with clang++ in build-fuzz/ and runs each for SECONDS,
# nproc at a time; fails if any finds a crash, a hang (-timeout) or a leak, or passes
# -rss_limit_mb. Installs nothing: scripts/setup.sh installs clang and libFuzzer.
#   scripts/fuzz.sh [SECONDS]    without SECONDS: CI's time per target (below)
#   GPUADMIT_FUZZ_CORPUS=DIR     keep each target's corpus in DIR/<target> across runs
#   GPUADMIT_FUZZ_JOBS=N         targets run at once (default: nproc)
#   GPUADMIT_FUZZ_TARGETS="a b"  only these targets
#   GPUADMIT_FUZZ_BUILD=DIR      use DIR, a build folder configured with -DGPUADMIT_FUZZ=ON (CI:
#                                build-asan/, whose libraries the sanitizer tests use too)
# A failing input is written to <build>/artifacts/<target>/; keep it as a regression in
# tests/fuzz_regressions/<target>/ (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-}
jobs=${GPUADMIT_FUZZ_JOBS:-$(nproc)}
build=${GPUADMIT_FUZZ_BUILD:-build-fuzz}
# CI's seconds per target (scripts/test.sh): longest for the readers of YAML, where the fuzzers
# found bugs (docs/fuzzing.md, "Results"); the webhook's byte-level inputs next; the JSON Patch
# builder and quantities, which have found nothing, least.
declare -A ci_seconds=([yaml_reader]=75 [policy_loader]=75 [admission_review]=40
  [request_framing]=45 [json_patch]=20 [quantity]=20 [clean_path]=10 [cuda]=10)
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found; run scripts/setup.sh" >&2
  exit 2
fi

start=$SECONDS
if [ -z "${GPUADMIT_FUZZ_BUILD:-}" ]; then
  cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DGPUADMIT_FUZZ=ON \
    -DGPUADMIT_TESTS=OFF -DGPUADMIT_BENCH=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target fuzz
echo "fuzz.sh: $build/ configured and built in $((SECONDS - start)) s"

targets=()
if [ -n "${GPUADMIT_FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$GPUADMIT_FUZZ_TARGETS"
else
  for source in fuzz/*_fuzz.cc; do
    name=$(basename "$source" _fuzz.cc)
    targets+=("$name")
  done
fi
# Seconds per target; the longest first, so that targets of equal time run side by side.
target_seconds() { echo "${seconds:-${ci_seconds[$1]:-30}}"; }
mapfile -t targets < <(for name in "${targets[@]}"; do echo "$(target_seconds "$name") $name"; done |
  sort -k1,1nr -k2 | cut -d' ' -f2)

work=$(mktemp -d /tmp/gpuadmit-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT

# The seed corpus of a target: the files its fuzz/NAME.seeds globs match, and its regressions.
seed() {
  local name=$1 dir=$2 n=0 pattern file
  mkdir -p "$dir"
  shopt -s globstar nullglob
  local patterns=()
  if [ -f "fuzz/$name.seeds" ]; then
    while IFS= read -r pattern; do
      [[ -z "$pattern" || "$pattern" == \#* ]] && continue
      patterns+=("$pattern")
    done <"fuzz/$name.seeds"
  fi
  patterns+=("tests/fuzz_regressions/$name/*")
  for pattern in "${patterns[@]}"; do
    for file in $pattern; do
      [ -f "$file" ] || continue
      n=$((n + 1))
      cp "$file" "$dir/$n-$(basename "$file")"
    done
  done
  shopt -u globstar nullglob
  echo "$n"
}

run() {
  local name=$1 binary="$root/$build/fuzz/${1}_fuzz" limit
  limit=$(target_seconds "$1")
  local seeds="$work/$name/seeds" corpus="$work/$name/corpus"
  local artifacts="$root/$build/artifacts/$name" log="$work/$name.log"
  if [ -n "${GPUADMIT_FUZZ_CORPUS:-}" ]; then corpus="$GPUADMIT_FUZZ_CORPUS/$name"; fi
  mkdir -p "$corpus" "$artifacts"
  local count
  count=$(seed "$name" "$seeds")
  local args=(-max_total_time="$limit" -timeout=10 -rss_limit_mb=2048
    -artifact_prefix="$artifacts/" -print_final_stats=1)
  [ -f "fuzz/$name.dict" ] && args+=(-dict="fuzz/$name.dict")
  echo "fuzz.sh: $name: $count seeds, $limit s"
  if "$binary" "${args[@]}" "$corpus" "$seeds" >"$log" 2>&1; then
    echo "fuzz.sh: $name: ok ($(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" |
      grep -o '[0-9]*$') runs, corpus $(ls "$corpus" | wc -l) inputs)"
    touch "$work/$name.ok"
  else
    echo "fuzz.sh: $name: FAILED; the input is in $artifacts/, the log's end:" >&2
    tail -n 40 "$log" >&2
  fi
}

running=0
for name in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/${name}_fuzz" ]; then
    echo "fuzz.sh: no $build/fuzz/${name}_fuzz (is it declared in fuzz/CMakeLists.txt?)" >&2
    exit 2
  fi
  run "$name" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=0
for name in "${targets[@]}"; do
  [ -f "$work/$name.ok" ] || failed=1
done
echo "fuzz.sh: ${#targets[@]} targets, $((SECONDS - start)) s in all"
exit $failed
