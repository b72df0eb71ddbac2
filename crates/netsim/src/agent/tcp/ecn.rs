//! Explicit Congestion Notification for TCP (RFC 3168 §6.1) on the sender's side; the
//! receiver's echo is in `sink.rs`. docs/tcp.md, "ECN".
//!
//! With [`TcpConfig::ecn`](super::TcpConfig::ecn) new data packets are ECN-capable (ECT;
//! never the SYN nor a retransmission, §6.1.1 and §6.1.5), so a marking RED queue marks them
//! instead of dropping. An ACK with ECN-Echo makes the sender reduce its window as for a loss,
//! without retransmitting anything (§6.1.2): ssthresh from the variant (RFC 6675's or CUBIC's
//! for the SACK family, ns-2's `slowdown` halving for Reno, NewReno and `Sack1`) or from the
//! controller's `ssthresh` with [`Reduction::Ecn`], and cwnd = ssthresh, as after a loss a
//! tail loss probe repaired. It reacts at most once per window of data: not again until the
//! highest packet sent at the reduction is acked (Linux's CWR state, which ends at
//! `high_seq`), and not in or within the window of a loss recovery or timeout. Its next new
//! data packet carries CWR, which stops the receiver's echo.
//!
//! Deviations, named: the connection does not negotiate (both ends have the knob); the
//! reduction takes effect after the ACK that carries ECE is processed (what that ACK lets the
//! sender send goes out under the old window); cwnd is set to ssthresh at once even with
//! `prr` (Linux's CWR state brings it down by PRR over a round trip and does not grow it
//! meanwhile); when ECE arrives during or just after a loss reduction, CWR is queued then
//! (Linux queues it on entering recovery already).

use tfrc::Time;

use super::controller::Reduction;
use super::header::TcpData;
use super::sender::{CwndCut, TcpSender};
use super::SackRecovery;

/// The sender's ECN state.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ecn {
    /// The highest packet sent at the last ECE reduction: ECE is ignored until it is acked.
    high: i64,
    /// The next new data packet carries CWR.
    cwr_pending: bool,
    /// The loss recovery (its `recover` point) CWR was queued for, so that it is queued once.
    cwr_for_loss: i64,
    /// The ACK being processed carries ECN-Echo (and ECN is on).
    pub(super) ack_ece: bool,
}

impl Default for Ecn {
    fn default() -> Ecn {
        Ecn {
            high: -1,
            cwr_pending: false,
            cwr_for_loss: -1,
            ack_ece: false,
        }
    }
}

impl TcpSender {
    /// The header of data packet `seqno` and whether it is ECN-capable: with ECN, new data
    /// other than the SYN is ECT, and the first such packet after a reduction carries CWR.
    pub(super) fn ecn_header(&mut self, seqno: i64) -> (TcpData, bool) {
        let mut data = TcpData::plain(seqno);
        let ect = self.cfg.ecn && seqno > self.maxseq && !(self.cfg.syn && seqno == 0);
        if ect && self.ecn.cwr_pending {
            data.cwr = true;
            self.ecn.cwr_pending = false;
        }
        (data, ect)
    }

    /// An ACK carried ECN-Echo (after the variant processed it): reduce the window unless it
    /// was reduced within the current window of data.
    pub(super) fn ecn_echo(&mut self, now: Time) {
        if self.cc_failed() {
            return;
        }
        if self.in_recovery() || self.highest_ack < self.recover {
            // A loss reduction is under way: it answers for this window (RFC 3168 §6.1.2);
            // tell the receiver so.
            if self.ecn.cwr_for_loss != self.recover {
                self.ecn.cwr_for_loss = self.recover;
                self.ecn.cwr_pending = true;
            }
            return;
        }
        if self.highest_ack < self.ecn.high {
            return;
        }
        self.ecn.high = self.maxseq;
        self.ecn.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        // A controller's `ssthresh`, or RFC 6675's (CUBIC's) reduction; else ns-2's.
        let rfc6675 =
            self.cfg.sack_recovery == SackRecovery::Rfc6675 && self.cfg.variant.uses_sack();
        if self.cc.is_some() || rfc6675 {
            self.cwr_reduce(now, Reduction::Ecn);
        } else {
            self.slowdown(now, true, CwndCut::Decrease);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::agent::tcp::header::TcpAck;
    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::{AckPolicy, TcpConfig, TcpSink, TcpVariant};
    use crate::agent::{Agent, Outbox};
    use crate::packet::{FlowId, NodeId, Packet, Payload};

    /// An ACK for `ack`, with ECN-Echo if `ece`, 1 ms on; returns what the sender sent as
    /// (sequence number, ECT, CWR).
    fn ack(d: &mut Driver, ack: i64, ece: bool) -> Vec<(i64, bool, bool)> {
        d.now += Duration::from_millis(1);
        let mut header = TcpAck::cumulative(ack);
        header.set_ece(ece);
        let packet = Packet::new(FlowId(0), 0, 40, NodeId(0), d.now, Payload::TcpAck(header));
        d.sender.handle_packet(d.now, &packet, &mut d.out);
        d.out
            .drain()
            .map(|o| match o.payload {
                Payload::TcpData(data) => (data.seqno, o.ecn_capable, data.cwr),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn sender(variant: TcpVariant) -> Driver {
        Driver::new(TcpConfig {
            syn: false,
            delay_growth: false,
            ecn: true,
            ..TcpConfig::linux(variant)
        })
    }

    #[test]
    fn ece_reduces_once_per_window_without_retransmitting_and_sets_cwr_once() {
        let mut d = sender(TcpVariant::Sack);
        // Slow start: cwnd 10 + 10 after packets 0..9 are acked; every packet is ECT.
        for a in 0..10 {
            assert!(ack(&mut d, a, false)
                .iter()
                .all(|&(_, ect, cwr)| ect && !cwr));
        }
        assert_eq!(d.sender.cwnd(), 20.0);
        let max_before = d.sender.max_sent();
        // The echo: ssthresh = cwnd / 2 (the linux preset halves cwnd), cwnd = ssthresh,
        // nothing resent, nothing more sent on this ACK beyond what it acked.
        let sent = ack(&mut d, 10, true);
        assert!(sent.iter().all(|&(seq, _, _)| seq > max_before), "{sent:?}");
        assert_eq!(d.sender.ssthresh(), 10.0);
        assert_eq!(d.sender.cwnd(), 10.0);
        assert_eq!(d.sender.stats().ecn_reductions, 1);
        assert_eq!(d.sender.stats().retransmits, 0);
        let high = d.sender.max_sent();
        // More echoes in the same window: no further reduction; the first new packet carries
        // CWR, the later ones do not.
        let mut flags = Vec::new();
        for a in 11..high {
            flags.extend(ack(&mut d, a, true));
        }
        assert_eq!(d.sender.stats().ecn_reductions, 1);
        assert!(d.sender.cwnd() >= 10.0);
        let cwr: Vec<bool> = flags.iter().map(|&(_, _, cwr)| cwr).collect();
        assert_eq!(cwr.iter().filter(|&&c| c).count(), 1, "{flags:?}");
        assert!(cwr[0]);
        // Once the window of the reduction is acked, an echo reduces again.
        let cwnd = d.sender.cwnd();
        ack(&mut d, high, true);
        assert_eq!(d.sender.stats().ecn_reductions, 2);
        assert!(d.sender.cwnd() < cwnd);
    }

    #[test]
    fn reno_and_cubic_reduce_on_ece_too() {
        // ns-2's `slowdown` halves the window this ACK grew to 21 (in floating point in the
        // linux preset).
        for (variant, expect) in [(TcpVariant::Reno, 10.5), (TcpVariant::NewReno, 10.5)] {
            let mut d = sender(variant);
            for a in 0..10 {
                ack(&mut d, a, false);
            }
            ack(&mut d, 10, true);
            assert_eq!(d.sender.cwnd(), expect, "{variant:?}");
            assert!(!d.sender.in_recovery());
        }
        let mut d = sender(TcpVariant::Cubic);
        for a in 0..10 {
            ack(&mut d, a, false);
        }
        let before = d.sender.cwnd();
        ack(&mut d, 10, true);
        // CUBIC's beta: 0.7.
        assert_eq!(d.sender.cwnd(), (before * 0.7).trunc());
        assert_eq!(d.sender.stats().ecn_reductions, 1);
    }

    #[test]
    fn without_the_knob_ece_is_ignored_and_nothing_is_ect() {
        let mut d = Driver::new(TcpConfig {
            syn: false,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        for a in 0..10 {
            assert!(ack(&mut d, a, true).iter().all(|&(_, ect, _)| !ect));
        }
        assert_eq!(d.sender.stats().ecn_reductions, 0);
        assert_eq!(d.sender.cwnd(), 20.0);
    }

    #[test]
    fn the_syn_and_retransmissions_are_not_ect() {
        let mut d = Driver::new(TcpConfig {
            ecn: true,
            max_packets: Some(2),
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        // The SYN went at the start; its timeout resends it, not ECT either.
        let at = d.sender.poll_timeout().unwrap();
        d.now = at;
        d.sender.handle_timeout(at, &mut d.out);
        assert!(d.out.drain().all(|o| !o.ecn_capable));
        // A lost SYN leaves the initial window at 1.
        assert_eq!(ack(&mut d, 0, false), vec![(1, true, false)]);
        assert_eq!(ack(&mut d, 1, false), vec![(2, true, false)]);
    }

    fn ce_data(seqno: i64, ce: bool, cwr: bool) -> Packet {
        let mut data = TcpData::plain(seqno);
        data.cwr = cwr;
        let mut p = Packet::new(
            FlowId(0),
            0,
            1000,
            NodeId(1),
            Time::ZERO,
            Payload::TcpData(data),
        );
        p.ecn_capable = true;
        p.ecn_ce = ce;
        p
    }

    /// The ACKs the sink sent, as (cumulative ACK, ECE).
    fn acks(out: &mut Outbox) -> Vec<(i64, bool)> {
        out.drain()
            .map(|o| match o.payload {
                Payload::TcpAck(a) => (a.seqno(), a.ece()),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_sink_echoes_ce_at_once_until_cwr() {
        let mut sink = TcpSink::new(&TcpConfig {
            variant: TcpVariant::Sack,
            ack: AckPolicy::Delayed {
                interval: Duration::from_millis(40),
            },
            quick_acks: 0,
            rcv_window_growth: false,
            sack_compression: false,
            syn: false,
            ecn: true,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        let mut out = Outbox::default();
        let t = Time::ZERO;
        // Packet 0 is acked at once (ns-2's sink), packet 1 is held.
        sink.handle_packet(t, &ce_data(0, false, false), &mut out);
        assert_eq!(acks(&mut out), vec![(0, false)]);
        sink.handle_packet(t, &ce_data(1, false, false), &mut out);
        assert!(out.packets().is_empty());
        // A CE mark: acked at once with ECE (Linux's quick ACK), and the next packet too.
        sink.handle_packet(t, &ce_data(2, true, false), &mut out);
        assert_eq!(acks(&mut out), vec![(2, true)]);
        sink.handle_packet(t, &ce_data(3, false, false), &mut out);
        assert_eq!(acks(&mut out), vec![(3, true)]);
        // Then delayed ACKs again, still echoing.
        sink.handle_packet(t, &ce_data(4, false, false), &mut out);
        assert!(out.packets().is_empty());
        sink.handle_packet(t, &ce_data(5, false, false), &mut out);
        assert_eq!(acks(&mut out), vec![(5, true)]);
        // CWR: acked at once, the echo stops.
        sink.handle_packet(t, &ce_data(6, false, true), &mut out);
        assert_eq!(acks(&mut out), vec![(6, false)]);
        assert_eq!(sink.ce_marks(), 1);
        // A sink without the knob never echoes.
        let mut plain = TcpSink::new(&TcpConfig {
            syn: false,
            ..TcpConfig::ns2_2000(TcpVariant::Sack)
        });
        plain.handle_packet(t, &ce_data(0, true, false), &mut out);
        assert_eq!(acks(&mut out), vec![(0, false)]);
    }

    #[test]
    fn variants_without_ecn_refuse_the_knob() {
        for variant in [TcpVariant::Tahoe, TcpVariant::Vegas, TcpVariant::Bbr] {
            let config = TcpConfig {
                ecn: true,
                ..TcpConfig::linux(variant)
            };
            assert_eq!(config.validate().unwrap_err().field, "ecn", "{variant:?}");
        }
        for variant in [
            TcpVariant::Reno,
            TcpVariant::NewReno,
            TcpVariant::Sack,
            TcpVariant::Cubic,
        ] {
            let config = TcpConfig {
                ecn: true,
                ..TcpConfig::linux(variant)
            };
            assert_eq!(config.validate(), Ok(()), "{variant:?}");
        }
    }
}
