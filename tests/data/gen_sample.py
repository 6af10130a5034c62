#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Deterministic mixed traffic for the lab replay and the integration tests.

Run as a script it (re)writes tests/data/sample.pcap (commit the result):

    /usr/bin/python3 tests/data/gen_sample.py [--seed N] [--count N] [-o FILE]

Imported (tests/integration do), it offers:

- build_mixed(seed, count): a list of Pkt(data, malformed, flow, kind).
  Every well-formed packet carries b'IDX%08d' % (its index in the list) at
  the start of its L4 payload (or IP payload for non-first fragments, the
  ARP frames carry it in their trailer), and every packet's bytes are
  unique, so output packets can be matched to input packets by bytes or by
  marker. 'flow' names a group of packets that the appliance hashes alike
  (same 5-tuple; same addresses and protocol for fragments; same MACs for
  non-IP), within which forwarding must keep the order.
- build_bulk(count, flows): fast plain IPv4/UDP traffic (no scapy).
- write_pcap(path, frames) / read_pcap(path): minimal pcap I/O with fixed
  timestamps, so generated files are byte-for-byte reproducible.

Traffic mix (see FLOWS): IPv4/IPv6 TCP/UDP/ICMP over a few dozen flows,
802.1Q VLAN and 802.1ad QinQ tagged frames, IPv4 options, IPv6 extension
headers (hop-by-hop, destination options, routing, fragment), IPv4 and
IPv6 fragments, ARP (non-IP, forwarded unchanged), TCP to the default
config's VIP 192.0.2.10:80, UDP to port 53 from 10.0.0.0/8, and a handful
of malformed frames (runt, bad IHL, truncated TCP, lengths beyond the
frame, bad TCP data offset, bad UDP length, version mismatch, truncated
VLAN tag, truncated IPv6 extension chain).
"""

import argparse
import collections
import os
import random
import struct
import sys

MARK_FMT = b"IDX%08d"
MARK_LEN = 11
SAMPLE_SEED = 20241129
SAMPLE_COUNT = 400

Pkt = collections.namedtuple("Pkt", "data malformed flow kind")


def marker(i):
    return MARK_FMT % i


def find_marker(data):
    """Index carried by a frame, or None."""
    pos = data.find(b"IDX")
    while pos >= 0:
        digits = data[pos + 3:pos + MARK_LEN]
        if len(digits) == 8 and digits.isdigit():
            return int(digits)
        pos = data.find(b"IDX", pos + 1)
    return None


# --------------------------------------------------------------------------
# pcap I/O (no scapy: fast, and reproducible timestamps)

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1


def write_pcap(path, frames, snaplen=65535, t0=1700000000):
    """Write frames (bytes) with timestamps t0 + i ms."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", PCAP_MAGIC_US, 2, 4, 0, 0, snaplen,
                            LINKTYPE_ETHERNET))
        for i, fr in enumerate(frames):
            fr = bytes(fr)
            ts = t0 * 1000 + i
            f.write(struct.pack("<IIII", ts // 1000, (ts % 1000) * 1000,
                                len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """Return the list of frames (bytes) of a pcap file (us or ns, either
    byte order). Raises ValueError on a malformed file; a record cut short
    at the end of the file also raises (nothing may be lost silently)."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 24:
        raise ValueError("%s: %d bytes, no pcap header" % (path, len(buf)))
    for endian in "<>":
        magic = struct.unpack(endian + "I", buf[:4])[0]
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            break
    else:
        raise ValueError("%s: not a pcap file (magic %r)" % (path, buf[:4]))
    linktype = struct.unpack(endian + "I", buf[20:24])[0]
    if linktype & 0xFFFF != LINKTYPE_ETHERNET:
        raise ValueError("%s: link type %d, not Ethernet" % (path, linktype))
    frames = []
    off = 24
    while off < len(buf):
        if off + 16 > len(buf):
            raise ValueError("%s: truncated record header at %d" % (path, off))
        _, _, incl, orig = struct.unpack(endian + "IIII", buf[off:off + 16])
        off += 16
        if off + incl > len(buf):
            raise ValueError("%s: truncated record at %d" % (path, off))
        if incl != orig:
            raise ValueError("%s: record %d captured %d of %d bytes"
                             % (path, len(frames), incl, orig))
        frames.append(buf[off:off + incl])
        off += incl
    return frames


# --------------------------------------------------------------------------
# fast bulk traffic (plain Ethernet/IPv4/UDP, built with struct)

def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def build_bulk(count, flows=64, payload_len=32, seed=7):
    """count IPv4/UDP frames spread over `flows` flows (round robin with a
    seeded shuffle). Returns a list of Pkt; payload starts with the marker."""
    rng = random.Random(seed)
    keys = []
    for f in range(flows):
        src = bytes([10, 20, (f >> 8) & 0xFF, f & 0xFF])
        dst = bytes([203, 0, 113, 1 + f % 200])
        keys.append((src, dst, 1024 + f, 2000 + (f * 7) % 1000))
    order = [i % flows for i in range(count)]
    rng.shuffle(order)
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    out = []
    for i, f in enumerate(order):
        src, dst, sport, dport = keys[f]
        payload = marker(i) + bytes((i + k) & 0xFF for k in
                                    range(max(0, payload_len - MARK_LEN)))
        udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        tot = 20 + len(udp)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, tot, i & 0xFFFF, 0, 64,
                         17, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
        frame = eth + ip + udp
        if len(frame) < 60:
            frame += b"\0" * (60 - len(frame))
        out.append(Pkt(frame, False, "bulk%d" % f, "udp4"))
    return out


# --------------------------------------------------------------------------
# mixed traffic (scapy)

def _scapy():
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy import all as s
    return s


def _mac(n):
    return "02:00:00:%02x:%02x:%02x" % ((n >> 16) & 0xFF, (n >> 8) & 0xFF,
                                         n & 0xFF)


APPLIANCE_MAC = "02:00:00:00:00:fe"


class _Flow:
    """One flow; next(i, rng) returns the bytes of its next packet, which
    carries index i."""

    def __init__(self, name, kind, build, weight=1.0):
        self.name = name
        self.kind = kind
        self.build = build
        self.weight = weight
        self.state = {}


def _filler(rng, lo, hi):
    n = rng.randint(lo, hi)
    # bytes that never spell a marker ('I' excluded)
    return bytes(rng.choice(b"abcdefghjklmnopqrstuvwxyz0123456789-")
                 for _ in range(n))


def _pad(frame):
    frame = bytes(frame)
    if len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def _flows(s):
    """The flow catalogue. Each builder takes (i, rng, state) and returns a
    scapy packet or bytes."""
    flows = []
    n = [0]

    def eth(vlans=()):
        n[0] += 1
        e = s.Ether(src=_mac(0x100 + n[0]), dst=APPLIANCE_MAC)
        if len(vlans) == 2:
            return (e / s.Dot1AD(vlan=vlans[0]) / s.Dot1Q(vlan=vlans[1]))
        if len(vlans) == 1:
            return e / s.Dot1Q(vlan=vlans[0], prio=vlans[0] % 8)
        return e

    def add(name, kind, build, weight=1.0):
        flows.append(_Flow(name, kind, build, weight))

    def tcp4(name, src, dst, sport, dport, vlans=(), ip_opts=None,
             weight=1.0):
        l2 = eth(vlans)

        def b(i, rng, st):
            seq = st.get("seq", 1000)
            data = marker(i) + _filler(rng, 0, 80)
            st["seq"] = seq + len(data)
            ip = s.IP(src=src, dst=dst, id=i & 0xFFFF, ttl=64)
            if ip_opts is not None:
                ip.options = ip_opts
            flags = "S" if seq == 1000 else "PA"
            opts = [("MSS", 1460), ("NOP", None), ("WScale", 7)] \
                if flags == "S" else [("NOP", None), ("NOP", None),
                                      ("Timestamp", (i, 0))]
            return l2 / ip / s.TCP(sport=sport, dport=dport, seq=seq,
                                   ack=0 if flags == "S" else 1,
                                   flags=flags, window=8192,
                                   options=opts) / s.Raw(data)
        add(name, "tcp4", b, weight)

    def udp4(name, src, dst, sport, dport, vlans=(), weight=1.0):
        l2 = eth(vlans)

        def b(i, rng, st):
            return l2 / s.IP(src=src, dst=dst, id=i & 0xFFFF) / \
                s.UDP(sport=sport, dport=dport) / \
                s.Raw(marker(i) + _filler(rng, 0, 100))
        add(name, "udp4", b, weight)

    def icmp4(name, src, dst, ident):
        l2 = eth()

        def b(i, rng, st):
            st["seq"] = st.get("seq", 0) + 1
            return l2 / s.IP(src=src, dst=dst, id=i & 0xFFFF) / \
                s.ICMP(type=8, id=ident, seq=st["seq"]) / \
                s.Raw(marker(i) + _filler(rng, 0, 40))
        add(name, "icmp4", b, 0.6)

    def tcp6(name, src, dst, sport, dport, vlans=(), ext=(), weight=1.0):
        l2 = eth(vlans)

        def b(i, rng, st):
            p = s.IPv6(src=src, dst=dst, hlim=64)
            for e in ext:
                p = p / e()
            return l2 / p / s.TCP(sport=sport, dport=dport, flags="PA",
                                  seq=i, ack=1) / \
                s.Raw(marker(i) + _filler(rng, 0, 80))
        add(name, "tcp6" + ("ext" if ext else ""), b, weight)

    def udp6(name, src, dst, sport, dport, ext=(), weight=1.0):
        l2 = eth()

        def b(i, rng, st):
            p = s.IPv6(src=src, dst=dst)
            for e in ext:
                p = p / e()
            return l2 / p / s.UDP(sport=sport, dport=dport) / \
                s.Raw(marker(i) + _filler(rng, 0, 80))
        add(name, "udp6" + ("ext" if ext else ""), b, weight)

    def icmp6(name, src, dst, ident):
        l2 = eth()

        def b(i, rng, st):
            st["seq"] = st.get("seq", 0) + 1
            return l2 / s.IPv6(src=src, dst=dst) / \
                s.ICMPv6EchoRequest(id=ident, seq=st["seq"],
                                    data=marker(i) + _filler(rng, 0, 40))
        add(name, "icmp6", b, 0.6)

    def frag4(name, src, dst, sport, dport):
        """UDP datagrams in 2-3 fragments; every fragment starts its data
        with the marker of its own index (the first one after the UDP
        header). Emitted one fragment per call, in order."""
        l2 = eth()

        def b(i, rng, st):
            if not st.get("left"):
                st["ipid"] = st.get("ipid", 0x4000) + 1
                nfr = rng.randint(2, 3)
                sizes = [48] * (nfr - 1) + [rng.choice([16, 24, 32, 40])]
                st["left"] = sizes
                st["off"] = 0
                st["udplen"] = sum(sizes)
            size = st["left"].pop(0)
            off = st["off"]
            st["off"] += size
            more = bool(st["left"])
            ip = s.IP(src=src, dst=dst, id=st["ipid"], proto=17,
                      flags="MF" if more else 0, frag=off // 8)
            if off == 0:
                data = marker(i) + _filler(rng, size - 8 - MARK_LEN,
                                           size - 8 - MARK_LEN)
                udp = s.UDP(sport=sport, dport=dport, len=st["udplen"],
                            chksum=0)
                return l2 / ip / udp / s.Raw(data)
            data = marker(i) + _filler(rng, size - MARK_LEN, size - MARK_LEN)
            return l2 / ip / s.Raw(data)
        add(name, "frag4", b, 1.5)

    def frag6(name, src, dst, sport, dport):
        l2 = eth()

        def b(i, rng, st):
            if not st.get("left"):
                st["fid"] = st.get("fid", 0x10000) + 1
                sizes = [48, rng.choice([16, 24, 32])]
                st["left"] = sizes
                st["off"] = 0
                st["udplen"] = sum(sizes)
            size = st["left"].pop(0)
            off = st["off"]
            st["off"] += size
            more = 1 if st["left"] else 0
            fh = s.IPv6ExtHdrFragment(nh=17, offset=off // 8, m=more,
                                      id=st["fid"])
            p = l2 / s.IPv6(src=src, dst=dst) / fh
            if off == 0:
                data = marker(i) + _filler(rng, size - 8 - MARK_LEN,
                                           size - 8 - MARK_LEN)
                return p / s.UDP(sport=sport, dport=dport, len=st["udplen"],
                                 chksum=0x1234) / s.Raw(data)
            return p / s.Raw(marker(i) + _filler(rng, size - MARK_LEN,
                                                 size - MARK_LEN))
        add(name, "frag6", b, 1.0)

    def arp(name, op, smac, dmac, psrc, pdst):
        def b(i, rng, st):
            # the marker rides in the Ethernet trailer (padding)
            return s.Ether(src=smac, dst=dmac) / \
                s.ARP(op=op, hwsrc=smac, psrc=psrc,
                      hwdst="00:00:00:00:00:00" if op == 1 else dmac,
                      pdst=pdst) / s.Raw(marker(i) + b"\0" * 7)
        add(name, "arp", b, 0.5)

    # -- the catalogue -----------------------------------------------------
    # web clients to the VIP of docs/examples/default.json
    for k in range(4):
        tcp4("vip-web%d" % k, "198.51.100.%d" % (10 + k), "192.0.2.10",
             40000 + k * 17, 80, weight=1.5)
    # other IPv4 TCP
    tcp4("tcp4-a", "203.0.113.5", "198.51.100.80", 51000, 443)
    tcp4("tcp4-b", "198.51.100.7", "203.0.113.9", 22, 60022)
    tcp4("tcp4-opts", "198.51.100.33", "203.0.113.44", 33333, 8080,
         ip_opts=[s.IPOption_Router_Alert()])
    tcp4("tcp4-vip-otherport", "198.51.100.50", "192.0.2.10", 50505, 443)
    # DNS from 10.0.0.0/8 (dropped by rule 10 of default.json, later)
    udp4("dns10-a", "10.1.2.3", "198.51.100.53", 53001, 53)
    udp4("dns10-b", "10.200.0.9", "198.51.100.53", 53002, 53)
    udp4("dns10-vlan", "10.9.9.9", "198.51.100.54", 53003, 53,
         vlans=(100,))
    # DNS from elsewhere (permitted)
    udp4("dns-other", "172.16.5.5", "198.51.100.53", 53004, 53)
    udp4("udp4-a", "198.51.100.60", "203.0.113.60", 5000, 6000)
    udp4("udp4-b", "203.0.113.61", "198.51.100.61", 123, 123)
    icmp4("icmp4-a", "198.51.100.70", "203.0.113.70", 0x77)
    icmp4("icmp4-b", "203.0.113.71", "192.0.2.10", 0x78)
    # VLAN and QinQ
    udp4("udp4-vlan", "198.51.100.90", "203.0.113.90", 7000, 7001,
         vlans=(42,))
    tcp4("tcp4-vlan", "198.51.100.91", "203.0.113.91", 41000, 80,
         vlans=(43,))
    tcp4("tcp4-qinq", "198.51.100.92", "203.0.113.92", 42000, 8443,
         vlans=(300, 42))
    udp4("udp4-qinq", "198.51.100.93", "203.0.113.93", 9000, 9001,
         vlans=(301, 7))
    tcp6("tcp6-vlan", "2001:db8:1::91", "2001:db8:2::91", 43000, 80,
         vlans=(44,))
    # IPv6
    tcp6("web6-a", "2001:db8:10::1", "2001:db8:ffff::80", 50000, 80)
    tcp6("web6-b", "2001:db8:10::2", "2001:db8:ffff::80", 50001, 88)
    tcp6("tcp6-other", "2001:db8:20::5", "2001:db8:30::5", 60000, 22)
    udp6("udp6-a", "2001:db8:40::1", "2001:db8:50::1", 5353, 5353)
    udp6("udp6-dns", "fd00::53", "2001:db8:53::53", 40053, 53)
    icmp6("icmp6-a", "2001:db8:60::1", "2001:db8:60::2", 0x66)
    icmp6("icmp6-b", "2001:db8:61::1", "2001:db8:61::2", 0x67)
    # IPv6 extension headers
    tcp6("tcp6-hbh", "2001:db8:70::1", "2001:db8:71::1", 44000, 80,
         ext=(lambda: s.IPv6ExtHdrHopByHop(options=[s.RouterAlert()]),))
    udp6("udp6-dst-rt", "2001:db8:72::1", "2001:db8:73::1", 45000, 4789,
         ext=(lambda: s.IPv6ExtHdrDestOpt(options=[s.PadN(optdata=b"\0\0")]),
              lambda: s.IPv6ExtHdrRouting(addresses=["2001:db8:74::1"],
                                          segleft=0)))
    tcp6("tcp6-dst-hbh", "2001:db8:75::1", "2001:db8:76::1", 46000, 8080,
         ext=(lambda: s.IPv6ExtHdrHopByHop(),
              lambda: s.IPv6ExtHdrDestOpt()))
    # fragments
    frag4("frag4-a", "198.51.100.100", "203.0.113.100", 10000, 20000)
    frag4("frag4-b", "10.5.5.5", "198.51.100.53", 10001, 53)
    frag6("frag6-a", "2001:db8:80::1", "2001:db8:81::1", 11000, 21000)
    # non-IP
    arp("arp-req", 1, _mac(0x900), "ff:ff:ff:ff:ff:ff",
        "198.51.100.1", "198.51.100.2")
    arp("arp-rep", 2, _mac(0x901), _mac(0x900),
        "198.51.100.2", "198.51.100.1")
    return flows


def _malformed(s, i, rng, which):
    """Malformed frame number `which` (carrying index i where it has
    room). Returns (bytes, kind)."""
    e = s.Ether(src=_mac(0xBAD), dst=APPLIANCE_MAC)
    m = marker(i)
    _ip = s.IP

    def ip4(src, dst):                  # unique per index
        return _ip(src=src, dst=dst, id=i & 0xFFFF)
    if which == 0:                      # runt: shorter than Ethernet
        return bytes.fromhex("0200000000fe") + struct.pack("!I", i), \
            "runt"
    if which == 1:                      # IPv4 IHL 3 (< 5)
        b = bytearray(bytes(e / ip4("198.51.100.1", "203.0.113.1")
                            / s.UDP(sport=1, dport=2) / s.Raw(m)))
        b[14] = 0x43
        return _pad(b), "bad_ihl"
    if which == 2:                      # TCP header cut short
        full = bytes(e / ip4("198.51.100.2", "203.0.113.2") /
                     s.TCP(sport=3, dport=80))
        cut = bytearray(full[:14 + 20 + 10])     # 10 of 20 TCP bytes
        struct.pack_into("!H", cut, 16, 30)      # IP total length 30
        struct.pack_into("!H", cut, 24, 0)
        struct.pack_into("!H", cut, 24, csum16(bytes(cut[14:34])))
        return bytes(cut), "trunc_tcp"          # not padded: no doubt
    if which == 3:                      # IPv4 total length beyond frame
        b = bytearray(bytes(e / ip4("198.51.100.3", "203.0.113.3")
                            / s.UDP(sport=4, dport=5) / s.Raw(m + b"x" * 20)))
        struct.pack_into("!H", b, 16, 1400)
        return b, "ip_len"
    if which == 4:                      # TCP data offset 2 (< 5)
        b = bytearray(bytes(e / ip4("198.51.100.4", "203.0.113.4")
                            / s.TCP(sport=6, dport=80) / s.Raw(m)))
        b[14 + 20 + 12] = 0x20
        return b, "tcp_doff"
    if which == 5:                      # UDP length 4 (< 8)
        b = bytearray(bytes(e / ip4("198.51.100.5", "203.0.113.5")
                            / s.UDP(sport=7, dport=53) / s.Raw(m)))
        struct.pack_into("!H", b, 14 + 20 + 4, 4)
        return b, "udp_len"
    if which == 6:                      # ethertype IPv4, version 6
        b = bytearray(bytes(e / ip4("198.51.100.6", "203.0.113.6")
                            / s.UDP(sport=8, dport=9) / s.Raw(m)))
        b[14] = 0x65
        return b, "ip_version"
    if which == 7:                      # VLAN tag cut short
        return bytes(e / s.Dot1Q(vlan=5))[:16], "trunc_vlan"
    if which == 8:                      # IPv6 payload length beyond frame
        b = bytearray(bytes(e / s.IPv6(src="2001:db8::bad", dst="2001:db8::1")
                            / s.UDP(sport=10, dport=11) / s.Raw(m)))
        struct.pack_into("!H", b, 14 + 4, 900)
        return b, "ip6_len"
    if which == 9:                      # IPv6 hop-by-hop header cut short
        b = bytes(e / s.IPv6(src="2001:db8::bad:2", dst="2001:db8::1", nh=0,
                             plen=4)) + b"\x11\x05\x00\x00"
        return b, "ip6_ext"
    if which == 10:                     # IPv4 header cut short
        return bytes(e / ip4("198.51.100.7", "203.0.113.7"))[:14 + 12], \
            "trunc_ip"
    raise ValueError(which)


N_MALFORMED_KINDS = 11


def build_mixed(seed=SAMPLE_SEED, count=SAMPLE_COUNT, malformed=None):
    """Mixed traffic of `count` frames. `malformed` (default: all kinds
    once, plus runt and bad IHL once more) frames are malformed, spread
    over the list."""
    s = _scapy()
    rng = random.Random(seed)
    flows = _flows(s)
    if malformed is None:
        malformed = list(range(N_MALFORMED_KINDS)) + [0, 1, 2]
    slots = sorted(rng.sample(range(count), len(malformed)))
    mal_at = dict(zip(slots, malformed))
    weights = [f.weight for f in flows]
    out = []
    seen = set()
    for i in range(count):
        if i in mal_at:
            data, kind = _malformed(s, i, rng, mal_at[i])
            pkt = Pkt(bytes(data), True, "malformed", kind)
        else:
            f = rng.choices(flows, weights)[0]
            pkt = Pkt(_pad(f.build(i, rng, f.state)), False, f.name, f.kind)
        if pkt.data in seen:
            raise AssertionError("duplicate frame at %d" % i)
        seen.add(pkt.data)
        out.append(pkt)
    return out


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SAMPLE_SEED)
    ap.add_argument("--count", type=int, default=SAMPLE_COUNT)
    ap.add_argument("-o", "--output", default=os.path.join(here, "sample.pcap"))
    a = ap.parse_args(argv)
    pkts = build_mixed(a.seed, a.count)
    write_pcap(a.output, [p.data for p in pkts])
    kinds = collections.Counter(p.kind for p in pkts)
    print("%s: %d frames (%d malformed), %d bytes; %s" % (
        a.output, len(pkts), sum(p.malformed for p in pkts),
        os.path.getsize(a.output),
        ", ".join("%s=%d" % kv for kv in sorted(kinds.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
