# SPDX-License-Identifier: BSD-3-Clause
"""Reference model of the pktaccel ACL (docs/configuration.md, lib/acl/pa_acl.h)
and seeded generators of rule sets and traffic for the ACL integration
tests.

The model
---------
AclModel(acl_section).classify(pkt) -> Verdict(verdict, rule_id, action)

- pkt is a PktDesc: family (4, 6, or 0 for non-IP), src/dst (text),
  proto, sport/dport, has_ports, in_port (port name), non_ip.
- A rule matches when its src/dst prefixes ("any" matches both families,
  an IPv4 prefix only IPv4 packets, an IPv6 prefix only IPv6 packets), its
  sport/dport ranges, its proto and its in_port all match. Packets without
  L4 ports (ICMP/ICMPv6, non-first fragments, protocols other than TCP,
  UDP and SCTP) match the port fields as "any".
- Highest priority wins; equal priority: lowest id wins.
- No rule: the default action (rule_id None). Non-IP frames: forwarded,
  or dropped (reason "non_ip") when non_ip is "drop"; no rule is looked up.
- verdict is "forward" or "drop"; Verdict.reason is "acl", "non_ip" or
  None. A police rule is modelled as conforming (forward): the meter is
  checked by counting, not by the model.

The generators
--------------
gen_rules(seed, n, ...)      several hundred rules, IPv4 and IPv6, prefix
                             lengths of every class, ranges, single ports,
                             protocols by name and number, deliberate
                             priority ties, in_port on some.
gen_packets(rules, n, seed)  packets biased to hit the rules (addresses
                             drawn from the rules' prefixes, ports at the
                             range boundaries), TCP/UDP/ICMP/ICMPv6/GRE/SCTP
                             over IPv4 and IPv6, VLAN tags, first and
                             non-first fragments, ARP. Each is a GenPkt:
                             .data (frame bytes, built with struct: fast),
                             .desc (PktDesc), .kind, .flow; .malformed is
                             False (so pautil.match_output works on them).
                             Every frame carries b'IDX%08d' % index.

Run as a script it runs its own self-checks (python3 acl_model.py).
"""

import collections
import ipaddress
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "data"))
# The index marker every test frame carries, shared with the sample pcap.
from gen_sample import MARK_FMT, MARK_LEN  # noqa: E402
from gen_sample import find_marker as find_index  # noqa: E402
from gen_sample import csum16  # noqa: E402

REPLAY_PORT = "replay0"

PROTO_NAMES = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58}
PROTO_BY_NUM = {v: k for k, v in PROTO_NAMES.items()}
PORT_PROTOS = (6, 17, 132)          # protocols whose packets carry ports

PktDesc = collections.namedtuple(
    "PktDesc", "family src dst proto sport dport has_ports in_port non_ip")


class Verdict(collections.namedtuple("Verdict", "verdict rule_id action")):
    @property
    def reason(self):
        """Drop reason ("acl", "non_ip") or None when forwarded."""
        if self.verdict == "forward":
            return None
        return "non_ip" if self.action.get("action") == "non_ip" else "acl"


class GenPkt(collections.namedtuple("GenPkt", "data desc kind flow")):
    malformed = False


# --------------------------------------------------------------------------
# Parsing rule fields (config syntax) into canonical values

def parse_prefix(v):
    """None for "any", else an ipaddress network (a bare address is a host
    prefix). Raises ValueError on what the daemon refuses."""
    if v is None or v == "any":
        return None
    if not isinstance(v, str):
        raise ValueError("prefix must be a string: %r" % (v,))
    return ipaddress.ip_network(v, strict=True)


def parse_ports(v):
    """(lo, hi) from "any", "N", "LO-HI" or an integer N."""
    if v is None or v == "any":
        return (0, 65535)
    if isinstance(v, bool):
        raise ValueError("bad port %r" % (v,))
    if isinstance(v, int):
        if not 0 <= v <= 65535:
            raise ValueError("port %d out of range" % v)
        return (v, v)
    if not isinstance(v, str):
        raise ValueError("bad port range %r" % (v,))
    if "-" in v:
        lo, hi = v.split("-", 1)
        lo, hi = int(lo), int(hi)
    else:
        lo = hi = int(v)
    if not (0 <= lo <= hi <= 65535):
        raise ValueError("bad port range %r" % (v,))
    return (lo, hi)


def parse_proto(v):
    """None for "any", else the protocol number."""
    if v is None or v == "any":
        return None
    if isinstance(v, bool):
        raise ValueError("bad protocol %r" % (v,))
    if isinstance(v, int):
        n = v
    elif v in PROTO_NAMES:
        n = PROTO_NAMES[v]
    elif isinstance(v, str) and v.isdigit():
        n = int(v)
    else:
        raise ValueError("unknown protocol %r" % (v,))
    if not 0 <= n <= 255:
        raise ValueError("protocol %d out of range" % n)
    return n


def fmt_ports(lo, hi):
    if (lo, hi) == (0, 65535):
        return "any"
    return "%d" % lo if lo == hi else "%d-%d" % (lo, hi)


def fmt_proto(n):
    if n is None:
        return "any"
    return PROTO_BY_NUM.get(n, n)


def norm_rule(r):
    """A rule in the canonical form the daemon writes back (acl_rule_list,
    config_get): every field present, prefixes normalised, ports as
    "any"/"N"/"LO-HI", proto as a name where there is one, else a number;
    "hits"/"bytes" dropped."""
    out = {"id": r["id"], "priority": r.get("priority", 0)}
    for k in ("src", "dst"):
        p = parse_prefix(r.get(k, "any"))
        out[k] = "any" if p is None else str(p)
    for k in ("sport", "dport"):
        out[k] = fmt_ports(*parse_ports(r.get(k, "any")))
    out["proto"] = fmt_proto(parse_proto(r.get("proto", "any")))
    out["action"] = r["action"]
    if r["action"] == "mark":
        out["dscp"] = r["dscp"]
    if r["action"] == "police":
        out["rate_pps"] = r["rate_pps"]
        out["burst"] = r["burst"]
    if r.get("in_port") is not None:
        out["in_port"] = r["in_port"]
    return out


def sort_key(r):
    """acl_rule_list order: priority descending, then id ascending."""
    return (-r.get("priority", 0), r["id"])


# --------------------------------------------------------------------------
# The model

def _range(net):
    if net is None:
        return None
    return (int(net.network_address), int(net.broadcast_address), net.version)


class AclModel:
    def __init__(self, acl=None):
        acl = acl or {}
        self.default = acl.get("default", "permit")
        self.non_ip = acl.get("non_ip", "forward")
        assert self.default in ("permit", "drop"), self.default
        assert self.non_ip in ("forward", "drop"), self.non_ip
        self.rules = sorted(acl.get("rules", []), key=sort_key)
        ids = [r["id"] for r in self.rules]
        assert len(ids) == len(set(ids)), "duplicate rule ids"
        # per family: tuples in match order
        self._by_family = {4: [], 6: []}
        for r in self.rules:
            src = _range(parse_prefix(r.get("src", "any")))
            dst = _range(parse_prefix(r.get("dst", "any")))
            fams = {x[2] for x in (src, dst) if x is not None}
            assert len(fams) <= 1, "rule %s mixes families" % r["id"]
            sp = parse_ports(r.get("sport", "any"))
            dp = parse_ports(r.get("dport", "any"))
            proto = parse_proto(r.get("proto", "any"))
            action = {k: r[k] for k in ("action", "dscp", "rate_pps", "burst")
                      if k in r}
            t = (src[0] if src else 0, src[1] if src else (1 << 128) - 1,
                 dst[0] if dst else 0, dst[1] if dst else (1 << 128) - 1,
                 sp[0], sp[1], dp[0], dp[1],
                 -1 if proto is None else proto, r.get("in_port"),
                 r["id"], action)
            for fam in (4, 6):
                if not fams or fam in fams:
                    self._by_family[fam].append(t)

    def classify(self, p):
        if p.non_ip or p.family == 0:
            if self.non_ip == "drop":
                return Verdict("drop", None, {"action": "non_ip"})
            return Verdict("forward", None, {"action": "non_ip"})
        s = int(ipaddress.ip_address(p.src))
        d = int(ipaddress.ip_address(p.dst))
        hp = p.has_ports
        sport, dport, proto, inp = p.sport, p.dport, p.proto, p.in_port
        for (slo, shi, dlo, dhi, splo, sphi, dplo, dphi, rp, rin, rid,
             act) in self._by_family[p.family]:
            if not (slo <= s <= shi and dlo <= d <= dhi):
                continue
            if rp != -1 and rp != proto:
                continue
            if rin is not None and rin != inp:
                continue
            if hp and not (splo <= sport <= sphi and dplo <= dport <= dphi):
                continue
            verdict = "drop" if act["action"] == "drop" else "forward"
            return Verdict(verdict, rid, act)
        return Verdict("drop" if self.default == "drop" else "forward", None,
                       {"action": self.default})


def expected_hits(model, descs):
    """(hits per rule id (every rule, zeros included), default hits, non-IP
    packets) of a list of PktDesc."""
    hits = {r["id"]: 0 for r in model.rules}
    default = non_ip = 0
    for p in descs:
        v = model.classify(p)
        if p.non_ip:
            non_ip += 1
        elif v.rule_id is None:
            default += 1
        else:
            hits[v.rule_id] += 1
    return hits, default, non_ip


def trace_params(p, in_port=REPLAY_PORT):
    """trace_packet params for a PktDesc."""
    params = {"src": p.src, "dst": p.dst,
              "sport": p.sport if p.has_ports else 0,
              "dport": p.dport if p.has_ports else 0,
              "proto": PROTO_BY_NUM.get(p.proto, p.proto)}
    if in_port is not None:
        params["in_port"] = in_port
    return params


# --------------------------------------------------------------------------
# Random rule sets

_V4_SEEDS = ["10.0.0.0", "10.1.2.3", "10.200.0.9", "172.16.5.5",
             "172.31.255.254", "192.168.1.1", "192.168.100.200",
             "198.51.100.7", "198.51.100.200", "203.0.113.9", "203.0.113.128",
             "100.64.0.1", "1.2.3.4", "128.0.0.1", "255.255.255.254",
             "0.0.0.1", "127.1.1.1", "224.0.0.5"]
_V6_SEEDS = ["2001:db8::1", "2001:db8:1::91", "2001:db8:10::2",
             "2001:db8:ffff::80", "2001:db8:abcd:12::7", "fd00::53",
             "fd12:3456:789a::1", "fe80::1", "2a00:1450:4001:80b::200e",
             "2600::1", "::1", "8000::1", "ff02::1:ff00:1", "2001:db9::",
             "2001:db8:0:1:2:3:4:5", "3fff:ffff:ffff:ffff::"]


def _rand_addr(rng, family):
    seeds = _V4_SEEDS if family == 4 else _V6_SEEDS
    bits = 32 if family == 4 else 128
    cls = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    r = rng.random()
    if r < 0.7:
        base = int(ipaddress.ip_address(rng.choice(seeds)))
        # flip a few low bits so seeds spread a little
        keep = rng.randint(bits // 2, bits)
        mask = ((1 << bits) - 1) ^ ((1 << (bits - keep)) - 1)
        return cls((base & mask) | rng.getrandbits(bits - keep)
                   if keep < bits else base)
    return cls(rng.getrandbits(bits))


def _rand_len(rng, family):
    if family == 4:
        if rng.random() < 0.3:
            return rng.choice([8, 16, 24, 32])
        return rng.randint(1, 32)
    if rng.random() < 0.3:
        return rng.choice([32, 48, 56, 64, 96, 127, 128])
    return rng.randint(1, 128)


def _rand_prefix(rng, family, syntax_variety=True):
    a = _rand_addr(rng, family)
    n = _rand_len(rng, family)
    net = ipaddress.ip_network("%s/%d" % (a, n), strict=False)
    if syntax_variety and net.prefixlen == net.max_prefixlen and \
            rng.random() < 0.3:
        return str(net.network_address)         # bare address = host prefix
    return str(net)


def _rand_ports(rng):
    r = rng.random()
    if r < 0.4:
        return "any"
    if r < 0.65:
        p = rng.choice([0, 22, 53, 80, 443, 1024, 8080, 65535,
                        rng.randint(0, 65535), rng.randint(0, 2000)])
        return p if rng.random() < 0.3 else str(p)   # integer form too
    lo = rng.choice([0, 1, 1023, 1024, rng.randint(0, 65535),
                     rng.randint(0, 3000)])
    hi = rng.choice([lo, lo + 1, min(65535, lo + rng.randint(1, 50)),
                     min(65535, lo + rng.randint(1, 5000)), 65535])
    return "%d-%d" % (lo, hi)


def _rand_proto(rng, family):
    choices = ["any", "any", "tcp", "tcp", "udp", "udp", 6, "17", 47, "132",
               132, 50]
    if family in (4, None):
        choices += ["icmp", 1]
    if family in (6, None):
        choices += ["icmpv6", "58"]
    if rng.random() < 0.02:
        return rng.choice(["icmp", "icmpv6"])     # the other family's: valid
    return rng.choice(choices)


def _specificity(r):
    """0 (matches everything) .. 1 (one exact 5-tuple)."""
    sc = 0.0
    for k in ("src", "dst"):
        net = parse_prefix(r.get(k, "any"))
        if net is not None:
            sc += 0.3 * net.prefixlen / net.max_prefixlen
    for k in ("sport", "dport"):
        lo, hi = parse_ports(r.get(k, "any"))
        sc += 0.15 * (1 - (hi - lo) / 65535.0)
    if parse_proto(r.get("proto", "any")) is not None:
        sc += 0.1
    return min(sc, 0.999)


def gen_rules(seed, n=400, actions=("permit", "drop"), family_mix=(0.45, 0.4),
              in_port_frac=0.1, in_port=REPLAY_PORT, ids=None):
    """n random rules (list of dicts, config syntax). family_mix: shares of
    IPv4-prefix and IPv6-prefix rules; the rest use "any" for both (or for
    one of them). ids: optional list of ids to use."""
    rng = random.Random(seed)
    if ids is None:
        ids = set()
        ids.add(1)
        ids.add(2147483648)                 # the largest id accepted
        while len(ids) < n:
            ids.add(rng.choice([rng.randint(1, 5000),
                                rng.randint(1, 2147483648)]))
        ids = list(ids)
        rng.shuffle(ids)
    # a few priority classes with many members: deliberate ties
    prios = [0, 1, 5, 10, 50, 100, 1000, 65535, 2147483646, 2147483647]
    rules = []
    for k in range(n):
        rid = ids[k]
        r = {"id": rid}
        f = rng.random()
        if f < family_mix[0]:
            fam = 4
        elif f < family_mix[0] + family_mix[1]:
            fam = 6
        else:
            fam = None
        if fam is None:
            # "any" for both, or an explicit /0 of one family for one side
            sub = rng.random()
            if sub < 0.15:
                r["src"] = rng.choice(["0.0.0.0/0", "::/0"])
            elif sub < 0.5:
                r["src"] = "any"
                r["dst"] = "any"
            # else: both omitted (default "any")
        else:
            shape = rng.random()
            if shape < 0.45:
                r["src"] = _rand_prefix(rng, fam)
                r["dst"] = _rand_prefix(rng, fam) if rng.random() < 0.5 \
                    else "any"
            elif shape < 0.85:
                r["dst"] = _rand_prefix(rng, fam)
                if rng.random() < 0.5:
                    r["src"] = "any"
            else:
                r["src"] = _rand_prefix(rng, fam)
        for k2 in ("sport", "dport"):
            v = _rand_ports(rng)
            if v != "any" or rng.random() < 0.5:
                r[k2] = v
        pv = _rand_proto(rng, fam)
        if fam is None:
            # no address constraint: keep the rule from matching everything
            while pv == "any":
                pv = _rand_proto(rng, fam)
            if r.get("dport", "any") == "any" and rng.random() < 0.7:
                r["dport"] = _rand_ports(rng)
        if pv != "any" or rng.random() < 0.5:
            r["proto"] = pv
        # Priority follows specificity, with noise, so that broad rules
        # do not shadow the whole table; a few classes: many ties.
        spec = _specificity(r)
        pr = rng.random()
        if pr < 0.8:
            k = int(spec * len(prios)) + rng.randint(-1, 1)
            r["priority"] = prios[max(0, min(len(prios) - 1, k))]
        elif pr < 0.9:
            r["priority"] = rng.randint(0, 2147483647) if spec > 0.5 \
                else rng.randint(0, 100)
        elif pr < 0.95:
            r["priority"] = rng.choice(prios[:3])
        # else: priority omitted (0)
        r["action"] = rng.choice(list(actions))
        if r["action"] == "mark":
            r["dscp"] = rng.randint(0, 63)
        if r["action"] == "police":
            r["rate_pps"] = rng.randint(1, 1000)
            r["burst"] = rng.randint(1, 100)
        if rng.random() < in_port_frac:
            r["in_port"] = in_port
        rules.append(r)
    return rules


# --------------------------------------------------------------------------
# Frames (struct, no scapy)

ETH_DST = bytes.fromhex("0200000000fe")


def _filler(rng, lo, hi):
    n = rng.randint(lo, hi)
    return bytes(rng.choice(b"abcdefghjklmnopqrstuvwxyz0123456789-")
                 for _ in range(n))


def l4_header(proto, sport, dport, payload_len, family):
    """Fixed L4 header for the protocols the parser reads; b"" otherwise."""
    if proto == 6:
        return struct.pack("!HHIIBBHHH", sport, dport, 1000, 1, 5 << 4, 0x18,
                           8192, 0, 0)
    if proto == 17:
        return struct.pack("!HHHH", sport, dport, 8 + payload_len, 0)
    if proto == 132:
        return struct.pack("!HHII", sport, dport, 0x12345678, 0)
    if proto == 1 and family == 4:
        return struct.pack("!BBHHH", 8, 0, 0, 0x77, 1)
    if proto == 58 and family == 6:
        return struct.pack("!BBHHH", 128, 0, 0, 0x66, 1)
    if proto == 47:
        return struct.pack("!HH", 0, 0x0800)
    return b""


def build_frame(desc, payload, src_mac, vlan=None, frag=None, tos=0,
                flow_label=0, ip_id=0, ipv4_options=b"", ipv6_ext=()):
    """Ethernet frame for a PktDesc. vlan: a VLAN id (802.1Q) or a pair
    (802.1ad outer, 802.1Q inner). frag: None, "first" (MF, offset 0;
    L4 header present), "atomic" (IPv6 fragment header, offset 0, M clear:
    not a fragment) or "later" (offset > 0, no L4 header). IPv6 fragments
    use a fragment header; ipv6_ext: extension headers before it / before
    the L4 header, "hbh" (hop-by-hop) or "dst" (destination options).
    payload follows the L4 header. Non-IP descs give an ARP request
    carrying payload in its trailer."""
    eth = ETH_DST + src_mac
    if isinstance(vlan, tuple):
        eth += struct.pack("!HHHH", 0x88a8, vlan[0], 0x8100, vlan[1])
    elif vlan is not None:
        eth += struct.pack("!HH", 0x8100, vlan)
    if desc.non_ip:
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, src_mac,
                          bytes([198, 51, 100, 1]), b"\0" * 6,
                          bytes([198, 51, 100, 2]))
        fr = eth + struct.pack("!H", 0x0806) + arp + payload
        return fr + b"\0" * max(0, 60 - len(fr))
    later = frag == "later"
    l4 = b"" if later else l4_header(desc.proto, desc.sport, desc.dport,
                                     len(payload), desc.family)
    body = l4 + payload
    if desc.family == 4:
        ihl = 5 + len(ipv4_options) // 4
        if frag == "first":
            ff = 0x2000
        elif later:
            ff = 0x2000 * (len(payload) % 2) | (1 + len(payload) % 185)
        else:
            ff = 0
        tot = ihl * 4 + len(body)
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, tot, ip_id, ff, 64,
                         desc.proto, 0,
                         ipaddress.IPv4Address(desc.src).packed,
                         ipaddress.IPv4Address(desc.dst).packed) + ipv4_options
        ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
        fr = eth + b"\x08\x00" + ip + body
    else:
        chain = [{"hbh": 0, "dst": 60}[e] for e in ipv6_ext]
        if frag is not None:
            chain.append(44)
        chain.append(desc.proto)
        ext = b""
        for k, t in enumerate(chain[:-1]):
            if t == 44:
                off = 1 + len(payload) % 100 if frag == "later" else 0
                m = {"first": 1, "atomic": 0}.get(frag, len(payload) % 2)
                ext += struct.pack("!BBHI", chain[k + 1], 0, off << 3 | m,
                                   0x10000 + ip_id)
            else:       # 8 bytes: next header, length 0, PadN of 4
                ext += struct.pack("!BBBB4s", chain[k + 1], 0, 1, 4,
                                   b"\0" * 4)
        nh = chain[0]
        vtf = (6 << 28) | (tos << 20) | (flow_label & 0xFFFFF)
        ip = struct.pack("!IHBB16s16s", vtf, len(ext) + len(body), nh, 64,
                         ipaddress.IPv6Address(desc.src).packed,
                         ipaddress.IPv6Address(desc.dst).packed)
        fr = eth + b"\x86\xdd" + ip + ext + body
    return fr + b"\0" * max(0, 60 - len(fr))


# --------------------------------------------------------------------------
# Random traffic

def _addr_in(rng, net, family, edge):
    """An address inside net (or just outside it when edge says so)."""
    bits = 32 if family == 4 else 128
    cls = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    if net is None:
        return _rand_addr(rng, family)
    lo = int(net.network_address)
    hi = int(net.broadcast_address)
    if edge:
        v = rng.choice([lo, hi, lo - 1, hi + 1])
        return cls(v % (1 << bits))
    return cls(lo + rng.randint(0, hi - lo))


def _port_in(rng, lo_hi, edge):
    lo, hi = lo_hi
    if edge:
        return rng.choice([lo, hi, max(0, lo - 1), min(65535, hi + 1)])
    return rng.randint(lo, hi)


_OTHER_PROTOS = {4: [6, 17, 1, 47, 132, 6, 17, 50, 58],
                 6: [6, 17, 58, 47, 132, 6, 17, 1, 50]}


def gen_packets(rules, n, seed, in_port=REPLAY_PORT, arp_frac=0.02,
                vlan_frac=0.1, frag_later_frac=0.07, frag_first_frac=0.05,
                derived_frac=0.75, ext_frac=0.06, jumbo_frac=0.003):
    """n GenPkt; packet i carries b'IDX%08d' % i."""
    rng = random.Random(seed)
    parsed = []
    for r in rules:
        src = parse_prefix(r.get("src", "any"))
        dst = parse_prefix(r.get("dst", "any"))
        fam = (src or dst).version if (src or dst) is not None else None
        parsed.append((src, dst, fam, parse_ports(r.get("sport", "any")),
                       parse_ports(r.get("dport", "any")),
                       parse_proto(r.get("proto", "any"))))
    out = []
    for i in range(n):
        mac = struct.pack("!HI", 0x0200, 0x1000 + (i % 251))
        if rng.random() < arp_frac:
            d = PktDesc(0, None, None, None, 0, 0, False, in_port, True)
            data = build_frame(d, MARK_FMT % i + b"\0" * 7, mac)
            out.append(GenPkt(data, d, "arp", "arp:%s" % mac.hex()))
            continue
        edge_a = edge_p = False
        if parsed and rng.random() < derived_frac:
            src, dst, fam, sp, dp, proto = rng.choice(parsed)
            if fam is None:
                if src is not None or dst is not None:
                    fam = (src or dst).version
                else:
                    fam = rng.choice([4, 6])
            edge_a = rng.random() < 0.1
            edge_p = rng.random() < 0.15
            s = _addr_in(rng, src, fam, edge_a and rng.random() < 0.5)
            d_ = _addr_in(rng, dst, fam, edge_a)
            if proto is None or rng.random() < 0.05:
                proto = rng.choice(_OTHER_PROTOS[fam])
            sport = _port_in(rng, sp, edge_p and rng.random() < 0.5)
            dport = _port_in(rng, dp, edge_p)
        else:
            fam = 4 if rng.random() < 0.55 else 6
            s = _rand_addr(rng, fam)
            d_ = _rand_addr(rng, fam)
            proto = rng.choice(_OTHER_PROTOS[fam])
            sport = rng.choice([rng.randint(0, 65535), rng.randint(0, 2000),
                                53, 80, 443])
            dport = rng.choice([rng.randint(0, 65535), rng.randint(0, 2000),
                                53, 80, 443])
        frag = None
        fr = rng.random()
        if fr < frag_later_frac:
            frag = "later"
        elif fr < frag_later_frac + frag_first_frac and proto in (6, 17):
            frag = "first" if fam == 4 or rng.random() < 0.7 else "atomic"
        has_ports = proto in PORT_PROTOS and frag != "later"
        if not has_ports:
            # the frame carries no ports: keep the description honest
            sport = dport = 0
        desc = PktDesc(fam, str(s), str(d_), proto, sport, dport, has_ports,
                       in_port, False)
        vlan = None
        if rng.random() < vlan_frac:
            vlan = rng.randint(1, 4094) if rng.random() < 0.7 else \
                (rng.randint(1, 4094), rng.randint(1, 4094))
        opts, ext = b"", ()
        if rng.random() < ext_frac:
            if fam == 4:
                opts = rng.choice([b"\x94\x04\x00\x00",       # router alert
                                   b"\x01" * 8, b"\x01\x01\x01\x00"])
            else:
                ext = rng.choice([("hbh",), ("dst",), ("hbh", "dst")])
        big = rng.random() < jumbo_frac
        payload = MARK_FMT % i + (_filler(rng, 2100, 4000) if big
                                  else _filler(rng, 0, 24))
        tos = rng.randint(0, 255)
        data = build_frame(desc, payload, mac, vlan=vlan, frag=frag, tos=tos,
                           flow_label=rng.getrandbits(20), ip_id=i & 0xFFFF,
                           ipv4_options=opts, ipv6_ext=ext)
        kind = "%s%d%s%s%s%s" % (
            PROTO_BY_NUM.get(proto, "p%d" % proto), fam,
            "-" + frag if frag else "",
            "-vlan" if isinstance(vlan, int) else
            "-qinq" if vlan is not None else "",
            "-opts" if opts or ext else "", "-jumbo" if big else "")
        if frag in ("first", "later"):
            flow = (fam, desc.src, desc.dst, proto)
        else:
            flow = (fam, desc.src, desc.dst, proto, sport, dport)
        out.append(GenPkt(data, desc, kind, repr(flow)))
    return out


# --------------------------------------------------------------------------
# Self-checks (no daemon needed)

def _d(src, dst, proto=17, sport=1000, dport=53, has_ports=None,
       in_port=REPLAY_PORT):
    fam = ipaddress.ip_address(src).version
    if has_ports is None:
        has_ports = proto in PORT_PROTOS
    return PktDesc(fam, src, dst, proto, sport, dport, has_ports, in_port,
                   False)


def self_check_semantics():
    """Hand-made cases of the documented semantics."""
    acl = {"default": "permit", "rules": [
        {"id": 5, "priority": 10, "src": "10.0.0.0/8", "dport": "53",
         "proto": "udp", "action": "drop"},
        {"id": 3, "priority": 10, "src": "10.1.0.0/16", "action": "permit"},
        {"id": 7, "priority": 20, "dst": "2001:db8::/32", "proto": "tcp",
         "dport": "80-88", "action": "drop"},
        {"id": 8, "priority": 1, "src": "::/0", "action": "drop"},
        {"id": 9, "priority": 30, "src": "192.0.2.1", "in_port": "wan0",
         "action": "drop"},
        {"id": 11, "priority": 0, "src": "any", "dst": "any", "sport": 7,
         "action": "mark", "dscp": 46},
    ]}
    m = AclModel(acl)
    c = m.classify
    # equal priority: lower id wins (3 beats 5 for 10.1/16 UDP 53)
    assert c(_d("10.1.2.3", "1.1.1.1")) == ("forward", 3, {"action": "permit"})
    assert c(_d("10.2.2.3", "1.1.1.1")).rule_id == 5
    assert c(_d("10.2.2.3", "1.1.1.1")).reason == "acl"
    # a port mismatch falls through to the next rule / default
    assert c(_d("10.2.2.3", "1.1.1.1", dport=54)) == \
        ("forward", None, {"action": "permit"})
    # port-less packets match port fields as any
    assert c(_d("10.2.2.3", "1.1.1.1", proto=17, dport=54,
                has_ports=False)).rule_id == 5
    # ICMP: rule 5 wants udp; rule 11 (sport 7) matches a port-less packet
    assert c(_d("10.2.2.3", "1.1.1.1", proto=1)).rule_id == 11
    # IPv6 rule 7 vs IPv4 packets; ::/0 matches IPv6 only
    assert c(_d("2001:db9::1", "2001:db8::5", proto=6, dport=88)).rule_id == 7
    assert c(_d("2001:db9::1", "2001:db8::5", proto=6, dport=89)).rule_id == 8
    assert c(_d("2001:db9::1", "2001:db8::5", proto=47,
                has_ports=False)).rule_id == 8
    assert c(_d("9.9.9.9", "8.8.8.8", proto=6, dport=89)).rule_id is None
    # in_port
    assert c(_d("192.0.2.1", "8.8.8.8")).rule_id is None
    assert c(_d("192.0.2.1", "8.8.8.8", in_port="wan0")).rule_id == 9
    # mark is a forward with its action
    v = c(_d("9.9.9.9", "8.8.8.8", sport=7))
    assert v.verdict == "forward" and v.rule_id == 11 and v.action == \
        {"action": "mark", "dscp": 46}
    # default drop, non-IP
    m2 = AclModel({"default": "drop", "non_ip": "drop", "rules": []})
    assert m2.classify(_d("9.9.9.9", "8.8.8.8")).verdict == "drop"
    arp = PktDesc(0, None, None, None, 0, 0, False, REPLAY_PORT, True)
    assert m2.classify(arp).reason == "non_ip"
    assert AclModel({}).classify(arp).verdict == "forward"
    # normalisation
    assert norm_rule({"id": 1, "src": "10.0.0.1", "dport": 53, "proto": "6",
                      "action": "drop"}) == {
        "id": 1, "priority": 0, "src": "10.0.0.1/32", "dst": "any",
        "sport": "any", "dport": "53", "proto": "tcp", "action": "drop"}
    assert norm_rule({"id": 1, "proto": 47, "sport": "0-65535",
                      "action": "permit"})["proto"] == 47
    assert norm_rule({"id": 1, "proto": 47, "sport": "0-65535",
                      "action": "permit"})["sport"] == "any"


def scapy_desc(frame):
    """The PktDesc scapy sees in a frame built by build_frame (checks the
    struct builder against an independent dissector)."""
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy import all as s
    p = s.Ether(frame)
    if p.haslayer(s.ARP):
        return PktDesc(0, None, None, None, 0, 0, False, REPLAY_PORT, True)
    if not p.haslayer(s.IPv6):      # (GRE payloads dissect as inner IP)
        ip = p[s.IP]
        later = ip.frag > 0
        proto = ip.proto
        fam, src, dst = 4, ip.src, ip.dst
        # recompute the header checksum independently
        raw = bytearray(bytes(ip)[:ip.ihl * 4])
        raw[10:12] = b"\0\0"
        assert csum16(bytes(raw)) == ip.chksum, "IPv4 checksum wrong"
    else:
        ip = p[s.IPv6]
        fam, src, dst = 6, ip.src, ip.dst
        later = False
        proto = ip.nh
        layer = ip.payload
        while isinstance(layer, (s.IPv6ExtHdrHopByHop, s.IPv6ExtHdrDestOpt,
                                 s.IPv6ExtHdrFragment)):
            proto = layer.nh
            if isinstance(layer, s.IPv6ExtHdrFragment) and layer.offset:
                later = True
                break
            layer = layer.payload
    has_ports = proto in PORT_PROTOS and not later
    sport = dport = 0
    if has_ports:
        raw = bytes(ip.payload) if fam == 4 else bytes(layer)
        sport, dport = struct.unpack("!HH", raw[:4])
    return PktDesc(fam, str(ipaddress.ip_address(src)),
                   str(ipaddress.ip_address(dst)), proto, sport, dport,
                   has_ports, REPLAY_PORT, False)


def self_check_generators(n_rules=400, n_pkts=3000, seed=1):
    rules = gen_rules(seed, n_rules)
    acl = {"default": "drop", "rules": rules}
    m = AclModel(acl)
    pkts = gen_packets(rules, n_pkts, seed + 1)
    hits, default, non_ip = expected_hits(m, [p.desc for p in pkts])
    assert len({p.data for p in pkts}) == len(pkts), "duplicate frames"
    for i, p in enumerate(pkts):
        assert p.data.find(MARK_FMT % i) >= 0
        assert len(p.data) >= 60
    n_hit = sum(1 for v in hits.values() if v)
    assert n_hit >= 0.5 * n_rules, "only %d of %d rules hit" % (n_hit,
                                                                n_rules)
    lens = collections.Counter()
    for r in rules:
        for k in ("src", "dst"):
            net = parse_prefix(r.get(k, "any"))
            if net is not None:
                lens[(net.version, net.prefixlen)] += 1
    assert len([k for k in lens if k[0] == 4]) >= 25, sorted(lens)
    assert len([k for k in lens if k[0] == 6]) >= 60, sorted(lens)
    kinds = collections.Counter(p.kind.split("-")[0] for p in pkts)
    for k in ("tcp4", "udp4", "icmp4", "tcp6", "udp6", "icmpv66", "p474",
              "p1326", "arp"):
        assert kinds[k] > 0, (k, kinds)
    assert any("later" in p.kind for p in pkts)
    assert any("first" in p.kind for p in pkts)
    for k in ("vlan", "qinq", "atomic", "opts", "jumbo"):
        assert any(k in p.kind for p in pkts), k
    # the struct frames say what their descriptions say
    for k, p in enumerate(pkts):
        if k >= 400 and "-" not in p.kind:
            continue
        got = scapy_desc(p.data)
        assert got == p.desc, (p.kind, got, p.desc)
    return {"rules_hit": n_hit, "default": default, "non_ip": non_ip,
            "kinds": dict(kinds)}


if __name__ == "__main__":
    self_check_semantics()
    print(self_check_generators())
    print("acl_model self-checks passed")
