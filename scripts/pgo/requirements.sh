#!/usr/bin/env bash
# Prints the runtime dependencies of pyproject.toml ([project] dependencies), one requirement per
# line: scripts/install.sh installs them before the PGO training, which imports the package
# before maturin has installed it. Reads the list as pyproject.toml writes it, one quoted
# requirement per line (tests/python/test_pgo_training.py checks it against a TOML parser).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
sed -n '/^dependencies = \[/,/^\]/p' pyproject.toml | sed -n 's/^ *"\(.*\)",\{0,1\}$/\1/p'
