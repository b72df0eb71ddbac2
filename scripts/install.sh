#!/usr/bin/env bash
# Install tfrclab (the native module built with the release profile plus whole-program
# optimisation, Cargo profile `extension`) into ./.venv, creating it if missing.
# Usage: scripts/install.sh [EXTRA]   e.g. `dev` for the test tools. Safe to run again: with
# nothing changed it rebuilds nothing. Needs only python3 (with venv) and a Rust toolchain.
#
# Profile-guided optimisation (PGO, docs/performance.md): where an llvm-profdata of rustc's LLVM
# version is at hand (scripts/pgo/profdata.sh: rustup's llvm-tools component, which it adds to
# the toolchain if rustup can fetch it, or Debian's llvm-profdata-N), the module is first built
# instrumented on the side (target/pgo-instrumented; the installed module is not touched), run
# on the training scenarios of scripts/pgo/ (a few seconds) to learn which paths are hot, and
# then built and installed using that profile. The simulation loop runs about a tenth faster;
# results are the same bit for bit (the profile steers inlining and code layout, never
# arithmetic). A changed profile rebuilds every crate, so a code change costs about twice the
# build time it did. TFRCLAB_PGO: unset or 1, PGO where possible, else a plain build (saying
# why); 0 (or no, false, off), a plain build; require, PGO or fail (scripts/test.sh).
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

# The user's Rust flags (CARGO_ENCODED_RUSTFLAGS, else RUSTFLAGS split on spaces) plus FLAG, as
# CARGO_ENCODED_RUSTFLAGS wants them: separated by 0x1f, so a path with spaces stays one flag.
encoded_flags() {  # FLAG
    local sep=$'\x1f' base="${CARGO_ENCODED_RUSTFLAGS:-}"
    if [[ -z "$base" ]]; then
        local -a words
        read -r -a words <<<"${RUSTFLAGS:-}"
        base=$(IFS="$sep"; printf '%s' "${words[*]}")
    fi
    printf '%s' "${base:+$base$sep}$1"
}

# Builds the module and installs it into the venv (editable). With LABEL and flags, they are
# the build's CARGO_ENCODED_RUSTFLAGS and TFRCLAB_PGO_BUILD (what tfrclab._native.build() and
# `tfrclab --version` report); without, the user's flags apply unchanged.
develop() {  # [LABEL ENCODED-RUSTFLAGS]
    local build=()
    if [[ $# -gt 0 ]]; then
        build=("TFRCLAB_PGO_BUILD=$1" "CARGO_ENCODED_RUSTFLAGS=$2")
    fi
    env -u TFRCLAB_PGO_BUILD "${build[@]}" \
        VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
        "$venv/bin/maturin" develop --profile extension --quiet "${extras[@]}" \
        --manifest-path crates/tfrclab-py/Cargo.toml >&2
}

# The PGO build. Returns non-zero if a step fails, leaving the caller to decide.
build_with_profile() {  # LLVM-PROFDATA
    local profdata=$1 dir="$PWD/target/pgo"
    echo "==> PGO 1/3: building the module instrumented (target/pgo-instrumented)" >&2
    # Build scripts and proc macros are instrumented too; their profiles go to stray/, apart
    # from the training's.
    TFRCLAB_PGO_BUILD=instrumented PYO3_PYTHON="$venv/bin/python" \
        CARGO_TARGET_DIR="$PWD/target/pgo-instrumented" \
        CARGO_ENCODED_RUSTFLAGS=$(encoded_flags "-Cprofile-generate=$dir/stray") \
        cargo build --profile extension -p tfrclab-py --locked --quiet || return 1
    # Profiles differ a little from run to run (the Python side), and every crate's build
    # depends on the profile file: train again only when the instrumented module or the
    # training changed, so that a run with nothing changed rebuilds nothing.
    local module="$PWD/target/pgo-instrumented/extension/lib_native.so" stamp
    stamp=$( (cat "$module" && find -L scripts/pgo scenarios -type f \( -name '*.toml' -o \
        -name '*.py' \) -print0 | sort -z | xargs -0 cat) | sha256sum | cut -d' ' -f1) || return 1
    if [[ -f "$dir/merged.profdata" && "$(cat "$dir/stamp" 2>/dev/null)" == "$stamp" ]]; then
        echo "==> PGO 2/3: the profile of $(cut -c1-12 <<<"$stamp") is current" >&2
    else
        # The package with the instrumented module, on the side: nothing else imports it.
        rm -rf "$dir/python" "$dir/raw" "$dir/stamp"
        mkdir -p "$dir/python" "$dir/raw"
        cp -R python/tfrclab "$dir/python/" || return 1
        cp "$module" "$dir/python/tfrclab/_native.abi3.so" || return 1
        echo "==> PGO 2/3: training (scripts/pgo/train.py)" >&2
        # The training imports the package's dependencies, which maturin installs only with
        # the module (step 3): on a fresh venv, install them first.
        local -a requirements
        mapfile -t requirements < <(bash scripts/pgo/requirements.sh)
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "${requirements[@]}" || return 1
        PYTHONPATH="$dir/python" LLVM_PROFILE_FILE="$dir/raw/train-%p-%m.profraw" \
            TFRCLAB_TRAIN_BUILD=instrumented "$venv/bin/python" scripts/pgo/train.py || return 1
        "$profdata" merge -o "$dir/merged.profdata" "$dir"/raw/train-*.profraw || return 1
        echo "$stamp" >"$dir/stamp"
    fi
    echo "==> PGO 3/3: building and installing $name with the profile" >&2
    develop profile-guided "$(encoded_flags "-Cprofile-use=$dir/merged.profdata")"
}

pgo="${TFRCLAB_PGO:-1}"
case "$pgo" in
    0 | no | false | off) ;;
    *)
        if profdata=$(bash scripts/pgo/profdata.sh); then
            if build_with_profile "$profdata"; then
                exit 0
            fi
            why="a step failed (above)"
        else
            why="no llvm-profdata for rustc's LLVM"
            why+=" (rustup component add llvm-tools, or Debian's llvm-N)"
        fi
        if [[ "$pgo" == require ]]; then
            echo "==> TFRCLAB_PGO=require, but the profile-guided build failed: $why" >&2
            exit 1
        fi
        echo "==> no profile-guided build: $why" >&2
        ;;
esac
echo "==> building and installing $name (release, whole-program optimised)" >&2
develop
