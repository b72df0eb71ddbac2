#!/usr/bin/env bash
# Install tfrclab with its dev extra into ./.venv (created if missing), then run the Python
# checks: ruff (lint and format), mypy --strict, stubtest of the extension module, and pytest.
# Needs only python3 (with venv) and a Rust toolchain; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
fi
echo "==> building and installing tfrclab[dev] (release)" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2'
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/maturin" develop --release --quiet --extras dev \
    --manifest-path crates/tfrclab-py/Cargo.toml >&2

echo "==> ruff check" >&2
"$venv/bin/ruff" check python tests/python
echo "==> ruff format --check" >&2
"$venv/bin/ruff" format --check python tests/python
echo "==> mypy --strict" >&2
"$venv/bin/mypy" python/tfrclab
echo "==> stubtest tfrclab._native" >&2
"$venv/bin/python" -m mypy.stubtest tfrclab._native
echo "==> pytest" >&2
"$venv/bin/python" -m pytest -q tests/python
