#!/usr/bin/env bash
# Install tfrclab into ./.venv and run the main job, `tfrclab demo`: Floyd 2000 Fig. 2, one TFRC
# flow under changing periodic loss; prints a table and writes the figure under out/demo.
# Arguments are passed to `tfrclab demo` (e.g. --preset rfc5348).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install.sh
exec .venv/bin/tfrclab demo "$@"
