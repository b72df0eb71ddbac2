//! The agent interface: how a protocol endpoint (a CBR source, a TCP sender, a TFRC receiver...)
//! plugs into the simulator. See docs/agents.md.
//!
//! An agent is a sans-IO state machine, like the `tfrc` crate's sender and receiver: the engine
//! calls it with the current time, it answers by queueing packets in an [`Outbox`] and by
//! exposing its next deadline through [`Agent::poll_timeout`] ("timers are data", design.md
//! convention 2). It never sees links, routes or the event queue; the engine stamps each packet
//! it sends with the flow, the destination, a sequence number and the send time.
//!
//! Every flow has two agents: the *source* at the flow's `from` node, whose packets travel
//! forward, and the *sink* at `to`, whose packets (ACKs, feedback) travel back. Each protocol is
//! one file holding its state, its `XxxConfig` with the paper's or RFC's defaults, and its trace
//! fields; [`AnyAgent`] is the closed set of them, dispatched statically in the hot loop
//! (design.md convention 1).

pub mod cbr;
pub mod onoff;
pub mod ping;
pub mod rap;
pub mod short_tcp;
pub mod sink;
pub mod tcp;
pub mod tcp_pool;
pub mod tear;
pub mod tfrc;
pub mod web;

use ::tfrc::Time;

use crate::packet::{Packet, Payload};
use crate::rng::SimRng;

pub use cbr::{CbrConfig, CbrSource};
pub use onoff::{OnOffConfig, OnOffDistribution, OnOffSource};
pub use ping::{PingConfig, PingSink, PingSource};
pub use rap::{RapConfig, RapSink, RapSource};
pub use short_tcp::{ShortTcpConfig, ShortTcpSink, ShortTcpSource};
pub use sink::Sink;
pub use tcp::controller::ControlledTcpConfig;
pub use tcp::{GaimdConfig, TcpConfig, TcpSender, TcpSink, TcpVariant};
pub use tear::{TearConfig, TearSink, TearSource};
pub use tfrc::{TfrcAgentConfig, TfrcApplication, TfrcSink, TfrcSource};
pub use web::{WebClient, WebConfig, WebServer};

/// One packet an agent asks the engine to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outgoing {
    /// Size on the wire in bytes, headers included.
    pub size_bytes: u32,
    /// The protocol header.
    pub payload: Payload,
    /// Whether the packet is ECN-capable (a marking RED queue may mark it instead of dropping).
    pub ecn_capable: bool,
}

/// The packets an agent sends during one callback, in order. The engine drains it after each
/// call; its buffer is reused, so sending allocates nothing in steady state.
#[derive(Debug, Default)]
pub struct Outbox {
    packets: Vec<Outgoing>,
}

impl Outbox {
    /// Sends a packet of `size_bytes` carrying `payload`.
    pub fn send(&mut self, size_bytes: u32, payload: Payload) {
        self.packets.push(Outgoing {
            size_bytes,
            payload,
            ecn_capable: false,
        });
    }

    /// Sends an ECN-capable packet.
    pub fn send_ecn(&mut self, size_bytes: u32, payload: Payload) {
        self.packets.push(Outgoing {
            size_bytes,
            payload,
            ecn_capable: true,
        });
    }

    /// The packets queued so far.
    pub fn packets(&self) -> &[Outgoing] {
        &self.packets
    }

    /// Takes the queued packets out, leaving the buffer (and its capacity) behind empty.
    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, Outgoing> {
        self.packets.drain(..)
    }
}

/// A protocol endpoint driven by the simulator. All methods take the current simulated time.
pub trait Agent {
    /// Names of the state fields this agent reports in the per-bin state trace (e.g. "cwnd",
    /// "srtt"); [`Agent::trace`] fills values in this order.
    fn trace_fields(&self) -> &'static [&'static str];

    /// The application starts (or restarts after an OFF period) at `now`. Sinks are not called.
    fn on_start(&mut self, now: Time, out: &mut Outbox);

    /// The application stops at `now` (end of an ON period, or the flow's stop time). The agent
    /// decides what happens to data in flight. Sinks are not called.
    fn on_stop(&mut self, now: Time, out: &mut Outbox);

    /// The flow's application starts at `now`, told to the *sink* agent (the source gets
    /// [`Agent::on_start`]): an application that lives at the receiving end, such as a web
    /// client requesting pages from the source (`agent/web`), starts here. Default: nothing.
    fn on_flow_start(&mut self, now: Time, out: &mut Outbox) {
        let _ = (now, out);
    }

    /// The flow's application stops at `now`, told to the sink agent (the source gets
    /// [`Agent::on_stop`]). Default: nothing.
    fn on_flow_stop(&mut self, now: Time, out: &mut Outbox) {
        let _ = (now, out);
    }

    /// A packet of this flow arrived at this agent.
    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox);

    /// The agent's next deadline, if any. The engine calls [`Agent::handle_timeout`] at that time
    /// unless a later call changes the deadline first. It is read after every callback.
    fn poll_timeout(&self) -> Option<Time>;

    /// The deadline from [`Agent::poll_timeout`] has come.
    fn handle_timeout(&mut self, now: Time, out: &mut Outbox);

    /// Writes the current values of [`Agent::trace_fields`] into `values` (same length).
    fn trace(&self, values: &mut [f64]);

    /// Why the agent cannot go on (a user's congestion controller failed, say), which makes
    /// the run a failure; `None` while it works. The engine asks after each run step, not per
    /// event, so an agent that fails must go silent by itself. Default: never fails.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Which protocol a flow runs, with its parameters (what a scenario file describes).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentConfig {
    /// A constant-bit-rate source and a sink that only absorbs.
    Cbr(CbrConfig),
    /// A TFRC source and sink (the `tfrc` crate's sender and receiver); boxed, being large.
    Tfrc(Box<TfrcAgentConfig>),
    /// A TCP sender of the configured variant and its receiver (docs/tcp.md).
    Tcp(TcpConfig),
    /// GAIMD(alpha, beta) on the Reno machinery and a TCP receiver (docs/tcp.md).
    Gaimd(GaimdConfig),
    /// A TCP sender whose window a congestion controller decides, and its receiver
    /// (docs/controllers.md); boxed, holding the controller's factory.
    ControlledTcp(Box<ControlledTcpConfig>),
    /// A RAP source and its ACKing sink (docs/rap.md).
    Rap(RapConfig),
    /// A Pareto or exponential ON/OFF source (ns-2 `Application/Traffic/Pareto`,
    /// `.../Exponential`) and a sink that only absorbs.
    OnOff(OnOffConfig),
    /// A ping probe and its echoing sink.
    Ping(PingConfig),
    /// Short TCP connections arriving as a process (docs/web.md); boxed, being large.
    ShortTcp(Box<ShortTcpConfig>),
    /// A web session: server at the source, client at the sink (docs/web.md); boxed.
    Web(Box<WebConfig>),
    /// A TEAR source and receiver (docs/tear.md).
    Tear(TearConfig),
}

impl AgentConfig {
    /// The protocol's name in scenario files and results ("cbr").
    pub fn kind(&self) -> &'static str {
        match self {
            AgentConfig::Cbr(_) => "cbr",
            AgentConfig::Tfrc(_) => "tfrc",
            AgentConfig::Tcp(_) => "tcp",
            AgentConfig::Gaimd(_) => "gaimd",
            AgentConfig::ControlledTcp(_) => "tcp",
            AgentConfig::Rap(_) => "rap",
            AgentConfig::OnOff(config) => config.distribution.name(),
            AgentConfig::Ping(_) => "ping",
            AgentConfig::ShortTcp(_) => "short_tcp",
            AgentConfig::Web(_) => "web",
            AgentConfig::Tear(_) => "tear",
        }
    }

    /// The variant or preset within the kind ("" when the kind has none): the TCP variant
    /// ("sack"), or GAIMD's decrease rule ("ns2", "paper").
    pub fn variant(&self) -> &'static str {
        match self {
            AgentConfig::Cbr(_) => "",
            AgentConfig::Tfrc(config) => config.preset,
            AgentConfig::Tcp(config) => config.variant.name(),
            AgentConfig::Gaimd(config) => config.rule.name(),
            AgentConfig::ControlledTcp(config) => config.tcp.variant.name(),
            AgentConfig::Rap(config) => config.grain(),
            AgentConfig::OnOff(_) | AgentConfig::Ping(_) => "",
            AgentConfig::ShortTcp(config) => config.tcp.variant.name(),
            AgentConfig::Web(config) => config.tcp.variant.name(),
            AgentConfig::Tear(config) => config.preset,
        }
    }

    /// The size of the flow's data packets in bytes (for the base RTT of the flow's path).
    pub fn data_size_bytes(&self) -> u32 {
        match self {
            AgentConfig::Cbr(config) => config.size_bytes,
            AgentConfig::Tfrc(config) => config.size_bytes,
            AgentConfig::Tcp(config) => config.data_packet_bytes(),
            AgentConfig::Gaimd(config) => config.tcp().data_packet_bytes(),
            AgentConfig::ControlledTcp(config) => config.tcp.data_packet_bytes(),
            AgentConfig::Rap(config) => config.size_bytes,
            AgentConfig::OnOff(config) => config.size_bytes,
            AgentConfig::Ping(config) => config.size_bytes,
            AgentConfig::ShortTcp(config) => config.tcp.data_packet_bytes(),
            AgentConfig::Web(config) => config.tcp.data_packet_bytes(),
            AgentConfig::Tear(config) => config.size_bytes,
        }
    }

    /// The size of the packets the sink sends back, in bytes (0 if it sends none).
    pub fn reply_size_bytes(&self) -> u32 {
        match self {
            AgentConfig::Cbr(_) => 0,
            AgentConfig::Tfrc(config) => config.feedback_size_bytes,
            AgentConfig::Tcp(config) => config.ack_bytes,
            AgentConfig::Gaimd(config) => config.base.ack_bytes,
            AgentConfig::ControlledTcp(config) => config.tcp.ack_bytes,
            AgentConfig::Rap(config) => config.ack_bytes,
            AgentConfig::OnOff(_) => 0,
            AgentConfig::Ping(config) => config.size_bytes,
            AgentConfig::ShortTcp(config) => config.tcp.ack_bytes,
            AgentConfig::Web(config) => config.tcp.ack_bytes,
            AgentConfig::Tear(config) => config.feedback_size_bytes,
        }
    }

    /// Checks the parameters the protocol cannot run with (the engine calls it when it builds
    /// the flow); the text names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            AgentConfig::Cbr(_) => Ok(()),
            AgentConfig::Tfrc(config) => config.validate().map_err(|e| e.to_string()),
            AgentConfig::Tcp(config) => config.validate().map_err(|e| e.to_string()),
            AgentConfig::Gaimd(config) => config.tcp().validate().map_err(|e| e.to_string()),
            AgentConfig::ControlledTcp(config) => {
                config.tcp.validate_controlled().map_err(|e| e.to_string())
            }
            AgentConfig::Rap(config) => config.validate().map_err(|e| e.to_string()),
            AgentConfig::OnOff(config) => config.validate().map_err(|e| e.to_string()),
            AgentConfig::Ping(config) => config.validate().map_err(|e| e.to_string()),
            AgentConfig::ShortTcp(config) => config.validate(),
            AgentConfig::Web(config) => config.validate(),
            AgentConfig::Tear(config) => config.validate().map_err(|e| e.to_string()),
        }
    }

    /// The flow's source and sink. `source_rng` and `sink_rng` are the agents' own streams.
    pub fn build(&self, source_rng: SimRng, sink_rng: SimRng) -> (AnyAgent, AnyAgent) {
        match self {
            AgentConfig::Cbr(config) => (
                AnyAgent::Cbr(CbrSource::new(config, source_rng)),
                AnyAgent::Sink(Sink),
            ),
            AgentConfig::Tfrc(config) => (
                AnyAgent::TfrcSource(Box::new(TfrcSource::new(config, source_rng))),
                AnyAgent::TfrcSink(Box::new(TfrcSink::new(config))),
            ),
            AgentConfig::Tcp(config) => (
                AnyAgent::TcpSender(Box::new(TcpSender::new(config, source_rng))),
                AnyAgent::TcpSink(Box::new(TcpSink::new(config))),
            ),
            AgentConfig::Gaimd(config) => {
                let tcp = config.tcp();
                (
                    AnyAgent::TcpSender(Box::new(TcpSender::new(&tcp, source_rng))),
                    AnyAgent::TcpSink(Box::new(TcpSink::new(&tcp))),
                )
            }
            AgentConfig::ControlledTcp(config) => (
                AnyAgent::TcpSender(Box::new(config.sender(source_rng))),
                AnyAgent::TcpSink(Box::new(TcpSink::new(&config.tcp))),
            ),
            AgentConfig::Rap(config) => (
                AnyAgent::RapSource(Box::new(RapSource::new(config, source_rng))),
                AnyAgent::RapSink(RapSink::new(config)),
            ),
            AgentConfig::OnOff(config) => (
                AnyAgent::OnOff(OnOffSource::new(config, source_rng)),
                AnyAgent::Sink(Sink),
            ),
            AgentConfig::Ping(config) => (
                AnyAgent::PingSource(Box::new(PingSource::new(config))),
                AnyAgent::PingSink(PingSink),
            ),
            AgentConfig::ShortTcp(config) => (
                AnyAgent::ShortTcpSource(Box::new(ShortTcpSource::new(config, source_rng))),
                AnyAgent::ShortTcpSink(Box::new(ShortTcpSink::new(config))),
            ),
            AgentConfig::Web(config) => (
                AnyAgent::WebServer(Box::new(WebServer::new(config, source_rng))),
                AnyAgent::WebClient(Box::new(WebClient::new(config, sink_rng))),
            ),
            AgentConfig::Tear(config) => (
                AnyAgent::TearSource(Box::new(TearSource::new(config))),
                AnyAgent::TearSink(Box::new(TearSink::new(config))),
            ),
        }
    }
}

/// Every agent the simulator knows, as one type with static dispatch. (Not `Clone`: a TFRC
/// sender owns its dither generator as a boxed `RngCore`.)
#[derive(Debug)]
#[non_exhaustive]
pub enum AnyAgent {
    /// A CBR source.
    Cbr(CbrSource),
    /// A sink that absorbs packets and sends nothing.
    Sink(Sink),
    /// A TFRC source (boxed: its state is large next to the other variants).
    TfrcSource(Box<TfrcSource>),
    /// A TFRC sink.
    TfrcSink(Box<TfrcSink>),
    /// A TCP (or GAIMD) sender; boxed, as it is much larger than the other agents.
    TcpSender(Box<TcpSender>),
    /// A TCP receiver.
    TcpSink(Box<TcpSink>),
    /// A RAP source (boxed: its configuration and history make it large).
    RapSource(Box<RapSource>),
    /// A RAP sink.
    RapSink(RapSink),
    /// A Pareto or exponential ON/OFF source.
    OnOff(OnOffSource),
    /// A ping probe source; boxed, holding its outstanding probes.
    PingSource(Box<PingSource>),
    /// A sink that echoes ping probes.
    PingSink(PingSink),
    /// The opening end of short TCP flows.
    ShortTcpSource(Box<ShortTcpSource>),
    /// The receiving end of short TCP flows.
    ShortTcpSink(Box<ShortTcpSink>),
    /// A web server.
    WebServer(Box<WebServer>),
    /// A web client (the session).
    WebClient(Box<WebClient>),
    /// A TEAR sender (boxed, as the other protocol agents).
    TearSource(Box<TearSource>),
    /// A TEAR receiver with its window emulation.
    TearSink(Box<TearSink>),
}

macro_rules! dispatch {
    ($self:ident, $agent:ident => $body:expr) => {
        match $self {
            AnyAgent::Cbr($agent) => $body,
            AnyAgent::Sink($agent) => $body,
            AnyAgent::TfrcSource($agent) => $body,
            AnyAgent::TfrcSink($agent) => $body,
            AnyAgent::TcpSender($agent) => $body,
            AnyAgent::TcpSink($agent) => $body,
            AnyAgent::RapSource($agent) => $body,
            AnyAgent::RapSink($agent) => $body,
            AnyAgent::OnOff($agent) => $body,
            AnyAgent::PingSource($agent) => $body,
            AnyAgent::PingSink($agent) => $body,
            AnyAgent::ShortTcpSource($agent) => $body,
            AnyAgent::ShortTcpSink($agent) => $body,
            AnyAgent::WebServer($agent) => $body,
            AnyAgent::WebClient($agent) => $body,
            AnyAgent::TearSource($agent) => $body,
            AnyAgent::TearSink($agent) => $body,
        }
    };
}

impl AnyAgent {
    /// Asks for the agent's whole state (a boxed agent's box) ahead of reading it in several
    /// places (see [`crate::prefetch`]); a hint only.
    pub(crate) fn prefetch_state(&self) {
        use crate::prefetch::prefetch_whole;
        match self {
            AnyAgent::TfrcSource(a) => prefetch_whole(&**a),
            AnyAgent::TfrcSink(a) => prefetch_whole(&**a),
            AnyAgent::TcpSender(a) => prefetch_whole(&**a),
            AnyAgent::TcpSink(a) => prefetch_whole(&**a),
            AnyAgent::RapSource(a) => prefetch_whole(&**a),
            AnyAgent::PingSource(a) => prefetch_whole(&**a),
            AnyAgent::ShortTcpSource(a) => prefetch_whole(&**a),
            AnyAgent::ShortTcpSink(a) => prefetch_whole(&**a),
            AnyAgent::WebServer(a) => prefetch_whole(&**a),
            AnyAgent::WebClient(a) => prefetch_whole(&**a),
            AnyAgent::TearSource(a) => prefetch_whole(&**a),
            AnyAgent::TearSink(a) => prefetch_whole(&**a),
            // Unboxed: in the agent's slot, which the caller reads in order.
            AnyAgent::Cbr(_)
            | AnyAgent::Sink(_)
            | AnyAgent::RapSink(_)
            | AnyAgent::OnOff(_)
            | AnyAgent::PingSink(_) => {}
        }
    }
}

impl Agent for AnyAgent {
    fn trace_fields(&self) -> &'static [&'static str] {
        dispatch!(self, a => a.trace_fields())
    }

    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, a => a.on_start(now, out))
    }

    fn on_stop(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, a => a.on_stop(now, out))
    }

    fn on_flow_start(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, a => a.on_flow_start(now, out))
    }

    fn on_flow_stop(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, a => a.on_flow_stop(now, out))
    }

    #[inline]
    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        dispatch!(self, a => a.handle_packet(now, packet, out))
    }

    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        dispatch!(self, a => a.poll_timeout())
    }

    #[inline]
    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, a => a.handle_timeout(now, out))
    }

    fn trace(&self, values: &mut [f64]) {
        dispatch!(self, a => a.trace(values))
    }

    fn failure(&self) -> Option<String> {
        dispatch!(self, a => a.failure())
    }
}
