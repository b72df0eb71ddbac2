//! Tail loss probes (RFC 8985 §7) as Linux runs them (`tcp_schedule_loss_probe` and
//! `tcp_send_loss_probe` in `net/ipv4/tcp_output.c`, `tcp_process_tlp_ack` in `tcp_input.c`).
//!
//! When the last packets of a flight are lost no duplicate ACK follows, and only the
//! retransmission timer would find them. So while the sender is in the open state (the
//! handshake over, not in recovery, nothing SACKed), every transmission of new data and every
//! ACK that acknowledges data arm a probe timeout (PTO): twice the smoothed RTT, plus 2 ms
//! (`TCP_TIMEOUT_MIN_US`) or, with a single packet outstanding, the minimum RTO (for the
//! receiver's delayed ACK), and never later than the retransmission timer. When it fires the
//! sender sends one probe: a new packet if the application and the receiver window allow one
//! (whatever cwnd says), else the highest packet sent, again. The probe's ACK (with SACK) then
//! lets RACK and RFC 6675 repair the tail by fast recovery. At most one probe is outstanding
//! per episode.
//!
//! The episode ends (`tcp_process_tlp_ack`) when the ACK reaches the highest packet sent at
//! the probe: for a probe of new data at once; for a retransmission, a duplicate ACK there
//! means both copies arrived (no loss), and an ACK beyond it that the probe repaired a loss,
//! so the window is reduced as on entering recovery (Linux's CWR: ssthresh from the
//! congestion control, cwnd set to it; nothing for BBR, which sets its own window). A
//! timeout or the start of loss recovery ends it too.
//!
//! Deviations, named: the timeout runs in exact time, not rounded up to jiffies (4 ms at HZ
//! 250); the receiver sends no DSACK, so a probe whose original also arrived is recognised by
//! the duplicate ACK alone (Linux's fallback when DSACK is off).

use std::time::Duration;

use tfrc::Time;

use super::controller::Reduction;
use super::sender::{CwndAction, TcpSender};
use super::TcpVariant;
use crate::agent::Outbox;

/// Added to twice the smoothed RTT when more than one packet is outstanding
/// (`TCP_TIMEOUT_MIN_US`).
const PTO_SLACK: Duration = Duration::from_millis(2);

/// The probe timeout before any RTT sample (`TCP_TIMEOUT_INIT`).
const PTO_WITHOUT_RTT: Duration = Duration::from_secs(1);

/// The tail-loss-probe state of a sender.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tlp {
    /// When the armed probe timeout fires.
    pub(super) pto_at: Option<Time>,
    /// The highest packet sent when the outstanding probe left (Linux's `tlp_high_seq`,
    /// there one past it): an episode is open.
    high: Option<i64>,
    /// The outstanding probe was a retransmission (`tlp_retrans`), not new data.
    retransmitted: bool,
    /// Probes sent.
    pub(super) probes: u64,
    /// Episodes in which the probe repaired a loss (`TCPLossProbeRecovery`).
    pub(super) recoveries: u64,
}

/// What an ACK says, for [`TcpSender::tlp_on_ack`] (Linux's `FLAG_*` bits).
#[derive(Clone, Copy, Debug)]
pub(super) struct AckFlags {
    /// The cumulative ACK moved (`FLAG_SND_UNA_ADVANCED`).
    pub(super) advanced: bool,
    /// The ACK carried new SACK information (`FLAG_DATA_SACKED`).
    pub(super) sacked: bool,
}

impl TcpSender {
    /// Whether the sender is in Linux's open state: not recovering and nothing SACKed or
    /// found lost (`TCP_CA_Open`; `TCP_CA_CWR` never lasts here).
    fn tlp_open_state(&self) -> bool {
        let board = &self.sack.scoreboard;
        // After a timeout Linux is in `TCP_CA_Loss` until what was sent then is acked.
        let in_loss =
            self.last_cwnd_action == CwndAction::Timeout && self.highest_ack < self.recover;
        !self.sack.in_recovery
            && !in_loss
            && self.dupacks == 0
            && board.high_sacked().is_none()
            && board.next_rack_lost().is_none()
    }

    /// `tcp_schedule_loss_probe`: arms the probe timeout if the sender is open with data
    /// outstanding (else, at an ACK, disarms it). `after_ack`: at an ACK that acknowledged
    /// data (the retransmission timer is being restarted: the probe comes at most one RTO from
    /// now), rather than after sending new data (at most when the armed timer fires).
    pub(super) fn tlp_schedule(&mut self, now: Time, after_ack: bool) {
        if !self.cfg.uses_tlp() {
            return;
        }
        let outstanding = self.maxseq - self.highest_ack;
        // No probe before the handshake is over: the SYN has its own timer.
        let established = !self.cfg.syn || self.highest_ack >= 0;
        if outstanding <= 0 || !established || !self.tlp_open_state() {
            // At an ACK the retransmission timer takes the place of the probe's; after
            // sending, whatever was armed stays (Linux shares one timer between them).
            if after_ack {
                if let Some(tlp) = self.tlp.as_mut() {
                    tlp.pto_at = None;
                }
            }
            return;
        }
        let pto = {
            let mut pto = if self.rto.has_estimate() {
                let two_srtt = Duration::from_secs_f64(2.0 * self.rto.srtt_secs());
                if outstanding == 1 {
                    two_srtt + self.cfg.min_rto
                } else {
                    two_srtt + PTO_SLACK
                }
            } else {
                PTO_WITHOUT_RTT
            };
            let until_rto = if after_ack {
                Some(self.rto.timeout())
            } else {
                self.rtx_at.map(|at| at.saturating_since(now))
            };
            if let Some(until_rto) = until_rto.filter(|d| !d.is_zero()) {
                pto = pto.min(until_rto);
            }
            now + pto
        };
        if let Some(tlp) = self.tlp.as_mut() {
            tlp.pto_at = Some(pto);
        }
    }

    /// Disarms the probe timeout and ends the episode (a timeout, or loss recovery began).
    pub(super) fn tlp_reset(&mut self) {
        if let Some(tlp) = self.tlp.as_mut() {
            tlp.pto_at = None;
            tlp.high = None;
        }
    }

    /// The probe timeout fired (`tcp_send_loss_probe`): unless a probe is outstanding, send
    /// one (new data if allowed, else the highest packet again) and restart the
    /// retransmission timer from now.
    pub(super) fn tlp_fire(&mut self, now: Time, out: &mut Outbox) {
        let Some(tlp) = self.tlp.as_mut() else {
            return;
        };
        tlp.pto_at = None;
        if tlp.high.is_some() || self.maxseq <= self.highest_ack {
            return;
        }
        let next = self.t_seqno.max(self.maxseq + 1);
        let new_data = next < self.curseq
            && next <= self.highest_ack + i64::from(self.cfg.window)
            && self.pacer.as_mut().is_none_or(|p| p.may_send(now));
        let (seq, retransmitted) = if new_data {
            (next, false)
        } else {
            (self.maxseq, true)
        };
        if retransmitted {
            self.sack
                .scoreboard
                .mark_retransmitted_above(self.highest_ack, seq);
        }
        self.output(now, seq, out);
        if self.t_seqno <= seq {
            self.t_seqno = seq + 1;
        }
        if let Some(tlp) = self.tlp.as_mut() {
            tlp.high = Some(self.maxseq);
            tlp.retransmitted = retransmitted;
            tlp.probes += 1;
        }
        self.set_rtx_timer(now);
    }

    /// `tcp_process_tlp_ack`, at every ACK while an episode is open: ends it, reducing the
    /// window when the probe repaired a loss. `seq` is the ACK's cumulative point.
    pub(super) fn tlp_on_ack(&mut self, now: Time, seq: i64, flags: AckFlags) {
        let Some(tlp) = self.tlp.as_mut() else {
            return;
        };
        let Some(high) = tlp.high else {
            return;
        };
        if seq < high {
            return;
        }
        if !tlp.retransmitted {
            tlp.high = None;
        } else if seq > high {
            tlp.high = None;
            tlp.recoveries += 1;
            self.cwr_reduce(now, Reduction::Recovery);
        } else if !flags.advanced && !flags.sacked {
            tlp.high = None;
        }
    }

    /// A window reduction without loss recovery, for a loss a probe repaired or an ECN-Echo
    /// (`tcp_init_cwnd_reduction` then `tcp_end_cwnd_reduction` in CWR): ssthresh as on
    /// entering RFC 6675 recovery (or the controller's for `reduction`) and cwnd = ssthresh.
    pub(super) fn cwr_reduce(&mut self, now: Time, reduction: Reduction) {
        if self.cc.is_some() {
            self.cc_reduce(now, reduction);
        } else if self.cfg.variant != TcpVariant::Bbr {
            self.cut_to_recovery_ssthresh();
            self.first_decrease = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::TcpConfig;

    /// A linux-preset SACK sender without a SYN, an initial window of 10 and `packets` to
    /// send, with tail loss probes as given.
    fn sender(packets: u64, tlp: bool) -> Driver {
        Driver::new(TcpConfig {
            syn: false,
            delay_growth: false,
            max_packets: Some(packets),
            tlp,
            ..TcpConfig::linux(TcpVariant::Sack)
        })
    }

    /// Acks 0 to `last` one by one after 50 ms (the first RTT sample); returns what the
    /// sender sent meanwhile.
    fn ack_up_to(d: &mut Driver, last: i64) -> Vec<i64> {
        d.wait(Duration::from_millis(50));
        (0..=last).flat_map(|a| d.ack(a)).collect()
    }

    #[test]
    fn a_tail_loss_is_repaired_by_a_probe_and_fast_recovery_not_a_timeout() {
        // Ten packets, the last two lost.
        let mut d = sender(10, true);
        assert!(ack_up_to(&mut d, 7).is_empty());
        // Two packets out: the probe comes 2·SRTT + 2 ms after the last ACK, well before
        // the 200 ms minimum RTO, and resends the highest packet (there is no new data).
        let srtt = d.sender.rto().srtt_secs();
        assert!((0.04..0.06).contains(&srtt), "{srtt}");
        assert!(d.wait(Duration::from_millis(95)).is_empty());
        assert_eq!(d.wait(Duration::from_millis(20)), vec![9]);
        assert_eq!(d.sender.loss_probes(), (1, 0));
        // Its ACK, an RTT later, SACKs 9: RACK finds 8 lost and fast recovery resends it.
        d.wait(Duration::from_millis(59));
        assert_eq!(d.sack(7, &[(9, 10)]), vec![8]);
        assert!(d.ack(9).is_empty());
        let stats = d.sender.stats();
        assert_eq!((stats.timeouts, stats.fast_retransmits), (0, 1));

        // Without probes the same losses wait for the retransmission timer.
        let mut d = sender(10, false);
        ack_up_to(&mut d, 7);
        assert!(d.wait(Duration::from_millis(150)).is_empty());
        assert_eq!(d.wait(Duration::from_millis(300)), vec![8]);
        assert_eq!(d.sender.stats().timeouts, 1);
    }

    #[test]
    fn the_probe_sends_new_data_when_there_is_some_whatever_cwnd_says() {
        let mut d = Driver::new(TcpConfig {
            initial_window: 4,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        // The SYN's ACK after 50 ms opens the window: packets 1 to 4, all lost.
        d.wait(Duration::from_millis(49));
        assert_eq!(d.ack(0), vec![1, 2, 3, 4]);
        // The probe: new data beyond cwnd, 2·SRTT + 2 ms later.
        assert!(d.wait(Duration::from_millis(95)).is_empty());
        assert_eq!(d.wait(Duration::from_millis(20)), vec![5]);
        // Its SACK, an RTT later, shows 1 to 4 lost: recovery, not a timeout.
        d.wait(Duration::from_millis(49));
        assert_eq!(d.sack(0, &[(5, 6)]).first(), Some(&1));
        let stats = d.sender.stats();
        assert_eq!((stats.timeouts, stats.fast_retransmits), (0, 1));
    }

    /// Acks 0 to 10 of twelve packets, waits for the probe (one packet out: 2·SRTT plus the
    /// minimum RTO, capped by the RTO, at which the probe goes first), which resends 11.
    fn probe_for_11(d: &mut Driver) {
        assert_eq!(ack_up_to(d, 10), vec![10, 11]);
        assert_eq!(d.wait(Duration::from_millis(300)), vec![11]);
        assert_eq!(d.sender.stats().timeouts, 0);
        d.wait(Duration::from_millis(59));
    }

    #[test]
    fn a_probe_that_repaired_a_loss_reduces_the_window_once_the_ack_passes_it() {
        // Twelve packets: 0 to 9 at once, 10 and 11 as the first ACKs open the window.
        let mut d = sender(12, true);
        // 11 is lost; the probe resends it and repairs it.
        probe_for_11(&mut d);
        assert!(d.ack(11).is_empty());
        let (cwnd, ssthresh) = (d.sender.cwnd(), d.sender.ssthresh());
        assert_eq!(
            d.sender.loss_probes(),
            (1, 0),
            "the ACK has not passed the probe yet"
        );
        // More data: its ACK passes the probe, so a loss was repaired (Linux's CWR).
        d.sender.cfg.max_packets = Some(20);
        let sent = d.start();
        assert!(!sent.is_empty());
        d.ack(12);
        assert_eq!(d.sender.loss_probes(), (1, 1));
        assert!(d.sender.ssthresh() < ssthresh);
        assert_eq!(d.sender.ssthresh(), (cwnd / 2.0).trunc());
        assert_eq!(d.sender.cwnd(), d.sender.ssthresh());
        assert_eq!(d.sender.stats().fast_retransmits, 0);
    }

    #[test]
    fn a_duplicate_ack_for_the_probe_means_nothing_was_lost() {
        let mut d = sender(12, true);
        probe_for_11(&mut d);
        // 11 was only late: its ACK, then the probe's duplicate.
        d.ack(11);
        d.ack(11);
        let cwnd = d.sender.cwnd();
        d.sender.cfg.max_packets = Some(20);
        d.start();
        d.ack(12);
        assert_eq!(d.sender.loss_probes(), (1, 0));
        assert!(d.sender.cwnd() >= cwnd);
    }
}
