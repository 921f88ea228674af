# gpuadmit's container image: built on Debian bookworm (the packages CI builds with), run from an
# empty image holding only the stripped binary and the shared libraries it links
# (scripts/image-rootfs.sh): no shell, no package manager, a numeric non-root user. The default
# policy is embedded in the binary; the chart mounts the real one. Not built in CI (no container
# engine there); docs/install.md, "Container image".
#
#   docker build -t ghcr.io/gpuadmit/gpuadmit:0.1.0 .

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config libcpp-httplib-dev libssl-dev nlohmann-json3-dev \
      libyaml-cpp-dev libre2-dev libmimalloc-dev binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DGPUADMIT_TESTS=OFF -DGPUADMIT_BENCH=OFF \
 && cmake --build /build -j"$(nproc)" --target gpuadmit \
 && strip /build/gpuadmit \
 && /build/gpuadmit policy check policies/default.yaml \
 && scripts/image-rootfs.sh /build/gpuadmit /rootfs

FROM scratch
COPY --from=build /rootfs /
USER 65532:65532
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/gpuadmit"]
CMD ["serve", "--help"]
