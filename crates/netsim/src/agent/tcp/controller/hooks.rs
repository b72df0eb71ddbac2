//! The sender's side of the controller interface: the state it shows a controller, the calls
//! at each congestion event, and what happens when a controller misbehaves (the sender records
//! the error and goes silent; the engine reports it as the run's failure).

use std::time::Duration;

use tfrc::Time;

use super::super::sender::{CwndAction, CwndCut, TcpSender};
use super::{AckSample, CaState, CcResult, CcState, CongestionControl, ControllerError, Reduction};
use crate::agent::tcp::pacing::Pacer;

impl TcpSender {
    /// The state a controller sees at `now`.
    fn cc_state(&self, now: Time) -> CcState {
        CcState {
            now,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            win: self.windowd(),
            window: self.cfg.window,
            flight: u64::try_from(self.maxseq - self.highest_ack).unwrap_or(0),
            highest_ack: self.highest_ack,
            max_sent: self.maxseq,
            in_recovery: self.in_recovery(),
            first_reduction: self.first_decrease,
            after_timeout: self.last_cwnd_action == CwndAction::Timeout,
            app_limited: self.t_seqno >= self.curseq,
            srtt: self.rto.srtt_secs(),
            packet_bytes: self.cfg.size_bytes,
        }
    }

    /// Calls `callback` of the controller (if it has not failed) with the state at `now`, and
    /// applies what it returns.
    fn cc_call(
        &mut self,
        now: Time,
        name: &'static str,
        callback: impl FnOnce(&mut dyn CongestionControl, &CcState) -> CcResult,
    ) {
        if self.cc_error.is_some() {
            return;
        }
        let state = self.cc_state(now);
        let Some(cc) = self.cc.as_mut() else {
            return;
        };
        let result = callback(cc.as_mut(), &state);
        let window = match result {
            Ok(None) => return,
            Ok(Some(window)) => window,
            Err(reason) => return self.cc_fail(now, name, reason),
        };
        if let Err(reason) = window.validate() {
            return self.cc_fail(now, name, reason);
        }
        self.cwnd = window.cwnd;
        self.ssthresh = window.ssthresh;
        if let Some(rate) = window.pacing_rate {
            // Bytes per second, rounded down to a whole byte (at least 1).
            let rate = rate.min(u64::MAX as f64) as u64;
            match self.pacer.as_mut() {
                Some(pacer) => pacer.set_rate(rate, 1),
                None => self.pacer = Some(Pacer::new(rate)),
            }
        }
    }

    /// Records the controller's failure and silences the sender: no timer, nothing more sent.
    fn cc_fail(&mut self, now: Time, callback: &'static str, reason: String) {
        let controller = self
            .cc
            .as_ref()
            .map_or_else(String::new, |cc| cc.name().to_string());
        self.cc_error = Some(ControllerError {
            controller,
            callback,
            at: now,
            reason,
        });
        self.rtx_at = None;
        self.delsnd_at = None;
        self.pacer = None;
    }

    /// The controller's failure, if one failed.
    pub fn controller_error(&self) -> Option<&ControllerError> {
        self.cc_error.as_ref()
    }

    /// Whether a controller failed (the sender is silent from then on).
    pub(in crate::agent::tcp) fn cc_failed(&self) -> bool {
        self.cc_error.is_some()
    }

    /// `newack` with a controller: the cumulative ACK moved from `previous` to `ack`; the RTT
    /// of the newest packet it acks (none if retransmitted) and `pkts_acked`.
    pub(in crate::agent::tcp) fn cc_acked(&mut self, now: Time, previous: i64, ack: i64) {
        let mut newest = None;
        while self.sent_at.front().is_some_and(|&(seq, _)| seq <= ack) {
            newest = self.sent_at.pop_front().and_then(|(_, sent)| sent);
        }
        let acked = u32::try_from((ack - previous).max(1)).unwrap_or(u32::MAX);
        self.cc_sample = AckSample {
            acked,
            acked_bytes: u64::from(acked) * u64::from(self.cfg.size_bytes),
            rtt: newest.map(|sent: Time| -> Duration { now.saturating_since(sent) }),
            ece: self.ecn.ack_ece,
        };
        let sample = self.cc_sample;
        self.cc_call(now, "pkts_acked", |cc, state| cc.pkts_acked(state, &sample));
    }

    /// `cong_avoid` for the ACK `cc_acked` just saw.
    pub(in crate::agent::tcp) fn cc_open(&mut self, now: Time) {
        let sample = self.cc_sample;
        self.cc_call(now, "cong_avoid", |cc, state| cc.cong_avoid(state, &sample));
    }

    /// `slowdown` with a controller: the ns-2 call mapped onto the congestion signal it stands
    /// for (no ssthresh cut: a restart; a cut to one packet: a timeout, or Tahoe's go-back-N
    /// after duplicate ACKs; a decrease: loss recovery).
    pub(in crate::agent::tcp) fn cc_slowdown(
        &mut self,
        now: Time,
        ssthresh_cut: bool,
        cut: CwndCut,
    ) {
        let reduction = match (ssthresh_cut, cut) {
            (false, _) => Reduction::Restart,
            (true, CwndCut::Decrease) => Reduction::Recovery,
            (true, CwndCut::One) if self.last_cwnd_action == CwndAction::Timeout => {
                Reduction::Timeout
            }
            (true, CwndCut::One) => Reduction::GoBackN,
        };
        self.cc_reduce(now, reduction);
    }

    /// `ssthresh` for `reduction`; the connection's first decrease is then over.
    pub(in crate::agent::tcp) fn cc_reduce(&mut self, now: Time, reduction: Reduction) {
        self.cc_call(now, "ssthresh", |cc, state| cc.ssthresh(state, reduction));
        self.first_decrease = false;
    }

    /// Loss recovery ended (`set_state` to open), when a controller runs.
    pub(in crate::agent::tcp) fn cc_recovered(&mut self, now: Time) {
        if self.cc.is_some() {
            self.cc_call(now, "set_state", |cc, state| {
                cc.set_state(state, CaState::Open)
            });
        }
    }
}
