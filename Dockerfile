# The standalone `cozystack-policies check` for CI (docs/ci.md): the policy
# modules are built and annotated, then embedded into the CLI (the two-stage
# build, CONTRIBUTING.md: "Building the CLI"); the runtime image holds that one
# binary, runs as a non-root user and checks the manifests mounted at /work.
#
#   docker build -t cozystack-policies .
#   docker run --rm -v "$PWD:/work" cozystack-policies check manifests/

# Debian 12's Rust image with the toolchain the workspace requires.
FROM docker.io/library/rust:1.95-bookworm AS build
# wasm-opt (binaryen) shrinks the modules as `make dist` does elsewhere;
# bookworm's 108, the version the published modules are built with.
RUN apt-get update \
 && apt-get install -y --no-install-recommends binaryen=108-1 \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add wasm32-wasip1
WORKDIR /src
COPY . .
# Stage one: the modules, annotated by `xtask dist` (our host); stage two:
# the CLI, with them embedded. Paths are remapped as in the release so
# the modules match the published ones byte for byte.
RUN CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=/usr/local/cargo=/cargo" tools/build-modules target \
 && cargo build --locked --release --workspace --bin xtask \
 && target/release/xtask dist --wasm-dir target/wasm32-wasip1/policy-opt --out dist \
 && COZYSTACK_POLICIES_DIST=/src/dist cargo install --locked --path cli --root /out \
 && /out/bin/cozystack-policies --version

# glibc and libgcc, no shell; runs as distroless's nonroot user.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/bin/cozystack-policies /usr/local/bin/cozystack-policies
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/cozystack-policies"]
CMD ["check", "--help"]
