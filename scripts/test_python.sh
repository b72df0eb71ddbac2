#!/usr/bin/env bash
# Install tfrclab with its dev extra into ./.venv (created if missing), then run the Python
# checks: ruff (lint and format), mypy --strict, stubtest of the extension module, and pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install.sh dev
venv="$PWD/.venv"

echo "==> ruff check" >&2
"$venv/bin/ruff" check python tests/python scripts docs/examples
echo "==> ruff format --check" >&2
"$venv/bin/ruff" format --check python tests/python scripts docs/examples
echo "==> mypy --strict" >&2
"$venv/bin/mypy" python/tfrclab
echo "==> stubtest tfrclab._native" >&2
"$venv/bin/python" -m mypy.stubtest tfrclab._native
echo "==> pytest (with the docstring examples)" >&2
# Docstring examples are tests too (--doctest-modules over the package).
"$venv/bin/python" -m pytest -q --doctest-modules python/tfrclab tests/python
