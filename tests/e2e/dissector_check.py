#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Helper of test_dissector.sh: checks tools/wireshark/homa.lua with tshark.

  dissector_check.py synthetic --tshark T --lua L --dir D [--corpus C]
      Writes D/synthetic.pcap: one frame per Homa packet type (UDP and raw
      IP protocol 146 over IPv4 and IPv6) with known field values, malformed
      packets, segmentation-offload batches (several Homa packets in one UDP
      datagram), a packet cut by the snap length, a UDP datagram on ports
      that are not Homa's, and the wire corpus files of C (if given); runs
      tshark with the dissector on it and checks every homa.* field of every
      frame, its Info column and its expert infos.

  dissector_check.py live --tshark T --lua L --pcap F
                          --serve KIND=PORT[,PORT...] ...
                          --expect KIND=SIZE:COUNT[,...] ...
                          [--require KIND=TYPE[,TYPE...] ...]
                          [--filter DISPLAY_FILTER]
      Decodes a capture of real libhoma echo traffic and checks the decoded
      packets against the protocol: packetisation, ids, grants, incoming,
      cutoffs, priorities, acks, and the number of requests of each size.
      A KIND is a transport and an IP version: udp4, udp6, ip4, ip6 (ip:
      raw IP protocol 146).  --serve names the Homa server ports of a kind
      (the UDP ones are decoded with the preference homa.udp_ports),
      --expect the requests its clients sent (a kind served but not
      expected must have no request), --require the packet types (DATA,
      GRANT, ...) the capture must hold for that kind.  Only the frames
      that DISPLAY_FILTER passes are checked.

Exit status 0 when every check passed, 1 otherwise (each failure printed).
The packets here are built from the wire format of the protocol description
(shared spec, sections 2-4), field by field.
"""
import argparse
import os
import random
import struct
import subprocess
import sys

# ---------------------------------------------------------------------------
# Wire format
# ---------------------------------------------------------------------------
DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, FREEZE, NEED_ACK, ACK = \
    range(0x10, 0x19)
TYPE_NAMES = {DATA: "DATA", GRANT: "GRANT", RESEND: "RESEND",
              RPC_UNKNOWN: "RPC_UNKNOWN", BUSY: "BUSY", CUTOFFS: "CUTOFFS",
              FREEZE: "FREEZE", NEED_ACK: "NEED_ACK", ACK: "ACK"}
HEADER_LEN = {DATA: 56, GRANT: 33, RESEND: 37, RPC_UNKNOWN: 28, BUSY: 28,
              CUTOFFS: 62, FREEZE: 28, NEED_ACK: 28, ACK: 80}
UNSCHED_BYTES = 40000          # protocol default, libhoma's default setting
PAYLOAD_PER_PACKET = 1424      # raw IPv4, MTU 1500: 1500 - 20 - 56
# DATA payload per packet of the live capture by kind (transport and IP
# version): over UDP the 8-byte UDP header also counts against the mtu
# setting, over IPv6 the IP header has 40 bytes, not 20.
LIVE_PAYLOAD = {"ip4": PAYLOAD_PER_PACKET, "udp4": PAYLOAD_PER_PACKET - 8,
                "ip6": PAYLOAD_PER_PACKET - 20,
                "udp6": PAYLOAD_PER_PACKET - 28}
KINDS = ("udp4", "ip4", "udp6", "ip6")
DEFAULT_CUTOFFS = [1000000] * 5 + [15000, 2800, 200]
CTRL_PRIORITY = 7
MAX_SCHED_PRIO = 3
NEW_PEER_PRIORITY = 6


def common(sport, dport, ptype, sender_id, sequence=0, doff=None,
           flags=6, window=0, checksum=0, urgent=0xB97D, unused=0):
    """The 28-byte common header."""
    if doff is None:
        doff = 0xE0 if ptype == DATA else 0x50
    return (struct.pack(">HHI", sport, dport, sequence)
            + unused.to_bytes(3, "big")
            + struct.pack(">BBBHHHQ", ptype, doff, flags, window, checksum,
                          urgent, sender_id))


def data_pkt(sport, dport, sender_id, msg_len, incoming, offset, payload,
             ack_id=0, ack_port=0, cutoff_version=0, retransmit=0,
             sequence=None, seg_offset=None):
    if sequence is None:
        sequence = offset
    if seg_offset is None:
        seg_offset = offset
    return (common(sport, dport, DATA, sender_id, sequence)
            + struct.pack(">IIQHHB3xI", msg_len, incoming, ack_id, ack_port,
                          cutoff_version, retransmit, seg_offset)
            + payload)


def grant_pkt(sport, dport, sender_id, offset, priority):
    return common(sport, dport, GRANT, sender_id) + struct.pack(
        ">IB", offset, priority)


def resend_pkt(sport, dport, sender_id, offset, length, priority):
    return common(sport, dport, RESEND, sender_id) + struct.pack(
        ">IIB", offset, length, priority)


def cutoffs_pkt(sport, dport, sender_id, cutoffs, version):
    return (common(sport, dport, CUTOFFS, sender_id)
            + struct.pack(">8IH", *cutoffs, version))


def ack_pkt(sport, dport, sender_id, acks, num_acks=None):
    if num_acks is None:
        num_acks = len(acks)
    body = struct.pack(">H", num_acks)
    for i in range(5):
        cid, port = acks[i] if i < len(acks) else (0, 0)
        body += struct.pack(">QH", cid, port)
    return common(sport, dport, ACK, sender_id) + body


def simple_pkt(sport, dport, ptype, sender_id):
    return common(sport, dport, ptype, sender_id)


# ---------------------------------------------------------------------------
# pcap writing: Ethernet, then IPv4 or IPv6, then UDP or Homa itself
# ---------------------------------------------------------------------------
def ip_checksum(header):
    total = 0
    for i in range(0, len(header), 2):
        total += (header[i] << 8) | header[i + 1]
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def ipv4(proto, payload, tos, src="127.0.0.1", dst="127.0.0.1"):
    s = bytes(int(x) for x in src.split("."))
    d = bytes(int(x) for x in dst.split("."))
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 1, 0x4000,
                      64, proto, 0, s, d)
    hdr = hdr[:10] + struct.pack(">H", ip_checksum(hdr)) + hdr[12:]
    return b"\x08\x00", hdr + payload


def ipv6(next_header, payload, tclass):
    first = (6 << 28) | (tclass << 20)
    addr = bytes(15) + b"\x01"     # ::1
    hdr = struct.pack(">IHBB16s16s", first, len(payload), next_header, 64,
                      addr, addr)
    return b"\x86\xdd", hdr + payload


def udp(sport, dport, payload):
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload


def write_pcap(path, frames):
    """frames: (ethertype, layer 3 bytes[, bytes kept in the capture])."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            frame = bytes(6) + bytes(5) + b"\x01" + fr[0] + fr[1]
            kept = fr[2] if len(fr) > 2 else len(frame)
            f.write(struct.pack("<IIII", 1700000000 + i, 0, kept,
                                len(frame)))
            f.write(frame[:kept])


# ---------------------------------------------------------------------------
# tshark
# ---------------------------------------------------------------------------
def tshark_output(args, pcap, options):
    """tshark's output on pcap with the dissector and these options; exits
    1 when tshark fails or complains (a Lua error, an unknown field)."""
    cmd = [args.tshark, "-n", "-r", pcap, "-X", "lua_script:" + args.lua]
    cmd += options
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    err = "\n".join(line for line in proc.stderr.splitlines()
                    if "Running as user" not in line)
    if proc.returncode != 0 or "Lua" in err or "rror" in err:
        print("FAIL: tshark failed (exit %d):\n  %s\n%s" %
              (proc.returncode, " ".join(cmd), err))
        sys.exit(1)
    return proc.stdout


def run_tshark(args, pcap, options, fields):
    """-T fields output: one dict per frame, every occurrence of a field
    joined with '|'."""
    options = options + ["-T", "fields", "-E", "header=n",
                         "-E", "separator=/t", "-E", "occurrence=a",
                         "-E", "aggregator=|", "-E", "quote=n"]
    for field in fields:
        options += ["-e", field]
    out = tshark_output(args, pcap, options)
    rows = []
    for line in out.splitlines():
        values = line.split("\t")
        values += [""] * (len(fields) - len(values))
        rows.append(dict(zip(fields, values)))
    return rows


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def eq(self, what, got, want):
        self.checks += 1
        if got != want:
            self.failures += 1
            print("FAIL: %s: got %r, want %r" % (what, got, want))
            return False
        return True

    def true(self, what, cond):
        self.checks += 1
        if not cond:
            self.failures += 1
            print("FAIL: %s" % what)
            return False
        return True


# ---------------------------------------------------------------------------
# Synthetic packets: every field of every type
# ---------------------------------------------------------------------------
# Every homa.* field; a frame's expectation lists the ones present, all
# others must be absent.
HOMA_FIELDS = [
    "homa.sport", "homa.dport", "homa.sequence", "homa.unused", "homa.type",
    "homa.doff", "homa.doff.hlen", "homa.flags", "homa.window",
    "homa.checksum", "homa.urgent", "homa.sender_id", "homa.rpc_id",
    "homa.from_client", "homa.priority", "homa.trailing",
    "homa.gso.index", "homa.gso.count", "homa.gso.size",
    "homa.data.message_length", "homa.data.incoming",
    "homa.data.ack.client_id", "homa.data.ack.server_port",
    "homa.data.cutoff_version", "homa.data.retransmit", "homa.data.pad",
    "homa.data.seg_offset", "homa.data.offset", "homa.data.payload_length",
    "homa.data.end", "homa.data.payload",
    "homa.grant.offset", "homa.grant.priority",
    "homa.resend.offset", "homa.resend.length", "homa.resend.priority",
    "homa.cutoffs.cutoff", "homa.cutoffs.version",
    "homa.ack.num_acks", "homa.ack.client_id", "homa.ack.server_port",
    "homa.ack.unused",
]

# Expert messages (the dissector's texts).
X_BAD_LENGTH = "DATA message length outside 1..1,000,000"
X_BEYOND = "DATA bytes outside the message"
X_BAD_PRIO = "Priority above 7"
X_CLAMPED = "num_acks above 5 (receivers read 5)"
X_DIFFER = "sequence and seg.offset disagree (seg.offset wins)"
X_TRAILING = "Bytes after the control header"
X_RETRANSMIT = "Retransmitted DATA (answer to a RESEND)"


C_PORT, S_PORT = 32769, 99         # the client and server Homa ports


def common_expect(sport, dport, ptype, sender_id, sequence=0, priority=None,
                  doff=None):
    if doff is None:
        doff = 0xE0 if ptype == DATA else 0x50
    e = {
        "homa.sport": str(sport), "homa.dport": str(dport),
        "homa.sequence": str(sequence), "homa.unused": "0x000000",
        "homa.type": "0x%02x" % ptype, "homa.doff": "0x%02x" % doff,
        "homa.doff.hlen": str(doff >> 4), "homa.flags": "0x06",
        "homa.window": "0", "homa.checksum": "0x0000",
        "homa.urgent": "0xb97d", "homa.sender_id": str(sender_id),
        "homa.rpc_id": str(sender_id ^ 1),
        "homa.from_client": "1" if sender_id % 2 == 0 else "0",
    }
    if priority is not None:
        e["homa.priority"] = str(priority)
    return e


def tos(priority):
    return priority << 5


def build_synthetic(corpus):
    """Returns (frames, expectations): expectations[i] is a dict with
    'fields' (homa.* values, or None for a frame that is not Homa),
    'experts' (expert messages expected), 'info' (a substring of the Info
    column), 'name'."""
    frames, expects = [], []
    C, S = C_PORT, S_PORT
    CID = 0x1122334455667788      # a client id (even)
    SID = CID ^ 1                 # the server's id of the same RPC

    def add(name, frame, fields, experts=(), info=None):
        frames.append(frame)
        expects.append({"name": name, "fields": fields,
                        "experts": None if experts is None else list(experts),
                        "info": info})

    # 1. DATA with every field set: a retransmitted packet at offset 1424 of
    # a 3000-byte request, carrying an ack and cutoff version 7.
    payload = b"wxyz"
    pkt = data_pkt(C, S, CID, 3000, 2848, 1424, payload, ack_id=1234,
                   ack_port=99, cutoff_version=7, retransmit=1)
    e = common_expect(C, S, DATA, CID, sequence=1424, priority=5)
    e.update({"homa.data.message_length": "3000",
              "homa.data.incoming": "2848",
              "homa.data.ack.client_id": "1234",
              "homa.data.ack.server_port": "99",
              "homa.data.cutoff_version": "7", "homa.data.retransmit": "1",
              "homa.data.pad": "000000", "homa.data.seg_offset": "1424",
              "homa.data.offset": "1424", "homa.data.payload_length": "4",
              "homa.data.end": "1428", "homa.data.payload": payload.hex()})
    add("DATA (all fields)", ipv4(17, udp(C, S, pkt), tos(5)), e,
        [X_RETRANSMIT], "DATA %d \u2192 %d id %d offset 1424 len 4 of 3000 "
        "retransmit ack 1234:99" % (C, S, CID))

    # 2. DATA as the kernel sends it: seg.offset 0xFFFFFFFF, offset in
    # sequence only (the offset rule); the last 152 bytes of the message.
    payload = bytes(range(152))
    pkt = data_pkt(S, C, SID, 3000, 3000, 2848, payload, cutoff_version=1,
                   seg_offset=0xFFFFFFFF)
    e = common_expect(S, C, DATA, SID, sequence=2848, priority=0)
    e.update({"homa.data.message_length": "3000",
              "homa.data.incoming": "3000",
              "homa.data.ack.client_id": "0",
              "homa.data.ack.server_port": "0",
              "homa.data.cutoff_version": "1", "homa.data.retransmit": "0",
              "homa.data.pad": "000000",
              "homa.data.seg_offset": str(0xFFFFFFFF),
              "homa.data.offset": "2848", "homa.data.payload_length": "152",
              "homa.data.end": "3000", "homa.data.payload": payload.hex()})
    add("DATA (kernel offset rule)", ipv4(17, udp(S, C, pkt), tos(0)), e,
        [], "offset 2848 len 152 of 3000")

    # 3. GRANT
    pkt = grant_pkt(S, C, SID, 50000, 3)
    e = common_expect(S, C, GRANT, SID, priority=7)
    e.update({"homa.grant.offset": "50000", "homa.grant.priority": "3"})
    add("GRANT", ipv4(17, udp(S, C, pkt), tos(7)), e, [],
        "GRANT %d \u2192 %d id %d offset 50000 prio 3" % (S, C, SID))

    # 4. RESEND of everything sent so far
    pkt = resend_pkt(C, S, CID, 1424, 0xFFFFFFFF, 6)
    e = common_expect(C, S, RESEND, CID, priority=7)
    e.update({"homa.resend.offset": "1424",
              "homa.resend.length": str(0xFFFFFFFF),
              "homa.resend.priority": "6"})
    add("RESEND", ipv4(17, udp(C, S, pkt), tos(7)), e, [],
        "RESEND %d \u2192 %d id %d offset 1424 length all prio 6"
        % (C, S, CID))

    # 5-6. RPC_UNKNOWN, BUSY
    for ptype, sender in ((RPC_UNKNOWN, CID), (BUSY, SID)):
        sp, dp = (C, S) if sender % 2 == 0 else (S, C)
        e = common_expect(sp, dp, ptype, sender, priority=7)
        add(TYPE_NAMES[ptype],
            ipv4(17, udp(sp, dp, simple_pkt(sp, dp, ptype, sender)),
                 tos(7)), e, [],
            "%s %d \u2192 %d id %d" % (TYPE_NAMES[ptype], sp, dp, sender))

    # 7. CUTOFFS
    cuts = [1000000, 900000, 800000, 700000, 600000, 15000, 2800, 200]
    pkt = cutoffs_pkt(S, C, SID, cuts, 513)
    e = common_expect(S, C, CUTOFFS, SID, priority=7)
    e.update({"homa.cutoffs.cutoff": "|".join(str(c) for c in cuts),
              "homa.cutoffs.version": "513"})
    add("CUTOFFS", ipv4(17, udp(S, C, pkt), tos(7)), e, [],
        "CUTOFFS %d \u2192 %d id %d version 513 [%s]"
        % (S, C, SID, ",".join(str(c) for c in cuts)))

    # 8-9. FREEZE, NEED_ACK
    for ptype, sender in ((FREEZE, CID), (NEED_ACK, SID)):
        sp, dp = (C, S) if sender % 2 == 0 else (S, C)
        e = common_expect(sp, dp, ptype, sender, priority=7)
        add(TYPE_NAMES[ptype],
            ipv4(17, udp(sp, dp, simple_pkt(sp, dp, ptype, sender)),
                 tos(7)), e, [],
            "%s %d \u2192 %d id %d" % (TYPE_NAMES[ptype], sp, dp, sender))

    # 10. ACK with two entries (three unused)
    acks = [(1234, 99), (0xFFFFFFFFFFFFFFFE, 32767)]
    pkt = ack_pkt(C, S, CID, acks)
    e = common_expect(C, S, ACK, CID, priority=7)
    e.update({"homa.ack.num_acks": "2",
              "homa.ack.client_id": "1234|%d" % 0xFFFFFFFFFFFFFFFE,
              "homa.ack.server_port": "99|32767",
              "homa.ack.unused": "00" * 30})
    add("ACK", ipv4(17, udp(C, S, pkt), tos(7)), e, [],
        "ACK %d \u2192 %d id %d acks 2 [1234:99,%d:32767]"
        % (C, S, CID, 0xFFFFFFFFFFFFFFFE))

    # 11. ACK with all five entries and num_acks 9 (clamped to 5)
    acks = [(2 * i + 100, 1000 + i) for i in range(5)]
    pkt = ack_pkt(C, S, CID, acks, num_acks=9)
    e = common_expect(C, S, ACK, CID, priority=7)
    e.update({"homa.ack.num_acks": "9",
              "homa.ack.client_id": "|".join(str(a[0]) for a in acks),
              "homa.ack.server_port": "|".join(str(a[1]) for a in acks)})
    add("ACK (num_acks clamped)", ipv4(17, udp(C, S, pkt), tos(7)), e,
        [X_CLAMPED], "acks 9 [100:1000,")

    # 12. Raw IPv4, protocol 146: a DATA of a 1-byte message, priority 7,
    # with seg.offset and sequence that disagree (seg.offset wins).
    pkt = data_pkt(40000, 7, 42, 1, 1, 0, b"!", sequence=5, seg_offset=0)
    e = common_expect(40000, 7, DATA, 42, sequence=5, priority=7)
    e.update({"homa.data.message_length": "1", "homa.data.incoming": "1",
              "homa.data.ack.client_id": "0",
              "homa.data.ack.server_port": "0",
              "homa.data.cutoff_version": "0", "homa.data.retransmit": "0",
              "homa.data.pad": "000000", "homa.data.seg_offset": "0",
              "homa.data.offset": "0", "homa.data.payload_length": "1",
              "homa.data.end": "1", "homa.data.payload": "21"})
    add("IPv4 protocol 146 DATA", ipv4(146, pkt, tos(7)), e, [X_DIFFER],
        "DATA 40000 \u2192 7 id 42 offset 0 len 1 of 1")

    # 13. Raw IPv6, next header 146: a GRANT, traffic class priority 7.
    pkt = grant_pkt(7, 40000, 43, 1000000, 2)
    e = common_expect(7, 40000, GRANT, 43, priority=7)
    e.update({"homa.grant.offset": "1000000", "homa.grant.priority": "2"})
    add("IPv6 protocol 146 GRANT", ipv6(146, pkt, tos(7)), e, [],
        "GRANT 7 \u2192 40000 id 43 offset 1000000 prio 2")

    # 13a. Every type as raw IP protocol 146, over IPv4 and over IPv6, each
    # with its own field values (client port 40001, server port 8).
    for fam, wrap in ((4, ipv4), (6, ipv6)):
        cp, sp = 40001, 8
        cid = 0x0A0B0C0D0E0F1000 + 2 * fam     # even: a client's id
        sid = cid ^ 1
        where = "IPv%d protocol 146" % fam
        payload = bytes(range(7 * fam))
        pkt = data_pkt(cp, sp, cid, 5000, 4000 + fam, 1424, payload,
                       ack_id=100 + fam, ack_port=9, cutoff_version=2)
        e = common_expect(cp, sp, DATA, cid, sequence=1424, priority=4)
        e.update({"homa.data.message_length": "5000",
                  "homa.data.incoming": str(4000 + fam),
                  "homa.data.ack.client_id": str(100 + fam),
                  "homa.data.ack.server_port": "9",
                  "homa.data.cutoff_version": "2",
                  "homa.data.retransmit": "0", "homa.data.pad": "000000",
                  "homa.data.seg_offset": "1424",
                  "homa.data.offset": "1424",
                  "homa.data.payload_length": str(len(payload)),
                  "homa.data.end": str(1424 + len(payload)),
                  "homa.data.payload": payload.hex()})
        add(where + " DATA", wrap(146, pkt, tos(4)), e, [],
            "DATA %d \u2192 %d id %d offset 1424 len %d of 5000 ack %d:9"
            % (cp, sp, cid, len(payload), 100 + fam))
        pkt = grant_pkt(sp, cp, sid, 60000 + fam, 1)
        e = common_expect(sp, cp, GRANT, sid, priority=7)
        e.update({"homa.grant.offset": str(60000 + fam),
                  "homa.grant.priority": "1"})
        add(where + " GRANT", wrap(146, pkt, tos(7)), e, [],
            "GRANT %d \u2192 %d id %d offset %d prio 1"
            % (sp, cp, sid, 60000 + fam))
        pkt = resend_pkt(sp, cp, sid, 2848, 1424 * fam, 5)
        e = common_expect(sp, cp, RESEND, sid, priority=7)
        e.update({"homa.resend.offset": "2848",
                  "homa.resend.length": str(1424 * fam),
                  "homa.resend.priority": "5"})
        add(where + " RESEND", wrap(146, pkt, tos(7)), e, [],
            "RESEND %d \u2192 %d id %d offset 2848 length %d prio 5"
            % (sp, cp, sid, 1424 * fam))
        for ptype, sender in ((RPC_UNKNOWN, sid), (BUSY, sid),
                              (FREEZE, cid), (NEED_ACK, sid)):
            a, b = (cp, sp) if sender % 2 == 0 else (sp, cp)
            add("%s %s" % (where, TYPE_NAMES[ptype]),
                wrap(146, simple_pkt(a, b, ptype, sender), tos(7)),
                common_expect(a, b, ptype, sender, priority=7), [],
                "%s %d \u2192 %d id %d" % (TYPE_NAMES[ptype], a, b,
                                            sender))
        cuts = [1000000, 500000, 250000, 120000, 60000, 30000, 1000 * fam,
                100]
        pkt = cutoffs_pkt(sp, cp, sid, cuts, 40 + fam)
        e = common_expect(sp, cp, CUTOFFS, sid, priority=7)
        e.update({"homa.cutoffs.cutoff": "|".join(str(c) for c in cuts),
                  "homa.cutoffs.version": str(40 + fam)})
        add(where + " CUTOFFS", wrap(146, pkt, tos(7)), e, [],
            "CUTOFFS %d \u2192 %d id %d version %d [%s]"
            % (sp, cp, sid, 40 + fam, ",".join(str(c) for c in cuts)))
        acks = [(cid - 2, 8), (cid - 4, 8), (cid - 6, 9)]
        pkt = ack_pkt(cp, sp, cid, acks)
        e = common_expect(cp, sp, ACK, cid, priority=7)
        e.update({"homa.ack.num_acks": "3",
                  "homa.ack.client_id": "|".join(str(a[0]) for a in acks),
                  "homa.ack.server_port": "8|8|9",
                  "homa.ack.unused": "00" * 20})
        add(where + " ACK", wrap(146, pkt, tos(7)), e, [],
            "ACK %d \u2192 %d id %d acks 3 [%d:8,%d:8,%d:9]"
            % ((cp, sp, cid) + tuple(a[0] for a in acks)))

    # 14. Malformed: 20 bytes, shorter than the common header.
    add("short (20 bytes)", ipv4(17, udp(C, S, bytes(20)), 0),
        {}, ["20 bytes: shorter than the 28-byte common header"],
        "short packet (20 bytes)")

    # 15. Malformed: unknown type 0x20; the common header still decodes.
    pkt = common(C, S, 0x20, CID)
    e = common_expect(C, S, 0x20, CID, priority=0, doff=0x50)
    add("bad type 0x20", ipv4(17, udp(C, S, pkt), 0), e,
        ["Unknown Homa packet type 0x20 (valid: 0x10..0x18)"],
        "type 0x20 %d \u2192 %d id %d [unknown type]" % (C, S, CID))

    # 16. Malformed: a GRANT cut to 30 bytes (its header has 33).
    pkt = grant_pkt(S, C, SID, 1, 1)[:30]
    e = common_expect(S, C, GRANT, SID, priority=0)
    add("truncated GRANT", ipv4(17, udp(S, C, pkt), 0), e,
        ["GRANT packet of 30 bytes: its header has 33"],
        "GRANT %d \u2192 %d id %d [short]" % (S, C, SID))

    # 17. Malformed: DATA running past its message (offset 1424 + 1424
    # bytes of a 2000-byte message), and a 0-byte message length.
    pkt = data_pkt(C, S, CID, 2000, 2000, 1424, bytes(1424))
    e = common_expect(C, S, DATA, CID, sequence=1424, priority=0)
    e.update({"homa.data.message_length": "2000",
              "homa.data.incoming": "2000",
              "homa.data.ack.client_id": "0",
              "homa.data.ack.server_port": "0",
              "homa.data.cutoff_version": "0", "homa.data.retransmit": "0",
              "homa.data.pad": "000000", "homa.data.seg_offset": "1424",
              "homa.data.offset": "1424", "homa.data.payload_length": "1424",
              "homa.data.end": "2848",
              "homa.data.payload": "00" * 1424})
    add("DATA beyond its message", ipv4(17, udp(C, S, pkt), 0), e,
        [X_BEYOND], "offset 1424 len 1424 of 2000")
    pkt = data_pkt(C, S, CID, 0, 0, 0, b"")
    e = common_expect(C, S, DATA, CID, priority=0)
    e.update({"homa.data.message_length": "0",
              "homa.data.incoming": "0",
              "homa.data.ack.client_id": "0",
              "homa.data.ack.server_port": "0",
              "homa.data.cutoff_version": "0", "homa.data.retransmit": "0",
              "homa.data.pad": "000000", "homa.data.seg_offset": "0",
              "homa.data.offset": "0", "homa.data.payload_length": "0",
              "homa.data.end": "0"})
    add("DATA of length 0", ipv4(17, udp(C, S, pkt), 0), e,
        [X_BAD_LENGTH, X_BEYOND], "offset 0 len 0 of 0")

    # 18. A GRANT with priority 9 and two bytes after its header.
    pkt = grant_pkt(S, C, SID, 60000, 9) + b"\xaa\xbb"
    e = common_expect(S, C, GRANT, SID, priority=0)
    e.update({"homa.grant.offset": "60000", "homa.grant.priority": "9",
              "homa.trailing": "aabb"})
    add("GRANT priority 9, trailing bytes", ipv4(17, udp(S, C, pkt), 0), e,
        [X_BAD_PRIO, X_TRAILING], "offset 60000 prio 9")

    # 19. Segmentation-offload batches, as a capture before segmentation
    # shows them: one UDP datagram holding several Homa packets, all of the
    # first one's size but the last.
    def merged(parts, seg):
        """The expectation of a datagram holding these packets."""
        e = {}
        for i, part in enumerate(parts):
            part = dict(part, **{"homa.gso.index": str(i),
                                 "homa.gso.count": str(len(parts)),
                                 "homa.gso.size": str(seg)})
            for k, v in part.items():
                e[k] = v if k not in e else e[k] + "|" + v
        return e

    def data_expect(sp, dp, sender, mlen, incoming, off, payload, prio):
        e = common_expect(sp, dp, DATA, sender, sequence=off, priority=prio)
        e.update({"homa.data.message_length": str(mlen),
                  "homa.data.incoming": str(incoming),
                  "homa.data.ack.client_id": "0",
                  "homa.data.ack.server_port": "0",
                  "homa.data.cutoff_version": "1",
                  "homa.data.retransmit": "0", "homa.data.pad": "000000",
                  "homa.data.seg_offset": str(off),
                  "homa.data.offset": str(off),
                  "homa.data.payload_length": str(len(payload)),
                  "homa.data.end": str(off + len(payload))})
        if payload:
            e["homa.data.payload"] = payload.hex()
        return e

    # 19a. Three DATA packets of one 300-byte message: 128 + 128 + 44 bytes
    # of payload (segment size 184).  The payload holds the ports' bytes
    # (0x8001 0x0063) at a wrong place, which must not fool the split.
    body = (bytes(range(60)) + b"\x80\x01\x00\x63" + bytes(236))
    chunks = [body[0:128], body[128:256], body[256:300]]
    pkts, parts = b"", []
    for i, chunk in enumerate(chunks):
        pkts += data_pkt(C, S, CID, 300, 300, 128 * i, chunk,
                         cutoff_version=1)
        parts.append(data_expect(C, S, CID, 300, 300, 128 * i, chunk, 4))
    add("GSO batch of 3 DATA", ipv4(17, udp(C, S, pkts), tos(4)),
        merged(parts, 184), [],
        "[3 Homa packets] DATA %d \u2192 %d id %d offset 0 len 128 of 300 | "
        "DATA %d \u2192 %d id %d offset 128 len 128 of 300 | DATA %d \u2192 "
        "%d id %d offset 256 len 44 of 300" % ((C, S, CID) * 3))

    # 19b. Two GRANTs and a BUSY (smaller, last), segment size 33.
    pkts = (grant_pkt(S, C, SID, 60000, 2) + grant_pkt(S, C, SID + 2, 70000, 1)
            + simple_pkt(S, C, BUSY, SID + 4))
    parts = []
    for sender, off, gp in ((SID, 60000, 2), (SID + 2, 70000, 1)):
        e = common_expect(S, C, GRANT, sender, priority=7)
        e.update({"homa.grant.offset": str(off),
                  "homa.grant.priority": str(gp)})
        parts.append(e)
    parts.append(common_expect(S, C, BUSY, SID + 4, priority=7))
    add("GSO batch of GRANT, GRANT, BUSY", ipv4(17, udp(S, C, pkts), tos(7)),
        merged(parts, 33), [],
        "[3 Homa packets] GRANT %d \u2192 %d id %d offset 60000 prio 2 | "
        "GRANT" % (S, C, SID))

    # 19c. A full-size DATA packet then a GRANT (smaller, last).
    payload = bytes(1424)
    pkts = (data_pkt(C, S, CID, 5000, 5000, 2848, payload, cutoff_version=1)
            + grant_pkt(C, S, CID + 2, 45000, 0))
    e = common_expect(C, S, GRANT, CID + 2, priority=6)
    e.update({"homa.grant.offset": "45000", "homa.grant.priority": "0"})
    add("GSO batch of DATA, GRANT", ipv4(17, udp(C, S, pkts), tos(6)),
        merged([data_expect(C, S, CID, 5000, 5000, 2848, payload, 6), e],
               1480), [], "[2 Homa packets] DATA")

    # 19d. Raw IP: a kernel TSO-style DATA, one header (offset in sequence
    # only) and 4000 bytes of payload: one packet, not a batch.
    payload = bytes(range(250)) * 16
    pkt = data_pkt(40000, 7, 44, 10000, 10000, 2000, payload,
                   cutoff_version=1, seg_offset=0xFFFFFFFF)
    e = data_expect(40000, 7, 44, 10000, 10000, 2000, payload, 3)
    e["homa.data.seg_offset"] = str(0xFFFFFFFF)
    add("protocol 146 DATA with 4000 bytes", ipv4(146, pkt, tos(3)), e, [],
        "DATA 40000 \u2192 7 id 44 offset 2000 len 4000 of 10000")

    # 19e. A DATA of which the capture kept only 100 bytes of Homa (snap
    # length): the payload length still comes from the packet's length.
    payload = bytes(1000)
    pkt = data_pkt(C, S, CID, 1000, 1000, 0, payload, cutoff_version=1)
    e = data_expect(C, S, CID, 1000, 1000, 0, payload, 4)
    e["homa.data.payload"] = bytes(44).hex()
    add("DATA cut by the snap length",
        ipv4(17, udp(C, S, pkt), tos(4)) + (14 + 20 + 8 + 100,), e, [],
        "DATA %d \u2192 %d id %d offset 0 len 1000 of 1000" % (C, S, CID))

    # 20. UDP on ports that are not Homa's: not decoded.
    pkt = grant_pkt(S, C, SID, 50000, 3)
    add("UDP on other ports", ipv4(17, udp(40001, 40002, pkt), 0), None)

    # 21... The wire corpus of the fuzzer (written independently of this
    # script): each decodes as the type its file name says, without errors.
    if corpus and os.path.isdir(corpus):
        names = {v.lower(): k for k, v in TYPE_NAMES.items()}
        for fname in sorted(os.listdir(corpus)):
            if not fname.endswith(".bin"):
                continue
            with open(os.path.join(corpus, fname), "rb") as f:
                pkt = f.read()
            stem = fname[:-4]
            ptype = names.get(stem, DATA if stem.startswith("data")
                              else None)
            if ptype is None or len(pkt) < 28:
                continue
            sp, dp = struct.unpack(">HH", pkt[:4])
            sender = struct.unpack(">Q", pkt[20:28])[0]
            add("corpus " + fname, ipv4(17, udp(sp, dp, pkt), 0),
                {"homa.type": "0x%02x" % ptype,
                 "homa.sender_id": str(sender),
                 "homa.sport": str(sp), "homa.dport": str(dp)},
                None, TYPE_NAMES[ptype])
    return frames, expects


def check_synthetic(args):
    ck = Checker()
    frames, expects = build_synthetic(args.corpus)
    pcap = os.path.join(args.dir, "synthetic.pcap")
    write_pcap(pcap, frames)
    # UDP ports 99 and 32769 (and others seen in the corpus) as Homa.
    ports = set()
    for e in expects:
        f = e["fields"]
        if f and "homa.sport" in f and e["name"].find("protocol 146") < 0:
            ports.update(int(v) for v in (f["homa.sport"] + "|"
                                          + f["homa.dport"]).split("|"))
    options = []
    for p in sorted(ports):
        options += ["-d", "udp.port==%d,homa" % p]
    fields = (["frame.number", "frame.protocols", "_ws.col.Protocol",
               "_ws.col.Info", "_ws.expert.message"] + HOMA_FIELDS)
    rows = run_tshark(args, pcap, options, fields)
    ck.eq("frames decoded", len(rows), len(frames))
    for row, e in zip(rows, expects):
        name = "frame %s (%s)" % (row["frame.number"], e["name"])
        protos = row["frame.protocols"].split(":")
        if e["fields"] is None:
            ck.true("%s: not decoded as Homa (%s)" % (name,
                    row["frame.protocols"]), "homa" not in protos)
            continue
        ck.true("%s: decoded as Homa (%s)" % (name, row["frame.protocols"]),
                protos[-1] == "homa")
        ck.eq("%s: Protocol column" % name, row["_ws.col.Protocol"], "Homa")
        if e["info"] is not None:
            ck.true("%s: Info %r contains %r" % (name, row["_ws.col.Info"],
                                                e["info"]),
                    e["info"] in row["_ws.col.Info"])
        if "protocol 146" in e["name"]:
            ck.true("%s: carried by IP, no UDP" % name, "udp" not in protos)
        corpus_frame = e["experts"] is None
        for field in HOMA_FIELDS:
            if corpus_frame and field not in e["fields"]:
                continue
            ck.eq("%s: %s" % (name, field), row[field],
                  e["fields"].get(field, ""))
        got = sorted(m for m in row["_ws.expert.message"].split("|") if m)
        if corpus_frame:
            # Golden packets may be retransmissions; nothing else.
            got = [m for m in got if m != X_RETRANSMIT]
        ck.eq("%s: expert infos" % name, got,
              [] if corpus_frame else sorted(e["experts"]))
    # A port not configured is not Homa; the preference decodes it.
    rows = run_tshark(args, pcap, ["-o", "homa.udp_ports:40001-40002"],
                      ["frame.protocols", "homa.grant.offset"])
    other = [i for i, e in enumerate(expects) if e["fields"] is None]
    for i in other:
        ck.true("preference homa.udp_ports: frame %d decoded as Homa (%s)"
                % (i + 1, rows[i]["frame.protocols"]),
                rows[i]["frame.protocols"].endswith(":homa"))
        ck.eq("preference homa.udp_ports: frame %d grant offset" % (i + 1),
              rows[i]["homa.grant.offset"], "50000")
    # Robustness: random bytes, half of them with a valid type and doff,
    # some as runs of equal-size packets; no frame may raise a Lua error.
    rng = random.Random(146)
    noise = []
    for i in range(600):
        parts = []
        size = rng.randrange(1, 200)
        ptype = rng.randrange(0x10, 0x19)
        if rng.random() < 0.3:
            size = HEADER_LEN[ptype] + (rng.randrange(0, 100)
                                        if ptype == DATA else 0)
        for k in range(rng.choice((1, 1, 1, 2, 3, 5))):
            b = bytearray(rng.getrandbits(8) for _ in range(size))
            if len(b) >= 13 and rng.random() < 0.5:
                b[0:4] = b"\x80\x01\x00\x63"
                b[8:11] = bytes(3)
                b[11] = ptype if k == 0 else rng.randrange(0x10, 0x19)
                b[12] = 0xE0 if b[11] == DATA else 0x50
            parts.append(bytes(b))
        noise.append(ipv4(17, udp(C_PORT, S_PORT, b"".join(parts)), 0))
    npcap = os.path.join(args.dir, "noise.pcap")
    write_pcap(npcap, noise)
    rows = run_tshark(args, npcap, ["-d", "udp.port==%d,homa" % S_PORT],
                      ["frame.number", "frame.protocols",
                       "_ws.expert.message"])
    ck.eq("random packets decoded", len(rows), len(noise))
    bad = [r["frame.number"] for r in rows
           if not r["frame.protocols"].endswith(":homa")
           or "Lua Error" in r["_ws.expert.message"]]
    ck.eq("random packets with a Lua error or not decoded as Homa", bad, [])

    # Every type was checked as raw IP protocol 146 over each IP version.
    for fam in (4, 6):
        where = "IPv%d protocol 146 " % fam
        got = {e["fields"]["homa.type"] for e in expects
               if e["name"].startswith(where) and e["fields"]}
        ck.eq("packet types checked as " + where.strip(), sorted(got),
              ["0x%02x" % t for t in sorted(TYPE_NAMES)])
    types = sorted({t for e in expects
                    if e["fields"] and "homa.type" in e["fields"]
                    for t in e["fields"]["homa.type"].split("|")})
    print("synthetic: %d frames (types %s) and %d random ones, %d checks, "
          "%d failed" % (len(frames), " ".join(types), len(noise),
                         ck.checks, ck.failures))
    return ck.failures == 0


# ---------------------------------------------------------------------------
# Live capture
# ---------------------------------------------------------------------------


# Fields of the live check, by the packets that have them: once per packet
# (common header), once per packet of a type, or several times per packet.
PER_PACKET = ["homa.sport", "homa.dport", "homa.sender_id", "homa.rpc_id",
              "homa.from_client", "homa.sequence", "homa.doff", "homa.flags",
              "homa.urgent", "homa.priority"]
PER_TYPE = {
    DATA: ["homa.data.message_length", "homa.data.incoming",
           "homa.data.offset", "homa.data.seg_offset",
           "homa.data.payload_length", "homa.data.retransmit",
           "homa.data.cutoff_version", "homa.data.ack.client_id",
           "homa.data.ack.server_port"],
    GRANT: ["homa.grant.offset", "homa.grant.priority"],
    RESEND: ["homa.resend.offset", "homa.resend.length",
             "homa.resend.priority"],
    CUTOFFS: ["homa.cutoffs.version"],
    ACK: ["homa.ack.num_acks"],
}
LIVE_FIELDS = (["frame.number", "frame.protocols", "udp.srcport",
                "udp.dstport", "_ws.expert.message", "homa.type",
                "homa.gso.index", "homa.gso.count", "homa.cutoffs.cutoff",
                "homa.ack.client_id", "homa.ack.server_port"]
               + PER_PACKET + [f for t in sorted(PER_TYPE)
                               for f in PER_TYPE[t]])


def homa_packets(args, pcap, options):
    """Every Homa packet of pcap, in order (a datagram holding a GSO batch
    gives several): dicts of the fields of that packet (several values of
    one field joined with '|'), plus frame.number, frame.protocols and the
    UDP ports of its frame.  A frame's expert messages go with its first
    packet.  tshark lists a frame's values of each field in tree order, so
    the k-th value of a DATA field is the k-th DATA packet's."""
    packets = []
    for row in run_tshark(args, pcap, options, LIVE_FIELDS):
        vals = {f: (row[f].split("|") if row[f] != "" else [])
                for f in LIVE_FIELDS}
        frame = {f: row[f] for f in ("frame.number", "frame.protocols",
                                     "udp.srcport", "udp.dstport")}
        types = [int(t, 16) for t in vals["homa.type"]]
        if not types:
            packets.append(dict(frame, **{"_ws.expert.message":
                                          row["_ws.expert.message"]}))
            continue
        taken = {f: 0 for f in LIVE_FIELDS}

        def take(field, n=1):
            got = vals[field][taken[field]:taken[field] + n]
            taken[field] += n
            if len(got) != n:
                raise ValueError("frame %s: %s has too few values"
                                 % (row["frame.number"], field))
            return "|".join(got)

        for i, t in enumerate(types):
            pkt = dict(frame)
            pkt["homa.type"] = "0x%02x" % t
            pkt["_ws.expert.message"] = row["_ws.expert.message"] \
                if i == 0 else ""
            if vals["homa.gso.index"]:
                pkt["homa.gso.index"] = take("homa.gso.index")
                pkt["homa.gso.count"] = take("homa.gso.count")
            for f in PER_PACKET:
                pkt[f] = take(f)
            for f in PER_TYPE.get(t, []):
                pkt[f] = take(f)
            if t == CUTOFFS:
                pkt["homa.cutoffs.cutoff"] = take("homa.cutoffs.cutoff", 8)
            if t == ACK:
                n = min(int(pkt["homa.ack.num_acks"]), 5)
                pkt["homa.ack.client_id"] = take("homa.ack.client_id", n)
                pkt["homa.ack.server_port"] = take("homa.ack.server_port",
                                                   n)
            packets.append(pkt)
        for f in LIVE_FIELDS:
            if f.startswith("homa.") and f != "homa.type" and \
                    taken[f] != len(vals[f]):
                raise ValueError("frame %s: %s has %d values, %d used"
                                 % (row["frame.number"], f, len(vals[f]),
                                    taken[f]))
    return packets


def unsched_priority(length, cutoffs):
    """The priority of unscheduled bytes of a message of this length under
    these cutoffs: the highest i whose cutoff admits it (entry 0:
    unlimited)."""
    for i in range(7, 0, -1):
        if length <= cutoffs[i]:
            return i
    return 0


def kind_lists(ck, what, items):
    """{kind: [values]} from KIND=V1,V2,... arguments."""
    out = {}
    for item in items or []:
        kind, _, vals = item.partition("=")
        if not ck.true("%s %r: a kind of %s" % (what, item, KINDS),
                       kind in KINDS):
            continue
        out.setdefault(kind, []).extend(v for v in vals.split(",") if v)
    return out


def check_live(args):
    ck = Checker()
    server_ports = {k: set() for k in KINDS}
    for kind, ports in kind_lists(ck, "--serve", args.serve).items():
        server_ports[kind].update(int(p) for p in ports)
    expect = {}
    for kind, items in kind_lists(ck, "--expect", args.expect).items():
        for item in items:
            size, count = item.split(":")
            expect[(kind, int(size))] = int(count)
    names = {v: k for k, v in TYPE_NAMES.items()}
    require = {}
    for kind, items in kind_lists(ck, "--require", args.require).items():
        for t in items:
            if ck.true("--require: %r is a packet type" % t, t in names):
                require.setdefault(kind, set()).add(t)
    udp_ports = sorted(server_ports["udp4"] | server_ports["udp6"])
    if ck.failures:
        return False
    options = ["-o", "homa.udp_ports:" + ",".join(str(p) for p in udp_ports)]
    if args.filter:
        options += ["-Y", args.filter]
    try:
        rows = homa_packets(args, args.pcap, options)
    except ValueError as e:
        print("FAIL: the fields of a frame do not split into its Homa "
              "packets: %s" % e)
        return False
    ck.true("the capture has packets", len(rows) > 0)

    def num(row, field):
        v = row.get(field, "")
        return int(v) if v != "" else None

    types = {}          # (kind, type name) -> packets
    # A port is (kind, Homa port), kind "udp4", "ip4", "udp6" or "ip6".
    msgs = {}           # (client port, client id, is_request) -> state
    grants = {}         # same key -> [(frame, offset, priority)]
    need_acks = {}      # (client port, client id) -> [frames]
    cutoffs_to = {}     # client-or-server port -> [frame]
    acks, piggy = [], []
    frames = set()
    gso_frames = 0
    for fno, row in enumerate(rows):
        # fno: the packet's place in the capture (several packets of a GSO
        # batch share a frame).
        frame = int(row["frame.number"])
        frames.add(frame)
        name = "frame %d" % frame
        for field in LIVE_FIELDS:
            row.setdefault(field, "")
        if row.get("homa.gso.count"):
            name += " (packet %s of %s in a GSO batch)" % (
                row["homa.gso.index"], row["homa.gso.count"])
            if row["homa.gso.index"] == "0":
                gso_frames += 1
        ptype = int(row["homa.type"], 16) if row["homa.type"] else None
        protos = row["frame.protocols"]
        tp = ("udp" if ":udp:" in protos else "ip") + \
            ("6" if ":ipv6:" in protos else "4")
        if tp.startswith("udp"):
            layered = protos.endswith(":udp:homa")
        else:
            layered = protos.endswith(":ip:homa" if tp == "ip4"
                                      else ":ipv6:homa")
        if not ck.true("%s: decoded as Homa (%s)" % (name, protos),
                       layered and ptype in TYPE_NAMES):
            continue
        servers = server_ports[tp]
        tname = TYPE_NAMES[ptype]
        types[(tp, tname)] = types.get((tp, tname), 0) + 1
        sport, dport = num(row, "homa.sport"), num(row, "homa.dport")
        sid = num(row, "homa.sender_id")
        if tp.startswith("udp"):
            ck.eq("%s: Homa ports = UDP ports" % name, (sport, dport),
                  (num(row, "udp.srcport"), num(row, "udp.dstport")))
        from_client = dport in servers and sport >= 32768
        ck.true("%s: one end is a %s server port %s, the other a client "
                "port (%d -> %d)" % (name, tp, sorted(servers), sport,
                                     dport),
                from_client or (sport in servers and dport >= 32768))
        ck.eq("%s: %s sender id %d parity" % (name, tname, sid),
              sid % 2, 0 if from_client else 1)
        ck.eq("%s: rpc_id" % name, num(row, "homa.rpc_id"), sid ^ 1)
        ck.eq("%s: from_client" % name, row["homa.from_client"],
              "1" if from_client else "0")
        ck.eq("%s: doff" % name, row["homa.doff"],
              "0xe0" if ptype == DATA else "0x50")
        ck.eq("%s: flags, urgent" % name,
              (row["homa.flags"], row["homa.urgent"]), ("0x06", "0xb97d"))
        messages = [m for m in row["_ws.expert.message"].split("|") if m]
        ck.true("%s: no expert info but retransmissions (%s)" % (name,
                messages), all(m == X_RETRANSMIT for m in messages))
        prio = num(row, "homa.priority")
        cport = (tp, sport if from_client else dport)
        sport_server = (tp, dport if from_client else sport)
        cid = sid if from_client else sid ^ 1
        if ptype != DATA:
            ck.eq("%s: %s sent at the control priority" % (name, tname),
                  prio, CTRL_PRIORITY)
            ck.eq("%s: %s sequence" % (name, tname),
                  num(row, "homa.sequence"), 0)
        if ptype == DATA:
            key = (cport, cid, from_client)
            off = num(row, "homa.data.offset")
            plen = num(row, "homa.data.payload_length")
            mlen = num(row, "homa.data.message_length")
            m = msgs.setdefault(key, {"len": mlen, "segs": {},
                                      "first": fno,
                                      "server": sport_server})
            ck.eq("%s: message length constant" % name, mlen, m["len"])
            ck.eq("%s: sequence = seg.offset = offset" % name,
                  (num(row, "homa.sequence"),
                   num(row, "homa.data.seg_offset")), (off, off))
            seg = LIVE_PAYLOAD[tp]
            ck.eq("%s: offset %d is a multiple of %d" % (name, off, seg),
                  off % seg, 0)
            ck.eq("%s: payload length at offset %d of %d" % (name, off,
                  mlen), plen, min(seg, mlen - off))
            retrans = num(row, "homa.data.retransmit")
            # incoming: the bytes the sender may send, that is the
            # unscheduled bytes or the offset of a GRANT received before.
            incoming = num(row, "homa.data.incoming")
            granted = {min(UNSCHED_BYTES, mlen)}
            granted.update(x[1] for x in grants.get(key, []))
            if not retrans:
                ck.true("%s: incoming %d is the unscheduled bytes or a "
                        "granted offset" % (name, incoming),
                        incoming in granted)
                ck.true("%s: packet at offset %d starts below incoming %d"
                        % (name, off, incoming), off < incoming)
            if off in m["segs"]:
                ck.true("%s: a repeated offset is a retransmission" % name,
                        retrans == 1)
            m["segs"][off] = plen
            if "complete" not in m and sum(m["segs"].values()) >= mlen:
                m["complete"] = fno     # every byte has been sent once
            version = num(row, "homa.data.cutoff_version")
            if off < UNSCHED_BYTES and not retrans:
                if version == 0:
                    want = NEW_PEER_PRIORITY
                else:
                    want = unsched_priority(mlen, m.get("cutoffs",
                                                        DEFAULT_CUTOFFS))
                ck.eq("%s: unscheduled DATA (length %d, cutoff version %d) "
                      "priority" % (name, mlen, version), prio, want)
            elif not retrans:
                g = grants.get(key, [])
                ck.true("%s: scheduled DATA at offset %d was granted before"
                        % (name, off), g and max(x[1] for x in g) > off)
                ck.true("%s: scheduled DATA priority %s is a granted one %s"
                        % (name, prio, sorted({x[2] for x in g})),
                        prio in {x[2] for x in g})
            if version == 0:
                m["v0"] = m.get("v0", 0) + 1
                m.setdefault("v0_frames", []).append(fno)
            else:
                ck.eq("%s: cutoff version" % name, version, 1)
            ackid = num(row, "homa.data.ack.client_id")
            if ackid:
                piggy.append((fno, cport, ackid,
                              num(row, "homa.data.ack.server_port")))
        elif ptype == GRANT:
            # The granter is the receiver of the message.
            key = (cport, cid, not from_client)
            off = num(row, "homa.grant.offset")
            gp = num(row, "homa.grant.priority")
            ck.true("%s: GRANT for a message being received" % name,
                    key in msgs)
            ck.true("%s: GRANT priority %d <= %d" % (name, gp,
                    MAX_SCHED_PRIO), gp <= MAX_SCHED_PRIO)
            g = grants.setdefault(key, [])
            if g:
                ck.true("%s: GRANT offset %d above the previous %d" % (
                        name, off, g[-1][1]), off > g[-1][1])
            else:
                ck.true("%s: first GRANT offset %d above the unscheduled "
                        "bytes" % (name, off), off > UNSCHED_BYTES)
            if key in msgs:
                ck.true("%s: GRANT offset %d within the message (%d)" % (
                        name, off, msgs[key]["len"]),
                        off <= msgs[key]["len"])
            g.append((fno, off, gp))
        elif ptype == CUTOFFS:
            cut = [int(x) for x in row["homa.cutoffs.cutoff"].split("|")]
            ck.eq("%s: CUTOFFS values" % name, cut, DEFAULT_CUTOFFS)
            ck.eq("%s: CUTOFFS version" % name,
                  num(row, "homa.cutoffs.version"), 1)
            cutoffs_to.setdefault((tp, dport), []).append(fno)
        elif ptype == NEED_ACK:
            ck.true("%s: NEED_ACK from the server" % name, not from_client)
            need_acks.setdefault((cport, cid), []).append(fno)
        elif ptype == ACK:
            ck.true("%s: ACK from the client" % name, from_client)
            n = num(row, "homa.ack.num_acks")
            ck.true("%s: num_acks %d <= 5" % (name, n), 0 <= n <= 5)
            ids = [int(x) for x in row["homa.ack.client_id"].split("|")
                   if x]
            ports = [int(x) for x in row["homa.ack.server_port"].split("|")
                     if x]
            ck.eq("%s: ack entries" % name, (len(ids), len(ports)), (n, n))
            acks.append((fno, cport, cid, list(zip(ids, ports))))
        elif ptype == RESEND:
            ck.true("%s: RESEND priority <= 7" % name,
                    num(row, "homa.resend.priority") <= 7)

    # Every message complete: distinct packets cover [0, length) exactly.
    done = {}           # (client port, client id) -> frame completing the response
    for key, m in sorted(msgs.items()):
        cport, cid, is_req = key
        what = "%s of RPC %d (client port %s/%d)" % (
            "request" if is_req else "response", cid, cport[0], cport[1])
        total = sum(m["segs"].values())
        ck.eq("%s: payload bytes add up to the message length" % what,
              total, m["len"])
        seg = LIVE_PAYLOAD[cport[0]]
        ck.eq("%s: packets at every %d-byte offset" % (what, seg),
              sorted(m["segs"]), list(range(0, m["len"], seg)))
        if m["len"] > UNSCHED_BYTES:
            g = grants.get(key, [])
            ck.true("%s: granted (%d GRANTs)" % (what, len(g)), g)
            if g:
                ck.eq("%s: last GRANT offset" % what, g[-1][1], m["len"])
            if m["len"] >= 4 * UNSCHED_BYTES:
                ck.true("%s: granted in several steps (%d GRANTs)"
                        % (what, len(g)), len(g) >= 2)
        else:
            ck.true("%s: no GRANT for %d bytes" % (what, m["len"]),
                    key not in grants)
        if is_req:
            resp = msgs.get((cport, cid, False))
            if ck.true("%s: answered (response id = request id ^ 1)" % what,
                       resp is not None):
                ck.eq("%s: echo length" % what, resp["len"], m["len"])
                done[(cport, cid)] = resp.get("complete", 1 << 62)
        else:
            ck.true("%s: answers a request" % what,
                    (cport, cid, True) in msgs)
        for f in m.get("v0_frames", [])[:1]:
            later = [x for x in cutoffs_to.get(cport if is_req
                                                 else m["server"], [])
                     if x > f]
            ck.true("%s: DATA without cutoffs (packet #%d) drew a CUTOFFS"
                    % (what, f), later)

    # Requests per size, as the clients sent them.
    sizes = {}
    for (cport, cid, is_req), m in msgs.items():
        if is_req:
            k = (cport[0], m["len"])
            sizes[k] = sizes.get(k, 0) + 1
    ck.eq("requests per message size", sizes, expect)

    for (cport, cid), seen in sorted(need_acks.items()):
        ck.true("NEED_ACK of RPC %d (client port %s): its response was "
                "complete before" % (cid, cport),
                (cport, cid) in done and done[(cport, cid)] < seen[0])
    for fno, cport, cid, entries in acks:
        ck.true("packet #%d: ACK names a completed RPC %d" % (fno, cid),
                (cport, cid) in done and done[(cport, cid)] < fno)
        ck.true("packet #%d: ACK answers a NEED_ACK or carries acks" % fno,
                any(f < fno for f in need_acks.get((cport, cid), []))
                or entries)
        for aid, aport in entries:
            ck.true("packet #%d: acked RPC %d:%d completed" % (fno, aid,
                    aport), (cport, aid) in done
                    and aport in server_ports[cport[0]])
    for fno, cport, aid, aport in piggy:
        ck.true("packet #%d: piggy-backed ack of RPC %d:%d, completed before"
                % (fno, aid, aport),
                aport in server_ports[cport[0]] and (cport, aid) in done
                and done[(cport, aid)] < fno)

    for kind in KINDS:
        for t in sorted(require.get(kind, ())):
            ck.true("the capture has %s packets over %s" % (t, kind),
                    types.get((kind, t), 0) > 0)
    print("live: %d Homa packets in %d frames (%d GSO batches), "
          "%d messages, %d checks, %d failed"
          % (len(rows), len(frames), gso_frames, len(msgs), ck.checks,
             ck.failures))
    for kind in KINDS:
        got = ", ".join("%s %d" % (t, n) for (k, t), n in sorted(
            types.items()) if k == kind)
        if got or kind in require:
            print("  %-4s (ports %s): %s" % (
                kind, ",".join(str(p) for p in sorted(server_ports[kind])),
                got or "no packet"))
    return ck.failures == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["synthetic", "live"])
    ap.add_argument("--tshark", default="tshark")
    ap.add_argument("--lua", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--corpus")
    ap.add_argument("--pcap")
    ap.add_argument("--serve", action="append")
    ap.add_argument("--expect", action="append")
    ap.add_argument("--require", action="append")
    ap.add_argument("--filter")
    args = ap.parse_args()
    ok = check_synthetic(args) if args.mode == "synthetic" \
        else check_live(args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
