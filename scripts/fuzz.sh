#!/usr/bin/env bash
# Runs every fuzz target under libFuzzer (cargo-fuzz, nightly toolchain) for
# SECONDS each (default 600), growing the corpora in fuzz/corpus/, and
# minimises each corpus afterwards. Crashes land in fuzz/artifacts/<target>/.
#   ./scripts/fuzz.sh [SECONDS] [TARGET...]
# See FUZZING.md. The test suite runs the committed corpora on stable
# (fuzzing/tests/corpora.rs); this script is for fuzzing itself.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzzing needs a nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
fi
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s"
    cargo +nightly fuzz run --fuzz-dir fuzz "$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=10 -print_final_stats=1
    cargo +nightly fuzz cmin --fuzz-dir fuzz "$target" "fuzz/corpus/$target"
done
