#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile packets: a deterministic corpus of what the wire really carries,
for the lab replay (tests/integration/test_hostile_replay.py).

    /usr/bin/python3 tests/data/gen_hostile.py [--seed N] [-o FILE]
                     [--config FILE] [--pipeline rtc|pipeline]

writes the corpus as a pcap (default ./hostile.pcap), optionally a matching
configuration (an ACL and an LB section whose VIPs the corpus targets), and
prints the number of frames per category and how many of them the parser
model below calls malformed.

Imported, it offers:

- build(seed): a list of HPkt(data, cat, kind): every hostile category
  (cat) mixed, in a seeded order, with valid traffic to the LB services and
  flows the ACL drops or marks, so those paths run with hostile neighbours
  in the same bursts. Frames are unique (duplicates are left out).
- parse(frame): a model of lib/pkt's parser as pa_pkt_inline.h documents
  it (the checks in the order it makes them), including what the replay
  port does to long frames (net_pcap puts the first 2048 bytes in the
  first mbuf; the parser gathers at most PA_PKT_HDR_MAX = 512 bytes of a
  chain): (0, Meta) or (negative error, None).
- ACL, LB: the acl and lb configuration sections the corpus is built for.
- neigh_rx(frame, meta), neigh_answer(frame, port_mac): a model of
  lib/neigh: which well-formed frames the rx stage hands to the control
  side ("local") or calls malformed (pa_neigh_inline.h), and the exact
  answer the control side sends to each (pa_neigh_parse()'s checks, RFC
  826 / RFC 4861 7.2.4), or None.

Categories: trunc_raw (valid frames of every kind cut at every length from
0 to their full length, length fields untouched), trunc_len (the same cut
inside the IP datagram with the IP length fields rewritten to the cut, so
that the L4 / extension-header checks see the cut), ihl, ip_len (total /
payload length larger and smaller than the frame, 64 KiB claims),
ip_version, ip6_ext (long, looping, unknown, truncated chains, hop-by-hop
not first, jumbogram, AH, ESP, headers past the 512 bytes the parser
gathers from an mbuf chain), frag4 / frag6 (overlapping, tiny, first
without a full L4 header, offsets beyond 64 KiB, MF with offset 0 and no
payload, fragments to the VIPs), vlan (1, 2, 3, 10 tags, truncated tags,
any TPID order), tiny (0 and 1 byte frames, runts), checksum (bogus IP,
TCP, UDP, ICMP checksums), mcast (multicast/broadcast source MACs and
addresses), tcp_doff, udp_len, l4_other (SCTP, GRE, IP-in-IP, ...), arp (for the
VIPs and local_addr and not, truncated, odd types and sizes, spoofed and
multicast/broadcast/zero senders, replies never asked, conflicts), nd
(IPv6 neighbour discovery: truncated, wrong hop limit, bad checksums and
options, DAD right and wrong, multicast targets, conflicts), non_ip (other ethertypes,
802.3 length fields), big (chained mbufs: frames of 2 KiB to 16128 bytes,
the most net_pcap writes whole; a few malformed ones), fuzz (seeded
mutations of valid frames of every kind),
and the valid traffic: valid_lb (to the services, including frames the LB
drops: no_backend, mtu), valid_acl (flows an ACL rule drops, marks,
polices or permits), valid_other.

The zero-length frame: libpcap reads a record of length 0 and net_pcap
delivers it as an empty mbuf, which the daemon drops as malformed; it is
kept in the corpus. A 65535-byte frame (frame_64k()) is not: one such
frame makes the replay size its mbuf pool for 32-segment packets, which
pipeline mode cannot allocate within the replay's memory (the test has it
on its own).
"""

import argparse
import collections
import ipaddress
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import gen_sample  # noqa: E402

csum16 = gen_sample.csum16
write_pcap = gen_sample.write_pcap
read_pcap = gen_sample.read_pcap

SEED = 20250501

HPkt = collections.namedtuple("HPkt", "data cat kind")

# --------------------------------------------------------------------------
# The configuration the corpus targets

APPLIANCE_MAC = bytes.fromhex("0200000000fe")
LOCAL4 = "192.0.2.254"
LOCAL6 = "2001:db8::fe"
VIP4 = "192.0.2.10"            # tcp/80 ipip, tcp/443 dsr
VIP4_NAT = "192.0.2.20"        # udp/53 nat
VIP4_DEAD = "192.0.2.30"       # tcp/80 nat, its only backend down
VIP6_DSR = "2001:db8:100::10"  # tcp/443 dsr
VIP6_IPIP = "2001:db8:100::20"  # udp/4500 ipip (IPv6 in IPv6)
NAT_BACKENDS = ("10.2.0.1", "10.2.0.2")
NAT_PORT = 5353

LB = {
    "local_addr": LOCAL4,
    "local_addr6": LOCAL6,
    "services": [
        {"name": "web-ipip", "vip": VIP4, "port": 80, "proto": "tcp",
         "forward": "ipip",
         "backends": [{"addr": "10.1.0.1", "weight": 1},
                      {"addr": "10.1.0.2", "weight": 2,
                       "mac": "02:00:00:be:01:02"}]},
        {"name": "web-dsr4", "vip": VIP4, "port": 443, "proto": "tcp",
         "forward": "dsr",
         "backends": [{"addr": "10.3.0.1", "mac": "02:00:00:be:03:01"},
                      {"addr": "10.3.0.2", "mac": "02:00:00:be:03:02"}]},
        {"name": "dns-nat", "vip": VIP4_NAT, "port": 53, "proto": "udp",
         "forward": "nat",
         "backends": [{"addr": NAT_BACKENDS[0], "port": NAT_PORT},
                      {"addr": NAT_BACKENDS[1], "port": NAT_PORT,
                       "mac": "02:00:00:be:02:02"}]},
        {"name": "dead-nat", "vip": VIP4_DEAD, "port": 80, "proto": "tcp",
         "forward": "nat",
         "backends": [{"addr": "10.4.0.1", "state": "down"}]},
        {"name": "web6-dsr", "vip": VIP6_DSR, "port": 443, "proto": "tcp",
         "forward": "dsr",
         "backends": [{"addr": "2001:db8:200::1",
                       "mac": "02:00:00:be:06:01"},
                      {"addr": "2001:db8:200::2",
                       "mac": "02:00:00:be:06:02"}]},
        {"name": "ike6-ipip", "vip": VIP6_IPIP, "port": 4500, "proto": "udp",
         "forward": "ipip",
         "backends": [{"addr": "2001:db8:300::1"},
                      {"addr": "2001:db8:300::2", "weight": 3}]},
    ],
}

POLICE_SRC = "198.51.100.200"
POLICE_BURST = 4
POLICE_RATE = 1

ACL = {
    "default": "permit",
    "rules": [
        # DNS from 10/8 dropped (to the NAT VIP too) ...
        {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
         "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
        # ... except from 10.9/16
        {"id": 11, "priority": 200, "src": "10.9.0.0/16", "dst": "any",
         "sport": "any", "dport": "53", "proto": "udp", "action": "permit"},
        {"id": 20, "priority": 90, "src": "2001:db8:bad::/48", "dst": "any",
         "sport": "any", "dport": "1000-2000", "proto": "tcp",
         "action": "drop"},
        {"id": 30, "priority": 80, "src": "any", "dst": "203.0.113.0/24",
         "sport": "any", "dport": "8000-8999", "proto": "tcp",
         "action": "mark", "dscp": 46},
        {"id": 31, "priority": 80, "src": "any", "dst": "2001:db8:cafe::/48",
         "sport": "any", "dport": "any", "proto": "udp", "action": "mark",
         "dscp": 10},
        {"id": 40, "priority": 70, "src": POLICE_SRC + "/32", "dst": "any",
         "sport": "any", "dport": "any", "proto": "udp", "action": "police",
         "rate_pps": POLICE_RATE, "burst": POLICE_BURST},
        # clients of the IPv6 DSR VIP from privileged ports; packets
        # without ports (non-first fragments) match it too
        {"id": 50, "priority": 60, "src": "any", "dst": VIP6_DSR + "/128",
         "sport": "1-1023", "dport": "any", "proto": "tcp", "action": "drop"},
        {"id": 60, "priority": 50, "src": "any", "dst": "any",
         "sport": "any", "dport": "any", "proto": 47, "action": "drop"},
        {"id": 70, "priority": 40, "src": "198.51.100.160/27", "dst": "any",
         "sport": "6000-6100", "dport": "any", "proto": "any",
         "action": "drop"},
    ],
}


def config(pipeline):
    """A configuration for the replay: the ACL and LB above."""
    return {"pipeline": pipeline, "acl": ACL, "lb": LB}


# --------------------------------------------------------------------------
# The parser model (pa_pkt_inline.h, "Checks, in the order they are made")

OK = 0
ERR_RUNT = -1
ERR_VLAN = -2
ERR_L3_TRUNC = -3
ERR_L3_VERSION = -4
ERR_L3_HDRLEN = -5
ERR_L3_LEN = -6
ERR_EXT = -7
ERR_L4_TRUNC = -8
ERR_L4_LEN = -9
ERR_SEGMENT = -10
ERR_NAMES = {OK: "ok", ERR_RUNT: "runt", ERR_VLAN: "vlan",
             ERR_L3_TRUNC: "l3_trunc", ERR_L3_VERSION: "l3_version",
             ERR_L3_HDRLEN: "l3_hdrlen", ERR_L3_LEN: "l3_len",
             ERR_EXT: "ext", ERR_L4_TRUNC: "l4_trunc",
             ERR_L4_LEN: "l4_len", ERR_SEGMENT: "segment"}

F_IPV4 = 1 << 0
F_IPV6 = 1 << 1
F_NON_IP = 1 << 2
F_VLAN = 1 << 3
F_QINQ = 1 << 4
F_FRAG = 1 << 5
F_FRAG_LATER = 1 << 6
F_L4 = 1 << 7
F_IPV6_EXT = 1 << 8

MAX_VLAN = 2
MAX_EXT_HDRS = 8
HDR_MAX = 512          # PA_PKT_HDR_MAX: what the parser gathers of a chain
FIRST_SEG = 2048       # net_pcap's first mbuf (RTE_MBUF_DEFAULT_DATAROOM)
TX_MAX = 16128         # net_pcap writes at most this much of a frame

VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
IP6_EXT = (0, 43, 44, 51, 60)

Meta = collections.namedtuple(
    "Meta", "flags l3_off l4_off l4_proto sport dport vlans family src dst "
    "ilen")


def _be16(b, o):
    return (b[o] << 8) | b[o + 1]


def _hdr_check(end, limit, seg, err):
    if end > limit:
        return err
    if end > seg:
        return ERR_SEGMENT
    return 0


def _parse_l4(d, seg, l4, ip_end, proto, v6, flags):
    pl = ip_end - l4
    if proto == 6:
        need = 20
    elif proto == 17:
        need = 8
    elif proto == 132:
        need = 12
    elif proto == 1 and not v6:
        need = 4
    elif proto == 58 and v6:
        need = 4
    else:
        return 0, flags, 0
    r = _hdr_check(l4 + need, ip_end, seg, ERR_L4_TRUNC)
    if r:
        return r, flags, 0
    if proto == 6:
        ln = (d[l4 + 12] >> 4) * 4
        if ln < 20 or ln > pl:
            return ERR_L4_LEN, flags, 0
    elif proto == 17:
        ln = _be16(d, l4 + 4)
        if ln < 8 or (ln > pl and not flags & F_FRAG):
            return ERR_L4_LEN, flags, 0
    ports = 0
    if proto in (6, 17, 132):
        ports = struct.unpack("!I", bytes(d[l4:l4 + 4]))[0]
    return 0, flags | F_L4, ports


def _parse_full(d, seg, n):
    seg = min(seg, n)
    if n < 14:
        return ERR_RUNT, None
    if seg < 14:
        return ERR_SEGMENT, None
    off = 14
    et = _be16(d, 12)
    vlans = 0
    flags = 0
    while et in VLAN_TPIDS:
        if vlans == MAX_VLAN:
            return ERR_VLAN, None
        r = _hdr_check(off + 4, n, seg, ERR_VLAN)
        if r:
            return r, None
        et = _be16(d, off + 2)
        off += 4
        vlans += 1
    if vlans:
        flags |= F_VLAN
    if vlans > 1:
        flags |= F_QINQ
    if et == 0x0800:
        r = _hdr_check(off + 20, n, seg, ERR_L3_TRUNC)
        if r:
            return r, None
        if d[off] >> 4 != 4:
            return ERR_L3_VERSION, None
        hlen = (d[off] & 15) * 4
        tot = _be16(d, off + 2)
        if hlen < 20 or hlen > tot or off + hlen > n:
            return ERR_L3_HDRLEN, None
        if off + tot > n:
            return ERR_L3_LEN, None
        if off + hlen > seg:
            return ERR_SEGMENT, None
        flags |= F_IPV4
        fo = _be16(d, off + 6)
        if fo & 0x3FFF:
            flags |= F_FRAG
        if fo & 0x1FFF:
            flags |= F_FRAG_LATER
        proto = d[off + 9]
        l4 = off + hlen
        ip_end = off + tot
        src, dst = bytes(d[off + 12:off + 16]), bytes(d[off + 16:off + 20])
        family = 4
        ilen = tot
    elif et == 0x86DD:
        r = _hdr_check(off + 40, n, seg, ERR_L3_TRUNC)
        if r:
            return r, None
        if d[off] >> 4 != 6:
            return ERR_L3_VERSION, None
        plen = _be16(d, off + 4)
        nh = d[off + 6]
        if plen == 0 and nh == 0:
            return ERR_L3_LEN, None
        l4 = off + 40
        ip_end = l4 + plen
        if ip_end > n:
            return ERR_L3_LEN, None
        flags |= F_IPV6
        n_ext = 0
        while nh in IP6_EXT:
            n_ext += 1
            if n_ext > MAX_EXT_HDRS:
                return ERR_EXT, None
            r = _hdr_check(l4 + 8, ip_end, seg, ERR_EXT)
            if r:
                return r, None
            if nh == 44:
                hl = 8
                fo = _be16(d, l4 + 2)
                if fo & 0xFFF9:
                    flags |= F_FRAG
                if fo & 0xFFF8:
                    flags |= F_FRAG_LATER
                    nh = d[l4]
                    l4 += hl
                    break
            elif nh == 51:
                hl = (d[l4 + 1] + 2) * 4
            else:
                hl = (d[l4 + 1] + 1) * 8
            r = _hdr_check(l4 + hl, ip_end, seg, ERR_EXT)
            if r:
                return r, None
            nh = d[l4]
            l4 += hl
        if n_ext:
            flags |= F_IPV6_EXT
        proto = nh
        src, dst = bytes(d[off + 8:off + 24]), bytes(d[off + 24:off + 40])
        family = 6
        ilen = 40 + plen
    else:
        return OK, Meta(flags | F_NON_IP, off, 0, 0, 0, 0, vlans, 0, None,
                        None, 0)
    ports = 0
    if not flags & F_FRAG_LATER:
        r, flags, ports = _parse_l4(d, seg, l4, ip_end, proto, family == 6,
                                    flags)
        if r:
            return r, None
    return OK, Meta(flags, off, l4, proto, ports >> 16, ports & 0xFFFF,
                    vlans, family, str(ipaddress.ip_address(src)),
                    str(ipaddress.ip_address(dst)), ilen)


def parse(frame):
    """(0, Meta) or (error, None) for a frame as the replay delivers it:
    frames longer than FIRST_SEG arrive as a chain whose first mbuf holds
    FIRST_SEG bytes; a header that crosses it makes the parser gather the
    first HDR_MAX bytes and parse again (headers still longer: ERR_EXT)."""
    n = len(frame)
    r, m = _parse_full(frame, min(n, FIRST_SEG), n)
    if r == ERR_SEGMENT:
        r, m = _parse_full(frame, min(n, HDR_MAX), n)
        if r == ERR_SEGMENT:
            r, m = ERR_EXT, None
    return r, m


# --------------------------------------------------------------------------
# Frame builders (struct: fast)

def ip4b(a):
    return ipaddress.IPv4Address(a).packed


def ip6b(a):
    return ipaddress.IPv6Address(a).packed


def mac(n):
    return struct.pack("!HI", 0x0200, n & 0xFFFFFFFF)


def eth(src, etype, tags=(), dst=APPLIANCE_MAC):
    """tags: (tpid, tci) pairs, outermost first."""
    b = dst + src
    for tpid, tci in tags:
        b += struct.pack("!HH", tpid, tci)
    return b + struct.pack("!H", etype)


def _pseudo(fam, src, dst, proto, length):
    if fam == 4:
        return src + dst + struct.pack("!BBH", 0, proto, length)
    return src + dst + struct.pack("!I3xB", length, proto)


def l4_csum(fam, src, dst, proto, seg, off):
    """seg with a correct checksum at off (src/dst packed)."""
    seg = bytearray(seg)
    seg[off:off + 2] = b"\0\0"
    c = csum16(_pseudo(fam, src, dst, proto, len(seg)) + bytes(seg))
    if proto == 17 and c == 0:
        c = 0xFFFF
    seg[off:off + 2] = struct.pack("!H", c)
    return bytes(seg)


def tcp(sport, dport, payload=b"", flags=0x18, seq=1000, ack=1, opts=b"",
        doff=None):
    hl = 20 + len(opts)
    if doff is None:
        doff = hl // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4,
                       flags, 8192, 0, 0) + opts + payload


def udp(sport, dport, payload=b"", length=None):
    if length is None:
        length = 8 + len(payload)
    return struct.pack("!HHHH", sport, dport, length & 0xFFFF, 0) + payload


def icmp4(typ=8, code=0, payload=b"", ident=1, seq=1):
    b = struct.pack("!BBHHH", typ, code, 0, ident, seq) + payload
    return b[:2] + struct.pack("!H", csum16(b)) + b[4:]


def fix_l4(fam, src, dst, proto, seg):
    """Correct TCP/UDP/ICMPv6 checksum for a whole (unfragmented) seg."""
    if proto == 6 and len(seg) >= 20:
        return l4_csum(fam, src, dst, proto, seg, 16)
    if proto == 17 and len(seg) >= 8:
        return l4_csum(fam, src, dst, proto, seg, 6)
    if proto == 58 and fam == 6 and len(seg) >= 4:
        return l4_csum(fam, src, dst, proto, seg, 2)
    return seg


def ipv4(src, dst, proto, payload, tos=0, ident=0, frag=0, ttl=64,
         opts=b"", tot=None, ihl=None, ver=4, csum=True, l4fix=True):
    s, d = ip4b(src), ip4b(dst)
    if l4fix and not frag & 0x3FFF:
        payload = fix_l4(4, s, d, proto, payload)
    if ihl is None:
        ihl = 5 + len(opts) // 4
    if tot is None:
        tot = 20 + len(opts) + len(payload)
    h = struct.pack("!BBHHHBBH4s4s", (ver << 4) | (ihl & 15), tos,
                    tot & 0xFFFF, ident & 0xFFFF, frag, ttl, proto, 0, s,
                    d) + opts
    if csum:
        h = h[:10] + struct.pack("!H", csum16(h)) + h[12:]
    return h + payload


def ipv6(src, dst, nh, payload, tc=0, flow=0, plen=None, hlim=64, ver=6,
         l4fix=True, l4proto=None):
    """payload: extension headers + L4. l4proto/l4 checksum: when l4fix,
    the checksum of the final L4 header is fixed (l4proto given, the ext
    headers' length in l4proto[1])."""
    s, d = ip6b(src), ip6b(dst)
    if l4fix and l4proto is not None:
        proto, xl = l4proto
        payload = payload[:xl] + fix_l4(6, s, d, proto, payload[xl:])
    if plen is None:
        plen = len(payload)
    return struct.pack("!IHBB16s16s", (ver << 28) | (tc << 20) | flow,
                       plen & 0xFFFF, nh, hlim, s, d) + payload


def ext_opts(nh, units, typ=0):
    """Hop-by-hop (typ 0) or destination options (60) header of
    (units + 1) * 8 bytes, padded with PadN."""
    area = (units + 1) * 8 - 2
    pad = b""
    while area > 0:
        if area == 1:
            pad += b"\0"                # Pad1
            break
        k = min(area - 2, 255)
        if area - (k + 2) == 1:
            k -= 1
        pad += bytes([1, k]) + b"\0" * k   # PadN
        area -= k + 2
    return bytes([nh, units]) + pad


def ext_routing(nh, addrs=1, segleft=0):
    return struct.pack("!BBBB4x", nh, 2 * addrs, 0, segleft) + \
        b"".join(ip6b("2001:db8:ffff::%x" % (k + 1)) for k in range(addrs))


def ext_frag(nh, offset=0, m=0, ident=0x1234):
    return struct.pack("!BBHI", nh, 0, (offset << 3) | m, ident)


def ext_ah(nh, plen_words=4):
    """AH: (plen_words + 2) * 4 bytes."""
    return struct.pack("!BBHII", nh, plen_words, 0, 0x100, 1) + \
        b"\xaa" * ((plen_words + 2) * 4 - 12)


def pad60(fr):
    return fr + b"\0" * max(0, 60 - len(fr))


def filler(rng, n):
    return bytes(rng.choice(b"abcdefghjklmnopqrstuvwxyz0123456789-")
                 for _ in range(n))


def arp(op, smac, sip, tmac, tip):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, smac,
                       ip4b(sip), tmac, ip4b(tip))


def nd(typ, src, dst, target, lladdr=None, opt_type=1, flags=0):
    """ICMPv6 neighbour solicitation (135) / advertisement (136) /
    router solicitation (133) body (checksum fixed by ipv6())."""
    if typ in (135, 136):
        body = struct.pack("!BBHI16s", typ, 0, 0, flags << 24, ip6b(target))
    else:
        body = struct.pack("!BBHI", typ, 0, 0, 0)
    if lladdr is not None:
        body += struct.pack("!BB6s", opt_type, 1, lladdr)
    return body


# --------------------------------------------------------------------------
# The neighbour model (lib/neigh: pa_neigh_inline.h, pa_neigh_parse())

OURS4 = {LOCAL4} | {s_["vip"] for s_ in LB["services"] if ":" not in s_["vip"]}
OURS6 = {str(ipaddress.ip_address(a)) for a in
         [LOCAL6] + [s_["vip"] for s_ in LB["services"] if ":" in s_["vip"]]}


def neigh_rx(frame, m, ours=None):
    """What the rx stage does with a well-formed frame (meta m): None
    (old path), "malformed" or "local" (to the control side). The replay
    port has no addresses and resolves nothing: only the VIPs and the
    local addresses are the appliance's. ours: (IPv4 set, IPv6 set) of
    the appliance's addresses on the port, when not OURS4/OURS6 (a routed
    replay port adds its own)."""
    ours4, ours6 = ours or (OURS4, OURS6)
    if m.flags & F_NON_IP:
        l3 = m.l3_off
        if frame[l3 - 2:l3] != b"\x08\x06":
            return None
        a = frame[l3:]
        if len(a) < 8 or len(a) < 8 + 2 * (a[4] + a[5]):
            return "malformed"
        if a[0:4] != b"\x00\x01\x08\x00" or a[4] != 6 or a[5] != 4:
            return None
        return "local" if str(ipaddress.ip_address(a[24:28])) in ours4 \
            else None
    if m.family != 6 or m.l4_proto != 58 or not m.flags & F_L4 or \
            m.flags & F_FRAG:
        return None
    l3, l4 = m.l3_off, m.l4_off
    end = l3 + 40 + _be16(frame, l3 + 4)
    if end > len(frame) or end < l4 or frame[l4] not in (135, 136):
        return None
    if end - l4 < 24:
        return "malformed"
    tgt = str(ipaddress.ip_address(frame[l4 + 8:l4 + 24]))
    return "local" if tgt in ours6 else None


def _mac_unicast(b):
    return not b[0] & 1 and b != bytes(6)


def _ip4_unicast(b):
    return not (b[0] >= 224 or b[0] in (0, 127))


def _icmp6_ok(src, dst, msg):
    s = sum(_be16(src + dst, k) for k in range(0, 32, 2))
    s += len(msg) + 58
    m = msg + (b"\0" if len(msg) & 1 else b"")
    s += sum(_be16(m, k) for k in range(0, len(m), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def _icmp6_csum(src, dst, msg):
    s = sum(_be16(src + dst, k) for k in range(0, 32, 2))
    s += len(msg) + 58
    s += sum(_be16(msg, k) for k in range(0, len(msg), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def neigh_answer(frame, port_mac, ours=None):
    """The frame the control side sends for a "local" frame, or None
    (refused, a conflict, a reply, an advertisement). ours: as for
    neigh_rx()."""
    ours4, ours6 = ours or (OURS4, OURS6)
    off, tags = 12, 0
    while True:
        if len(frame) - off < 2:
            return None
        et = _be16(frame, off)
        if et not in VLAN_TPIDS:
            break
        tags += 1
        if tags > 2 or len(frame) - off < 6:
            return None
        off += 4
    tagb, esrc = frame[12:off], frame[6:12]
    b = frame[off + 2:off + 2 + 2048]
    if et == 0x0806:
        if len(b) < 28 or b[0:6] != b"\x00\x01\x08\x00\x06\x04":
            return None
        op = _be16(b, 6)
        sha, spa, tpa = b[8:14], b[14:18], b[24:28]
        if op not in (1, 2) or not _mac_unicast(sha):
            return None
        probe = spa == bytes(4)
        if not (op == 1 and probe) and not _ip4_unicast(spa):
            return None
        if not _ip4_unicast(tpa) or esrc != sha:
            return None
        if not probe and str(ipaddress.ip_address(spa)) in ours4:
            return None
        if op != 1 or str(ipaddress.ip_address(tpa)) not in ours4 or \
                sha == port_mac:
            return None
        r = sha + port_mac + tagb + b"\x08\x06" + struct.pack(
            "!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, port_mac, tpa, sha, spa)
        return r + bytes(max(0, 60 - len(r)))
    if et != 0x86DD or len(b) < 40 or b[0] >> 4 != 6 or b[6] != 58:
        return None
    plen = _be16(b, 4)
    if plen > len(b) - 40 or plen < 24:
        return None
    src, dst, icmp = b[8:24], b[24:40], b[40:40 + plen]
    if icmp[0] not in (135, 136) or icmp[1] != 0 or b[7] != 255:
        return None
    if not _icmp6_ok(src, dst, icmp):
        return None
    ns, tgt, lla, o = icmp[0] == 135, icmp[8:24], None, 24
    while o < plen:
        if plen - o < 2 or icmp[o + 1] == 0 or icmp[o + 1] * 8 > plen - o:
            return None
        if icmp[o] == (1 if ns else 2):
            if icmp[o + 1] != 1 or lla is not None:
                return None
            lla = icmp[o + 2:o + 8]
        o += icmp[o + 1] * 8
    zero, lo = bytes(16), bytes(15) + b"\x01"
    if tgt[0] == 0xFF or tgt in (zero, lo) or src[0] == 0xFF or src == lo:
        return None
    if lla is not None and not _mac_unicast(lla):
        return None
    if ns and src == zero:
        sol = b"\xff\x02" + bytes(9) + b"\x01\xff" + tgt[13:]
        if dst != sol or lla is not None:
            return None
    if not ns and (src == zero or (dst[0] == 0xFF and icmp[4] & 0x40)):
        return None
    if lla is not None and lla != esrc:
        return None
    if src != zero and str(ipaddress.ip_address(src)) in ours6:
        return None
    if lla == port_mac or not ns or \
            str(ipaddress.ip_address(tgt)) not in ours6:
        return None
    dad = src == zero
    edst = bytes.fromhex("333300000001") if dad else (lla or esrc)
    ipdst = ip6b("ff02::1") if dad else src
    body = struct.pack("!BBHI16s", 136, 0, 0, (0x20 | (0 if dad else 0x40))
                       << 24, tgt) + struct.pack("!BB6s", 2, 1, port_mac)
    c = _icmp6_csum(tgt, ipdst, body)
    body = body[:2] + struct.pack("!H", c) + body[4:]
    return edst + port_mac + tagb + b"\x86\xdd" + struct.pack(
        "!IHBB16s16s", 6 << 28, len(body), 58, 255, tgt, ipdst) + body


# --------------------------------------------------------------------------
# The corpus

class Corpus:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.pkts = []
        self.seen = set()
        self.dups = collections.Counter()
        self.n_mac = 0

    def smac(self):
        """A fresh unicast source MAC (keeps cut frames apart)."""
        self.n_mac += 1
        return mac(0x10000 + self.n_mac)

    def add(self, data, cat, kind):
        data = bytes(data)
        if data in self.seen:
            self.dups[cat] += 1
            return False
        self.seen.add(data)
        self.pkts.append(HPkt(data, cat, kind))
        return True


def _bases(c):
    """Valid frames of every kind: (kind, frame, l3_off, family) for the
    truncation categories."""
    r = c.rng
    out = []

    def add(kind, l2, ip, fam, pad=True):
        fr = l2 + ip
        if pad:
            fr = pad60(fr)
        out.append((kind, fr, len(l2), fam))

    topts = struct.pack("!BBH", 2, 4, 1460) + b"\x01\x03\x03\x07" + \
        b"\x04\x02\x01\x01" + struct.pack("!BBII", 8, 10, 7, 0) + b"\x01\x01"
    add("tcp4_opts", eth(c.smac(), 0x0800),
        ipv4("198.51.100.11", "203.0.113.11", 6,
             tcp(40001, 8443, filler(r, 20), flags=0x02, opts=topts)), 4)
    add("udp4_vlan", eth(c.smac(), 0x0800, [(0x8100, 42)]),
        ipv4("198.51.100.12", "203.0.113.12", 17, udp(5001, 5002,
                                                      filler(r, 12))), 4)
    add("tcp6_qinq", eth(c.smac(), 0x86DD, [(0x88A8, 300), (0x8100, 7)]),
        ipv6("2001:db8:1::12", "2001:db8:2::12", 6,
             tcp(40002, 22, filler(r, 8)), l4proto=(6, 0)), 6)
    add("udp6", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::13", "2001:db8:2::13", 17,
             udp(5353, 5353, filler(r, 10)), l4proto=(17, 0)), 6)
    add("icmp4", eth(c.smac(), 0x0800),
        ipv4("198.51.100.14", "203.0.113.14", 1, icmp4(8, 0, filler(r, 8))),
        4)
    add("icmp6", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::15", "2001:db8:2::15", 58,
             struct.pack("!BBHHH", 128, 0, 0, 9, 1) + filler(r, 8),
             l4proto=(58, 0)), 6)
    add("udp4_ipopts", eth(c.smac(), 0x0800),
        ipv4("198.51.100.16", "203.0.113.16", 17, udp(5003, 5004,
                                                      filler(r, 6)),
             opts=b"\x07\x0b\x04" + b"\0" * 8 + b"\x00"), 4)
    ext = ext_opts(60, 0, 0) + ext_opts(43, 1, 60) + ext_routing(44) + \
        ext_frag(6, 0, 0)
    add("tcp6_ext", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::17", "2001:db8:2::17", 0,
             ext + tcp(40003, 80, filler(r, 6)), l4proto=(6, len(ext))), 6)
    ah = ext_ah(17, 4)
    add("udp6_ah", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::18", "2001:db8:2::18", 51,
             ah + udp(4500, 4500, filler(r, 6)), l4proto=(17, len(ah))), 6)
    add("sctp4", eth(c.smac(), 0x0800),
        ipv4("198.51.100.19", "203.0.113.19", 132,
             struct.pack("!HHII", 2905, 2905, 0x11223344, 0) +
             filler(r, 16)), 4)
    add("frag4_first", eth(c.smac(), 0x0800),
        ipv4("198.51.100.20", "203.0.113.20", 17,
             udp(5005, 5006, filler(r, 16), length=200), frag=0x2000,
             ident=0x777), 4)
    add("frag6_first", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::21", "2001:db8:2::21", 44,
             ext_frag(6, 0, 1, 0x4242) + tcp(40004, 443, filler(r, 16))), 6)
    add("tcp4_vip", eth(c.smac(), 0x0800),
        ipv4("198.51.100.22", VIP4, 6, tcp(40005, 80, filler(r, 24),
                                           flags=0x02)), 4)
    add("udp4_nat_vip", eth(c.smac(), 0x0800, [(0x8100, 9)]),
        ipv4("172.16.0.23", VIP4_NAT, 17, udp(40006, 53, filler(r, 20))),
        4)
    add("tcp6_dsr_vip", eth(c.smac(), 0x86DD),
        ipv6("2001:db8:1::24", VIP6_DSR, 6, tcp(40007, 443, filler(r, 12)),
             l4proto=(6, 0)), 6)
    add("udp6_ipip_vip", eth(c.smac(), 0x86DD, [(0x8100, 11)]),
        ipv6("2001:db8:1::25", VIP6_IPIP, 17,
             udp(40008, 4500, filler(r, 12)), l4proto=(17, 0)), 6)
    add("frag4_vip", eth(c.smac(), 0x0800),
        ipv4("198.51.100.26", VIP4, 6, tcp(40009, 80, filler(r, 16)),
             frag=0x2000, ident=0x778), 4)
    add("arp", eth(c.smac(), 0x0806, dst=b"\xff" * 6),
        arp(1, mac(0x99), "198.51.100.27", b"\0" * 6, VIP4), 0)
    add("nd_ns", eth(c.smac(), 0x86DD, dst=bytes.fromhex("3333ff000010")),
        ipv6("2001:db8:1::28", "ff02::1:ff00:10", 58,
             nd(135, None, None, VIP6_DSR, lladdr=mac(0x98)),
             hlim=255, l4proto=(58, 0)), 6)
    return out


def gen_truncations(c):
    for kind, fr, l3, fam in _bases(c):
        # raw cuts: every length from 0 to the whole frame (and its
        # unpadded length)
        for n in range(0, len(fr) + 1):
            c.add(fr[:n], "trunc_raw", kind)
        if fam == 0:
            continue
        # length-consistent cuts: the IP length fields say the cut
        hmin = 20 if fam == 4 else 40
        for n in range(l3 + hmin, len(fr)):
            b = bytearray(fr[:n])
            if fam == 4:
                struct.pack_into("!H", b, l3 + 2, n - l3)
                struct.pack_into("!H", b, l3 + 10, 0)
                ihl = (b[l3] & 15) * 4
                struct.pack_into("!H", b, l3 + 10,
                                 csum16(bytes(b[l3:l3 + min(ihl, n - l3)])))
            else:
                struct.pack_into("!H", b, l3 + 4, n - l3 - 40)
            c.add(b, "trunc_len", kind)
            c.add(pad60(b), "trunc_len", kind + "_padded")


def gen_ipv4_fields(c):
    r = c.rng
    for k in range(3):
        base_u = ipv4("198.51.100.%d" % (30 + k), "203.0.113.30", 17,
                      udp(6200 + k, 7000, filler(r, 12 + 4 * k)))
        base_t = ipv4("198.51.100.%d" % (33 + k), "203.0.113.33", 6,
                      tcp(6300 + k, 7001, filler(r, 8 + 4 * k)))
        for base, nm in ((base_u, "udp"), (base_t, "tcp")):
            e = eth(c.smac(), 0x0800)
            # IHL 0..15 with the header as built (20 bytes, no options)
            for ihl in range(16):
                b = bytearray(base)
                b[0] = 0x40 | ihl
                c.add(pad60(e + b), "ihl", "ihl%d_%s" % (ihl, nm))
                c.add(e + b, "ihl", "ihl%d_%s_nopad" % (ihl, nm))
            # IHL beyond the frame; IHL 15 exactly filling the frame
            b = bytearray(base[:20])
            b[0] = 0x4F
            struct.pack_into("!H", b, 2, 60)
            c.add(e + b + b"\x01" * 20, "ihl", "ihl15_past_frame")
            c.add(e + b + b"\x01" * 40, "ihl", "ihl15_no_l4")
            # total length: 0, 19, 20, 21, short by one, +1, 1500, 65535
            tl = len(base)
            for tot in (0, 1, 19, 20, 21, 27, 28, tl - 1, tl + 1, tl + 46,
                        576, 1500, 65535):
                b = bytearray(base)
                struct.pack_into("!H", b, 2, tot)
                c.add(e + b, "ip_len", "tot%d_%s" % (tot, nm))
                c.add(e + b + b"\0" * 64, "ip_len",
                      "tot%d_%s_trailer" % (tot, nm))
            # version field disagreeing with the ethertype
            for v in (0, 5, 6, 15):
                b = bytearray(base)
                b[0] = (v << 4) | 5
                c.add(pad60(e + b), "ip_version", "v%d_in_ipv4" % v)
    for k, v in enumerate((0, 4, 5, 15)):
        base6 = ipv6("2001:db8:3::%d" % k, "2001:db8:4::1", 17,
                     udp(6400 + k, 7002, filler(r, 10)), l4proto=(17, 0))
        b = bytearray(base6)
        b[0] = (v << 4) | (b[0] & 15)
        c.add(eth(c.smac(), 0x86DD) + b, "ip_version", "v%d_in_ipv6" % v)
    # IPv6 payload length: 0 (with UDP, with no-next-header), short, long
    for k, plen in enumerate((0, 1, 7, 8, 17, 18, 19, 100, 1500, 65535)):
        for nh, body in ((17, udp(6500 + k, 7003, filler(r, 10))),
                         (59, b"\x00" * 18)):
            b = bytearray(ipv6("2001:db8:5::%d" % k, "2001:db8:6::1", nh,
                               body, l4proto=(nh, 0)))
            struct.pack_into("!H", b, 4, plen)
            c.add(eth(c.smac(), 0x86DD) + b, "ip_len",
                  "plen%d_nh%d" % (plen, nh))
    # 64 KiB claims: frames of many sizes that claim 65535 bytes (a real
    # 64 KiB frame: frame_64k())
    for n in (60, 1514, 2048, 2049, 4096, 9018):
        b = bytearray(eth(c.smac(), 0x0800) +
                      ipv4("198.51.100.40", "203.0.113.40", 17,
                           udp(6600, 7004, b"\x5a" * (n - 42))))
        struct.pack_into("!H", b, 16, 65535)
        c.add(b, "ip_len", "claims64k_%d" % n)
        b6 = bytearray(eth(c.smac(), 0x86DD) +
                       ipv6("2001:db8:7::40", "2001:db8:8::40", 17,
                            udp(6601, 7005, b"\x5b" * (n - 62)),
                            l4proto=(17, 0)))
        struct.pack_into("!H", b6, 18, 65535)
        c.add(b6, "ip_len", "claims64k6_%d" % n)


def frame_64k():
    """A 65535-byte frame (the most a pcap record of the corpus holds)
    whose IPv4 total length, 65535, still exceeds it: malformed. Not in
    build()'s corpus: one such frame makes the replay size its mbuf pool
    for 32-segment packets (see test_hostile_replay)."""
    b = bytearray(eth(mac(0x6464), 0x0800) +
                  ipv4("198.51.100.41", "203.0.113.41", 17,
                       udp(6602, 7006, b"\x5c" * (65535 - 42))))
    struct.pack_into("!H", b, 16, 65535)
    return bytes(b)


def gen_ipv6_ext(c):
    r = c.rng
    n = [0]

    def v6(nh, body, kind, l4=None, tags=(), dst=None):
        n[0] += 1
        src = "2001:db8:10::%x" % n[0]
        c.add(pad60(eth(c.smac(), 0x86DD, tags) +
                    ipv6(src, dst or "2001:db8:11::1", nh, body,
                         l4proto=l4)), "ip6_ext", kind)

    u = udp(7100, 7101, filler(r, 8))
    t = tcp(7102, 7103, filler(r, 8))
    # chains of 1..12 headers (limit: 8) of hop-by-hop / dst options
    for count in range(1, 13):
        for mix in ("dst", "hbh_dst", "routing"):
            body = u
            nxt = 17
            for k in range(count):
                if mix == "routing" and k % 3 == 1:
                    h = ext_routing(nxt)
                    t_ = 43
                elif mix == "hbh_dst" and k == 0:
                    h = ext_opts(nxt, k % 3)
                    t_ = 0
                else:
                    h = ext_opts(nxt, k % 3)
                    t_ = 60
                body = h + body
                nxt = t_
            v6(nxt, body, "chain%d_%s" % (count, mix),
               l4=(17, len(body) - len(u)))
    # looping / long chains: destination options pointing at themselves
    for count in (9, 16, 40, 100):
        body = b"".join(ext_opts(60, 0) for _ in range(count))
        v6(60, body, "loop%d" % count)
        v6(60, body + u, "loop%d_udp" % count)
    # unknown / chain-ending next headers after a hop-by-hop
    for nh in (59, 50, 253, 254, 143, 135, 139, 140, 4, 41, 47, 255):
        v6(0, ext_opts(nh, 0) + filler(r, 16), "hbh_then_%d" % nh)
    # hop-by-hop not first (twice, and last)
    v6(60, ext_opts(0, 0) + ext_opts(17, 0) + u, "dst_hbh_udp",
       l4=(17, 16))
    v6(43, ext_routing(0) + ext_opts(6, 1) + t, "rt_hbh_tcp",
       l4=(6, 24 + 16))
    v6(0, ext_opts(0, 0) + ext_opts(17, 0) + u, "hbh_hbh_udp", l4=(17, 16))
    # truncated mid-header: the payload length ends inside a header
    for units in (0, 1, 3, 31):
        full = ext_opts(17, units) + u
        for cut in (1, 2, 7, 8, 9, (units + 1) * 8 - 1):
            if cut >= len(full):
                continue
            v6(0, full[:cut], "hbh%d_cut%d" % (units, cut))
        v6(60, ext_opts(0, 0) + full[:max(1, (units + 1) * 8 - 3)],
           "dst_hbh%d_cut" % units)
    # AH: good, length past the payload, and as the 9th header
    v6(51, ext_ah(17, 4) + u, "ah_udp", l4=(17, 24))
    v6(51, ext_ah(17, 1) + u, "ah_short_udp", l4=(17, 12))
    v6(51, ext_ah(17, 200)[:40], "ah_len_past")
    v6(51, ext_ah(6, 4)[:5], "ah_cut")
    # ESP: ends the chain, opaque
    v6(50, struct.pack("!II", 0x1000, 1) + filler(r, 24), "esp")
    v6(0, ext_opts(50, 0) + struct.pack("!II", 0x1001, 1) + filler(r, 8),
       "hbh_esp")
    # jumbogram (payload length 0 with a hop-by-hop): not supported
    b = bytearray(ipv6("2001:db8:12::1", "2001:db8:11::1", 0,
                       ext_opts(17, 0) + u))
    struct.pack_into("!H", b, 4, 0)
    c.add(eth(c.smac(), 0x86DD) + b, "ip6_ext", "jumbogram")
    # fragment header in the middle of the chain, after it, later ones
    v6(0, ext_opts(44, 0) + ext_frag(60, 0, 0) + ext_opts(17, 0) + u,
       "hbh_atomicfrag_dst_udp", l4=(17, 24))
    v6(0, ext_opts(44, 0) + ext_frag(0, 5, 1) + ext_opts(17, 0) + u,
       "hbh_laterfrag_nh0")
    v6(44, ext_frag(44, 0, 1) + ext_frag(17, 0, 1) + u, "frag_frag_udp")
    v6(44, ext_frag(44, 0, 0) + ext_frag(44, 0, 0) + ext_frag(17, 0, 0) + u,
       "atomic3_udp", l4=(17, 24))
    # routing header with segments left, destination = a VIP
    v6(43, ext_routing(6, 2, 2) + tcp(50001, 443, filler(r, 8)),
       "rt_segleft_to_dsr_vip", l4=(6, 40), dst=VIP6_DSR)
    v6(0, ext_opts(17, 1) + udp(50002, 4500, filler(r, 8)),
       "hbh_udp_to_ipip6_vip", l4=(17, 16), dst=VIP6_IPIP)
    v6(60, ext_opts(60, 0)[:0] + ext_opts(17, 0)[:6], "dst_cut6")
    # big extension chains (single segment: fine; past what the parser
    # gathers from a chain of mbufs: malformed)
    for units in (60, 127, 255):
        h = ext_opts(17, units)
        v6(60, h + u, "dst%d_udp" % units, l4=(17, len(h)))
        v6(0, ext_opts(60, 255) + h + u, "hbh255_dst%d_udp" % units,
           l4=(17, 2048 + len(h)))


def gen_big(c):
    """Frames that arrive as mbuf chains (> 2048 bytes)."""
    for k, n in enumerate((2048, 2049, 2100, 3000, 4096, 9000, 9018,
                           TX_MAX)):
        pl = n - 42
        c.add(eth(c.smac(), 0x0800) +
              ipv4("198.51.100.50", "203.0.113.50", 17,
                   udp(6700 + k, 7007, bytes([k]) * pl)), "big",
              "udp4_%d" % n)
        c.add(eth(c.smac(), 0x86DD) +
              ipv6("2001:db8:20::%d" % k, "2001:db8:21::1", 6,
                   tcp(6710 + k, 7008, bytes([k]) * (n - 74)),
                   l4proto=(6, 0)), "big", "tcp6_%d" % n)
    # IPv6 extension chains that cross the first mbuf / what the parser
    # gathers (512 bytes) in a chained frame
    u = udp(6720, 7009, b"\x33" * 2600)
    for units in (10, 60, 200, 246, 247, 248, 255):
        h = ext_opts(17, units)
        c.add(eth(c.smac(), 0x86DD) +
              ipv6("2001:db8:22::%d" % units, "2001:db8:21::2", 60, h + u,
                   l4proto=(17, len(h))), "big", "dst%d_chained" % units)
    h = ext_opts(60, 255) + ext_opts(17, 1)
    c.add(eth(c.smac(), 0x86DD) +
          ipv6("2001:db8:22::100", "2001:db8:21::2", 0, h + u,
               l4proto=(17, len(h))), "big", "hbh255_dst1_chained")
    # VLAN + IPv4 options + TCP options in a chained frame
    c.add(eth(c.smac(), 0x0800, [(0x88A8, 5), (0x8100, 6)]) +
          ipv4("198.51.100.51", "203.0.113.51", 6,
               tcp(6730, 7010, b"\x44" * 5000, opts=b"\x01" * 40),
               opts=b"\x01" * 40), "big", "qinq_opts_chained")
    # chained frames to the VIPs: over the port MTU (ipip: mtu drop;
    # nat / dsr: balanced as they are)
    c.add(eth(c.smac(), 0x0800) +
          ipv4("198.51.100.52", VIP4, 6, tcp(40100, 80, b"\x55" * 3000)),
          "big", "vip_ipip_3000")
    c.add(eth(c.smac(), 0x0800) +
          ipv4("172.16.0.52", VIP4_NAT, 17, udp(40101, 53, b"\x56" * 3000)),
          "big", "vip_nat_3000")
    c.add(eth(c.smac(), 0x86DD) +
          ipv6("2001:db8:23::52", VIP6_DSR, 6,
               tcp(40102, 443, b"\x57" * 3000), l4proto=(6, 0)),
          "big", "vip6_dsr_3000")
    # malformed chained frames (dropped whole)
    b = bytearray(eth(c.smac(), 0x0800) +
                  ipv4("198.51.100.53", "203.0.113.53", 6,
                       tcp(6740, 7011, b"\x58" * 5000)))
    b[14 + 20 + 12] = 0x30
    c.add(b, "big", "tcp_doff3_chained")
    c.add(eth(c.smac(), 0x0800, [(0x8100, 1)] * 3) + b"\x45" + b"\0" * 5000,
          "big", "vlan3_chained")


def gen_frags(c):
    r = c.rng
    e4 = lambda: eth(c.smac(), 0x0800)  # noqa: E731
    e6 = lambda: eth(c.smac(), 0x86DD)  # noqa: E731

    def f4(src, dst, proto, body, off8, mf, kind, ident=0x900, flags=0):
        fr = (0x2000 if mf else 0) | flags | (off8 & 0x1FFF)
        c.add(pad60(e4() + ipv4(src, dst, proto, body, frag=fr,
                                ident=ident)), "frag4", kind)

    def f6(src, dst, nh, body, off8, m, kind, ident=0x900, pre=b""):
        c.add(pad60(e6() + ipv6(src, dst, 44 if not pre else 0,
                                pre + ext_frag(nh, off8, m, ident) + body)),
              "frag6", kind)

    for k, (dst, dport, proto) in enumerate(
            (("203.0.113.60", 7020, 17), ("203.0.113.61", 7021, 6),
             (VIP4, 80, 6), (VIP4, 443, 6), (VIP4_NAT, 53, 17),
             (VIP4_DEAD, 80, 6), ("10.66.0.1", 53, 17))):
        src = "198.51.100.%d" % (60 + k)
        ident = 0xA00 + k
        l4 = udp(40200 + k, dport, filler(r, 24), length=64) \
            if proto == 17 else tcp(40200 + k, dport, filler(r, 12))
        # a datagram in order, then overlapping pieces
        f4(src, dst, proto, l4, 0, 1, "first_%d" % dport, ident)
        f4(src, dst, proto, filler(r, 16), len(l4) // 8, 1, "mid", ident)
        f4(src, dst, proto, filler(r, 8), len(l4) // 8 + 2, 0, "last",
           ident)
        f4(src, dst, proto, filler(r, 24), 1, 1, "overlap_1", ident)
        # tiny 8-byte fragments
        for off in (1, 2, 3):
            f4(src, dst, proto, filler(r, 8), off, 1, "tiny8", ident + 1)
        f4(src, dst, proto, l4[:8], 0, 1, "first_tiny8", ident + 2)
        # first fragment without a full L4 header
        for cut in (0, 1, 4, 7, 12, 19):
            f4(src, dst, proto, l4[:cut], 0, 1, "first_l4cut%d" % cut,
               ident + 3)
        # offsets beyond 64 KiB
        for off in (8189, 8190, 8191):
            f4(src, dst, proto, filler(r, 16), off, off != 8191,
               "off%d" % off, ident + 4)
        # MF with offset 0 and no payload; DF with MF; reserved flag
        f4(src, dst, proto, b"", 0, 1, "mf_empty", ident + 5)
        f4(src, dst, proto, l4, 0, 1, "df_mf", ident + 6, flags=0x4000)
        f4(src, dst, proto, l4, 0, 0, "evil_bit", ident + 7, flags=0x8000)
        f4(src, dst, proto, filler(r, 8), 3, 0, "evil_bit_later", ident + 7,
           flags=0x8000)
    for p in (47, 1, 50):
        f4("198.51.100.70", "203.0.113.70", p, b"", 0, 1, "mf_empty_p%d" % p)
        f4("198.51.100.70", "203.0.113.70", p, b"\x08\0", 0, 1,
           "first2_p%d" % p)
    for k, (dst, dport, proto) in enumerate(
            (("2001:db8:30::1", 7030, 17), ("2001:db8:30::2", 7031, 6),
             (VIP6_DSR, 443, 6), (VIP6_IPIP, 4500, 17))):
        src = "2001:db8:31::%d" % (k + 1)
        ident = 0xB00 + k
        for sport in (40300 + k, 700 + k):
            l4 = udp(sport, dport, filler(r, 24), length=80) \
                if proto == 17 else tcp(sport, dport, filler(r, 12))
            f6(src, dst, proto, l4, 0, 1, "first_%d_%d" % (dport, sport),
               ident)
            f6(src, dst, proto, l4, 0, 0, "atomic_%d_%d" % (dport, sport),
               ident + 9)
        f6(src, dst, proto, filler(r, 16), 5, 1, "mid", ident)
        f6(src, dst, proto, filler(r, 8), 7, 0, "last", ident)
        f6(src, dst, proto, filler(r, 24), 1, 1, "overlap", ident)
        for off in (1, 2, 3):
            f6(src, dst, proto, filler(r, 8), off, 1, "tiny8", ident + 1)
        for cut in (0, 1, 4, 7, 12, 19):
            f6(src, dst, proto, l4[:cut], 0, 1, "first_l4cut%d" % cut,
               ident + 2)
        for off in (8190, 8191):
            f6(src, dst, proto, filler(r, 16), off, 1, "off%d" % off,
               ident + 3)
        f6(src, dst, proto, b"", 0, 1, "m_empty", ident + 4)
        f6(src, dst, proto, b"", 3, 0, "later_empty", ident + 4)
        f6(src, dst, 0, ext_opts(proto, 0) + l4[:8], 0, 1,
           "first_then_hbh", ident + 5)
        f6(src, dst, 0, filler(r, 16), 4, 1, "later_nh_hbh", ident + 5)
        f6(src, dst, proto, l4, 0, 1, "hbh_then_first", ident + 6,
           pre=ext_opts(44, 0))
        # reserved bits of the fragment header set (offset 0, M 0)
        b = bytearray(e6() + ipv6(src, dst, 44, ext_frag(proto, 0, 0, ident)
                                  + l4))
        b[14 + 40 + 3] |= 0x06
        c.add(pad60(b), "frag6", "res_bits")


def gen_vlan(c):
    r = c.rng
    ip = ipv4("198.51.100.80", "203.0.113.80", 17,
              udp(7040, 7041, filler(r, 10)))
    ip6_ = ipv6("2001:db8:40::1", "2001:db8:41::1", 6,
                tcp(7042, 7043, filler(r, 10)), l4proto=(6, 0))
    a = arp(1, mac(0x80), "198.51.100.80", b"\0" * 6, "198.51.100.81")
    tp = (0x8100, 0x88A8, 0x9100)
    for count in (1, 2, 3, 4, 10):
        for order in range(3):
            tags = [(tp[(order + k) % 3], (100 * k + order) & 0xFFFF)
                    for k in range(count)]
            for et, body, nm in ((0x0800, ip, "ip4"), (0x86DD, ip6_, "ip6"),
                                 (0x0806, a, "arp")):
                c.add(pad60(eth(c.smac(), et, tags) + body), "vlan",
                      "tags%d_o%d_%s" % (count, order, nm))
    # VLAN ids 0 (priority tag) and 4095, PCP and DEI bits
    for tci in (0, 4095, 0xE000 | 5, 0x1000 | 6, 0xFFFF):
        c.add(pad60(eth(c.smac(), 0x0800, [(0x8100, tci)]) + ip), "vlan",
              "tci%04x" % tci)
    # truncated tags: the frame ends inside the first / second tag
    for count in (1, 2, 3):
        full = eth(c.smac(), 0x0800, [(0x8100, 7)] * count) + ip
        for cut in range(13, 14 + 4 * count + 2):
            c.add(full[:cut], "vlan", "tags%d_cut%d" % (count, cut))
    # tag followed by a length field / other ethertype
    for et in (0x0040, 0x05DC, 0x88CC, 0x8847):
        c.add(pad60(eth(c.smac(), et, [(0x8100, 8)]) + filler(r, 30)),
              "vlan", "tag_then_%04x" % et)
    # a VLAN-tagged frame to every VIP
    for dst, body in ((VIP4, tcp(40400, 80, filler(r, 10))),
                      (VIP4, tcp(40401, 443, filler(r, 10))),
                      (VIP4_NAT, udp(40402, 53, filler(r, 10)))):
        proto = 6 if len(body) > 20 else 17
        for tags in ([(0x8100, 20)], [(0x88A8, 21), (0x8100, 22)],
                     [(0x8100, 23)] * 3):
            c.add(pad60(eth(c.smac(), 0x0800, tags) +
                        ipv4("198.51.100.82", dst, proto, body)), "vlan",
                  "vip_%s_%d" % (dst, len(tags)))


def gen_tiny(c):
    c.add(b"", "tiny", "zero")
    for n in range(1, 14):
        c.add(bytes([0xFF] * n), "tiny", "ff_%d" % n)
        c.add(bytes(range(n)), "tiny", "seq_%d" % n)
    for et in (0x0800, 0x86DD, 0x8100, 0x88A8, 0x0806, 0x1234):
        c.add(APPLIANCE_MAC + c.smac() + struct.pack("!H", et), "tiny",
              "eth_only_%04x" % et)
        c.add(APPLIANCE_MAC + c.smac() + struct.pack("!H", et) + b"\x45",
              "tiny", "eth_plus1_%04x" % et)
    c.add(bytes(60), "tiny", "zeros60")
    c.add(b"\xff" * 60, "tiny", "ones60")


def gen_checksums(c):
    r = c.rng
    for k in range(6):
        e = eth(c.smac(), 0x0800)
        for dst, proto, body, nm in (
                ("203.0.113.90", 17, udp(7050 + k, 7051, filler(r, 9)),
                 "udp"),
                ("203.0.113.91", 6, tcp(7052 + k, 7053, filler(r, 9)),
                 "tcp"),
                ("203.0.113.92", 1, icmp4(8, 0, filler(r, 9)), "icmp"),
                (VIP4, 6, tcp(40500 + k, 80, filler(r, 9)), "vip_ipip"),
                (VIP4_NAT, 17, udp(40500 + k, 53, filler(r, 9)),
                 "vip_nat")):
            good = bytearray(e + ipv4("198.51.100.%d" % (90 + k), dst, proto,
                                      body))
            # bogus IP header checksum
            b = bytearray(good)
            b[24] ^= 0x5A
            c.add(pad60(b), "checksum", "ipcsum_" + nm)
            # bogus L4 checksum
            b = bytearray(good)
            o = 34 + {17: 6, 6: 16, 1: 2}[proto]
            b[o] ^= 0xA5
            c.add(pad60(b), "checksum", "l4csum_" + nm)
            # both zero
            b = bytearray(good)
            b[24:26] = b"\0\0"
            b[o:o + 2] = b"\0\0"
            c.add(pad60(b), "checksum", "zero_" + nm)
        e6 = eth(c.smac(), 0x86DD)
        for dst, proto, body, nm in (
                ("2001:db8:50::1", 17, udp(7060 + k, 7061, filler(r, 9)),
                 "udp6"),
                (VIP6_DSR, 6, tcp(40600 + k, 443, filler(r, 9)), "vip6_dsr"),
                (VIP6_IPIP, 17, udp(40600 + k, 4500, filler(r, 9)),
                 "vip6_ipip")):
            good = bytearray(e6 + ipv6("2001:db8:51::%d" % k, dst, proto,
                                       body, l4proto=(proto, 0)))
            o = 54 + (6 if proto == 17 else 16)
            b = bytearray(good)
            b[o] ^= 0x11
            c.add(pad60(b), "checksum", "l4csum_" + nm)
            b = bytearray(good)
            b[o:o + 2] = b"\0\0"
            c.add(pad60(b), "checksum", "zero_" + nm)


def gen_mcast(c):
    r = c.rng
    macs = [b"\xff" * 6, bytes.fromhex("01005e000001"),
            bytes.fromhex("333300000001"), bytes.fromhex("0180c2000000"),
            b"\0" * 6, bytes.fromhex("030000000001")]
    for k, m in enumerate(macs):
        c.add(pad60(eth(m, 0x0800) + ipv4("198.51.100.100", "203.0.113.100",
                                          17, udp(7070 + k, 7071,
                                                  filler(r, 8)))),
              "mcast", "srcmac%d" % k)
        c.add(pad60(eth(m, 0x0800) + ipv4("198.51.100.101", VIP4, 6,
                                          tcp(40700 + k, 80, filler(r, 8)))),
              "mcast", "srcmac%d_vip" % k)
        c.add(pad60(eth(m, 0x0800, dst=m) +
                    ipv4("198.51.100.102", "203.0.113.102", 1,
                         icmp4(8, 0, filler(r, 8)))),
              "mcast", "src_dst_mac%d" % k)
    for k, (src, dst) in enumerate((
            ("255.255.255.255", "203.0.113.103"), ("224.0.0.1", VIP4),
            ("0.0.0.0", "255.255.255.255"), ("127.0.0.1", VIP4),
            ("239.255.255.250", "239.255.255.250"), ("192.0.2.10", VIP4),
            (VIP4, "203.0.113.104"), ("10.2.0.9", VIP4_NAT),
            ("255.255.255.255", VIP4_NAT), ("224.0.0.251", "224.0.0.251"))):
        for proto, body in ((17, udp(40800 + k, 53 if dst == VIP4_NAT
                                     else 5353, filler(r, 8))),
                            (6, tcp(40810 + k, 80, filler(r, 8)))):
            c.add(pad60(eth(c.smac(), 0x0800) + ipv4(src, dst, proto, body)),
                  "mcast", "ip_%s_%s_%d" % (src, dst, proto))
    for k, (src, dst) in enumerate((
            ("ff02::1", "2001:db8:60::1"), ("::", VIP6_DSR),
            ("::1", VIP6_DSR), ("ff05::2", VIP6_IPIP), ("fe80::1", "ff02::1"),
            (VIP6_DSR, VIP6_DSR), ("::ffff:192.0.2.10", VIP6_DSR))):
        for proto, body in ((6, tcp(40900 + k, 443, filler(r, 8))),
                            (17, udp(40910 + k, 4500, filler(r, 8)))):
            c.add(pad60(eth(c.smac(), 0x86DD) +
                        ipv6(src, dst, proto, body, l4proto=(proto, 0))),
                  "mcast", "ip6_%s_%s_%d" % (src, dst, proto))


def gen_tcp_udp(c):
    r = c.rng
    for k, dst in enumerate(("203.0.113.110", VIP4)):
        e = eth(c.smac(), 0x0800)
        for doff in range(16):
            for extra in (0, 20, 40):
                b = bytearray(ipv4("198.51.100.110", dst, 6,
                                   tcp(41000 + doff, 80, filler(r, extra))))
                b[20 + 12] = (doff << 4) | (b[32] & 15)
                c.add(pad60(e + b), "tcp_doff", "doff%d_pl%d_%d" % (
                    doff, extra, k))
        e6 = eth(c.smac(), 0x86DD)
        d6 = VIP6_DSR if k else "2001:db8:70::1"
        for doff in (0, 4, 5, 6, 15):
            b = bytearray(ipv6("2001:db8:71::1", d6, 6,
                               tcp(41100 + doff, 443, filler(r, 8))))
            b[40 + 12] = doff << 4
            c.add(pad60(e6 + b), "tcp_doff", "doff%d_v6_%d" % (doff, k))
    for k, dst in enumerate(("203.0.113.111", VIP4_NAT)):
        e = eth(c.smac(), 0x0800)
        for pl in (0, 1, 9, 30):
            body = filler(r, pl)
            for ulen in (0, 1, 7, 8, 9, 8 + pl - 1, 8 + pl, 8 + pl + 1,
                         8 + pl + 100, 65535):
                c.add(pad60(e + ipv4("198.51.100.111", dst, 17,
                                     udp(41200 + pl, 53, body, length=ulen),
                                     l4fix=False)),
                      "udp_len", "ulen%d_pl%d_%d" % (ulen, pl, k))
        e6 = eth(c.smac(), 0x86DD)
        d6 = VIP6_IPIP if k else "2001:db8:72::1"
        for ulen in (0, 7, 8, 20, 21, 22, 1000):
            c.add(pad60(e6 + ipv6("2001:db8:73::1", d6, 17,
                                  udp(41300, 4500, filler(r, 12),
                                      length=ulen))),
                  "udp_len", "ulen%d_v6_%d" % (ulen, k))
    # other L4 protocols: SCTP (12 bytes needed), GRE, IP in IP, ...
    for k, (proto, body) in enumerate((
            (132, b""), (132, b"\0" * 11), (132, b"\0" * 12),
            (47, b""), (47, struct.pack("!HH", 0, 0x0800)),
            (4, ipv4("10.0.0.1", "10.0.0.2", 17, udp(1, 2))),
            (41, b"\x60" + b"\0" * 10), (0, b""), (255, b"\x01\x02"),
            (1, b""), (1, b"\x08\0\0"), (1, b"\x08\0\0\0"), (58, b""),
            (2, b"\x11\x64\xee\x9b\0\0\0\0"))):
        c.add(pad60(eth(c.smac(), 0x0800) +
                    ipv4("198.51.100.120", "203.0.113.120", proto, body)),
              "l4_other", "ip4_p%d_%d" % (proto, len(body)))
    for k, (proto, body) in enumerate((
            (58, b""), (58, b"\x80\0\0"), (58, b"\x80\0\0\0"), (1, b""),
            (132, b"\0" * 11), (132, b"\0" * 12), (47, b""), (4, b"\x45"),
            (41, b""), (59, b"garbage"))):
        c.add(pad60(eth(c.smac(), 0x86DD) +
                    ipv6("2001:db8:74::1", "2001:db8:75::1", proto, body)),
              "l4_other", "ip6_p%d_%d" % (proto, len(body)))


def gen_arp_nd(c):
    bc = b"\xff" * 6
    for k in range(8):
        sm = mac(0x7000 + k)
        for op, dst, tmac, tip in ((1, bc, b"\0" * 6, VIP4),
                                   (1, bc, b"\0" * 6, LOCAL4),
                                   (2, APPLIANCE_MAC, APPLIANCE_MAC,
                                    "198.51.100.130"),
                                   (1, bc, b"\0" * 6, "198.51.100.%d" % k)):
            full = eth(sm, 0x0806, dst=dst) + arp(op, sm, "198.51.100.%d" % (
                140 + k), tmac, tip)
            c.add(pad60(full), "arp", "op%d" % op)
            if k < 2:
                for cut in range(14, len(full)):
                    c.add(full[:cut], "arp", "op%d_cut%d" % (op, cut))
    # gratuitous, odd hardware / protocol types and sizes, VLAN-tagged
    for k, body in enumerate((
            struct.pack("!HHBBH", 6, 0x0800, 6, 4, 1) + b"\x11" * 20,
            struct.pack("!HHBBH", 1, 0x86DD, 6, 16, 1) + b"\x12" * 44,
            struct.pack("!HHBBH", 1, 0x0800, 0, 0, 9),
            struct.pack("!HHBBH", 1, 0x0800, 255, 255, 1) + b"\x13" * 40)):
        c.add(pad60(eth(c.smac(), 0x0806, dst=bc) + body), "arp",
              "odd%d" % k)
    c.add(pad60(eth(c.smac(), 0x0806, [(0x8100, 30)], dst=bc) +
                arp(1, mac(0x71), "198.51.100.131", b"\0" * 6, VIP4)),
          "arp", "vlan")
    # IPv6 neighbour discovery
    for k in range(6):
        src = "2001:db8:80::%d" % (k + 1)
        sm = mac(0x7100 + k)
        cases = (
            ("ns", "ff02::1:ff00:10", 135, VIP6_DSR, sm,
             bytes.fromhex("3333ff000010")),
            ("ns_dad", "ff02::1:ff00:20", 135, VIP6_IPIP, None,
             bytes.fromhex("3333ff000020")),
            ("na", "2001:db8:80::99", 136, src, sm, APPLIANCE_MAC),
            ("rs", "ff02::2", 133, None, sm, bytes.fromhex("333300000002")))
        for nm, dst, typ, tgt, ll, dmac in cases:
            s = "::" if nm == "ns_dad" else src
            body = nd(typ, s, dst, tgt, lladdr=ll,
                      opt_type=2 if typ == 136 else 1,
                      flags=0x60 if typ == 136 else 0)
            fr = eth(sm, 0x86DD, dst=dmac) + ipv6(s, dst, 58, body, hlim=255,
                                                  l4proto=(58, 0))
            c.add(pad60(fr), "nd", nm)
            if k < 1:
                for cut in range(54, len(fr)):
                    c.add(fr[:cut], "nd", nm + "_cut%d" % cut)
                    b = bytearray(fr[:cut])
                    struct.pack_into("!H", b, 18, cut - 54)
                    c.add(pad60(b), "nd", nm + "_lencut%d" % cut)
    # hostile ARP for the appliance: spoofed and odd senders, replies and
    # announcements never asked for, conflicts, other opcodes
    mc = bytes.fromhex("01005e000001")
    for nm, op, esrc, sha, sip, tip in (
            ("spoof_src", 1, mac(0x7201), mac(0x7202), "198.51.100.150", VIP4),
            ("mcast_sha", 1, mc, mc, "198.51.100.151", VIP4),
            ("zero_sha", 1, bytes(6), bytes(6), "198.51.100.152", VIP4),
            ("bcast_sip", 1, mac(0x7203), mac(0x7203), "255.255.255.255",
             VIP4),
            ("mcast_sip", 1, mac(0x7204), mac(0x7204), "224.0.0.5", VIP4),
            ("lo_sip", 1, mac(0x7205), mac(0x7205), "127.0.0.1", VIP4),
            ("probe", 1, mac(0x7206), mac(0x7206), "0.0.0.0", VIP4_NAT),
            ("probe_reply", 2, mac(0x7207), mac(0x7207), "0.0.0.0", VIP4),
            ("never_asked", 2, mac(0x7208), mac(0x7208), "198.51.100.153",
             LOCAL4),
            ("conflict", 1, mac(0x7209), mac(0x7209), VIP4, VIP4),
            ("garp_vip", 2, mac(0x720a), mac(0x720a), VIP4_DEAD, VIP4_DEAD),
            ("op3", 3, mac(0x720b), mac(0x720b), "198.51.100.154", VIP4),
            ("op0", 0, mac(0x720c), mac(0x720c), "198.51.100.155", VIP4),
            ("ok_nat", 1, mac(0x720d), mac(0x720d), "198.51.100.156",
             VIP4_NAT)):
        c.add(pad60(eth(esrc, 0x0806, dst=bc) +
                    arp(op, sha, sip, b"\0" * 6, tip)), "arp", nm)
    c.add(eth(mac(0x720e), 0x0806, [(0x8100, 5), (0x88A8, 6)], dst=bc) +
          arp(1, mac(0x720e), "198.51.100.157", b"\0" * 6, VIP4) +
          b"\xee" * 20, "arp", "qinq_trailer")
    for cut in (7, 8, 20, 27):
        c.add(eth(mac(0x720f), 0x0806, dst=bc) +
              arp(1, mac(0x720f), "198.51.100.158", b"\0" * 6,
                  VIP4)[:cut], "arp", "short%d" % cut)
    # hostile ND for the appliance
    sm = mac(0x7300)
    sol20 = bytes.fromhex("3333ff000020")

    def ns_(src, dst, tgt, ll=sm, hlim=255, nm="", opts=None, esrc=sm,
            edst=sol20, fix=True, typ=135, flags=0):
        body = nd(typ, src, dst, tgt, lladdr=ll if opts is None else None,
                  flags=flags, opt_type=2 if typ == 136 else 1)
        if opts is not None:
            body += opts
        c.add(pad60(eth(esrc, 0x86DD, dst=edst) +
                    ipv6(src, dst, 58, body, hlim=hlim,
                         l4proto=(58, 0) if fix else None)), "nd", nm)

    v6, sol = VIP6_IPIP, "ff02::1:ff00:20"
    for h in (0, 1, 64, 254):
        ns_("2001:db8:81::1", sol, v6, hlim=h, nm="hlim%d" % h)
    ns_("2001:db8:81::2", sol, v6, nm="ok")
    ns_("2001:db8:81::3", sol, v6, nm="bad_csum", fix=False)
    ns_("2001:db8:81::4", sol, v6, nm="opt_len0",
        opts=struct.pack("!BB6s", 1, 0, sm))
    ns_("2001:db8:81::5", sol, v6, nm="opt_overrun",
        opts=struct.pack("!BB6s", 1, 3, sm))
    ns_("2001:db8:81::6", sol, v6, nm="slla_len2",
        opts=struct.pack("!BB14s", 1, 2, sm + bytes(8)))
    ns_("2001:db8:81::7", sol, v6, nm="two_slla",
        opts=struct.pack("!BB6sBB6s", 1, 1, sm, 1, 1, sm))
    ns_("2001:db8:81::8", sol, v6, nm="unknown_opt",
        opts=struct.pack("!BB6sBB6s", 14, 1, b"\1" * 6, 1, 1, sm))
    ns_("2001:db8:81::9", sol, v6, nm="spoof_slla", esrc=mac(0x7301))
    ns_("2001:db8:81::a", sol, v6, nm="mcast_slla",
        ll=bytes.fromhex("333300000001"), esrc=bytes.fromhex("333300000001"))
    ns_("ff02::1", sol, v6, nm="mcast_src")
    ns_("::", sol, v6, ll=None, nm="dad_ok")
    ns_("::", sol, v6, nm="dad_slla")
    ns_("::", "ff02::1:ff00:21", v6, ll=None, nm="dad_wrong_group")
    ns_(VIP6_DSR, sol, v6, nm="conflict_src")
    ns_("2001:db8:81::b", "ff02::1", "ff02::1", nm="mcast_target")
    ns_("2001:db8:81::c", VIP6_DSR, VIP6_DSR, nm="unicast_ok",
        edst=APPLIANCE_MAC)
    ns_(LOCAL6, sol, LOCAL6, nm="local6")
    # advertisements: never asked, conflicts, solicited to a group
    ns_("2001:db8:81::d", "2001:db8:81::1", "2001:db8:81::d", typ=136,
        flags=0x60, nm="na_never_asked", edst=APPLIANCE_MAC)
    ns_("2001:db8:81::e", "ff02::1", VIP6_DSR, typ=136, flags=0x20,
        nm="na_conflict", edst=bytes.fromhex("333300000001"))
    ns_("2001:db8:81::f", "ff02::1", VIP6_IPIP, typ=136, flags=0x60,
        nm="na_mcast_solicited", edst=bytes.fromhex("333300000001"))
    ns_("2001:db8:81::10", sol, v6, typ=136, flags=0x60, nm="na_no_tlla",
        ll=None)
    # NS for the VIP behind a hop-by-hop header (refused: not ICMPv6 next)
    c.add(pad60(eth(sm, 0x86DD, dst=sol20) +
                ipv6("2001:db8:81::11", sol, 0,
                     ext_opts(58, 0) + nd(135, None, None, v6, lladdr=sm),
                     hlim=255, l4proto=(58, 8))), "nd", "hbh_ns")
    # ND behind a hop-by-hop header (MLD style) and with hop limit 1
    c.add(pad60(eth(c.smac(), 0x86DD) +
                ipv6("fe80::1", "ff02::16", 0,
                     ext_opts(58, 0) + struct.pack("!BBHHH", 143, 0, 0, 0,
                                                   1) + b"\0" * 20,
                     l4proto=(58, 8))), "nd", "mldv2_hbh")


def gen_non_ip(c):
    r = c.rng
    for et in (0x0000, 0x0001, 0x0026, 0x05DC, 0x05DD, 0x05FF, 0x0600,
               0x0842, 0x22F0, 0x22F3, 0x6003, 0x8035, 0x809B, 0x80F3,
               0x8137, 0x8808, 0x8809, 0x8847, 0x8848, 0x8863, 0x8864,
               0x886D, 0x888E, 0x8892, 0x889A, 0x88B5, 0x88CC, 0x88E5,
               0x88F7, 0x8906, 0x8914, 0x8915, 0x9000, 0x9200, 0xFFFF):
        for n in (0, 1, 46, 100):
            body = filler(r, n)
            if et in (0x8864, 0x8847):
                body = (b"\x11\x00\x00\x01\x00\x40\x00\x21"
                        if et == 0x8864 else b"\x00\x01\x41\x40") + \
                    ipv4("198.51.100.150", VIP4, 6, tcp(40950, 80, body))
            c.add(eth(c.smac(), et) + body, "non_ip", "et%04x_%d" % (et, n))


def gen_fuzz(c, n=2500):
    """Seeded mutations of valid frames of every kind: bytes and 16-bit
    fields of the headers set to random or boundary values, bits flipped,
    cuts. What the model says of each is what the daemon must do."""
    r = c.rng
    bases = [(fr, l3) for _, fr, l3, _ in _bases(c)]
    edges8 = (0x00, 0x01, 0x05, 0x06, 0x11, 0x2c, 0x3a, 0x40, 0x45, 0x4f,
              0x50, 0x60, 0x81, 0x86, 0x88, 0x91, 0xdd, 0xf0, 0xff)
    edges16 = (0, 1, 7, 8, 19, 20, 21, 39, 40, 0x0800, 0x0806, 0x86DD,
               0x8100, 0x88A8, 0x9100, 0x2000, 0x1FFF, 0x3FFF, 0xFFFF)
    made = 0
    while made < n:
        fr, l3 = r.choice(bases)
        b = bytearray(fr)
        for _ in range(r.choice((1, 1, 1, 2, 2, 3))):
            hi = min(len(b), l3 + 80)
            if hi < 14:
                break
            how = r.randrange(5)
            if how == 0:
                o = r.randrange(12, hi)
                b[o] = r.randrange(256)
            elif how == 1:
                o = r.randrange(12, hi)
                b[o] = r.choice(edges8)
            elif how == 2:
                o = r.randrange(12, hi - 1)
                v = r.choice(edges16 + (len(b) - l3, len(b) - l3 - 20,
                                        len(b) - l3 - 40))
                struct.pack_into("!H", b, o, v & 0xFFFF)
            elif how == 3:
                o = r.randrange(12, hi)
                b[o] ^= 1 << r.randrange(8)
            else:
                del b[r.randrange(l3, len(b) + 1):]
        made += c.add(b, "fuzz", "fuzz")


# --------------------------------------------------------------------------
# Valid traffic: the LB services, flows the ACL acts on, and others

def gen_valid(c):
    """Valid frames in flow order (kept in order in the final mix)."""
    r = c.rng
    out = []

    def add(fr, cat, kind):
        fr = pad60(fr)
        if fr not in c.seen:
            c.seen.add(fr)
            out.append(HPkt(fr, cat, kind))

    def tcp4_flow(src, dst, sport, dport, n, cat, kind, tags=(), size=(0, 60)):
        sm = c.smac()
        for k in range(n):
            add(eth(sm, 0x0800, tags) +
                ipv4(src, dst, 6,
                     tcp(sport, dport, filler(r, r.randint(*size)),
                         flags=0x02 if k == 0 else
                         (0x11 if k == n - 1 else 0x18),
                         seq=1000 + 100 * k), ident=k),
                cat, kind)

    def udp4_flow(src, dst, sport, dport, n, cat, kind, tags=()):
        sm = c.smac()
        for k in range(n):
            add(eth(sm, 0x0800, tags) +
                ipv4(src, dst, 17, udp(sport, dport, filler(r, r.randint(
                    0, 60))), ident=k), cat, kind)

    def tcp6_flow(src, dst, sport, dport, n, cat, kind, tags=()):
        sm = c.smac()
        for k in range(n):
            add(eth(sm, 0x86DD, tags) +
                ipv6(src, dst, 6, tcp(sport, dport, filler(r, r.randint(
                    0, 60)), seq=k), l4proto=(6, 0)), cat, kind)

    def udp6_flow(src, dst, sport, dport, n, cat, kind, tags=()):
        sm = c.smac()
        for k in range(n):
            add(eth(sm, 0x86DD, tags) +
                ipv6(src, dst, 17, udp(sport, dport, filler(r, r.randint(
                    0, 60)) + bytes([k])), l4proto=(17, 0)), cat, kind)

    flows = []
    for k in range(40):
        flows.append(lambda k=k: tcp4_flow(
            "198.51.100.%d" % (1 + k % 50), VIP4, 30000 + k, 80, 6,
            "valid_lb", "ipip4", tags=[(0x8100, 50)] if k % 5 == 0 else ()))
    for k in range(15):
        flows.append(lambda k=k: tcp4_flow(
            "198.51.100.%d" % (60 + k), VIP4, 31000 + k, 443, 5, "valid_lb",
            "dsr4"))
    for k in range(30):
        flows.append(lambda k=k: udp4_flow(
            "172.16.%d.%d" % (k // 10, k + 1), VIP4_NAT, 32000 + k, 53, 4,
            "valid_lb", "nat4"))
    for k in range(20):
        flows.append(lambda k=k: tcp6_flow(
            "2001:db8:90::%x" % (k + 1), VIP6_DSR, 33000 + k, 443, 5,
            "valid_lb", "dsr6"))
    for k in range(15):
        flows.append(lambda k=k: udp6_flow(
            "2001:db8:91::%x" % (k + 1), VIP6_IPIP, 34000 + k, 4500, 5,
            "valid_lb", "ipip6"))
    for k in range(8):
        flows.append(lambda k=k: tcp4_flow(
            "198.51.100.%d" % (80 + k), VIP4_DEAD, 35000 + k, 80, 3,
            "valid_lb", "no_backend"))
    for k in range(3):
        flows.append(lambda k=k: tcp4_flow(
            "198.51.100.%d" % (90 + k), VIP4, 36000 + k, 80, 2,
            "valid_lb", "ipip4_mtu", size=(1441, 1460)))
    # the ACL: DNS from 10/8 (dropped, also to the NAT VIP), from 10.9/16
    # (permitted by a higher priority), IPv6 to ports 1000-2000 from the
    # bad /48, GRE, sport 6000-6100, DSR VIP from privileged ports
    for k in range(15):
        flows.append(lambda k=k: udp4_flow(
            "10.%d.1.%d" % (k % 4 + 1, k + 1),
            VIP4_NAT if k % 2 else "198.51.100.53", 37000 + k, 53, 4,
            "valid_acl", "drop_dns10"))
    for k in range(6):
        flows.append(lambda k=k: udp4_flow(
            "10.9.0.%d" % (k + 1), VIP4_NAT if k % 2 else "198.51.100.53",
            37100 + k, 53, 4, "valid_acl", "permit_dns10_9"))
    for k in range(10):
        flows.append(lambda k=k: tcp6_flow(
            "2001:db8:bad::%x" % (k + 1), "2001:db8:92::1", 37200 + k,
            999 + k * 111, 3, "valid_acl", "drop6_range"))
    for k in range(6):
        flows.append(lambda k=k: tcp6_flow(
            "2001:db8:93::%x" % (k + 1), VIP6_DSR, 1000 - k * 100, 443, 3,
            "valid_acl", "drop_dsr6_lowport"))

    def gre(k):
        sm = c.smac()
        for j in range(3):
            add(eth(sm, 0x0800) + ipv4("198.51.100.160", "203.0.113.160", 47,
                                       struct.pack("!HH", 0, 0x0800) +
                                       filler(r, 20 + j + k)),
                "valid_acl", "drop_gre")
    for k in range(4):
        flows.append(lambda k=k: gre(k))
    for k in range(8):
        flows.append(lambda k=k: udp4_flow(
            "198.51.100.%d" % (170 + k), "203.0.113.170", 6000 + k * 14,
            9999, 3, "valid_acl", "drop_sport_range"))
    # marks (dscp 46 on IPv4 tcp 8000-8999 to 203.0.113/24, dscp 10 on
    # IPv6 udp to 2001:db8:cafe::/48), the boundaries left unmarked
    for k, dport in enumerate((7999, 8000, 8080, 8443, 8999, 9000)):
        flows.append(lambda k=k, dport=dport: tcp4_flow(
            "198.51.100.%d" % (180 + k), "203.0.113.%d" % (180 + k),
            42000 + k, dport, 4, "valid_acl", "mark4_%d" % dport,
            tags=[(0x8100, 60)] if k == 2 else ()))
    for k in range(5):
        flows.append(lambda k=k: udp6_flow(
            "2001:db8:94::%x" % (k + 1), "2001:db8:cafe::%x" % (k + 1),
            43000 + k, 443, 4, "valid_acl", "mark6"))
    flows.append(lambda: udp4_flow(POLICE_SRC, "203.0.113.200", 44000, 9000,
                                   40, "valid_acl", "police"))
    # other permitted traffic
    for k in range(30):
        flows.append(lambda k=k: (udp4_flow if k % 2 else tcp4_flow)(
            "198.51.100.%d" % (200 + k % 50), "203.0.113.%d" % (1 + k),
            45000 + k, 9100 + k, 5, "valid_other", "other4"))
    for k in range(15):
        flows.append(lambda k=k: (udp6_flow if k % 2 else tcp6_flow)(
            "2001:db8:95::%x" % (k + 1), "2001:db8:96::%x" % (k + 1),
            46000 + k, 9200 + k, 5, "valid_other", "other6"))
    r.shuffle(flows)
    for f in flows:
        f()
    return out


def icmp_quote_error(c, fam, vip, quote, typ=None, code=None):
    """An ICMP error from a router to @p vip quoting @p quote (bytes)."""
    sm = c.smac()
    if fam == 4:
        t, cd = (3, 4) if typ is None else (typ, code)
        msg = struct.pack("!BBHHH", t, cd, 0, 0, 1400) + quote
        msg = msg[:2] + struct.pack("!H", csum16(msg)) + msg[4:]
        return pad60(eth(sm, 0x0800) + ipv4("203.0.113.1", vip, 1, msg))
    t, cd = (2, 0) if typ is None else (typ, code)
    msg = struct.pack("!BBHI", t, cd, 0, 1280) + quote
    return eth(sm, 0x86DD) + ipv6("2001:db8:ff::1", vip, 58, msg,
                                  l4proto=(58, 0))


def gen_icmp_quotes(c):
    """ICMP errors to VIPs whose quotes are garbage (truncated, lengths
    that lie, the other family, a later fragment, extension headers, a
    protocol not TCP/UDP) or name no service's flow (a port or protocol
    of none, a source that is not the VIP): lib/lb drops them as
    icmp_bad_quote / icmp_no_service."""
    cli4, cli6 = "198.51.100.77", "2001:db8:77::1"
    seg = tcp(80, 40000, b"q" * 16, flags=0x12)
    q4 = ipv4(VIP4, cli4, 6, seg)
    q6 = ipv6(VIP6_DSR, cli6, 6, tcp(443, 40000, b"q" * 16, flags=0x12))
    add = lambda b, kind: c.add(b, "icmp_quote", kind)
    for n in (0, 4, 12, 20, 27):
        add(icmp_quote_error(c, 4, VIP4, q4[:n]), "trunc4_%d" % n)
    for n in (0, 20, 40, 47):
        add(icmp_quote_error(c, 6, VIP6_DSR, q6[:n]), "trunc6_%d" % n)
    b = bytearray(q4)
    struct.pack_into("!H", b, 2, 24)               # tot < IHL + 8
    add(icmp_quote_error(c, 4, VIP4, bytes(b)), "tot_lies")
    b = bytearray(q4[:40])
    b[0] = 0x4F                                    # IHL 60 > the quote
    add(icmp_quote_error(c, 4, VIP4, bytes(b)), "ihl_lies")
    b = bytearray(q4)
    b[0] = 0x43                                    # IHL 12
    add(icmp_quote_error(c, 4, VIP4, bytes(b)), "ihl_short")
    add(icmp_quote_error(c, 4, VIP4, q6), "v6_in_icmp4")
    add(icmp_quote_error(c, 6, VIP6_DSR, q4 + b"\0" * 20), "v4_in_icmp6")
    b = bytearray(q4)
    struct.pack_into("!H", b, 6, 0x0010)           # a later fragment
    add(icmp_quote_error(c, 4, VIP4, bytes(b)), "later_frag")
    add(icmp_quote_error(c, 4, VIP4, ipv4(VIP4, cli4, 47, b"\0" * 16)),
        "gre")
    add(icmp_quote_error(c, 6, VIP6_DSR,
                         ipv6(VIP6_DSR, cli6, 60, ext_opts(6, 0) + seg)),
        "ext_hdr")
    b = bytearray(ipv4(VIP4_NAT, cli4, 17, udp(53, 4444, b"u" * 8)))
    struct.pack_into("!H", b, 20 + 4, 4)           # UDP length 4
    add(icmp_quote_error(c, 4, VIP4_NAT, bytes(b)), "udp_len")
    # sound quotes of no service's flow
    add(icmp_quote_error(c, 4, VIP4, ipv4(VIP4, cli4, 6,
                                          tcp(81, 40000, b"q" * 16))),
        "no_port")
    add(icmp_quote_error(c, 4, VIP4, ipv4(VIP4, cli4, 17,
                                          udp(80, 40000, b"q" * 16))),
        "no_proto")
    add(icmp_quote_error(c, 4, VIP4, ipv4("192.0.2.99", cli4, 6, seg)),
        "not_the_vip")
    add(icmp_quote_error(c, 4, VIP4, q4[:24], typ=11, code=0),
        "time_exceeded_trunc")
    add(icmp_quote_error(c, 6, VIP6_DSR,
                         ipv6(VIP6_DSR, cli6, 6, tcp(444, 1, b"q" * 16))),
        "no_port6")
    # not to a VIP: left alone, whatever it quotes
    add(icmp_quote_error(c, 4, "192.0.2.99", q4[:12]), "not_to_a_vip")


# --------------------------------------------------------------------------
# The routed variant: replay0 with addresses (a routed one-armed port)

REPLAY_MAC = bytes.fromhex("027063617000")     # net_pcap's first port
ROUTED_GW_MAC = bytes.fromhex("020000009901")
ROUTED_ADDR4 = "100.64.0.5"
ROUTED_ADDR6 = "2001:db8:64::5"
ROUTED_CONFIG_ADDRS = [ROUTED_ADDR4 + "/24", ROUTED_ADDR6 + "/64"]
ROUTED_PORT = {"name": "replay0", "devargs": "net_null0",
               "addr": ROUTED_CONFIG_ADDRS,
               "gateway_mac": "02:00:00:00:99:01"}
# what lib/neigh takes on the routed port: the VIPs, local_addr(6) and
# the port's own addresses
ROUTED_OURS = (OURS4 | {ROUTED_ADDR4}, OURS6 | {ROUTED_ADDR6})


def routed_config(pipeline):
    """config() with replay0 routed: its addresses and gateway_mac."""
    return dict(config(pipeline), ports=[ROUTED_PORT])


def _snm(a):
    """The solicited-node group of IPv6 address a, and its MAC."""
    b = ip6b(a)
    g = "ff02::1:ff%02x:%02x%02x" % (b[13], b[14], b[15])
    return g, bytes.fromhex("3333ff") + b[13:16]


def gen_routed(c):
    """Frames for the routed path: TTL / hop limit 0, 1, 2 in transit
    (with IP options, extension headers, VLAN tags), malformed headers
    with TTL 1, ICMP errors, fragments and group sources at TTL 1 (never
    answered), frames for the port's own addresses, foreign unicast and
    group MACs with every kind of payload, and the port's own MAC as
    source (spoofed)."""
    r = c.rng
    pm = REPLAY_MAC
    add = lambda b, kind: c.add(b, "routed", kind)
    dst4, dst6 = "203.0.113.240", "2001:db8:f0::1"
    opts4 = b"\x07\x07\x04" + b"\0" * 4 + b"\x01"     # record route + NOP
    ext6 = (("hbh", 0, ext_opts(17, 0, 0)),
            ("dst", 60, ext_opts(17, 1, 60)),
            ("rt", 43, ext_routing(17)),
            ("frag0", 44, ext_frag(17, 0, 0, 0x5151)),
            ("hbh_dst", 0, ext_opts(60, 0, 0) + ext_opts(17, 0, 60)))
    for ttl in (0, 1, 2, 255):
        for k, (opts, tags) in enumerate(((b"", ()), (opts4, ()),
                                          (b"", [(0x8100, 5)]),
                                          (opts4, [(0x88A8, 6),
                                                   (0x8100, 7)]))):
            add(pad60(eth(c.smac(), 0x0800, tags, dst=pm) +
                      ipv4("198.51.100.230", dst4, 17,
                           udp(50000 + ttl, 33434 + k, filler(r, 12)),
                           ttl=ttl, opts=opts)), "ttl%d_v4_%d" % (ttl, k))
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("198.51.100.231", dst4, 6,
                       tcp(50100 + ttl, 80, filler(r, 8), flags=0x02),
                       ttl=ttl)), "ttl%d_tcp4" % ttl)
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("198.51.100.232", dst4, 1, icmp4(8, 0, filler(r, 8)),
                       ttl=ttl)), "ttl%d_echo4" % ttl)
        for tags in ((), [(0x8100, 8)]):
            add(pad60(eth(c.smac(), 0x86DD, tags, dst=pm) +
                      ipv6("2001:db8:e0::1", dst6, 17,
                           udp(50200 + ttl, 33434, filler(r, 12)),
                           hlim=ttl, l4proto=(17, 0))),
                "hlim%d_v6_%d" % (ttl, len(tags)))
        for nm, nh, x in ext6:
            add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                      ipv6("2001:db8:e0::2", dst6, nh,
                           x + udp(50300 + ttl, 33435, filler(r, 10)),
                           hlim=ttl, l4proto=(17, len(x)))),
                "hlim%d_%s" % (ttl, nm))
        add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                  ipv6("2001:db8:e0::3", dst6, 58,
                       struct.pack("!BBHHH", 128, 0, 0, 7, ttl) +
                       filler(r, 8), hlim=ttl, l4proto=(58, 0))),
            "hlim%d_echo6" % ttl)
    # big transit frames at TTL 1: the quote is cut at 576 / 1280 bytes
    for n in (600, 1400):
        add(eth(c.smac(), 0x0800, dst=pm) +
            ipv4("198.51.100.233", dst4, 17, udp(50400, 9, filler(r, n)),
                 ttl=1), "ttl1_big4_%d" % n)
        add(eth(c.smac(), 0x86DD, dst=pm) +
            ipv6("2001:db8:e0::4", dst6, 17, udp(50400, 9, filler(r, n)),
                 hlim=1, l4proto=(17, 0)), "hlim1_big6_%d" % n)
    # too big for the ipip tunnel and not to be fragmented (IPv4 DF, IPv6):
    # on a routed port lib/lb answers fragmentation needed / too big
    add(eth(c.smac(), 0x0800, dst=pm) +
        ipv4("198.51.100.229", VIP4, 6, tcp(50050, 80, filler(r, 1460),
                                            flags=0x10), frag=0x4000),
        "too_big4_df")
    add(eth(c.smac(), 0x86DD, dst=pm) +
        ipv6("2001:db8:e0::b", VIP6_IPIP, 17,
             udp(50051, 4500, filler(r, 1440)), l4proto=(17, 0)),
        "too_big6")
    # malformed IP headers with TTL 1: never answered
    good = ipv4("198.51.100.234", dst4, 17, udp(50500, 9, filler(r, 12)),
                ttl=1)
    for cut in (14 + 8, 14 + 9, 14 + 19):
        add((eth(c.smac(), 0x0800, dst=pm) + good)[:cut], "ttl1_cut%d" % cut)
    for nm, ihl, tot in (("ihl4", 4, None), ("ihl15", 15, None),
                         ("tot_long", 5, 400), ("tot_short", 5, 19)):
        b = bytearray(good)
        b[0] = 0x40 | ihl
        if tot is not None:
            struct.pack_into("!H", b, 2, tot)
        add(eth(c.smac(), 0x0800, dst=pm) + bytes(b), "ttl1_" + nm)
    g6 = ipv6("2001:db8:e0::5", dst6, 17, udp(50500, 9, filler(r, 12)),
              hlim=1, l4proto=(17, 0))
    for cut in (14 + 8, 14 + 39):
        add((eth(c.smac(), 0x86DD, dst=pm) + g6)[:cut], "hlim1_cut%d" % cut)
    b = bytearray(g6)
    struct.pack_into("!H", b, 4, 300)
    add(eth(c.smac(), 0x86DD, dst=pm) + bytes(b), "hlim1_plen_long")
    add(eth(c.smac(), 0x86DD, dst=pm) +
        ipv6("2001:db8:e0::5", dst6, 0, ext_opts(0, 0, 0) * 9 + b"\0" * 8,
             hlim=1), "hlim1_ext_loop")
    # ICMP errors at TTL 1 (no error about an error); queries answered
    q4 = ipv4(dst4, "198.51.100.235", 17, udp(9, 50600, b"x" * 8))
    for typ, code in ((3, 1), (3, 4), (11, 0), (12, 0), (5, 1), (4, 0),
                      (0, 0), (13, 0)):
        body = q4 if typ in (3, 4, 5, 11, 12) else filler(r, 8)
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("198.51.100.235", dst4, 1, icmp4(typ, code, body),
                       ttl=1)), "ttl1_icmp4_%d_%d" % (typ, code))
    q6 = ipv6(dst6, "2001:db8:e0::6", 17, udp(9, 50600, b"x" * 8))
    for typ in (1, 2, 3, 4, 127, 128, 129, 200):
        add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                  ipv6("2001:db8:e0::6", dst6, 58,
                       struct.pack("!BBHI", typ, 0, 0, 0) + q6, hlim=1,
                       l4proto=(58, 0))), "hlim1_icmp6_%d" % typ)
    add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
              ipv6("2001:db8:e0::6", dst6, 60,
                   ext_opts(58, 0, 60) + struct.pack("!BBHI", 1, 0, 0, 0) +
                   q6, hlim=1, l4proto=(58, 8))), "hlim1_icmp6_err_ext")
    # fragments at TTL 1: only the first is answered
    for off, mf, nm in ((0, 1, "first"), (8, 1, "mid"), (16, 0, "last")):
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("198.51.100.236", dst4, 17,
                       udp(50700, 9, b"f" * 16) if off == 0 else
                       b"f" * 16, frag=(mf << 13) | (off // 8),
                       ident=0x99, ttl=1)), "ttl1_frag4_" + nm)
        add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                  ipv6("2001:db8:e0::7", dst6, 44,
                       ext_frag(17, off // 8, mf, 0x9999) +
                       (udp(50700, 9, b"f" * 16) if off == 0 else
                        b"f" * 16), hlim=1)), "hlim1_frag6_" + nm)
    # group / unspecified / loopback sources at TTL 1: no answer
    for src in ("224.0.0.9", "255.255.255.255", "0.0.0.0", "127.0.0.1",
                "240.0.0.1"):
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4(src, dst4, 17, udp(50800, 9, filler(r, 8)), ttl=1)),
            "ttl1_src_" + src)
    for src in ("ff02::1", "ff0e::5", "::"):
        add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                  ipv6(src, dst6, 17, udp(50800, 9, filler(r, 8)), hlim=1,
                       l4proto=(17, 0))), "hlim1_src_" + src)
    # for the port itself, whatever the TTL: to_self
    for ttl in (0, 1, 64):
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("198.51.100.237", ROUTED_ADDR4, 6,
                       tcp(50900 + ttl, 22, flags=0x02), ttl=ttl)),
            "self4_ttl%d" % ttl)
        add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
                  ipv6("2001:db8:e0::8", ROUTED_ADDR6, 58,
                       struct.pack("!BBHHH", 128, 0, 0, 1, ttl),
                       hlim=ttl, l4proto=(58, 0))), "self6_hlim%d" % ttl)
    for dst in ("255.255.255.255", "224.0.0.1", "239.1.2.3", "100.64.0.255"):
        add(pad60(eth(c.smac(), 0x0800, dst=pm) +
                  ipv4("100.64.0.9", dst, 17, udp(51000, 9, filler(r, 8)),
                       ttl=1)), "ip_group_" + dst)
    add(pad60(eth(c.smac(), 0x86DD, dst=pm) +
              ipv6("fe80::9", "ff02::2", 58,
                   struct.pack("!BBHI", 133, 0, 0, 0), hlim=255,
                   l4proto=(58, 0))), "rs6_to_port_mac")
    # ARP / ND for the port's addresses: answered
    add(pad60(eth(mac(0x6401), 0x0806, dst=b"\xff" * 6) +
              arp(1, mac(0x6401), "100.64.0.1", bytes(6), ROUTED_ADDR4)),
        "arp_port_addr")
    add(pad60(eth(mac(0x6402), 0x0806, dst=pm) +
              arp(1, mac(0x6402), "100.64.0.2", pm, ROUTED_ADDR4)),
        "arp_port_addr_unicast")
    grp, gmac = _snm(ROUTED_ADDR6)
    add(eth(mac(0x6403), 0x86DD, dst=gmac) +
        ipv6("2001:db8:64::3", grp, 58,
             nd(135, None, None, ROUTED_ADDR6, lladdr=mac(0x6403)),
             hlim=255, l4proto=(58, 0)), "ns_port_addr")
    # solicited-node groups: of another address, and ours carrying other
    # than ND (both not_ours)
    ograp, ogmac = _snm("2001:db8:64::77")
    add(eth(mac(0x6404), 0x86DD, dst=ogmac) +
        ipv6("2001:db8:64::3", ograp, 58,
             nd(135, None, None, "2001:db8:64::77", lladdr=mac(0x6404)),
             hlim=255, l4proto=(58, 0)), "ns_other_snm")
    add(pad60(eth(mac(0x6405), 0x86DD, dst=gmac) +
              ipv6("2001:db8:64::3", grp, 17, udp(1, 2, b"x"),
                   l4proto=(17, 0))), "udp_to_our_snm")
    # foreign and group destination MACs, every kind of payload
    bodies = (
        (0x0800, ipv4("198.51.100.238", dst4, 17, udp(51100, 9, b"y" * 8))),
        (0x0800, ipv4("198.51.100.238", dst4, 17, udp(51101, 9, b"y" * 8),
                      ttl=1)),
        (0x0800, ipv4("198.51.100.238", ROUTED_ADDR4, 6, tcp(51102, 22))),
        (0x0800, ipv4("198.51.100.238", VIP4, 6, tcp(51103, 80,
                                                     flags=0x02))),
        (0x86DD, ipv6("2001:db8:e0::9", dst6, 17, udp(51104, 9, b"y" * 8),
                      l4proto=(17, 0))),
        (0x86DD, ipv6("2001:db8:e0::9", VIP6_DSR, 6,
                      tcp(51105, 443, flags=0x02), l4proto=(6, 0))),
        (0x86DD, ipv6("fe80::9", "ff02::1:ff00:5", 58,
                      nd(135, None, None, ROUTED_ADDR6, lladdr=mac(0x6406)),
                      hlim=255, l4proto=(58, 0))),
        (0x0806, arp(1, mac(0x6407), "100.64.0.7", bytes(6), ROUTED_ADDR4)),
        (0x0806, arp(2, mac(0x6408), "100.64.0.8", pm, ROUTED_ADDR4)),
        (0x88CC, filler(r, 40)), (0x8847, b"\x00\x01\x41\x40" + ipv4(
            "198.51.100.238", dst4, 17, udp(51106, 9))),
        (0x8863, filler(r, 30)), (0x0600, filler(r, 30)),
        (0x05DC, filler(r, 30)), (0x88B5, filler(r, 30)))
    for d in (APPLIANCE_MAC, ROUTED_GW_MAC, mac(0x640a),
              bytes.fromhex("0180c2000000"), bytes.fromhex("0180c200000e"),
              bytes.fromhex("01005e000005"), bytes.fromhex("01005e7f0001"),
              bytes.fromhex("333300000002"), bytes.fromhex("3333000000fb"),
              ogmac, bytes.fromhex("030000000001"), bytes(6),
              pm[:5] + b"\x01", b"\x03" + pm[1:]):
        for k, (et, body) in enumerate(bodies):
            tags = [(0x8100, 9)] if k % 3 == 2 else ()
            add(pad60(eth(c.smac(), et, tags, dst=d) + body),
                "foreign_%s_%d" % (d.hex(), k))
    # broadcast and all-nodes: to_self, unless ARP/ND the port answers
    for d in (b"\xff" * 6, bytes.fromhex("333300000001")):
        for k, (et, body) in enumerate(bodies):
            add(pad60(eth(c.smac(), et, dst=d) + body),
                "group_%s_%d" % (d.hex(), k))
    # the port's own MAC as source (spoofed): transit, TTL 1, to itself,
    # ARP from it (refused), a VIP
    for k, (et, body) in enumerate(bodies):
        add(pad60(eth(pm, et, dst=pm) + body), "own_src_%d" % k)
        add(pad60(eth(pm, et, dst=b"\xff" * 6) + body), "own_src_bc_%d" % k)
    # group source MACs at TTL 1 and in transit
    for sm in (b"\xff" * 6, bytes.fromhex("01005e000001"),
               bytes.fromhex("333300000001"), bytes(6)):
        for ttl in (1, 64):
            add(pad60(eth(sm, 0x0800, dst=pm) +
                      ipv4("198.51.100.239", dst4, 17,
                           udp(51200 + ttl, 9, filler(r, 8)), ttl=ttl)),
                "grp_src_%s_ttl%d" % (sm.hex(), ttl))
            add(pad60(eth(sm, 0x86DD, dst=pm) +
                      ipv6("2001:db8:e0::a", dst6, 17,
                           udp(51200 + ttl, 9, filler(r, 8)), hlim=ttl,
                           l4proto=(17, 0))),
                "grp_src6_%s_ttl%d" % (sm.hex(), ttl))


def build_routed(seed=SEED):
    """The corpus for the routed replay port: build()'s frames to the
    appliance's MAC readdressed to the port's (REPLAY_MAC; every other
    destination kept, so broadcast, groups and truncated MACs stay), and
    gen_routed()'s frames mixed in at seeded places. Frames are unique."""
    base = build(seed)
    c = Corpus(seed + 1)
    for p in base:
        d = p.data
        if d[:6] == APPLIANCE_MAC:
            d = REPLAY_MAC + d[6:]
        c.add(d, p.cat, p.kind)
    mixed = c.pkts
    c.pkts = []
    gen_routed(c)
    extra = c.pkts
    total = len(mixed) + len(extra)
    at = set(c.rng.sample(range(total), len(extra)))
    ei, mi = iter(extra), iter(mixed)
    return [next(ei) if k in at else next(mi) for k in range(total)]


def build(seed=SEED):
    """The corpus: a list of HPkt."""
    c = Corpus(seed)
    for g in (gen_truncations, gen_ipv4_fields, gen_ipv6_ext, gen_big,
              gen_frags, gen_vlan, gen_tiny, gen_checksums, gen_mcast,
              gen_tcp_udp, gen_arp_nd, gen_non_ip, gen_icmp_quotes,
              gen_fuzz):
        g(c)
    hostile = c.pkts
    c.rng.shuffle(hostile)
    valid = gen_valid(c)
    # interleave: valid frames keep their order, hostile ones around them
    total = len(hostile) + len(valid)
    at = set(c.rng.sample(range(total), len(valid)))
    hi, vi = iter(hostile), iter(valid)
    out = [next(vi) if k in at else next(hi) for k in range(total)]
    build.duplicates = dict(c.dups)
    return out


def summary_lines(pkts):
    cats = collections.OrderedDict()
    for p in pkts:
        st = cats.setdefault(p.cat, collections.Counter())
        st["frames"] += 1
        err, _ = parse(p.data)
        st["malformed" if err else "well-formed"] += 1
    lines = []
    for cat, st in sorted(cats.items()):
        lines.append("%-12s %5d frames, %5d malformed" % (
            cat, st["frames"], st["malformed"]))
    lines.append("%-12s %5d frames, %5d malformed" % (
        "total", len(pkts), sum(1 for p in pkts if parse(p.data)[0])))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("-o", "--output", default="hostile.pcap")
    ap.add_argument("--config", help="also write a matching configuration")
    ap.add_argument("--pipeline", default="rtc", choices=("rtc", "pipeline"))
    a = ap.parse_args(argv)
    pkts = build(a.seed)
    write_pcap(a.output, [p.data for p in pkts])
    if a.config:
        with open(a.config, "w") as f:
            json.dump(config({"mode": a.pipeline}), f, indent=1)
    print("%s: %d frames, %d bytes" % (a.output, len(pkts),
                                       os.path.getsize(a.output)))
    for ln in summary_lines(pkts):
        print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())
