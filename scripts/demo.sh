#!/usr/bin/env bash
# Builds Flotilla (release) and runs the demo: six robots wandering the
# conestogo office, every plugin in its own process, with a live status line
# and the live view on http://127.0.0.1:8080.
# Extra arguments go to `flotilla run` (e.g. --rate 4, --for 30).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
./scripts/cargo-each.sh build --release --bins
exec target/release/flotilla run configs/office/world.yaml --view --exec target/release/flotilla-wander "$@"
