//! SACK loss recovery (protocols.md §1.7), in two flavours:
//!
//! - ns-2 `Agent/TCP/Sack1` (`tcp/tcp-sack1.cc`): only duplicate ACKs that carry new SACK
//!   information count; on the `numdupacks`-th, ssthresh and cwnd halve, `pipe` is set to the
//!   packets outstanding minus `numdupacks`, and the first hole is retransmitted. In recovery
//!   every ACK takes one from `pipe` (a partial ACK one more, restarting the timer), each
//!   packet sent adds one, and the sender sends while `pipe < cwnd`: first the lowest hole below
//!   the highest SACKed packet not yet retransmitted (any such hole counts as lost), then new
//!   data. Recovery ends when the ACK reaches `recover`; cwnd neither grows nor inflates in it.
//! - RFC 6675: `IsLost` needs `numdupacks` SACKed packets above a hole, `pipe` is recomputed
//!   on every ACK by `SetPipe`, the sender sends while `cwnd - pipe >= 1` what `NextSeg`
//!   chooses (lost holes, new data, other holes, one rescue retransmission), and entry sets
//!   ssthresh = cwnd = max(FlightSize/2, 2) (RFC 5681 eq. 4).
//!
//! Both discard the scoreboard on a timeout and go back N (RFC 6675 §5.1 allows keeping it);
//! under BBR the scoreboard is kept and going back N skips SACKed packets, as in Linux.

use tfrc::Time;

use super::controller::Reduction;
use super::header::TcpAck;
use super::prr::PrrAck;
use super::scoreboard::Scoreboard;
use super::sender::{CwndAction, CwndCut, TcpSender};
use super::tlp::AckFlags;
use super::{SackRecovery, SsthreshBase, TcpConfig, TcpVariant};
use crate::agent::Outbox;

/// What an ACK lets the sender send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AckSend {
    /// As much as the window allows.
    Much,
    /// One new packet (limited transmit, RFC 3042).
    LimitedTransmit,
    /// Nothing.
    Nothing,
}

/// SACK sender state.
#[derive(Clone, Debug, Default)]
pub(super) struct SackState {
    pub(super) scoreboard: Scoreboard,
    /// In fast recovery (`fastrecov_`).
    pub(super) in_recovery: bool,
    /// Sack1's estimate of packets in the network (`pipe_`).
    pipe: i64,
    /// The last retransmission timeout has not been followed by a new ACK yet (`timeout_`):
    /// duplicate ACKs are ignored meanwhile.
    after_timeout: bool,
    /// The recovery point `recover` was set by a retransmission timeout, not by a fast
    /// recovery: Linux's Loss state, which lasts until the cumulative ACK passes it.
    recover_after_timeout: bool,
    /// RFC 6675 HighRxt: the highest packet retransmitted in this recovery.
    high_rxt: i64,
    /// BBR's first retransmission of a recovery, decided by the ACK and sent once BBR has set
    /// cwnd for it ([`TcpSender::rfc6675_entry_retransmission`]).
    pub(super) entry_rtx: Option<i64>,
    /// RFC 6675 RescueRxt.
    rescue_rxt: Option<i64>,
}

impl TcpSender {
    fn rfc6675(&self) -> bool {
        self.cfg.sack_recovery == SackRecovery::Rfc6675
    }

    /// A SACK sender's ACK (`Sack1TcpAgent::recv`, or the RFC 6675 rules).
    pub(super) fn sack_recv(&mut self, now: Time, ack: &TcpAck, out: &mut Outbox) {
        if self.rfc6675() {
            return self.rfc6675_recv(now, ack, out);
        }
        let seq = ack.seqno();
        let valid = seq >= self.last_ack;
        if !self.sack.in_recovery {
            if seq > self.last_ack {
                self.firstpartial = false;
                self.recv_newack(now, seq);
                self.sack.after_timeout = false;
                self.sack.scoreboard.clear();
                self.after_syn_acked();
            } else if seq == self.last_ack && !self.sack.after_timeout {
                let changed = self.sack.scoreboard.update(self.highest_ack, ack.blocks());
                if changed {
                    self.dupacks += 1;
                    if self.dupacks == self.cfg.numdupacks {
                        self.sack1_enter_recovery(now, out);
                    } else if self.dupacks < self.cfg.numdupacks && self.cfg.limited_transmit {
                        self.send_one(now, out);
                    }
                }
            }
            if valid && self.dupacks == 0 {
                self.send_much(now, false, 0, out);
            }
        } else {
            self.sack.pipe -= 1;
            if seq >= self.recover {
                // Recovery is over; cwnd stays where the cut left it.
                self.recover = 0;
                self.sack.in_recovery = false;
                self.newack(now, seq);
                self.cc_recovered(now);
                self.sack.after_timeout = false;
                self.sack.scoreboard.clear();
            } else if seq > self.highest_ack {
                // A partial ACK: count it twice, restart the timer.
                self.highest_ack = seq;
                self.sack.scoreboard.update(self.highest_ack, ack.blocks());
                self.sack.pipe -= 1;
                self.newtimer(now, seq);
                self.rto.reset_backoff();
            } else if !self.sack.after_timeout {
                let changed = self.sack.scoreboard.update(self.highest_ack, ack.blocks());
                if changed && self.dupacks > 0 {
                    self.dupacks += 1;
                }
            }
            if valid {
                self.send_much(now, false, 0, out);
            }
        }
    }

    /// Sack1's `dupack_action`.
    fn sack1_enter_recovery(&mut self, now: Time, out: &mut Outbox) {
        if !self.may_fast_retransmit() {
            return;
        }
        self.recover = self.maxseq;
        self.sack.pipe = self.maxseq - self.highest_ack - i64::from(self.cfg.numdupacks);
        self.reset_rtx_timer(now, true, false);
        self.sack.in_recovery = true;
        self.stats.fast_retransmits += 1;
        self.sack
            .scoreboard
            .mark_retransmitted(self.highest_ack + 1);
        self.last_cwnd_action = CwndAction::Dupack;
        self.slowdown(now, true, CwndCut::Decrease);
        self.output(now, self.last_ack + 1, out);
    }

    /// Sending for SACK senders (`Sack1TcpAgent::send_much`, or RFC 6675 §5 step (C)).
    pub(super) fn sack_send_much(
        &mut self,
        now: Time,
        force: bool,
        maxburst: u32,
        out: &mut Outbox,
    ) {
        if !force && self.delsnd_at.is_some() {
            return;
        }
        if self.rfc6675() && self.sack.in_recovery {
            return self.rfc6675_send(now, force, out);
        }
        let rwnd = i64::from(self.cfg.window);
        let mut win = self.window();
        // Linux: SACKed packets have left the flight, so new data is limited by the packets in
        // flight against cwnd and by the receive window alone.
        let sacked_out = !self.sack.in_recovery && self.sacked_out_of_flight_now();
        if sacked_out {
            win = rwnd;
        }
        let mut sent = 0;
        loop {
            let open = if self.sack.in_recovery {
                self.sack.pipe < self.cwnd as i64
            } else if sacked_out {
                self.packets_in_flight() < self.cwnd as i64 && self.t_seqno <= self.last_ack + rwnd
            } else {
                self.t_seqno <= self.last_ack + win
            };
            if !open || self.last_ack + 1 >= self.curseq {
                break;
            }
            if !self.may_send_now(now, force) {
                break;
            }
            // Outside recovery an RFC 6675 sender only sends new data.
            let hole = if self.rfc6675() {
                None
            } else {
                self.sack.scoreboard.next_retransmission()
            };
            if self.cfg.variant == TcpVariant::Bbr {
                // Going back N after a timeout skips what the receiver SACKed (Linux keeps
                // the scoreboard; ns-2's agents discard it).
                while self.t_seqno <= self.maxseq && self.sack.scoreboard.is_sacked(self.t_seqno) {
                    self.t_seqno += 1;
                }
            }
            let next = match hole {
                None => {
                    let limit = if self.sack.in_recovery { rwnd } else { win };
                    if self.t_seqno <= self.highest_ack + limit && self.t_seqno < self.curseq {
                        self.t_seqno += 1;
                        Some(self.t_seqno - 1)
                    } else {
                        None
                    }
                }
                Some(hole) if self.recover > 0 && hole <= self.highest_ack + rwnd => {
                    self.sack.scoreboard.mark_retransmitted(hole);
                    win = self.window();
                    Some(hole)
                }
                Some(_) => None,
            };
            let Some(seq) = next else { break };
            self.output(now, seq, out);
            if self.t_seqno <= seq {
                self.t_seqno = seq + 1;
            }
            sent += 1;
            self.sack.pipe += 1;
            if maxburst > 0 && sent == maxburst {
                break;
            }
        }
        if sent > 0 {
            self.tlp_schedule(now, false);
        }
    }

    /// Whether SACKed packets leave the flight now ([`TcpConfig::sacked_out_of_flight`]): not
    /// while a hole could not start a recovery (after a timeout until the cumulative ACK
    /// passes its recovery point, or, without RACK, after a recovery until it passes that
    /// one's). There Linux's Loss state retransmits every packet marked lost before new data
    /// (`tcp_xmit_retransmit_queue`), which netsim's going back N does not model: new data
    /// would run away behind the hole, every SACKed packet freeing a slot. RFC 6675's bound
    /// (snd_una + cwnd) holds instead and the next timeout repairs the hole, as without the
    /// rule.
    ///
    /// [`TcpConfig::sacked_out_of_flight`]: super::TcpConfig::sacked_out_of_flight
    fn sacked_out_of_flight_now(&self) -> bool {
        if !self.cfg.uses_sacked_out_of_flight() {
            return false;
        }
        self.highest_ack >= self.maxseq
            || if self.rack.is_some() {
                self.rack_may_recover()
            } else {
                self.may_fast_retransmit()
            }
    }

    /// Linux's `tcp_packets_in_flight` outside recovery: the packets sent and not cumulatively
    /// acked, less those SACKed or marked lost by RACK, plus those retransmitted.
    pub(super) fn packets_in_flight(&self) -> i64 {
        let high = self.t_seqno - 1;
        if self.sack.scoreboard.is_empty() {
            return (high - self.highest_ack).max(0);
        }
        self.sack.scoreboard.pipe(self.highest_ack, high, None)
    }

    /// Sack1's and RFC 6675's timeout additions: leave recovery, ignore dupacks until a new
    /// ACK, forget the scoreboard.
    pub(super) fn sack_on_timeout(&mut self) {
        self.dupacks = 0;
        self.sack.in_recovery = false;
        self.sack.after_timeout = true;
        if self.highest_ack > self.last_ack {
            self.last_ack = self.highest_ack;
        }
        self.recover = self.maxseq;
        self.sack.recover_after_timeout = true;
        if self.cfg.variant != TcpVariant::Bbr {
            self.sack.scoreboard.clear();
        }
    }

    /// Whether a packet RACK marks lost may start a recovery now. Linux enters recovery whenever
    /// a packet is marked lost (`tcp_time_to_recover`: `lost_out` > 0) from the Open and
    /// Disorder states, with no check against the previous recovery's point for a SACK
    /// connection, so recovery starts again on the ACK that ends one when losses remain; only
    /// the Loss state after a timeout waits until the cumulative ACK passes its point
    /// (`tcp_process_loss`). ns-2's rule (`may_fast_retransmit`, its `bugfix_`: no new fast
    /// retransmit until the ACK passes `recover`) would leave a loss just above the old point
    /// unrepaired until a timeout.
    fn rack_may_recover(&self) -> bool {
        self.highest_ack < self.maxseq
            && (!self.sack.recover_after_timeout || self.highest_ack > self.recover)
    }

    /// An ACK under RFC 6675 (§5): scoreboard update, DupAcks counting ACKs with new SACK
    /// information, entry on DupThresh or `IsLost(HighACK+1)`, and sending per `NextSeg`.
    fn rfc6675_recv(&mut self, now: Time, ack: &TcpAck, out: &mut Outbox) {
        let send = self.rfc6675_ack(now, ack, out);
        if let Some(rate) = self.rate.as_mut() {
            rate.generate(now, 0);
        }
        self.send_after_ack(now, send, out);
    }

    /// Sends what an ACK allows.
    pub(super) fn send_after_ack(&mut self, now: Time, send: AckSend, out: &mut Outbox) {
        match send {
            AckSend::Much => self.sack_send_much(now, false, 0, out),
            AckSend::LimitedTransmit => self.send_one(now, out),
            AckSend::Nothing => {}
        }
    }

    /// An ACK under RFC 6675 up to sending: the scoreboard, the ACK counting and recovery
    /// entry (with its first retransmission); says what may be sent next.
    pub(super) fn rfc6675_ack(&mut self, now: Time, ack: &TcpAck, out: &mut Outbox) -> AckSend {
        let seq = ack.seqno();
        if let Some(rate) = self.rate.as_mut() {
            rate.on_ack(seq, ack.blocks());
        }
        let thresh = self.cfg.numdupacks;
        let delivery_mark = self.prr_delivery_mark();
        let advanced = seq > self.highest_ack;
        // Whether this ACK's SACK blocks are already on the scoreboard.
        let mut scoreboard_updated = false;
        if advanced {
            self.tlp_on_ack(
                now,
                seq,
                AckFlags {
                    advanced,
                    sacked: false,
                },
            );
            if self.sack.in_recovery && seq >= self.recover {
                self.sack.in_recovery = false;
                self.newack(now, seq);
                self.prr_end();
                self.cc_recovered(now);
                if self.rack.is_none() {
                    self.sack.scoreboard.clear();
                }
                // With RACK the marks stay, as Linux keeps each packet's SACKED, LOST and
                // SACKED_RETRANS bits until it is acknowledged: a packet lost above the old
                // recovery point and resent during it still counts as lost (below).
            } else if self.sack.in_recovery {
                // A partial ACK: no growth in recovery (RFC 6675 §5 (C)); restart the timer.
                self.newack(now, seq);
            } else if self.cfg.uses_sacked_out_of_flight() && !self.sack.after_timeout {
                // Linux grows the window by every packet this ACK newly delivers, the packets
                // it SACKs included (`tcp_newly_delivered`).
                let board = &mut self.sack.scoreboard;
                let before = self.highest_ack + board.sacked_count();
                board.update(seq, ack.blocks());
                scoreboard_updated = true;
                let delivered = seq + board.sacked_count() - before;
                self.recv_newack_delivered(now, seq, delivered);
                self.after_syn_acked();
            } else {
                self.recv_newack(now, seq);
                self.after_syn_acked();
            }
            self.sack.after_timeout = false;
            if !scoreboard_updated {
                self.sack.scoreboard.update(self.highest_ack, ack.blocks());
            }
        } else if seq == self.highest_ack && !self.sack.after_timeout {
            let sacked = self.sack.scoreboard.update(self.highest_ack, ack.blocks());
            if sacked {
                self.dupacks += 1;
            }
            self.tlp_on_ack(now, seq, AckFlags { advanced, sacked });
        } else {
            return AckSend::Nothing;
        }
        let newly_lost = if self.rack.is_some() {
            self.rack_detect(now)
        } else {
            0
        };
        let prr_ack = PrrAck {
            delivered: delivery_mark.map_or(0, |before| {
                let after = self.prr_delivery_mark().unwrap_or(before);
                after - before
            }),
            advanced,
            newly_lost: newly_lost > 0,
        };
        if self.sack.in_recovery {
            self.prr_on_ack(prr_ack);
        } else {
            // With RACK a packet is lost when RACK says so, and only then does recovery begin
            // (Linux's `tcp_time_to_recover` with RACK on: DupThresh counting is off). Linux
            // asks whether `lost_out` > 0, which counts a lost packet until it is delivered,
            // resent or not: the ACK that ends a recovery while a packet lost above its point
            // is still unacknowledged begins the next one at once, and cuts the window again
            // (`tcp_fastretrans_alert`: `tcp_try_undo_recovery` opens the state, then
            // `tcp_time_to_recover` and `tcp_enter_recovery` on the same ACK).
            let lost = if self.rack.is_some() {
                self.sack.scoreboard.any_rack_lost()
            } else {
                self.dupacks >= thresh
                    || self
                        .sack
                        .scoreboard
                        .lost_below(thresh)
                        .is_some_and(|l| self.highest_ack + 1 < l)
            };
            let may = if self.rack.is_some() {
                self.rack_may_recover()
            } else {
                self.may_fast_retransmit()
            };
            if lost && may {
                self.rfc6675_enter_recovery(now, prr_ack, out);
            } else if seq == self.highest_ack
                && self.dupacks > 0
                && self.dupacks < thresh
                && self.cfg.limited_transmit
                && !self.sacked_out_of_flight_now()
            {
                return AckSend::LimitedTransmit;
            }
        }
        if advanced {
            self.tlp_schedule(now, true);
        }
        if self.dupacks == 0 || self.sack.in_recovery || self.sacked_out_of_flight_now() {
            AckSend::Much
        } else {
            AckSend::Nothing
        }
    }

    /// RFC 6675 §5 step (4): RecoveryPoint = HighData, ssthresh = cwnd = max(FlightSize/2, 2)
    /// (times `decrease_num`/0.5 for non-standard decreases; cwnd instead of FlightSize with
    /// [`SsthreshBase::Cwnd`]), retransmit the first hole.
    fn rfc6675_enter_recovery(&mut self, now: Time, ack: PrrAck, out: &mut Outbox) {
        let prior_cwnd = self.cwnd;
        self.recover = self.maxseq;
        self.sack.recover_after_timeout = false;
        self.sack.in_recovery = true;
        self.stats.fast_retransmits += 1;
        self.last_cwnd_action = CwndAction::Dupack;
        if self.cc.is_some() {
            self.cc_reduce(now, Reduction::Recovery);
        } else if self.cfg.variant == TcpVariant::Bbr {
            self.bbr_enter_recovery();
        } else {
            self.cut_to_recovery_ssthresh();
        }
        self.first_decrease = false;
        self.tlp_reset();
        self.prr_start(prior_cwnd, ack);
        self.reset_rtx_timer(now, true, false);
        self.sack.rescue_rxt = None;
        let first = self.highest_ack + 1;
        if self.rack.is_some() && self.sack.scoreboard.is_retransmitted(first) {
            // Resent in the recovery before and not found lost again: Linux's
            // `tcp_xmit_retransmit_queue` skips a packet marked SACKED_RETRANS.
            return;
        }
        if self.cfg.variant == TcpVariant::Bbr {
            // Linux's `tcp_ack` runs the congestion control (BBR's packet conservation:
            // cwnd = packets in flight + packets delivered) before `tcp_xmit_recovery` sends
            // the retransmission, so BBR counts it out of flight (see `bbr_recv`).
            self.sack.entry_rtx = Some(first);
            return;
        }
        self.rfc6675_entry_retransmission(now, first, out);
    }

    /// RFC 6675 §5 step (4)'s retransmission of the first hole, the recovery's first.
    pub(super) fn rfc6675_entry_retransmission(&mut self, now: Time, first: i64, out: &mut Outbox) {
        self.sack.scoreboard.mark_retransmitted(first);
        self.sack.high_rxt = first;
        self.output(now, first, out);
        self.prr_sent();
    }

    /// The built-in reduction on entering recovery (and of Linux's CWR): ssthresh from
    /// CUBIC (`cubictcp_recalc_ssthresh`) or RFC 6675 §5 step (4) ([`rfc6675_ssthresh`]), and
    /// cwnd = ssthresh.
    pub(super) fn cut_to_recovery_ssthresh(&mut self) {
        let flight = (self.maxseq - self.highest_ack) as f64;
        self.ssthresh = match self.cubic_recovery_ssthresh() {
            Some(ssthresh) => ssthresh,
            None => rfc6675_ssthresh(&self.cfg, self.cwnd, flight),
        };
        self.cwnd = self.ssthresh;
    }

    /// RFC 6675 `NextSeg` (§4). With RACK, Linux's choice instead (`tcp_xmit_retransmit_queue`):
    /// the packets RACK found lost, then new data; no hole RACK has not found lost is sent again
    /// (its retransmission may still be in flight), and no rescue retransmission.
    fn rfc6675_next_seg(&mut self) -> Option<i64> {
        let thresh = self.cfg.numdupacks;
        let board = &self.sack.scoreboard;
        let from = self.sack.high_rxt.max(self.highest_ack) + 1;
        let lost_below = board.lost_below(thresh);
        if self.rack.is_some() {
            if let Some(seq) = board.next_rack_lost() {
                self.sack.high_rxt = self.sack.high_rxt.max(seq);
                return Some(seq);
            }
            return self.rfc6675_new_data();
        }
        // (1) the first lost hole above HighRxt.
        if let Some(hole) = board.next_unsacked(from) {
            if lost_below.is_some_and(|l| hole < l) {
                self.sack.high_rxt = hole;
                return Some(hole);
            }
        }
        // (2) new data, if the receiver window allows.
        if let Some(seq) = self.rfc6675_new_data() {
            return Some(seq);
        }
        let board = &self.sack.scoreboard;
        // (3) any hole above HighRxt.
        if let Some(hole) = board.next_unsacked(from) {
            self.sack.high_rxt = hole;
            return Some(hole);
        }
        // (4) one rescue retransmission of the highest unSACKed packet per recovery.
        if self.sack.rescue_rxt.is_none_or(|r| self.highest_ack > r) {
            let highest = (self.highest_ack + 1..=self.maxseq)
                .rev()
                .find(|&s| !board.is_sacked(s))?;
            self.sack.rescue_rxt = Some(self.recover);
            return Some(highest);
        }
        None
    }

    /// `NextSeg` rule (2): the next new packet, if the application has one and the receiver
    /// window allows it.
    fn rfc6675_new_data(&mut self) -> Option<i64> {
        if self.t_seqno < self.curseq
            && self.t_seqno <= self.highest_ack + i64::from(self.cfg.window)
        {
            self.t_seqno += 1;
            return Some(self.t_seqno - 1);
        }
        None
    }

    /// `SetPipe`'s `IsLost` rule: DupThresh SACKed packets above, or (with RACK, as in Linux)
    /// none: only what RACK marked is lost.
    pub(super) fn pipe_dup_thresh(&self) -> Option<u32> {
        self.rack.is_none().then_some(self.cfg.numdupacks)
    }

    /// RFC 6675 §5 (C): send while cwnd - pipe >= 1.
    fn rfc6675_send(&mut self, now: Time, force: bool, out: &mut Outbox) {
        let thresh = self.pipe_dup_thresh();
        let mut pipe = self
            .sack
            .scoreboard
            .pipe(self.highest_ack, self.maxseq, thresh);
        while self.cwnd - pipe as f64 >= 1.0 {
            if !self.may_send_now(now, force) {
                return;
            }
            let Some(seq) = self.rfc6675_next_seg() else {
                break;
            };
            if seq <= self.maxseq {
                self.sack.scoreboard.mark_retransmitted(seq);
            }
            self.output(now, seq, out);
            self.prr_sent();
            if self.t_seqno <= seq {
                self.t_seqno = seq + 1;
            }
            pipe += 1;
        }
    }
}

/// RFC 6675 §5 step (4)'s ssthresh: max(FlightSize/2, 2) (times `decrease_num`/0.5 for
/// non-standard decreases; the whole cwnd instead of FlightSize with [`SsthreshBase::Cwnd`]),
/// in whole packets; `flight` is the packets sent and not cumulatively acked.
pub(super) fn rfc6675_ssthresh(cfg: &TcpConfig, cwnd: f64, flight: f64) -> f64 {
    let base = match cfg.ssthresh_base {
        SsthreshBase::FlightSize => flight,
        SsthreshBase::Cwnd => cwnd.trunc(),
    };
    (base * cfg.decrease_num).trunc().max(2.0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::{TcpConfig, TcpVariant};

    /// A `linux` CUBIC sender whose packet 1 was lost: recovery resent it, packets 2 to 10 were
    /// SACKed, and new data 11 to 16 went out during the recovery; its recovery point is 10.
    fn in_recovery_to_10() -> Driver {
        let mut d = Driver::new(TcpConfig::linux(TcpVariant::Cubic));
        d.wait(Duration::from_millis(49));
        d.ack(0);
        d.wait(Duration::from_millis(50));
        assert_eq!(d.sack(0, &[(2, 5)]), [1]);
        d.sack(0, &[(2, 8)]);
        d.sack(0, &[(2, 11)]);
        assert_eq!((d.sender.recover, d.sender.sack.in_recovery), (10, true));
        d
    }

    #[test]
    fn with_rack_a_loss_just_above_the_recovery_point_starts_a_new_recovery_at_once() {
        // The ACK that ends the recovery (cumulative 10) SACKs 12 to 16: 11, sent before them,
        // is lost. Linux leaves Recovery and enters it again on that ACK (tcp_fastretrans_alert:
        // tcp_time_to_recover with lost_out > 0), resending 11; ns-2's rule (no fast
        // retransmit until the ACK passes the old point) would wait for the timeout.
        let mut d = in_recovery_to_10();
        let fast_retransmits = d.sender.stats.fast_retransmits;
        let sent = d.sack(10, &[(12, 17)]);
        assert_eq!(sent.first(), Some(&11), "{sent:?}");
        assert!(d.sender.sack.in_recovery);
        assert_eq!(d.sender.stats.fast_retransmits, fast_retransmits + 1);
        assert_eq!(d.sender.stats.timeouts, 0);
    }

    #[test]
    fn a_loss_above_the_recovery_point_resent_within_it_starts_the_next_recovery_as_it_ends() {
        // 11, sent during the recovery, is lost: the SACK of 12 to 16 shows it (RACK, no
        // reordering window in recovery) and the recovery resends it. The ACK that ends the
        // recovery (cumulative 10) finds 11 still unacknowledged: Linux's lost_out counts it,
        // so it enters Recovery again on that ACK and cuts the window a second time, without
        // resending 11 (SACKED_RETRANS). Before, netsim forgot 11 at the end of the recovery.
        let mut d = in_recovery_to_10();
        let sent = d.sack(0, &[(12, 17), (2, 11)]);
        assert!(sent.contains(&11), "{sent:?}");
        let fast_retransmits = d.sender.stats.fast_retransmits;
        let ssthresh = d.sender.ssthresh;
        let sent = d.sack(10, &[(12, 17)]);
        assert!(!sent.contains(&11), "{sent:?}");
        assert!(d.sender.sack.in_recovery);
        assert_eq!(d.sender.stats.fast_retransmits, fast_retransmits + 1);
        assert!(
            d.sender.recover > 16,
            "the new recovery point is above the data sent so far"
        );
        // CUBIC's cut of the window the first recovery left: 0.7 of 7, in whole packets.
        assert_eq!((ssthresh, d.sender.ssthresh), (7.0, 4.0));
        // 11's retransmission delivered: nothing is lost, and this recovery ends as usual.
        d.sack(d.sender.recover, &[]);
        assert!(!d.sender.sack.in_recovery);
        assert!(!d.sender.sack.scoreboard.any_rack_lost());
        assert_eq!(d.sender.stats.fast_retransmits, fast_retransmits + 1);
        assert_eq!(d.sender.stats.timeouts, 0);
    }

    #[test]
    fn after_a_timeout_rack_may_recover_only_past_the_timeouts_point() {
        // Linux's Loss state (tcp_process_loss): a recovery point set by a timeout holds new
        // recoveries off until the cumulative ACK passes it; one set by a recovery does not.
        let mut d = in_recovery_to_10();
        d.sender.highest_ack = 12;
        d.sender.recover = 14;
        d.sender.sack.recover_after_timeout = true;
        assert!(!d.sender.rack_may_recover());
        d.sender.recover = 11;
        assert!(d.sender.rack_may_recover());
        d.sender.recover = 14;
        d.sender.sack.recover_after_timeout = false;
        assert!(d.sender.rack_may_recover());
    }

    /// A `linux` SACK sender (RACK off: no RTT sample yet) with `sacked_out_of_flight` as
    /// given, after the SYN's ACK: packets 1 to 10 in flight, slow start.
    fn ten_in_flight(sacked_out_of_flight: bool) -> Driver {
        let mut d = Driver::new(TcpConfig {
            rack: false,
            sacked_out_of_flight,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        assert_eq!(d.ack(0), (1..=10).collect::<Vec<i64>>());
        d
    }

    #[test]
    fn sacked_packets_leave_the_flight_and_grow_the_window_as_in_linux() {
        // 3 is lost: the ACK for 2 SACKs 4. Linux counts the three packets it delivers (cwnd
        // 10 to 13 in slow start) and seven in flight (3 and 5 to 10), so 6 new packets go;
        // RFC 6675 counts the two acked (cwnd 12) and sends up to snd_una + cwnd.
        let mut linux = ten_in_flight(true);
        assert_eq!(linux.sack(2, &[(4, 5)]), (11..=16).collect::<Vec<i64>>());
        assert_eq!(linux.sender.cwnd, 13.0);
        let mut rfc = ten_in_flight(false);
        assert_eq!(rfc.sack(2, &[(4, 5)]), (11..=14).collect::<Vec<i64>>());
        assert_eq!(rfc.sender.cwnd, 12.0);
        // A duplicate ACK SACKing one more packet grows nothing but frees its slot, as limited
        // transmit does without the rule.
        assert_eq!(linux.sack(2, &[(4, 6)]), [17]);
        assert_eq!(linux.sender.cwnd, 13.0);
        assert_eq!(rfc.sack(2, &[(4, 6)]), [15]);
        assert_eq!(rfc.sender.cwnd, 12.0);
    }

    #[test]
    fn a_hole_that_cannot_start_a_recovery_keeps_new_data_within_snd_una_plus_cwnd() {
        // As if a timeout had set the recovery point at 10: the hole at 3 cannot start a
        // recovery until the cumulative ACK passes 10, so the SACKed 4 frees no slot (new data
        // would otherwise run on behind a hole nothing repairs until the next timeout).
        let mut d = ten_in_flight(true);
        d.sender.recover = 10;
        assert_eq!(d.sack(2, &[(4, 5)]), (11..=15).collect::<Vec<i64>>());
        assert!(!d.sender.sacked_out_of_flight_now());
        assert_eq!(d.sender.cwnd, 13.0);
        // With RACK the same holds after a timeout only.
        let mut rack = in_recovery_to_10();
        rack.sender.sack.in_recovery = false;
        rack.sender.highest_ack = 8;
        rack.sender.sack.recover_after_timeout = true;
        assert!(!rack.sender.sacked_out_of_flight_now());
        rack.sender.sack.recover_after_timeout = false;
        assert!(rack.sender.sacked_out_of_flight_now());
    }
}
