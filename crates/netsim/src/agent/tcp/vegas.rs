//! TCP Vegas (Brakmo and Peterson 1995) as ns-2's `Agent/TCP/Vegas` (`tcp/tcp-vegas.cc`;
//! protocols.md §1.8).
//!
//! Once per RTT (when the ACK reaches the packet that was next to send at the previous check)
//! Vegas compares the expected rate, packets outstanding / baseRTT, with the actual rate,
//! packets sent in the last RTT / its mean fine-grained RTT, and turns the difference into
//! `diff`, an estimate of this flow's packets queued in the network. In congestion avoidance it
//! grows by one packet per RTT when `diff < alpha`, shrinks by one when `diff > beta`, and holds
//! otherwise; in slow start it doubles every other RTT and leaves slow start when
//! `diff > gamma`. Loss: a packet is retransmitted on the 3rd dupack, or on any dupack once it
//! is older than a fine-grained timeout; the window is cut (to 3/4, or 1/2 for a
//! retransmitted packet) only if it has not been cut since that packet left. A coarse timeout
//! sets cwnd to 2.

use std::collections::VecDeque;

use tfrc::Time;

use super::sender::{CwndAction, CwndCut, TcpSender};
use super::TcpVariant;
use crate::agent::Outbox;

/// When each outstanding packet was last sent (seconds since the first send) and how often.
#[derive(Clone, Copy, Debug, Default)]
struct Sent {
    at: f64,
    transmits: u32,
}

/// Vegas's state (ns-2's `v_*` variables).
#[derive(Clone, Debug)]
pub(super) struct VegasState {
    sent: VecDeque<Sent>,
    /// Sequence number of `sent[0]`.
    sent_first: i64,
    /// The first ACK has initialised the fine-grained estimator (`firstrecv_`).
    started: bool,
    /// When cwnd was last cut (`t_cwnd_changed_`).
    cwnd_changed: f64,
    /// Fine-grained RTT mean ×8 and deviation ×4 (`v_sa_`, `v_sd_`), seconds.
    sa: f64,
    sd: f64,
    /// Fine-grained timeout (`v_timeout_`), seconds.
    fine_timeout: f64,
    /// ACKs still to check for expired packets (`v_worried_`).
    worried: i64,
    /// The packet that ends the current RTT (`v_begseq_`) and when it began.
    begseq: i64,
    begtime: f64,
    /// Fine-grained samples in the current RTT.
    sum_rtt: f64,
    cnt_rtt: u32,
    base_rtt: f64,
    /// cwnd increase per ACK for this RTT (`v_incr_`).
    incr: f64,
    /// Slow start grows every other RTT (`v_inc_flag_`).
    inc_flag: bool,
    /// The window after the last dupack cut, before inflation (`v_newcwnd_`).
    newcwnd: f64,
    /// The last `diff`, packets.
    last_diff: f64,
}

impl Default for VegasState {
    fn default() -> VegasState {
        VegasState {
            sent: VecDeque::new(),
            sent_first: 0,
            started: false,
            cwnd_changed: 0.0,
            sa: 0.0,
            sd: 0.0,
            fine_timeout: 1000.0,
            worried: 0,
            begseq: 0,
            begtime: 0.0,
            sum_rtt: 0.0,
            cnt_rtt: 0,
            base_rtt: 1e9,
            incr: 0.0,
            inc_flag: true,
            newcwnd: 0.0,
            last_diff: f64::NAN,
        }
    }
}

impl VegasState {
    /// The smallest RTT seen, in seconds (NaN before the first ACK).
    pub(super) fn base_rtt_secs(&self) -> f64 {
        if self.started {
            self.base_rtt
        } else {
            f64::NAN
        }
    }

    /// The last per-RTT `diff` (NaN before the first).
    pub(super) fn last_diff(&self) -> f64 {
        self.last_diff
    }

    fn get(&self, seq: i64) -> Option<Sent> {
        if seq < self.sent_first {
            return None;
        }
        self.sent.get((seq - self.sent_first) as usize).copied()
    }

    /// Forgets packets up to `ack`.
    fn acked(&mut self, ack: i64) {
        while self.sent_first <= ack && !self.sent.is_empty() {
            self.sent.pop_front();
            self.sent_first += 1;
        }
        if self.sent.is_empty() && self.sent_first <= ack {
            self.sent_first = ack + 1;
        }
    }
}

impl TcpSender {
    /// Seconds since the first packet was sent (ns-2 `vegastime()`).
    fn vegas_time(&self, now: Time) -> f64 {
        self.first_sent
            .map_or(0.0, |first| now.saturating_since(first).as_secs_f64())
    }

    /// Whether Vegas is inflating its window after a retransmission.
    pub(super) fn vegas_inflated(&self) -> bool {
        self.cfg.variant == TcpVariant::Vegas && self.dupacks >= self.cfg.numdupacks
    }

    /// Records the send time of `seqno` (Vegas `output`).
    pub(super) fn vegas_on_output(&mut self, now: Time, seqno: i64) {
        let t = self.vegas_time(now);
        let v = &mut self.vegas;
        if seqno < v.sent_first {
            return;
        }
        let index = (seqno - v.sent_first) as usize;
        while v.sent.len() <= index {
            v.sent.push_back(Sent::default());
        }
        v.sent[index].at = t;
        v.sent[index].transmits += 1;
    }

    /// The packet after `ack`, if it was sent and is older than the fine-grained timeout
    /// (`vegas_expire`).
    fn vegas_expired(&self, now: Time, ack: i64) -> Option<i64> {
        let sent = self.vegas.get(ack + 1).filter(|s| s.transmits > 0)?;
        (self.vegas_time(now) - sent.at >= self.vegas.fine_timeout).then_some(ack + 1)
    }

    /// A Vegas ACK (`VegasTcpAgent::recv`).
    pub(super) fn vegas_recv(&mut self, now: Time, ack: i64, out: &mut Outbox) {
        let t = self.vegas_time(now);
        if !self.vegas.started {
            let v = &mut self.vegas;
            v.started = true;
            v.base_rtt = t;
            v.sa = t * 8.0;
            v.sd = t;
            v.fine_timeout = ((v.sa / 4.0) + v.sd) / 2.0;
        }
        let numdupacks = self.cfg.numdupacks;
        if ack > self.last_ack {
            if self.last_ack == 0 && self.cfg.syn && self.cfg.delay_growth {
                self.cwnd = self.wnd_init;
            }
            // ns-2 also "deflates" to a v_newcwnd_ of 0 left by a timeout, stalling the
            // sender until the next timeout; netsim deflates only after a dupack cut.
            if self.dupacks > numdupacks
                && self.vegas.newcwnd > 0.0
                && self.cwnd > self.vegas.newcwnd
            {
                // Deflate after the retransmission; Vegas uses ssthresh only in slow start.
                self.cwnd = self.vegas.newcwnd;
                self.ssthresh = 2.0;
            }
            let acked = self.vegas.get(ack);
            self.newack(now, ack);
            if ack >= self.vegas.begseq {
                self.vegas_per_rtt(t);
            }
            if self.vegas.incr == 1.0 && self.cwnd >= self.ssthresh {
                self.vegas.incr = 0.0;
            }
            if self.vegas.incr > 0.0 && self.cwnd - ((self.t_seqno - self.last_ack) as f64) <= 2.0 {
                self.cwnd += self.vegas.incr;
            }
            if self.cfg.max_cwnd > 0 && (self.cwnd as i64) > i64::from(self.cfg.max_cwnd) {
                self.cwnd = f64::from(self.cfg.max_cwnd);
            }
            self.vegas.acked(ack);
            if let Some(sent) = acked.filter(|s| s.transmits == 1) {
                let rtt = t - sent.at;
                let v = &mut self.vegas;
                v.sum_rtt += rtt;
                v.cnt_rtt += 1;
                if rtt > 0.0 {
                    v.base_rtt = v.base_rtt.min(rtt);
                    let mut n = rtt - v.sa / 8.0;
                    v.sa += n;
                    n = n.abs() - v.sd / 4.0;
                    v.sd += n;
                    v.fine_timeout = ((v.sa / 4.0) + v.sd) / 2.0;
                    v.fine_timeout += v.fine_timeout / 16.0;
                }
            }
            if self.vegas.worried > 0 {
                self.vegas.worried -= 1;
                match self.vegas_expired(now, ack) {
                    Some(expired) => {
                        self.dupacks = numdupacks;
                        self.output(now, expired, out);
                    }
                    None => self.vegas.worried = 0,
                }
            }
        } else if ack == self.last_ack {
            self.dupacks += 1;
            let expired = self.vegas_expired(now, ack);
            if expired.is_some() || self.dupacks == numdupacks {
                self.vegas_retransmit(now, t, expired, out);
            } else if self.dupacks > numdupacks {
                self.cwnd += 1.0;
            }
        }
        if self.dupacks == 0 || self.dupacks >= numdupacks {
            self.send_much(now, false, 0, out);
        }
    }

    /// The once-per-RTT rate comparison.
    fn vegas_per_rtt(&mut self, t: f64) {
        let params = self.cfg.vegas;
        let v = &mut self.vegas;
        let rtt = if v.cnt_rtt > 0 {
            v.sum_rtt / f64::from(v.cnt_rtt)
        } else {
            t - v.begtime
        };
        v.sum_rtt = 0.0;
        v.cnt_rtt = 0;
        let rtt_len = self.t_seqno - v.begseq;
        if rtt > 0.0 {
            if rtt < v.base_rtt || rtt_len <= 1 {
                v.base_rtt = rtt;
            }
            let actual = rtt_len as f64 / rtt;
            let expect = (self.t_seqno - self.last_ack) as f64 / v.base_rtt;
            // C's int(): truncation toward zero after adding 0.5.
            let diff = ((expect - actual) * v.base_rtt + 0.5).trunc();
            v.last_diff = diff;
            if self.cwnd < self.ssthresh {
                v.inc_flag = !v.inc_flag;
                if !v.inc_flag {
                    v.incr = 0.0;
                } else if diff > params.gamma {
                    self.ssthresh = 2.0;
                    self.cwnd -= self.cwnd / 8.0;
                    if self.cwnd < 2.0 {
                        self.cwnd = 2.0;
                    }
                    v.incr = 0.0;
                } else {
                    v.incr = 1.0;
                }
            } else if diff > params.beta {
                self.cwnd -= 1.0;
                if self.cwnd < 2.0 {
                    self.cwnd = 2.0;
                }
                v.incr = 0.0;
            } else if diff < params.alpha {
                v.incr = 1.0 / self.cwnd;
            } else {
                v.incr = 0.0;
            }
        }
        v.begseq = self.t_seqno;
        v.begtime = t;
    }

    /// Retransmission on the 3rd dupack or an expired packet, with the window cut if it was not
    /// cut since the packet left.
    fn vegas_retransmit(&mut self, now: Time, t: f64, expired: Option<i64>, out: &mut Outbox) {
        let first = self.vegas.get(self.last_ack + 1).unwrap_or_default();
        if self.last_ack >= self.maxseq
            || !(self.highest_ack > self.recover || self.last_cwnd_action != CwndAction::Timeout)
        {
            return;
        }
        let mut win = self.window();
        self.last_cwnd_action = CwndAction::Dupack;
        self.recover = self.maxseq;
        self.stats.fast_retransmits += 1;
        self.vegas.worried = (self.t_seqno - self.last_ack).min(2);
        if first.transmits > 1 {
            self.vegas.fine_timeout *= 2.0;
        } else {
            self.vegas.fine_timeout += self.vegas.fine_timeout / 8.0;
        }
        if first.transmits > 0 && self.vegas.cwnd_changed < first.at {
            win = if win <= 3 {
                2
            } else if first.transmits > 1 {
                win >> 1
            } else {
                win - (win >> 2)
            };
            self.vegas.newcwnd = win as f64;
            self.cwnd = self.vegas.newcwnd + f64::from(self.dupacks);
            self.vegas.cwnd_changed = t;
        }
        // ns-2 Vegas backs the coarse timer off here too (`reset_rtx_timer(1)`).
        self.reset_rtx_timer(now, true, true);
        self.output(now, expired.unwrap_or(self.last_ack + 1), out);
        if first.transmits == 1 {
            self.dupacks = self.cfg.numdupacks;
        }
    }

    /// The coarse retransmission timeout (`VegasTcpAgent::timeout`): cwnd = 2, ssthresh
    /// halves, back off, go back N.
    pub(super) fn vegas_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.highest_ack == self.maxseq {
            // Nothing outstanding: nothing to time out (netsim stops the timer when idle).
            self.rtx_at = None;
            return;
        }
        self.dupacks = 0;
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::Timeout;
        self.reset_rtx_timer(now, false, true);
        self.stats.timeouts += 1;
        self.slowdown(now, true, CwndCut::One);
        self.cwnd = 2.0;
        self.vegas.newcwnd = 0.0;
        self.vegas.cwnd_changed = self.vegas_time(now);
        self.send_much(now, false, 0, out);
    }
}
