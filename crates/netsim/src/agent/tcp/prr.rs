//! Proportional rate reduction (RFC 6937) as Linux runs it (`tcp_cwnd_reduction` in
//! `net/ipv4/tcp_input.c`), in RFC 6675 loss recovery.
//!
//! Without it the window drops to ssthresh on entering recovery, so the sender is silent
//! until `pipe` falls below ssthresh and then sends one packet per packet delivered. With
//! it the window falls gradually: at each ACK, while `pipe` is above ssthresh, the sender may
//! have sent in all ssthresh/prior_cwnd of the packets delivered since recovery began
//! (rounded up); once `pipe` is at or below ssthresh it sends what was delivered (plus one on
//! a cumulative ACK that found no new loss, Linux's slow-start reduction bound), up to
//! ssthresh. cwnd is `pipe` plus what may be sent now, and at least the first
//! retransmission goes out. Recovery ends with cwnd = ssthresh (`tcp_end_cwnd_reduction`).

use super::sender::TcpSender;

/// PRR's counters for the current recovery.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Prr {
    /// cwnd when recovery began, whole packets (`prior_cwnd`), at least 1.
    prior_cwnd: i64,
    /// Packets delivered (cumulatively acked or SACKed) since then (`prr_delivered`).
    delivered: i64,
    /// Packets sent since then (`prr_out`).
    out: i64,
}

/// What one ACK delivered, for PRR.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PrrAck {
    /// Packets newly acked or SACKed by it (`newly_acked_sacked`).
    pub(super) delivered: i64,
    /// It moved the cumulative ACK (`FLAG_SND_UNA_ADVANCED`).
    pub(super) advanced: bool,
    /// It showed packets newly lost (`rs->losses`).
    pub(super) newly_lost: bool,
}

impl TcpSender {
    /// How many packets are SACKed above the cumulative ACK plus the cumulative ACK: its
    /// growth over an ACK is what the ACK delivered. `None` without PRR.
    pub(super) fn prr_delivery_mark(&self) -> Option<i64> {
        self.prr
            .is_some()
            .then(|| self.highest_ack + self.sack.scoreboard.sacked_count())
    }

    /// Recovery begins with the window `prior_cwnd` (before its reduction): the counters
    /// restart, and the entering ACK sets the window.
    pub(super) fn prr_start(&mut self, prior_cwnd: f64, ack: PrrAck) {
        let Some(prr) = self.prr.as_mut() else {
            return;
        };
        *prr = Prr {
            prior_cwnd: (prior_cwnd as i64).max(1),
            delivered: 0,
            out: 0,
        };
        self.prr_on_ack(ack);
    }

    /// `tcp_cwnd_reduction` at an ACK in recovery: cwnd = pipe + what may be sent now.
    pub(super) fn prr_on_ack(&mut self, ack: PrrAck) {
        let Some(mut prr) = self.prr else {
            return;
        };
        if ack.delivered <= 0 {
            return;
        }
        let pipe = self
            .sack
            .scoreboard
            .pipe(self.highest_ack, self.maxseq, self.pipe_dup_thresh());
        prr.delivered += ack.delivered;
        let ssthresh = self.ssthresh as i64;
        let room = ssthresh - pipe;
        let mut sndcnt = if room < 0 {
            // Proportional: ceil(ssthresh · delivered / prior_cwnd) - out.
            (ssthresh * prr.delivered + prr.prior_cwnd - 1) / prr.prior_cwnd - prr.out
        } else {
            let bound = (prr.delivered - prr.out).max(ack.delivered)
                + i64::from(ack.advanced && !ack.newly_lost);
            bound.min(room)
        };
        // The first retransmission always goes out.
        sndcnt = sndcnt.max(i64::from(prr.out == 0));
        self.cwnd = (pipe + sndcnt) as f64;
        self.prr = Some(prr);
    }

    /// A packet was sent in recovery.
    pub(super) fn prr_sent(&mut self) {
        if let Some(prr) = self.prr.as_mut() {
            prr.out += 1;
        }
    }

    /// Recovery ended: cwnd = ssthresh (`tcp_end_cwnd_reduction`).
    pub(super) fn prr_end(&mut self) {
        if self.prr.is_some() {
            self.cwnd = self.ssthresh;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, VecDeque};

    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::{TcpConfig, TcpVariant};

    /// One linux-preset SACK flow with an initial window of 20: after the SYN's ACK packets 1
    /// to 20 leave, the first of them is lost once, everything else is delivered in order.
    /// Returns the packets sent in answer to each ACK after the SYN's, until one acks the
    /// lost packet, and the driver.
    pub(super) fn one_loss(prr: bool) -> (Vec<Vec<i64>>, Driver) {
        let mut d = Driver::new(TcpConfig {
            initial_window: 20,
            prr,
            // RACK, with no RTT sample yet, would find the loss on the first SACK.
            rack: false,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        let mut in_flight: VecDeque<i64> = d.ack(0).into();
        assert_eq!(in_flight.len(), 20);
        let mut received = BTreeSet::from([0]);
        let mut dropped = false;
        let mut answers = Vec::new();
        while let Some(p) = in_flight.pop_front() {
            if p == 1 && !dropped {
                dropped = true;
                continue;
            }
            received.insert(p);
            let ack = (0..)
                .take_while(|s| received.contains(s))
                .last()
                .unwrap_or(-1);
            let above: Vec<i64> = received.range(ack + 1..).copied().collect();
            let blocks = match (above.first(), above.last()) {
                (Some(&lo), Some(&hi)) => vec![(lo as u32, hi as u32 + 1)],
                _ => vec![],
            };
            let sent = d.sack(ack, &blocks);
            in_flight.extend(&sent);
            answers.push(sent);
            if ack > 0 {
                break;
            }
        }
        (answers, d)
    }

    #[test]
    fn prr_spreads_the_reduction_over_the_recovery() {
        let (plain, plain_d) = one_loss(false);
        let (prr, prr_d) = one_loss(true);
        // Two limited transmits, then recovery on the third duplicate ACK, with the
        // retransmission of 1 first.
        for answers in [&plain, &prr] {
            assert_eq!(answers[0], vec![21]);
            assert_eq!(answers[1], vec![22]);
            assert_eq!(answers[2].first(), Some(&1));
        }
        // Without PRR cwnd drops to ssthresh (10) at once and the sender is silent until
        // `pipe` has fallen below it; with PRR it keeps sending about every second ACK.
        let silent = |answers: &[Vec<i64>]| answers[3..10].iter().filter(|a| a.is_empty()).count();
        assert_eq!(silent(&plain), 7);
        assert!(silent(&prr) <= 4, "{prr:?}");
        // Over the recovery both send about ssthresh packets, and end with cwnd = ssthresh.
        let total = |answers: &[Vec<i64>]| answers[2..].iter().map(Vec::len).sum::<usize>();
        let (a, b) = (total(&plain), total(&prr));
        assert!((9..=12).contains(&a) && (9..=12).contains(&b), "{a}, {b}");
        for d in [&plain_d, &prr_d] {
            assert!(!d.sender.in_recovery());
            assert_eq!(d.sender.ssthresh(), 10.0);
            assert_eq!(d.sender.cwnd(), 10.0);
        }
    }

    #[test]
    fn prr_sends_in_proportion_while_pipe_is_above_ssthresh() {
        // RFC 6937 §3: prr_out <= ceil(ssthresh · prr_delivered / RecoverFS) while pipe >
        // ssthresh. Deliveries since entry: one per ACK, three on the entering one.
        let (answers, _) = one_loss(true);
        let mut out = 0;
        for (i, answer) in answers.iter().enumerate().skip(2).take(8) {
            out += answer.len() as i64;
            let delivered = i as i64 + 1;
            assert!(
                out <= (10 * delivered + 19) / 20,
                "ACK {i}: {out} sent, {answers:?}"
            );
        }
    }
}
