#!/usr/bin/env bash
# Installs, on Debian, what building and testing Flotilla needs and the
# machine lacks. Safe to run again: it installs nothing that is present.
set -euo pipefail

missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)   # C toolchain for -sys crates
command -v pgrep >/dev/null 2>&1 || missing+=(procps)         # the launcher tests find processes with pgrep
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)

if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "Flotilla needs a Rust toolchain (cargo); install it with rustup first." >&2
    exit 1
fi
