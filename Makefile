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

# The policies as every tool finds them (crates/layout/; a dev build, which no
# stage below competes with for its build directory).
POLICIES    := $(shell cargo run --locked --quiet -p cozystack-layout --bin policies | cut -f1)
ifeq ($(POLICIES),)
$(error no policies listed: `cargo run -p cozystack-layout --bin policies` failed)
endif
# The wasm modules: each policy with its waPC entry points (`wapc` feature).
MODULES     := $(addprefix -p ,$(POLICIES)) --features "$(addsuffix /wapc,$(POLICIES))"
TARGET      := wasm32-wasip1
CARGO       := cargo
CARGO_FLAGS := --locked
# Every host-side cargo command selects the whole workspace, so features
# resolve the same way each time and wasmtime is built once per run.
HOST        := --release --workspace
# The users' CLI, and the team's tasks (`cargo xtask`, xtask/): annotating
# dist/, the benchmarks, the generated chart and ArtifactHub files.
CLI         := target/release/cozystack-policies
XTASK       := target/release/xtask
# The modules tools/build-modules leaves: cargo's, through wasm-opt.
OPT_DIR     := target/$(TARGET)/policy-opt
STAGE       := tools/stage
# Paths of crates.io sources end up in the modules (panic locations); the
# same remapping as release/reproducible.sh and the release workflow makes
# dist/ byte-identical to a published module built from the same commit.
CARGO_HOME  ?= $(HOME)/.cargo
REMAP       := --remap-path-prefix=$(CARGO_HOME)=/cargo

# `make test` has clippy lint our host crates as cargo compiles them
# (LINT_WHILE_BUILDING=1), rather than run `cargo clippy`, which checks the
# whole dependency graph (wasmtime, k8s-openapi, ...) a second time: cargo
# hands the workspace's own crates, and only those, to clippy-driver, the
# compiler `cargo clippy` runs, and the dependencies still to rustc, so their
# artifacts stay those of a plain `cargo build`. CLIPPY_ARGS is how
# `cargo clippy` passes `-D warnings` to clippy-driver. The modules never
# build this way: clippy-driver turns off MIR optimisations.
ifneq ($(LINT_WHILE_BUILDING),)
CLIPPY_DRIVER := $(or $(shell rustup which clippy-driver 2>/dev/null),\
  $(error clippy-driver not found: run `rustup component add clippy`))
LINT_ENV    := RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) \
               CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
endif

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

## Both programs in one build, which shares every crate between them.
cli: setup
	$(LINT_ENV) $(CARGO) build $(CARGO_FLAGS) $(HOST) --bin cozystack-policies --bin xtask

## One annotated module per policy in dist/: cargo's artifacts, through
## wasm-opt, then annotated as kwctl annotates (`xtask dist`). The modules
## build beside the programs: each ends in a long single-threaded link (fat
## LTO), which leaves the other core to the programs' build.
dist: setup
	CARGO_ENCODED_RUSTFLAGS="$(REMAP)" tools/build-modules target & modules=$$!; \
	  $(MAKE) --no-print-directory cli; cli=$$?; \
	  wait $$modules && exit $$cli
	$(XTASK) dist --wasm-dir $(OPT_DIR) --out dist

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
ifeq ($(LINT_WHILE_BUILDING),)
	# --all-targets leaves out test targets that `cargo test` skips (test = false).
	$(CARGO) clippy $(CARGO_FLAGS) $(HOST) --all-targets \
	  --test kwctl --test policy_server --test soak --test chart --test standalone -- -D warnings
else
	@echo "host crates: clippy lints them as the stages below build them (LINT_WHILE_BUILDING)"
endif
	# The modules as built, entry points included.
	$(CARGO) clippy $(CARGO_FLAGS) --release --target $(TARGET) $(MODULES) -- -D warnings

## The GitHub workflows, with zizmor and actionlint.
lint-workflows:
	tools/lint-workflows

## Unit tests of every crate, and every case of every policy through the host.
## The real kubectl runs the capture block against a loopback API server
## (cli/tests/preflight.rs).
unit: dist
	@tools/helm-venv >/dev/null
	@tools/need kubectl kubernetes-client
	$(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST)

## Every case and every hostile request through `kwctl run`, and kwctl
## annotate against dist (e2e/tests/kwctl.rs).
e2e-kwctl: dist
	$(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test kwctl

## Every case and every hostile request through Kubewarden's
## policy-server, and deploy/'s configuration (e2e/tests/policy_server.rs).
e2e-policy-server: dist
	$(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test policy_server

e2e: e2e-kwctl e2e-policy-server

## The bundle as deploy/ configures it, under a mixed load of every case
## through policy-server for SOAK_SECONDS: every answer a 200 with the
## case's first verdict, resident memory at the end within 10 % of its
## value after the warm-up (e2e/src/soak.rs). The test command runs 30 s.
SOAK_SECONDS ?= 300

soak: dist
	SOAK_SECONDS=$(SOAK_SECONDS) $(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test soak
## The standalone CLI (CONTRIBUTING.md: "Building the CLI"): installed with dist/
## embedded, run from an empty directory. Relinks the CLI once.
.PHONY: standalone
standalone: dist
	$(LINT_ENV) e2e/standalone.sh

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

# The stages' make: host crates linted as they build (LINT_ENV above).
SUBMAKE := $(MAKE) --no-print-directory LINT_WHILE_BUILDING=1

## Each stage in turn, timed; the summary at the end lists them all.
test: setup
	@$(STAGE) --reset
	@$(STAGE) lint $(SUBMAKE) lint
	@$(STAGE) lint-workflows $(SUBMAKE) lint-workflows
	@$(STAGE) lint-dockerfile $(SUBMAKE) lint-dockerfile
	@$(STAGE) dist $(SUBMAKE) dist
	@$(STAGE) unit $(SUBMAKE) unit
	@$(STAGE) fuzz-smoke $(SUBMAKE) fuzz-smoke
	@$(STAGE) e2e-kwctl $(SUBMAKE) e2e-kwctl
	@$(STAGE) e2e-policy-server $(SUBMAKE) e2e-policy-server
	@$(STAGE) chart-check $(SUBMAKE) chart-check
	@$(STAGE) oracle-smoke $(SUBMAKE) oracle-smoke
	@$(STAGE) soak $(SUBMAKE) soak SOAK_SECONDS=30
	@$(STAGE) report-browser $(SUBMAKE) report-browser
	@$(STAGE) browser-test $(SUBMAKE) browser-test
	@$(STAGE) registry $(SUBMAKE) registry
	@$(STAGE) sbom $(SUBMAKE) sbom
	@$(STAGE) reproducible $(SUBMAKE) reproducible
	@# Last: it leaves the embedding CLI in target/release, which the
	@# stages above would each rebuild back.
	@$(STAGE) standalone $(SUBMAKE) standalone
	@$(STAGE) --summary

bench: dist floors
	$(XTASK) bench

bench-cold: dist floors
	$(XTASK) bench --cold --rounds 1000

bench-server: dist floors
	@tools/need hey hey
	$(XTASK) bench-server

## Sizes and benchmark ratios under several release profiles
## (docs/performance.md).
profile-table: cli
	bench/profile-table.sh

clean:
	$(CARGO) clean
	rm -rf dist

## Publishing: the OCI round trip, SBOMs, reproducibility, ArtifactHub
## (CONTRIBUTING.md: "Publishing").
.PHONY: registry sbom reproducible artifacthub
REGISTRY_BIN := /usr/bin/docker-registry

## Pushes dist/ and the chart to a throwaway docker-registry on 127.0.0.1
## (temporary storage, stopped when the test ends), pulls every artifact
## back, and proves the signatures `push --sign-key` writes with kwctl and
## policy-server.
registry: dist chart-package
	@test -x $(REGISTRY_BIN) || tools/need docker-registry docker-registry
	DOCKER_REGISTRY=$(REGISTRY_BIN) CHART_ARCHIVE=$(abspath $(CHART_ARCHIVE)) $(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test registry -- --ignored --nocapture --test-threads 1

## dist/<policy>.cdx.json, the CycloneDX SBOM of each module.
sbom: dist
	release/sbom.sh

## A clean build of the policies from a second checkout path gives dist/
## byte for byte.
reproducible: dist
	release/reproducible.sh

## Each policy README's Rules table, and the rules its setting `deny` may
## raise, from the rules themselves: the catalogue (ids, order, verdicts) and
## each rule's doc comment (`cargo xtask rule-tables`); xtask's tests fail
## until the result is committed.
.PHONY: rule-tables
rule-tables: cli
	$(XTASK) rule-tables

## The Helm chart (charts/cozystack-policies): `xtask chart` rewrites the files
## that follow from the policies (files/policies.yaml from each metadata.yml,
## values.schema.json from each settings type) and renders deploy/ from the
## chart; the tests fail until the result is committed. `chart-check` lints
## it with Helm's SDK (tools/helm-venv), renders it with the defaults, with
## every value changed and with mistakes, checks every rendering, the Flux
## and Cozystack manifests of charts/install/, and starts policy-server with
## one (e2e/tests/chart.rs). `chart-package` writes the archive `push --chart`
## publishes.
.PHONY: chart chart-check chart-package
CHART_ARCHIVE = target/chart/cozystack-policies-$(shell sed -n 's/^version: //p' charts/cozystack-policies/Chart.yaml).tgz

chart: cli
	$(XTASK) chart
	@tools/helm-venv
	target/helm-venv/bin/python tools/helm-chart deploy

chart-check: dist
	@tools/helm-venv
	$(LINT_ENV) $(CARGO) test $(CARGO_FLAGS) $(HOST) --test chart

chart-package:
	@tools/helm-venv
	@rm -rf target/chart && mkdir -p target/chart
	@if [ -x target/helm-venv/bin/python ]; then \
	  target/helm-venv/bin/python tools/helm-chart package target/chart; \
	else echo "skipped: no chart archive without Helm's SDK"; fi

## Rewrites artifacthub/ from the policies' metadata and READMEs.
artifacthub: cli
	$(XTASK) artifacthub

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

## Regenerates policies/values-schema/schemas/ (the chart schemas and
## index.json the policy's build script turns into its embedded trees) from
## the releases of releases/ and their files in ../shared/data; the
## generator's drift test fails until the result is committed. A new release
## is `cargo xtask import-release` (docs/releases.md), which runs this too.
.PHONY: schemas
schemas:
	$(CARGO) run $(CARGO_FLAGS) --release -p values-schema-generator

## The browser playground (playground/): a static site in target/playground-site
## that any static host serves; prints its transfer size. `browser-test`
## loads it in headless Chromium and checks a denied and an allowed example
## of every policy (e2e/browser/).
.PHONY: playground browser-test
PLAYGROUND := target/playground-site

playground: setup
	$(LINT_ENV) tools/build-playground $(PLAYGROUND)

browser-test: playground
	e2e/browser/run $(PLAYGROUND) e2e/browser/playground_check.py

## The Helm oracle (oracle/, docs/oracle.md): every application kind of every
## release of releases/ rendered as the platform renders it, against the
## bundle's verdicts with cozystackVersion set to that release (releases with
## the same charts rendered once, and judged alike); fails on a disagreement
## oracle/exceptions.yaml does not list, then rewrites chart-render's README
## table of template sites from the run, and the Artifact Hub package that
## mirrors that README.
## ORACLE_PER_KIND samples per kind of the newest release of each line,
## ORACLE_PATCH_PER_KIND of each older patch release, each also as stored, a
## share again on each platform variant, and a quarter of that as UPDATEs (PUT
## and merge PATCH). ORACLE_RELEASES names the releases instead (a release
## candidate only so: docs/releases.md). `oracle-smoke` is the test command's
## short run with the same seed: fewer samples, variants and updates, no name
## probes, and of an older patch release neither cases nor nulls (the newest
## of its line renders them).
.PHONY: oracle oracle-smoke oracle-probes
ORACLE_PER_KIND ?= 130
ORACLE_PATCH_PER_KIND ?= 40
ORACLE_SMOKE_PER_KIND ?= 12
ORACLE_SMOKE_PATCH_PER_KIND ?= 2
ORACLE_SEED ?= 1
ORACLE_RELEASES ?=
ORACLE_RELEASE_ARGS = $(foreach release,$(ORACLE_RELEASES),--release $(release))

oracle: dist
	tools/oracle test
	tools/oracle suite --seed $(ORACLE_SEED) --per-kind $(ORACLE_PER_KIND) \
	  --patch-per-kind $(ORACLE_PATCH_PER_KIND) $(ORACLE_RELEASE_ARGS)
	$(if $(ORACLE_RELEASES),,tools/oracle coverage --write)
	$(if $(ORACLE_RELEASES),,$(XTASK) artifacthub)

## Values generated from the templates' conditions for the fail/required sites
## the last `make oracle` did not reach (oracle/probes/sites.yaml, which the
## suite then renders); run `make oracle` again after it.
oracle-probes:
	tools/oracle probes --write

oracle-smoke: dist
	tools/oracle test
	tools/oracle coverage --check
	tools/oracle suite --seed $(ORACLE_SEED) --per-kind $(ORACLE_SMOKE_PER_KIND) \
	  --patch-per-kind $(ORACLE_SMOKE_PATCH_PER_KIND) --patch-light \
	  --variant-every 32 --updates-per-kind 1 --no-name-probes --report target/oracle/smoke.json
