//! Loss recovery of Tahoe, Reno and NewReno (ns-2 `tcp.cc`, `tcp-reno.cc`, `tcp-newreno.cc`;
//! protocols.md §1.4-§1.6). All three fast-retransmit on the `numdupacks`-th duplicate ACK
//! unless still recovering from an earlier event (`highest_ack <= recover`, ns-2's `bugFix_`);
//! they differ in what follows:
//! - Tahoe: ssthresh halves, cwnd = 1, go back N;
//! - Reno: ssthresh and cwnd halve, one retransmission, the window inflates by one per further
//!   dupack, and any new ACK ends recovery (so more losses in the window usually mean a timeout);
//! - NewReno: as Reno, but a partial ACK (below `recover`) retransmits the next hole and keeps
//!   recovery, with optional partial window deflation; the timer restarts on the first partial
//!   ACK only when `newreno_impatient` (RFC 6582 §3-§4).

use tfrc::Time;

use super::sender::{CwndAction, CwndCut, TcpSender};
use crate::agent::Outbox;

impl TcpSender {
    /// Whether a fast retransmit may start now: something is outstanding, and the previous
    /// recovery is over or only the SYN has been acked so far (ns-2 `bugfix_ss_`, so that a
    /// lost first data packet can be fast retransmitted). (ns-2 would also "retransmit" a
    /// packet never sent on duplicate ACKs of a finished transfer; netsim does not.)
    pub(super) fn may_fast_retransmit(&self) -> bool {
        self.highest_ack < self.maxseq && (self.highest_ack > self.recover || self.highest_ack == 0)
    }

    /// Tahoe (`TcpAgent::recv`).
    pub(super) fn tahoe_recv(&mut self, now: Time, ack: i64, out: &mut Outbox) {
        if ack > self.last_ack {
            self.recv_newack(now, ack);
            self.after_syn_acked();
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.cfg.numdupacks {
                if self.may_fast_retransmit() {
                    self.recover = self.maxseq;
                    self.stats.fast_retransmits += 1;
                    self.last_cwnd_action = CwndAction::Dupack;
                    self.slowdown(now, true, CwndCut::One);
                    self.reset_rtx_timer(now, false, false);
                }
            } else if self.dupacks < self.cfg.numdupacks && self.cfg.limited_transmit {
                self.send_one(now, out);
            }
        }
        if ack >= self.last_ack {
            self.send_much(now, false, 0, out);
        }
    }

    /// Reno's fast retransmit (`RenoTcpAgent::dupack_action`), shared by NewReno.
    fn reno_fast_retransmit(&mut self, now: Time, out: &mut Outbox) {
        self.recover = self.maxseq;
        self.stats.fast_retransmits += 1;
        self.last_cwnd_action = CwndAction::Dupack;
        self.slowdown(now, true, CwndCut::Decrease);
        self.reset_rtx_timer(now, true, false);
        self.output(now, self.last_ack + 1, out);
        self.dupwnd = f64::from(self.cfg.numdupacks);
    }

    /// Reno (`RenoTcpAgent::recv`).
    pub(super) fn reno_recv(&mut self, now: Time, ack: i64, out: &mut Outbox) {
        if ack > self.last_ack {
            if self.last_cwnd_action == CwndAction::Dupack {
                self.last_cwnd_action = CwndAction::Exited;
                self.cc_recovered(now);
            }
            self.dupwnd = 0.0;
            self.recv_newack(now, ack);
            self.after_syn_acked();
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.cfg.numdupacks {
                if self.may_fast_retransmit() || self.last_cwnd_action == CwndAction::Dupack {
                    self.reno_fast_retransmit(now, out);
                }
            } else if self.dupacks > self.cfg.numdupacks {
                if self.last_cwnd_action == CwndAction::Dupack {
                    self.dupwnd += 1.0;
                }
            } else if self.cfg.limited_transmit {
                self.send_one(now, out);
            }
        }
        if ack >= self.last_ack && (self.dupacks == 0 || self.dupacks >= self.cfg.numdupacks) {
            self.send_much(now, false, 0, out);
        }
    }

    /// NewReno (`NewRenoTcpAgent::recv`).
    pub(super) fn newreno_recv(&mut self, now: Time, ack: i64, out: &mut Outbox) {
        if ack > self.last_ack {
            if ack >= self.recover || self.last_cwnd_action != CwndAction::Dupack {
                // A full ACK (or no recovery): leave recovery with cwnd as it was cut.
                if self.dupwnd > 0.0 {
                    self.dupwnd = 0.0;
                    if self.last_cwnd_action == CwndAction::Dupack {
                        self.last_cwnd_action = CwndAction::Exited;
                        self.cc_recovered(now);
                    }
                }
                self.firstpartial = false;
                self.recv_newack(now, ack);
                self.after_syn_acked();
            } else {
                self.partial_ack(now, ack, out);
            }
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.cfg.numdupacks {
                if self.may_fast_retransmit() {
                    self.reno_fast_retransmit(now, out);
                }
            } else if self.dupacks > self.cfg.numdupacks {
                if self.last_cwnd_action == CwndAction::Dupack {
                    self.dupwnd += 1.0;
                }
            } else if self.cfg.limited_transmit {
                self.send_one(now, out);
            }
        }
        if ack >= self.last_ack {
            if self.dupacks == 0 {
                self.send_much(now, false, 0, out);
            } else if self.dupacks >= self.cfg.numdupacks {
                // ns-2 limits the burst to 2 packets while recovering.
                self.send_much(now, false, 2, out);
            }
        }
    }

    /// A NewReno partial ACK: deflate, restart the timer (first partial ACK only when
    /// impatient), retransmit the next hole, stay in recovery; cwnd does not grow.
    fn partial_ack(&mut self, now: Time, ack: i64, out: &mut Outbox) {
        if !self.cfg.partial_window_deflation {
            self.dupwnd = 0.0;
        }
        if !self.cfg.newreno_impatient || !self.firstpartial {
            self.firstpartial = true;
            self.newtimer(now, ack);
        }
        if self.cfg.partial_window_deflation {
            // RFC 6582 §3.2 step 3: deflate by the newly acked amount, add back one.
            let deflate = (ack - self.last_ack) as f64;
            if self.dupwnd > deflate {
                self.dupwnd -= deflate - 1.0;
            } else {
                self.cwnd -= deflate - self.dupwnd;
                // Keep dupwnd above 0 to flag fast recovery.
                self.dupwnd = 1.0;
            }
            if self.cwnd < 1.0 {
                self.cwnd = 1.0;
            }
        }
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.rtt_active && ack >= self.rtt_seq {
            // Karn: the timed packet may have been retransmitted; no sample.
            self.rtt_active = false;
            self.rto.reset_backoff();
        }
        self.output(now, self.last_ack + 1, out);
    }
}
