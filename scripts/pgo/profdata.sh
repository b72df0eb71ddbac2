#!/usr/bin/env bash
# Prints the path of an llvm-profdata that reads the profiles rustc writes (one of rustc's own
# LLVM major version), or nothing (exit status 1) if none is at hand. In order: the one named
# by TFRCLAB_LLVM_PROFDATA; rustup's llvm-tools component, if installed; Debian's
# llvm-profdata-N (package llvm-N); rustup's llvm-tools after adding it to the toolchain, if
# rustup can fetch it (the only step that may touch the network or the toolchain). Used by
# scripts/install.sh for the profile-guided build. With --llvm-major, prints only rustc's LLVM
# major version (the N of Debian's llvm-N, which scripts/test.sh installs where none is found).
set -euo pipefail

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
if [[ "${1:-}" == --llvm-major ]]; then
    [[ -n "$major" ]] && echo "$major"
    exit 0
fi

if [[ -n "${TFRCLAB_LLVM_PROFDATA:-}" ]]; then
    echo "$TFRCLAB_LLVM_PROFDATA"
    exit 0
fi
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
tool="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [[ -x "$tool" ]]; then
    echo "$tool"
elif [[ -n "$major" ]] && command -v "llvm-profdata-$major" >/dev/null 2>&1; then
    command -v "llvm-profdata-$major"
elif command -v rustup >/dev/null 2>&1 \
    && timeout 120 rustup component add llvm-tools >/dev/null 2>&1 && [[ -x "$tool" ]]; then
    echo "$tool"
else
    exit 1
fi
