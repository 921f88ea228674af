#!/usr/bin/env bash
# The instruction budgets (issue 38): counts each case of bench/budgets.tsv with callgrind and
# fails when one exceeds its budget by more than 2%, or when a review of twice the containers
# and labels costs more than 2.2× the instructions (linear in the object). Prints every figure
# beside its budget. Instruction counts do not depend on the machine's load, so this runs on a
# shared CI machine; the budgets hold for the build scripts/test.sh makes in build/ (g++ -O2,
# unity batches, mimalloc) — another compiler or flags count differently.
#
#   scripts/budget-check.sh [BUILD_DIR]     (default build/; needs gpuadmit, pipeline_bench and
#                                            lint_bench there, and valgrind)
#   GPUADMIT_BUDGET_PRINT=1 ...             print the figures, fail on nothing (to set budgets)
#
# A figure is per call, start-up excluded: the same command with N and 2N calls, the difference
# over N. Lint's is per manifest of the whole process over the 10,000-manifest mix, start-up
# included: the first 250 and 500 manifests of lint_bench's mix give the slope and the
# start-up, extrapolated to 10,000 (start-up / 10,000 + slope).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
budgets=bench/budgets.tsv
command -v valgrind >/dev/null || { echo "budget-check: valgrind is missing (scripts/setup.sh test)" >&2; exit 2; }
for binary in gpuadmit bench/pipeline_bench bench/lint_bench; do
  [ -x "$build/$binary" ] || { echo "budget-check: $build/$binary is not built" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bench/pipeline_bench" --write-large-policy "$tmp/large.yaml"

# ir COMMAND...: the instructions callgrind counts for COMMAND (its output discarded). Each call
# has files of its own: figures are counted two at a time (see `figure` below).
ir() {
  local out
  out=$(mktemp "$tmp/cg.XXXXXX")
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$out.err" ||
    { cat "$out.err" >&2; exit 2; }
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
  rm -f "$out" "$out.err"
}

# per_call N ARGS...: pipeline_bench's instructions per call of ARGS, from N and 2N calls.
per_call() {
  local n=$1 one two
  shift
  one=$(ir "$build/bench/pipeline_bench" "$@" --iterations "$n" --runs 1)
  two=$(ir "$build/bench/pipeline_bench" "$@" --iterations $((2 * n)) --runs 1)
  echo $(((two - one) / n))
}

# lint_per_manifest [POLICY_ARGS...]: see the header.
lint_per_manifest() {
  local one two slope
  one=$(ir "$build/gpuadmit" lint --jobs 1 --output json "$@" "${half[@]}")
  two=$(ir "$build/gpuadmit" lint --jobs 1 --output json "$@" "$tmp/mix")
  slope=$(((two - one) / 250))
  echo $(((one - 250 * slope) / 10000 + slope))
}

"$build/bench/lint_bench" --manifests 500 --keep "$tmp/mix" >/dev/null
# The first 250 manifests of the mix: its first 25 files of 10 documents (m0.yaml … m24.yaml).
half=()
for f in $(seq 0 24); do half+=("$tmp/mix/app-0/m$f.yaml"); done

# count NAME FUNCTION ARGS...: FUNCTION's figure into $tmp/figure.NAME, in the background, at most
# two at once (callgrind is single-threaded; CI has two cores). A failed count fails the check.
mkdir "$tmp/figures"
count() {
  local name=$1
  shift
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || exit 2; done
  ("$@" >"$tmp/figures/$name") &
}
large=(--policy "$tmp/large.yaml")
count review-400-containers per_call 1 --only review-wide --containers 400
count lint-per-manifest-2000-tenants lint_per_manifest "${large[@]}"
count lint-per-manifest lint_per_manifest
count review-200-containers per_call 1 --only review-wide --containers 200
count evaluate-gpu-pod per_call 100 --only evaluate
count evaluate-cpu-pod per_call 100 --only evaluate-cpu
count evaluate-gpu-pod-2000-tenants per_call 100 --only evaluate "${large[@]}"
count evaluate-cpu-pod-2000-tenants per_call 100 --only evaluate-cpu "${large[@]}"
count review per_call 100 --only review
count review-managed-fields per_call 100 --only review-managed
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || exit 2; done
declare -A figure
for f in "$tmp"/figures/*; do
  value=$(cat "$f")
  [[ "$value" =~ ^[0-9]+$ ]] || { echo "budget-check: no count for ${f##*/}" >&2; exit 2; }
  figure[${f##*/}]=$value
done

failed=0
printf '%-34s %12s %12s %8s\n' case instructions budget ratio
while IFS=$'\t' read -r name budget _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  value=${figure[$name]:?"budget-check: no figure for $name"}
  [ "$budget" = "-" ] && budget=$value  # a figure reported, not budgeted
  ratio=$(awk -v v="$value" -v b="$budget" 'BEGIN { printf "%.3f", v / b }')
  verdict=ok
  if awk -v r="$ratio" 'BEGIN { exit !(r > 1.02) }'; then verdict=OVER; failed=1; fi
  printf '%-34s %12d %12d %8s %s\n' "$name" "$value" "$budget" "$ratio" "$verdict"
done <"$budgets"

# Linear in the object: twice the containers and labels, at most 2.2× the instructions.
growth=$(awk -v a="${figure[review-200-containers]}" -v b="${figure[review-400-containers]}" \
  'BEGIN { printf "%.3f", b / a }')
verdict=ok
if awk -v g="$growth" 'BEGIN { exit !(g > 2.2) }'; then verdict=OVER; failed=1; fi
printf '%-34s %12s %12s %8s %s\n' "review, 2x containers and labels" "${growth}x" "2.2x" "" "$verdict"

if [ "${GPUADMIT_BUDGET_PRINT:-0}" = 1 ]; then exit 0; fi
if [ "$failed" = 1 ]; then
  echo "budget-check: over budget (a budget is lowered when a change wins, raised only with a" \
    "sentence in the commit saying what bought the instructions)" >&2
  exit 1
fi
