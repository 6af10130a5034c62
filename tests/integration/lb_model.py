# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the load balancer's replay tests (test_lb_replay.py): fast
frame builders (struct, no scapy: tens of thousands of frames in well
under a second), frame dissection, checksum verification, the expected
outer headers of ipip and the expected rewrites of nat, dsr and NAT
replies.

Every built frame carries gen_sample's marker b'IDX%08d' % index at the
start of its L4 payload, so an output frame is matched to its input by
content (find_marker, or the inner IP bytes for ipip), never by position.
"""

import collections
import ipaddress
import struct

import pautil

csum16 = pautil.gen_sample.csum16
marker = pautil.gen_sample.marker
find_marker = pautil.gen_sample.find_marker

CLIENT_MAC = bytes.fromhex("020000000101")
APPLIANCE_MAC = bytes.fromhex("0200000000fe")
ETH_IP4 = 0x0800
ETH_IP6 = 0x86DD
ETH_VLAN = (0x8100, 0x88A8)
TCP = 6
UDP = 17
ICMP = 1
IPIP = 4
IPV6_IN = 41
OUTER_TTL = 64
# net_pcap's MTU (RTE_ETHER_MTU, what rte_eth_dev_get_mtu() reports for
# the replay port; found by a trial: an inner IPv4 packet of 1480 bytes is
# encapsulated, one of 1481 is dropped as "mtu").
PORT_MTU = 1500


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def mac_bytes(s):
    return bytes.fromhex(s.replace(":", ""))


def ip_bytes(a):
    return ipaddress.ip_address(a).packed


def ip_str(b):
    return str(ipaddress.ip_address(bytes(b)))


def family_of(addr):
    return ipaddress.ip_address(addr).version


# --------------------------------------------------------------------------
# building

def l4_checksum(fam, src, dst, proto, seg):
    """The TCP/UDP checksum of seg (its checksum field zero) over the
    pseudo-header; src/dst are packed addresses."""
    if fam == 4:
        ph = src + dst + struct.pack("!BBH", 0, proto, len(seg))
    else:
        ph = src + dst + struct.pack("!I3xB", len(seg), proto)
    c = csum16(ph + seg)
    if proto == UDP and c == 0:
        c = 0xFFFF
    return c


def build_l4(proto, sport, dport, payload, seq=1, tcp_flags=0x18,
             tcp_opts=b""):
    """A TCP or UDP segment with a zero checksum (filled by build_frame)."""
    if proto == TCP:
        assert len(tcp_opts) % 4 == 0
        doff = (20 + len(tcp_opts)) // 4
        return struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 1,
                           doff << 4, tcp_flags, 8192, 0, 0) + tcp_opts + \
            payload
    if proto == UDP:
        return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + \
            payload
    raise ValueError(proto)


def build_ip(fam, src, dst, proto, l4, tos=0, df=False, ip_id=0, ttl=64,
             ip_opts=b"", frag_off=0, mf=False, flow_label=0,
             l4_csum=True):
    """An IP packet around an L4 segment (bytes); TCP/UDP checksums are
    computed unless l4_csum is False (UDP: checksum 0)."""
    s, d = ip_bytes(src), ip_bytes(dst)
    if proto in (TCP, UDP) and l4_csum and frag_off == 0 and not mf:
        c = l4_checksum(fam, s, d, proto, l4)
        off = 16 if proto == TCP else 6
        l4 = l4[:off] + struct.pack("!H", c) + l4[off + 2:]
    if fam == 4:
        assert len(ip_opts) % 4 == 0
        ihl = 5 + len(ip_opts) // 4
        flags = (0x4000 if df else 0) | (0x2000 if mf else 0) | \
            (frag_off // 8)
        hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos,
                          ihl * 4 + len(l4), ip_id & 0xFFFF, flags, ttl,
                          proto, 0, s, d) + ip_opts
        hdr = hdr[:10] + struct.pack("!H", csum16(hdr)) + hdr[12:]
        return hdr + l4
    assert not ip_opts and frag_off == 0 and not mf
    vtc = 6 << 28 | (tos & 0xFF) << 20 | (flow_label & 0xFFFFF)
    return struct.pack("!IHBB16s16s", vtc, len(l4), proto, ttl, s, d) + l4


def build_eth(ip, smac=CLIENT_MAC, dmac=APPLIANCE_MAC, vlan=None):
    et = ETH_IP4 if ip[0] >> 4 == 4 else ETH_IP6
    l2 = dmac + smac
    if vlan is not None:
        l2 += struct.pack("!HH", 0x8100, vlan)
    frame = l2 + struct.pack("!H", et) + ip
    if len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def build_frame(fam, proto, src, dst, sport, dport, payload, smac=CLIENT_MAC,
                dmac=APPLIANCE_MAC, vlan=None, tos=0, df=False, ip_id=0,
                ttl=64, ip_opts=b"", seq=1, tcp_flags=0x18, tcp_opts=b"",
                flow_label=0, l4_csum=True):
    l4 = build_l4(proto, sport, dport, payload, seq, tcp_flags, tcp_opts)
    ip = build_ip(fam, src, dst, proto, l4, tos=tos, df=df, ip_id=ip_id,
                  ttl=ttl, ip_opts=ip_opts, flow_label=flow_label,
                  l4_csum=l4_csum)
    return build_eth(ip, smac, dmac, vlan)


def filler(i, n):
    """n payload bytes that depend on i and never spell a marker."""
    alpha = b"abcdefghjklmnopqrstuvwxyz0123456789"
    return bytes(alpha[(i * 7 + k * 13) % len(alpha)] for k in range(n))


# --------------------------------------------------------------------------
# dissecting

Frame = collections.namedtuple(
    "Frame", "dst src tags ethertype l3_off ip padding")


def dissect(frame):
    """Ethernet (VLAN tags included) + the IP packet as its header's
    length says + the padding after it. Non-IP: ip is None."""
    frame = bytes(frame)
    dst, src = frame[0:6], frame[6:12]
    off = 12
    tags = b""
    et = struct.unpack("!H", frame[off:off + 2])[0]
    while et in ETH_VLAN:
        tags += frame[off:off + 4]
        off += 4
        et = struct.unpack("!H", frame[off:off + 2])[0]
    off += 2
    ip = None
    pad = b""
    if et == ETH_IP4:
        n = struct.unpack("!H", frame[off + 2:off + 4])[0]
        ip, pad = frame[off:off + n], frame[off + n:]
    elif et == ETH_IP6:
        n = 40 + struct.unpack("!H", frame[off + 4:off + 6])[0]
        ip, pad = frame[off:off + n], frame[off + n:]
    return Frame(dst, src, tags, et, off, ip, pad)


IpInfo = collections.namedtuple(
    "IpInfo", "fam src dst proto l4_off sport dport frag")


def ip_info(ip):
    """Family, addresses, protocol, the L4 offset (within ip) and the
    ports of an IPv4 / IPv6 packet (IPv6: after hop-by-hop, routing,
    destination options and fragment headers). frag: a fragment (ports
    only when first)."""
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 0xF) * 4
        fl = struct.unpack("!H", ip[6:8])[0]
        frag = bool(fl & 0x3FFF)
        first = (fl & 0x1FFF) == 0
        proto, src, dst, l4 = ip[9], ip[12:16], ip[16:20], ihl
        fam = 4
    else:
        proto, src, dst, l4 = ip[6], ip[8:24], ip[24:40], 40
        fam = 6
        frag, first = False, True
        while proto in (0, 43, 60, 44) and len(ip) >= l4 + 8:
            if proto == 44:
                fo = struct.unpack("!H", ip[l4 + 2:l4 + 4])[0]
                frag, first = True, (fo & 0xFFF8) == 0
                proto, l4 = ip[l4], l4 + 8
            else:
                proto, l4 = ip[l4], l4 + 8 + ip[l4 + 1] * 8
    sport = dport = None
    if proto in (TCP, UDP) and first and len(ip) >= l4 + 4:
        sport, dport = struct.unpack("!HH", ip[l4:l4 + 4])
    return IpInfo(fam, src, dst, proto, l4, sport, dport, frag)


def ip4_header_ok(ip):
    ihl = (ip[0] & 0xF) * 4
    return csum16(ip[:ihl]) == 0


def l4_csum_ok(ip):
    """The TCP/UDP checksum of an unfragmented IP packet is valid (IPv4
    UDP: 0, no checksum, is valid too; IPv6 UDP: 0 is not)."""
    inf = ip_info(ip)
    seg = ip[inf.l4_off:]
    if inf.proto == UDP:
        c = struct.unpack("!H", seg[6:8])[0]
        if c == 0:
            return inf.fam == 4
    if inf.fam == 4:
        ph = inf.src + inf.dst + struct.pack("!BBH", 0, inf.proto, len(seg))
    else:
        ph = inf.src + inf.dst + struct.pack("!I3xB", len(seg), inf.proto)
    return csum16(ph + seg) == 0


def csum_field(ip):
    """(offset within ip, value) of the L4 checksum."""
    inf = ip_info(ip)
    off = inf.l4_off + (16 if inf.proto == TCP else 6)
    return off, struct.unpack("!H", ip[off:off + 2])[0]


# --------------------------------------------------------------------------
# expectations

def check_ipip4(frame, inner_frame, local_addr, backend, src_mac, dst_mac):
    """Problems (a list of strings) with frame as the ipip encapsulation
    of inner_frame: outer IPv4 per the contract, inner byte-identical."""
    p = []
    f, i = dissect(frame), dissect(inner_frame)
    if f.dst != dst_mac or f.src != src_mac:
        p.append("MACs %s > %s, expected %s > %s" % (
            mac_str(f.src), mac_str(f.dst), mac_str(src_mac),
            mac_str(dst_mac)))
    if f.tags != i.tags or f.ethertype != ETH_IP4:
        p.append("L2 tags/ethertype %s/%04x, expected %s/0800" % (
            f.tags.hex(), f.ethertype, i.tags.hex()))
        return p
    o = f.ip
    if f.padding:
        p.append("%d bytes after the outer packet" % len(f.padding))
    inner = i.ip
    if o[20:] != inner:
        p.append("inner packet differs from the input's IP packet "
                 "(%d vs %d bytes)" % (len(o) - 20, len(inner)))
    ver_ihl, tos, tot, ipid, fl, ttl, proto, _, src, dst = struct.unpack(
        "!BBHHHBBH4s4s", o[:20])
    in_df = struct.unpack("!H", inner[6:8])[0] & 0x4000
    want = {"version_ihl": (ver_ihl, 0x45), "tos": (tos, inner[1]),
            "total_length": (tot, len(inner) + 20),
            "flags/offset": (fl, in_df), "ttl": (ttl, OUTER_TTL),
            "proto": (proto, IPIP), "src": (ip_str(src), local_addr),
            "dst": (ip_str(dst), backend)}
    if in_df:
        want["id (DF)"] = (ipid, 0)
    for k, (got, exp) in want.items():
        if got != exp:
            p.append("outer %s %r, expected %r" % (k, got, exp))
    if not ip4_header_ok(o[:20]):
        p.append("outer header checksum invalid")
    return p


def check_ipip6(frame, inner_frame, local_addr6, backend, src_mac, dst_mac):
    p = []
    f, i = dissect(frame), dissect(inner_frame)
    if f.dst != dst_mac or f.src != src_mac:
        p.append("MACs %s > %s, expected %s > %s" % (
            mac_str(f.src), mac_str(f.dst), mac_str(src_mac),
            mac_str(dst_mac)))
    if f.tags != i.tags or f.ethertype != ETH_IP6:
        p.append("L2 tags/ethertype %s/%04x, expected %s/86dd" % (
            f.tags.hex(), f.ethertype, i.tags.hex()))
        return p
    o = f.ip
    if f.padding:
        p.append("%d bytes after the outer packet" % len(f.padding))
    inner = i.ip
    if o[40:] != inner:
        p.append("inner packet differs from the input's IP packet")
    vtc, plen, nh, hlim = struct.unpack("!IHBB", o[:8])
    in_tc = (struct.unpack("!I", inner[:4])[0] >> 20) & 0xFF
    want = {"version": (vtc >> 28, 6), "traffic class": ((vtc >> 20) & 0xFF,
                                                         in_tc),
            "payload length": (plen, len(inner)), "next header": (nh, 41),
            "hop limit": (hlim, OUTER_TTL), "src": (ip_str(o[8:24]),
                                                    local_addr6),
            "dst": (ip_str(o[24:40]), str(ipaddress.ip_address(backend)))}
    for k, (got, exp) in want.items():
        if got != exp:
            p.append("outer %s %r, expected %r" % (k, got, exp))
    return p


def outer_dst(frame):
    """The outer destination (string) of an ipip frame, its inner IP bytes
    and its dissection."""
    f = dissect(frame)
    if f.ethertype == ETH_IP4:
        return ip_str(f.ip[16:20]), f.ip[20:], f
    return ip_str(f.ip[24:40]), f.ip[40:], f


def rewrite(frame, src_mac, dst_mac, new_src=None, new_sport=None,
            new_dst=None, new_dport=None):
    """The expected frame of a NAT rewrite (or a NAT reply rewrite):
    addresses / ports replaced, IPv4 header and TCP/UDP checksums
    recomputed from scratch (IPv4 UDP without checksum stays without),
    MACs set, VLAN tags and Ethernet padding kept."""
    f = dissect(frame)
    ip = bytearray(f.ip)
    inf = ip_info(bytes(ip))
    sa, da = (12, 16) if inf.fam == 4 else (8, 24)
    alen = 4 if inf.fam == 4 else 16
    if new_src is not None:
        ip[sa:sa + alen] = ip_bytes(new_src)
    if new_dst is not None:
        ip[da:da + alen] = ip_bytes(new_dst)
    if new_sport is not None:
        struct.pack_into("!H", ip, inf.l4_off, new_sport)
    if new_dport is not None:
        struct.pack_into("!H", ip, inf.l4_off + 2, new_dport)
    if inf.fam == 4:
        ihl = (ip[0] & 0xF) * 4
        ip[10:12] = b"\0\0"
        ip[10:12] = struct.pack("!H", csum16(bytes(ip[:ihl])))
    off, old = csum_field(bytes(ip))
    if not (inf.proto == UDP and inf.fam == 4 and old == 0):
        ip[off:off + 2] = b"\0\0"
        c = l4_checksum(inf.fam, bytes(ip[sa:sa + alen]),
                        bytes(ip[da:da + alen]), inf.proto,
                        bytes(ip[inf.l4_off:]))
        ip[off:off + 2] = struct.pack("!H", c)
    return dst_mac + src_mac + bytes(frame[12:f.l3_off]) + bytes(ip) + \
        f.padding


def same_but_csum(got, want):
    """Problems comparing a NAT output with its expected frame: bytes
    equal except that a TCP checksum may be 0x0000 where the recomputation
    gives 0xffff or the other way round (the same one's complement
    number; RFC 1624 updates may give either)."""
    if got == want:
        return []
    g, w = dissect(got), dissect(want)
    if len(got) != len(want) or g.ip is None or w.ip is None:
        return ["%d bytes, expected %d" % (len(got), len(want))]
    off, gc = csum_field(g.ip)
    _, wc = csum_field(w.ip)
    pos = g.l3_off + off
    if got[:pos] + got[pos + 2:] == want[:pos] + want[pos + 2:] and \
            {gc, wc} == {0, 0xFFFF} and ip_info(g.ip).proto == TCP:
        return []
    diff = next(k for k in range(len(got)) if got[k] != want[k])
    return ["differs from the expected frame at offset %d (L3 at %d): "
            "got %s, expected %s" % (diff, g.l3_off, got[diff:diff + 8].hex(),
                                     want[diff:diff + 8].hex())]


def scapy_recheck(frame):
    """Problems found by scapy: its recomputed IPv4 header checksum and
    TCP/UDP checksum equal the frame's (0x0000 and 0xffff are one
    number for TCP)."""
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, IPv6, TCP as STCP, UDP as SUDP, Ether
    p = Ether(frame)
    out = []
    ipl = p.getlayer(IP) or p.getlayer(IPv6)
    if ipl is None:
        return ["scapy sees no IP layer"]
    if ipl.__class__ is IP:
        c = ipl.chksum
        q = ipl.copy()
        del q.chksum
        q = IP(bytes(q))
        if q.chksum != c:
            out.append("IPv4 checksum %#x, scapy %#x" % (c, q.chksum))
    l4 = p.getlayer(STCP) or p.getlayer(SUDP)
    if l4 is not None:
        c = l4.chksum
        if not (isinstance(l4, SUDP) and ipl.__class__ is IP and c == 0):
            q = ipl.copy()
            del q.getlayer(l4.__class__).chksum
            q = ipl.__class__(bytes(q))
            r = q.getlayer(l4.__class__).chksum
            if r != c and not ({r, c} == {0, 0xFFFF}):
                out.append("L4 checksum %#x, scapy %#x" % (c, r))
    return out


def maglev_shares(weights):
    t = float(sum(weights))
    return [w / t for w in weights]


def build_icmp4(src, dst, payload, ident=1, seq=1, smac=CLIENT_MAC,
                dmac=APPLIANCE_MAC, ip_id=0):
    icmp = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + payload
    icmp = icmp[:2] + struct.pack("!H", csum16(icmp)) + icmp[4:]
    return build_eth(build_ip(4, src, dst, ICMP, icmp, ip_id=ip_id), smac,
                     dmac)


def remark(frame, dscp):
    """The frame with its DSCP rewritten as an ACL "mark" must (ECN kept,
    IPv4 header checksum recomputed)."""
    b = bytearray(frame)
    l3 = dissect(frame).l3_off
    if b[l3] >> 4 == 4:
        ihl = (b[l3] & 15) * 4
        b[l3 + 1] = (dscp << 2) | (b[l3 + 1] & 3)
        b[l3 + 10:l3 + 12] = b"\0\0"
        struct.pack_into("!H", b, l3 + 10, csum16(bytes(b[l3:l3 + ihl])))
    else:
        vtf = struct.unpack("!I", b[l3:l3 + 4])[0]
        tc = (dscp << 2) | (((vtf >> 20) & 0xFF) & 3)
        vtf = (vtf & ~(0xFF << 20)) | (tc << 20)
        struct.pack_into("!I", b, l3, vtf)
    return bytes(b)
