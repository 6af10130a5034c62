# SPDX-License-Identifier: BSD-3-Clause
"""The ACL against its reference model (tests/integration/acl_model.py), in
lab replay mode: a random table of several hundred IPv4 and IPv6 rules and
tens of thousands of random packets; every packet's fate must be the
model's, forwarded packets byte-identical, drops counted as "acl", and the
per-rule hit counters of acl_rule_list equal to the model's. Then the
default action, non_ip, in_port, mark (DSCP rewrite, IPv4 checksum, IPv6
traffic class) and police (srTCM, counted, not timed)."""

import collections
import ipaddress
import random
import struct

import pytest

import acl_model as am
import pautil
from pautil import (PIPE2, PIPE4, RTC1, RTC2, check_flow_order, check_summary,
                    match_output, read_pcap, write_pcap)

# pipeline with two classify lcores: per-lcore counters summed, two
# classifiers reading the table at once
PIPE_2CLS = {"mode": "pipeline",
             "lcores": {"rx": [1], "classify": [2, 3], "lb": [4], "tx": [5]}}
MODES = {"rtc1": RTC1, "rtc2": RTC2, "pipeline4": PIPE4,
         "pipeline-2classify": PIPE_2CLS, "pipeline2": PIPE2}

BIG_SEED = 20250301
BIG_RULES = 400
BIG_PKTS = 20000
REPLAY_DONE_TIMEOUT = 120


# --------------------------------------------------------------------------
# helpers

def run_stay(daemon_factory, tmp_path, conf, pkts, pcap, name):
    """Replay pcap with -s --stay and --replay-drops; when every packet has
    left the pipeline read acl_rule_list and stats_get, then shut down.
    Returns (summary-checked Result, out frames, drop frames, rule list,
    stats)."""
    drops = str(tmp_path / (name + "-drops.pcap"))
    d = daemon_factory(conf, pcap, extra=("--replay-drops", drops), name=name)
    d.wait_replay_done(len(pkts), timeout=REPLAY_DONE_TIMEOUT)
    rules = d.call("acl_rule_list")
    stats = d.call("stats_get")
    with d.client() as c:
        assert c.call("shutdown") is True
    rc = d.wait()
    res = pautil.Result(d.args, rc, d.stdout, d.stderr)
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())
    return res, read_pcap(d.out_pcap), read_pcap(drops), rules, stats


def describe(p, model):
    v = model.classify(p.desc)
    return "#%s %s %s -> model %s by rule %s" % (
        am.find_index(p.data), p.kind, tuple(p.desc[:6]), v.verdict,
        v.rule_id)


def check_fates(pkts, model, out_frames, drop_frames):
    """Every packet where the model puts it; forwarded and dropped frames
    byte-identical to the input. Returns (forwarded idx, dropped idx)."""
    out_idx = match_output(pkts, out_frames, "output")
    drop_idx = match_output(pkts, drop_frames, "drops")
    want_fwd = {i for i, p in enumerate(pkts)
                if model.classify(p.desc).verdict == "forward"}
    got_fwd = set(out_idx)
    got_drop = set(drop_idx)
    both = got_fwd & got_drop
    assert not both, "packets both forwarded and dropped: %s" % sorted(
        both)[:20]
    lost = set(range(len(pkts))) - got_fwd - got_drop
    assert not lost, "packets neither forwarded nor dropped: %s" % sorted(
        lost)[:20]
    wrong_drop = sorted(want_fwd - got_fwd)
    wrong_fwd = sorted(got_fwd - want_fwd)
    if wrong_drop or wrong_fwd:
        lines = ["%d packets dropped that the model forwards, %d forwarded "
                 "that the model drops" % (len(wrong_drop), len(wrong_fwd))]
        lines += ["dropped: " + describe(pkts[i], model)
                  for i in wrong_drop[:15]]
        lines += ["forwarded: " + describe(pkts[i], model)
                  for i in wrong_fwd[:15]]
        raise AssertionError("\n".join(lines))
    check_flow_order(pkts, out_idx)
    return out_idx, drop_idx


def check_rule_list(rule_list, conf_rules, pkts, model):
    """acl_rule_list: the configured rules (canonical form), best first,
    with the model's hits and bytes."""
    assert isinstance(rule_list, list), rule_list
    ids = [r["id"] for r in rule_list]
    want_order = [r["id"] for r in sorted(conf_rules, key=am.sort_key)]
    assert ids == want_order, "acl_rule_list not sorted by priority desc, " \
        "id asc (first differences: %s)" % [
            (k, a, b) for k, (a, b) in enumerate(zip(ids, want_order))
            if a != b][:10]
    want = {r["id"]: am.norm_rule(r) for r in conf_rules}
    bad = []
    for r in rule_list:
        got = am.norm_rule({k: v for k, v in r.items()
                            if k not in ("hits", "bytes")})
        if got != want[r["id"]]:
            bad.append("rule %s listed as %s, configured %s"
                       % (r["id"], r, want[r["id"]]))
    assert not bad, "\n".join(bad[:10])
    hits = collections.Counter()
    nbytes = collections.Counter()
    for p in pkts:
        v = model.classify(p.desc)
        if v.rule_id is not None:
            hits[v.rule_id] += 1
            nbytes[v.rule_id] += len(p.data)
    bad = []
    for r in rule_list:
        if r.get("hits") != hits[r["id"]]:
            bad.append("rule %s: hits %s, model %d (%s)" % (
                r["id"], r.get("hits"), hits[r["id"]], want[r["id"]]))
        elif r.get("bytes") != nbytes[r["id"]]:
            bad.append("rule %s: bytes %s, model %d (frame bytes)" % (
                r["id"], r.get("bytes"), nbytes[r["id"]]))
    assert not bad, "%d rules with wrong counters:\n%s" % (
        len(bad), "\n".join(bad[:20]))


def acl_conf(mode, acl):
    return {"pipeline": MODES[mode], "acl": acl}


# --------------------------------------------------------------------------
# model self-checks (no daemon involved, but cheap)

def test_model_semantics():
    am.self_check_semantics()


def test_model_generators_and_frames():
    """Rule and traffic generators cover what they should, and scapy
    dissects the struct-built frames to the descriptions the model uses."""
    info = am.self_check_generators(n_rules=300, n_pkts=2000, seed=7)
    assert info["rules_hit"] > 100, info


# --------------------------------------------------------------------------
# the big reference-model replay

@pytest.fixture(scope="module")
def big(tmp_path_factory):
    rules = am.gen_rules(BIG_SEED, BIG_RULES)
    pkts = am.gen_packets(rules, BIG_PKTS, BIG_SEED + 1)
    path = str(tmp_path_factory.mktemp("aclbig") / "big.pcap")
    write_pcap(path, [p.data for p in pkts])
    acl = {"default": "permit", "non_ip": "forward", "rules": rules}
    return acl, pkts, path, am.AclModel(acl)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_reference_model_replay(mode, big, daemon_factory, tmp_path):
    acl, pkts, pcap, model = big
    hits, default_hits, non_ip = am.expected_hits(model,
                                                  [p.desc for p in pkts])
    n_drop = sum(1 for p in pkts if model.classify(p.desc).verdict == "drop")
    assert 0.2 * len(pkts) < n_drop < 0.8 * len(pkts)     # a real mix
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf(mode, acl), pkts, pcap, mode)
    check_fates(pkts, model, outs, drops)
    check_summary(res, len(pkts), {"acl": n_drop})
    check_rule_list(rule_list, acl["rules"], pkts, model)
    sa = stats.get("acl")
    assert isinstance(sa, dict), stats
    assert sa.get("rules") == len(acl["rules"]), sa
    assert sa.get("default_hits") == default_hits, \
        "default_hits %s, model %d" % (sa.get("default_hits"), default_hits)
    assert stats["drops"]["acl"] == n_drop, stats["drops"]


def repeated(pkts, times):
    """pkts sent @p times over, in turn: the same frames (and flows) but
    each copy with its own index marker, so that fates stay traceable."""
    out = []
    for r in range(times):
        for j, p in enumerate(pkts):
            i = r * len(pkts) + j
            old, new = am.MARK_FMT % j, am.MARK_FMT % i
            assert len(old) == len(new) and p.data.count(old) == 1
            out.append(am.GenPkt(p.data.replace(old, new), p.desc, p.kind,
                                 p.flow))
    return out


# the default flow cache (one classify lcore), none, and one far smaller
# than the flows behind two classify lcores (its sets overflow)
FLOW_CACHES = {"rtc1-default": ("rtc1", None),
               "rtc1-off": ("rtc1", 0),
               "pipeline-2classify-256": ("pipeline-2classify", 256)}


@pytest.mark.parametrize("case", sorted(FLOW_CACHES))
def test_flow_cache_repeats_agree_with_the_model(case, big, daemon_factory,
                                                 tmp_path):
    """3000 of the big replay's packets three times over: the second and
    third pass of each flow take the cached verdict, and every fate and
    counter is still the model's."""
    mode, size = FLOW_CACHES[case]
    acl, pkts, pcap, model = big
    pkts = repeated(pkts[:3000], 3)
    pcap = str(tmp_path / "repeated.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    acl = dict(acl)
    if size is not None:
        acl["flow_cache"] = size
    hits, default_hits, non_ip = am.expected_hits(model,
                                                  [p.desc for p in pkts])
    n_drop = sum(1 for p in pkts if model.classify(p.desc).verdict == "drop")
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf(mode, acl), pkts, pcap, case)
    check_fates(pkts, model, outs, drops)
    check_summary(res, len(pkts), {"acl": n_drop})
    check_rule_list(rule_list, acl["rules"], pkts, model)
    sa = stats["acl"]
    assert sa["default_hits"] == default_hits, sa
    n_ip = len(pkts) - non_ip
    looked = sa["flow_cache_hits"] + sa["flow_cache_misses"]
    if size == 0:
        assert sa["flow_cache_entries"] == 0 and looked == 0, sa
    elif size is None:
        # every IP packet looked up; all but each flow's first pass known
        assert sa["flow_cache_entries"] == 32768 and looked == n_ip, sa
        assert sa["flow_cache_hits"] >= 0.6 * n_ip, sa
    else:
        assert sa["flow_cache_entries"] == 256 and looked == n_ip, sa
        assert 0 < sa["flow_cache_hits"] < 0.6 * n_ip, sa


def test_default_drop_and_non_ip_drop(daemon_factory, tmp_path):
    """default drop: packets no rule matches are dropped ("acl"); non_ip
    drop: ARP dropped with reason non_ip and not counted as acl."""
    rules = am.gen_rules(BIG_SEED + 7, 250, family_mix=(0.5, 0.45))
    pkts = am.gen_packets(rules, 6000, BIG_SEED + 8, arp_frac=0.05,
                          derived_frac=0.6)
    pcap = str(tmp_path / "defdrop.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    acl = {"default": "drop", "non_ip": "drop", "rules": rules}
    model = am.AclModel(acl)
    hits, default_hits, non_ip = am.expected_hits(model,
                                                  [p.desc for p in pkts])
    assert default_hits > 100 and non_ip > 100, (default_hits, non_ip)
    reasons = collections.Counter(model.classify(p.desc).reason for p in pkts)
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf("pipeline4", acl), pkts, pcap,
        "defdrop")
    check_fates(pkts, model, outs, drops)
    check_summary(res, len(pkts), {"acl": reasons["acl"],
                                   "non_ip": reasons["non_ip"]})
    check_rule_list(rule_list, rules, pkts, model)
    assert stats["acl"].get("default_hits") == default_hits, stats["acl"]


def test_empty_table_default_drop(run_replay, tmp_path):
    """No rules, default drop: every IP packet dropped as acl, ARP still
    forwarded (non_ip defaults to forward)."""
    pkts = am.gen_packets([], 500, 99, arp_frac=0.1)
    pcap = str(tmp_path / "empty.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    n_arp = sum(p.desc.non_ip for p in pkts)
    assert n_arp > 10
    res = run_replay(pcap, {"pipeline": RTC1, "acl": {"default": "drop"}})
    check_summary(res, len(pkts), {"acl": len(pkts) - n_arp})
    out = match_output(pkts, read_pcap(res.out_pcap))
    assert sorted(out) == [i for i, p in enumerate(pkts) if p.desc.non_ip]


# --------------------------------------------------------------------------
# in_port

def _udp(i, src, dst, sport, dport, vlan=None, tos=0, flow_label=0,
         proto=17, frag=None, mac=b"\x02\x00\x00\x00\x10\x01",
         options=b""):
    fam = ipaddress.ip_address(src).version
    has_ports = proto in am.PORT_PROTOS and frag != "later"
    d = am.PktDesc(fam, src, dst, proto, sport if has_ports else 0,
                   dport if has_ports else 0, has_ports, am.REPLAY_PORT,
                   False)
    data = am.build_frame(d, am.MARK_FMT % i + b"payload-%d" % i, mac,
                          vlan=vlan, frag=frag, tos=tos,
                          flow_label=flow_label, ip_id=i & 0xFFFF,
                          ipv4_options=options)
    return am.GenPkt(data, d, "%s%d" % (am.PROTO_BY_NUM.get(proto, proto),
                                        fam),
                     repr((src, dst, proto, sport, dport)))


def test_in_port_matches_replay_port(daemon_factory, tmp_path):
    """A rule with in_port "replay0" matches what arrives in a replay (and
    wins over a lower-priority rule without in_port)."""
    rules = [
        {"id": 1, "priority": 10, "dst": "192.0.2.0/24", "in_port": "replay0",
         "action": "drop"},
        {"id": 2, "priority": 5, "dst": "192.0.2.0/24", "action": "permit"},
        {"id": 3, "priority": 10, "dst": "2001:db8:9::/48",
         "in_port": "replay0", "proto": "udp", "dport": "1-100",
         "action": "drop"},
        {"id": 4, "priority": 20, "src": "any", "dst": "any", "proto": 47,
         "in_port": "replay0", "action": "drop"},
    ]
    pkts = []
    for i in range(300):
        k = i % 4
        if k == 0:
            pkts.append(_udp(i, "198.51.100.%d" % (i % 200 + 1), "192.0.2.7",
                             1000 + i, 80))
        elif k == 1:
            pkts.append(_udp(i, "2001:db8:1::%x" % (i + 1), "2001:db8:9::1",
                             1000 + i, 50 + i % 100))
        elif k == 2:
            pkts.append(_udp(i, "198.51.100.9", "203.0.113.%d" % (i % 200),
                             1000 + i, 80, proto=47))
        else:
            pkts.append(_udp(i, "198.51.100.9", "203.0.113.5", 1000 + i, 80))
    pcap = str(tmp_path / "inport.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    acl = {"default": "permit", "rules": rules}
    model = am.AclModel(acl)
    n_drop = sum(model.classify(p.desc).verdict == "drop" for p in pkts)
    assert n_drop > 150
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf("rtc1", acl), pkts, pcap, "inport")
    check_fates(pkts, model, outs, drops)
    check_summary(res, len(pkts), {"acl": n_drop})
    check_rule_list(rule_list, rules, pkts, model)


def test_in_port_unknown_port_refused(run_replay, tmp_path):
    pcap = str(tmp_path / "x.pcap")
    write_pcap(pcap, [_udp(0, "10.0.0.1", "10.0.0.2", 1, 2).data])
    res = run_replay(pcap, {"pipeline": RTC1, "acl": {"rules": [
        {"id": 1, "in_port": "wan9", "action": "drop"}]}}, timeout=60)
    assert res.rc not in (0, None), res
    assert "$.acl.rules[0].in_port" in res.stderr, res


# --------------------------------------------------------------------------
# mark

def _l3_off(frame):
    off = 12
    while struct.unpack("!H", frame[off:off + 2])[0] in (0x8100, 0x88a8):
        off += 4
    return off + 2


def remark(frame, dscp):
    """The frame with its DSCP rewritten as the daemon must (ECN kept,
    IPv4 header checksum recomputed)."""
    b = bytearray(frame)
    l3 = _l3_off(frame)
    if b[l3] >> 4 == 4:
        ihl = (b[l3] & 15) * 4
        b[l3 + 1] = (dscp << 2) | (b[l3 + 1] & 3)
        b[l3 + 10:l3 + 12] = b"\0\0"
        struct.pack_into("!H", b, l3 + 10, am.csum16(bytes(b[l3:l3 + ihl])))
    else:
        vtf = struct.unpack("!I", b[l3:l3 + 4])[0]
        tc = (vtf >> 20) & 0xFF
        tc = (dscp << 2) | (tc & 3)
        vtf = (vtf & ~(0xFF << 20)) | (tc << 20)
        struct.pack_into("!I", b, l3, vtf)
    return bytes(b)


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_mark_rewrites_dscp(mode, daemon_factory, tmp_path):
    """mark: IPv4 TOS upper 6 bits = dscp, ECN kept, header checksum right
    (options and VLAN tags included); IPv6 traffic class upper 6 bits =
    dscp, ECN and flow label kept; every other byte unchanged."""
    from scapy import all as s
    rules = [
        {"id": 1, "priority": 10, "src": "198.51.100.0/24", "proto": "udp",
         "dport": "5000", "action": "mark", "dscp": 46},
        {"id": 2, "priority": 10, "dst": "2001:db8:5::/48", "proto": "tcp",
         "action": "mark", "dscp": 10},
        {"id": 3, "priority": 10, "proto": "icmp", "action": "mark",
         "dscp": 0},
        {"id": 4, "priority": 10, "src": "2001:db8:7::/48", "action": "mark",
         "dscp": 63},
        {"id": 5, "priority": 20, "src": "198.51.100.250", "action": "drop"},
    ]
    rng = random.Random(5)
    pkts = []
    for i in range(800):
        k = i % 8
        tos = rng.randint(0, 255)
        fl = rng.getrandbits(20)
        vlan = rng.choice([None, None, 100])
        if k == 0:      # marked 46
            p = _udp(i, "198.51.100.%d" % rng.randint(1, 249), "203.0.113.1",
                     rng.randint(1024, 65535), 5000, vlan=vlan, tos=tos)
        elif k == 1:    # marked 46, IPv4 options (IHL 6)
            p = _udp(i, "198.51.100.%d" % rng.randint(1, 249), "203.0.113.2",
                     rng.randint(1024, 65535), 5000, tos=tos,
                     options=b"\x94\x04\x00\x00")
        elif k == 2:    # non-first fragment: ports unknown, still marked
            p = _udp(i, "198.51.100.%d" % rng.randint(1, 249), "203.0.113.3",
                     0, 0, tos=tos, frag="later")
        elif k == 3:    # IPv6 TCP marked 10
            p = _udp(i, "2001:db8:1::%x" % (i + 1), "2001:db8:5::%x" % i,
                     rng.randint(1024, 65535), 443, proto=6, tos=tos,
                     flow_label=fl, vlan=vlan)
        elif k == 4:    # ICMP: DSCP cleared
            p = _udp(i, "203.0.113.%d" % rng.randint(1, 250), "198.51.100.1",
                     0, 0, proto=1, tos=tos)
        elif k == 5:    # IPv6 non-first fragment marked 63
            p = _udp(i, "2001:db8:7::%x" % (i + 1), "2001:db8:99::1", 0, 0,
                     frag="later", tos=tos, flow_label=fl)
        elif k == 6:    # not matched: unchanged
            p = _udp(i, "198.51.100.%d" % rng.randint(1, 249), "203.0.113.1",
                     rng.randint(1024, 65535), 5001, tos=tos, vlan=vlan)
        else:           # dropped
            p = _udp(i, "198.51.100.250", "203.0.113.1", 7, 5000, tos=tos)
        pkts.append(p)
    pcap = str(tmp_path / "mark.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    acl = {"default": "permit", "rules": rules}
    model = am.AclModel(acl)
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf(mode, acl), pkts, pcap,
        "mark-" + mode)
    n_drop = sum(model.classify(p.desc).verdict == "drop" for p in pkts)
    check_summary(res, len(pkts), {"acl": n_drop})
    want = {}
    for i, p in enumerate(pkts):
        v = model.classify(p.desc)
        if v.verdict == "forward":
            want[i] = remark(p.data, v.action["dscp"]) \
                if v.action["action"] == "mark" else p.data
    got = {}
    for fr in outs:
        i = am.find_index(fr)
        assert i is not None and i not in got, fr.hex()
        got[i] = fr
    assert sorted(got) == sorted(want), "forwarded set differs: missing %s," \
        " extra %s" % (sorted(set(want) - set(got))[:10],
                       sorted(set(got) - set(want))[:10])
    bad = []
    for i in sorted(want):
        if got[i] != want[i]:
            diff = [k for k in range(min(len(got[i]), len(want[i])))
                    if got[i][k] != want[i][k]]
            bad.append("#%d %s: differs at %s (got %s, want %s)" % (
                i, pkts[i].kind, diff[:6], got[i][:64].hex(),
                want[i][:64].hex()))
    assert not bad, "%d wrong frames:\n%s" % (len(bad), "\n".join(bad[:10]))
    # independent check of the IPv4 checksums with scapy
    n4 = 0
    for i, fr in got.items():
        e = s.Ether(fr)
        if e.haslayer(s.IP) and not e.haslayer(s.IPv6):
            ip = e[s.IP]
            c = ip.chksum
            del ip.chksum
            assert s.IP(bytes(ip)).chksum == c, "#%d: bad checksum" % i
            n4 += 1
    assert n4 > 300
    # the marked packets really carry their new DSCP
    for i, fr in got.items():
        v = model.classify(pkts[i].desc)
        if v.action["action"] == "mark":
            l3 = _l3_off(fr)
            if fr[l3] >> 4 == 4:
                assert fr[l3 + 1] >> 2 == v.action["dscp"]
            else:
                assert (struct.unpack("!I", fr[l3:l3 + 4])[0] >> 22) & 63 \
                    == v.action["dscp"]
    check_rule_list(rule_list, rules, pkts, model)


# --------------------------------------------------------------------------
# police

POLICE_K = 1000
POLICE_B = 50


@pytest.mark.parametrize("mode", ["rtc1", "rtc2", "pipeline4"])
def test_police_counts(mode, daemon_factory, tmp_path):
    """rate_pps 1, burst 50: of 1000 packets of one flow, replayed in well
    under a second, between B and B + R * duration + 1 pass per metering
    lcore; the rest are dropped with reason "police". Traffic the police
    rule does not match is untouched."""
    rules = [{"id": 9, "priority": 100, "dst": "203.0.113.77", "proto": "udp",
              "dport": "7777", "action": "police", "rate_pps": 1,
              "burst": POLICE_B}]
    pkts = []
    for i in range(POLICE_K + POLICE_K // 2):
        if i % 3 == 2:
            pkts.append(_udp(i, "198.51.100.1", "203.0.113.78", 4000, 7777))
        else:
            pkts.append(_udp(i, "198.51.100.1", "203.0.113.77", 4000, 7777))
    flow = [i for i, p in enumerate(pkts) if p.desc.dst == "203.0.113.77"]
    assert len(flow) == POLICE_K, len(flow)
    pcap = str(tmp_path / "police.pcap")
    write_pcap(pcap, [p.data for p in pkts])
    acl = {"default": "permit", "rules": rules}
    res, outs, drops, rule_list, stats = run_stay(
        daemon_factory, tmp_path, acl_conf(mode, acl), pkts, pcap,
        "police-" + mode)
    s = check_summary(res, len(pkts))
    dur = s.get("duration_s", 1.0)
    n_meter = 2 if mode == "rtc2" else 1
    passed = s["tx_packets"] - (len(pkts) - POLICE_K)
    lo = POLICE_B
    hi = n_meter * (POLICE_B + int(dur) + 1) + 1
    assert lo <= passed <= hi, "%d of %d policed packets passed, expected " \
        "%d..%d (duration %.3fs)" % (passed, POLICE_K, lo, hi, dur)
    want_drops = {r: 0 for r in pautil.DROP_REASONS}
    want_drops["police"] = POLICE_K - passed
    assert s["drops"] == want_drops, s["drops"]
    out_idx = match_output(pkts, outs)
    drop_idx = match_output(pkts, drops, "drops")
    assert set(drop_idx) <= set(flow), "unpoliced packets dropped"
    others = set(range(len(pkts))) - set(flow)
    assert others <= set(out_idx), "unpoliced packets lost"
    if n_meter == 1:
        # one meter: the burst is the first B packets of the flow
        assert flow[:POLICE_B] == [i for i in out_idx if i in set(flow)][
            :POLICE_B], "the first %d packets did not pass" % POLICE_B
    (r,) = rule_list
    assert r["id"] == 9 and r["hits"] == POLICE_K, r
    assert r["action"] == "police" and r["rate_pps"] == 1 and \
        r["burst"] == POLICE_B, r
