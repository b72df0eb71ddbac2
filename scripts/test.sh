#!/usr/bin/env bash
# The whole test suite, from a fresh clone: Rust formatting, lints and tests, then the Python
# package installed into .venv with its lints, type check and tests. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Property tests draw their cases from a fixed seed, so every run checks the same cases (override
# it, or raise PROPTEST_CASES, for a wider local search).
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20001}"

echo "== cargo fmt"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
# The bindings crate is a Python extension module (it links against the interpreter only when
# loaded), so its behaviour is tested from Python below.
cargo test --workspace --exclude tfrclab-py --locked
echo "== ns-2 (for the cross-check suite, tests/python/test_crosscheck.py)"
# The cross-check runs scenarios in ns-2.35 too. Debian packages it; install it when running as
# root and it is missing. Where it cannot be installed, the cross-check tests skip, saying why.
if ! command -v ns >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2) \
            >/dev/null 2>&1 || echo "ns-2 could not be installed: the cross-check tests will skip"
    else
        echo "ns-2 (ns) is not installed and cannot be installed here: the cross-check tests will skip"
    fi
fi
echo "== tshark (for the trace tests, tests/python/test_traces.py)"
# The trace tests open the simulator's pcap files in tshark with the TFRC Lua dissector. Install
# it like ns-2 when running as root; elsewhere those tests skip, saying why.
if ! command -v tshark >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        (apt-get update -qq && echo "wireshark-common wireshark-common/install-setuid boolean false" \
            | debconf-set-selections \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark) \
            >/dev/null 2>&1 || echo "tshark could not be installed: the trace tests will skip"
    else
        echo "tshark is not installed and cannot be installed here: the trace tests will skip"
    fi
fi
echo "== python"
bash scripts/test_python.sh
