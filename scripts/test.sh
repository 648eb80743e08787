#!/usr/bin/env bash
# The whole test suite: formatting, lints, every unit, integration and
# end-to-end test (the end-to-end tests start the real binaries on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
# No incremental artefacts: a suite run is a one-off build, and they cost
# gigabytes of disk.
export CARGO_INCREMENTAL=0
# A cold debug build of the workspace and its tests takes about 7 GB; say so
# up front rather than fail half-way with "No space left on device".
free_kb=$(df -Pk . | awk 'NR == 2 {print $4}')
if [ "${free_kb:-0}" -lt $((8 * 1024 * 1024)) ]; then
    echo "test.sh: warning: only $((free_kb / 1024)) MB free here; a cold build needs about 7 GB" >&2
fi
# Each phase says how long it took, so that the suite's time can be kept
# in hand (CI allows 90 minutes on 2 cores; the whole run aims for 45).
phase() {
    local start=$SECONDS
    "$@"
    echo "test.sh: $((SECONDS - start)) s: $*" >&2
}
phase ./scripts/ensure-deps.sh
phase cargo fmt --all -- --check
# The Python pieces (test peers, examples, generators), by ruff.toml's rules.
phase python3 -m ruff check .
# The bridge apart from the rest, so that its zenoh features stay out of the
# other binaries (see cargo-each.sh).
phase ./scripts/cargo-each.sh clippy --all-targets --locked -- -D warnings
# The API documentation, its links checked (a link to a private item or an
# ambiguous name is a warning, and a warning fails the run).
RUSTDOCFLAGS="-D warnings" phase ./scripts/cargo-each.sh doc --no-deps --locked
phase ./scripts/cargo-each.sh build --bins --locked
phase ./scripts/check-features.sh
# The Python package (python/: a PyO3 extension over the message and wire
# crates, built by maturin), its own Cargo workspace: formatted, linted, and
# installed from this checkout for the tests that use it.
phase cargo fmt --manifest-path python/Cargo.toml -- --check
phase cargo clippy --manifest-path python/Cargo.toml --all-targets --locked -- -D warnings
phase ./scripts/install-python-package.sh
# Its API reference (docs/python-api.md) says what its docstrings say.
phase python3 scripts/python-api-doc.py --check
# The end-to-end tests start many simulations side by side, where Zenoh
# 1.10 can remove a process's shared-memory pool while it is in use (a node
# started later then never hears from it; docs/several-machines.md): their
# processes use the socket, except where a test asks for shared memory.
export FLOTILLA_NO_SHARED_MEMORY=1
# Every test binary runs even when one fails, so that one failure cannot
# hide another; the run still fails if any test does.
phase ./scripts/cargo-each.sh test --locked --no-fail-fast
