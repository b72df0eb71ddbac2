//! Issue test 2: every row of the reference's loss-interval table (`vectors/loss_intervals.csv`)
//! under both discounting thresholds and both short-history rules.

use tfrc::config::ShortHistory;
use tfrc::loss_history::LossHistory;

struct Row {
    open: f64,
    closed_newest_first: Vec<f64>,
    discount: Option<f64>,
    rules: Vec<ShortHistory>,
    p: f64,
}

fn parse_history(field: &str) -> Vec<f64> {
    let mut values = Vec::new();
    for item in field.split(';') {
        match item.split_once('x') {
            Some((value, count)) => {
                let value: f64 = value.parse().unwrap();
                values.extend(std::iter::repeat_n(value, count.parse().unwrap()));
            }
            None => values.push(item.parse().unwrap()),
        }
    }
    values
}

fn rows() -> Vec<Row> {
    let text = include_str!("vectors/loss_intervals.csv");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("history"))
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let history = parse_history(fields[0]);
            Row {
                open: history[0],
                closed_newest_first: history[1..].to_vec(),
                discount: (fields[1] != "none").then(|| fields[1].parse().unwrap()),
                rules: match fields[2] {
                    "rfc" => vec![ShortHistory::Rfc5348],
                    "ns2" => vec![ShortHistory::Ns2],
                    _ => vec![ShortHistory::Rfc5348, ShortHistory::Ns2],
                },
                p: fields[3].parse().unwrap(),
            }
        })
        .collect()
}

/// Builds the history the way a receiver does: the oldest interval seeds it and each newer one
/// closes in turn (none of these histories triggers discounting while being built).
fn build(row: &Row, rule: ShortHistory) -> LossHistory {
    let mut history = LossHistory::new(8, row.discount, rule);
    let mut oldest_first = row.closed_newest_first.iter().rev();
    history.seed_first(*oldest_first.next().unwrap());
    for &packets in oldest_first {
        history.close_interval(packets);
    }
    history
}

#[test]
fn reference_table_rows() {
    let rows = rows();
    assert_eq!(rows.len(), 16);
    for row in &rows {
        for &rule in &row.rules {
            let history = build(row, rule);
            let p = history.loss_event_rate(row.open);
            assert!(
                (p - row.p).abs() < 6e-7,
                "I_0 = {}, closed {:?}, discount {:?}, {rule:?}: p = {p}, expected {}",
                row.open,
                row.closed_newest_first,
                row.discount,
                row.p
            );
        }
    }
}
