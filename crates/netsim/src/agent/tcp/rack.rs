//! RACK (RFC 8985 §6.2) loss detection as Linux's `net/ipv4/tcp_recovery.c` runs it beside
//! RFC 6675: a packet is lost when a packet sent after it, by more than a reordering window,
//! has been delivered. Unlike `IsLost`'s count of SACKed packets above a hole it sees a
//! retransmission lost again, which RFC 6675 leaves to the retransmission timer. The reordering
//! window is zero in recovery or once `numdupacks` packets are SACKed, else a quarter of the
//! least RTT (at most the smoothed RTT), as Linux sets it while it has seen no reordering (the
//! simulator's links never reorder).
//!
//! Deviations, named: no reordering timer (a packet within the window is judged at the next
//! ACK, not when the window expires) and no tail loss probe (TLP, RFC 8985 §7); the search over
//! the outstanding packets is linear per ACK (Linux walks a time-ordered list).

use std::time::Duration;

use tfrc::Time;

use super::sender::TcpSender;

/// The most recently sent packet known delivered (`RACK.xmit_ts`, `RACK.end_seq`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rack {
    xmit: Option<(Time, i64)>,
}

impl TcpSender {
    /// RACK at an ACK whose deliveries the delivery-rate log holds: updates `RACK.xmit_ts` and
    /// marks lost every outstanding packet sent more than the reordering window before it.
    /// Returns how many were newly found lost.
    pub(super) fn rack_detect(&mut self, now: Time) -> u32 {
        let (Some(rate), Some(rack)) = (self.rate.as_ref(), self.rack.as_mut()) else {
            return 0;
        };
        let min_rtt = rate.min_rtt_us().map(Duration::from_micros);
        if let Some((seq, sent, retransmitted)) = rate.newest_delivered() {
            // An ACK for an original arriving after its retransmission left says nothing.
            let spurious = retransmitted && min_rtt.is_some_and(|m| now.saturating_since(sent) < m);
            if !spurious
                && rack
                    .xmit
                    .is_none_or(|(t, s)| sent > t || (sent == t && seq > s))
            {
                rack.xmit = Some((sent, seq));
            }
        }
        let Some((xmit, xmit_seq)) = rack.xmit else {
            return 0;
        };
        let board = &self.sack.scoreboard;
        let many_sacked = board.lost_below(self.cfg.numdupacks).is_some();
        let reo_wnd = if self.sack.in_recovery || many_sacked {
            Duration::ZERO
        } else {
            let quarter = min_rtt.map_or(Duration::ZERO, |m| m / 4);
            quarter.min(Duration::from_secs_f64(self.rto.srtt_secs()))
        };
        let lost: Vec<i64> = rate
            .outstanding()
            .filter(|&(seq, sent, sacked)| {
                // Not SACKed, not already waiting to be sent again, sent before the newest
                // delivered packet by more than the window.
                let waiting = board.is_rack_lost(seq) && !board.is_retransmitted(seq);
                let before = sent < xmit || (sent == xmit && seq < xmit_seq);
                !sacked && !waiting && before && sent + reo_wnd <= xmit
            })
            .map(|(seq, _, _)| seq)
            .collect();
        let mut newly = 0;
        for seq in lost {
            self.sack.scoreboard.mark_rack_lost(seq);
            if self.rate.as_mut().is_some_and(|r| r.mark_lost(seq)) {
                newly += 1;
            }
        }
        newly
    }
}
