#!/usr/bin/env bash
# Builds Flotilla (release) and runs the building demo: two floors and a lift
# with a door on each (configs/building/lift.world.yaml), and a rider that
# calls the lift, drives in, rides to floor 2 and drives out.
# Extra arguments go to `flotilla run` (e.g. --for 40).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
./scripts/cargo-each.sh build --release --bins
exec target/release/flotilla run configs/building/lift.world.yaml \
    --exec "python3 examples/python/lift_ride.py" "$@"
