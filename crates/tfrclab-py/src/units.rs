//! netsim's unit parsers, so that Python reads `"10ms"`, `"15Mbps"` and `"1000B"` exactly as the
//! scenario checker does (sweep parameters are typed and sorted by these values).

use pyo3::prelude::*;

use netsim::scenario::{parse_duration, parse_rate, parse_size};

/// The quantity `text` names, as netsim reads it: `("duration", seconds)`, `("rate", bits per
/// second)` or `("size", bytes)`; `None` when it is none of them.
#[pyfunction]
pub(crate) fn quantity(text: &str) -> Option<(&'static str, f64)> {
    if let Ok(duration) = parse_duration(text) {
        return Some(("duration", duration.as_secs_f64()));
    }
    if let Ok(rate) = parse_rate(text) {
        return Some(("rate", rate.bps as f64));
    }
    parse_size(text)
        .ok()
        .map(|size| ("size", size.bytes as f64))
}
