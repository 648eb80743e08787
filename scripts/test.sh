#!/usr/bin/env bash
# The whole test suite: formatting, lints, every unit, integration and
# end-to-end test (the end-to-end tests start the real binaries on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
# No incremental artefacts: a suite run is a one-off build, and they cost
# gigabytes of disk.
export CARGO_INCREMENTAL=0
./scripts/ensure-deps.sh
cargo fmt --all -- --check
# The bridge apart from the rest, so that its zenoh features stay out of the
# other binaries (see cargo-each.sh).
./scripts/cargo-each.sh clippy --all-targets --locked -- -D warnings
./scripts/cargo-each.sh build --bins --locked
./scripts/check-features.sh
# Every test binary runs even when one fails, so that one failure cannot
# hide another; the run still fails if any test does.
./scripts/cargo-each.sh test --locked --no-fail-fast
