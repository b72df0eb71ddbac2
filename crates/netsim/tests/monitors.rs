//! Property tests of the monitors (crate `netsim::monitor`): random event sequences, in the
//! nondecreasing time order the engine produces, checked against invariants that hold for any
//! run and against a brute-force model that walks every nanosecond.
//!
//! - per-bin counts add up to the totals;
//! - each bin's mean queue lies in [0, the bin's max], and the total mean equals the
//!   width-weighted average of the bin means (sum of means × width / end);
//! - for non-overlapping transmissions, utilization is in [0, 1] per bin and in total;
//! - queue means and busy time match a per-nanosecond recount;
//! - loss events group drops by send time (Rhee & Xu 2005 §2): a recount over the sorted send
//!   times agrees, and there is at least one event whenever something was dropped.

use std::time::Duration;

use netsim::monitor::{
    DropCause, FlowMonitor, LinkMonitor, PacketEvent, PacketRecord, PacketTrace,
};
use netsim::Time;
use proptest::prelude::*;

/// One thing that happens at a link, `gap` ns after the previous one.
#[derive(Clone, Debug)]
enum LinkOp {
    Arrival,
    Drop(DropCause),
    Queue(usize, u64),
    /// Start a transmission lasting this many ns, if the transmitter is free.
    Transmit(u64, u32),
}

fn link_op() -> impl Strategy<Value = LinkOp> {
    prop_oneof![
        Just(LinkOp::Arrival),
        Just(LinkOp::Drop(DropCause::Queue)),
        Just(LinkOp::Drop(DropCause::LossModel)),
        (0usize..20, 0u64..30_000).prop_map(|(p, b)| LinkOp::Queue(p, b)),
        (0u64..60, 40u32..1500).prop_map(|(d, s)| LinkOp::Transmit(d, s)),
    ]
}

/// Relative closeness for sums of floats that are exact up to rounding.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn link_bins_agree_with_totals_and_a_per_nanosecond_recount(
        width in 1u64..50,
        ops in proptest::collection::vec((0u64..25, link_op()), 0..120),
        tail in 0u64..100,
    ) {
        let mut m = LinkMonitor::new(Duration::from_nanos(width), 10_000_000);
        let mut now = 0u64;
        let mut tx_free = 0u64;
        // The reference: queue level changes and busy intervals, kept in full (test only).
        let mut levels: Vec<(u64, usize, u64)> = vec![(0, 0, 0)];
        let mut busy: Vec<(u64, u64)> = Vec::new();
        for (gap, op) in &ops {
            now += gap;
            let t = Time::from_nanos(now);
            match *op {
                LinkOp::Arrival => m.on_arrival(t, 1000),
                // A dropped packet arrived first (the engine offers every packet to the link).
                LinkOp::Drop(cause) => {
                    m.on_arrival(t, 1000);
                    m.on_drop(t, 1000, cause);
                }
                LinkOp::Queue(p, b) => {
                    m.on_queue_change(t, p, b);
                    levels.push((now, p, b));
                }
                LinkOp::Transmit(d, s) => {
                    if now >= tx_free {
                        m.on_transmission(t, Time::from_nanos(now + d), s);
                        busy.push((now, now + d));
                        tx_free = now + d;
                    }
                }
            }
        }
        // The run ends after its last event (an event at exactly `end` is outside the bins).
        let end = now + 1 + tail;
        let r = m.finish(Time::from_nanos(end));
        let b = &r.bins;
        let n = end.div_ceil(width) as usize;
        for len in [
            b.mean_queue_packets.len(), b.mean_queue_bytes.len(), b.max_queue_packets.len(),
            b.arrivals.len(), b.drops.len(), b.departures.len(), b.departed_bytes.len(),
            b.utilization.len(),
        ] {
            prop_assert_eq!(len, n);
        }

        // Counts add up (every event is at or before `end`).
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
        prop_assert_eq!(sum(&b.arrivals.to_vec()), r.totals.arrivals);
        prop_assert_eq!(sum(&b.drops.to_vec()), r.totals.queue_drops + r.totals.loss_model_drops);
        prop_assert_eq!(sum(&b.departures.to_vec()), r.totals.departures);
        prop_assert_eq!(b.departed_bytes.iter().sum::<u64>(), r.totals.bytes_departed);
        prop_assert!((0.0..=1.0).contains(&r.totals.drop_rate()));

        // Queue: bounded by the bin maxima; the total mean is the average of the bin means.
        for k in 0..n {
            let (mean, max) = (b.mean_queue_packets[k], f64::from(b.max_queue_packets[k]));
            prop_assert!(mean >= 0.0 && mean <= max * (1.0 + 1e-12), "bin {k}: {mean} > {max}");
            prop_assert!(b.mean_queue_bytes[k] >= 0.0);
        }
        prop_assert_eq!(
            b.max_queue_packets.iter().copied().max().unwrap_or(0),
            r.totals.max_queue_packets
        );
        let weighted: f64 = b.mean_queue_packets.iter().sum::<f64>() * width as f64;
        let expect_total = if end == 0 { 0.0 } else { weighted / end as f64 };
        prop_assert!(close(r.totals.mean_queue_packets, expect_total),
            "{} vs {}", r.totals.mean_queue_packets, expect_total);

        // Utilization of a single transmitter stays in [0, 1].
        for &u in &b.utilization {
            prop_assert!((0.0..=1.0 + 1e-12).contains(&u), "bin utilization {u}");
        }
        prop_assert!((0.0..=1.0).contains(&r.totals.utilization));

        // Per-nanosecond recount of the queue integral, the maxima and the busy time.
        let mut pkt_ns = vec![0u64; n];
        let mut byte_ns = vec![0u64; n];
        let mut max = vec![0u32; n];
        let mut busy_ns = vec![0u64; n];
        let mut li = 0;
        for t in 0..end {
            while li + 1 < levels.len() && levels[li + 1].0 <= t {
                li += 1;
            }
            let k = (t / width) as usize;
            let (_, p, bytes) = levels[li];
            pkt_ns[k] += p as u64;
            byte_ns[k] += bytes;
            max[k] = max[k].max(p as u32);
            if busy.iter().any(|&(s, e)| s <= t && t < e) {
                busy_ns[k] += 1;
            }
        }
        for k in 0..n {
            prop_assert!(close(b.mean_queue_packets[k], pkt_ns[k] as f64 / width as f64));
            prop_assert!(close(b.mean_queue_bytes[k], byte_ns[k] as f64 / width as f64));
            prop_assert!(close(b.utilization[k], busy_ns[k] as f64 / width as f64));
        }
        prop_assert_eq!(&b.max_queue_packets, &max);
        prop_assert_eq!(r.totals.busy, Duration::from_nanos(busy_ns.iter().sum()));
        if end > 0 {
            prop_assert!(close(
                r.totals.mean_queue_packets,
                pkt_ns.iter().sum::<u64>() as f64 / end as f64
            ));
        }
    }

    #[test]
    fn link_live_totals_never_exceed_the_finished_ones(
        ops in proptest::collection::vec((0u64..25, link_op()), 0..60),
        tail in 0u64..100,
    ) {
        let mut m = LinkMonitor::new(Duration::from_nanos(7), 10_000_000);
        let mut now = 0u64;
        for (gap, op) in &ops {
            now += gap;
            let t = Time::from_nanos(now);
            match *op {
                LinkOp::Arrival => m.on_arrival(t, 1000),
                LinkOp::Drop(cause) => m.on_drop(t, 1000, cause),
                LinkOp::Queue(p, b) => m.on_queue_change(t, p, b),
                // Overlapping transmissions are allowed here: nothing may panic.
                LinkOp::Transmit(d, s) => m.on_transmission(t, Time::from_nanos(now + d), s),
            }
            let live = m.totals();
            prop_assert!(live.mean_queue_packets.is_finite() && live.utilization.is_finite());
        }
        let live = m.totals();
        let r = m.finish(Time::from_nanos(now + 1 + tail));
        prop_assert!(live.busy <= r.totals.busy);
        prop_assert!(live.max_queue_packets <= r.totals.max_queue_packets);
        prop_assert_eq!(live.departures, r.totals.departures);
    }
}

/// One thing that happens to a flow, `gap` ns after the previous one.
#[derive(Clone, Debug)]
enum FlowOp {
    Sent(u32),
    Received(u32),
    /// Dropped; its packet was sent this many ns earlier (clamped at 0).
    Dropped(u64, u32),
    Reverse(u8),
    State(usize),
}

fn flow_op() -> impl Strategy<Value = FlowOp> {
    prop_oneof![
        (40u32..1500).prop_map(FlowOp::Sent),
        (40u32..1500).prop_map(FlowOp::Received),
        (0u64..400, 40u32..1500).prop_map(|(a, s)| FlowOp::Dropped(a, s)),
        (0u8..3).prop_map(FlowOp::Reverse),
        (0usize..4).prop_map(FlowOp::State),
    ]
}

/// Loss events recounted from scratch over the drops' send times in report order.
fn recount_loss_events(sent_ats: &[u64], rtt: u64) -> u64 {
    let mut start: Option<u64> = None;
    let mut events = 0;
    for &s in sent_ats {
        if start.is_none_or(|first| s > first + rtt) {
            start = Some(s);
            events += 1;
        }
    }
    events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn flow_bins_agree_with_totals(
        width in 1u64..50,
        rtt in 0u64..200,
        ops in proptest::collection::vec((0u64..25, flow_op()), 0..150),
        tail in 0u64..100,
    ) {
        let mut m = FlowMonitor::new(
            Duration::from_nanos(width), Duration::from_nanos(rtt), &["a", "b"],
        );
        let mut now = 0u64;
        let mut sent_ats = Vec::new();
        let mut reverse = [0u64; 3];
        for (gap, op) in &ops {
            now += gap;
            let t = Time::from_nanos(now);
            match *op {
                FlowOp::Sent(s) => m.on_sent(t, s),
                FlowOp::Received(s) => m.on_received(t, s),
                FlowOp::Dropped(age, s) => {
                    let sent_at = now.saturating_sub(age);
                    m.on_dropped(t, Time::from_nanos(sent_at), s);
                    sent_ats.push(sent_at);
                }
                FlowOp::Reverse(0) => { m.on_reverse_sent(t, 40); reverse[0] += 1; }
                FlowOp::Reverse(1) => { m.on_reverse_received(t, 40); reverse[1] += 1; }
                FlowOp::Reverse(_) => { m.on_reverse_dropped(t, 40); reverse[2] += 1; }
                FlowOp::State(len) => {
                    let values: Vec<f64> = (0..len).map(|i| i as f64).collect();
                    m.record_state((now / width) as usize, &values);
                }
            }
        }
        // The run ends after its last event (an event at exactly `end` is outside the bins).
        let end = now + 1 + tail;
        let r = m.finish(Time::from_nanos(end));
        let (b, t) = (&r.bins, &r.totals);
        let n = end.div_ceil(width) as usize;
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
        let sum64 = |v: &[u64]| v.iter().sum::<u64>();
        prop_assert_eq!(b.sent_packets.len(), n);
        prop_assert_eq!(b.loss_events.len(), n);
        prop_assert_eq!(sum(&b.sent_packets.to_vec()), t.packets_sent);
        prop_assert_eq!(sum64(&b.sent_bytes.to_vec()), t.bytes_sent);
        prop_assert_eq!(sum(&b.received_packets.to_vec()), t.packets_received);
        prop_assert_eq!(sum64(&b.received_bytes.to_vec()), t.bytes_received);
        prop_assert_eq!(sum(&b.dropped_packets.to_vec()), t.packets_dropped);
        prop_assert_eq!(sum64(&b.dropped_bytes.to_vec()), t.bytes_dropped);
        prop_assert_eq!(sum(&b.loss_events.to_vec()), t.loss_events);
        prop_assert_eq!(
            [t.reverse_packets_sent, t.reverse_packets_received, t.reverse_packets_dropped],
            reverse
        );

        // Loss events: between 1 and the number of drops, as a recount says.
        prop_assert_eq!(t.loss_events, recount_loss_events(&sent_ats, rtt));
        prop_assert!(t.loss_events <= t.packets_dropped);
        prop_assert_eq!(t.loss_events == 0, t.packets_dropped == 0);
        for k in 0..n {
            prop_assert!(b.loss_events.get(k) <= b.dropped_packets.get(k));
        }
        prop_assert!(t.loss_event_rate().is_finite() && t.packet_loss_rate().is_finite());
        if t.packets_sent == 0 {
            prop_assert_eq!(t.loss_event_rate(), 0.0);
            prop_assert_eq!(t.packet_loss_rate(), 0.0);
        } else {
            prop_assert!(t.loss_event_rate() <= t.packet_loss_rate());
        }

        // State columns: one per field, n long; a sampled bin holds its value or NaN.
        let values = r.state.values();
        prop_assert_eq!(values.len(), 2);
        for (i, column) in values.iter().enumerate() {
            prop_assert_eq!(column.len(), n);
            for &v in column {
                prop_assert!(v.is_nan() || v == i as f64);
            }
        }
    }

    #[test]
    fn packet_trace_keeps_at_most_its_limit(limit in 0usize..20, count in 0usize..40) {
        let mut trace = PacketTrace::new(limit);
        for i in 0..count {
            trace.record(PacketRecord {
                time: Time::from_nanos(i as u64),
                event: PacketEvent::Sent,
                link: None,
                node: 0,
                flow: 1,
                seq: i as u64,
                size_bytes: 1000,
                reverse: false,
            });
        }
        prop_assert_eq!(trace.records().len(), count.min(limit));
        prop_assert_eq!(trace.records().len() as u64 + trace.overflowed(), count as u64);
        prop_assert!(trace.records().iter().enumerate().all(|(i, r)| r.seq == i as u64));
    }
}

#[test]
fn a_long_steady_run_keeps_one_value_per_bin() {
    // 10 s of a busy 10 Mb/s link sending 1000-byte packets (800 us each) in 10 ms bins.
    let bin = Duration::from_millis(10);
    let mut link = LinkMonitor::new(bin, 10_000_000);
    let mut flow = FlowMonitor::new(bin, Duration::from_millis(100), &[]);
    let tx = 800_000u64;
    for i in 0..12_500u64 {
        let t = Time::from_nanos(i * tx);
        flow.on_sent(t, 1000);
        link.on_arrival(t, 1000);
        link.on_transmission(t, Time::from_nanos((i + 1) * tx), 1000);
        if i % 100 == 0 {
            link.on_drop(t, 1000, DropCause::LossModel);
            flow.on_dropped(t, t, 1000);
        }
    }
    let end = Time::from_nanos(10_000_000_000);
    let l = link.finish(end);
    let f = flow.finish(end);
    assert_eq!(l.bins.utilization.len(), 1000);
    assert!(l.bins.utilization.iter().all(|&u| (u - 1.0).abs() < 1e-12));
    assert_eq!(l.totals.utilization, 1.0);
    assert_eq!(f.bins.sent_packets.to_vec().iter().sum::<u32>(), 12_500);
    // A drop every 80 ms with a 100 ms RTT: 0 opens, 80 joins, 160 opens, 240 joins, ...
    assert_eq!(f.totals.loss_events, 63);
    assert_eq!(f.totals.packets_dropped, 125);
}
