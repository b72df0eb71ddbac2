#!/usr/bin/env bash
# Install tfrclab into ./.venv and run the main job: the example dumbbell scenario
# (scenarios/examples/dumbbell.toml) through `tfrclab run`, which prints the results tables and
# writes the Parquet results and figures (sending rates, queue length) under out/dumbbell.
# Arguments are passed to `tfrclab run` (e.g. --seed 2, --set topology.bottleneck.rate=30Mbps).
# `tfrclab demo` (Floyd 2000 Fig. 2 over the scripted channel) still works on its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install.sh
exec .venv/bin/tfrclab run scenarios/examples/dumbbell.toml --out out/dumbbell "$@"
