# SPDX-License-Identifier: BSD-3-Clause
"""The load balancer in lab replay mode (docs/lab.md, docs/configuration.md,
lib/lb/pa_lb.h): tens of thousands of flows through a weighted ipip
service (every output decapsulates to its exact input, outer headers as
the contract has them, shares following the weights, the same mapping
from run to run and from one pipeline layout to another); nat, dsr and
IPv6 services checked byte for byte; traffic that is not for a service
left alone; fragments; NAT replies; no_backend and mtu drops; the ACL
before the LB.

Output frames are matched to input frames by content (the inner IP
packet for ipip, the IDX marker of the payload otherwise), never by
position."""

import collections
import random

import pytest

import lb_model as lm
import pautil
from pautil import (PIPE2, PIPE4, RTC1, RTC2, check_flow_order, check_summary,
                    match_output, read_pcap, write_pcap)

Pkt = pautil.gen_sample.Pkt
MARK_LEN = pautil.gen_sample.MARK_LEN
MODES = {"rtc1": RTC1, "rtc2": RTC2, "pipeline4": PIPE4, "pipeline2": PIPE2}

LOCAL4 = "192.0.2.254"
LOCAL6 = "2001:db8::fe"

BIG_SEED = 20250412
BIG_FLOWS = 20000
BIG_NOISE = 2000
BIG_VIP = "192.0.2.10"
BIG_BACKENDS = ["10.1.0.%d" % (k + 1) for k in range(10)]
BIG_WEIGHTS = [1, 2, 3, 3, 4, 5, 6, 8, 10, 12]
# |flow share - weight share| allowed, absolute (a share is about 2 to 22
# per cent here; 20000 flows give a binomial spread of 0.1 to 0.3 points),
# and relative
SHARE_REL_TOL = 0.15
SHARE_TOL = 0.01


# --------------------------------------------------------------------------
# helpers

def lb_conf(services, mode="rtc1", acl=None):
    """The traffic of these tests holds ICMP echo requests to VIPs as
    traffic the LB leaves alone: lb.icmp_echo is false here (the answers
    it gives when true are test_lb_icmp.py's)."""
    c = {"pipeline": MODES[mode],
         "lb": {"local_addr": LOCAL4, "local_addr6": LOCAL6,
                "icmp_echo": False, "services": services}}
    if acl is not None:
        c["acl"] = acl
    return c


def backends(addrs, weights=None, **extra):
    out = []
    for k, a in enumerate(addrs):
        b = {"addr": a, "weight": weights[k] if weights else 1}
        for key, vals in extra.items():
            if vals[k] is not None:
                b[key] = vals[k]
        out.append(b)
    return out


def run_lb(tmp_path, name, conf, pkts, expect_drops=None, timeout=None):
    """Replay pkts (a list of Pkt) with conf; check the summary. Returns
    (summary, output frames, dropped frames)."""
    inp = str(tmp_path / (name + "-in.pcap"))
    out = str(tmp_path / (name + "-out.pcap"))
    drops = str(tmp_path / (name + "-drops.pcap"))
    write_pcap(inp, [p.data for p in pkts])
    res = pautil.replay(inp, out, conf, drops=drops,
                        timeout=timeout or pautil.REPLAY_TIMEOUT)
    s = check_summary(res, len(pkts), expect_drops)
    assert isinstance(s.get("lb"), dict), "summary has no lb object: %s" % s
    return s, read_pcap(out), read_pcap(drops)


class Traffic:
    """A growing list of Pkt whose markers are their indexes."""

    def __init__(self):
        self.pkts = []

    def __len__(self):
        return len(self.pkts)

    def next_payload(self, n=16):
        i = len(self.pkts)
        return lm.marker(i) + lm.filler(i, n)

    def add(self, frame, flow, kind):
        self.pkts.append(Pkt(bytes(frame), False, flow, kind))
        return len(self.pkts) - 1

    def l4(self, fam, proto, src, dst, sport, dport, kind, n=16, **kw):
        fr = lm.build_frame(fam, proto, src, dst, sport, dport,
                            self.next_payload(n), **kw)
        return self.add(fr, (fam, proto, src, dst, sport, dport), kind)


def assert_no_problems(problems, what):
    assert not problems, "%d %s:\n%s" % (len(problems), what,
                                         "\n".join(problems[:25]))


def check_shares(counts, addrs, weights, total):
    bad = []
    for a, want in zip(addrs, lm.maglev_shares(weights)):
        got = counts.get(a, 0) / float(total)
        if abs(got - want) > SHARE_TOL or \
                abs(got - want) > SHARE_REL_TOL * want:
            bad.append("%s: %.4f of the flows, weight share %.4f" % (
                a, got, want))
    assert not bad, "shares off by more than %.3f (or %d%%):\n%s\n" \
        "(all: %s)" % (SHARE_TOL, SHARE_REL_TOL * 100, "\n".join(bad),
                       sorted(counts.items()))


@pytest.fixture(scope="module")
def port_mac(tmp_path_factory):
    """The replay port's MAC: the source MAC of a load-balanced frame."""
    tmp = tmp_path_factory.mktemp("portmac")
    t = Traffic()
    t.l4(4, lm.TCP, "198.51.100.1", "192.0.2.10", 1000, 80, "probe")
    conf = lb_conf([{"name": "probe", "vip": "192.0.2.10", "port": 80,
                     "proto": "tcp", "forward": "ipip",
                     "backends": [{"addr": "10.9.9.9"}]}])
    s, out, _ = run_lb(tmp, "probe", conf, t.pkts, {})
    assert len(out) == 1, out
    mac = lm.dissect(out[0]).src
    assert mac != lm.CLIENT_MAC and mac != lm.APPLIANCE_MAC, lm.mac_str(mac)
    assert not mac[0] & 1, "port MAC %s is multicast" % lm.mac_str(mac)
    return mac


# --------------------------------------------------------------------------
# tens of thousands of flows through a weighted ipip service

def gen_big(seed=BIG_SEED, n_flows=BIG_FLOWS, n_noise=BIG_NOISE):
    """BIG_FLOWS TCP flows to BIG_VIP:80 (one or two packets each, DF or
    not, various TOS, a few VLAN-tagged or with IPv4 options, small frames
    with Ethernet padding) and BIG_NOISE packets that are not for the
    service, shuffled together. Returns (Traffic, vip index set)."""
    rng = random.Random(seed)
    keys = set()
    flows = []
    while len(flows) < n_flows:
        k = ("100.%d.%d.%d" % (64 + rng.randrange(64), rng.randrange(256),
                               1 + rng.randrange(254)),
             rng.randint(1024, 65535))
        if k in keys:
            continue
        keys.add(k)
        f = len(flows)
        flows.append({
            "src": k[0], "sport": k[1],
            "smac": bytes([2, 0, 1, (f >> 16) & 0xFF, (f >> 8) & 0xFF,
                           f & 0xFF]),
            "df": rng.random() < 0.5,
            "tos": rng.choice([0, 0, 0x10, 0x28, 0xB8, 0x03]),
            "vlan": 100 + f % 7 if f % 97 == 0 else None,
            "opts": b"\x94\x04\x00\x00" if f % 89 == 0 else b"",
            "n": 2 if rng.random() < 0.5 else 1, "sent": 0})
    order = [f for f, fl in enumerate(flows) for _ in range(fl["n"])]
    order += [-1] * n_noise
    rng.shuffle(order)
    t = Traffic()
    vip = set()
    noise_kinds = ("otherport", "otherproto", "otherdst", "icmp")
    for f in order:
        if f < 0:
            kind = rng.choice(noise_kinds)
            src = "198.18.%d.%d" % (rng.randrange(256), 1 + rng.randrange(254))
            sp = rng.randint(1024, 65535)
            if kind == "otherport":
                t.l4(4, lm.TCP, src, BIG_VIP, sp, rng.choice([81, 443, 8080]),
                     kind, n=rng.randint(0, 30))
            elif kind == "otherproto":
                t.l4(4, lm.UDP, src, BIG_VIP, sp, 80, kind,
                     n=rng.randint(0, 30))
            elif kind == "otherdst":
                t.l4(4, lm.TCP, src, "192.0.2.11", sp, 80, kind,
                     n=rng.randint(0, 30))
            else:
                t.add(lm.build_icmp4(src, BIG_VIP, t.next_payload(20),
                                     ident=sp, ip_id=len(t)),
                      ("icmp", src), kind)
            continue
        fl = flows[f]
        k = fl["sent"]
        fl["sent"] += 1
        i = t.l4(4, lm.TCP, fl["src"], BIG_VIP, fl["sport"], 80, "vip",
                 n=rng.randint(0, 40), smac=fl["smac"], vlan=fl["vlan"],
                 tos=fl["tos"], df=fl["df"], ip_id=len(t) & 0xFFFF,
                 ip_opts=fl["opts"], seq=1 + 1000 * k,
                 tcp_flags=0x02 if k == 0 else 0x18)
        vip.add(i)
    return t, vip


def analyze_ipip(pkts, vip, frames, port_mac, local_addr, allowed):
    """Every output frame is either an untouched non-service input or a
    valid ipip encapsulation of a service input to an allowed backend;
    every input is there exactly once; per-flow order kept. Returns
    {flow: backend}."""
    by_bytes = {p.data: i for i, p in enumerate(pkts) if i not in vip}
    by_inner = {lm.dissect(pkts[i].data).ip: i for i in vip}
    assert len(by_inner) == len(vip), "inner packets not unique"
    idx = []
    mapping = {}
    problems = []
    for n, fr in enumerate(frames):
        i = by_bytes.get(fr)
        if i is not None:
            idx.append(i)
            continue
        dst, inner, f = lm.outer_dst(fr)
        i = by_inner.get(inner)
        if i is None:
            mk = lm.find_marker(fr)
            problems.append("output #%d matches no input (marker %s, %s): %s"
                            % (n, mk, pkts[mk].kind if mk is not None and
                               mk < len(pkts) else "-", fr[:80].hex()))
            continue
        idx.append(i)
        p = pkts[i]
        src_mac = lm.dissect(p.data).src
        pr = (lm.check_ipip4 if f.ethertype == lm.ETH_IP4 else
              lm.check_ipip6)(fr, p.data, local_addr, dst, port_mac, src_mac)
        if dst not in allowed:
            pr.append("backend %s not usable (%s)" % (dst, sorted(allowed)))
        if mapping.setdefault(p.flow, dst) != dst:
            pr.append("flow %s went to %s and %s" % (p.flow, mapping[p.flow],
                                                      dst))
        problems += ["output #%d (input #%d): %s" % (n, i, x) for x in pr]
    assert_no_problems(problems, "bad output frames")
    dups = [i for i, c in collections.Counter(idx).items() if c > 1]
    assert not dups, "inputs forwarded twice: %s" % dups[:20]
    missing = set(range(len(pkts))) - set(idx)
    assert not missing, "%d inputs not forwarded: %s" % (
        len(missing), sorted(missing)[:20])
    check_flow_order(pkts, idx)
    return mapping


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    t, vip = gen_big()
    tmp = tmp_path_factory.mktemp("lbbig")
    svc = {"name": "web", "vip": BIG_VIP, "port": 80, "proto": "tcp",
           "scheduler": "maglev", "forward": "ipip",
           "backends": backends(BIG_BACKENDS, BIG_WEIGHTS)}
    return t.pkts, vip, svc, tmp


def big_run(big, mode, name):
    pkts, vip, svc, tmp = big
    s, out, drops = run_lb(tmp, name, lb_conf([svc], mode), pkts, {},
                           timeout=180)
    assert drops == []
    return s, out


@pytest.fixture(scope="module")
def big_rtc1(big):
    s, out = big_run(big, "rtc1", "rtc1-a")
    return {"summary": s, "out": out, "mapping": None}


def rtc1_mapping(big, big_rtc1, port_mac):
    """The checked flow -> backend mapping of the first rtc1 run."""
    if big_rtc1["mapping"] is None:
        pkts, vip, _, _ = big
        big_rtc1["mapping"] = analyze_ipip(pkts, vip, big_rtc1["out"],
                                           port_mac, LOCAL4,
                                           set(BIG_BACKENDS))
    return big_rtc1["mapping"]


def test_ipip_many_flows_weighted(big, big_rtc1, port_mac):
    """20000 flows, 10 backends of weights 1..12: every output frame is a
    valid IPv4-in-IPv4 encapsulation of its input, byte-identical inside,
    padding cut, MACs as the contract has them; each flow on one backend;
    flow shares follow the weights; the noise passes untouched."""
    pkts, vip, svc, _ = big
    s = big_rtc1["summary"]
    mapping = rtc1_mapping(big, big_rtc1, port_mac)
    assert len(mapping) == BIG_FLOWS
    counts = collections.Counter(mapping.values())
    check_shares(counts, BIG_BACKENDS, BIG_WEIGHTS, BIG_FLOWS)
    lb = s["lb"]
    assert lb["flows_created"] == BIG_FLOWS, lb
    assert lb["balanced"] == len(vip), lb
    assert lb["fragments"] == 0 and lb["no_backend"] == 0 and \
        lb["mtu"] == 0 and lb["flow_table_full"] == 0, lb
    assert s["tx_packets"] == len(pkts)


def test_maglev_same_mapping_in_two_runs(big, big_rtc1, port_mac):
    """A second daemon run gives the same flow -> backend mapping (and, one
    worker, the very same output file)."""
    pkts, vip, svc, _ = big
    out1 = big_rtc1["out"]
    _, out2 = big_run(big, "rtc1", "rtc1-b")
    m1 = rtc1_mapping(big, big_rtc1, port_mac)
    m2 = analyze_ipip(pkts, vip, out2, port_mac, LOCAL4, set(BIG_BACKENDS))
    diff = [f for f in m1 if m1[f] != m2.get(f)]
    assert not diff, "%d flows changed backend between runs, e.g. %s" % (
        len(diff), [(f, m1[f], m2.get(f)) for f in diff[:5]])
    assert out1 == out2, "two rtc1 runs wrote different outputs"


@pytest.mark.parametrize("mode", ["pipeline4", "pipeline2", "rtc2"])
def test_modes_same_mapping_as_rtc1(mode, big, big_rtc1, port_mac):
    """Pipeline (rx, classify, lb, tx lcores) and two run-to-completion
    workers: the same per-flow backends as one worker, per-flow order kept,
    nothing lost."""
    pkts, vip, svc, _ = big
    s, out = big_run(big, mode, mode)
    m1 = rtc1_mapping(big, big_rtc1, port_mac)
    m = analyze_ipip(pkts, vip, out, port_mac, LOCAL4, set(BIG_BACKENDS))
    diff = [f for f in m1 if m1[f] != m.get(f)]
    assert not diff, "%d flows on another backend than with rtc1, e.g. %s" \
        % (len(diff), [(f, m1[f], m.get(f)) for f in diff[:5]])
    assert s["lb"]["flows_created"] == BIG_FLOWS, s["lb"]


# --------------------------------------------------------------------------
# nat and dsr, byte for byte

NAT4_TCP = {"name": "nat-tcp", "vip": "192.0.2.20", "port": 80,
            "proto": "tcp", "forward": "nat",
            "backends": backends(["10.2.0.1", "10.2.0.2", "10.2.0.3"],
                                 [1, 1, 2], port=[8080, None, 8081],
                                 mac=[None, None, "02:00:00:00:aa:03"])}
NAT4_UDP = {"name": "nat-udp", "vip": "192.0.2.20", "port": 53,
            "proto": "udp", "forward": "nat",
            "backends": backends(["10.2.1.1", "10.2.1.2"],
                                 port=[5353, None])}
NAT6_TCP = {"name": "nat6-tcp", "vip": "2001:db8:ffff::20", "port": 443,
            "proto": "tcp", "forward": "nat",
            "backends": backends(["2001:db8:c::1", "2001:db8:c::2"],
                                 port=[8443, None])}
NAT6_UDP = {"name": "nat6-udp", "vip": "2001:db8:ffff::20", "port": 53,
            "proto": "udp", "forward": "nat",
            "backends": backends(["2001:db8:c::11", "2001:db8:c::12",
                                  "2001:db8:c::13"], port=[53, 5300, None],
                                 mac=[None, "02:00:00:00:cc:12", None])}
IPIP6 = {"name": "ipip6", "vip": "2001:db8:ffff::10", "port": 80,
         "proto": "tcp", "forward": "ipip",
         "backends": backends(["2001:db8:b::1", "2001:db8:b::2",
                               "2001:db8:b::3"], [1, 2, 3],
                              mac=[None, "02:00:00:00:bb:62", None])}
DSR4 = {"name": "dsr4", "vip": "192.0.2.30", "port": 80, "proto": "tcp",
        "forward": "dsr",
        "backends": backends(["10.3.0.1", "10.3.0.2", "10.3.0.3"], [2, 1, 1],
                             mac=["02:00:00:00:bb:01", "02:00:00:00:bb:02",
                                  "02:00:00:00:bb:03"])}
DSR6 = {"name": "dsr6", "vip": "2001:db8:ffff::30", "port": 53,
        "proto": "udp", "forward": "dsr",
        "backends": backends(["2001:db8:d::1", "2001:db8:d::2"],
                             mac=["02:00:00:00:dd:01", "02:00:00:00:dd:02"])}


def svc_backends(svc):
    """{addr (canonical): (port, mac bytes or None)}"""
    out = {}
    for b in svc["backends"]:
        mac = lm.mac_bytes(b["mac"]) if b.get("mac") else None
        out[lm.ip_str(lm.ip_bytes(b["addr"]))] = (b.get("port") or
                                                  svc["port"], mac)
    return out


def make_flows(svc, n_flows, rng, src_fn=None, vlan_every=0, opts_every=0,
               nocsum_every=0, kind=None, dport=None, proto=None):
    """n_flows client flows to a service (dicts: the 5-tuple and how
    their packets are built)."""
    fam = lm.family_of(svc["vip"])
    proto = proto or (lm.TCP if svc["proto"] == "tcp" else lm.UDP)
    flows = []
    for f in range(n_flows):
        if src_fn is not None:
            src = src_fn(f)
        elif fam == 4:
            src = "198.51.%d.%d" % (100 + f // 250, 1 + f % 250)
        else:
            src = "2001:db8:%x::%x" % (0x100 + f // 250, 1 + f % 250)
        flows.append(dict(
            fam=fam, proto=proto, src=src, dst=svc["vip"],
            sport=20000 + rng.randrange(40000),
            dport=dport or svc["port"], kind=kind or svc["name"],
            smac=bytes([2, 0, 2, 0, f >> 8, f & 0xFF]),
            vlan=(200 + f) if vlan_every and f % vlan_every == 1 else None,
            opts=b"\x01\x01\x01\x00" if fam == 4 and opts_every and
            f % opts_every == 2 else b"",
            csum=not (nocsum_every and proto == lm.UDP and fam == 4 and
                      f % nocsum_every == 3),
            tos=rng.choice([0, 0x2E, 0xB9]), df=rng.random() < 0.5, k=0))
    return flows


def emit(t, flows, per_flow, rng, size=None):
    """per_flow packets of each flow, appended in a shuffled order (per
    flow in sequence). size: the IP packet's length. Returns the
    indexes."""
    order = [f for f in range(len(flows)) for _ in range(per_flow)]
    rng.shuffle(order)
    idx = []
    for f in order:
        fl = flows[f]
        fam = fl["fam"]
        kw = dict(smac=fl["smac"], vlan=fl["vlan"], tos=fl["tos"],
                  l4_csum=fl["csum"], seq=1 + fl["k"] * 500)
        if fam == 4:
            kw.update(ip_opts=fl["opts"], df=fl["df"], ip_id=len(t) & 0xFFFF)
        else:
            kw.update(flow_label=len(t) & 0xFFFFF)
        fl["k"] += 1
        if size is None:
            n = rng.randint(0, 60)
        else:
            n = size - (20 + len(fl["opts"]) if fam == 4 else 40) - \
                (20 if fl["proto"] == lm.TCP else 8) - MARK_LEN
        idx.append(t.l4(fam, fl["proto"], fl["src"], fl["dst"], fl["sport"],
                        fl["dport"], fl["kind"], n=n, **kw))
    return idx


def client_flows(t, svc, n_flows, per_flow, rng, **kw):
    """n_flows client flows to a service, per_flow packets each, appended
    in a shuffled order. Returns the indexes."""
    return emit(t, make_flows(svc, n_flows, rng, **kw), per_flow, rng)


def check_lb_output(pkts, out, svcs, port_mac, dropped=(), check_used=True,
                    defer=lambda p: False):
    """Every output frame matched to its input by marker and checked
    against what its service's forwarding mode must make of it (inputs of
    no service in svcs: unchanged): ipip (outer header, inner identical),
    nat (recomputed checksums, scapy's too), dsr (only the MACs), one
    backend per flow, per-flow order, every input out once but for the
    indexes in dropped; check_used: every usable backend of each service
    got flows. Inputs for which defer(pkt) is true are not checked but
    returned. Returns ({flow: backend}, [(output frame, input index)
    deferred])."""
    by_name = {s["name"]: s for s in svcs}
    mapping = {}
    used = collections.defaultdict(set)
    problems = []
    idx = []
    deferred = []
    n_scapy = 0
    for n, fr in enumerate(out):
        i = lm.find_marker(fr)
        if i is None or i >= len(pkts):
            problems.append("output #%d carries no marker: %s" % (
                n, fr[:64].hex()))
            continue
        idx.append(i)
        p = pkts[i]
        if defer(p):
            deferred.append((fr, i))
            continue
        if p.kind not in by_name:
            if fr != p.data:
                problems.append("output #%d: input #%d (%s, not for a "
                                "service) modified" % (n, i, p.kind))
            continue
        svc = by_name[p.kind]
        bes = svc_backends(svc)
        f = lm.dissect(fr)
        src_mac = lm.dissect(p.data).src
        pr = []
        if svc["forward"] == "dsr":
            be = [a for a, (_, mac) in bes.items() if mac == f.dst]
            if len(be) != 1:
                problems.append("output #%d: dst MAC %s is no backend's" % (
                    n, lm.mac_str(f.dst)))
                continue
            be = be[0]
            if fr != f.dst + port_mac + p.data[12:]:
                pr.append("dsr: not the input with only the MACs changed")
        elif svc["forward"] == "ipip":
            be, _, _ = lm.outer_dst(fr)
            if be not in bes:
                problems.append("output #%d (input #%d): outer dst %s is no "
                                "backend of %s" % (n, i, be, svc["name"]))
                continue
            check = lm.check_ipip4 if lm.family_of(svc["vip"]) == 4 else \
                lm.check_ipip6
            pr += check(fr, p.data, LOCAL4 if check is lm.check_ipip4
                        else LOCAL6, be, port_mac, bes[be][1] or src_mac)
        else:
            inf = lm.ip_info(f.ip)
            be = lm.ip_str(inf.dst)
            if be not in bes:
                problems.append("output #%d (input #%d): dst %s is no "
                                "backend of %s" % (n, i, be, svc["name"]))
                continue
            bport, bmac = bes[be]
            want = lm.rewrite(p.data, port_mac, bmac or src_mac, new_dst=be,
                              new_dport=bport)
            pr += lm.same_but_csum(fr, want)
            if f.ethertype == lm.ETH_IP4 and not lm.ip4_header_ok(f.ip):
                pr.append("IPv4 header checksum invalid")
            if not lm.l4_csum_ok(f.ip):
                pr.append("L4 checksum invalid")
            if n_scapy < 100:
                n_scapy += 1
                pr += lm.scapy_recheck(fr)
        problems += ["output #%d (input #%d, %s): %s" % (
            n, i, svc["name"], x) for x in pr]
        used[svc["name"]].add(be)
        if mapping.setdefault(p.flow, be) != be:
            problems.append("flow %s went to %s and %s" % (
                p.flow, mapping[p.flow], be))
    assert_no_problems(problems, "bad output frames")
    dups = [i for i, c in collections.Counter(idx).items() if c > 1]
    assert not dups, "inputs out twice: %s" % dups[:20]
    want = set(range(len(pkts))) - set(dropped)
    assert set(idx) == want, "missing %s, unexpected %s" % (
        sorted(want - set(idx))[:20], sorted(set(idx) - want)[:20])
    check_flow_order(pkts, idx)
    if check_used:
        for s in svcs:
            usable = {lm.ip_str(lm.ip_bytes(b["addr"]))
                      for b in s["backends"] if b.get("weight", 1) > 0 and
                      b.get("state", "up") == "up"}
            assert used[s["name"]] == usable, \
                "%s: backends used %s, usable %s" % (
                    s["name"], sorted(used[s["name"]]), sorted(usable))
    return mapping, deferred


def test_nat_ipv4_rewrites_and_checksums(tmp_path, port_mac):
    """nat, IPv4 TCP and UDP: destination address and port become the
    backend's (its "port", else the service's), IPv4 header and L4
    checksums valid and equal to a recomputation (scapy's too), UDP
    without checksum left without, IPv4 options and VLAN tags kept, MACs:
    the backend's "mac" or the sender's, from the port's."""
    rng = random.Random(11)
    t = Traffic()
    client_flows(t, NAT4_TCP, 300, 2, rng, vlan_every=23, opts_every=17)
    client_flows(t, NAT4_UDP, 200, 2, rng, vlan_every=19, opts_every=13,
                 nocsum_every=7)
    s, out, _ = run_lb(tmp_path, "nat4", lb_conf([NAT4_TCP, NAT4_UDP]),
                       t.pkts, {})
    mapping, _ = check_lb_output(t.pkts, out, [NAT4_TCP, NAT4_UDP], port_mac)
    assert len(mapping) == 500
    assert s["lb"]["flows_created"] == 500 and \
        s["lb"]["balanced"] == len(t), s["lb"]
    # the UDP flows sent without checksum went out without one
    nocs = [fr for fr in out if lm.dissect(fr).ip[9] == lm.UDP and
            lm.csum_field(lm.dissect(fr).ip)[1] == 0]
    assert len(nocs) == 2 * len([f for f in range(200) if f % 7 == 3])


def test_dsr_changes_only_the_macs(tmp_path, port_mac):
    """dsr (IPv4 TCP, IPv6 UDP): the frame as it came, VLAN tags and
    padding included, but to the backend's MAC from the port's."""
    rng = random.Random(12)
    t = Traffic()
    client_flows(t, DSR4, 300, 2, rng, vlan_every=11, opts_every=9)
    client_flows(t, DSR6, 100, 2, rng, vlan_every=7)
    s, out, _ = run_lb(tmp_path, "dsr", lb_conf([DSR4, DSR6]), t.pkts, {})
    mapping, _ = check_lb_output(t.pkts, out, [DSR4, DSR6], port_mac)
    assert len(mapping) == 400
    assert s["lb"]["balanced"] == len(t), s["lb"]


def test_ipv6_ipip_and_nat(tmp_path, port_mac):
    """IPv6 services: ipip puts an outer IPv6 header (next header 41, hop
    limit 64, payload length the inner packet's, source local_addr6,
    traffic class copied) before the untouched packet; nat rewrites the
    destination address and port with a valid checksum; both with
    extension headers (hop-by-hop, destination options, routing) before
    the TCP / UDP header."""
    rng = random.Random(13)
    t = Traffic()
    client_flows(t, IPIP6, 400, 2, rng, vlan_every=29)
    client_flows(t, NAT6_TCP, 150, 2, rng)
    client_flows(t, NAT6_UDP, 150, 2, rng, vlan_every=31)
    # extension headers before TCP / UDP (the inner packet and the L4
    # rewrite must see past them)
    sc = _scapy()
    exts = [lambda: sc.IPv6ExtHdrHopByHop(options=[sc.RouterAlert()]),
            lambda: sc.IPv6ExtHdrDestOpt(options=[sc.PadN(optdata=b"\0\0")]),
            lambda: sc.IPv6ExtHdrRouting(addresses=["2001:db8:74::1"],
                                         segleft=0)]
    for k in range(30):
        svc = (IPIP6, NAT6_TCP, NAT6_UDP)[k % 3]
        cli = "2001:db8:e0::%x" % (k + 1)
        l4 = (sc.TCP(sport=3000 + k, dport=svc["port"], flags="PA")
              if svc["proto"] == "tcp" else
              sc.UDP(sport=3000 + k, dport=svc["port"]))
        ipl = sc.IPv6(src=cli, dst=svc["vip"], tc=k)
        for e in exts[:1 + k % 3]:
            ipl = ipl / e()
        for j in range(2):
            fr = sc.Ether(src="02:00:00:00:0e:%02x" % k,
                          dst=lm.mac_str(lm.APPLIANCE_MAC)) / ipl / l4 / \
                sc.Raw(t.next_payload(10 + j))
            t.add(bytes(fr), (6, l4.__class__.__name__, cli, svc["vip"],
                              3000 + k), svc["name"])
    svcs = [IPIP6, NAT6_TCP, NAT6_UDP]
    s, out, _ = run_lb(tmp_path, "v6", lb_conf(svcs), t.pkts, {})
    mapping, _ = check_lb_output(t.pkts, out, svcs, port_mac)
    assert len(mapping) == 730
    assert s["lb"]["balanced"] == len(t) and \
        s["lb"]["flows_created"] == 730, s["lb"]


# --------------------------------------------------------------------------
# traffic that is not for a service

IPIP4_UDP = {"name": "ipip-udp", "vip": "192.0.2.10", "port": 80,
             "proto": "udp", "forward": "ipip",
             "backends": backends(["10.1.1.1", "10.1.1.2"])}
ALL_SVCS = [IPIP4_UDP, NAT4_TCP, NAT4_UDP, IPIP6, NAT6_TCP, NAT6_UDP, DSR4,
            DSR6]


def _scapy():
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy import all as s
    return s


def icmp6_echo(t, src, dst, kind):
    payload = t.next_payload(24)
    seg = bytes([128, 0, 0, 0, 0, 7, 0, 1]) + payload
    c = lm.l4_checksum(6, lm.ip_bytes(src), lm.ip_bytes(dst), 58, seg)
    seg = seg[:2] + c.to_bytes(2, "big") + seg[4:]
    return t.add(lm.build_eth(lm.build_ip(6, src, dst, 58, seg)),
                 ("icmp6", src, dst), kind)


def fragments(s, ip_pkt, size, smac=lm.CLIENT_MAC):
    """scapy fragments (IPv4 fragment() or IPv6 fragment6()) of ip_pkt as
    Ethernet frames (bytes)."""
    eth = s.Ether(src=lm.mac_str(smac), dst=lm.mac_str(lm.APPLIANCE_MAC))
    if ip_pkt.__class__ is s.IP:
        frs = s.fragment(ip_pkt, fragsize=size)
    else:
        frs = s.fragment6(ip_pkt, size)
    return [lm.build_eth(bytes(f), smac) if len(bytes(eth / f)) < 60 else
            bytes(eth / f) for f in frs]


@pytest.mark.parametrize("mode", ["rtc1", "rtc2"])
def test_non_service_traffic_untouched(mode, tmp_path):
    """With ipip, nat and dsr services (IPv4 and IPv6) configured, traffic
    that is not for them passes byte for byte: the mixed sample (VLAN,
    QinQ, options, extension headers, fragments, ARP, ICMP), and for each
    service: its VIP on another port, its port over the other protocol,
    another destination, ICMP to the VIP, traffic from the VIP, "replies"
    from backends to clients without a flow (but for the one nat
    backend a service's Maglev choice names for the client, translated),
    fragments of the other protocol to a VIP without a service of that
    protocol."""
    s = _scapy()
    mixed = pautil.gen_sample.build_mixed(77, 300, malformed=[])
    t = Traffic()
    t.pkts = list(mixed)
    rng = random.Random(14)
    for svc in ALL_SVCS:
        fam = lm.family_of(svc["vip"])
        proto = lm.TCP if svc["proto"] == "tcp" else lm.UDP
        other = lm.UDP if proto == lm.TCP else lm.TCP
        vip = svc["vip"]
        vb = bytearray(lm.ip_bytes(vip))
        vb[-1] ^= 1
        near = lm.ip_str(bytes(vb))
        cli = "198.51.100.77" if fam == 4 else "2001:db8:77::1"
        for k in range(3):
            sp = 30000 + rng.randrange(30000)
            t.l4(fam, proto, cli, vip, sp, svc["port"] + 1 + k, "otherport")
            t.l4(fam, proto, cli, vip, sp, svc["port"] - 1 - k, "otherport")
            t.l4(fam, other, cli, vip, sp, svc["port"], "otherproto")
            t.l4(fam, proto, cli, near, sp, svc["port"], "otherdst")
            t.l4(fam, proto, vip, cli, svc["port"], sp, "fromvip")
            if fam == 4:
                t.add(lm.build_icmp4(cli, vip, t.next_payload(20), ident=sp),
                      ("icmp", cli, vip), "icmp")
            else:
                icmp6_echo(t, cli, vip, "icmp6")
        csp = 40000 + rng.randrange(1000)
        for a, (bport, _) in svc_backends(svc).items():
            t.l4(fam, proto, a, cli, bport, csp, "reply-noflow:%s" % (
                svc["name"] if svc["forward"] == "nat" else ""))
        # fragments of the other protocol to the VIP (when the VIP has no
        # service of that protocol: fragments go to any port's service)
        if any(x["vip"] == vip and x["proto"] != svc["proto"]
               for x in ALL_SVCS):
            continue
        l4 = (s.TCP(sport=1234, dport=svc["port"]) if other == lm.TCP else
              s.UDP(sport=1234, dport=svc["port"]))
        ipl = (s.IP(src=cli, dst=vip, id=len(t)) if fam == 4 else
               s.IPv6(src=cli, dst=vip) / s.IPv6ExtHdrFragment(id=len(t)))
        for fr in fragments(s, ipl / l4 / s.Raw(t.next_payload(600)), 256):
            t.add(fr, ("frag", cli, vip, other), "frag-otherproto")
    s_, out, _ = run_lb(tmp_path, "nonvip", lb_conf(ALL_SVCS, mode), t.pkts,
                        {})
    # a nat backend's reply without a flow is translated when its backend
    # is the service's Maglev choice for the client (the stateless path,
    # docs/scale-out.md): of the replies of all the backends of a service
    # to one client port, at most one; the rest pass unchanged
    by_name = {x["name"]: x for x in ALL_SVCS}
    same, problems = [], []
    translated = collections.Counter()
    for fr in out:
        i = lm.find_marker(fr)
        p = t.pkts[i] if i is not None and i < len(t) else None
        if p is None or fr == p.data or \
                not p.kind.startswith("reply-noflow:") or \
                not p.kind.split(":")[1]:
            same.append(fr)
            continue
        svc = by_name[p.kind.split(":")[1]]
        translated[svc["name"]] += 1
        f, fi = lm.dissect(fr), lm.dissect(p.data)
        want = lm.rewrite(p.data, f.src, fi.src, new_src=svc["vip"],
                          new_sport=svc["port"])
        problems += ["input #%d: %s" % (i, x) for x in
                     lm.same_but_csum(fr, want)]
        if not lm.l4_csum_ok(f.ip):
            problems.append("input #%d: L4 checksum invalid" % i)
    assert_no_problems(problems, "bad stateless translations")
    # every backend is up: one of each nat service's is the choice
    assert translated == {x["name"]: 1 for x in ALL_SVCS
                          if x["forward"] == "nat"}, translated
    match_output(t.pkts, same)
    assert len(out) == len(t)
    lb = s_["lb"]
    assert lb["balanced"] == 0 and lb["flows_created"] == 0 and \
        lb["nat_replies"] == 0 and lb["fragments"] == 0, lb
    assert lb["nat_reply_stateless"] == sum(translated.values()), lb


# --------------------------------------------------------------------------
# fragments

FRAG4 = {"name": "frag4", "vip": "192.0.2.40", "port": 5000, "proto": "udp",
         "forward": "ipip",
         "backends": backends(["10.4.0.%d" % k for k in range(1, 6)],
                              [1, 1, 2, 2, 3])}
FRAG6 = {"name": "frag6", "vip": "2001:db8:ffff::40", "port": 5000,
         "proto": "udp", "forward": "ipip",
         "backends": backends(["2001:db8:e::1", "2001:db8:e::2",
                               "2001:db8:e::3"])}


def gen_datagrams(t, s, svc, n_clients, per_client, rng, dport=None,
                  proto="udp", kind=None):
    """Fragmented datagrams (scapy fragment()/fragment6()) from n_clients
    clients (per_client datagrams each, other source ports), the datagrams
    interleaved, the fragments of a few in reverse order. Returns
    {input index: datagram id}."""
    fam = lm.family_of(svc["vip"])
    dgrams = []
    base = len(t)       # datagram ids unique across calls
    for c in range(n_clients):
        cli = ("198.51.%d.%d" % (110 + c // 200, 1 + c % 200) if fam == 4
               else "2001:db8:%x::%x" % (0x200 + c // 200, 1 + c % 200))
        for k in range(per_client):
            did = base + len(dgrams)
            l4cls = s.UDP if proto == "udp" else s.TCP
            l4 = l4cls(sport=10000 + rng.randrange(50000),
                       dport=dport or svc["port"])
            data = lm.marker(100000 + did) + lm.filler(did,
                                                       rng.randint(900, 1400))
            if fam == 4:
                ipl = s.IP(src=cli, dst=svc["vip"], id=0x1000 + did)
            else:
                ipl = s.IPv6(src=cli, dst=svc["vip"]) / \
                    s.IPv6ExtHdrFragment(id=0x10000 + did)
            frs = fragments(s, ipl / l4 / s.Raw(data),
                            rng.choice([200, 256, 400]) if fam == 4 else
                            rng.choice([300, 500]))
            assert len(frs) >= 2
            if did % 5 == 4:
                frs.reverse()
            dgrams.append((did, cli, frs))
    order = [d for d, _, frs in dgrams for _ in frs]
    rng.shuffle(order)
    pos = collections.Counter()
    out = {}
    for d in order:
        did, cli, frs = dgrams[d - base]
        fr = frs[pos[d]]
        pos[d] += 1
        i = t.add(fr, ("frag", cli, svc["vip"], proto), kind or svc["name"])
        out[i] = did
    return out


def check_fragments(pkts, out, dg, port_mac, backends_of):
    """ipip outputs of fragments: valid, inner identical, every fragment of
    a datagram (and of a source, destination and protocol) on one backend
    of the service backends_of[kind]. Returns {datagram: backend}."""
    by_inner = {lm.dissect(pkts[i].data).ip: i for i in dg}
    per_dgram = {}
    per_src = {}
    problems = []
    seen = []
    for n, fr in enumerate(out):
        dst, inner, f = lm.outer_dst(fr)
        i = by_inner.get(inner)
        if i is None:
            continue
        seen.append(i)
        p = pkts[i]
        check = lm.check_ipip4 if f.ethertype == lm.ETH_IP4 else \
            lm.check_ipip6
        pr = check(fr, p.data, LOCAL4 if f.ethertype == lm.ETH_IP4 else
                   LOCAL6, dst, port_mac, lm.dissect(p.data).src)
        if dst not in backends_of[p.kind]:
            pr.append("outer dst %s is no backend of %s (%s)" % (
                dst, p.kind, sorted(backends_of[p.kind])))
        if per_dgram.setdefault(dg[i], dst) != dst:
            pr.append("datagram %d on %s and %s" % (dg[i], per_dgram[dg[i]],
                                                    dst))
        if per_src.setdefault(p.flow, dst) != dst:
            pr.append("%s on %s and %s" % (p.flow, per_src[p.flow], dst))
        problems += ["output #%d (input #%d): %s" % (n, i, x) for x in pr]
    assert_no_problems(problems, "bad fragment outputs")
    assert sorted(seen) == sorted(dg), "fragments lost: %s" % sorted(
        set(dg) - set(seen))[:20]
    return per_dgram


@pytest.mark.parametrize("mode", ["rtc2"])
def test_fragments_of_a_datagram_to_one_backend(mode, tmp_path, port_mac):
    """IPv4 (fragment()) and IPv6 (fragment6()) UDP datagrams in 2 to 8
    fragments, interleaved, some reversed, to ipip services: every
    fragment encapsulated intact, all fragments of a datagram to one
    backend (of a client, in fact: no ports to hash), counted in
    lb.fragments; unfragmented flows to the same services still
    balanced."""
    s = _scapy()
    rng = random.Random(15)
    t = Traffic()
    dg = gen_datagrams(t, s, FRAG4, 60, 3, rng)
    dg6 = gen_datagrams(t, s, FRAG6, 30, 2, rng)
    dg.update(dg6)
    plain = client_flows(t, FRAG4, 100, 2, rng, kind="frag4-plain")
    plain += client_flows(t, FRAG6, 50, 2, rng, kind="frag6-plain")
    svcs = [FRAG4, FRAG6]
    sm, out, _ = run_lb(tmp_path, "frag-" + mode, lb_conf(svcs, mode),
                        t.pkts, {})
    assert len(out) == len(t)
    bo = {k: set(svc_backends(v)) for k, v in
          (("frag4", FRAG4), ("frag6", FRAG6))}
    per_dgram = check_fragments(t.pkts, out, dg, port_mac, bo)
    v6 = set(dg6.values())
    used4 = {b for d, b in per_dgram.items() if d not in v6}
    used6 = {b for d, b in per_dgram.items() if d in v6}
    assert len(used4) >= 3 and len(used6) >= 2, (used4, used6)
    # the unfragmented flows: normal ipip checks
    plain_svcs = [dict(FRAG4, name="frag4-plain"),
                  dict(FRAG6, name="frag6-plain")]
    check_lb_output(t.pkts, [fr for fr in out if lm.find_marker(fr) is not None
                             and lm.find_marker(fr) in set(plain)],
                    plain_svcs, port_mac, dropped=set(dg))
    lb = sm["lb"]
    assert lb["fragments"] == len(dg), \
        "lb.fragments %s, %d fragments sent" % (lb["fragments"], len(dg))
    assert lb["balanced"] == len(t), lb
    assert lb["flows_created"] == 150, lb


def reassemble(frames):
    """{(family, source, fragment id): the reassembled IP packet (bytes,
    IPv6 without its fragment header)} of fragment frames."""
    import struct
    parts = collections.defaultdict(list)
    first = {}
    for fr in frames:
        ip = lm.dissect(fr).ip
        if ip[0] >> 4 == 4:
            ihl = (ip[0] & 15) * 4
            key = (4, lm.ip_str(ip[12:16]), struct.unpack("!H", ip[4:6])[0])
            off = (struct.unpack("!H", ip[6:8])[0] & 0x1FFF) * 8
            parts[key].append((off, ip[ihl:]))
            if off == 0:
                first[key] = ip[:ihl]
        else:
            assert ip[6] == 44, "IPv6 fragment with other headers first"
            key = (6, lm.ip_str(ip[8:24]), struct.unpack("!I", ip[44:48])[0])
            off = struct.unpack("!H", ip[42:44])[0] & 0xFFF8
            parts[key].append((off, ip[48:]))
            if off == 0:
                first[key] = ip[:40], ip[40]
    out = {}
    for key, ps in parts.items():
        ps.sort()
        pay = b"".join(p for _, p in ps)
        if key[0] == 4:
            h = bytearray(first[key])
            struct.pack_into("!HH", h, 2, len(h) + len(pay), 0)
            out[key] = bytes(h) + pay
        else:
            h, nh = first[key]
            out[key] = h[:4] + struct.pack("!HB", len(pay), nh) + h[7:] + pay
    return out


@pytest.mark.parametrize("mode", ["rtc1"])
def test_nat_fragments_reassemble_at_one_backend(mode, tmp_path, port_mac):
    """nat on fragmented UDP datagrams (IPv4, IPv6): every fragment goes
    to one backend, and the fragments reassemble into the datagram with
    the backend's address and port and a valid UDP checksum."""
    s = _scapy()
    rng = random.Random(21)
    t = Traffic()
    dg = gen_datagrams(t, s, NAT4_UDP, 30, 2, rng)
    dg.update(gen_datagrams(t, s, NAT6_UDP, 20, 2, rng))
    svcs = [NAT4_UDP, NAT6_UDP]
    sm, out, _ = run_lb(tmp_path, "natfrag-" + mode, lb_conf(svcs, mode),
                        t.pkts, {})
    assert sm["lb"]["fragments"] == len(dg) == len(out), sm["lb"]
    sent = reassemble([p.data for p in t.pkts])
    got = reassemble(out)
    assert set(sent) == set(got) and len(sent) == len(set(dg.values()))
    problems = []
    used = set()
    for key, ip in got.items():
        inf = lm.ip_info(ip)
        svc = NAT4_UDP if key[0] == 4 else NAT6_UDP
        bes = svc_backends(svc)
        be = lm.ip_str(inf.dst)
        used.add(be)
        if be not in bes:
            problems.append("%s: reassembled to %s, no backend" % (key, be))
            continue
        if inf.dport != bes[be][0]:
            problems.append("%s: port %s, backend's %s" % (key, inf.dport,
                                                          bes[be][0]))
        if not lm.l4_csum_ok(ip):
            problems.append("%s: UDP checksum invalid" % (key,))
        want = lm.ip_info(sent[key])
        if (inf.src, inf.sport) != (want.src, want.sport) or \
                ip[inf.l4_off + 8:] != sent[key][want.l4_off + 8:]:
            problems.append("%s: source or data changed" % (key,))
    assert_no_problems(problems, "bad NAT datagrams")
    assert len(used) >= 4, used
    for fr in out:
        f = lm.dissect(fr)
        if f.src != port_mac:
            problems.append("source MAC %s" % lm.mac_str(f.src))
    assert_no_problems(problems, "bad NAT fragment frames")


def test_fragments_go_to_the_lowest_port_service(tmp_path, port_mac):
    """pa_lb.h: a fragment to a VIP and protocol goes to the service of
    that VIP and protocol with the lowest port, whatever port its first
    fragment names; unfragmented packets go to their own service."""
    s = _scapy()
    rng = random.Random(16)
    vip = "192.0.2.41"
    svcs = []
    for port, net in ((6000, "10.5.6"), (5000, "10.5.5"), (7000, "10.5.7")):
        svcs.append({"name": "u%d" % port, "vip": vip, "port": port,
                     "proto": "udp", "forward": "ipip",
                     "backends": backends(["%s.%d" % (net, k)
                                           for k in (1, 2, 3)])})
    svcs.append({"name": "t9000", "vip": vip, "port": 9000, "proto": "tcp",
                 "forward": "ipip",
                 "backends": backends(["10.5.9.1", "10.5.9.2"])})
    t = Traffic()
    dg = {}
    for port in (6000, 7000, 5000):
        dg.update(gen_datagrams(t, s, svcs[1], 20, 1, rng, dport=port,
                                kind="frag-u%d" % port))
    dg.update(gen_datagrams(t, s, svcs[3], 20, 1, rng, proto="tcp",
                            kind="frag-t9000"))
    plain = []
    for svc in svcs:
        plain += client_flows(t, svc, 20, 1, rng)
    sm, out, _ = run_lb(tmp_path, "lowport", lb_conf(svcs), t.pkts, {})
    b5000 = set(svc_backends(svcs[1]))
    b9000 = set(svc_backends(svcs[3]))
    check_fragments(t.pkts, out, dg, port_mac,
                    {"frag-u6000": b5000, "frag-u7000": b5000,
                     "frag-u5000": b5000, "frag-t9000": b9000})
    check_lb_output(t.pkts, [fr for fr in out if lm.find_marker(fr) in
                             set(plain)], svcs, port_mac, dropped=set(dg),
                    check_used=False)
    assert sm["lb"]["fragments"] == len(dg), sm["lb"]


# --------------------------------------------------------------------------
# NAT replies

BACKEND_SIDE_MAC = bytes.fromhex("0200000000e1")


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_nat_replies_rewritten_to_the_vip(mode, tmp_path, port_mac):
    """The backends' replies (backend address and port to client address
    and port) that come after their flow exists leave with the VIP and
    service port as source, checksums valid, to the MAC they came from;
    so do those that come before it from the backend Maglev chooses for
    the flow (the stateless translation, docs/scale-out.md), while those
    from the other backends and from another port pass unchanged; to
    another client port: unchanged, or translated when Maglev sends that
    client's flow to the replying backend (at most one backend)."""
    rng = random.Random(17)
    svcs = [NAT4_TCP, NAT4_UDP, NAT6_TCP, NAT6_UDP]
    flows = []
    for svc in svcs:
        flows += make_flows(svc, 40, rng, nocsum_every=5)
    t = Traffic()

    def replies(kind_fn, sport_delta=0, dport_delta=0):
        for fl in flows:
            svc = next(x for x in svcs if x["name"] == fl["kind"])
            for a, (bport, _) in svc_backends(svc).items():
                t.l4(fl["fam"], fl["proto"], a, fl["src"], bport + sport_delta,
                     fl["sport"] + dport_delta, kind_fn(fl, a), n=20,
                     smac=BACKEND_SIDE_MAC, l4_csum=fl["csum"],
                     ip_id=len(t) & 0xFFFF)

    # before any flow: only the Maglev choice's is rewritten
    replies(lambda fl, a: "early:%s:%s" % (fl["kind"], a))
    emit(t, flows, 1, rng)
    # from every backend; only the flow's own backend's is rewritten
    replies(lambda fl, a: "reply:%s:%s" % (fl["kind"], a))
    replies(lambda fl, a: "noreply", sport_delta=1)
    replies(lambda fl, a: "other:%s:%s" % (fl["kind"], a), dport_delta=1)
    emit(t, flows, 1, rng)
    replies(lambda fl, a: "reply:%s:%s" % (fl["kind"], a))

    sm, out, _ = run_lb(tmp_path, "replies-" + mode, lb_conf(svcs, mode),
                        t.pkts, {})
    mapping, deferred = check_lb_output(
        t.pkts, out, svcs, port_mac, defer=lambda p: p.kind.split(":")[0] in
        ("reply", "early", "other"))
    by_name = {x["name"]: x for x in svcs}
    problems = []
    n_rewritten = n_early = n_other = 0
    other_by = collections.Counter()
    for fr, i in deferred:
        p = t.pkts[i]
        what, name, be = p.kind.split(":", 2)
        svc = by_name[name]
        fam, proto, src, dst, sport, dport = p.flow
        if what == "other":
            if fr == p.data:
                continue
            n_other += 1
            other_by[(fam, proto, dst, dport)] += 1
        else:
            client_flow = (fam, proto, dst, svc["vip"], dport, svc["port"])
            if mapping.get(client_flow) != be:
                if fr != p.data:
                    problems.append("input #%d: reply from %s, not the "
                                    "backend of its flow (%s), modified" % (
                                        i, be, mapping.get(client_flow)))
                continue
            if what == "early":
                n_early += 1
            else:
                n_rewritten += 1
        want = lm.rewrite(p.data, port_mac, BACKEND_SIDE_MAC,
                          new_src=svc["vip"], new_sport=svc["port"])
        pr = lm.same_but_csum(fr, want)
        f = lm.dissect(fr)
        if f.ethertype == lm.ETH_IP4 and not lm.ip4_header_ok(f.ip):
            pr.append("IPv4 header checksum invalid")
        if not lm.l4_csum_ok(f.ip):
            pr.append("L4 checksum invalid")
        if n_rewritten + n_early + n_other <= 40:
            pr += lm.scapy_recheck(fr)
        problems += ["reply input #%d (%s from %s): %s" % (i, name, be, x)
                     for x in pr]
    assert_no_problems(problems, "bad replies")
    assert n_rewritten == 2 * len(flows), n_rewritten
    assert n_early == len(flows), n_early
    assert all(c == 1 for c in other_by.values()), other_by
    assert sm["lb"]["nat_replies"] == n_rewritten, sm["lb"]
    assert sm["lb"]["nat_reply_stateless"] == n_early + n_other, sm["lb"]
    assert sm["lb"]["flows_created"] == len(flows), sm["lb"]


# --------------------------------------------------------------------------
# no usable backend, MTU

DEAD = [
    {"name": "down", "vip": "192.0.2.50", "port": 80, "proto": "tcp",
     "forward": "ipip",
     "backends": backends(["10.6.0.1", "10.6.0.2"], state=["down", "down"])},
    {"name": "zero", "vip": "192.0.2.50", "port": 81, "proto": "tcp",
     "forward": "ipip",
     "backends": backends(["10.6.1.1", "10.6.1.2"], [0, 0])},
    {"name": "natdown", "vip": "192.0.2.51", "port": 53, "proto": "udp",
     "forward": "nat",
     "backends": backends(["10.6.3.1"], state=["down"])},
    {"name": "dsrdown", "vip": "2001:db8:ffff::52", "port": 80,
     "proto": "tcp", "forward": "dsr",
     "backends": backends(["2001:db8:6::1", "2001:db8:6::2"], [1, 0],
                          state=["down", None],
                          mac=["02:00:00:00:66:01", "02:00:00:00:66:02"])},
]
PARTIAL = {"name": "partial", "vip": "192.0.2.50", "port": 82,
           "proto": "tcp", "forward": "ipip",
           "backends": backends(["10.6.2.1", "10.6.2.2", "10.6.2.3",
                                 "10.6.2.4"], [1, 5, 5, 5],
                                state=[None, "down", "drain", None])}
PARTIAL["backends"][3]["weight"] = 0


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_no_backend_drops(mode, tmp_path, port_mac):
    """Services whose backends are all down or of weight 0 drop their
    packets (fragments included) as no_backend, unchanged in the drops
    pcap; a service with one usable backend among down, draining and
    weight-0 ones sends every new flow to it; the rest passes."""
    s = _scapy()
    rng = random.Random(18)
    t = Traffic()
    dead = []
    for svc in DEAD:
        dead += client_flows(t, svc, 30, 2, rng)
    client_flows(t, PARTIAL, 100, 2, rng)
    dead += list(gen_datagrams(t, s, DEAD[0], 5, 1, rng, proto="tcp",
                               dport=80, kind="frag-down"))
    for k in range(20):
        t.l4(4, lm.TCP, "198.51.100.9", "192.0.2.50", 5000 + k, 83,
             "otherport")
    svcs = DEAD + [PARTIAL]
    sm, out, drops = run_lb(tmp_path, "nobe-" + mode, lb_conf(svcs, mode),
                            t.pkts, {"no_backend": len(dead)})
    mapping, _ = check_lb_output(t.pkts, out, svcs, port_mac, dropped=dead)
    assert set(mapping.values()) == {"10.6.2.1"}
    assert sorted(match_output(t.pkts, drops, "drops")) == sorted(dead)
    assert sm["lb"]["no_backend"] == len(dead), sm["lb"]
    assert sm["lb"]["flows_created"] == 100, sm["lb"]


def test_mtu_drops(tmp_path, port_mac):
    """ipip: an inner packet whose length plus the outer header exceeds
    the port MTU (1500) is dropped as "mtu"; one that may not be
    fragmented (IPv4 DF, any IPv6) becomes the ICMP error its client gets
    (test_lb_icmp.py checks those field by field; here: one per such
    packet, quoting it), the others are in the drops pcap unchanged; up
    to the MTU it is encapsulated; nat, dsr and unbalanced packets of
    1500 bytes pass."""
    svcs = [
        {"name": "m4", "vip": "192.0.2.60", "port": 7000, "proto": "udp",
         "forward": "ipip", "backends": backends(["10.7.0.1", "10.7.0.2"])},
        {"name": "m6", "vip": "2001:db8:ffff::60", "port": 7000,
         "proto": "udp", "forward": "ipip",
         "backends": backends(["2001:db8:7::1"])},
        {"name": "mnat", "vip": "192.0.2.61", "port": 7000, "proto": "tcp",
         "forward": "nat", "backends": backends(["10.7.1.1"], port=[7001])},
        {"name": "mdsr", "vip": "192.0.2.62", "port": 7000, "proto": "udp",
         "forward": "dsr",
         "backends": backends(["10.7.2.1"], mac=["02:00:00:00:77:01"])},
    ]
    rng = random.Random(19)
    t = Traffic()
    mtu = lm.PORT_MTU
    dropped = []
    sizes = {"m4": [600, 1400, 1479, 1480, 1481, 1482, 1490, 1500],
             "m6": [600, 1400, 1459, 1460, 1461, 1462, 1500],
             "mnat": [1500], "mdsr": [1500]}
    for svc in svcs:
        hdr = 20 if lm.family_of(svc["vip"]) == 4 else 40
        for size in sizes[svc["name"]]:
            idx = emit(t, make_flows(svc, 3, rng), 2, rng, size=size)
            for i in idx:
                assert len(lm.dissect(t.pkts[i].data).ip) == size
            if svc["forward"] == "ipip" and size + hdr > mtu:
                dropped += idx
    t.l4(4, lm.UDP, "198.51.100.1", "192.0.2.63", 1, 7000, "other",
         n=1500 - 39)
    sm, out, drops = run_lb(tmp_path, "mtu", lb_conf(svcs), t.pkts,
                            {"mtu": len(dropped)})
    answered = [i for i in dropped
                if lm.dissect(t.pkts[i].data).ip[0] >> 4 == 6 or
                lm.dissect(t.pkts[i].data).ip[6] & 0x40]
    assert answered and len(answered) < len(dropped)
    icmp = [fr for fr in out if len(fr) > 23 and
            ((fr[12:14] == b"\x08\x00" and fr[23] == 1) or
             (fr[12:14] == b"\x86\xdd" and fr[20] == 58))]
    out = [fr for fr in out if fr not in icmp]
    quoted = sorted(fr[14 + (28 if fr[12] == 8 else 48):][:200]
                    for fr in icmp)
    assert quoted == sorted(lm.dissect(t.pkts[i].data).ip[:200]
                            for i in answered)
    assert sm["icmp_errors"]["icmp_tx_packets"] == len(answered), sm
    check_lb_output(t.pkts, out, svcs, port_mac, dropped=dropped,
                    check_used=False)
    assert sorted(match_output(t.pkts, drops, "drops")) == \
        sorted(set(dropped) - set(answered))
    assert sm["lb"]["mtu"] == len(dropped), sm["lb"]
    assert max(len(fr) for fr in out) == 14 + 1480 + 20


# --------------------------------------------------------------------------
# the ACL comes first

@pytest.mark.parametrize("mode", ["rtc1", "pipeline4", "pipeline2"])
def test_acl_before_lb(mode, tmp_path, port_mac):
    """Flows the ACL drops never reach a backend (no flow is created for
    them) and are counted as acl; a "mark" rule's DSCP is in the inner
    packet and copied to the outer header of ipip."""
    import ipaddress
    web = dict(IPIP4_UDP, name="web", proto="tcp")
    acl = {"default": "permit", "rules": [
        {"id": 1, "priority": 100, "src": "100.64.0.0/26",
         "dst": "192.0.2.10/32", "proto": "tcp", "dport": "80",
         "action": "drop"},
        {"id": 2, "priority": 100, "src": "100.64.1.0/24",
         "dst": "192.0.2.20", "proto": "udp", "dport": "53",
         "action": "drop"},
        {"id": 3, "priority": 90, "src": "100.64.2.0/24",
         "action": "mark", "dscp": 46},
    ]}
    rng = random.Random(20)
    t = Traffic()

    def src(f):
        return "100.64.%d.%d" % (f % 4, 1 + f // 4)
    flows = make_flows(web, 400, rng, src_fn=src) + \
        make_flows(NAT4_UDP, 400, rng, src_fn=src)
    idx = emit(t, flows, 2, rng)
    drop_nets = {"web": ipaddress.ip_network("100.64.0.0/26"),
                 "nat-udp": ipaddress.ip_network("100.64.1.0/24")}
    mark_net = ipaddress.ip_network("100.64.2.0/24")
    dropped = []
    seen = list(t.pkts)
    for i in idx:
        p = t.pkts[i]
        a = ipaddress.ip_address(p.flow[2])
        if a in drop_nets[p.kind]:
            dropped.append(i)
        elif a in mark_net:
            seen[i] = Pkt(lm.remark(p.data, 46), False, p.flow, p.kind)
    n_marked = sum(1 for i in idx if seen[i] is not t.pkts[i])
    assert dropped and n_marked
    sm, out, drops = run_lb(tmp_path, "acl-" + mode,
                            lb_conf([web, NAT4_UDP], mode, acl=acl),
                            t.pkts, {"acl": len(dropped)})
    check_lb_output(seen, out, [web, NAT4_UDP], port_mac, dropped=dropped)
    assert sorted(match_output(t.pkts, drops, "drops")) == sorted(dropped)
    n_flows = len({t.pkts[i].flow for i in idx if i not in set(dropped)})
    assert sm["lb"]["flows_created"] == n_flows, sm["lb"]
    assert sm["lb"]["balanced"] == len(t) - len(dropped), sm["lb"]
    outer_ef = sum(1 for fr in out if lm.dissect(fr).ip[9] == lm.IPIP and
                   lm.dissect(fr).ip[1] >> 2 == 46)
    assert outer_ef == sum(1 for i in idx if i not in set(dropped) and
                           seen[i].kind == "web" and
                           lm.dissect(seen[i].data).ip[1] >> 2 == 46)
    assert any(seen[i] is not t.pkts[i] and seen[i].kind == "web"
               for i in idx)
