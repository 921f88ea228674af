#!/usr/bin/env bash
# The native-policy phase of CI (tests/native/README.md): Kubernetes 1.36's own admission
# plugins, built from Debian sid's Go source packages, run gpuadmit's webhook and its native
# admission policies.
#
#   scripts/native-test.sh               the steps below, the CI run: the differential over
#                                        tests/cases/policy.yaml's golden cases and 10,000 generated
#                                        objects, and golden case 190's policy (strip)
#   scripts/native-test.sh --full        the same over every golden case's policy (26 more policies,
#                                        each loaded into the plugins; not CI: more than 19 min on 2
#                                        loaded cores)
#   scripts/native-test.sh deps|build|unit|webhook|native|bench|tenants|tenants-diff
#
# Steps (each prints its time):
#   deps     Go and the libraries from Debian sid into .cache/native (scripts/native-deps.py;
#            downloads are cached, a failed one fails the phase)
#   build    go vet and go build of tests/native, offline (GOPROXY=off, GOCACHE in the cache)
#   unit     the harness's own tests (go test)
#   webhook  the golden cases through `gpuadmit serve` and the webhook plugins
#   native   `gpuadmit render --native full|fallback`: loaded, every CEL expression compiled and
#            costed, then the differential test (golden cases and generated objects); before
#            the renderer existed: the hand-written pair in tests/native/testdata. Then
#            `render --native-static` (manifest-based admission) loaded from its files by the
#            plugins' static sources, admitting as the API objects do (the static command)
#   bench    per-admission cost, native policies beside the webhook (not part of the default run)
#   tenants  the same at 1, 20, 200 and 2,000 tenants (scripts/native-tenants.py), with the size of
#            the rendered admission objects and the compile time of every expression (not CI;
#            docs/performance.md, "Native policies"); GPUADMIT_NATIVE_TENANTS overrides the
#            counts. Needs a harness that keys namespaced objects by namespace (the build step
#            of this tree): each tenant namespace has a ResourceQuota of the same name
#   tenants-diff  the differential under a 200-tenant policy (scripts/native-tenants.py 200):
#            generated objects in its tenants' namespaces, every tenant-attack case (not CI: about
#            4 minutes on 2 cores); GPUADMIT_NATIVE_TENANTS_GENERATE objects (2000)
#
# Needs the gpuadmit binary: $GPUADMIT, else build/gpuadmit (cmake --build build --target gpuadmit).
# Environment: GPUADMIT_NATIVE_CACHE (default .cache/native), GPUADMIT_NATIVE_GENERATE (10000).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${GPUADMIT_NATIVE_CACHE:-$root/.cache/native}
gpuadmit=${GPUADMIT:-$root/build/gpuadmit}
generate=${GPUADMIT_NATIVE_GENERATE:-10000}
# tests/cases/policy.yaml, and one policy with nonGpuOnGpuPool: strip (its mutation is off in the
# other; a compile error in it went unseen while only the first ran).
only=(--only tests/cases/policy.yaml,tests/cases/190-strip-keeps-the-users-own-affinity-expressions/policy.yaml)
harness=$cache/bin/native-harness
steps=(deps build unit webhook native)
case "${1:-}" in
  "") ;;
  --quick) ;; # the default since the CI run fits its budget only so; kept for old callers
  --full) only=() ;;
  deps | build | unit | webhook | native | bench | tenants | tenants-diff) steps=("$1") ;;
  *) echo "usage: scripts/native-test.sh [--full | deps | build | unit | webhook | native | bench | tenants | tenants-diff]" >&2; exit 2 ;;
esac

step() {
  local name=$1 start=$SECONDS
  shift
  echo "native-test: $name" >&2
  if ! "$@"; then
    echo "native-test: $name FAILED ($((SECONDS - start)) s)" >&2
    exit 1
  fi
  echo "native-test: $name passed in $((SECONDS - start)) s" >&2
}

go_env() {
  [ -f "$cache/env.sh" ] || { echo "native-test: no toolchain in $cache (run the deps step)" >&2; return 1; }
  # shellcheck disable=SC1091
  . "$cache/env.sh"
}

deps() {
  command -v python3 >/dev/null || { echo "native-test: python3 is missing (scripts/setup.sh installs it)" >&2; return 1; }
  python3 scripts/native-deps.py "$cache" tests/native || {
    echo "native-test: fetching Go and the Kubernetes libraries from Debian sid failed (above); no native test ran" >&2
    return 1
  }
}

# The unit tests' binary is built here too (go test -c): in CI this step runs beside the C++
# builds, and linking it was most of the unit step's 42 s in the serial native phase.
build() {
  go_env && mkdir -p "$cache/bin" &&
    (cd "$cache/gopath/src/gpuadmit.io/native" && go vet . && nice -n 5 go build -o "$harness" . &&
      nice -n 5 go test -c -o "$harness.test" .)
}

unit() {
  [ -x "$harness.test" ] || { echo "native-test: no $harness.test (run the build step)" >&2; return 1; }
  (cd "$cache/gopath/src/gpuadmit.io/native" && "$harness.test" -test.count=1)
}

need_gpuadmit() {
  [ -x "$gpuadmit" ] || {
    echo "native-test: no gpuadmit binary at $gpuadmit (build it: cmake --build build --target gpuadmit, or set GPUADMIT)" >&2
    return 1
  }
}

webhook() {
  need_gpuadmit && "$harness" webhook --gpuadmit "$gpuadmit" --cases tests/cases
}

native() {
  need_gpuadmit || return 1
  local work
  work=$(mktemp -d)
  # Once: a RETURN trap stays set and would fire again at step's return, where work is unset.
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  if "$gpuadmit" render --help 2>&1 | grep -q -- '--native'; then
    for mode in full fallback; do
      "$gpuadmit" render --policy tests/cases/policy.yaml --native "$mode" >"$work/$mode.yaml" || return 1
    done
    "$harness" check "$work/full.yaml" "$work/fallback.yaml" &&
      "$harness" diff --gpuadmit "$gpuadmit" --generate "$generate" "${only[@]}" &&
      "$harness" static --gpuadmit "$gpuadmit" --generate 500
  else
    echo "native-test: $gpuadmit render has no --native: the hand-written pair of tests/native/testdata stands in" >&2
    "$harness" check tests/native/testdata/native.yaml &&
      "$harness" diff --gpuadmit "$gpuadmit" --native tests/native/testdata/native.yaml \
        --table tests/native/testdata/table.json --policy tests/cases/policy.yaml --modes full \
        --generate "$generate"
  fi
}

bench() {
  need_gpuadmit && "$harness" bench --gpuadmit "$gpuadmit"
}

# The differential with many tenants: the tenants' values are CEL map literals (docs/native.md,
# "Tenants as data"), read for namespaces across the whole policy.
tenants_diff() {
  need_gpuadmit || return 1
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  python3 scripts/native-tenants.py 200 >"$work/policy-200.yaml" || return 1
  "$harness" diff --gpuadmit "$gpuadmit" --gen-policy "$work/policy-200.yaml" \
    --only "$work/policy-200.yaml" --generate "${GPUADMIT_NATIVE_TENANTS_GENERATE:-2000}" --modes full
}

# Per tenant count: the admission objects' size (as render prints them: all, and the largest),
# the compile time `check` reports, and the bench rows.
tenants() {
  need_gpuadmit || return 1
  local work n
  work=$(mktemp -d)
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  for n in ${GPUADMIT_NATIVE_TENANTS:-1 20 200 2000}; do
    python3 scripts/native-tenants.py "$n" >"$work/policy-$n.yaml" &&
      "$gpuadmit" render --policy "$work/policy-$n.yaml" --native full >"$work/native-$n.yaml" 2>/dev/null || return 1
    python3 - "$work/native-$n.yaml" "$n" <<'PY' || return 1
import re, sys
docs = [d for d in re.split(r"^---$", open(sys.argv[1]).read(), flags=re.M)
        if re.search(r"^kind: (Validating|Mutating)AdmissionPolicy", d, flags=re.M)]
sizes = [len(d.encode()) for d in docs]
print(f"tenants {sys.argv[2]}: {len(docs)} admission objects, {sum(sizes)} bytes of YAML, the largest {max(sizes)}")
PY
    "$harness" check "$work/native-$n.yaml" | grep -E "compile time|problems" || return 1
    "$harness" bench --gpuadmit "$gpuadmit" --policy "$work/policy-$n.yaml" --native "$work/native-$n.yaml" || return 1
  done
}

total=$SECONDS
for s in "${steps[@]}"; do
  case $s in
    deps) step deps deps ;;
    build) step build build ;;
    unit) step unit unit ;;
    webhook) step webhook webhook ;;
    native) step native native ;;
    bench) step bench bench ;;
    tenants) step tenants tenants ;;
    tenants-diff) step tenants-diff tenants_diff ;;
  esac
done
echo "native-test: ${steps[*]}: passed in $((SECONDS - total)) s" >&2
