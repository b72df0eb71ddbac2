//! The built-in CUBIC window (`agent/tcp/cubic.rs`, Linux's `tcp_cubic.c`) as a controller:
//! the same [`Cubic`] state driven from `pkts_acked` (HyStart's RTT samples), `cong_avoid` and
//! `ssthresh`. On the `sack` variant it gives exactly the results of `variant = "cubic"`
//! (`tests/controller.rs`).

use tfrc::Time;

use super::super::cubic::Cubic;
use super::super::TcpConfig;
use super::{AckSample, CcResult, CcState, CcWindow, CongestionControl, Reduction};

/// CUBIC's window with HyStart, as Linux grows and cuts it.
#[derive(Clone, Debug)]
pub struct CubicController {
    cubic: Cubic,
    /// Packets acked not yet turned into growth (Linux's `snd_cwnd_cnt`).
    cnt: u32,
    /// The flow's `max_cwnd` (0: none).
    max_cwnd: u32,
}

impl CubicController {
    /// The controller for a sender with `config` (its `cubic` parameters).
    pub fn new(config: &TcpConfig) -> CubicController {
        CubicController {
            cubic: Cubic::new(config.cubic, Time::ZERO, 0),
            cnt: 0,
            max_cwnd: config.max_cwnd,
        }
    }
}

impl CongestionControl for CubicController {
    fn name(&self) -> &str {
        "cubic"
    }

    fn pkts_acked(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        let Some(rtt) = ack.rtt else {
            return Ok(None);
        };
        let in_slow_start = state.cwnd < state.ssthresh;
        let (snd_una, snd_nxt) = (state.highest_ack + 1, state.max_sent + 1);
        Ok(self
            .cubic
            .on_rtt_sample(
                state.now,
                rtt,
                state.cwnd as u32,
                in_slow_start,
                snd_una,
                snd_nxt,
            )
            .map(|ssthresh| CcWindow::new(state.cwnd, f64::from(ssthresh))))
    }

    fn cong_avoid(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        let ssthresh = state.ssthresh.min(f64::from(u32::MAX)) as u32;
        let (cwnd, cnt) =
            self.cubic
                .cong_avoid(state.now, state.cwnd as u32, self.cnt, ssthresh, ack.acked);
        self.cnt = cnt;
        let mut cwnd = f64::from(cwnd);
        if self.max_cwnd > 0 && cwnd > f64::from(self.max_cwnd) {
            cwnd = f64::from(self.max_cwnd);
        }
        Ok(Some(CcWindow::new(cwnd, state.ssthresh)))
    }

    fn ssthresh(&mut self, state: &CcState, reduction: Reduction) -> CcResult {
        let cwnd = state.cwnd.max(1.0) as u32;
        self.cnt = 0;
        let ssthresh = if reduction == Reduction::Restart {
            state.ssthresh
        } else {
            f64::from(self.cubic.recalc_ssthresh(cwnd))
        };
        let cwnd = match reduction {
            Reduction::Recovery | Reduction::Ecn => ssthresh,
            Reduction::GoBackN | Reduction::Timeout | Reduction::Restart => {
                self.cubic.on_timeout();
                1.0
            }
        };
        Ok(Some(CcWindow::new(cwnd, ssthresh)))
    }
}
