//! Issue test 9: reordering by up to NDUPACK - 1 positions is tolerated; by NDUPACK it is a loss.

use std::time::Duration;

use tfrc::{DataHeader, Ecn, Receiver, TfrcConfig, Time};

/// Delivers packets 0..40 in order except that packet 20 arrives `displacement` positions late,
/// one every 10 ms, and returns the number of loss events the receiver saw.
fn loss_events_with_displacement(displacement: u64) -> u64 {
    let mut receiver = Receiver::new(TfrcConfig::rfc5348()).unwrap();
    let mut order: Vec<u64> = (0..40).filter(|&s| s != 20).collect();
    // Packet 20 follows packet 20 + displacement (packet 19 when it is not displaced at all).
    let anchor = if displacement == 0 {
        19
    } else {
        20 + displacement
    };
    let position = order.iter().position(|&s| s == anchor).unwrap();
    order.insert(position + 1, 20);
    for (i, seq) in order.into_iter().enumerate() {
        let now = Time::from_nanos(10_000_000 * (i as u64 + 1));
        let header = DataHeader {
            seq,
            timestamp: now - Duration::from_millis(50),
            rtt: Duration::from_millis(100),
        };
        receiver.handle_data(now, &header, 1000, Ecn::NotCe);
    }
    receiver.stats().loss_events
}

#[test]
fn ndupack_three_tolerates_two_positions() {
    assert_eq!(loss_events_with_displacement(0), 0);
    assert_eq!(loss_events_with_displacement(1), 0);
    assert_eq!(loss_events_with_displacement(2), 0);
    assert_eq!(loss_events_with_displacement(3), 1);
    assert_eq!(loss_events_with_displacement(5), 1);
}

#[test]
fn late_packet_after_loss_is_ignored_not_double_counted() {
    let mut receiver = Receiver::new(TfrcConfig::floyd2000()).unwrap();
    let rtt = Duration::from_millis(100);
    for (i, seq) in [0u64, 1, 3, 2, 4].into_iter().enumerate() {
        let now = Time::from_nanos(1_000_000 * (i as u64 + 1));
        let header = DataHeader {
            seq,
            timestamp: now,
            rtt,
        };
        receiver.handle_data(now, &header, 1000, Ecn::NotCe);
    }
    // ns-2's NDUPACK = 1 declares 2 lost when 3 arrives; the late 2 is then ignored.
    let stats = receiver.stats();
    assert_eq!(stats.loss_events, 1);
    assert_eq!(stats.packets_lost, 1);
    assert_eq!(stats.packets_ignored, 1);
}

#[test]
fn ecn_mark_counts_as_a_loss_event() {
    let mut receiver = Receiver::new(TfrcConfig::rfc5348()).unwrap();
    let rtt = Duration::from_millis(100);
    for seq in 0..10u64 {
        let now = Time::from_nanos(1_000_000 * (seq + 1));
        let header = DataHeader {
            seq,
            timestamp: now,
            rtt,
        };
        let ecn = if seq == 5 { Ecn::Ce } else { Ecn::NotCe };
        receiver.handle_data(now, &header, 1000, ecn);
    }
    assert_eq!(receiver.stats().loss_events, 1);
    assert_eq!(receiver.stats().packets_lost, 0);
    assert!(receiver.loss_event_rate() > 0.0);
}
