#!/usr/bin/env bash
# Runs `cargo COMMAND ARGS...` twice: on every crate but the bridge, then on
# the bridge alone, e.g. `./scripts/cargo-each.sh build --release --bins`.
#
# Why: the bridge embeds zenoh-plugin-ros2dds, which takes zenoh with its
# `plugins` feature and its default features (every transport: QUIC, TLS,
# WebSocket, UDP, Unix sockets, compression). Cargo unifies a dependency's
# features over everything one invocation builds, so building the whole
# workspace at once would compile all of that into every node's zenoh.
# Apart, the nodes' zenoh has only what the workspace asks for (TCP); the
# cost is zenoh compiled twice, once per feature set.
#
# Both invocations run even when the first fails, so that one failure cannot
# hide another; the exit status is non-zero if either failed.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    echo "usage: $0 CARGO_COMMAND [ARGS...]" >&2
    exit 2
fi
command=$1
shift
status=0
cargo "$command" --workspace --exclude flotilla-bridge "$@" || status=$?
cargo "$command" --package flotilla-bridge "$@" || status=$?
exit "$status"
