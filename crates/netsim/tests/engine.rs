//! The engine end to end, built in code: exact timing, conservation, sharing, lifecycle and
//! determinism.

use std::time::Duration;

use netsim::agent::{AgentConfig, CbrConfig};
use netsim::dist::DurationDist;
use netsim::loss::LossModelConfig;
use netsim::monitor::PacketEvent;
use netsim::packet::{FlowId, NodeId};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::results::Results;
use netsim::sim::{FlowSetup, LossSetup, OnOff, SimConfig, Simulation};
use netsim::topology::{AccessDelay, DumbbellConfig, LinkParams, Topology};
use netsim::Time;

fn cbr(rate_bps: u64, size_bytes: u32, random: bool) -> AgentConfig {
    AgentConfig::Cbr(CbrConfig {
        rate_bps,
        size_bytes,
        random,
        max_packets: None,
    })
}

fn flow(name: &str, from: NodeId, to: NodeId, agent: AgentConfig) -> FlowSetup {
    FlowSetup {
        name: name.into(),
        from,
        to,
        agent,
        start: DurationDist::Fixed(Duration::ZERO),
        stop: None,
        on_off: None,
        loss_event_rtt: None,
        host_jitter: Duration::ZERO,
    }
}

fn config(duration: Duration) -> SimConfig {
    SimConfig {
        duration,
        bin: Duration::from_millis(100),
        packet_trace: None,
        binned_links: None,
    }
}

/// Two nodes joined by one duplex link.
fn pair(rate_bps: u64, delay: Duration, queue: QueueConfig) -> Topology {
    let mut t = Topology::new();
    let a = t.add_node("a").unwrap();
    let b = t.add_node("b").unwrap();
    t.add_duplex(a, b, rate_bps, delay, &queue).unwrap();
    t
}

fn dumbbell(hosts: usize, queue: QueueConfig) -> Topology {
    let bottleneck = LinkParams {
        rate_bps: 15_000_000,
        delay: Duration::from_millis(20),
        queue,
    };
    DumbbellConfig {
        left_hosts: hosts,
        right_hosts: hosts,
        forward: bottleneck.clone(),
        reverse: bottleneck,
        access_rate: netsim::dist::RateDist::Fixed(100_000_000),
        access_delay: AccessDelay::PerHost(DurationDist::Uniform {
            low: Duration::from_millis(1),
            high: Duration::from_millis(3),
        }),
        access_queue: QueueConfig::default(),
    }
    .build(1)
    .unwrap()
}

#[test]
fn serialization_and_propagation_are_exact() {
    let t = pair(
        8_000_000,
        Duration::from_micros(12_345),
        QueueConfig::default(),
    );
    let mut agent = CbrConfig {
        rate_bps: 1_000_000,
        size_bytes: 1000,
        random: false,
        max_packets: Some(3),
    };
    agent.rate_bps = 4_000_000; // one packet every 2 ms: the link is idle at each arrival
    let sim = Simulation::new(
        t,
        vec![flow("f", NodeId(0), NodeId(1), AgentConfig::Cbr(agent))],
        vec![],
        SimConfig {
            packet_trace: Some(100),
            ..config(Duration::from_secs(1))
        },
        1,
    )
    .unwrap();
    let results = sim.run();
    let trace = &results.packet_trace.as_ref().unwrap().records;
    let delivered: Vec<u64> = trace
        .iter()
        .filter(|r| r.event == PacketEvent::Delivered)
        .map(|r| r.time.as_nanos())
        .collect();
    // Sent at 0, 2, 4 ms; 1 ms on the wire (1000 B at 8 Mb/s) plus 12.345 ms in flight.
    assert_eq!(delivered, [13_345_000, 15_345_000, 17_345_000]);
    let f = &results.flows[0].record.totals;
    assert_eq!((f.packets_sent, f.packets_received), (3, 3));
    // base RTT: 1 ms + 12.345 ms out, 40 B (40 us) + 12.345 ms back.
    assert_eq!(results.flows[0].base_rtt, Duration::from_nanos(25_730_000));
}

#[test]
fn back_to_back_packets_queue_and_depart_one_transmission_apart() {
    let t = pair(8_000_000, Duration::ZERO, QueueConfig::default());
    // 16 Mb/s into an 8 Mb/s link: every other packet waits.
    let sim = Simulation::new(
        t,
        vec![flow(
            "f",
            NodeId(0),
            NodeId(1),
            cbr(16_000_000, 1000, false),
        )],
        vec![],
        SimConfig {
            packet_trace: Some(1000),
            ..config(Duration::from_millis(20))
        },
        1,
    )
    .unwrap();
    let results = sim.run();
    let starts: Vec<u64> = results
        .packet_trace
        .as_ref()
        .unwrap()
        .records
        .iter()
        .filter(|r| r.event == PacketEvent::TransmissionStart)
        .map(|r| r.time.as_nanos())
        .collect();
    assert!(starts.len() >= 20);
    assert!(starts.windows(2).all(|w| w[1] - w[0] == 1_000_000));
}

fn conservation_holds(results: &Results) {
    for link in &results.links {
        let t = &link.record.totals;
        let q = &link.queue;
        // Arrivals to the link = loss-model drops + queue arrivals.
        assert_eq!(t.arrivals, t.loss_model_drops + q.arrivals, "{}", link.name);
        // Queue arrivals = departures + drops + occupancy (at most the buffer).
        let waiting = q.arrivals - q.departures - q.early_drops - q.forced_drops;
        assert!(waiting <= 100, "{}: {waiting}", link.name);
        assert_eq!(
            t.queue_drops,
            q.early_drops + q.forced_drops,
            "{}",
            link.name
        );
        assert_eq!(t.departures, q.departures, "{}", link.name);
    }
    for f in &results.flows {
        let t = &f.record.totals;
        assert!(t.packets_received + t.packets_dropped <= t.packets_sent);
        // What is neither delivered nor dropped is still in the network: a few packets.
        assert!(t.packets_sent - t.packets_received - t.packets_dropped < 200);
    }
}

#[test]
fn overloaded_droptail_bottleneck_delivers_its_capacity() {
    let queue = QueueConfig::DropTail {
        limit: QueueLimit::Packets(50),
    };
    let t = dumbbell(2, queue);
    let l0 = t.node("left0").unwrap();
    let l1 = t.node("left1").unwrap();
    let r0 = t.node("right0").unwrap();
    let r1 = t.node("right1").unwrap();
    let flows = vec![
        flow("a", l0, r0, cbr(10_000_000, 1000, true)),
        flow("b", l1, r1, cbr(10_000_000, 1000, true)),
    ];
    let results = Simulation::new(t, flows, vec![], config(Duration::from_secs(20)), 3)
        .unwrap()
        .run();
    conservation_holds(&results);
    let bottleneck = results.link("bottleneck").unwrap();
    let util = bottleneck.record.totals.utilization;
    assert!(util > 0.99, "utilization {util}");
    let delivered: u64 = results
        .flows
        .iter()
        .map(|f| f.record.totals.bytes_received)
        .sum();
    let rate = delivered as f64 * 8.0 / 20.0;
    assert!((rate - 15e6).abs() < 0.01 * 15e6, "{rate}");
    // Offered 20 Mb/s, carried 15: a quarter is dropped, all at the bottleneck.
    let drop_rate = bottleneck.record.totals.drop_rate();
    assert!((drop_rate - 0.25).abs() < 0.01, "{drop_rate}");
    for f in &results.flows {
        assert!(f.record.totals.loss_events > 10);
        assert!(f.record.totals.loss_event_rate() < f.record.totals.packet_loss_rate());
    }
}

#[test]
fn start_stop_and_on_off_bound_the_sending() {
    let t = pair(
        100_000_000,
        Duration::from_millis(1),
        QueueConfig::default(),
    );
    let mut steady = flow("steady", NodeId(0), NodeId(1), cbr(1_000_000, 1000, false));
    steady.start = DurationDist::Fixed(Duration::from_secs(2));
    steady.stop = Some(DurationDist::Fixed(Duration::from_secs(5)));
    let mut cycling = flow("cycling", NodeId(0), NodeId(1), cbr(1_000_000, 1000, false));
    cycling.on_off = Some(OnOff {
        on: DurationDist::Exponential {
            mean: Duration::from_secs(1),
        },
        off: DurationDist::Exponential {
            mean: Duration::from_secs(2),
        },
    });
    let results = Simulation::new(
        t,
        vec![steady, cycling],
        vec![],
        config(Duration::from_secs(600)),
        5,
    )
    .unwrap()
    .run();
    let steady = &results.flow("steady").unwrap().record;
    // 125 packets a second from 2 s (inclusive) to 5 s (exclusive), all in bins 20-49.
    assert_eq!(steady.totals.packets_sent, 375);
    let bins = &steady.bins.sent_packets.to_vec();
    assert!(bins[..20].iter().all(|&n| n == 0));
    assert!(bins[50..].iter().all(|&n| n == 0));
    let cycling = &results.flow("cycling").unwrap().record.totals;
    let share = cycling.packets_sent as f64 / (125.0 * 600.0);
    assert!((share - 1.0 / 3.0).abs() < 0.06, "ON share {share}");
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let build = |seed| {
        let t = dumbbell(2, QueueConfig::default());
        let flows = vec![
            flow(
                "a",
                t.node("left0").unwrap(),
                t.node("right0").unwrap(),
                cbr(9_000_000, 1000, true),
            ),
            flow(
                "b",
                t.node("left1").unwrap(),
                t.node("right1").unwrap(),
                cbr(9_000_000, 1000, true),
            ),
        ];
        Simulation::new(t, flows, vec![], config(Duration::from_secs(10)), seed)
            .unwrap()
            .run()
    };
    let first = build(11);
    assert_eq!(first, build(11));
    assert_ne!(first.flows[0].record, build(12).flows[0].record);
}

#[test]
fn adding_a_flow_leaves_the_others_draws_alone() {
    let run = |extra: bool| {
        let t = dumbbell(3, QueueConfig::default());
        let node = |n: &str| t.node(n).unwrap();
        let mut flows = vec![flow(
            "a",
            node("left0"),
            node("right0"),
            cbr(2_000_000, 1000, true),
        )];
        if extra {
            flows.insert(
                0,
                flow(
                    "z",
                    node("left1"),
                    node("right1"),
                    cbr(2_000_000, 1000, true),
                ),
            );
        }
        let a = FlowId(u32::from(extra));
        let losses = vec![LossSetup {
            link: t.link_named("bottleneck").unwrap(),
            flow: Some(a),
            model: LossModelConfig::Bernoulli { p: 0.02 },
        }];
        let results = Simulation::new(t, flows, losses, config(Duration::from_secs(30)), 9)
            .unwrap()
            .run();
        results.flow("a").unwrap().record.clone()
    };
    let alone = run(false);
    let with_other = run(true);
    assert!(alone.totals.packets_dropped > 50);
    assert_eq!(
        alone.bins.sent_packets.to_vec(),
        with_other.bins.sent_packets.to_vec()
    );
    assert_eq!(
        alone.bins.dropped_packets.to_vec(),
        with_other.bins.dropped_packets.to_vec()
    );
}

#[test]
fn run_until_in_steps_equals_one_run() {
    let make = || {
        let t = dumbbell(2, QueueConfig::default());
        let flows = vec![flow(
            "a",
            t.node("left0").unwrap(),
            t.node("right1").unwrap(),
            cbr(20_000_000, 1000, true),
        )];
        Simulation::new(t, flows, vec![], config(Duration::from_secs(5)), 2).unwrap()
    };
    let whole = make().run();
    let mut stepped = make();
    for k in 1..=8 {
        stepped.run_until(Time::from_nanos(k * 700_000_000));
    }
    assert_eq!(stepped.finish(), whole);
}

#[test]
fn agent_state_is_sampled_at_the_end_of_every_bin() {
    let t = pair(
        100_000_000,
        Duration::from_millis(1),
        QueueConfig::default(),
    );
    // 1000 packets/s from 0.25 s; bins of 100 ms over 1.05 s (the last bin is partial).
    let mut f = flow("f", NodeId(0), NodeId(1), cbr(8_000_000, 1000, false));
    f.start = DurationDist::Fixed(Duration::from_millis(250));
    let results = Simulation::new(t, vec![f], vec![], config(Duration::from_millis(1050)), 1)
        .unwrap()
        .run();
    let state = &results.flows[0].record.state;
    assert_eq!(state.fields, ["packets_sent"]);
    let sent = &state.values()[0];
    assert_eq!(sent.len(), 11);
    // Bin k covers [k/10, (k+1)/10) s: its sample counts the packets sent at 0.25 s, 0.251 s, ...
    // before (k+1)/10 s; the last bin ends with the run, at 1.05 s.
    let expected: Vec<f64> = (0..11)
        .map(|k| {
            let end_ms: i64 = if k == 10 { 1050 } else { (k + 1) * 100 };
            (end_ms - 250).max(0) as f64
        })
        .collect();
    assert_eq!(sent, &expected);
    assert_eq!(results.flows[0].record.totals.packets_sent, 800);
}
