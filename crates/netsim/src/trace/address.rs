//! How simulated endpoints become IPv4 addresses and UDP/TCP ports in packet captures, and
//! addresses in ns-2 traces. The mapping is fixed so that a capture can be read without the
//! scenario at hand (documented in `docs/traces.md`):
//!
//! - node `n` is `10.0.0.0 + n + 1` (node 0 is 10.0.0.1, node 255 is 10.0.1.0, ...);
//! - a TFRC flow `f` sends from UDP port `37100 + f mod 4000` to UDP port `50000 + f mod
//!   4000`, so every TFRC packet has one port in [`TFRC_PORTS`], the range the Wireshark
//!   dissector registers;
//! - a TCP flow `f` (or connection `c` of a web or short-TCP flow) sends from TCP port
//!   `32600 + c mod 2300` to TCP port `41200 + f mod 3000`;
//! - every other flow (CBR, ON/OFF, RAP, TEAR, ping) sends from UDP port `37100 + f mod 4000`
//!   to UDP port `41200 + f mod 3000`.
//!
//! The ranges are ones Wireshark 4 registers no dissector on (`tshark -G decodes`), so the
//! zeros padding simulated payloads are shown as data rather than decoded as some protocol
//! that happens to own a port.

use std::net::Ipv4Addr;
use std::ops::RangeInclusive;

/// The UDP ports of TFRC receivers: the range the Wireshark dissector registers on.
pub const TFRC_PORTS: RangeInclusive<u16> = 50_000..=53_999;
/// How many flows get distinct TFRC receiver ports (and UDP source ports).
const TFRC_SPAN: u32 = 4000;
/// How many flows get distinct TCP and UDP receiver ports outside TFRC.
const SINK_SPAN: u32 = 3000;
/// The first receiver port of TCP and non-TFRC UDP flows.
const SINK_BASE: u16 = 41_200;
/// The first UDP source port.
const UDP_SOURCE_BASE: u16 = 37_100;
/// The first TCP source port, and how many connections get distinct ones.
const TCP_SOURCE_BASE: u16 = 32_600;
const TCP_SOURCE_SPAN: u32 = 2300;

/// The most nodes the address plan covers: 10.0.0.1 up to 10.255.255.254.
pub const MAX_NODES: u32 = (1 << 24) - 2;

/// The IPv4 address of node `node`: `10.0.0.0 + node + 1` (wrapping inside 10/8 beyond
/// [`MAX_NODES`], which the trace builder refuses).
pub fn node_ipv4(node: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x0A00_0000 | (node.wrapping_add(1) & 0x00FF_FFFF))
}

/// The sending port of flow `flow`'s source for UDP-carried protocols.
pub fn udp_source_port(flow: u32) -> u16 {
    UDP_SOURCE_BASE + (flow % TFRC_SPAN) as u16
}

/// The receiving port of flow `flow`'s sink: in [`TFRC_PORTS`] for TFRC, else 41200 + f mod
/// 3000.
pub fn sink_port(flow: u32, tfrc: bool) -> u16 {
    if tfrc {
        TFRC_PORTS.start() + (flow % TFRC_SPAN) as u16
    } else {
        SINK_BASE + (flow % SINK_SPAN) as u16
    }
}

/// The sending port of TCP connection `conn` (0 for a plain TCP flow).
pub fn tcp_source_port(conn: u32) -> u16 {
    TCP_SOURCE_BASE + (conn % TCP_SOURCE_SPAN) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_map_to_distinct_ten_slash_eight_addresses() {
        assert_eq!(node_ipv4(0), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(node_ipv4(254), Ipv4Addr::new(10, 0, 0, 255));
        assert_eq!(node_ipv4(255), Ipv4Addr::new(10, 0, 1, 0));
        assert_eq!(node_ipv4(MAX_NODES - 1), Ipv4Addr::new(10, 255, 255, 254));
    }

    #[test]
    fn tfrc_sinks_use_the_dissector_range_and_others_do_not() {
        for flow in [0, 1, 9_999, 10_000, 123_456] {
            assert!(TFRC_PORTS.contains(&sink_port(flow, true)));
            assert!(!TFRC_PORTS.contains(&sink_port(flow, false)));
            assert!(!TFRC_PORTS.contains(&udp_source_port(flow)));
        }
        assert_eq!(tcp_source_port(0), 32_600);
        assert_eq!(tcp_source_port(2300), 32_600);
        assert_eq!(sink_port(2999, false), 44_199);
        assert_eq!(udp_source_port(3999), 41_099);
    }
}
