#!/usr/bin/env bash
# Checks that zenoh's `plugins` feature, which only the bridge needs (to
# embed zenoh-plugin-ros2dds), is not compiled into the other binaries'
# zenoh when they are built apart (scripts/cargo-each.sh). (zenoh's
# `internal` feature is not checked: zenoh-ext's `unstable`, which the
# nodes' latched tf_static publisher needs, turns it on for them too.)
set -euo pipefail
cd "$(dirname "$0")/.."
zenoh_features() {
    cargo tree "$@" --edges normal,features --invert zenoh --locked --prefix none --format '{p} {f}' |
        grep -E '^zenoh v' | sort -u
}
nodes=$(zenoh_features --workspace --exclude flotilla-bridge)
bridge=$(zenoh_features --package flotilla-bridge)
has_plugins() { echo "$1" | grep -qE '[ ,]plugins(,|$)'; }
if has_plugins "$nodes"; then
    echo "zenoh has the bridge's plugins feature outside the bridge: $nodes" >&2
    exit 1
fi
if ! has_plugins "$bridge"; then
    echo "this check is wrong: the bridge's zenoh should have the plugins feature: $bridge" >&2
    exit 1
fi
echo "zenoh's plugins feature: only in the bridge ($nodes; bridge: $bridge)"
