#!/usr/bin/env bash
# Prints the path of an llvm-profdata that reads the profiles rustc writes (one of rustc's own
# LLVM major version), or nothing (exit status 1) if none is at hand. Looks in rustup's
# llvm-tools component first, adding it if rustup can fetch it, then for Debian's
# llvm-profdata-N (package llvm-N). Used by scripts/install.sh for the profile-guided build.
set -euo pipefail

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
tool="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [[ ! -x "$tool" ]] && command -v rustup >/dev/null 2>&1; then
    timeout 120 rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [[ -x "$tool" ]]; then
    echo "$tool"
elif [[ -n "$major" ]] && command -v "llvm-profdata-$major" >/dev/null 2>&1; then
    command -v "llvm-profdata-$major"
else
    exit 1
fi
