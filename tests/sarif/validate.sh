#!/usr/bin/env bash
# lint's SARIF, checked by Microsoft's SARIF Multitool (`validate`: the SARIF 2.1.0 schema plus
# its rules, e.g. SARIF1001: a rule's `name` must be a readable identifier, not its id).
# Fails on any error or warning the validator prints.
#   tests/sarif/validate.sh GPUADMIT_BINARY SOURCE_DIR SHARED_DIR
set -euo pipefail
binary=$1 source=$2 shared=$3
tool="$source/tests/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
if [ ! -x "$tool" ]; then
  echo "validate.sh: $tool is missing; scripts/setup.sh installs it (npm ci in tests/sarif)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Findings of every severity, PARSE errors included, from the lint cases and the shared corpus.
set +e
"$binary" lint --output sarif "$source/tests/lint/cases" "$shared/corpus/workloads" >"$work/lint.sarif"
code=$?
set -e
if [ "$code" -gt 2 ]; then
  echo "validate.sh: gpuadmit lint exited $code" >&2
  exit 1
fi
grep -q '"results"' "$work/lint.sarif"
# DOTNET_* : no telemetry, no first-run work in $HOME.
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
  "$tool" validate "$work/lint.sarif" --output "$work/validation.sarif" >"$work/out.txt" 2>&1 || {
  cat "$work/out.txt"
  exit 1
}
cat "$work/out.txt"
if grep -Eq ': (error|warning) [A-Z]+[0-9]+' "$work/out.txt"; then
  echo "validate.sh: the SARIF Multitool reported the findings above" >&2
  exit 1
fi
