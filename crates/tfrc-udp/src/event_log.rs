//! An event log of a session, without a `tracing-subscriber` dependency: [`EventSubscriber`]
//! takes the crate's events (the table in `events.rs`, docs/transport.md "Event log") and hands
//! each one as a [`LoggedEvent`] to a closure, which may write it as a JSON line
//! ([`LoggedEvent::to_json`]) for a plot, or pass it to another logging system (the Python
//! bindings forward them to Python's `logging`). Only with the `tracing` feature.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use tfrc_udp::event_log::EventSubscriber;
//!
//! let lines = Arc::new(Mutex::new(Vec::new()));
//! let sink = Arc::clone(&lines);
//! let subscriber = EventSubscriber::new(tracing::Level::DEBUG, move |event| {
//!     sink.lock().unwrap().push(event.to_json());
//! });
//! tracing::subscriber::with_default(subscriber, || {
//!     // ... run a session: every event at debug or above lands in `lines`.
//! });
//! ```

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The targets of this crate's events start with this.
pub const TARGET_PREFIX: &str = "tfrc_udp";

/// One field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// A float (rates, times, p).
    Float(f64),
    /// An unsigned integer (counters, tickets).
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// A flag.
    Bool(bool),
    /// Text (a cause, an address, an error).
    Text(String),
}

/// One event: its level, target, name (the `event` field) and other fields in order.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedEvent {
    /// The event's level.
    pub level: Level,
    /// `tfrc_udp::sender` or `tfrc_udp::receiver`.
    pub target: &'static str,
    /// What happened (`report`, `rate_change`, `loss_event`, ...).
    pub name: String,
    /// The other fields (`time_s` first), in the order the event gives them.
    pub fields: Vec<(&'static str, FieldValue)>,
}

impl LoggedEvent {
    /// The event as one JSON object: `level`, `target`, `event`, then its fields.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(128);
        out.push_str("{\"level\": ");
        json_string(&mut out, self.level.as_str());
        out.push_str(", \"target\": ");
        json_string(&mut out, self.target);
        out.push_str(", \"event\": ");
        json_string(&mut out, &self.name);
        for (name, value) in &self.fields {
            out.push_str(", ");
            json_string(&mut out, name);
            out.push_str(": ");
            match value {
                FieldValue::Float(v) if v.is_finite() => {
                    let _ = write!(out, "{v}");
                }
                // JSON has no infinity or NaN (X_calc is infinite while p = 0).
                FieldValue::Float(_) => out.push_str("null"),
                FieldValue::Unsigned(v) => {
                    let _ = write!(out, "{v}");
                }
                FieldValue::Signed(v) => {
                    let _ = write!(out, "{v}");
                }
                FieldValue::Bool(v) => out.push_str(if *v { "true" } else { "false" }),
                FieldValue::Text(v) => json_string(&mut out, v),
            }
        }
        out.push('}');
        out
    }
}

/// Appends `text` as a JSON string.
fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Collects an event's fields.
struct Fields<'a>(&'a mut LoggedEvent);

impl Fields<'_> {
    fn push(&mut self, field: &Field, value: FieldValue) {
        if field.name() == "event" {
            if let FieldValue::Text(name) = value {
                self.0.name = name;
                return;
            }
        }
        self.0.fields.push((field.name(), value));
    }
}

impl Visit for Fields<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, FieldValue::Float(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, FieldValue::Signed(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, FieldValue::Unsigned(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, FieldValue::Bool(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, FieldValue::Text(value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, FieldValue::Text(format!("{value:?}")));
    }
}

/// A `tracing` subscriber that hands this crate's events at `max_level` or above to a closure
/// (events of other targets, and spans, are ignored). Install it with
/// `tracing::subscriber::set_global_default` or `with_default`.
pub struct EventSubscriber<F> {
    max_level: Level,
    sink: F,
    next_span: AtomicU64,
}

impl<F: Fn(&LoggedEvent) + Send + Sync + 'static> EventSubscriber<F> {
    /// Events at `max_level` or more severe go to `sink` (`Level::DEBUG`: every event of the
    /// table; `Level::INFO`: rate changes, nofeedback expiries, sessions and send errors).
    pub fn new(max_level: Level, sink: F) -> EventSubscriber<F> {
        EventSubscriber {
            max_level,
            sink,
            next_span: AtomicU64::new(1),
        }
    }
}

impl<F: Fn(&LoggedEvent) + Send + Sync + 'static> Subscriber for EventSubscriber<F> {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event()
            && *metadata.level() <= self.max_level
            && metadata.target().starts_with(TARGET_PREFIX)
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Spans are not recorded; each still needs an identifier of its own (never 0).
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let mut logged = LoggedEvent {
            level: *metadata.level(),
            target: metadata.target(),
            name: String::new(),
            fields: Vec::with_capacity(8),
        };
        event.record(&mut Fields(&mut logged));
        (self.sink)(&logged);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_becomes_one_json_object() {
        let event = LoggedEvent {
            level: Level::INFO,
            target: "tfrc_udp::sender",
            name: "rate_change".into(),
            fields: vec![
                ("time_s", FieldValue::Float(1.5)),
                ("x_calc_bps", FieldValue::Float(f64::INFINITY)),
                ("ticket", FieldValue::Unsigned(7)),
                ("cause", FieldValue::Text("say \"no\"\n".into())),
            ],
        };
        assert_eq!(
            event.to_json(),
            "{\"level\": \"INFO\", \"target\": \"tfrc_udp::sender\", \"event\": \"rate_change\", \
             \"time_s\": 1.5, \"x_calc_bps\": null, \"ticket\": 7, \"cause\": \"say \\\"no\\\"\\n\"}"
        );
    }
}
