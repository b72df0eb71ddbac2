//! The event log (feature `tracing`): a session over a lossy relay emits its reports, rate
//! changes, loss events and feedback, each with its fields, and an EventSubscriber at info
//! level leaves out the debug ones. Run with `cargo test -p tfrc-udp --features tracing`.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tfrc::TfrcConfig;
use tfrc_udp::event_log::{EventSubscriber, FieldValue, LoggedEvent};
use tfrc_udp::{ReceiverOptions, SenderOptions, Source, UdpReceiver, UdpSender};

mod relay;

/// Runs a greedy flow for `seconds` through a relay dropping every 50th data packet, with an
/// EventSubscriber at `level` installed on both loops' threads; the events.
fn session_events(level: tracing::Level, seconds: f64) -> Vec<LoggedEvent> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let subscriber = |events: &Arc<Mutex<Vec<LoggedEvent>>>| {
        let sink = Arc::clone(events);
        EventSubscriber::new(level, move |e| sink.lock().unwrap().push(e.clone()))
    };
    let rx = UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap();
    let path = relay::Path {
        one_way: Duration::from_millis(5),
        drop_every: Some(50),
        bottleneck: None,
    };
    let relay = relay::Relay::spawn(rx.local_addr().unwrap(), path);
    let duration = Duration::from_secs_f64(seconds);
    let rx_subscriber = subscriber(&events);
    let rx = thread::spawn(move || {
        tracing::subscriber::with_default(rx_subscriber, || {
            let mut rx = rx;
            rx.run_for(duration + Duration::from_millis(300), &mut |_| {})
                .unwrap();
        })
    });
    let mut options = SenderOptions::new(TfrcConfig::rfc5348());
    options.source = Source::Greedy;
    let mut tx = UdpSender::bind("127.0.0.1:0", relay.addr, options).unwrap();
    tracing::subscriber::with_default(subscriber(&events), || tx.run_for(duration).unwrap());
    rx.join().unwrap();
    assert!(relay.drops.load(std::sync::atomic::Ordering::Relaxed) > 0);
    drop(relay);
    let got = events.lock().unwrap().clone();
    got
}

fn named<'a>(events: &'a [LoggedEvent], name: &str) -> Vec<&'a LoggedEvent> {
    events.iter().filter(|e| e.name == name).collect()
}

fn field(event: &LoggedEvent, name: &str) -> f64 {
    match event.fields.iter().find(|(n, _)| *n == name) {
        Some((_, FieldValue::Float(v))) => *v,
        Some((_, FieldValue::Unsigned(v))) => *v as f64,
        other => panic!("{name}: {other:?} in {event:?}"),
    }
}

#[test]
fn a_lossy_session_logs_reports_rate_changes_loss_events_and_feedback() {
    let events = session_events(tracing::Level::DEBUG, 2.0);
    let reports = named(&events, "report");
    let feedback = named(&events, "feedback");
    let losses = named(&events, "loss_event");
    let changes = named(&events, "rate_change");
    assert!(reports.len() > 20, "{} reports", reports.len());
    assert!(
        feedback.len() >= reports.len(),
        "every accepted report was sent"
    );
    assert!(!losses.is_empty() && !changes.is_empty());
    assert_eq!(named(&events, "session").len(), 1);
    for e in &reports {
        assert_eq!(e.target, "tfrc_udp::sender");
        assert!(field(e, "rtt_s") > 0.0 && field(e, "x_bps") > 0.0, "{e:?}");
        assert_eq!(e.fields[0].0, "time_s");
    }
    // Loss events come in order, their p within [0, 1].
    let counts: Vec<f64> = losses.iter().map(|e| field(e, "loss_events")).collect();
    assert!(counts.windows(2).all(|w| w[1] > w[0]), "{counts:?}");
    assert!(losses.iter().all(|e| (0.0..=1.0).contains(&field(e, "p"))));
    // Each line of the log is one JSON object a plot can read.
    let line = reports[0].to_json();
    assert!(line.starts_with(
        "{\"level\": \"DEBUG\", \"target\": \"tfrc_udp::sender\", \"event\": \"report\""
    ));
}

#[test]
fn an_info_subscriber_gets_only_the_info_events() {
    let events = session_events(tracing::Level::INFO, 1.0);
    assert!(!events.is_empty());
    for e in &events {
        assert!(e.level <= tracing::Level::INFO, "{e:?}");
        assert!(["rate_change", "session", "nofeedback", "send_error"].contains(&e.name.as_str()));
    }
}
