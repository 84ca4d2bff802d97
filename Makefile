# cozystack-policies: build, check and test the admission bundle.
#
#   make check          the main job: build the bundle, check examples/ with it
#   make test           everything CI runs (sets up what it needs on a fresh
#                       machine, prints each stage's time)
#   make bench          module sizes and evaluation medians next to the floor,
#                       then each policy's slowest hostile case and its fuel
#   make bench-cold     the same evaluations from cold caches, as policy-server
#                       runs them: a quick predictor of bench-server
#   make bench-server   throughput and latency through Kubewarden's policy-server,
#                       each ratio split into reading the request and the rule

POLICIES    := $(notdir $(patsubst %/Cargo.toml,%,$(wildcard policies/*/Cargo.toml)))
# The wasm modules: each policy with its waPC entry points (`wapc` feature).
MODULES     := $(addprefix -p ,$(POLICIES)) --features "$(addsuffix /wapc,$(POLICIES))"
TARGET      := wasm32-wasip1
CARGO       := cargo
CARGO_FLAGS := --locked
# Every host-side cargo command selects the whole workspace, so features
# resolve the same way each time and wasmtime is built once per run.
HOST        := --release --workspace
CLI         := target/release/cozystack-policies
# The modules tools/build-modules leaves: cargo's, through wasm-opt.
OPT_DIR     := target/$(TARGET)/policy-opt
STAGE       := tools/stage
# Paths of crates.io sources end up in the modules (panic locations); the
# same remapping as release/reproducible.sh and the release workflow makes
# dist/ byte-identical to a published module built from the same commit.
CARGO_HOME  ?= $(HOME)/.cargo
REMAP       := --remap-path-prefix=$(CARGO_HOME)=/cargo

# Kubewarden's kwctl and policy-server come from the team's reference folder
# (tools/install-kubewarden puts them in target/tools/bin). Its offline
# trust configuration spares both the wait for Sigstore's network at start.
KUBEWARDEN  ?= $(abspath ../shared/kubewarden)
export KUBEWARDEN
export PATH := $(CURDIR)/target/tools/bin:$(PATH)
ifneq ($(wildcard $(KUBEWARDEN)/offline-trust.json),)
export SIGSTORE_TRUST_CONFIG ?= $(KUBEWARDEN)/offline-trust.json
endif

.PHONY: all setup dist cli check test lint lint-workflows unit e2e e2e-kwctl e2e-policy-server soak \
        bench bench-cold bench-server profile-table clean

all: dist

## Toolchain pieces and programs a fresh machine lacks (rustup ships the
## rest): the wasm target, clippy, rustfmt, Kubewarden's kwctl and
## policy-server.
setup:
	@rustup target list --installed | grep -qx $(TARGET) || rustup target add $(TARGET)
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy
	@rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
	@tools/install-kubewarden

cli: setup
	$(CARGO) build $(CARGO_FLAGS) $(HOST) --bin cozystack-policies

## One annotated module per policy in dist/: cargo's artifacts, through
## wasm-opt, then annotated as kwctl annotates.
dist: setup cli
	CARGO_ENCODED_RUSTFLAGS="$(REMAP)" tools/build-modules target
	$(CLI) dist --wasm-dir $(OPT_DIR) --out dist

## The floor modules the benchmarks compare against (bench/), built as the
## policies are, into $(OPT_DIR).
.PHONY: floors
floors: setup
	CARGO_ENCODED_RUSTFLAGS="$(REMAP)" tools/build-modules target --floors

## The main job: every policy over the example change (before -> after).
check: dist
	$(CLI) check --old examples/before examples/after

lint: setup
	$(CARGO) fmt --all -- --check
	# The tests' dev-dependencies must not change the features of a crate
	# `make dist` builds, or the unit tests compile it and every crate above it again.
	tools/check-build-graph
	# --all-targets leaves out test targets that `cargo test` skips (test = false).
	$(CARGO) clippy $(CARGO_FLAGS) $(HOST) --all-targets \
	  --test kwctl --test policy_server --test soak -- -D warnings
	# The modules as built, entry points included.
	$(CARGO) clippy $(CARGO_FLAGS) --release --target $(TARGET) $(MODULES) -- -D warnings

## The GitHub workflows, with zizmor and actionlint.
lint-workflows:
	tools/lint-workflows

## Unit tests of every crate, and every case of every policy through the host.
unit: dist
	$(CARGO) test $(CARGO_FLAGS) $(HOST)

## Every case through `kwctl run` (and the same bats suite through our host).
e2e-kwctl: dist
	e2e/run.sh

## Every case through Kubewarden's policy-server, deploy/'s configuration,
## kwctl annotate against dist, and every hostile request through both
## policy-server and `kwctl run`.
e2e-policy-server: dist
	$(CARGO) test $(CARGO_FLAGS) $(HOST) --test policy_server --test kwctl

e2e: e2e-kwctl e2e-policy-server

## The bundle as deploy/ configures it, under a mixed load of every case
## through policy-server for SOAK_SECONDS: every answer a 200 with the
## case's first verdict, resident memory at the end within 10 % of its
## value after the warm-up (e2e/src/soak.rs). The test command runs 30 s.
SOAK_SECONDS ?= 300

soak: dist
	SOAK_SECONDS=$(SOAK_SECONDS) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test soak
## The standalone CLI (README: "Building the CLI"): installed with dist/
## embedded, run from an empty directory. Relinks the CLI once.
.PHONY: standalone
standalone: dist
	e2e/standalone.sh

## The released CLI with this checkout's dist/ embedded, in target/standalone.
.PHONY: standalone-cli
standalone-cli: dist
	COZYSTACK_POLICIES_DIST=$(abspath dist) CARGO_TARGET_DIR=$(abspath target) \
	  $(CARGO) install $(CARGO_FLAGS) --path cli --root target/standalone

## The container image definition, with hadolint (tools/install-hadolint).
.PHONY: lint-dockerfile
lint-dockerfile:
	tools/install-hadolint
	tools/lint-dockerfile

## Each stage in turn, timed; the summary at the end lists them all.
test: setup
	@$(STAGE) --reset
	@$(STAGE) lint $(MAKE) --no-print-directory lint
	@$(STAGE) lint-workflows $(MAKE) --no-print-directory lint-workflows
	@$(STAGE) lint-dockerfile $(MAKE) --no-print-directory lint-dockerfile
	@$(STAGE) dist $(MAKE) --no-print-directory dist
	@$(STAGE) unit $(MAKE) --no-print-directory unit
	@$(STAGE) fuzz-smoke $(MAKE) --no-print-directory fuzz-smoke
	@$(STAGE) e2e-kwctl $(MAKE) --no-print-directory e2e-kwctl
	@$(STAGE) e2e-policy-server $(MAKE) --no-print-directory e2e-policy-server
	@$(STAGE) soak $(MAKE) --no-print-directory soak SOAK_SECONDS=30
	@$(STAGE) report-browser $(MAKE) --no-print-directory report-browser
	@$(STAGE) browser-test $(MAKE) --no-print-directory browser-test
	@$(STAGE) registry $(MAKE) --no-print-directory registry
	@$(STAGE) sbom $(MAKE) --no-print-directory sbom
	@$(STAGE) reproducible $(MAKE) --no-print-directory reproducible
	@# Last: it leaves the embedding CLI in target/release, which the
	@# stages above would each rebuild back.
	@$(STAGE) standalone $(MAKE) --no-print-directory standalone
	@$(STAGE) --summary

bench: dist floors
	$(CLI) bench

bench-cold: dist floors
	$(CLI) bench --cold --rounds 1000

bench-server: dist floors
	@tools/need hey hey
	$(CLI) bench-server

## Sizes and benchmark ratios under several release profiles
## (docs/performance.md).
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
	@test -x $(REGISTRY_BIN) || tools/need docker-registry docker-registry
	DOCKER_REGISTRY=$(REGISTRY_BIN) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test registry -- --ignored --nocapture --test-threads 1

## dist/<policy>.cdx.json, the CycloneDX SBOM of each module.
sbom: dist
	release/sbom.sh

## A clean build of the policies from a second checkout path gives dist/
## byte for byte.
reproducible: dist
	release/reproducible.sh

## Rewrites artifacthub/ from the policies' metadata and READMEs.
artifacthub: cli
	$(CLI) artifacthub

## The HTML report in headless Chromium (e2e/browser/report.sh): the page
## `report --format html` writes must render its totals and filter its rows;
## skipped, saying so, without Chromium, except under CI. REPORT_SCREENSHOT=1
## also refreshes docs/report.png.
.PHONY: report-browser
report-browser: cli
	e2e/browser/report.sh $(if $(REPORT_SCREENSHOT),--update-docs)

## Fuzzing (fuzz/, cargo-fuzz on nightly; both install what they lack).
## `fuzz`: every native target of every policy for FUZZ_SECONDS, then the
## `wasm` target (dist/'s modules in our host) for FUZZ_WASM_SECONDS, the
## corpus kept in fuzz/corpus; `fuzz-smoke`: the test command's short run of
## the native targets from the YAML cases alone. Both end with
## `<target>/<policy>: <N> executions` per target (`wasm: <N> executions`).
.PHONY: fuzz fuzz-smoke
FUZZ_SECONDS ?= 60
FUZZ_WASM_SECONDS ?= $(FUZZ_SECONDS)
FUZZ_SMOKE_SECONDS ?= 4

fuzz: dist
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_WASM_SECONDS=$(FUZZ_WASM_SECONDS) tools/fuzz run

fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) tools/fuzz smoke

## Regenerates policies/values-schema/schemas/ from the Cozystack release
## files in ../shared/data (chart schemas and ApplicationDefinitions);
## values-schema's drift test fails until the result is committed.
.PHONY: schemas
schemas:
	$(CARGO) run $(CARGO_FLAGS) --release -p values-schema --example generate-schemas

## The browser playground (playground/): a static site in target/playground-site
## that any static host serves; prints its transfer size. `browser-test`
## loads it in headless Chromium and checks a denied and an allowed example
## of every policy (e2e/browser/).
.PHONY: playground browser-test
PLAYGROUND := target/playground-site

playground: setup
	tools/build-playground $(PLAYGROUND)

browser-test: playground
	e2e/browser/run $(PLAYGROUND) e2e/browser/playground_check.py
