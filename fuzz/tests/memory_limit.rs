//! The scenario fuzzer under a 2 GB address-space limit (`ulimit -v`): no scenario it generates
//! may make checking or a short run reserve memory it cannot have, which would abort the process
//! instead of refusing the file. A short seeded run keeps this quick; `cargo run --release -p
//! tfrc-fuzz` runs longer ones.

use std::process::Command;

#[test]
fn the_scenario_fuzzer_runs_within_2_gb_of_address_space() {
    let fuzzer = env!("CARGO_BIN_EXE_tfrc-fuzz");
    let script = format!(
        "ulimit -v 2000000 && exec '{fuzzer}' --target scenario --iterations 1500 --seed 20001"
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("sh runs");
    assert!(
        output.status.success(),
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
