//! The few IP header fields the emulator reads: a packet's flow 5-tuple (for the per-flow log)
//! and its ECN field (RFC 3168 §5), which a RED queue with `ecn = true` sets to CE instead of
//! dropping. TUN devices opened with `IFF_NO_PI` hand over bare IP packets.

/// A flow's 5-tuple. IPv4 addresses as big-endian `u32`; for IPv6 the addresses are the low
/// 32 bits of each address (enough to tell the testbed's hosts apart) and ports are read when the
/// next header is TCP or UDP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// IP protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6); 0 for a packet that is not IP.
    pub proto: u8,
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Source port (TCP/UDP), else 0.
    pub sport: u16,
    /// Destination port (TCP/UDP), else 0.
    pub dport: u16,
}

const TCP: u8 = 6;
const UDP: u8 = 17;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The flow of `packet`; a truncated or non-IP packet gives the fields it has and zeros.
pub fn flow_key(packet: &[u8]) -> FlowKey {
    let Some(&first) = packet.first() else {
        return FlowKey::default();
    };
    let (proto, src, dst, l4) = match first >> 4 {
        4 if packet.len() >= 20 => {
            let ihl = usize::from(first & 0x0f) * 4;
            // Ports only in the first fragment (fragment offset 0).
            let first_fragment = be16(packet, 6) & 0x1fff == 0;
            let l4 = (first_fragment && ihl >= 20).then_some(ihl);
            (packet[9], be32(packet, 12), be32(packet, 16), l4)
        }
        6 if packet.len() >= 40 => (packet[6], be32(packet, 20), be32(packet, 36), Some(40)),
        _ => return FlowKey::default(),
    };
    let (sport, dport) = match l4 {
        Some(at) if (proto == TCP || proto == UDP) && packet.len() >= at + 4 => {
            (be16(packet, at), be16(packet, at + 2))
        }
        _ => (0, 0),
    };
    FlowKey {
        proto,
        src,
        dst,
        sport,
        dport,
    }
}

/// Whether the packet's ECN field says ECN-capable transport (ECT(0), ECT(1)) or CE.
pub fn ecn_capable(packet: &[u8]) -> bool {
    ecn_field(packet).is_some_and(|ecn| ecn != 0)
}

fn ecn_field(packet: &[u8]) -> Option<u8> {
    match packet.first()? >> 4 {
        4 if packet.len() >= 20 => Some(packet[1] & 0b11),
        6 if packet.len() >= 40 => Some((be16(packet, 0) >> 4) as u8 & 0b11),
        _ => None,
    }
}

/// Sets the ECN field to CE (0b11), as a marking router does (RFC 3168 §5), fixing the IPv4
/// header checksum. A packet that is not ECN-capable is left alone (such a packet is dropped,
/// not marked, by the queue).
pub fn mark_ce(packet: &mut [u8]) {
    match ecn_field(packet) {
        Some(1..=2) => {}
        _ => return,
    }
    if packet[0] >> 4 == 4 {
        packet[1] |= 0b11;
        let ihl = usize::from(packet[0] & 0x0f) * 4;
        if ihl >= 20 && packet.len() >= ihl {
            packet[10] = 0;
            packet[11] = 0;
            let sum = ipv4_checksum(&packet[..ihl]);
            packet[10..12].copy_from_slice(&sum.to_be_bytes());
        }
    } else {
        packet[1] |= 0b11 << 4;
    }
}

/// The Internet checksum (RFC 1071) of an IPv4 header whose checksum field is zero.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte IPv4 header + 4 bytes of ports, with a valid checksum.
    fn ipv4_udp(tos: u8) -> Vec<u8> {
        let mut p = vec![
            0x45, tos, 0, 28, 0, 1, 0x40, 0, 64, UDP, 0, 0, 10, 200, 0, 1, 10, 200, 0, 2, 0x30,
            0x39, 0x00, 0x50, 0, 8, 0, 0,
        ];
        let sum = ipv4_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn ipv4_five_tuple() {
        let key = flow_key(&ipv4_udp(0));
        assert_eq!(
            key,
            FlowKey {
                proto: UDP,
                src: 0x0ac8_0001,
                dst: 0x0ac8_0002,
                sport: 12345,
                dport: 80,
            }
        );
    }

    #[test]
    fn garbage_gives_zeros_without_panicking() {
        assert_eq!(flow_key(&[]), FlowKey::default());
        assert_eq!(flow_key(&[0x45, 0, 0]), FlowKey::default());
        let mut short = ipv4_udp(0);
        short.truncate(21);
        assert_eq!(flow_key(&short).sport, 0);
        // IHL below 5 does not index before the header.
        let mut bad = ipv4_udp(0);
        bad[0] = 0x41;
        let _ = flow_key(&bad);
    }

    #[test]
    fn ce_marking_keeps_the_checksum_valid() {
        let mut p = ipv4_udp(0x02);
        assert!(ecn_capable(&p));
        mark_ce(&mut p);
        assert_eq!(p[1] & 0b11, 0b11);
        assert_eq!(
            ipv4_checksum(&p[..20]),
            0,
            "a header with its checksum sums to 0"
        );
        let mut not_ect = ipv4_udp(0);
        let before = not_ect.clone();
        mark_ce(&mut not_ect);
        assert_eq!(not_ect, before);
    }
}
