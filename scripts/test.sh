#!/usr/bin/env bash
# The whole test suite, from a fresh clone: Rust formatting, lints and tests, then the Python
# package installed into .venv with its lints, type check and tests. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Property tests draw their cases from a fixed seed, so every run checks the same cases (override
# it, or raise PROPTEST_CASES, for a wider local search).
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20001}"

# Debian packages some suites need: installed when running as root and missing (CI runs as root on
# a fresh machine); where one cannot be installed, the tests that need it skip, saying why.
apt_updated=0
install_if_missing() {  # COMMAND-OR-FILE PACKAGE WHAT-NEEDS-IT
    local command=$1 package=$2 purpose=$3
    echo "== $package (for $purpose)"
    { command -v "$command" || [ -e "$command" ]; } >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        if [ "$apt_updated" = 0 ]; then
            apt-get update -qq >/dev/null 2>&1 || true
            apt_updated=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1 \
            || echo "$package could not be installed: $purpose will skip"
    else
        echo "$package ($command) is not installed and cannot be installed here: $purpose will skip"
    fi
}
# ns-2.35: the cross-check runs scenarios in ns-2 too.
install_if_missing ns ns2 "the ns-2 cross-check (tests/python/test_crosscheck.py)"
# Headless Chromium: the reproduction report is checked in a real browser (screenshot and DOM).
install_if_missing chromium chromium "the report rendering test (tests/python/test_reproduce_html.py)"
# ip: the link-emulator testbed creates network namespaces (its tests also need root and TUN).
install_if_missing ip iproute2 "the testbed tests (tests/python/test_testbed.py)"
# tshark: the trace tests open the simulator's pcap files with the TFRC Lua dissector (declining
# the setuid question the package would otherwise ask).
if [ "$(id -u)" = 0 ] && command -v debconf-set-selections >/dev/null 2>&1; then
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
fi
install_if_missing tshark tshark "the trace tests (tests/python/test_traces.py)"
# tcpdump: the testbed experiments record a pcap of each run inside the sending namespace.
# make: the C API's example is built with make (crates/tfrc-udp-capi/tests/c_example.rs, run by
# cargo test below, and the testbed run in tests/python/test_media_example.py).
install_if_missing make make "the C media example (crates/tfrc-udp-capi/examples/c)"
install_if_missing tcpdump tcpdump "the testbed experiments' pcaps (tests/python/test_testbed_experiments.py)"
# ns-3.37 and a C++ compiler: the second opinion on netsim's Linux TCPs compiles a small ns-3
# program (scripts/ns3_second_opinion.py).
install_if_missing g++ g++ "the ns-3 second opinion (tests/python/test_ns3_second_opinion.py)"
install_if_missing /usr/include/ns3/core-module.h libns3-dev \
    "the ns-3 second opinion (tests/python/test_ns3_second_opinion.py)"
echo "== cargo fmt"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
# The bindings crate is a Python extension module (it links against the interpreter only when
# loaded), so its behaviour is tested from Python below.
cargo test --workspace --exclude tfrclab-py --locked
# tfrc-udp's optional event log (feature `tracing`): its lints, its test and its doctest.
echo "== tfrc-udp --features tracing"
cargo clippy -p tfrc-udp --all-targets --features tracing --locked -- -D warnings
cargo test -p tfrc-udp --features tracing --locked --test events
cargo test -p tfrc-udp --features tracing --locked --doc
# The crates an application can depend on must package, and build from their packaged form
# alone with the versions crates.io resolves (no path dependency, no file outside the crate).
echo "== cargo publish --dry-run (tfrc, tfrc-udp)"
cargo publish --dry-run --allow-dirty --locked -p tfrc -p tfrc-udp
# Their minimum supported Rust version (the workspace's rust-version), with that toolchain: the
# libraries, as a dependent builds them (their tests' dev-dependencies need a newer Rust).
msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
echo "== MSRV: Rust $msrv (tfrc, tfrc-udp)"
if command -v rustup >/dev/null 2>&1 \
    && rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1; then
    CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check --locked -p tfrc -p tfrc-udp --lib \
        --features tfrc-udp/tracing
else
    echo "rustup cannot install Rust $msrv here: the MSRV check is skipped"
fi
# llvm-profdata of rustc's LLVM version, for the profile-guided build that the tests then run
# (scripts/install.sh): rustup's llvm-tools where rustup can fetch it, else Debian's llvm-N.
# Where one is found, the build must succeed profile-guided (TFRCLAB_PGO=require): a broken
# training or profile fails the run instead of passing quietly on a plain build.
echo "== llvm-profdata (for the profile-guided build, scripts/install.sh)"
if ! profdata=$(bash scripts/pgo/profdata.sh); then
    llvm_major=$(bash scripts/pgo/profdata.sh --llvm-major)
    if [[ -n "$llvm_major" ]]; then
        install_if_missing "llvm-profdata-$llvm_major" "llvm-$llvm_major" \
            "the profile-guided build (without it the tests run a plain build)"
    fi
    profdata=$(bash scripts/pgo/profdata.sh) || profdata=""
fi
if [[ -n "$profdata" ]]; then
    export TFRCLAB_LLVM_PROFDATA="$profdata"
    export TFRCLAB_PGO="${TFRCLAB_PGO:-require}"
else
    echo "no llvm-profdata for rustc's LLVM: the tests run a plain build"
fi
echo "== python"
bash scripts/test_python.sh
