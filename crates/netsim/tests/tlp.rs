//! Tail loss probes (RFC 8985 §7), in the `linux` preset (docs/tcp.md, "The linux preset"): a
//! transfer whose last packets are lost finishes without waiting for the retransmission timer.
//! (Proportional rate reduction's tests are beside it, in `agent/tcp/prr.rs`.)

mod common;

use common::{last, two_nodes_over};

/// A 30-packet transfer of a linux-preset SACK flow (tail loss probes as given) over a
/// 10 Mb/s link of 50 ms each way whose last `lost` data packets are dropped (the SYN is the
/// link's arrival 0, data packet n its arrival n): its timeouts and the time its last packet
/// arrived (seconds, to the 1 ms bin).
fn tail_loss(lost: u32, tlp: bool) -> (f64, f64) {
    let flow = format!(
        "kind = \"tcp\"\nvariant = \"sack\"\npreset = \"linux\"\ntlp = {tlp}\nmax_packets = 30"
    );
    let indices: Vec<String> = (31 - lost..=30).map(|i| i.to_string()).collect();
    let losses = format!(
        "[[losses]]\nlink = \"ab\"\nflow = \"f\"\nkind = \"list\"\nindices = [{}]\n",
        indices.join(", ")
    );
    let text = two_nodes_over("10Mbps", "50ms", 1000, "5s", "1ms", &flow, &losses);
    let results = common::simulate(&text, 1);
    let f = results.flow("f").unwrap();
    let received = f.record.bins.received_packets.to_vec();
    let done = received.iter().rposition(|&n| n > 0).unwrap_or(0) as f64 * 0.001;
    (last(f, "timeouts"), done)
}

#[test]
fn probes_repair_tail_losses_without_timeouts() {
    for lost in 1..=3 {
        let (with_timeouts, with_done) = tail_loss(lost, true);
        let (without_timeouts, without_done) = tail_loss(lost, false);
        assert_eq!(with_timeouts, 0.0, "{lost} lost: probes");
        assert_eq!(without_timeouts, 1.0, "{lost} lost: no probes");
        // With two or more packets out the probe comes at 2·SRTT + 2 ms (202 ms), before the
        // timer's SRTT + 200 ms, and its SACK starts fast recovery rather than going back N
        // after a timeout. With one, 2·SRTT + 200 ms is later than the timer, and the probe
        // takes the timer's place at the same time.
        if lost == 1 {
            assert!(
                (with_done - without_done).abs() < 0.002,
                "{with_done} {without_done}"
            );
        } else {
            assert!(
                with_done < without_done - 0.03,
                "{lost} lost: done at {with_done} s with probes, {without_done} s without"
            );
        }
    }
}
