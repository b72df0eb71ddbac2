//! A delay-based controller (Vegas's idea) as a native plugin: `tfrclab.controllers.delay.
//! DelayBased` operation for operation, so that both give the same results
//! (`crates/netsim/tests/controller_plugin.rs`). From the per-ACK RTT samples it estimates the
//! packets it keeps queued, cwnd (1 - base_rtt/rtt), grows by 1/cwnd per ACK below `alpha`,
//! shrinks above `beta`; slow start ends once the estimate passes `alpha`; a loss halves the
//! window, a timeout restarts from one packet.
//!
//! Parameters: `alpha` (default 2) and `beta` (default 4), packets queued.

use tfrclab_controller_abi::{Ack, Controller, Decision, Params, Reduction, State, Window};

/// The queue estimate and its bounds.
#[derive(Debug)]
pub struct DelayBased {
    alpha: f64,
    beta: f64,
    /// The least RTT seen, seconds (infinite before the first sample).
    base_rtt: f64,
    /// The packets estimated queued at the bottleneck, from the last RTT sample.
    queued: f64,
}

impl Controller for DelayBased {
    fn new(params: &mut Params) -> Result<DelayBased, String> {
        let alpha = params.f64_or("alpha", 2.0)?;
        let beta = params.f64_or("beta", 4.0)?;
        if !(alpha >= 0.0 && beta >= alpha) {
            return Err(format!(
                "need 0 <= alpha <= beta, got alpha={alpha} beta={beta}"
            ));
        }
        Ok(DelayBased {
            alpha,
            beta,
            base_rtt: f64::INFINITY,
            queued: 0.0,
        })
    }

    /// Updates the least RTT and the queue estimate from the ACK's RTT sample.
    fn pkts_acked(&mut self, state: &State, ack: &Ack) -> Decision {
        if let Some(rtt) = ack.rtt().filter(|&rtt| rtt > 0.0) {
            self.base_rtt = self.base_rtt.min(rtt);
            self.queued = state.cwnd * (1.0 - self.base_rtt / rtt);
        }
        Ok(None)
    }

    /// Slow start below ssthresh (left once the queue passes alpha), else +-1/cwnd.
    fn cong_avoid(&mut self, state: &State, ack: &Ack) -> Decision {
        let (mut cwnd, ssthresh) = (state.cwnd, state.ssthresh);
        let acked = f64::from(ack.acked);
        if cwnd < ssthresh {
            if self.queued > self.alpha {
                return Ok(Some(Window::new(cwnd, cwnd.max(2.0))));
            }
            return Ok(Some(Window::new(cwnd + acked, ssthresh)));
        }
        if self.queued < self.alpha {
            cwnd += acked / cwnd;
        } else if self.queued > self.beta {
            cwnd = (cwnd - acked / cwnd).max(2.0);
        }
        Ok(Some(Window::new(cwnd, ssthresh)))
    }

    /// Halves on a loss or an ECN-Echo; one packet after a timeout or an idle restart.
    fn ssthresh(&mut self, state: &State, reduction: Reduction) -> Decision {
        let half = (state.win / 2.0).max(2.0);
        Ok(Some(match reduction {
            Reduction::Recovery | Reduction::Ecn => Window::new(half, half),
            Reduction::Restart => Window::new(1.0, state.ssthresh),
            Reduction::GoBackN | Reduction::Timeout => Window::new(1.0, half),
        }))
    }
}

tfrclab_controller_abi::export_controller!(DelayBased);
