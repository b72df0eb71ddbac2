-- Wireshark dissector for tfrclab's TFRC wire format (crates/tfrc/src/wire, docs/wire-format.md):
-- a data packet's header and a feedback packet, both big-endian, inside UDP.
--
--   every packet   0: version (2)   1: packet type (1 = data, 2 = feedback)   2: session u64
--   data          10: seq u64   18: timestamp u64 ns   26: rtt u64 ns   34: payload ...
--   feedback      10: timestamp_echo u64 ns   18: t_delay u64 ns
--                 26: X_recv f64 (bytes/s)   34: p f64   42: end
--
-- Registered on UDP ports 50000-53999, the ports tfrclab's simulated TFRC receivers use in
-- pcap captures (docs/traces.md). For another port: Decode As... > UDP port > TFRC, or edit
-- TFRC_PORTS below. Install: copy this file into Wireshark's personal plugins folder
-- (Help > About Wireshark > Folders > Personal Lua Plugins, e.g. ~/.local/lib/wireshark/plugins/)
-- or load it for one run: tshark -X lua_script:contrib/wireshark/tfrc.lua -r capture.pcap

local TFRC_PORTS = "50000-53999"
local VERSION = 2
local COMMON_LEN, DATA_HEADER_LEN, FEEDBACK_LEN = 2, 34, 42

local tfrc = Proto("tfrc", "TFRC (tfrclab wire format)")

local types = { [1] = "data", [2] = "feedback" }
local f = {
    version = ProtoField.uint8("tfrc.version", "Version", base.DEC),
    type = ProtoField.uint8("tfrc.type", "Packet type", base.DEC, types),
    session = ProtoField.uint64("tfrc.session", "Session", base.HEX),
    seq = ProtoField.uint64("tfrc.seq", "Sequence number", base.DEC),
    timestamp = ProtoField.uint64("tfrc.timestamp", "Timestamp (ns)", base.DEC),
    rtt = ProtoField.uint64("tfrc.rtt", "Sender's RTT estimate (ns)", base.DEC),
    payload = ProtoField.bytes("tfrc.payload", "Payload"),
    ts_echo = ProtoField.uint64("tfrc.ts_echo", "Timestamp echo (ns)", base.DEC),
    t_delay = ProtoField.uint64("tfrc.t_delay", "Receiver delay t_delay (ns)", base.DEC),
    x_recv = ProtoField.double("tfrc.x_recv", "Receive rate X_recv (bytes/s)"),
    p = ProtoField.double("tfrc.p", "Loss event rate p"),
    padding = ProtoField.bytes("tfrc.padding", "Padding (simulated packet size)"),
}
tfrc.fields = { f.version, f.type, f.session, f.seq, f.timestamp, f.rtt, f.payload, f.ts_echo,
    f.t_delay, f.x_recv, f.p, f.padding }

local malformed = ProtoExpert.new("tfrc.malformed", "Malformed TFRC packet",
    expert.group.MALFORMED, expert.severity.ERROR)
tfrc.experts = { malformed }

function tfrc.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    if len < COMMON_LEN then
        return 0
    end
    pinfo.cols.protocol = "TFRC"
    local subtree = tree:add(tfrc, tvb())
    subtree:add(f.version, tvb(0, 1))
    subtree:add(f.type, tvb(1, 1))
    local version, kind = tvb(0, 1):uint(), tvb(1, 1):uint()
    if version ~= VERSION then
        subtree:add_proto_expert_info(malformed, "unknown version " .. version)
        return len
    end
    if kind == 1 then
        if len < DATA_HEADER_LEN then
            subtree:add_proto_expert_info(malformed, "data header shorter than 34 bytes")
            return len
        end
        subtree:add(f.session, tvb(2, 8))
        subtree:add(f.seq, tvb(10, 8))
        subtree:add(f.timestamp, tvb(18, 8))
        subtree:add(f.rtt, tvb(26, 8))
        if len > DATA_HEADER_LEN then
            subtree:add(f.payload, tvb(DATA_HEADER_LEN))
        end
        local seq = tvb(10, 8):uint64()
        pinfo.cols.info = "TFRC data seq=" .. tostring(seq)
        subtree:append_text(", data, seq " .. tostring(seq))
    elseif kind == 2 then
        if len < FEEDBACK_LEN then
            subtree:add_proto_expert_info(malformed, "feedback shorter than 42 bytes")
            return len
        end
        subtree:add(f.session, tvb(2, 8))
        subtree:add(f.ts_echo, tvb(10, 8))
        subtree:add(f.t_delay, tvb(18, 8))
        subtree:add(f.x_recv, tvb(26, 8))
        subtree:add(f.p, tvb(34, 8))
        if len > FEEDBACK_LEN then
            subtree:add(f.padding, tvb(FEEDBACK_LEN))
        end
        local x_recv, p = tvb(26, 8):float(), tvb(34, 8):float()
        pinfo.cols.info = string.format("TFRC feedback X_recv=%.0f B/s p=%.6g", x_recv, p)
        subtree:append_text(string.format(", feedback, X_recv %.0f B/s, p %.6g", x_recv, p))
    else
        subtree:add_proto_expert_info(malformed, "unknown packet type " .. kind)
    end
    return len
end

DissectorTable.get("udp.port"):add(TFRC_PORTS, tfrc)
