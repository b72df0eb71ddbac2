//! The `media` example's encoder and player over loopback: the encoder follows the allowed rate
//! up to its ceiling without overshooting it at start-up, and the player gets every frame whole
//! and on time.

use std::thread;
use std::time::Duration;

use tfrc::TfrcConfig;
use tfrc_udp::{ReceiverOptions, SenderOptions, UdpReceiver, UdpSender};

#[allow(dead_code)]
#[path = "../examples/media/stream.rs"]
mod stream;

#[test]
fn the_media_example_streams_whole_frames_at_the_encoders_rate() {
    // The figures below are real time: on a loaded host a stall of the encoder's or the
    // sender's thread sends a payload past its 100 ms deadline, or a backlog in one burst that
    // reads as start-up overshoot (1.3 to 2.2 times the ceiling): 7 runs in about 80 with 4
    // busy loops on 2 cores. A run that misses them is run again, up to 3 runs in all: a real
    // regression misses them every time.
    for attempt in 1..=3 {
        match stream_once() {
            Ok(()) => return,
            Err(why) if attempt < 3 => eprintln!("run {attempt} missed its timing: {why}"),
            Err(why) => panic!("{why}"),
        }
    }
}

/// Fails with the reason unless `holds`.
fn check(holds: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(why())
    }
}

/// One 2 s stream: panics on what does not depend on timing, returns the timing check missed.
fn stream_once() -> Result<(), String> {
    let mut config = TfrcConfig::rfc5348();
    config.segment_size_bytes = 1200;
    let rx = UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(config.clone())).unwrap();
    let to = rx.local_addr().unwrap();
    let player = thread::spawn(move || stream::receive(rx, Duration::from_millis(2600)).unwrap());
    let tx = UdpSender::bind("127.0.0.1:0", to, SenderOptions::new(config)).unwrap();
    let max_bps = 4e6;
    let sent = stream::send(tx, 1200, Duration::from_secs(2), max_bps, Some(max_bps)).unwrap();
    let played = player.join().unwrap();
    assert!(
        sent.json().starts_with("{\"role\": \"send\""),
        "{}",
        sent.json()
    );
    // 2 s at 30 fps, every payload queued and sent on an idle path.
    assert_eq!(sent.frames, 60, "{sent:?}");
    check(
        (sent.frames_refused, sent.payloads_expired) == (0, 0),
        || format!("{sent:?}"),
    )?;
    assert_eq!(sent.payloads_sent, sent.payloads_queued);
    // The encoder's ceiling, not X (which grows without bound on loopback), sets the rate.
    check(
        sent.steady_bps > 0.85 * max_bps && sent.steady_bps < 1.15 * max_bps,
        || format!("{sent:?}"),
    )?;
    check(sent.start_up_peak_bps < 1.3 * max_bps, || {
        format!("{sent:?}")
    })?;
    check(played.payloads == sent.payloads_sent, || {
        format!("{played:?}")
    })?;
    check(
        (played.frames_complete, played.frames_on_time) == (60, 60),
        || format!("{played:?}"),
    )?;
    check(
        (played.frames_incomplete, played.frames_missing) == (0, 0),
        || format!("{played:?}"),
    )?;
    check(played.max_delay_variation_ms < 100.0, || {
        format!("{played:?}")
    })
}
