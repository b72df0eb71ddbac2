//! The TCP throughput equation and its inverse (RFC 5348 §3.1; Floyd 2000 eq. (1); Padhye 1998).
//!
//! `X = s / (R*sqrt(2bp/3) + t_RTO * 3*sqrt(3bp/8) * p * (1 + 32p^2))` bytes per second. The
//! simple square-root models used for analysis live here too.

use std::time::Duration;

/// How t_RTO, the retransmission timeout term of the equation, is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RtoPolicy {
    /// t_RTO = 4R (RFC 5348 §3.1, the recommended simplification).
    FourR,
    /// A TCP-style timeout srtt + 4*rttvar computed in clock ticks of `granularity`, at least
    /// `min` (ns-2's Agent/TFRC: 100 ms ticks, no minimum; RFC 6298: min 1 s).
    TcpLike {
        /// The coarse clock tick the estimator runs in (ns-2 `tcp_tick_`).
        granularity: Duration,
        /// The floor on the timeout (ns-2 `minrto_`).
        min: Duration,
    },
    /// A constant t_RTO.
    Fixed(Duration),
}

/// The parameters of the equation other than R, t_RTO and p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EquationShape {
    /// Packets acknowledged by one ACK, b (RFC 5348 recommends 1).
    pub b: f64,
    /// Cap the term 3*sqrt(3bp/8) at 1, as Padhye's full model and ns-2's `p_to_b` do; it only
    /// matters above p = 8/27.
    pub cap_rto_term: bool,
}

impl Default for EquationShape {
    fn default() -> Self {
        EquationShape {
            b: 1.0,
            cap_rto_term: false,
        }
    }
}

/// The equation's denominator per unit packet size: the time, in seconds, that one packet "costs".
fn seconds_per_packet(shape: EquationShape, rtt_s: f64, t_rto_s: f64, p: f64) -> f64 {
    let b = shape.b;
    let mut rto_factor = 3.0 * (3.0 * b * p / 8.0).sqrt();
    if shape.cap_rto_term {
        rto_factor = rto_factor.min(1.0);
    }
    rtt_s * (2.0 * b * p / 3.0).sqrt() + t_rto_s * rto_factor * p * (1.0 + 32.0 * p * p)
}

/// The allowed rate X in bytes per second for packet size `s_bytes`, round-trip time `rtt_s`,
/// timeout `t_rto_s` and loss event rate `p` (RFC 5348 §3.1).
///
/// `p = 0` means "no loss yet" and gives `f64::INFINITY`: the caller is in slow start and must not
/// use the equation. `p` above 1 is treated as 1.
pub fn throughput_bytes_per_s(
    shape: EquationShape,
    s_bytes: f64,
    rtt_s: f64,
    t_rto_s: f64,
    p: f64,
) -> f64 {
    if p <= 0.0 || p.is_nan() {
        return f64::INFINITY;
    }
    let denominator = seconds_per_packet(shape, rtt_s, t_rto_s, p.min(1.0));
    if denominator <= 0.0 {
        f64::INFINITY
    } else {
        s_bytes / denominator
    }
}

/// The loss event rate p at which the equation allows `target_bytes_per_s` (the inverse needed
/// for the first loss interval, RFC 5348 §6.3.1).
///
/// The equation is strictly decreasing in p, so bisection on log p over [1e-12, 1] converges; it
/// stops once X(p) is within 0.01% of the target (the RFC asks for 5%), so the answer does not
/// depend on where the search started. Targets above X(1e-12) give 1e-12; targets at or below
/// X(1) give 1.
pub fn loss_rate_for_throughput(
    shape: EquationShape,
    s_bytes: f64,
    rtt_s: f64,
    t_rto_s: f64,
    target_bytes_per_s: f64,
) -> f64 {
    const P_MIN: f64 = 1e-12;
    let rate = |p: f64| throughput_bytes_per_s(shape, s_bytes, rtt_s, t_rto_s, p);
    if target_bytes_per_s.is_nan() || target_bytes_per_s <= rate(1.0) {
        return 1.0;
    }
    if target_bytes_per_s >= rate(P_MIN) {
        return P_MIN;
    }
    let (mut lo, mut hi) = (P_MIN.ln(), 0.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        let x = rate(mid.exp());
        if (x / target_bytes_per_s - 1.0).abs() <= 1e-4 {
            return mid.exp();
        }
        if x > target_bytes_per_s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The simple TCP model X = sqrt(3/2) * s / (R * sqrt(p)) ≈ 1.22 s/(R sqrt(p)) bytes/s
/// (Floyd 2000 eq. (7); Mathis 1997), for analysis.
pub fn sqrt_model_bytes_per_s(s_bytes: f64, rtt_s: f64, p: f64) -> f64 {
    1.5_f64.sqrt() * s_bytes / (rtt_s * p.sqrt())
}

/// The deterministic model of Floyd 2000 Appendix A.1, X = 1.2 / (R sqrt(p)) packets/s.
pub fn deterministic_model_packets_per_s(rtt_s: f64, p: f64) -> f64 {
    1.2 / (rtt_s * p.sqrt())
}

/// The full PFTK model of TCP Reno throughput in packets per second (Padhye, Firoiu, Towsley and
/// Kurose, SIGCOMM 1998, eq. (31)/(32); protocols.md §7), for checking simulated TCP.
///
/// `p` is the loss *indication* rate (loss events per packet sent), `rtt_s` the mean round-trip
/// time, `t0_s` the base retransmission timeout, `b` the packets acknowledged per ACK (2 with
/// delayed ACKs) and `w_max` the receiver window in packets (`None` for no limit). The window
/// branch applies when the unconstrained mean window W(p) reaches `w_max`. `p = 0` gives
/// `w_max / rtt` (infinity without a window); `p` at or above 1 gives 0.
pub fn pftk_full_packets_per_s(p: f64, rtt_s: f64, t0_s: f64, b: f64, w_max: Option<f64>) -> f64 {
    if p <= 0.0 || p.is_nan() {
        return w_max.map_or(f64::INFINITY, |w| w / rtt_s);
    }
    if p >= 1.0 {
        return 0.0;
    }
    let q = 1.0 - p;
    let k = (2.0 + b) / (3.0 * b);
    let w_unconstrained = k + (8.0 * q / (3.0 * b * p) + k * k).sqrt();
    // Q(p, w): the probability that a loss indication is a timeout (PFTK eq. (24)).
    let timeout_probability = |w: f64| {
        let numerator = (1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0)));
        let denominator = 1.0 - q.powf(w);
        if denominator <= 0.0 {
            1.0
        } else {
            (numerator / denominator).min(1.0)
        }
    };
    // G(p): the mean length of a timeout sequence in units of T0, backoff capped at 64 T0.
    let backoff = 1.0
        + p
        + 2.0 * p.powi(2)
        + 4.0 * p.powi(3)
        + 8.0 * p.powi(4)
        + 16.0 * p.powi(5)
        + 32.0 * p.powi(6);
    match w_max {
        Some(w) if w_unconstrained >= w => {
            let qw = timeout_probability(w);
            let packets = q / p + w + qw / q;
            let time = rtt_s * (b * w / 8.0 + q / (p * w) + 2.0) + qw * backoff * t0_s / q;
            packets / time
        }
        _ => {
            let w = w_unconstrained;
            let qw = timeout_probability(w);
            let packets = q / p + w + qw / q;
            let time = rtt_s * (b * w / 2.0 + 1.0) + qw * backoff * t0_s / q;
            packets / time
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC: EquationShape = EquationShape {
        b: 1.0,
        cap_rto_term: false,
    };

    fn x(p: f64) -> f64 {
        throughput_bytes_per_s(RFC, 1460.0, 0.1, 0.4, p)
    }

    #[test]
    fn known_point() {
        // s = 1460 B, R = 100 ms, t_RTO = 4R, p = 1%: about 164,005 B/s.
        assert!((x(0.01) - 164_005.0).abs() < 5.0, "{}", x(0.01));
    }

    #[test]
    fn hand_computed_at_ten_percent() {
        // f(0.1) = sqrt(0.2/3) + 12*sqrt(0.0375)*0.1*(1 + 0.32) for b = 1, t_RTO = 4R.
        let f = (0.2_f64 / 3.0).sqrt() + 12.0 * 0.0375_f64.sqrt() * 0.1 * 1.32;
        let expected = 1000.0 / (0.1 * f);
        let got = throughput_bytes_per_s(RFC, 1000.0, 0.1, 0.4, 0.1);
        assert!((got / expected - 1.0).abs() < 1e-12);
    }

    #[test]
    fn strictly_decreasing_in_p() {
        let mut previous = f64::INFINITY;
        let mut p = 1e-6;
        while p <= 1.0 {
            let now = x(p);
            assert!(now < previous, "not decreasing at p = {p}");
            previous = now;
            p *= 1.1;
        }
    }

    #[test]
    fn no_loss_means_unbounded() {
        assert_eq!(x(0.0), f64::INFINITY);
        assert_eq!(x(f64::NAN), f64::INFINITY);
    }

    #[test]
    fn cap_matters_only_above_eight_over_twenty_seven() {
        let capped = EquationShape {
            cap_rto_term: true,
            ..RFC
        };
        for p in [0.001, 0.01, 0.1, 0.29] {
            let a = throughput_bytes_per_s(RFC, 1000.0, 0.1, 0.4, p);
            let b = throughput_bytes_per_s(capped, 1000.0, 0.1, 0.4, p);
            assert_eq!(a, b);
        }
        let a = throughput_bytes_per_s(RFC, 1000.0, 0.1, 0.4, 0.5);
        let b = throughput_bytes_per_s(capped, 1000.0, 0.1, 0.4, 0.5);
        assert!(b > a);
    }

    #[test]
    fn inverse_within_five_percent() {
        for target in [200.0, 1e3, 1e4, 1e5, 1e6, 1e7] {
            let p = loss_rate_for_throughput(RFC, 1000.0, 0.1, 0.4, target);
            let back = throughput_bytes_per_s(RFC, 1000.0, 0.1, 0.4, p);
            assert!(
                (back / target - 1.0).abs() < 0.05,
                "target {target}: {back}"
            );
        }
    }

    #[test]
    fn inverse_clamps_out_of_range_targets() {
        assert_eq!(loss_rate_for_throughput(RFC, 1000.0, 0.1, 0.4, 1.0), 1.0);
        assert_eq!(loss_rate_for_throughput(RFC, 1000.0, 0.1, 0.4, 1e30), 1e-12);
    }

    #[test]
    fn simple_models() {
        let x = sqrt_model_bytes_per_s(1000.0, 0.1, 0.01);
        assert!((x - 122_474.487).abs() < 0.01);
        assert!((deterministic_model_packets_per_s(0.1, 0.01) - 120.0).abs() < 1e-9);
    }

    #[test]
    fn pftk_full_matches_the_reference_values() {
        // protocols.md §7: b = 1, p = 1%, RTT 100 ms, T0 400 ms: full 111.0 pkt/s, approx 112.3.
        let full = pftk_full_packets_per_s(0.01, 0.1, 0.4, 1.0, None);
        assert!((full - 110.96).abs() < 0.01, "{full}");
        let capped = EquationShape {
            b: 1.0,
            cap_rto_term: true,
        };
        // approx/full = 1.01, 0.84, 0.51, 0.33 at p = 1%, 10%, 20%, 30%.
        for (p, ratio) in [(0.01, 1.01), (0.1, 0.84), (0.2, 0.51), (0.3, 0.33)] {
            let approx = throughput_bytes_per_s(capped, 1.0, 0.1, 0.4, p);
            let full = pftk_full_packets_per_s(p, 0.1, 0.4, 1.0, None);
            assert!(
                (approx / full - ratio).abs() < 0.01,
                "p {p}: {}",
                approx / full
            );
        }
    }

    #[test]
    fn pftk_window_branch_and_limits() {
        // A window of 20 binds at low loss: the rate approaches 20 packets per RTT from below.
        let limited = pftk_full_packets_per_s(1e-4, 0.1, 0.4, 1.0, Some(20.0));
        assert!(limited < 200.0 && limited > 190.0, "{limited}");
        // A window far above W(p) leaves the unconstrained branch in charge.
        let free = pftk_full_packets_per_s(0.01, 0.1, 0.4, 1.0, None);
        let wide = pftk_full_packets_per_s(0.01, 0.1, 0.4, 1.0, Some(1000.0));
        assert_eq!(free, wide);
        // Delayed ACKs (b = 2) lower the rate; no loss means the window alone; certain loss, 0.
        assert!(pftk_full_packets_per_s(0.01, 0.1, 0.4, 2.0, None) < free);
        assert_eq!(
            pftk_full_packets_per_s(0.0, 0.1, 0.4, 1.0, Some(20.0)),
            200.0
        );
        assert_eq!(pftk_full_packets_per_s(1.0, 0.1, 0.4, 1.0, None), 0.0);
    }
}
