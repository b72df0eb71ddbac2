#!/usr/bin/env bash
# Install tfrclab (the native module built with the release profile plus whole-program
# optimisation, Cargo profile `extension`) into ./.venv, creating it if missing.
# Usage: scripts/install.sh [EXTRA]   e.g. `dev` for the test tools. Safe to run again: it
# rebuilds only what changed. Needs only python3 (with venv) and a Rust toolchain.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
fi
extras=()
if [[ $# -gt 0 ]]; then
    extras=(--extras "$1")
fi
echo "==> building and installing tfrclab${1:+[$1]} (release, whole-program optimised)" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2'
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/maturin" develop --profile extension --quiet "${extras[@]}" \
    --manifest-path crates/tfrclab-py/Cargo.toml >&2
