#!/usr/bin/env bash
# Install tfrclab into ./.venv (created if missing) and run the main job, `tfrclab demo`:
# Floyd 2000 Fig. 2, one TFRC flow under changing periodic loss; prints a table and writes the
# figure under out/demo. Arguments are passed to `tfrclab demo` (e.g. --preset rfc5348).
# Needs only python3 (with venv) and a Rust toolchain; safe to run again (it rebuilds what changed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
fi
echo "==> building and installing tfrclab (release)" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2'
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/maturin" develop --release --quiet --manifest-path crates/tfrclab-py/Cargo.toml \
    >&2

exec "$venv/bin/tfrclab" demo "$@"
