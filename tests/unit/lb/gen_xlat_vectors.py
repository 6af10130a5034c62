#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test vectors of lib/lb/lb_xlat.c (RFC 7915 translation for full NAT):
each a frame, the call made on it and the frame expected back, built with
scapy from the RFC's rules (not from the C code), written as the C header
xlat_vectors.h that tests/unit/lb/test_lb_xlat.c compares byte for byte.

    /usr/bin/python3 tests/unit/lb/gen_xlat_vectors.py > tests/unit/lb/xlat_vectors.h

The rules the expected frames follow (lb_xlat.h): TTL / hop limit copied,
TOS <-> traffic class copied, flow label 0; IPv6 -> IPv4 with the given
identification, DF only above 1260 bytes; quoted IPv4 headers with id 0;
ICMP types, codes, pointers and MTUs as RFC 7915 4.2 / 5.2 map them;
translated ICMP errors cut to 1280 (IPv6) / 576 (IPv4) bytes; Ethernet
padding removed. Checksums are scapy's, computed afresh over the whole
packet (a quote's L4 checksum is that of the whole translated packet it
is cut from), so they check the C code's incremental updates.
"""

import struct
import sys

from scapy.all import (IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPv6, Raw,
                       raw)
from scapy.utils import checksum
from scapy.layers.inet6 import in6_chksum

MAC_D = "02:00:00:00:00:01"
MAC_S = "02:00:00:00:00:02"

CLIENT4, VIP4, POOL4, BACKEND4 = ("203.0.113.9", "192.0.2.10",
                                  "198.51.100.50", "10.1.0.7")
CLIENT6, VIP6, POOL6, BACKEND6 = ("2001:db8:c::9", "2001:db8:ffff::40",
                                  "2001:db8:5::50", "2001:db8:b::7")
ROUTER4, ROUTER6 = "10.0.0.1", "2001:db8:e::1"


def payload(n, seed):
    return bytes((seed + 7 * i) & 0xff for i in range(n))


def l4(proto, sport, dport, n, seed, chksum=None):
    if proto == "tcp":
        h = TCP(sport=sport, dport=dport, seq=0x01020304 + seed,
                ack=0x0a0b0c0d, flags="PA", window=0x7210)
    else:
        h = UDP(sport=sport, dport=dport)
    if chksum is not None:
        h.chksum = chksum
    return h / Raw(payload(n, seed))


def ip4(src, dst, tos=0, ttl=64, ident=0, flags=0):
    return IP(src=src, dst=dst, tos=tos, ttl=ttl, id=ident, flags=flags)


def ip6(src, dst, tc=0, fl=0, hlim=64):
    return IPv6(src=src, dst=dst, tc=tc, fl=fl, hlim=hlim)


def df(total):
    return "DF" if total > 1260 else 0


def icmp4(typ, code, word, body):
    h = struct.pack("!BBHI", typ, code, 0, word) + body
    return h[:2] + struct.pack("!H", checksum(h)) + h[4:]


def icmp6(src, dst, typ, code, word, body):
    h = struct.pack("!BBHI", typ, code, 0, word) + body
    ck = in6_chksum(58, IPv6(src=src, dst=dst), h)
    return h[:2] + struct.pack("!H", ck) + h[4:]


def eth(*tags):
    e = Ether(dst=MAC_D, src=MAC_S)
    for t in tags:
        e = e / t
    return e


def pad60(b):
    return b + bytes(max(0, 60 - len(b)))


VECS = []


def vec(name, op, frame_in, frame_out, ofam=0, src=None, dst=None,
        qsrc=None, qdst=None, sport=0, dport=0, ip_id=0, doc=""):
    VECS.append(dict(name=name, op=op, fin=bytes(frame_in),
                     fout=bytes(frame_out), ofam=ofam, src=src, dst=dst,
                     qsrc=qsrc, qdst=qdst, sport=sport, dport=dport,
                     ip_id=ip_id, doc=doc))


# ---------------------------------------------------------------- TCP/UDP

# client -> IPv4 VIP, out to an IPv6 backend from the pool
vec("tcp_4to6", "4to6",
    raw(eth() / ip4(CLIENT4, VIP4, tos=0x28, ttl=57, ident=0x1234,
                    flags="DF") / l4("tcp", 40000, 80, 100, 1)),
    raw(eth() / ip6(POOL6, BACKEND6, tc=0x28, hlim=57) /
        l4("tcp", 2000, 8443, 100, 1)),
    src=POOL6, dst=BACKEND6, sport=2000, dport=8443,
    doc="TCP client -> IPv4 VIP, to an IPv6 backend")

# client -> IPv6 VIP, out to an IPv4 backend: DF clear at <= 1260 bytes
vec("tcp_6to4", "6to4",
    raw(eth() / ip6(CLIENT6, VIP6, tc=0xb8, fl=0x12345, hlim=60) /
        l4("tcp", 40001, 443, 100, 2)),
    raw(eth() / ip4(POOL4, BACKEND4, tos=0xb8, ttl=60, ident=0xbeef) /
        l4("tcp", 2001, 8443, 100, 2)),
    src=POOL4, dst=BACKEND4, sport=2001, dport=8443, ip_id=0xbeef,
    doc="TCP client -> IPv6 VIP, to an IPv4 backend")

# a long one: DF set above 1260 bytes
vec("tcp_6to4_df", "6to4",
    raw(eth() / ip6(CLIENT6, VIP6, hlim=61) / l4("tcp", 40002, 443, 1400, 3)),
    raw(eth() / ip4(POOL4, BACKEND4, ttl=61, ident=0x0102, flags="DF") /
        l4("tcp", 2002, 8443, 1400, 3)),
    src=POOL4, dst=BACKEND4, sport=2002, dport=8443, ip_id=0x0102,
    doc="1440-byte IPv4 result: DF")

# the DF boundary: 1260 bytes clear, 1261 set
vec("udp_6to4_1260", "6to4",
    raw(eth() / ip6(CLIENT6, VIP6, hlim=62) / l4("udp", 40020, 53, 1232, 20)),
    raw(eth() / ip4(POOL4, BACKEND4, ttl=62, ident=0x1260) /
        l4("udp", 2020, 53, 1232, 20)),
    src=POOL4, dst=BACKEND4, sport=2020, dport=53, ip_id=0x1260,
    doc="1260-byte IPv4 result: DF clear")
vec("udp_6to4_1261", "6to4",
    raw(eth() / ip6(CLIENT6, VIP6, hlim=62) / l4("udp", 40021, 53, 1233, 21)),
    raw(eth() / ip4(POOL4, BACKEND4, ttl=62, ident=0x1261, flags="DF") /
        l4("udp", 2021, 53, 1233, 21)),
    src=POOL4, dst=BACKEND4, sport=2021, dport=53, ip_id=0x1261,
    doc="1261-byte IPv4 result: DF")

# an IPv6 UDP checksum of 0 (tunnels send it): IPv4's "none"
vec("udp0_6to4", "6to4",
    raw(eth() / ip6(CLIENT6, VIP6, hlim=62) / l4("udp", 40022, 4789, 50, 22,
                                                 chksum=0)),
    raw(eth() / ip4(POOL4, BACKEND4, ttl=62, ident=7) /
        l4("udp", 2022, 4789, 50, 22, chksum=0)),
    src=POOL4, dst=BACKEND4, sport=2022, dport=4789, ip_id=7,
    doc="IPv6 UDP checksum 0 stays 0 in IPv4")

# the reply of an IPv6 backend to an IPv4 client (UDP)
vec("udp_6to4", "6to4",
    raw(eth() / ip6(BACKEND6, POOL6, hlim=64) / l4("udp", 53, 2003, 41, 4)),
    raw(eth() / ip4(VIP4, CLIENT4, ttl=64, ident=0x5555) /
        l4("udp", 53, 40003, 41, 4)),
    src=VIP4, dst=CLIENT4, sport=53, dport=40003, ip_id=0x5555,
    doc="UDP reply of an IPv6 backend to an IPv4 client")

vec("udp_4to6", "4to6",
    raw(eth() / ip4(BACKEND4, POOL4, ttl=63, ident=9) /
        l4("udp", 53, 2004, 41, 5)),
    raw(eth() / ip6(VIP6, CLIENT6, hlim=63) / l4("udp", 53, 40004, 41, 5)),
    src=VIP6, dst=CLIENT6, sport=53, dport=40004,
    doc="UDP reply of an IPv4 backend to an IPv6 client")

# IPv4 UDP without checksum: IPv6 gets one over the whole datagram (odd
# length)
vec("udp0_4to6", "4to6",
    raw(eth() / ip4(CLIENT4, VIP4, ttl=50) / l4("udp", 40005, 53, 33, 6,
                                                 chksum=0)),
    raw(eth() / ip6(POOL6, BACKEND6, hlim=50) / l4("udp", 2005, 5353, 33, 6)),
    src=POOL6, dst=BACKEND6, sport=2005, dport=5353,
    doc="IPv4 UDP checksum 0: computed for IPv6")

# a short frame: Ethernet padding is not carried over
vec("udp_pad_4to6", "4to6",
    pad60(raw(eth() / ip4(CLIENT4, VIP4, ttl=50) / l4("udp", 40006, 53, 4,
                                                       7))),
    raw(eth() / ip6(POOL6, BACKEND6, hlim=50) / l4("udp", 2006, 53, 4, 7)),
    src=POOL6, dst=BACKEND6, sport=2006, dport=53,
    doc="padded 60-byte frame: padding dropped")

vec("vlan_4to6", "4to6",
    raw(eth(Dot1Q(vlan=100, prio=3)) / ip4(CLIENT4, VIP4, ttl=40) /
        l4("udp", 40007, 53, 20, 8)),
    raw(eth(Dot1Q(vlan=100, prio=3)) / ip6(POOL6, BACKEND6, hlim=40) /
        l4("udp", 2007, 53, 20, 8)),
    src=POOL6, dst=BACKEND6, sport=2007, dport=53,
    doc="802.1Q frame: the tag moves, its ethertype changes")

vec("qinq_6to4", "6to4",
    raw(eth(Dot1AD(vlan=10), Dot1Q(vlan=200)) / ip6(CLIENT6, VIP6, hlim=33) /
        l4("tcp", 40008, 443, 60, 9)),
    raw(eth(Dot1AD(vlan=10), Dot1Q(vlan=200)) /
        ip4(POOL4, BACKEND4, ttl=33, ident=0x0808) /
        l4("tcp", 2008, 443, 60, 9)),
    src=POOL4, dst=BACKEND4, sport=2008, dport=443, ip_id=0x0808,
    doc="802.1ad + 802.1Q frame: both tags move, the inner ethertype changes")

# ---------------------------------------------------------------- ICMP


def err4(src, dst, typ, code, word, quote, ttl=250, tos=0, ident=0x4321,
         tags=()):
    ip = ip4(src, dst, tos=tos, ttl=ttl, ident=ident)
    ip.proto = 1
    return raw(eth(*tags) / ip / Raw(icmp4(typ, code, word, quote)))


def err6(src, dst, typ, code, word, quote, hlim=250, tc=0, tags=()):
    ip = ip6(src, dst, tc=tc, hlim=hlim)
    ip.nh = 58
    return raw(eth(*tags) / ip / Raw(icmp6(src, dst, typ, code, word, quote)))


# An IPv6 VIP on IPv4 backends. What the appliance sent the backend
# (pool4 -> backend4), and what the client had sent (client6 -> VIP6) as
# it is quoted back to the client.
P4_UDP = raw(ip4(POOL4, BACKEND4, tos=0x10, ttl=64, ident=0x7777) /
             l4("udp", 2010, 53, 30, 10))
P6_UDP = raw(ip6(CLIENT6, VIP6, tc=0x10, hlim=64) /
             l4("udp", 40010, 53, 30, 10))

vec("icmp_port_unreach_4to6", "icmp",
    err4(BACKEND4, POOL4, 3, 3, 0, P4_UDP),
    err6(VIP6, CLIENT6, 1, 4, 0, P6_UDP),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40010, dport=53,
    doc="ICMPv4 port unreachable -> ICMPv6 destination unreachable, port")

# fragmentation needed, MTU 1400, quoting the header and 8 bytes (RFC 792)
P4_BIG = raw(ip4(POOL4, BACKEND4, ttl=64, ident=0x1111, flags="DF") /
             l4("tcp", 2011, 8443, 1460, 11))
P6_BIG = raw(ip6(CLIENT6, VIP6, hlim=64) / l4("tcp", 40011, 443, 1460, 11))
vec("icmp_frag_needed_4to6", "icmp",
    err4(ROUTER4, POOL4, 3, 4, 1400, P4_BIG[:28]),
    err6(VIP6, CLIENT6, 2, 0, 1420, P6_BIG[:48]),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40011, dport=443,
    doc="fragmentation needed, MTU 1400 -> packet too big, MTU 1420; "
        "quote of the header + 8 bytes")

# MTU 1000: packet too big says 1280 at least
vec("icmp_frag_needed_min_4to6", "icmp",
    err4(ROUTER4, POOL4, 3, 4, 1000, P4_BIG[:68]),
    err6(VIP6, CLIENT6, 2, 0, 1280, P6_BIG[:88]),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40011, dport=443,
    doc="MTU 1000 -> 1280 (IPv6 minimum); the quoted TCP checksum fixed")

# MTU 0 (a router before RFC 1191): the plateau below 1500 is 1492
vec("icmp_frag_needed_mtu0_4to6", "icmp",
    err4(ROUTER4, POOL4, 3, 4, 0, P4_BIG[:28]),
    err6(VIP6, CLIENT6, 2, 0, 1512, P6_BIG[:48]),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40011, dport=443,
    doc="MTU 0 -> RFC 1191 plateau 1492 + 20")

# a quote that ends inside the TCP checksum (17 bytes of TCP): the half
# checksum cannot be updated and stays as it was
Q_HALF = bytearray(P6_BIG[:40 + 17])
Q_HALF[40 + 16] = P4_BIG[20 + 16]
vec("icmp_quote_cut_in_checksum_4to6", "icmp",
    err4(ROUTER4, POOL4, 11, 0, 0, P4_BIG[:20 + 17]),
    err6(VIP6, CLIENT6, 3, 0, 0, bytes(Q_HALF)),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40011, dport=443,
    doc="a quote cut inside the TCP checksum: that byte untouched")

# time exceeded with a long quote: the ICMPv6 error is cut to 1280
vec("icmp_time_exceeded_4to6", "icmp",
    err4(ROUTER4, POOL4, 11, 0, 0, P4_BIG[:1252], ttl=9, tos=0xc0),
    err6(VIP6, CLIENT6, 3, 0, 0, P6_BIG[:1280 - 48], hlim=9, tc=0xc0),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40011, dport=443,
    doc="time exceeded with a 1252-byte quote: cut to a 1280-byte ICMPv6")

# parameter problem, pointer 8 (TTL) -> 7 (hop limit)
vec("icmp_param_problem_4to6", "icmp",
    err4(BACKEND4, POOL4, 12, 0, 8 << 24, P4_UDP),
    err6(VIP6, CLIENT6, 4, 0, 7, P6_UDP),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40010, dport=53,
    doc="parameter problem, pointer 8 (TTL) -> 7 (hop limit)")

# protocol unreachable -> parameter problem, next header, pointer 6
vec("icmp_proto_unreach_4to6", "icmp",
    err4(BACKEND4, POOL4, 3, 2, 0, P4_UDP),
    err6(VIP6, CLIENT6, 4, 1, 6, P6_UDP),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40010, dport=53,
    doc="protocol unreachable -> parameter problem code 1, pointer 6")

# An IPv4 VIP on IPv6 backends: the appliance sent pool6 -> backend6, the
# client had sent client4 -> VIP4.
P6_BIG_B = raw(ip6(POOL6, BACKEND6, tc=0x20, hlim=64) /
               l4("tcp", 2012, 8443, 1400, 12))
P4_BIG_B = raw(ip4(CLIENT4, VIP4, tos=0x20, ttl=64, flags="DF") /
               l4("tcp", 40012, 443, 1400, 12))
vec("icmp_too_big_6to4", "icmp",
    err6(ROUTER6, POOL6, 2, 0, 1280, P6_BIG_B[:1280 - 48], hlim=61),
    err4(VIP4, CLIENT4, 3, 4, 1260, P4_BIG_B[:576 - 28], ttl=61,
         ident=0x0a0b),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40012, dport=443, ip_id=0x0a0b,
    doc="packet too big, MTU 1280 -> fragmentation needed, MTU 1260; "
        "cut to a 576-byte ICMPv4; quoted DF (1420 bytes)")

# an MTU below IPv6's minimum is not believed: 1280 - 20
vec("icmp_too_big_below_1280_6to4", "icmp",
    err6(ROUTER6, POOL6, 2, 0, 1000, P6_BIG_B[:200], hlim=61),
    err4(VIP4, CLIENT4, 3, 4, 1260, P4_BIG_B[:180], ttl=61, ident=4),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40012, dport=443, ip_id=4,
    doc="packet too big, MTU 1000 (below 1280) -> 1260")

P6_UDP_B = raw(ip6(POOL6, BACKEND6, hlim=64) / l4("udp", 2013, 53, 30, 13))
P4_UDP_B = raw(ip4(CLIENT4, VIP4, ttl=64) / l4("udp", 40013, 53, 30, 13))
vec("icmp_port_unreach_6to4", "icmp",
    err6(BACKEND6, POOL6, 1, 4, 0, P6_UDP_B),
    err4(VIP4, CLIENT4, 3, 3, 0, P4_UDP_B, ident=0x0c0d),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40013, dport=53, ip_id=0x0c0d,
    doc="ICMPv6 port unreachable -> ICMPv4 port unreachable")

vec("icmp_time_exceeded_6to4", "icmp",
    err6(ROUTER6, POOL6, 3, 1, 0, P6_UDP_B, hlim=3),
    err4(VIP4, CLIENT4, 11, 1, 0, P4_UDP_B, ttl=3, ident=0x0e0f),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40013, dport=53, ip_id=0x0e0f,
    doc="time exceeded (reassembly) -> time exceeded, code 1")

# parameter problem pointer 7 (hop limit) -> 8 (TTL), and 24 -> 16
vec("icmp_param_problem_6to4", "icmp",
    err6(BACKEND6, POOL6, 4, 0, 7, P6_UDP_B),
    err4(VIP4, CLIENT4, 12, 0, 8 << 24, P4_UDP_B, ident=1),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40013, dport=53, ip_id=1,
    doc="parameter problem, pointer 7 (hop limit) -> 8 (TTL)")
vec("icmp_param_problem_dst_6to4", "icmp",
    err6(BACKEND6, POOL6, 4, 0, 30, P6_UDP_B),
    err4(VIP4, CLIENT4, 12, 0, 16 << 24, P4_UDP_B, ident=1),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40013, dport=53, ip_id=1,
    doc="parameter problem, pointer 30 (destination) -> 16")

# unrecognised next header -> protocol unreachable
vec("icmp_next_header_6to4", "icmp",
    err6(BACKEND6, POOL6, 4, 1, 6, P6_UDP_B),
    err4(VIP4, CLIENT4, 3, 2, 0, P4_UDP_B, ident=2),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40013, dport=53, ip_id=2,
    doc="parameter problem code 1 -> protocol unreachable")

# The other direction: the IPv6 client's router says its reply was too
# big; the IPv4 backend hears it about what it sent (backend4 -> pool4).
R6 = raw(ip6(VIP6, CLIENT6, hlim=64) / l4("tcp", 443, 40014, 1400, 14))
R4 = raw(ip4(BACKEND4, POOL4, ttl=64, flags="DF") /
         l4("tcp", 8443, 2014, 1400, 14))
vec("icmp_client_too_big_6to4", "icmp",
    err6(ROUTER6, VIP6, 2, 0, 1400, R6[:200]),
    err4(POOL4, BACKEND4, 3, 4, 1380, R4[:180], ident=3),
    ofam=4, src=POOL4, dst=BACKEND4, qsrc=BACKEND4, qdst=POOL4,
    sport=8443, dport=2014, ip_id=3,
    doc="a client-side packet too big reaches the IPv4 backend")

# Same family, IPv4 and IPv6: addresses and ports only
P4_SAME = raw(ip4(POOL4, BACKEND4, ttl=64, ident=0x2222) /
              l4("udp", 2015, 53, 30, 15))
Q4_SAME = raw(ip4(CLIENT4, VIP4, ttl=64, ident=0x2222) /
              l4("udp", 40015, 53, 30, 15))
vec("icmp_same_family_4", "icmp",
    err4(BACKEND4, POOL4, 3, 3, 0, P4_SAME, tags=(Dot1Q(vlan=7),)),
    err4(VIP4, CLIENT4, 3, 3, 0, Q4_SAME, tags=(Dot1Q(vlan=7),)),
    ofam=4, src=VIP4, dst=CLIENT4, qsrc=CLIENT4, qdst=VIP4,
    sport=40015, dport=53,
    doc="IPv4 port unreachable to an IPv4 client (802.1Q)")

P6_SAME = raw(ip6(POOL6, BACKEND6, hlim=64) /
              l4("tcp", 2016, 8443, 1400, 16))
Q6_SAME = raw(ip6(CLIENT6, VIP6, hlim=64) / l4("tcp", 40016, 443, 1400, 16))
vec("icmp_same_family_6", "icmp",
    err6(ROUTER6, POOL6, 2, 0, 1400, P6_SAME[:1232]),
    err6(VIP6, CLIENT6, 2, 0, 1400, Q6_SAME[:1232]),
    ofam=6, src=VIP6, dst=CLIENT6, qsrc=CLIENT6, qdst=VIP6,
    sport=40016, dport=443,
    doc="IPv6 packet too big to an IPv6 client: MTU unchanged")


# ---------------------------------------------------------------- output

def addr(a):
    if a is None:
        return "{ 0 }"
    import ipaddress
    b = ipaddress.ip_address(a).packed
    return "{ " + ", ".join("0x%02x" % x for x in b) + " }"


def arr(name, b):
    lines = ["static const uint8_t %s[%d] = {" % (name, len(b))]
    for i in range(0, len(b), 12):
        lines.append("\t" + ", ".join("0x%02x" % x for x in b[i:i + 12]) +
                     ",")
    lines.append("};")
    return "\n".join(lines)


def main():
    out = ["/* SPDX-License-Identifier: BSD-3-Clause */",
           "/* Generated by tests/unit/lb/gen_xlat_vectors.py (scapy): do "
           "not edit. */",
           "#ifndef XLAT_VECTORS_H", "#define XLAT_VECTORS_H", "",
           "#include <stdint.h>", "",
           "enum xlat_op { XLAT_4TO6, XLAT_6TO4, XLAT_ICMP };", "",
           "struct xlat_vec {",
           "\tconst char *name;",
           "\tconst char *doc;",
           "\tenum xlat_op op;",
           "\tuint8_t ofam;\t\t/* XLAT_ICMP: the result's family */",
           "\tuint8_t src[16], dst[16];\t/* new (outer) addresses */",
           "\tuint8_t qsrc[16], qdst[16];\t/* XLAT_ICMP: quoted */",
           "\tuint16_t sport, dport;\t/* new (quoted) ports, host order */",
           "\tuint16_t ip_id;\t\t/* host order */",
           "\tconst uint8_t *in, *out;",
           "\tuint16_t in_len, out_len;",
           "};", ""]
    ops = {"4to6": "XLAT_4TO6", "6to4": "XLAT_6TO4", "icmp": "XLAT_ICMP"}
    for v in VECS:
        out.append(arr("xv_%s_in" % v["name"], v["fin"]))
        out.append(arr("xv_%s_out" % v["name"], v["fout"]))
        out.append("static const struct xlat_vec xv_%s = {" % v["name"])
        out.append('\t.name = "%s",' % v["name"])
        out.append('\t.doc = "%s",' % v["doc"])
        out.append("\t.op = %s," % ops[v["op"]])
        out.append("\t.ofam = %d," % v["ofam"])
        for k in ("src", "dst", "qsrc", "qdst"):
            out.append("\t.%s = %s," % (k, addr(v[k])))
        out.append("\t.sport = %d, .dport = %d, .ip_id = 0x%04x," %
                   (v["sport"], v["dport"], v["ip_id"]))
        out.append("\t.in = xv_%s_in, .in_len = sizeof(xv_%s_in)," %
                   (v["name"], v["name"]))
        out.append("\t.out = xv_%s_out, .out_len = sizeof(xv_%s_out)," %
                   (v["name"], v["name"]))
        out.append("};")
        out.append("")
    out.append("#endif /* XLAT_VECTORS_H */")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
