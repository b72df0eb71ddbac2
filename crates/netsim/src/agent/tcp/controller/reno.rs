//! The built-in Reno window as a controller: ns-2's `opencwnd` and `slowdown` (or Linux's
//! segment counting, with the `linux` preset's `ack_counting`), and RFC 6675's entry, run on the
//! same functions as the built-in senders, with the flow's `increase`, `decrease`,
//! `decrease_rule`, `precision_reduce`, `max_cwnd` and `ssthresh_base`. A sender running it
//! gives exactly the results of the built-in variant (`tests/controller.rs`); GAIMD is this
//! controller with alpha and beta as `increase` and `decrease`.

use super::super::sack::rfc6675_ssthresh;
use super::super::sender::{
    open_by_segments_window, opencwnd_window, slowdown_window, CwndCut, ReductionInput,
};
use super::super::{AckCounting, SackRecovery, TcpConfig};
use super::{AckSample, CcResult, CcState, CcWindow, CongestionControl, Reduction};

/// Reno's (and GAIMD's) window: additive increase, multiplicative decrease.
#[derive(Clone, Debug)]
pub struct RenoController {
    cfg: TcpConfig,
    /// Packets acked not yet turned into growth (Linux's `snd_cwnd_cnt`; segment counting).
    cnt: u32,
}

impl RenoController {
    /// The controller for a sender with `config`.
    pub fn new(config: &TcpConfig) -> RenoController {
        RenoController {
            cfg: *config,
            cnt: 0,
        }
    }
}

impl CongestionControl for RenoController {
    fn name(&self) -> &str {
        "reno"
    }

    fn cong_avoid(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        let cwnd = if self.cfg.ack_counting == AckCounting::Segments {
            let (cwnd, cnt) =
                open_by_segments_window(&self.cfg, state.cwnd, state.ssthresh, self.cnt, ack.acked);
            self.cnt = cnt;
            cwnd
        } else {
            opencwnd_window(&self.cfg, state.cwnd, state.ssthresh)
        };
        Ok(Some(CcWindow::new(cwnd, state.ssthresh)))
    }

    fn ssthresh(&mut self, state: &CcState, reduction: Reduction) -> CcResult {
        // An ECN-Echo reduces as loss recovery does (RFC 3168 §6.1.2).
        if matches!(reduction, Reduction::Recovery | Reduction::Ecn)
            && self.cfg.variant.uses_sack()
            && self.cfg.sack_recovery == SackRecovery::Rfc6675
        {
            // Entering recovery drops the growth credit, as the built-in sender does (Linux's
            // `tcp_init_cwnd_reduction` clears `snd_cwnd_cnt`).
            self.cnt = 0;
            let ssthresh = rfc6675_ssthresh(&self.cfg, state.cwnd, state.flight as f64);
            return Ok(Some(CcWindow::new(ssthresh, ssthresh)));
        }
        let (ssthresh_cut, cut) = match reduction {
            Reduction::Recovery | Reduction::Ecn => (true, CwndCut::Decrease),
            Reduction::GoBackN | Reduction::Timeout => (true, CwndCut::One),
            Reduction::Restart => (false, CwndCut::One),
        };
        let input = ReductionInput {
            cwnd: state.cwnd,
            ssthresh: state.ssthresh,
            win: state.win,
            first_decrease: state.first_reduction,
            after_timeout: state.after_timeout,
        };
        let (cwnd, ssthresh) = slowdown_window(&self.cfg, &input, ssthresh_cut, cut);
        Ok(Some(CcWindow::new(cwnd, ssthresh)))
    }
}
