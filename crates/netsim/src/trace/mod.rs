//! Packet traces written to disk while a run goes, for the tools users already have: a pcap
//! file per traced link for Wireshark and tshark ([`pcap`], with real IPv4/TCP/UDP headers
//! from [`frame`]), and one ns-2 trace file for the traced links, for the awk and Perl
//! scripts written against ns-2 ([`ns2`]). Both are opt-in and capped per link
//! ([`DEFAULT_LIMIT`]): once a link's cap is hit its further packets are counted, not written,
//! and the run's [`TraceSummary`] says so. Writing is streamed through buffered writers; the
//! traces never change what the simulation does.
//!
//! - [`address`]: node ids to IPv4 addresses, flows to ports;
//! - [`frame`]: the bytes of a packet;
//! - [`pcap`]: the pcap file writer;
//! - [`ns2`]: ns-2's trace line format;
//! - [`files`]: opening the files a scenario asks for.

pub mod address;
pub mod files;
pub mod frame;
pub mod ns2;
pub mod pcap;

use std::io::Write;

use tfrc::Time;

use crate::agent::tcp::TcpVariant;
use crate::agent::AgentConfig;
use crate::packet::Packet;
use crate::sim::FlowSetup;
use frame::FlowAddressing;
use ns2::{Ns2Event, Ns2Flow};
use pcap::PcapWriter;

/// The default cap per traced link: packets in its pcap file, events in the ns-2 trace
/// (about 100 MB of pcap at 1000-byte packets, 7 MB of ns-2 trace).
pub const DEFAULT_LIMIT: u64 = 100_000;

/// A destination for trace bytes (a buffered file, or memory in tests).
pub type TraceOutput = Box<dyn Write + Send + Sync>;

/// Which format a trace is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A pcap capture of one link.
    Pcap,
    /// ns-2's trace format.
    Ns2,
}

/// What a trace wrote over the run, per traced link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    /// The format.
    pub kind: TraceKind,
    /// Where it was written (a path, or a label given by the caller).
    pub path: String,
    /// The link's name.
    pub link: String,
    /// Packets (pcap) or events (ns-2) written for the link.
    pub written: u64,
    /// Packets or events not written because the link's cap was reached.
    pub over_limit: u64,
    /// The cap.
    pub limit: u64,
    /// The first write error, after which the file was left as it was.
    pub error: Option<String>,
}

/// Per-link counters of one trace.
#[derive(Debug)]
struct LinkCount {
    name: String,
    written: u64,
    over_limit: u64,
}

impl LinkCount {
    /// Counts one record; `false` once the cap is reached (the record is then not written).
    fn admit(&mut self, limit: u64) -> bool {
        if self.written < limit {
            self.written += 1;
            true
        } else {
            self.over_limit += 1;
            false
        }
    }
}

#[derive(Debug)]
struct PcapTap {
    path: String,
    writer: PcapWriter<TraceOutput>,
    count: LinkCount,
    error: Option<String>,
}

struct Ns2Tap {
    path: String,
    out: TraceOutput,
    /// Per link index: its endpoints and counters when traced.
    links: Vec<Option<(u32, u32, LinkCount)>>,
    error: Option<String>,
}

impl std::fmt::Debug for Ns2Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ns2Tap").field("path", &self.path).finish()
    }
}

/// The traces of one run: the engine calls the `on_*` hooks for every link event; links without
/// a trace cost one lookup.
#[derive(Debug)]
pub struct Taps {
    limit: u64,
    pcaps: Vec<Option<PcapTap>>,
    ns2: Option<Ns2Tap>,
    flows: Vec<(FlowAddressing, Ns2Flow)>,
    scratch: Vec<u8>,
}

impl Taps {
    /// No traces yet, for a topology of `links` links, each capped at `limit` records.
    pub fn new(links: usize, limit: u64) -> Taps {
        Taps {
            limit,
            pcaps: (0..links).map(|_| None).collect(),
            ns2: None,
            flows: Vec::new(),
            scratch: Vec::with_capacity(2048),
        }
    }

    /// Captures link `link` (named `name`) into `out`, a pcap stream labelled `path`; writes
    /// the pcap header now.
    pub fn add_pcap(
        &mut self,
        link: usize,
        name: &str,
        path: String,
        out: TraceOutput,
    ) -> std::io::Result<()> {
        let writer = PcapWriter::new(out)?;
        if let Some(slot) = self.pcaps.get_mut(link) {
            *slot = Some(PcapTap {
                path,
                writer,
                count: LinkCount {
                    name: name.to_string(),
                    written: 0,
                    over_limit: 0,
                },
                error: None,
            });
        }
        Ok(())
    }

    /// Writes the ns-2 trace of `links` (index, name, from node, to node) into `out`.
    pub fn set_ns2(&mut self, path: String, out: TraceOutput, links: &[(usize, &str, u32, u32)]) {
        let mut slots: Vec<Option<(u32, u32, LinkCount)>> =
            (0..self.pcaps.len()).map(|_| None).collect();
        for &(index, name, from, to) in links {
            if let Some(slot) = slots.get_mut(index) {
                let count = LinkCount {
                    name: name.to_string(),
                    written: 0,
                    over_limit: 0,
                };
                *slot = Some((from, to, count));
            }
        }
        self.ns2 = Some(Ns2Tap {
            path,
            out,
            links: slots,
            error: None,
        });
    }

    /// Sets what the frames need about each flow, in flow order: its nodes, its TCP segment
    /// size and SYN, its ON/OFF distribution. The engine calls it when the taps are attached.
    pub fn set_flows(&mut self, flows: &[FlowSetup]) {
        let n = flows.len() as u32;
        self.flows = flows
            .iter()
            .enumerate()
            .map(|(i, setup)| {
                let flow = i as u32;
                let tcp = match &setup.agent {
                    AgentConfig::Tcp(c) => Some(*c),
                    AgentConfig::Gaimd(c) => Some(c.tcp()),
                    AgentConfig::ControlledTcp(c) => Some(c.tcp),
                    AgentConfig::ShortTcp(c) => Some(c.tcp),
                    AgentConfig::Web(c) => Some(c.tcp),
                    _ => None,
                };
                let (from, to) = (setup.from.0, setup.to.0);
                let onoff_name = if setup.agent.kind() == "pareto" {
                    "pareto"
                } else {
                    "exp"
                };
                (
                    FlowAddressing {
                        flow,
                        from,
                        to,
                        mss: tcp.map_or(1, |c| {
                            c.data_packet_bytes().saturating_sub(c.header_bytes).max(1)
                        }),
                        // ns-2's Vegas sends packet 0 as a full data packet even with a
                        // SYN (`sender.rs`, `packet_bytes`): number it as data.
                        syn: tcp.is_some_and(|c| c.syn && c.variant != TcpVariant::Vegas),
                        data_options: tcp
                            .map_or(0, |c| FlowAddressing::data_options_for(c.header_bytes)),
                    },
                    Ns2Flow {
                        flow,
                        from,
                        to,
                        onoff_name,
                        flows: n,
                    },
                )
            })
            .collect();
    }

    /// Whether link `link` has any trace (so the engine can skip work for the others).
    pub fn traces(&self, link: usize) -> bool {
        self.pcaps.get(link).is_some_and(Option::is_some)
            || self
                .ns2
                .as_ref()
                .is_some_and(|t| t.links.get(link).is_some_and(Option::is_some))
    }

    /// The packet is offered to the link (ns-2 `+`).
    pub fn on_offer(&mut self, now: Time, link: usize, packet: &Packet) {
        self.ns2_line(Ns2Event::Enqueue, now, link, packet);
    }

    /// The link or its loss model dropped the packet (ns-2 `d`).
    pub fn on_drop(&mut self, now: Time, link: usize, packet: &Packet) {
        self.ns2_line(Ns2Event::Drop, now, link, packet);
    }

    /// The link starts transmitting the packet (ns-2 `-`; the pcap record, as a capture at the
    /// sending interface sees it).
    pub fn on_transmit(&mut self, now: Time, link: usize, packet: &Packet) {
        self.ns2_line(Ns2Event::Dequeue, now, link, packet);
        let Some(Some(tap)) = self.pcaps.get_mut(link) else {
            return;
        };
        if tap.error.is_some() || !tap.count.admit(self.limit) {
            return;
        }
        let Some((addressing, _)) = self.flows.get(packet.flow.0 as usize) else {
            return;
        };
        let wire_len = frame::build(packet, addressing, &mut self.scratch);
        if let Err(error) = tap.writer.write(now, &self.scratch, wire_len) {
            tap.error = Some(error.to_string());
        }
    }

    /// The packet reaches the link's far end (ns-2 `r`).
    pub fn on_receive(&mut self, now: Time, link: usize, packet: &Packet) {
        self.ns2_line(Ns2Event::Receive, now, link, packet);
    }

    fn ns2_line(&mut self, event: Ns2Event, now: Time, link: usize, packet: &Packet) {
        let Some(tap) = &mut self.ns2 else {
            return;
        };
        let Some(Some((from, to, count))) = tap.links.get_mut(link) else {
            return;
        };
        if tap.error.is_some() || !count.admit(self.limit) {
            return;
        }
        let Some((_, flow)) = self.flows.get(packet.flow.0 as usize) else {
            return;
        };
        // Format into memory first: one write per line through the boxed writer.
        self.scratch.clear();
        let written = ns2::write_line(&mut self.scratch, event, now, *from, *to, packet, flow)
            .and_then(|()| tap.out.write_all(&self.scratch));
        if let Err(error) = written {
            tap.error = Some(error.to_string());
        }
    }

    /// Flushes every file and says what each trace wrote.
    pub fn finish(self) -> Vec<TraceSummary> {
        let limit = self.limit;
        let mut out = Vec::new();
        for mut tap in self.pcaps.into_iter().flatten() {
            if let (None, Err(error)) = (&tap.error, tap.writer.flush()) {
                tap.error = Some(error.to_string());
            }
            out.push(TraceSummary {
                kind: TraceKind::Pcap,
                path: tap.path,
                link: tap.count.name,
                written: tap.count.written,
                over_limit: tap.count.over_limit,
                limit,
                error: tap.error,
            });
        }
        if let Some(mut tap) = self.ns2 {
            if let (None, Err(error)) = (&tap.error, tap.out.flush()) {
                tap.error = Some(error.to_string());
            }
            for (_, _, count) in tap.links.into_iter().flatten() {
                out.push(TraceSummary {
                    kind: TraceKind::Ns2,
                    path: tap.path.clone(),
                    link: count.name,
                    written: count.written,
                    over_limit: count.over_limit,
                    limit,
                    error: tap.error.clone(),
                });
            }
        }
        out
    }
}
