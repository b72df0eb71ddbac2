#!/usr/bin/env bash
# Install tfrclab (the native module built with the release profile plus whole-program
# optimisation, Cargo profile `extension`) into ./.venv, creating it if missing.
# Usage: scripts/install.sh [EXTRA]   e.g. `dev` for the test tools. Safe to run again: it
# rebuilds only what changed. Needs only python3 (with venv) and a Rust toolchain.
#
# Profile-guided optimisation (PGO, docs/performance.md): where an llvm-profdata of rustc's LLVM
# version is at hand, the module is built twice: once instrumented, which runs the training
# scenarios of scripts/pgo/ (a few seconds) to learn which paths are hot, then again using that
# profile. The simulation loop runs about a tenth faster; results are the same bit for bit (the
# profile steers inlining and code layout, never arithmetic). llvm-profdata is looked for in
# rustup's llvm-tools component (added if rustup can fetch it), then as Debian's
# llvm-profdata-N (scripts/pgo/profdata.sh). Without one, or with TFRCLAB_PGO=0, the module is
# built once, without a profile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="$PWD/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
fi
extras=()
name="tfrclab"
if [[ $# -gt 0 ]]; then
    extras=(--extras "$1")
    name="tfrclab[$1]"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.16,<2'

# Builds the module with the RUSTFLAGS given and installs it into the venv (editable). With a
# second argument, TFRCLAB_PGO_BUILD is set while compiling: tfrclab._native.build() and
# `tfrclab --version` then say the build is profile-guided.
develop() {  # RUSTFLAGS [PGO]
    local pgo=()
    if [[ $# -gt 1 ]]; then
        pgo=("TFRCLAB_PGO_BUILD=1")
    fi
    env -u TFRCLAB_PGO_BUILD "${pgo[@]}" \
        VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
        RUSTFLAGS="$1" "$venv/bin/maturin" develop --profile extension --quiet "${extras[@]}" \
        --manifest-path crates/tfrclab-py/Cargo.toml >&2
}

# The PGO build: instrumented build (its own target directory, so both builds stay
# incremental), training, merged profile, optimised build. Returns non-zero if a step fails,
# leaving the caller to build without the profile.
build_with_profile() {  # LLVM-PROFDATA
    local profdata=$1 dir="$PWD/target/pgo"
    rm -rf "$dir/raw"
    mkdir -p "$dir/raw"
    echo "==> PGO 1/3: building $name instrumented" >&2
    CARGO_TARGET_DIR="$PWD/target/pgo-instrumented" \
        develop "-Cprofile-generate=$dir/raw" || return 1
    echo "==> PGO 2/3: training (scripts/pgo/train.py)" >&2
    LLVM_PROFILE_FILE="$dir/raw/%p-%m.profraw" "$venv/bin/python" scripts/pgo/train.py || return 1
    "$profdata" merge -o "$dir/merged.profdata" "$dir"/raw/*.profraw || return 1
    echo "==> PGO 3/3: building $name with the profile" >&2
    develop "-Cprofile-use=$dir/merged.profdata" pgo
}

if [[ "${TFRCLAB_PGO:-1}" != 0 ]]; then
    if profdata=$(bash scripts/pgo/profdata.sh); then
        if build_with_profile "$profdata"; then
            exit 0
        fi
        echo "==> PGO failed (above); building without a profile" >&2
    else
        echo "==> no llvm-profdata for rustc's LLVM (rustup component add llvm-tools, or" \
            "Debian's llvm-N): building without profile-guided optimisation" >&2
    fi
fi
echo "==> building and installing $name (release, whole-program optimised)" >&2
develop ""
