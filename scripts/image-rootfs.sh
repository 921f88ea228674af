#!/usr/bin/env bash
# Assembles the container image's file system (Dockerfile, runtime stage): the gpuadmit binary
# at /usr/local/bin/gpuadmit, the shared libraries ldd lists (the dynamic loader included) at
# their paths, and an empty /tmp. Nothing else: no shell, no package manager.
#   scripts/image-rootfs.sh build/gpuadmit /tmp/rootfs && sudo chroot /tmp/rootfs /usr/local/bin/gpuadmit render
set -euo pipefail
binary=$1 root=$2
mkdir -p "$root/usr/local/bin" "$root/tmp"
chmod 1777 "$root/tmp"
install -m 0755 "$binary" "$root/usr/local/bin/gpuadmit"
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r lib; do
    cp --parents -L "$lib" "$root/"
  done
