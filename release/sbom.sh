#!/usr/bin/env bash
# One CycloneDX SBOM per module, next to it: dist/<policy>.cdx.json.
#
# cargo-cyclonedx (the CycloneDX project's cargo subcommand) reads Cargo's
# resolved dependency graph for the wasm32-wasip1 target, so the SBOM lists
# the crates compiled into the module and not the host-only ones; build
# scripts' dependencies are left out. Its timestamp is the commit time
# (SOURCE_DATE_EPOCH), so the same commit gives the same SBOM. It is
# installed once into ~/.cargo/bin (cargo install --locked), unoptimised:
# that build takes half the time of a release build on a fresh machine, and
# the SBOMs it writes are the same, in a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.5.9
# It calls itself `cargo-cyclonedx-cyclonedx 0.5.9`: only the version counts.
installed=$(cargo cyclonedx --version 2>/dev/null || true)
if [ "${installed##* }" != "$version" ]; then
  CARGO_PROFILE_DEV_DEBUG=false cargo install --locked --quiet --debug cargo-cyclonedx --version "$version"
fi
out=${1:-dist}
name=cozystack-sbom.cdx   # a name no other file has: every member gets one
trap 'find . -path ./target -prune -o -name "$name.json" -type f -exec rm -f {} +' EXIT
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)} \
  cargo cyclonedx --quiet --format json --spec-version 1.5 --target wasm32-wasip1 \
  --no-build-deps --override-filename "$name"
mkdir -p "$out"
policies=$(cargo run --locked --quiet -p cozystack-layout --bin policies | cut -f1)
for policy in $policies; do
  sbom=$out/$policy.cdx.json
  mv "policies/$policy/$name.json" "$sbom"
  components=$(grep -c '"purl": "pkg:cargo/' "$sbom" || true)
  [ "$components" -gt 0 ] || { echo "$sbom lists no components" >&2; exit 1; }
  echo "$sbom ($components package URLs)"
done
