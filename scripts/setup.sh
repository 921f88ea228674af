#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian's packages. Idempotent: a
# machine that already has them is left as it is (apt-get update runs only when something is
# missing).
set -euo pipefail
packages=(cmake g++ make pkg-config libcpp-httplib-dev libssl-dev nlohmann-json3-dev
  libyaml-cpp-dev libre2-dev catch2 openssl curl)
packages+=(libmimalloc-dev) # the allocator of gpuadmit and bench/ (cmake/allocator.cmake)
packages+=(clang-14 libclang-rt-14-dev) # libFuzzer for fuzz/ (scripts/fuzz.sh)
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
