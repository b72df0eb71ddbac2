//! The committed C header is what cbindgen generates from the source: a function, struct or
//! doc comment changed without regenerating it fails here. `TFRC_UDP_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = dir.join("include/tfrc_udp.h");
    if std::env::var_os("TFRC_UDP_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: regenerate it with TFRC_UDP_BLESS=1 cargo test -p tfrc-udp-capi --test header",
        path.display()
    );
}
