# cozystack-policies: build, check and test the admission bundle.
#
#   make check   the main job: build the bundle, check examples/ with it
#   make test    everything CI runs (sets up what it needs on a fresh machine)
#   make bench   module sizes and evaluation medians next to the floor module

POLICIES    := $(notdir $(patsubst %/Cargo.toml,%,$(wildcard policies/*/Cargo.toml)))
TARGET      := wasm32-wasip1
CARGO       := cargo
CARGO_FLAGS := --locked
CLI         := target/release/cozystack-policies
WASM_DIR    := target/$(TARGET)/policy
# Paths of crates.io sources end up in the modules (panic locations); the
# same remapping as release/reproducible.sh and the release workflow makes
# dist/ byte-identical to a published module built from the same commit.
CARGO_HOME  ?= $(HOME)/.cargo
REMAP       := --remap-path-prefix=$(CARGO_HOME)=/cargo

.PHONY: all setup dist cli check test lint unit e2e bench profile-table clean

all: dist

## Toolchain pieces a fresh machine lacks (rustup ships the rest).
setup:
	@rustup target list --installed | grep -qx $(TARGET) || rustup target add $(TARGET)
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy
	@rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt

cli: setup
	$(CARGO) build $(CARGO_FLAGS) --release -p cozystack-policies

## One annotated module per policy in dist/, plus the floor module the
## benchmark compares against.
dist: setup cli
	CARGO_ENCODED_RUSTFLAGS="$(REMAP)" $(CARGO) build $(CARGO_FLAGS) --profile policy --target $(TARGET) $(addprefix -p ,$(POLICIES)) -p floor-policy
	$(CLI) dist --wasm-dir $(WASM_DIR) --out dist

## The main job: every policy over the example change (before -> after).
check: dist
	$(CLI) check --old examples/before examples/after

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy $(CARGO_FLAGS) --release --workspace --all-targets -- -D warnings
	# The wasm-only code (the allocator, SIMD classification) as built.
	$(CARGO) clippy $(CARGO_FLAGS) --release --target $(TARGET) $(addprefix -p ,$(POLICIES)) -- -D warnings

## Unit tests of every crate, and every case of every policy through the host.
unit: dist
	$(CARGO) test $(CARGO_FLAGS) --release --workspace

## The same cases through kwctl (skipped, visibly, without kwctl).
e2e: dist
	e2e/run.sh

test: lint unit e2e registry sbom reproducible

bench: dist
	$(CLI) bench

## Sizes and benchmark ratios under several release profiles (README,
## "Build profile").
profile-table: cli
	bench/profile-table.sh

clean:
	$(CARGO) clean
	rm -rf dist

## Publishing: the OCI round trip, SBOMs, reproducibility, ArtifactHub
## (README: "Publishing and installing").
.PHONY: registry sbom reproducible artifacthub
REGISTRY_BIN := /usr/bin/docker-registry

## Pushes dist/ to a throwaway docker-registry on 127.0.0.1 (temporary
## storage, stopped when the test ends) and pulls every artifact back.
registry: dist
	@test -x $(REGISTRY_BIN) || { echo "installing docker-registry"; apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry >/dev/null; }
	DOCKER_REGISTRY=$(REGISTRY_BIN) $(CARGO) test $(CARGO_FLAGS) --release -p cozystack-policies --test registry -- --ignored --nocapture --test-threads 1

## dist/<policy>.cdx.json, the CycloneDX SBOM of each module.
sbom: dist
	release/sbom.sh

## Two clean builds of the policies, from two paths, give identical modules.
reproducible: cli
	release/reproducible.sh

## Rewrites artifacthub/ from the policies' metadata and READMEs.
artifacthub: cli
	$(CLI) artifacthub
