//! Integration tests for `tfrc::wire`: golden bytes written out by hand from
//! `docs/wire-format.md`, round trips at the edges, one test per kind of garbage with its exact
//! error, and properties (round trips, and "parsing never panics").

use std::time::Duration;

use proptest::prelude::*;
use tfrc::wire::{
    DataPacket, FeedbackPacket, Packet, PacketKind, WireError, WireStats, COMMON_HEADER_LEN,
    DATA_HEADER_LEN, FEEDBACK_LEN, VERSION,
};
use tfrc::{DataHeader, FeedbackHeader, Time};

// ---------------------------------------------------------------------------------------------
// Golden vectors

/// The session of both golden packets.
const SESSION: u64 = 0x1122_3344_5566_7788;

/// session 0x1122334455667788, seq 0x0102030405060708, timestamp 1 s, rtt 100 ms, payload "hi".
const GOLDEN_DATA: [u8; 36] = [
    0x02, 0x01, // version 2, type 1 (data)
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // session
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // seq
    0x00, 0x00, 0x00, 0x00, 0x3b, 0x9a, 0xca, 0x00, // timestamp: 1_000_000_000 ns
    0x00, 0x00, 0x00, 0x00, 0x05, 0xf5, 0xe1, 0x00, // rtt: 100_000_000 ns
    0x68, 0x69, // payload "hi"
];

fn golden_data() -> DataHeader {
    DataHeader {
        seq: 0x0102_0304_0506_0708,
        timestamp: Time::from_nanos(1_000_000_000),
        rtt: Duration::from_millis(100),
    }
}

/// session 0x1122334455667788, timestamp_echo 2 s, t_delay 250 µs, X_recv 125000 bytes/s,
/// p 0.25.
const GOLDEN_FEEDBACK: [u8; 42] = [
    0x02, 0x02, // version 2, type 2 (feedback)
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // session
    0x00, 0x00, 0x00, 0x00, 0x77, 0x35, 0x94, 0x00, // timestamp_echo: 2_000_000_000 ns
    0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xd0, 0x90, // t_delay: 250_000 ns
    0x40, 0xfe, 0x84, 0x80, 0x00, 0x00, 0x00,
    0x00, // X_recv: 125000.0 = 1.9073486328125 * 2^16
    0x3f, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // p: 0.25 = 2^-2
];

fn golden_feedback() -> FeedbackHeader {
    FeedbackHeader {
        timestamp_echo: Time::from_nanos(2_000_000_000),
        t_delay: Duration::from_micros(250),
        x_recv_bytes_per_s: 125_000.0,
        p: 0.25,
    }
}

fn emit_feedback(header: &FeedbackHeader) -> [u8; FEEDBACK_LEN] {
    let mut buf = [0u8; FEEDBACK_LEN];
    assert_eq!(header.emit(SESSION, &mut buf), Ok(FEEDBACK_LEN));
    buf
}

fn emit_data(header: &DataHeader, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; DATA_HEADER_LEN + payload.len()];
    assert_eq!(
        header.emit_with_payload(SESSION, payload, &mut buf),
        Ok(buf.len())
    );
    buf
}

#[test]
fn layout_constants() {
    assert_eq!(VERSION, 2);
    assert_eq!(COMMON_HEADER_LEN, 2);
    assert_eq!(DATA_HEADER_LEN, 2 + 4 * 8);
    assert_eq!(FEEDBACK_LEN, 2 + 5 * 8);
    assert_eq!(PacketKind::Data.type_byte(), 1);
    assert_eq!(PacketKind::Feedback.type_byte(), 2);
}

#[test]
fn golden_data_packet() {
    assert_eq!(emit_data(&golden_data(), b"hi"), GOLDEN_DATA);
    assert_eq!(
        DataHeader::parse(&GOLDEN_DATA),
        Ok((golden_data(), &b"hi"[..]))
    );
    let view = DataPacket::new_checked(&GOLDEN_DATA[..]).unwrap();
    assert_eq!(view.session(), SESSION);
    assert_eq!(view.seq(), 0x0102_0304_0506_0708);
    assert_eq!(view.timestamp(), Time::from_nanos(1_000_000_000));
    assert_eq!(view.rtt(), Duration::from_millis(100));
    assert_eq!(view.payload(), b"hi");
    assert_eq!(PacketKind::peek(&GOLDEN_DATA), Ok(PacketKind::Data));
    assert_eq!(
        Packet::parse(&GOLDEN_DATA),
        Ok(Packet::Data {
            session: SESSION,
            header: golden_data(),
            payload: b"hi"
        })
    );
    // The header alone is the first 34 bytes.
    let mut header_only = [0u8; DATA_HEADER_LEN];
    assert_eq!(
        golden_data().emit(SESSION, &mut header_only),
        Ok(DATA_HEADER_LEN)
    );
    assert_eq!(header_only[..], GOLDEN_DATA[..DATA_HEADER_LEN]);
}

#[test]
fn golden_feedback_packet() {
    assert_eq!(emit_feedback(&golden_feedback()), GOLDEN_FEEDBACK);
    assert_eq!(
        FeedbackHeader::parse(&GOLDEN_FEEDBACK),
        Ok(golden_feedback())
    );
    let view = FeedbackPacket::new_checked(GOLDEN_FEEDBACK).unwrap();
    assert_eq!(view.session(), SESSION);
    assert_eq!(view.timestamp_echo(), Time::from_nanos(2_000_000_000));
    assert_eq!(view.t_delay(), Duration::from_nanos(250_000));
    assert_eq!(view.x_recv_bytes_per_s(), 125_000.0);
    assert_eq!(view.p(), 0.25);
    assert_eq!(PacketKind::peek(&GOLDEN_FEEDBACK), Ok(PacketKind::Feedback));
    assert_eq!(
        Packet::parse(&GOLDEN_FEEDBACK),
        Ok(Packet::Feedback {
            session: SESSION,
            header: golden_feedback()
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Round trips at the edges

#[test]
fn data_round_trips_at_the_edges() {
    let max_rtt = Duration::from_nanos(u64::MAX);
    for seq in [0, 1, u64::MAX] {
        for nanos in [0, 1, u64::MAX] {
            for rtt in [Duration::ZERO, Duration::from_nanos(1), max_rtt] {
                for payload in [&b""[..], &[0u8], &[0xff; 1500]] {
                    let header = DataHeader {
                        seq,
                        timestamp: Time::from_nanos(nanos),
                        rtt,
                    };
                    let bytes = emit_data(&header, payload);
                    assert_eq!(bytes.len(), header.buffer_len() + payload.len());
                    assert_eq!(DataHeader::parse(&bytes), Ok((header, payload)));
                }
            }
        }
    }
}

#[test]
fn feedback_round_trips_at_the_edges() {
    let floats = [0.0, -0.0, f64::from_bits(1), f64::MIN_POSITIVE, 0.5, 1.0];
    for nanos in [0, 1, u64::MAX] {
        for x_recv in floats.iter().copied().chain([1e12, f64::MAX]) {
            for p in floats {
                let header = FeedbackHeader {
                    timestamp_echo: Time::from_nanos(nanos),
                    t_delay: Duration::from_nanos(nanos),
                    x_recv_bytes_per_s: x_recv,
                    p,
                };
                let parsed = FeedbackHeader::parse(&emit_feedback(&header)).unwrap();
                assert_eq!(parsed, header);
                assert_eq!(parsed.x_recv_bytes_per_s.to_bits(), x_recv.to_bits());
                assert_eq!(parsed.p.to_bits(), p.to_bits());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Garbage in, specific error out

#[test]
fn every_truncation_of_a_data_packet() {
    for len in 0..DATA_HEADER_LEN {
        let prefix = &GOLDEN_DATA[..len];
        let truncated = Some(WireError::Truncated {
            needed: DATA_HEADER_LEN,
            found: len,
        });
        assert_eq!(DataHeader::parse(prefix).err(), truncated, "len {len}");
        assert_eq!(
            DataPacket::new_checked(prefix).err(),
            truncated,
            "len {len}"
        );
        let from_any = if len < COMMON_HEADER_LEN {
            WireError::Truncated {
                needed: COMMON_HEADER_LEN,
                found: len,
            }
        } else {
            WireError::Truncated {
                needed: DATA_HEADER_LEN,
                found: len,
            }
        };
        assert_eq!(Packet::parse(prefix), Err(from_any), "len {len}");
    }
    // From the full header on, the rest is payload.
    for len in DATA_HEADER_LEN..=GOLDEN_DATA.len() {
        let (_, payload) = DataHeader::parse(&GOLDEN_DATA[..len]).unwrap();
        assert_eq!(payload, &GOLDEN_DATA[DATA_HEADER_LEN..len]);
    }
}

#[test]
fn every_truncation_and_extension_of_a_feedback_packet() {
    for len in 0..FEEDBACK_LEN {
        let prefix = &GOLDEN_FEEDBACK[..len];
        let truncated = Some(WireError::Truncated {
            needed: FEEDBACK_LEN,
            found: len,
        });
        assert_eq!(FeedbackHeader::parse(prefix).err(), truncated, "len {len}");
        assert_eq!(
            FeedbackPacket::new_checked(prefix).err(),
            truncated,
            "len {len}"
        );
        if len >= COMMON_HEADER_LEN {
            assert_eq!(Packet::parse(prefix).err(), truncated, "len {len}");
        }
    }
    for extra in 1..=64 {
        let mut long = GOLDEN_FEEDBACK.to_vec();
        long.resize(FEEDBACK_LEN + extra, 0);
        assert_eq!(
            FeedbackHeader::parse(&long),
            Err(WireError::TrailingBytes {
                expected: FEEDBACK_LEN,
                found: FEEDBACK_LEN + extra
            })
        );
    }
}

#[test]
fn wrong_version_is_rejected_before_anything_else() {
    for version in (0..=u8::MAX).filter(|&v| v != VERSION) {
        let err = Some(WireError::UnknownVersion(version));
        let mut data = GOLDEN_DATA;
        data[0] = version;
        let mut feedback = GOLDEN_FEEDBACK;
        feedback[0] = version;
        assert_eq!(DataHeader::parse(&data).err(), err);
        assert_eq!(FeedbackHeader::parse(&feedback).err(), err);
        assert_eq!(PacketKind::peek(&data).err(), err);
        assert_eq!(Packet::parse(&feedback).err(), err);
        // Even a single foreign byte is reported as foreign, not as truncated.
        assert_eq!(DataHeader::parse(&[version]).err(), err);
        assert_eq!(FeedbackHeader::parse(&[version]).err(), err);
    }
}

#[test]
fn wrong_type_is_rejected() {
    for kind in (0..=u8::MAX).filter(|&t| t != 1 && t != 2) {
        let err = Some(WireError::UnknownType(kind));
        let mut data = GOLDEN_DATA;
        data[1] = kind;
        let mut feedback = GOLDEN_FEEDBACK;
        feedback[1] = kind;
        assert_eq!(DataHeader::parse(&data).err(), err);
        assert_eq!(FeedbackHeader::parse(&feedback).err(), err);
        assert_eq!(PacketKind::peek(&[VERSION, kind]).err(), err);
        assert_eq!(Packet::parse(&data).err(), err);
    }
    assert_eq!(
        FeedbackHeader::parse(&GOLDEN_DATA),
        Err(WireError::WrongType {
            expected: PacketKind::Feedback,
            found: PacketKind::Data
        })
    );
    assert_eq!(
        DataHeader::parse(&GOLDEN_FEEDBACK),
        Err(WireError::WrongType {
            expected: PacketKind::Data,
            found: PacketKind::Feedback
        })
    );
}

/// The golden feedback packet with the f64 at byte `at` replaced by the bits `bits`.
fn feedback_with_bits(at: usize, bits: u64) -> [u8; FEEDBACK_LEN] {
    let mut buf = GOLDEN_FEEDBACK;
    buf[at..at + 8].copy_from_slice(&bits.to_be_bytes());
    buf
}

#[test]
fn invalid_x_recv_is_rejected() {
    let cases: [(u64, &str); 8] = [
        (f64::NAN.to_bits(), "NaN"),
        (0x7ff0_0000_0000_0001, "NaN"), // signalling NaN
        (0xfff8_0000_0000_0000, "NaN"), // negative NaN
        (f64::INFINITY.to_bits(), "infinite"),
        (f64::NEG_INFINITY.to_bits(), "infinite"),
        ((-1.0f64).to_bits(), "negative"),
        (0x8000_0000_0000_0001, "negative"), // the negative subnormal closest to 0
        (f64::MIN.to_bits(), "negative"),
    ];
    for (bits, reason) in cases {
        let packet = feedback_with_bits(26, bits);
        let err = Some(WireError::InvalidField {
            field: "x_recv",
            reason,
        });
        assert_eq!(
            FeedbackHeader::parse(&packet).err(),
            err,
            "bits {bits:#018x}"
        );
        assert_eq!(FeedbackPacket::new_checked(&packet).err(), err);
        // emit refuses the same value, so it can never write what parse rejects.
        let header = FeedbackHeader {
            x_recv_bytes_per_s: f64::from_bits(bits),
            ..golden_feedback()
        };
        assert_eq!(
            header.emit(SESSION, &mut [0; FEEDBACK_LEN]),
            Err(WireError::Unencodable {
                field: "x_recv",
                reason
            })
        );
    }
}

#[test]
fn invalid_p_is_rejected() {
    let cases: [(u64, &str); 8] = [
        (f64::NAN.to_bits(), "NaN"),
        (0xfff8_0000_0000_0000, "NaN"),
        (f64::INFINITY.to_bits(), "infinite"),
        (f64::NEG_INFINITY.to_bits(), "infinite"),
        ((-0.25f64).to_bits(), "negative"),
        (0x3ff0_0000_0000_0001, "greater than 1"), // the next float after 1.0
        (2.0f64.to_bits(), "greater than 1"),
        (f64::MAX.to_bits(), "greater than 1"),
    ];
    for (bits, reason) in cases {
        let packet = feedback_with_bits(34, bits);
        let err = Some(WireError::InvalidField { field: "p", reason });
        assert_eq!(
            FeedbackHeader::parse(&packet).err(),
            err,
            "bits {bits:#018x}"
        );
        assert_eq!(FeedbackPacket::new_checked(&packet).err(), err);
        let header = FeedbackHeader {
            p: f64::from_bits(bits),
            ..golden_feedback()
        };
        assert_eq!(
            header.emit(SESSION, &mut [0; FEEDBACK_LEN]),
            Err(WireError::Unencodable { field: "p", reason })
        );
    }
}

#[test]
fn x_recv_is_checked_before_p() {
    let mut packet = feedback_with_bits(26, f64::NAN.to_bits());
    packet[34..].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
    assert_eq!(
        FeedbackHeader::parse(&packet),
        Err(WireError::InvalidField {
            field: "x_recv",
            reason: "NaN"
        })
    );
}

#[test]
fn emit_errors_are_the_callers() {
    let long_rtt = DataHeader {
        rtt: Duration::from_nanos(u64::MAX) + Duration::from_nanos(1),
        ..golden_data()
    };
    let unencodable = Err(WireError::Unencodable {
        field: "rtt",
        reason: "longer than u64::MAX nanoseconds",
    });
    assert_eq!(long_rtt.emit(SESSION, &mut [0; 64]), unencodable);
    assert_eq!(
        long_rtt.emit_with_payload(SESSION, b"hi", &mut [0; 64]),
        unencodable
    );
    let long_delay = FeedbackHeader {
        t_delay: Duration::MAX,
        ..golden_feedback()
    };
    assert_eq!(
        long_delay.emit(SESSION, &mut [0; 64]),
        Err(WireError::Unencodable {
            field: "t_delay",
            reason: "longer than u64::MAX nanoseconds",
        })
    );
    assert_eq!(
        golden_data().emit_with_payload(SESSION, b"hi", &mut [0; 35]),
        Err(WireError::BufferTooSmall {
            needed: 36,
            available: 35
        })
    );
    assert_eq!(
        golden_feedback().emit(SESSION, &mut []),
        Err(WireError::BufferTooSmall {
            needed: 42,
            available: 0
        })
    );
    let packet = Packet::Data {
        session: SESSION,
        header: golden_data(),
        payload: b"hi",
    };
    let mut buf = [0u8; 36];
    assert_eq!(packet.buffer_len(), 36);
    assert_eq!(packet.emit(&mut buf), Ok(36));
    assert_eq!(buf, GOLDEN_DATA);
}

#[test]
fn stats_count_a_mixed_stream() {
    let nan_p = feedback_with_bits(34, f64::NAN.to_bits());
    let inputs: [&[u8]; 8] = [
        &GOLDEN_DATA,
        &GOLDEN_FEEDBACK,
        &GOLDEN_DATA[..10],
        &[0x45, 0x00, 0x00, 0x1c], // an IPv4 header
        &[VERSION, 0x7f],
        &nan_p,
        &[&GOLDEN_FEEDBACK[..], &[0]].concat(),
        &[],
    ];
    let mut stats = WireStats::default();
    for input in inputs {
        stats.record(&Packet::parse(input));
    }
    assert_eq!(
        stats,
        WireStats {
            accepted: 2,
            truncated: 2,
            bad_version: 1,
            bad_type: 1,
            bad_field: 1,
            bad_length: 1,
            other: 0,
        }
    );
    assert_eq!(stats.rejected(), 6);
}

#[test]
fn errors_display_and_are_std_errors() {
    let err: Box<dyn std::error::Error> = Box::new(WireError::InvalidField {
        field: "p",
        reason: "greater than 1",
    });
    assert_eq!(err.to_string(), "invalid p field: greater than 1");
}

// ---------------------------------------------------------------------------------------------
// Properties

/// Every finite, non-negative f64 (zero and subnormals included), by bit pattern.
fn valid_x_recv() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u64..=f64::MAX.to_bits()).prop_map(f64::from_bits),
        Just(-0.0),
        Just(0.0),
    ]
}

/// Every f64 in [0, 1], by bit pattern, with the ends weighted up.
fn valid_p() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u64..=1.0f64.to_bits()).prop_map(f64::from_bits),
        0.0..=1.0f64,
        Just(0.0),
        Just(1.0),
        Just(-0.0),
    ]
}

fn data_header() -> impl Strategy<Value = DataHeader> {
    (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(seq, nanos, rtt)| DataHeader {
        seq,
        timestamp: Time::from_nanos(nanos),
        rtt: Duration::from_nanos(rtt),
    })
}

fn feedback_header(
    x_recv: impl Strategy<Value = f64>,
    p: impl Strategy<Value = f64>,
) -> impl Strategy<Value = FeedbackHeader> {
    (any::<u64>(), any::<u64>(), x_recv, p).prop_map(|(echo, delay, x_recv, p)| FeedbackHeader {
        timestamp_echo: Time::from_nanos(echo),
        t_delay: Duration::from_nanos(delay),
        x_recv_bytes_per_s: x_recv,
        p,
    })
}

/// Arbitrary bytes, half of them behind a valid common header so the field checks are reached.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let bytes = proptest::collection::vec(any::<u8>(), 0..90);
    prop_oneof![
        bytes.clone(),
        (0u8..=3, bytes).prop_map(|(kind, rest)| [&[VERSION, kind][..], &rest].concat()),
    ]
}

proptest! {
    #[test]
    fn data_round_trip(
        header in data_header(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let bytes = emit_data(&header, &payload);
        prop_assert_eq!(DataHeader::parse(&bytes), Ok((header, &payload[..])));
        let view = DataPacket::new_checked(&bytes[..]).unwrap();
        prop_assert_eq!(DataHeader::from_packet(&view), header);
        prop_assert_eq!(view.payload(), &payload[..]);
        prop_assert_eq!(view.session(), SESSION);
        prop_assert_eq!(
            Packet::parse(&bytes),
            Ok(Packet::Data { session: SESSION, header, payload: &payload })
        );
    }

    #[test]
    fn feedback_round_trip(header in feedback_header(valid_x_recv(), valid_p())) {
        let bytes = emit_feedback(&header);
        let parsed = FeedbackHeader::parse(&bytes).unwrap();
        prop_assert_eq!(parsed, header);
        prop_assert_eq!(parsed.x_recv_bytes_per_s.to_bits(), header.x_recv_bytes_per_s.to_bits());
        prop_assert_eq!(parsed.p.to_bits(), header.p.to_bits());
        prop_assert_eq!(Packet::parse(&bytes), Ok(Packet::Feedback { session: SESSION, header }));
    }

    /// For any float bits, emit succeeds exactly when parse would accept the result, and the two
    /// agree on the reason otherwise.
    #[test]
    fn emit_and_parse_agree_on_float_domains(
        header in feedback_header(any::<u64>().prop_map(f64::from_bits), any::<u64>().prop_map(f64::from_bits)),
    ) {
        let mut emitted = [0u8; FEEDBACK_LEN];
        let mut raw = GOLDEN_FEEDBACK;
        raw[26..34].copy_from_slice(&header.x_recv_bytes_per_s.to_bits().to_be_bytes());
        raw[34..42].copy_from_slice(&header.p.to_bits().to_be_bytes());
        match (header.emit(SESSION, &mut emitted), FeedbackHeader::parse(&raw)) {
            (Ok(len), Ok(parsed)) => {
                prop_assert_eq!(len, FEEDBACK_LEN);
                prop_assert_eq!(FeedbackHeader::parse(&emitted), Ok(header));
                prop_assert_eq!(parsed.p.to_bits(), header.p.to_bits());
            }
            (
                Err(WireError::Unencodable { field: f1, reason: r1 }),
                Err(WireError::InvalidField { field: f2, reason: r2 }),
            ) => {
                prop_assert_eq!(f1, f2);
                prop_assert_eq!(r1, r2);
            }
            (emit, parse) => prop_assert!(false, "emit {:?} but parse {:?}", emit, parse),
        }
    }

    #[test]
    fn parsing_never_panics_and_entry_points_agree(bytes in garbage()) {
        let data = DataHeader::parse(&bytes);
        let feedback = FeedbackHeader::parse(&bytes);
        prop_assert!(data.is_err() || feedback.is_err());
        prop_assert_eq!(DataPacket::new_checked(&bytes[..]).is_ok(), data.is_ok());
        prop_assert_eq!(FeedbackPacket::new_checked(&bytes[..]).is_ok(), feedback.is_ok());
        let any = Packet::parse(&bytes);
        let session = DataPacket::new_checked(&bytes[..]).map(|v| v.session())
            .or_else(|_| FeedbackPacket::new_checked(&bytes[..]).map(|v| v.session()))
            .unwrap_or(0);
        match PacketKind::peek(&bytes) {
            Ok(PacketKind::Data) => prop_assert_eq!(any, data.map(|(header, payload)| Packet::Data { session, header, payload })),
            Ok(PacketKind::Feedback) => prop_assert_eq!(any, feedback.map(|header| Packet::Feedback { session, header })),
            Err(err) => prop_assert_eq!(any, Err(err)),
        }
        if let Err(err) = any {
            prop_assert!(!err.to_string().is_empty());
        }
    }
}
