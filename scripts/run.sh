#!/usr/bin/env bash
# Installs what building and serving needs (scripts/setup.sh serve: Debian packages only; the
# tests' clang, Node.js and npm packages come with scripts/test.sh), builds gpuadmit, generates
# development certificates and serves the webhook on https://127.0.0.1:8443 with the embedded
# default policy (metrics on http://127.0.0.1:9090/metrics). Ctrl-C (SIGTERM/SIGINT) drains and
# stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh serve
generator=()
[ -f build/CMakeCache.txt ] || generator=(-G Ninja) # an existing build/ keeps its generator
cmake "${generator[@]}" -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target gpuadmit

listen=${GPUADMIT_LISTEN:-127.0.0.1:8443}
certs=build/dev-certs
if [ ! -s "$certs/tls.crt" ] || ! openssl x509 -checkend 86400 -noout -in "$certs/tls.crt" >/dev/null 2>&1; then
  # Service "gpuadmit" in namespace "gpuadmit", plus localhost for a person's curl.
  build/gpuadmit certs --service gpuadmit --namespace gpuadmit --out "$certs" \
    --san localhost --san 127.0.0.1 >/dev/null
fi

port=${listen##*:}
cat >&2 <<TXT
gpuadmit: serving on https://$listen (policy: embedded default). In another shell, send a GPU pod:

  curl -sS --cacert $PWD/$certs/ca.crt -H 'Content-Type: application/json' \\
    --data-binary @$PWD/examples/review-gpu-pod.json https://localhost:$port/mutate \\
    | python3 -c 'import base64,json,sys; r=json.load(sys.stdin)["response"]; print(json.dumps(r, indent=2)); print(base64.b64decode(r.get("patch", "")).decode())'

TXT
exec build/gpuadmit serve --tls-cert "$certs/tls.crt" --tls-key "$certs/tls.key" \
  --listen "$listen" --metrics-listen "${GPUADMIT_METRICS_LISTEN:-127.0.0.1:9090}"
