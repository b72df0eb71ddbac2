//! GAIMD(alpha, beta) as a native controller plugin: the template for one's own (copy the
//! crate, change this file). The window logic is `tfrclab.controllers.gaimd.Gaimd`'s, operation
//! for operation, so that the Python class, this plugin and the built-in `kind = "gaimd"` agent
//! give the same results (`crates/netsim/tests/controller_plugin.rs`).
//!
//! Parameters (`controller = "native:libgaimd_controller.so?alpha=1&beta=0.5"`): `alpha`
//! (packets added per RTT, default 0.31), `beta` (the window's factor at a congestion signal,
//! default 0.875), `rule` (`ns2`, default: the first decrease, decreases in slow start and
//! ssthresh after a timeout halve, as ns-2's `slowdown()`; `paper`: every reduction multiplies
//! by beta) and `whole_packets` (default true: reduce whole windows, ns-2's
//! `precisionReduce_` off as in the `ns2_2000` preset).

use tfrclab_controller_abi::{Ack, Controller, Decision, Params, Reduction, State, Window};

/// GAIMD's window, with ns-2's arithmetic.
#[derive(Debug)]
pub struct Gaimd {
    alpha: f64,
    beta: f64,
    /// ns-2's decrease rule (true) or yang2001's (false).
    ns2_rule: bool,
    whole_packets: bool,
}

impl Controller for Gaimd {
    fn new(params: &mut Params) -> Result<Gaimd, String> {
        let alpha = params.f64_or("alpha", 0.31)?;
        let beta = params.f64_or("beta", 0.875)?;
        if alpha <= 0.0 || !(beta > 0.0 && beta < 1.0) {
            return Err(format!(
                "alpha must be above 0 and beta between 0 and 1, got alpha={alpha} beta={beta}"
            ));
        }
        let ns2_rule = match params.str_or("rule", "ns2").as_str() {
            "ns2" => true,
            "paper" => false,
            other => return Err(format!("rule must be ns2 or paper, got {other:?}")),
        };
        let whole_packets = params.bool_or("whole_packets", true)?;
        Ok(Gaimd {
            alpha,
            beta,
            ns2_rule,
            whole_packets,
        })
    }

    /// +1 per ACK in slow start, +alpha/cwnd per ACK in congestion avoidance.
    fn cong_avoid(&mut self, state: &State, _ack: &Ack) -> Decision {
        let cwnd = state.cwnd;
        let cwnd = if cwnd < state.ssthresh {
            cwnd + 1.0
        } else {
            cwnd + self.alpha / cwnd
        };
        Ok(Some(Window::new(cwnd, state.ssthresh)))
    }

    /// Cut to beta (or half, per the rule); a timeout, restart or go-back-N: cwnd 1.
    fn ssthresh(&mut self, state: &State, reduction: Reduction) -> Decision {
        let (half, decreased) = if self.whole_packets {
            let win = state.win.trunc();
            ((win / 2.0).floor(), (self.beta * win).trunc())
        } else {
            (state.win / 2.0, self.beta * state.win)
        };
        let slow_start = state.cwnd < state.ssthresh;
        let mut ssthresh = state.ssthresh;
        if reduction != Reduction::Restart {
            let halve =
                self.ns2_rule && (state.first_reduction || slow_start || state.after_timeout);
            ssthresh = if halve { half } else { decreased }.trunc();
        }
        // An ECN mark is a loss without the retransmission (RFC 3168 §6.1.2).
        let cwnd = if matches!(reduction, Reduction::Recovery | Reduction::Ecn) {
            let halve =
                (self.ns2_rule && (state.first_reduction || slow_start)) || self.beta == 0.5;
            if halve {
                half
            } else {
                decreased
            }
        } else {
            1.0
        };
        Ok(Some(Window::new(cwnd, ssthresh.max(2.0))))
    }
}

tfrclab_controller_abi::export_controller!(Gaimd);
