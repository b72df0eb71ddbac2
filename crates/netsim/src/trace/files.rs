//! Opening the trace files a run asks for: one pcap file per traced link in a directory, named
//! after the link, and one ns-2 trace file. Every failure is a [`TraceFileError`] naming the
//! file and the reason, found before the run starts.

use std::fmt;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::{Taps, TraceOutput};
use crate::topology::{LinkId, Topology};

/// Bytes buffered per trace file before a write reaches the disk.
const BUFFER_BYTES: usize = 64 * 1024;

/// A trace file that could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFileError {
    /// The file or directory.
    pub path: PathBuf,
    /// Why (the operating system's message).
    pub reason: String,
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for TraceFileError {}

/// The file name of link `name`'s capture: the name with every character outside
/// `[A-Za-z0-9._-]` replaced by `_`, then `.pcap`.
pub fn pcap_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.pcap")
}

fn create(path: &Path) -> Result<TraceOutput, TraceFileError> {
    let file = File::create(path).map_err(|e| TraceFileError {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(Box::new(BufWriter::with_capacity(BUFFER_BYTES, file)))
}

/// Opens the traces: a pcap file in `pcap.0` (created if missing) for each link of `pcap.1`,
/// and the ns-2 trace file `ns2.0` for the links of `ns2.1`; each link capped at `limit`.
pub fn open(
    topology: &Topology,
    pcap: Option<(&Path, &[LinkId])>,
    ns2: Option<(&Path, &[LinkId])>,
    limit: u64,
) -> Result<Taps, TraceFileError> {
    let mut taps = Taps::new(topology.links().len(), limit);
    if let Some((dir, links)) = pcap {
        fs::create_dir_all(dir).map_err(|e| TraceFileError {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        for &link in links {
            let name = &topology.link(link).name;
            let path = dir.join(pcap_file_name(name));
            let out = create(&path)?;
            let label = path.display().to_string();
            taps.add_pcap(link.0 as usize, name, label, out)
                .map_err(|e| TraceFileError {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
        }
    }
    if let Some((path, links)) = ns2 {
        let out = create(path)?;
        let links: Vec<(usize, &str, u32, u32)> = links
            .iter()
            .map(|&id| {
                let spec = topology.link(id);
                (id.0 as usize, spec.name.as_str(), spec.from.0, spec.to.0)
            })
            .collect();
        taps.set_ns2(path.display().to_string(), out, &links);
    }
    Ok(taps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_names_become_safe_file_names() {
        assert_eq!(pcap_file_name("r0-r1"), "r0-r1.pcap");
        assert_eq!(pcap_file_name("a/b c"), "a_b_c.pcap");
    }

    #[test]
    fn an_unwritable_directory_is_a_clear_error() {
        let topology = Topology::new();
        let file = std::env::temp_dir().join(format!("netsim-trace-{}", std::process::id()));
        fs::write(&file, b"x").unwrap();
        // A directory below a regular file cannot be created.
        let dir = file.join("pcaps");
        let err = open(&topology, Some((&dir, &[])), None, 10).unwrap_err();
        assert_eq!(err.path, dir);
        assert!(err.to_string().starts_with("cannot write "));
        fs::remove_file(&file).unwrap();
    }
}
