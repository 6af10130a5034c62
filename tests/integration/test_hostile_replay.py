# SPDX-License-Identifier: BSD-3-Clause
"""Hostile packets (tests/data/gen_hostile.py) through the lab replay in
rtc1, rtc2 and pipeline4 modes, with an ACL (drop, mark and police rules,
IPv6 and port ranges, default permit) and an LB (ipip, nat, dsr services,
one without a usable backend) whose VIPs the corpus also targets, valid
traffic to them and flows the ACL acts on mixed into the same bursts.

For every frame a model says what must happen to it: gen_hostile.parse()
(the parser as pa_pkt_inline.h documents it) decides malformed or not,
acl_model.AclModel the ACL's verdict, and the LB section which service
takes it (fragments: the service of their VIP and protocol with the
lowest port; ICMP errors to a VIP quoting garbage or no service's flow:
dropped as icmp_bad_quote / icmp_no_service), and gh.neigh_rx() /
gh.neigh_answer() which ARP and ND
frames lib/neigh takes ("local") and what it answers. Then:

- the daemon exits 0, rx == tx + dropped, the drops add up, no mbuf is
  left in use, and a sanitizer build has nothing to say on stderr;
- the drop counters are exactly the model's (police: within what the
  meters can let through);
- the drops pcap holds exactly the frames the model drops;
- every forwarded frame that no service takes leaves byte-identical (or,
  for a "mark" rule, with exactly its DSCP and IPv4 checksum changed);
- ARP/ND for the appliance is dropped as "local" (and is in the drops
  pcap), and the output holds exactly the answers the model expects;
- every balanced frame is its input as its forwarding mode rewrites it
  (ipip: outer header + the input's IP packet; nat: destination address
  and port, checksums updated incrementally; dsr: MACs only).

The routed variant (test_hostile_replay_routed, rtc1 and pipeline4): the
corpus readdressed to the port's MAC plus gen_hostile.gen_routed()'s
frames through replay0 with addresses and a gateway_mac
(gh.routed_config()). The model adds the routed port: foreign unicast and
group MACs not_ours (solicited-node groups: but for the ND lib/neigh
takes), what is for the port itself to_self, transit to the gateway's MAC
from the port's with TTL / hop limit decremented, ttl at 0 / 1 with the
exact time exceeded (none about errors, later fragments, group sources,
nor back to a group, zero or the port's own source MAC), ipip too big
with DF / IPv6 answered. Every output frame is from the port's MAC and
none to it; no frame for a foreign MAC leaves.
"""

import collections
import ipaddress
import os
import struct

import pytest

import acl_model
import pautil
from pautil import PIPE4, RTC1, RTC2, check_summary, read_pcap, write_pcap

import gen_hostile as gh  # tests/data (pautil put it on sys.path)

MODES = {"rtc1": RTC1, "rtc2": RTC2, "pipeline4": PIPE4}
SANITIZER_MARKS = ("runtime error", "AddressSanitizer", "LeakSanitizer",
                   "ThreadSanitizer", "MemorySanitizer")
PORT_MTU = 1500          # net_pcap's MTU (see lb_model.PORT_MTU)
PORT_MAC = bytes.fromhex("027063617000")   # net_pcap's first port


def _ip(a):
    return str(ipaddress.ip_address(a))


def _fold(s):
    s = (s & 0xFFFF) + (s >> 16)
    return (s & 0xFFFF) + (s >> 16)


def _csum_update(old_sum, old, new):
    """RFC 1624 HC' = ~(~HC + ~m + m') over the 16-bit words of old/new
    (as lib/lb and lib/acl compute it)."""
    s = (~old_sum) & 0xFFFF
    for k in range(0, len(old), 2):
        s += (~((old[k] << 8) | old[k + 1])) & 0xFFFF
        s += (new[k] << 8) | new[k + 1]
    return (~_fold(s)) & 0xFFFF


class Svc:
    def __init__(self, d):
        self.name = d["name"]
        self.vip = _ip(d["vip"])
        self.family = ipaddress.ip_address(d["vip"]).version
        self.port = d["port"]
        self.proto = {"tcp": 6, "udp": 17}[d["proto"]]
        self.forward = d.get("forward", "ipip")
        self.backends = []
        for b in d.get("backends", []):
            m = b.get("mac")
            self.backends.append({
                "addr": _ip(b["addr"]), "port": b.get("port", self.port),
                "mac": bytes.fromhex(m.replace(":", "")) if m else None,
                "usable": b.get("state", "up") == "up"})
        self.usable = any(b["usable"] for b in self.backends)


Outcome = collections.namedtuple("Outcome", "what meta detail")
# what: malformed | local | acl | police | no_backend | mtu | fwd | mark | lb
# detail: error code, rule id, expected marked bytes, the Svc, or (local)
# the answer the appliance sends (None: none)


class Model:
    """routed: replay0 is the routed port of gh.routed_config() (its MAC
    filter, its addresses, transit to gh.ROUTED_GW_MAC with TTL / hop
    limit decremented, time exceeded at 1); else the transparent replay
    port of gh.config()."""

    def __init__(self, routed=False):
        self.routed = routed
        self.gw = gh.ROUTED_GW_MAC if routed else None
        self.ours = gh.ROUTED_OURS if routed else None
        self.addr4 = {gh.ROUTED_ADDR4} if routed else set()
        self.bcast4 = {str(ipaddress.ip_interface(x).network.broadcast_address)
                       for x in gh.ROUTED_CONFIG_ADDRS if "." in x} \
            if routed else set()
        self.addr6 = {_ip(gh.ROUTED_ADDR6)} if routed else set()
        self.acl = acl_model.AclModel(gh.ACL)
        self.svcs = [Svc(d) for d in gh.LB["services"]]
        self.local4 = _ip(gh.LB["local_addr"])
        self.local6 = _ip(gh.LB["local_addr6"])
        self.by_backend = {}
        for s in self.svcs:
            for b in s.backends:
                self.by_backend[b["addr"]] = (s, b)

    def service(self, m):
        if m.family == 0 or m.l4_proto not in (6, 17):
            return None
        if m.flags & gh.F_FRAG:
            c = [s for s in self.svcs if s.vip == m.dst and
                 s.proto == m.l4_proto]
            return min(c, key=lambda s: s.port) if c else None
        if m.flags & gh.F_L4:
            for s in self.svcs:
                if (s.vip, s.port, s.proto) == (m.dst, m.dport, m.l4_proto):
                    return s
        return None

    def icmp(self, data, m):
        """lib/lb's ICMP for VIPs (docs/architecture.md): None when it
        leaves the frame alone, else the drop reason. The corpus holds
        no echo request to a VIP and no error quoting a real flow."""
        v6 = m.family == 6
        if m.family == 0 or m.flags & gh.F_FRAG or \
                not m.flags & gh.F_L4 or \
                m.l4_proto != (58 if v6 else 1) or \
                m.dst not in {s.vip for s in self.svcs}:
            return None
        t = data[m.l4_off]
        if (v6 and t == 128) or (not v6 and t == 8):
            raise AssertionError("echo request to a VIP in the corpus")
        if not ((v6 and 1 <= t <= 3) or (not v6 and t in (3, 11))):
            return None
        end = m.l3_off + m.ilen
        off = m.l4_off + 8
        if end > gh.FIRST_SEG or end < off:
            return "icmp_bad_quote"
        q = data[off:end]
        if not v6:
            if len(q) < 20 or q[0] >> 4 != 4:
                return "icmp_bad_quote"
            ihl = (q[0] & 15) * 4
            tot = struct.unpack_from("!H", q, 2)[0]
            if ihl < 20 or tot < ihl + 8 or len(q) < ihl + 8 or \
                    struct.unpack_from("!H", q, 6)[0] & 0x1FFF:
                return "icmp_bad_quote"
            proto, src, l4 = q[9], _ip(q[12:16]), ihl
        else:
            if len(q) < 48 or q[0] >> 4 != 6 or \
                    struct.unpack_from("!H", q, 4)[0] < 8:
                return "icmp_bad_quote"
            proto, src, l4 = q[6], _ip(q[8:24]), 40
        if proto not in (6, 17) or \
                (proto == 17 and struct.unpack_from("!H", q, l4 + 4)[0] < 8):
            return "icmp_bad_quote"
        sport = struct.unpack_from("!H", q, l4)[0]
        if src != m.dst or not any((s.vip, s.port, s.proto) ==
                                   (src, sport, proto) for s in self.svcs):
            return "icmp_no_service"
        raise AssertionError("the corpus quotes a real flow: %s" %
                             data[:96].hex())

    def for_port(self, m):
        """stages.c for_port(): the port's addresses, the directed
        broadcast of their subnets, IPv4 multicast and limited broadcast,
        IPv6 multicast (pa_port_local4/6)."""
        if m.family == 4:
            a = ipaddress.ip_address(m.dst)
            return m.dst in self.addr4 or m.dst in self.bcast4 or \
                int(a) >> 28 == 0xE or int(a) == 0xFFFFFFFF
        return m.dst in self.addr6 or m.dst.startswith("ff")

    def route(self, data, m):
        """The route pass (stages.c route_one()) on a transit frame:
        ("route", the frame as it leaves), ("no_service", None) for a VIP or
        local_addr no service took, or ("ttl", the time exceeded
        sent back, or None)."""
        l3 = m.l3_off
        v4 = m.family == 4
        if m.dst in {s.vip for s in self.svcs} | {self.local4, self.local6}:
            return "no_service", None
        if data[l3 + (8 if v4 else 7)] <= 1:
            return "ttl", time_exceeded(data, m, PORT_MAC)
        b = bytearray(data)
        b[0:6] = self.gw
        b[6:12] = PORT_MAC
        if v4:
            old = bytes(b[l3 + 8:l3 + 10])
            b[l3 + 8] -= 1
            hc = struct.unpack_from("!H", b, l3 + 10)[0]
            struct.pack_into("!H", b, l3 + 10,
                             _csum_update(hc, old, bytes(b[l3 + 8:l3 + 10])))
        else:
            b[l3 + 7] -= 1
        return "route", bytes(b)

    def outcome(self, data):
        err, m = gh.parse(data)
        if err:
            return Outcome("malformed", None, err)
        if self.routed:
            l2 = l2_class(data[:6])
            if l2 == "foreign":
                return Outcome("not_ours", m, None)
        nr = gh.neigh_rx(data, m, self.ours)
        if nr == "malformed":
            return Outcome("malformed", m, "neigh")
        if nr == "local":
            return Outcome("local", m, gh.neigh_answer(data, PORT_MAC,
                                                       self.ours))
        if self.routed and (l2 != "ours" or m.flags & gh.F_NON_IP or
                            self.for_port(m)):
            return Outcome("not_ours" if l2 == "snm" else "to_self", m,
                           None)
        if m.flags & gh.F_NON_IP:
            return Outcome("fwd", m, None)
        has_ports = bool(m.flags & gh.F_L4) and \
            not m.flags & gh.F_FRAG_LATER and m.l4_proto in (6, 17, 132)
        desc = acl_model.PktDesc(m.family, m.src, m.dst, m.l4_proto,
                                 m.sport, m.dport, has_ports,
                                 acl_model.REPLAY_PORT, False)
        v = self.acl.classify(desc)
        act = v.action.get("action")
        if v.verdict == "drop":
            return Outcome("acl", m, v.rule_id)
        if act == "police":
            if self.routed:
                r = self.route(data, m)
                assert r[0] == "route", "a policed frame at TTL 1 or " \
                    "to the appliance"
                return Outcome("police", m, r[1])
            return Outcome("police", m, v.rule_id)
        ic = self.icmp(data, m)
        if ic is not None:
            return Outcome(ic, m, None)
        s = self.service(m)
        if act == "mark":
            assert s is None, "the corpus marks a balanced frame: %s" % (
                data[:80].hex())
            marked = mark(data, m, v.action["dscp"])
            if self.routed:
                r = self.route(marked, m)
                return Outcome("mark" if r[0] == "route" else r[0], m,
                               r[1])
            return Outcome("mark", m, marked)
        if s is None:
            if self.routed:
                r = self.route(data, m)
                return Outcome(r[0], m, r[1])
            return Outcome("fwd", m, None)
        if not s.usable:
            return Outcome("no_backend", m, s)
        if s.forward in ("ipip", "nat") and len(data) > gh.FIRST_SEG:
            need = m.l4_off + (20 if m.l4_proto == 6 else 8) \
                if m.flags & gh.F_L4 else m.l3_off + (20 if m.family == 4
                                                      else 40)
            if need > gh.FIRST_SEG:
                return Outcome("malformed", m, "no_room")
        if s.forward == "ipip" and \
                m.ilen + (20 if m.family == 4 else 40) > PORT_MTU:
            # lib/lb too_big(): on a routed port (it has a ring for ICMP
            # errors) a DF / IPv6 TCP or UDP packet becomes the error
            df = m.family == 6 or struct.unpack_from(
                "!H", data, m.l3_off + 6)[0] & 0x4000
            if self.routed and df and m.l4_proto in (6, 17):
                return Outcome("mtu_icmp", m, s)
            return Outcome("mtu", m, s)
        return Outcome("lb", m, s)


def l2_class(dst):
    """pa_port_l2_class(): a routed port's view of a destination MAC."""
    if dst == PORT_MAC:
        return "ours"
    if not dst[0] & 1:
        return "foreign"
    if dst == b"\xff" * 6 or dst == bytes.fromhex("333300000001"):
        return "group"
    if dst[:3] == b"\x33\x33\xff":
        return "snm"
    return "foreign"


def _may_answer4(ip, n):
    ihl = (ip[0] & 15) * 4
    if ihl < 20 or ihl > n:
        return False
    if struct.unpack_from("!H", ip, 6)[0] & 0x1FFF:
        return False
    if ip[12] in (0, 127) or ip[12] >= 224:
        return False
    if ip[9] == 1:
        if n < ihl + 1:
            return False
        return ip[ihl] in (0, 8, 13, 14, 15, 16, 17, 18)
    return True


def _may_answer6(ip, n):
    if ip[8] == 0xFF or ip[8:24] == bytes(16):
        return False
    off, nh = 40, ip[6]
    for _ in range(8):
        if nh in (0, 43, 60):
            if n < off + 8:
                return True
            nh = ip[off]
            off += (ip[off + 1] + 1) * 8
        elif nh == 44:
            if n < off + 8:
                return True
            if struct.unpack_from("!H", ip, off + 2)[0] & 0xFFF8:
                return False
            nh = ip[off]
            off += 8
        elif nh == 58:
            return n < off + 1 or ip[off] >= 128
        else:
            return True
    return True


def time_exceeded(data, m, port_mac):
    """The ICMP time exceeded lib/port pa_port_build_time_exceeded()
    makes of transit frame data (read up to PA_PORT_ICMP_FRAME_MAX), or
    None (no error about an error, a later fragment, a group source;
    none back to a group, zero or the port's own Ethernet source: it
    would be reflected to a group or to the port itself)."""
    frame = data[:14 + 8 + 1280]
    if frame[6] & 1 or frame[6:12] in (bytes(6), port_mac):
        return None
    l3 = m.l3_off
    ip = frame[l3:]
    n = len(ip)
    if m.family == 4:
        if n < 20 or not _may_answer4(ip, n):
            return None
        n = min(n, struct.unpack_from("!H", ip, 2)[0])
        q = ip[:min(n, 576 - 28)]
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0xC0, 28 + len(q), 0, 0, 64,
                        1, 0, ipaddress.ip_address(gh.ROUTED_ADDR4).packed,
                        ip[12:16])
        h = h[:10] + struct.pack("!H", gh.csum16(h)) + h[12:]
        ic = struct.pack("!BBHI", 11, 0, 0, 0) + q
        ic = ic[:2] + struct.pack("!H", gh.csum16(ic)) + ic[4:]
    else:
        if n < 40 or not _may_answer6(ip, n):
            return None
        n = min(n, 40 + struct.unpack_from("!H", ip, 4)[0])
        q = ip[:min(n, 1280 - 48)]
        src = ipaddress.ip_address(gh.ROUTED_ADDR6).packed
        ic = struct.pack("!BBHI", 3, 0, 0, 0) + q
        c = gh.csum16(gh._pseudo(6, src, ip[8:24], 58, len(ic)) + ic)
        ic = ic[:2] + struct.pack("!H", c) + ic[4:]
        h = struct.pack("!IHBB16s16s", 6 << 28, len(ic), 58, 64, src,
                        ip[8:24])
    return frame[6:12] + port_mac + frame[12:l3] + h + ic


def mark(data, m, dscp):
    """The frame as the ACL's mark action leaves it (lib/acl mark_packet:
    DSCP replaced, ECN kept, IPv4 checksum updated incrementally)."""
    b = bytearray(data)
    l3 = m.l3_off
    if m.family == 4:
        tos = (dscp << 2) | (b[l3 + 1] & 3)
        if tos == b[l3 + 1]:
            return bytes(b)
        old = bytes(b[l3:l3 + 2])
        b[l3 + 1] = tos
        hc = struct.unpack("!H", b[l3 + 10:l3 + 12])[0]
        struct.pack_into("!H", b, l3 + 10,
                         _csum_update(hc, old, bytes(b[l3:l3 + 2])))
    else:
        v = struct.unpack("!I", b[l3:l3 + 4])[0]
        tc = (dscp << 2) | ((v >> 20) & 3)
        struct.pack_into("!I", b, l3, (v & 0xF00FFFFF) | (tc << 20))
    return bytes(b)


def nat_expected(data, m, be, port_mac, nh=None):
    """The frame as lib/lb's nat forwarding leaves it, for backend be."""
    b = bytearray(data)
    l3, l4 = m.l3_off, m.l4_off
    alen = 4 if m.family == 4 else 16
    da = l3 + (16 if m.family == 4 else 24)
    old_a = bytes(b[da:da + alen])
    new_a = ipaddress.ip_address(be["addr"]).packed
    if m.family == 4:
        hc = struct.unpack("!H", b[l3 + 10:l3 + 12])[0]
        struct.pack_into("!H", b, l3 + 10, _csum_update(hc, old_a, new_a))
    if m.flags & gh.F_L4:
        old_p = bytes(b[l4 + 2:l4 + 4])
        new_p = struct.pack("!H", be["port"])
        co = l4 + (16 if m.l4_proto == 6 else 6)
        c = struct.unpack("!H", b[co:co + 2])[0]
        if m.l4_proto == 6 or c != 0 or m.family == 6:
            c = _csum_update(c, old_a + old_p, new_a + new_p)
            if m.l4_proto == 17 and c == 0:
                c = 0xFFFF
            struct.pack_into("!H", b, co, c)
        b[l4 + 2:l4 + 4] = new_p
    b[da:da + alen] = new_a
    b[0:6] = be["mac"] if be["mac"] else (nh or data[6:12])
    b[6:12] = port_mac
    return bytes(b)


def _tcp_csum_alias(got, want, m):
    """A TCP checksum of 0x0000 where 0xffff was computed (or the other
    way round) is the same one's complement number."""
    if len(got) != len(want) or not m.flags & gh.F_L4 or m.l4_proto != 6:
        return False
    co = m.l4_off + 16
    return got[:co] + got[co + 2:] == want[:co] + want[co + 2:] and \
        {got[co:co + 2], want[co:co + 2]} == {b"\0\0", b"\xff\xff"}


def ipip_problems(out, data, m, svc, be, model, port_mac):
    l3 = m.l3_off
    hl = 20 if m.family == 4 else 40
    p = []
    inner = data[l3:l3 + m.ilen]
    if out[12:l3] != data[12:l3]:
        p.append("L2 tags / ethertype changed")
    if out[l3 + hl:] != inner:
        p.append("inner packet is not the input's IP packet")
    want_dst = be["mac"] if be["mac"] else (model.gw or data[6:12])
    if out[0:6] != want_dst or out[6:12] != port_mac:
        p.append("MACs %s %s, expected %s %s" % (
            out[0:6].hex(), out[6:12].hex(), want_dst.hex(), port_mac.hex()))
    o = out[l3:l3 + hl]
    if m.family == 4:
        ver_ihl, tos, tot, ident, ff, ttl, proto, _ = struct.unpack(
            "!BBHHHBBH", o[:12])
        df = struct.unpack("!H", inner[6:8])[0] & 0x4000
        want = (0x45, inner[1], m.ilen + 20, df, 64, 4)
        if (ver_ihl, tos, tot, ff, ttl, proto) != want:
            p.append("outer IPv4 %s, expected %s" % (
                (ver_ihl, tos, tot, ff, ttl, proto), want))
        if df and ident != 0:
            p.append("outer id %d with DF" % ident)
        if gh.csum16(o) != 0:
            p.append("outer IPv4 checksum wrong")
        src, dst = _ip(o[12:16]), _ip(o[16:20])
        local = model.local4
    else:
        vtf, plen, nh, hlim = struct.unpack("!IHBB", o[:8])
        tc_in = (struct.unpack("!I", inner[:4])[0] >> 20) & 0xFF
        if (vtf >> 28, (vtf >> 20) & 0xFF, plen, nh, hlim) != \
                (6, tc_in, m.ilen, 41, 64):
            p.append("outer IPv6 %s" % o[:8].hex())
        src, dst = _ip(o[8:24]), _ip(o[24:40])
        local = model.local6
    if src != local or dst != be["addr"]:
        p.append("outer %s -> %s, expected %s -> %s" % (src, dst, local,
                                                        be["addr"]))
    return p


# --------------------------------------------------------------------------
# fixtures: the corpus, its model, the runs (cached per mode)

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    pkts = gh.build()
    path = str(tmp_path_factory.mktemp("hostile") / "hostile.pcap")
    write_pcap(path, [p.data for p in pkts])
    model = Model()
    outs = [model.outcome(p.data) for p in pkts]
    # no frame may look like a NAT reply (the model has no NAT replies)
    nat_be = {(b["addr"], b["port"]) for s in model.svcs if s.forward == "nat"
              for b in s.backends}
    for p, o in zip(pkts, outs):
        if o.meta is not None and o.meta.family:
            assert (o.meta.src, o.meta.sport) not in nat_be, p
    return pkts, path, model, outs


@pytest.fixture(scope="module")
def runs(corpus, tmp_path_factory):
    _, path, _, _ = corpus
    tmp = tmp_path_factory.mktemp("hostile-runs")
    done = {}

    def get(mode):
        if mode not in done:
            out = str(tmp / (mode + "-out.pcap"))
            drops = str(tmp / (mode + "-drops.pcap"))
            res = pautil.replay(path, out, gh.config(MODES[mode]),
                                drops=drops)
            res.out_pcap, res.drops_pcap = out, drops
            done[mode] = res
        return done[mode]
    return get


def sanitizer_problems(res):
    lines = [ln for ln in res.stderr.splitlines()
             if any(mk in ln for mk in SANITIZER_MARKS)]
    return lines


def describe(pkts, outs, i):
    p = pkts[i]
    return "#%d %s/%s (%d bytes, model: %s) %s" % (
        i, p.cat, p.kind, len(p.data), outs[i].what, p.data[:96].hex())


# --------------------------------------------------------------------------
# the tests

def test_corpus_is_deterministic_and_large(corpus):
    pkts, _, _, outs = corpus
    again = gh.build()
    assert [p.data for p in again] == [p.data for p in pkts], \
        "gen_hostile.build() is not deterministic"
    assert len(pkts) >= 5000
    cats = collections.Counter(p.cat for p in pkts)
    for cat in ("trunc_raw", "trunc_len", "ihl", "ip_len", "ip6_ext",
                "frag4", "frag6", "vlan", "tiny", "checksum", "mcast",
                "tcp_doff", "udp_len", "arp", "nd", "non_ip", "big", "fuzz",
                "valid_lb", "valid_acl", "valid_other"):
        assert cats[cat] > 0, "no %s frames" % cat
    what = collections.Counter(o.what for o in outs)
    for w in ("malformed", "local", "acl", "police", "no_backend", "mtu",
              "fwd", "mark", "lb"):
        assert what[w] > 0, "the corpus has no frame the model calls %s" % w
    # answered and refused frames of each kind
    ans = [o for o in outs if o.what == "local" and o.detail is not None]
    assert sum(1 for o in ans if o.detail[12:14] == b"\x08\x06") >= 5
    assert sum(1 for o in ans if o.detail[12:14] == b"\x86\xdd") >= 5
    assert sum(1 for o in outs if o.what == "local" and o.detail is None) \
        >= 40
    # every kind of balanced frame, fragments to the VIPs among them
    svcs = collections.Counter(o.detail.name for o in outs if o.what == "lb")
    assert len(svcs) == 5, svcs
    assert any(o.what == "lb" and o.meta.flags & gh.F_FRAG_LATER
               for o in outs)
    assert any(p.data == b"" for p in pkts), "no zero-length frame"
    assert all(len(p.data) <= 65535 for p in pkts)
    # forwarded frames must fit what net_pcap writes whole
    assert all(len(p.data) <= gh.TX_MAX for p, o in zip(pkts, outs)
               if o.what in ("fwd", "mark", "police", "lb"))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_hostile_replay(mode, corpus, runs):
    pkts, _, model, outs = corpus
    res = runs(mode)
    san = sanitizer_problems(res)
    assert not san, "sanitizer reports in %s:\n%s\n%r" % (
        mode, "\n".join(san[:40]), res)
    s = check_summary(res, len(pkts))
    drops = s["drops"]
    n = collections.Counter(o.what for o in outs)
    want = {"malformed": n["malformed"], "acl": n["acl"],
            "no_backend": n["no_backend"], "mtu": n["mtu"], "non_ip": 0,
            "ring_full": 0, "tx_full": 0, "rx_error": 0, "shutdown": 0,
            "local": n["local"], "neigh_ring_full": 0,
            "excp_full": 0, "excp_rate": 0,
            "icmp_bad_quote": n["icmp_bad_quote"],
            "icmp_no_service": n["icmp_no_service"]}
    got = {k: drops[k] for k in want}
    assert got == want, "drops %s, the model says %s (mode %s)" % (
        got, want, mode)
    # police: each classifying lcore's meter lets its burst and what its
    # rate refills through, the rest of the policed frames are dropped
    m_pol = n["police"]
    lc = max(1, s.get("lcores", 1))
    most = lc * (gh.POLICE_BURST + 2 +
                 int(gh.POLICE_RATE * (s.get("duration_s", 0) + 2)))
    assert max(0, m_pol - most) <= drops["police"] <= \
        m_pol - min(m_pol, gh.POLICE_BURST), \
        "police drops %d of %d policed frames" % (drops["police"], m_pol)

    # ---- the drops pcap: exactly the frames the model drops
    dropped = collections.Counter(read_pcap(res.drops_pcap))
    certain = collections.Counter(
        p.data for p, o in zip(pkts, outs)
        if o.what in ("malformed", "acl", "no_backend", "mtu", "local",
                      "icmp_bad_quote", "icmp_no_service"))
    policed = collections.Counter(p.data for p, o in zip(pkts, outs)
                                  if o.what == "police")
    index = {p.data: i for i, p in enumerate(pkts)}
    missing = certain - dropped
    assert not missing, "%d frames the model drops are not in the drops " \
        "pcap:\n%s" % (sum(missing.values()), "\n".join(
            describe(pkts, outs, index[f]) for f in list(missing)[:20]))
    extra = dropped - certain
    not_policed = extra - policed
    assert not not_policed, "%d dropped frames the model forwards:\n%s" % (
        sum(not_policed.values()), "\n".join(
            describe(pkts, outs, index[f]) if f in index else f[:96].hex()
            for f in list(not_policed)[:20]))
    assert sum(extra.values()) == drops["police"]

    # ---- the output: forwarded frames as they came (or re-marked)
    out_frames = read_pcap(res.out_pcap)
    answers = [o.detail for o in outs if o.what == "local" and
               o.detail is not None]
    assert s["neigh"]["tx_sent"] == len(answers), s["neigh"]
    assert len(out_frames) == s["tx_packets"] + len(answers)
    got_out = collections.Counter(out_frames)
    want_fwd = collections.Counter(answers)
    for p, o in zip(pkts, outs):
        if o.what == "fwd":
            want_fwd[p.data] += 1
        elif o.what == "mark":
            want_fwd[o.detail] += 1
    want_fwd += policed - extra          # the policed frames let through
    missing = want_fwd - got_out
    if missing:
        by_mark = {o.detail: i for i, o in enumerate(outs)
                   if o.what == "mark"}
        lines = []
        for f in list(missing)[:20]:
            i = index.get(f, by_mark.get(f))
            lines.append(describe(pkts, outs, i) if i is not None
                         else f[:96].hex())
        pytest.fail("%d frames the model forwards unchanged (or re-marked) "
                    "are not in the output (mode %s):\n%s" % (
                        sum(missing.values()), mode, "\n".join(lines)))
    rest = list((got_out - want_fwd).elements())

    # ---- the balanced frames
    lb_in = [(i, o) for i, o in enumerate(outs) if o.what == "lb"]
    assert len(rest) == len(lb_in), \
        "%d output frames are not forwarded inputs, %d balanced frames " \
        "expected (mode %s); first: %s" % (
            len(rest), len(lb_in), mode,
            [f[:64].hex() for f in rest[:5]])
    check_balanced(pkts, outs, model, lb_in, rest, mode)


def check_balanced(pkts, outs, model, lb_in, rest, mode):
    """Match every balanced output frame to its input by what its mode
    keeps (ipip: the inner IP packet; dsr: everything after the MACs;
    nat: everything but the rewritten fields), then check the rewrite
    byte for byte."""
    port_macs = collections.Counter(f[6:12] for f in rest)
    assert len(port_macs) == 1, "balanced frames from several MACs: %s" % (
        port_macs)
    port_mac = next(iter(port_macs))
    assert port_mac == PORT_MAC, "the answers' model uses %s, the port " \
        "is %s" % (PORT_MAC.hex(), port_mac.hex())

    def key_in(i, o):
        d, m, s = pkts[i].data, o.meta, o.detail
        if s.forward == "ipip":
            return ("ipip", d[12:m.l3_off], d[m.l3_off:m.l3_off + m.ilen])
        if s.forward == "dsr":
            return ("dsr", d[12:])
        return ("nat", nat_mask(d, m))

    def key_out(f):
        err, m = gh.parse(f)
        if err:
            return None, None
        if m.l4_proto in (4, 41) and m.dst in model.by_backend:
            hl = 20 if m.family == 4 else 40
            return ("ipip", f[12:m.l3_off], f[m.l3_off + hl:]), m
        dst_mac = f[0:6]
        for s in model.svcs:
            if s.forward == "dsr" and any(b["mac"] == dst_mac
                                          for b in s.backends):
                return ("dsr", f[12:]), m
        if m.dst in model.by_backend:
            return ("nat", nat_mask(f, m)), m
        return None, m

    want = collections.defaultdict(list)
    for i, o in lb_in:
        want[key_in(i, o)].append(i)
    problems = []
    per_svc = collections.Counter()
    for f in rest:
        k, m = key_out(f)
        if k is None or not want.get(k):
            problems.append("output frame matches no balanced input: %s" %
                            f[:96].hex())
            continue
        # inputs with the same key (nat: frames that differ only in their
        # checksums) are told apart by the exact rewrite
        cands = want[k]
        for n_try, i in enumerate(cands):
            p = rewrite_problems(f, m, pkts[i].data, outs[i], model,
                                 port_mac)
            if not p:
                break
        if p:
            i = cands[0]
        cands.remove(i)
        per_svc[outs[i].detail.name] += 1
        for x in p:
            problems.append("%s: %s" % (describe(pkts, outs, i), x))
    left = [i for v in want.values() for i in v]
    for i in left[:20]:
        problems.append("balanced input not in the output: %s" %
                        describe(pkts, outs, i))
    assert not problems, "%d problems with balanced frames (mode %s):\n%s" % (
        len(problems), mode, "\n".join(problems[:25]))
    exp_svc = collections.Counter(o.detail.name for _, o in lb_in)
    assert per_svc == exp_svc, (per_svc, exp_svc)


def rewrite_problems(f, m, d, o, model, port_mac):
    """Problems with output frame f (parsed: m) as the balanced rewrite
    of input d (outcome o)."""
    s = o.detail
    if s.forward == "dsr":
        be = [b for b in s.backends if b["mac"] == f[0:6]]
        if be and f[6:12] == port_mac and f[12:] == d[12:]:
            return []
        return ["dsr rewrite: got %s" % f[:64].hex()]
    sb = model.by_backend.get(m.dst)
    if sb is None or sb[0] is not s:
        return ["sent to %s, not a backend of %s" % (m.dst, s.name)]
    if s.forward == "ipip":
        return ipip_problems(f, d, o.meta, s, sb[1], model, port_mac)
    exp = nat_expected(d, o.meta, sb[1], port_mac, model.gw)
    if f == exp or _tcp_csum_alias(f, exp, o.meta):
        return []
    return ["nat rewrite: got %s, expected %s" % (f[:96].hex(),
                                                   exp[:96].hex())]


def nat_mask(d, m):
    """The frame after the MACs with what nat rewrites blanked."""
    b = bytearray(d)
    l3 = m.l3_off
    if m.family == 4:
        b[l3 + 10:l3 + 12] = b"\0\0"
        b[l3 + 16:l3 + 20] = bytes(4)
    else:
        b[l3 + 24:l3 + 40] = bytes(16)
    if m.flags & gh.F_L4:
        co = m.l4_off + (16 if m.l4_proto == 6 else 6)
        b[m.l4_off + 2:m.l4_off + 4] = b"\0\0"
        b[co:co + 2] = b"\0\0"
    return bytes(b[12:])


def test_modes_agree(corpus, runs):
    """The three layouts drop the same frames and forward the same bytes
    (but for ipip's outer IPv4 id, a per-lcore counter, and policed
    frames, which depend on time)."""
    pkts, _, _, outs = corpus
    policed = {p.data for p, o in zip(pkts, outs) if o.what == "police"}
    seen = {}
    for mode in sorted(MODES):
        res = runs(mode)
        assert res.rc == 0, res
        dr = collections.Counter(f for f in read_pcap(res.drops_pcap)
                                 if f not in policed)
        ou = collections.Counter()
        for f in read_pcap(res.out_pcap):
            if f in policed:
                continue
            err, m = gh.parse(f)
            if not err and m.family == 4 and m.l4_proto == 4:
                o = m.l3_off
                f = f[:o + 4] + b"\0\0" + f[o + 6:o + 10] + b"\0\0" + \
                    f[o + 12:]
            ou[f] += 1
        seen[mode] = (dr, ou)
    modes = sorted(seen)
    for a in modes[1:]:
        assert seen[a][0] == seen[modes[0]][0], \
            "%s and %s drop different frames" % (a, modes[0])
        assert seen[a][1] == seen[modes[0]][1], \
            "%s and %s forward different frames" % (a, modes[0])


def test_generator_script_writes_the_corpus(tmp_path, corpus):
    """gen_hostile.py as a script writes the same corpus and a config the
    daemon accepts."""
    import subprocess
    pkts = corpus[0]
    out = str(tmp_path / "h.pcap")
    conf = str(tmp_path / "h.json")
    r = subprocess.run([pautil.PYTHON, os.path.join(pautil.DATA,
                                                    "gen_hostile.py"),
                        "-o", out, "--config", conf],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert read_pcap(out) == [p.data for p in pkts]
    assert b"malformed" in r.stdout


@pytest.mark.parametrize("mode", sorted(MODES))
def test_frame_64k(mode, tmp_path):
    """A 65535-byte frame (IPv4 total length 65535: malformed) next to a
    valid frame and an empty one: the replay sizes its mbufs for it,
    drops it and the empty frame as malformed, forwards the other.
    (pipeline4 sized its pool at 262143 mbufs, more than the replay's
    -m 1024 holds, and did not start.)"""
    ok = pautil.l4_frame("198.51.100.1", "203.0.113.1", 1000, 2000, "udp")
    frames = [gh.frame_64k(), ok, b""]
    assert gh.parse(frames[0])[0] == gh.ERR_L3_LEN
    inp = str(tmp_path / "in.pcap")
    out = str(tmp_path / "out.pcap")
    drops = str(tmp_path / "drops.pcap")
    write_pcap(inp, frames)
    res = pautil.replay(inp, out, gh.config(MODES[mode]), drops=drops)
    assert not sanitizer_problems(res), res
    check_summary(res, 3, {"malformed": 2})
    assert read_pcap(out) == [ok]
    assert sorted(read_pcap(drops)) == sorted([frames[0], b""])


# --------------------------------------------------------------------------
# The routed variant: the same corpus (readdressed to the port's MAC) plus
# gen_hostile.gen_routed()'s frames through replay0 as a routed one-armed
# port (gh.routed_config(): addresses, gateway_mac)

ROUTED_MODES = {"rtc1": RTC1, "pipeline4": PIPE4}
ROUTED_DROPPED = ("malformed", "acl", "no_backend", "mtu", "local",
                  "icmp_bad_quote", "icmp_no_service", "not_ours",
                  "to_self", "ttl", "no_service")


@pytest.fixture(scope="module")
def routed_corpus(tmp_path_factory):
    pkts = gh.build_routed()
    path = str(tmp_path_factory.mktemp("hostile-routed") / "routed.pcap")
    write_pcap(path, [p.data for p in pkts])
    model = Model(routed=True)
    outs = [model.outcome(p.data) for p in pkts]
    nat_be = {(b["addr"], b["port"]) for s in model.svcs if s.forward == "nat"
              for b in s.backends}
    for p, o in zip(pkts, outs):
        if o.meta is not None and o.meta.family:
            assert (o.meta.src, o.meta.sport) not in nat_be, p
    return pkts, path, model, outs


@pytest.fixture(scope="module")
def routed_runs(routed_corpus, tmp_path_factory):
    _, path, _, _ = routed_corpus
    tmp = tmp_path_factory.mktemp("hostile-routed-runs")
    done = {}

    def get(mode):
        if mode not in done:
            out = str(tmp / (mode + "-out.pcap"))
            drops = str(tmp / (mode + "-drops.pcap"))
            res = pautil.replay(path, out,
                                gh.routed_config(ROUTED_MODES[mode]),
                                drops=drops)
            res.out_pcap, res.drops_pcap = out, drops
            done[mode] = res
        return done[mode]
    return get


def test_routed_corpus_covers_the_routed_path(routed_corpus):
    pkts, _, _, outs = routed_corpus
    assert [p.data for p in gh.build_routed()] == [p.data for p in pkts]
    assert len(set(p.data for p in pkts)) == len(pkts)
    what = collections.Counter(o.what for o in outs)
    for w in ("malformed", "local", "acl", "police", "no_backend", "mtu",
              "mark", "lb", "route", "ttl", "not_ours", "to_self",
              "icmp_bad_quote", "icmp_no_service"):
        assert what[w] > 0, "no frame the model calls %s: %s" % (w, what)
    ttl = [(p, o) for p, o in zip(pkts, outs) if o.what == "ttl"]
    assert kinds_of(pkts, outs, "mtu_icmp") == {"too_big4_df", "too_big6"}
    assert sum(1 for _, o in ttl if o.detail is not None) >= 40
    assert sum(1 for _, o in ttl if o.detail is None) >= 20
    for fam in (4, 6):
        assert any(o.detail is not None and o.meta.family == fam
                   for _, o in ttl)
    kinds = {p.kind: o for p, o in zip(pkts, outs) if p.cat == "routed"}
    # what gen_routed() means each frame to be
    for k, w in (("ttl1_v4_1", "ttl"), ("hlim0_hbh_dst", "ttl"),
                 ("ttl2_v4_3", "route"), ("hlim2_rt", "route"),
                 ("ttl1_ihl4", "malformed"), ("hlim1_cut53", "malformed"),
                 ("self4_ttl1", "to_self"), ("self6_hlim0", "to_self"),
                 ("ip_group_224.0.0.1", "to_self"),
                 ("ns_other_snm", "not_ours"), ("udp_to_our_snm", "not_ours"),
                 ("foreign_0200000000fe_0", "not_ours"),
                 ("foreign_01005e000005_6", "not_ours"),
                 ("foreign_333300000002_4", "not_ours"),
                 ("group_ffffffffffff_0", "to_self"),
                 ("group_ffffffffffff_7", "local"),
                 ("ns_port_addr", "local"), ("arp_port_addr", "local")):
        assert kinds[k].what == w, (k, kinds[k])
    for k in ("ttl1_icmp4_3_1", "ttl1_icmp4_11_0", "hlim1_icmp6_1",
              "hlim1_icmp6_err_ext", "ttl1_frag4_mid", "hlim1_frag6_last",
              "ttl1_src_224.0.0.9", "hlim1_src_ff02::1", "hlim1_src_::"):
        assert kinds[k].what == "ttl" and kinds[k].detail is None, k
    for k in ("ttl1_echo4", "ttl1_icmp4_13_0", "ttl1_frag4_first", "hlim1_frag6_first",
              "hlim1_icmp6_128", "hlim0_echo6", "ttl1_big4_1400",
              "hlim1_big6_1400"):
        assert kinds[k].what == "ttl" and kinds[k].detail is not None, k
    for k in ("arp_port_addr", "ns_port_addr"):
        assert kinds[k].detail is not None, k


@pytest.mark.parametrize("mode", sorted(ROUTED_MODES))
def test_hostile_replay_routed(mode, routed_corpus, routed_runs):
    """Every frame of the routed corpus does what the model says: exact
    drop counts per reason (not_ours, to_self, ttl among them), the drops
    pcap holds exactly the dropped frames, the output exactly the
    forwarded (TTL decremented, to the gateway), balanced, answered
    frames and one time exceeded per answered TTL drop; every output
    frame is from the port's MAC, none to it, none a frame for a foreign
    MAC sent back out."""
    pkts, _, model, outs = routed_corpus
    res = routed_runs(mode)
    san = sanitizer_problems(res)
    assert not san, "sanitizer reports in %s:\n%s\n%r" % (
        mode, "\n".join(san[:40]), res)
    s = check_summary(res, len(pkts))
    drops = s["drops"]
    n = collections.Counter(o.what for o in outs)
    want = {r: 0 for r in pautil.DROP_REASONS if r != "police"}
    for r in ROUTED_DROPPED:
        want[r] = n[r]
    want["mtu"] += n["mtu_icmp"]
    got = {k: drops[k] for k in want}
    assert got == want, "drops %s, the model says %s (mode %s)" % (
        {k: v for k, v in got.items() if v or want[k]},
        {k: v for k, v in want.items() if v or got[k]}, mode)
    m_pol = n["police"]
    lc = max(1, s.get("lcores", 1))
    most = lc * (gh.POLICE_BURST + 2 +
                 int(gh.POLICE_RATE * (s.get("duration_s", 0) + 2)))
    assert max(0, m_pol - most) <= drops["police"] <= \
        m_pol - min(m_pol, gh.POLICE_BURST)

    # ---- the drops pcap
    index = {p.data: i for i, p in enumerate(pkts)}
    dropped = collections.Counter(read_pcap(res.drops_pcap))
    certain = collections.Counter(p.data for p, o in zip(pkts, outs)
                                  if o.what in ROUTED_DROPPED)
    policed = {p.data: o.detail for p, o in zip(pkts, outs)
               if o.what == "police"}
    missing = certain - dropped
    assert not missing, "%d frames the model drops are not in the drops " \
        "pcap:\n%s" % (sum(missing.values()), "\n".join(
            describe(pkts, outs, index[f]) for f in list(missing)[:20]))
    extra = dropped - certain
    not_policed = [f for f in extra if f not in policed]
    assert not not_policed, "%d dropped frames the model forwards:\n%s" % (
        len(not_policed), "\n".join(
            describe(pkts, outs, index[f]) if f in index else f[:96].hex()
            for f in not_policed[:20]))
    assert sum(extra.values()) == drops["police"]

    # ---- the output
    out_frames = read_pcap(res.out_pcap)
    answers = [o.detail for o in outs if o.what == "local" and
               o.detail is not None]
    te = [o.detail for o in outs if o.what == "ttl" and o.detail is not None]
    ie = s["icmp_errors"]
    assert s["neigh"]["tx_sent"] == len(answers), s["neigh"]
    assert ie["icmp_tx_packets"] == len(te) + n["mtu_icmp"], (ie, len(te))
    assert len(out_frames) == s["tx_packets"] + len(answers) + \
        ie["icmp_tx_packets"]
    # a routed port sends with its own MAC, never to it, and never sends
    # a frame that was for another MAC back out
    bad = [f[:32].hex() for f in out_frames
           if f[6:12] != PORT_MAC or f[0:6] == PORT_MAC]
    assert not bad, "%d output frames not from / to the port's MAC: %s" % (
        len(bad), bad[:10])
    foreign = {p.data for p, o in zip(pkts, outs) if o.what == "not_ours"}
    assert not [f for f in out_frames if f in foreign]
    group_dst = [f[:32].hex() for f in out_frames if f[0] & 1 and
                 f not in answers]
    assert not group_dst, "output to group MACs: %s" % group_dst[:10]

    got_out = collections.Counter(out_frames)
    want_out = collections.Counter(answers) + collections.Counter(te)
    for p, o in zip(pkts, outs):
        if o.what in ("route", "mark"):
            want_out[o.detail] += 1
    for f in set(policed) - set(extra):
        want_out[policed[f]] += 1
    missing = want_out - got_out
    if missing:
        by_out = {o.detail: i for i, o in enumerate(outs)
                  if isinstance(o.detail, bytes)}
        lines = []
        for f in list(missing)[:20]:
            i = index.get(f, by_out.get(f))
            lines.append(describe(pkts, outs, i) if i is not None
                         else f[:96].hex())
        pytest.fail("%d frames the model sends are not in the output "
                    "(mode %s):\n%s" % (sum(missing.values()), mode,
                                        "\n".join(lines)))
    rest = list((got_out - want_out).elements())
    # packet too big / fragmentation needed made of mtu_icmp frames
    tb_in = [i for i, o in enumerate(outs) if o.what == "mtu_icmp"]
    tb = [f for f in rest if is_too_big(f)]
    assert len(tb) == len(tb_in), (len(tb), len(tb_in))
    rest = [f for f in rest if not is_too_big(f)]
    lb_in = [(i, o) for i, o in enumerate(outs) if o.what == "lb"]
    assert len(rest) == len(lb_in), \
        "%d output frames are not forwarded inputs, %d balanced frames " \
        "expected (mode %s); first: %s" % (
            len(rest), len(lb_in), mode,
            [f[:64].hex() for f in rest[:5]])
    check_balanced(pkts, outs, model, lb_in, rest, mode)


def kinds_of(pkts, outs, what):
    return {p.kind for p, o in zip(pkts, outs) if o.what == what}


def is_too_big(f):
    err, m = gh.parse(f)
    if err or not m.flags & gh.F_L4:
        return False
    t = f[m.l4_off:m.l4_off + 2]
    return (m.l4_proto == 1 and t == b"\x03\x04") or \
        (m.l4_proto == 58 and t[:1] == b"\x02")
