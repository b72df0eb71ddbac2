//! Web traffic (`kind = "web"`; docs/web.md): ns-2's `PagePool/WebTraf` sessions
//! (`webcache/webtraf.cc`, `tcl/webcache/webtraf.tcl`; protocols.md §6.3) over TCP. A session
//! requests pages; a page holds ceil(page size) objects; object 1 is requested at once and each
//! later one an inter-object time after the previous request; each request is a 1-packet TCP
//! connection from the client to the server, answered by a TCP connection of ceil(object size)
//! packets back; the next page starts an inter-page time after every object of the page has
//! arrived (ns-2 `interPageOption_` 1) or after the page started (option 0).
//!
//! One flow is one session: the server at the flow's `from` ([`WebServer`], the source: its
//! responses travel forward) and the client at `to` ([`WebClient`], the sink: its requests
//! travel back). Each end multiplexes its connections in a [`super::tcp_pool::TcpPool`].

mod client;
mod server;

pub use client::WebClient;
pub use server::WebServer;

use super::tcp::TcpConfig;
use crate::randvar::RandomVariable;

/// When the inter-page time is counted from (ns-2 `set-interPageOption`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterPageFrom {
    /// From the end of the page, when its last object has arrived (`interPageOption_` 1, ns-2's
    /// default): a closed loop whose load depends on the network.
    End,
    /// From the start of the page (`interPageOption_` 0): pages start as a renewal process and
    /// may overlap, so the offered load is the configured one whatever the network does.
    Start,
}

impl InterPageFrom {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["end", "start"];
}

/// A web session's parameters: ns-2's `create-session` arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebConfig {
    /// Every request and response connection's TCP (ns-2: `Agent/TCP/Reno` and `TCPSink`).
    pub tcp: TcpConfig,
    /// Seconds between pages (`interPageRV`).
    pub inter_page: RandomVariable,
    /// Objects per page, rounded up to at least 1 (`pageSizeRV`).
    pub objects_per_page: RandomVariable,
    /// Seconds between the requests of a page's objects (`interObjRV`).
    pub inter_object: RandomVariable,
    /// Response size in packets, rounded up to at least 1 (`objSizeRV`).
    pub object_size: RandomVariable,
    /// Pages per session (`nPages`); `None`: pages until the flow stops.
    pub pages: Option<u64>,
    /// Where the inter-page time is counted from.
    pub inter_page_from: InterPageFrom,
}

impl WebConfig {
    /// ns-2's example session (`tcl/ex/web-traffic.tcl`; protocols.md §6.3): inter-page
    /// exponential with mean 1 s, 1 object per page, inter-object exponential with mean 0.01 s,
    /// object size ParetoII with mean 12 packets and shape 1.2, on `tcp`.
    pub fn ns2(tcp: TcpConfig) -> WebConfig {
        WebConfig {
            tcp,
            inter_page: RandomVariable::Exponential { mean: 1.0 },
            objects_per_page: RandomVariable::Constant { value: 1.0 },
            inter_object: RandomVariable::Exponential { mean: 0.01 },
            object_size: RandomVariable::pareto2_with_mean(12.0, 1.2),
            pages: None,
            inter_page_from: InterPageFrom::End,
        }
    }

    /// SURGE's models (protocols.md §6.4, UNVERIFIED): hybrid lognormal/Pareto file sizes in
    /// packets of `tcp.size_bytes`, Pareto(k = 1, α = 2.43) objects per page (embedded
    /// references), Weibull(scale 1.46 s, shape 0.382) between objects (active OFF) and
    /// Pareto(k = 1 s, α = 1.5) between pages (inactive OFF).
    pub fn surge(tcp: TcpConfig) -> WebConfig {
        WebConfig {
            inter_page: RandomVariable::Pareto {
                scale: 1.0,
                shape: 1.5,
            },
            objects_per_page: RandomVariable::Pareto {
                scale: 1.0,
                shape: 2.43,
            },
            inter_object: RandomVariable::Weibull {
                scale: 1.46,
                shape: 0.382,
            },
            object_size: RandomVariable::surge_file_size(f64::from(tcp.size_bytes)),
            ..WebConfig::ns2(tcp)
        }
    }

    /// Mean response packets per page: E[ceil objects] × E[ceil size].
    pub fn mean_page_packets(&self) -> f64 {
        self.objects_per_page.mean_ceil() * self.object_size.mean_ceil()
    }

    /// The mean offered load of one session in bits per second when pages start as a renewal
    /// process ([`InterPageFrom::Start`]): mean page packets × data packet bytes × 8 / mean
    /// inter-page time. With [`InterPageFrom::End`] it is an upper bound: each cycle also
    /// holds the page's download time.
    pub fn offered_load_bps(&self) -> f64 {
        self.mean_page_packets() * f64::from(self.tcp.data_packet_bytes()) * 8.0
            / self.inter_page.mean()
    }

    /// Checks the TCP keys and the distributions; the text names the key.
    pub fn validate(&self) -> Result<(), String> {
        self.tcp.validate().map_err(|e| e.to_string())?;
        for (name, rv) in [
            ("inter_page", &self.inter_page),
            ("objects_per_page", &self.objects_per_page),
            ("inter_object", &self.inter_object),
            ("object_size", &self.object_size),
        ] {
            rv.validate()
                .map_err(|(key, what)| format!("{name}.{key}: expected {what}"))?;
        }
        if self.pages == Some(0) {
            return Err("pages: expected at least 1".into());
        }
        let mean = self.inter_page.mean();
        if self.inter_page_from == InterPageFrom::Start
            && (mean.is_nan() || mean < MIN_MEAN_GAP_SECS)
        {
            return Err(
                "inter_page: expected a mean of at least 1 µs when pages start from the start \
                 of the previous one"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The smallest mean gap between arrivals (pages counted from the previous page's start, short
/// flows) that a configuration may ask for: below it, the draws round to whole nanoseconds of
/// zero and a session would open its 2^24 connections in one instant.
pub const MIN_MEAN_GAP_SECS: f64 = 1e-6;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::TcpVariant;

    #[test]
    fn load_formula_and_presets() {
        let config = WebConfig {
            object_size: RandomVariable::Constant { value: 10.0 },
            objects_per_page: RandomVariable::Constant { value: 3.0 },
            inter_page: RandomVariable::Exponential { mean: 2.0 },
            ..WebConfig::ns2(TcpConfig::ns2_2000(TcpVariant::Reno))
        };
        // 30 packets of 8000 bits every 2 s.
        assert!((config.offered_load_bps() - 120_000.0).abs() < 1e-6);
        assert_eq!(config.validate(), Ok(()));
        let surge = WebConfig::surge(TcpConfig::ns2_2000(TcpVariant::Reno));
        assert_eq!(surge.validate(), Ok(()));
        assert!(surge.mean_page_packets().is_finite());
        let bad = WebConfig {
            pages: Some(0),
            ..config
        };
        assert!(bad.validate().unwrap_err().starts_with("pages"));
    }
}
