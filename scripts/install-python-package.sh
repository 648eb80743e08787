#!/usr/bin/env bash
# Builds the flotilla Python package from this checkout (python/, a PyO3
# extension built by maturin, which pip fetches from PyPI) and installs it,
# with the Gymnasium and PettingZoo extras, into the Python on PATH. The
# build reuses python/target: a few seconds after the first (~2 min).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "./python[gym]"
