#!/usr/bin/env bash
# Builds Flotilla (release) and runs the building demo: two floors and an
# elevator (configs/building/), the map-transition manager, and a rider that
# drives into the elevator, closes the door, rides to floor 2 and drives out.
# Extra arguments go to `flotilla run` (e.g. --for 40).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
./scripts/cargo-each.sh build --release --bins
exec target/release/flotilla run configs/building/building.world.yaml \
    --exec "python3 examples/python/elevator_ride.py" "$@"
