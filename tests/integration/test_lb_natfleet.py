# SPDX-License-Identifier: BSD-3-Clause
"""NAT replies in a fleet (docs/scale-out.md, "NAT in a fleet"): the
backends' replies reach whichever appliance the routers pick, which may
hold no state for their flow. Two daemon runs with the same
configuration play two appliances: A sees the clients' packets (and,
after them, the replies: its stateful translation), B only the replies,
with fresh state. B must translate each reply exactly as A does (byte
for byte, checksums checked here and by scapy), IPv4 and IPv6, TCP and
UDP, for hundreds of flows over several backends; a reply from a backend
that Maglev did not choose for its client passes unchanged (counted
nat_reply_unmatched); a backend of two nat services: translated to the
one service whose Maglev choice it is, dropped (nat_ambiguous) when both
choose it.

Output frames are matched to input frames by the IDX marker of the
payload, never by position."""

import collections
import random

import pytest

import lb_model as lm
from test_lb_replay import (BACKEND_SIDE_MAC, Traffic, assert_no_problems,
                            backends, check_lb_output, emit, lb_conf,
                            make_flows, port_mac, run_lb,  # noqa: F401
                            svc_backends)

N_FLOWS = 120          # per service
N_SHARED = 150         # client tuples sent to both services of a backend

F4T = {"name": "f4t", "vip": "192.0.2.60", "port": 80, "proto": "tcp",
       "forward": "nat",
       "backends": backends(["10.7.0.1", "10.7.0.2", "10.7.0.3", "10.7.0.4"],
                            [1, 2, 1, 1], port=[8080, None, 8081, 8080],
                            mac=[None, None, "02:00:00:00:ee:03", None])}
F4U = {"name": "f4u", "vip": "192.0.2.60", "port": 53, "proto": "udp",
       "forward": "nat",
       "backends": backends(["10.7.0.1", "10.7.0.5", "10.7.0.6"],
                            port=[5353, None, 5300])}
F6T = {"name": "f6t", "vip": "2001:db8:ffff::60", "port": 443,
       "proto": "tcp", "forward": "nat",
       "backends": backends(["2001:db8:e::1", "2001:db8:e::2",
                             "2001:db8:e::3"], [2, 1, 1],
                            port=[8443, None, 8443])}
F6U = {"name": "f6u", "vip": "2001:db8:ffff::60", "port": 53,
       "proto": "udp", "forward": "nat",
       "backends": backends(["2001:db8:e::11", "2001:db8:e::12",
                             "2001:db8:e::13"], port=[53, 5300, None])}
# 10.7.1.1:8080 is a backend of both
SX = {"name": "sx", "vip": "192.0.2.61", "port": 80, "proto": "tcp",
      "forward": "nat",
      "backends": backends(["10.7.1.1", "10.7.1.2"], port=[8080, 8080])}
SY = {"name": "sy", "vip": "192.0.2.62", "port": 80, "proto": "tcp",
      "forward": "nat",
      "backends": backends(["10.7.1.3", "10.7.1.1"], port=[8080, 8080])}
SHARED_BE = "10.7.1.1"

SVCS = [F4T, F4U, F6T, F6U, SX, SY]
MAIN = [F4T, F4U, F6T, F6U]


def build():
    """The traffic: client flows (A), the replies of every backend of
    their service to each of them (A after the flows, and B), the shared
    backend's replies to clients of both its services (B only).
    Returns (Traffic, client flows, A's indexes, B's indexes)."""
    rng = random.Random(1414)
    t = Traffic()
    flows = []
    for svc in MAIN:
        flows += make_flows(svc, N_FLOWS, rng, nocsum_every=4)
    # each client of sx also opens the same tuple to sy
    sx = make_flows(SX, N_SHARED, rng,
                    src_fn=lambda f: "203.0.%d.%d" % (113 + f // 250,
                                                      1 + f % 250))
    sy = [dict(fl, dst=SY["vip"], kind=SY["name"]) for fl in sx]
    a_idx = emit(t, flows, 2, rng)
    a_idx += emit(t, sx + sy, 1, rng)
    replies = []
    for fl in flows:
        svc = next(x for x in MAIN if x["name"] == fl["kind"])
        for a, (bport, _) in svc_backends(svc).items():
            for k, flags in enumerate((0x12, 0x18)):
                replies.append(t.l4(
                    fl["fam"], fl["proto"], a, fl["src"], bport,
                    fl["sport"], "reply:%s:%s" % (fl["kind"], a),
                    n=rng.randint(0, 50), smac=BACKEND_SIDE_MAC,
                    l4_csum=fl["csum"], tcp_flags=flags, seq=1 + 700 * k,
                    ip_id=len(t) & 0xFFFF))
    shared = []
    for fl in sx:
        shared.append(t.l4(4, lm.TCP, SHARED_BE, fl["src"], 8080,
                           fl["sport"], "shared", n=rng.randint(0, 50),
                           smac=BACKEND_SIDE_MAC, tcp_flags=0x12,
                           ip_id=len(t) & 0xFFFF))
    return t, flows, a_idx + replies, replies + shared


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, port_mac):
    """Appliance A's run: the clients' packets, then the replies."""
    tmp = tmp_path_factory.mktemp("natfleet")
    t, flows, a_idx, b_idx = build()
    a_pkts = [t.pkts[i] for i in a_idx]
    sm, out, _ = run_lb(tmp, "a", lb_conf(SVCS), a_pkts, {})
    not_a = set(range(len(t))) - set(a_idx)
    mapping, deferred = check_lb_output(
        t.pkts, out, SVCS, port_mac, dropped=not_a,
        defer=lambda p: p.kind.startswith("reply:"))
    a_out = {i: fr for fr, i in deferred}
    return {"t": t, "a_sum": sm, "mapping": mapping, "a_out": a_out,
            "b_idx": b_idx, "tmp": tmp}


def check_reply(fr, p, svc, port_mac, scapy=True):
    """fr is p (a backend's reply) with the VIP and service port as
    source, checksums right, back to the MAC it came from."""
    want = lm.rewrite(p.data, port_mac, BACKEND_SIDE_MAC, new_src=svc["vip"],
                      new_sport=svc["port"])
    pr = lm.same_but_csum(fr, want)
    f = lm.dissect(fr)
    if f.ethertype == lm.ETH_IP4 and not lm.ip4_header_ok(f.ip):
        pr.append("IPv4 header checksum invalid")
    if not lm.l4_csum_ok(f.ip):
        pr.append("L4 checksum invalid")
    if scapy:
        pr += lm.scapy_recheck(fr)
    return pr


def test_appliance_with_the_flows_translates_their_backends_replies(fleet,
                                                                    port_mac):
    """A (the reference): each flow's own backend's replies leave as the
    VIP's; the other backends' pass unchanged and are counted."""
    t, mapping, a_out = fleet["t"], fleet["mapping"], fleet["a_out"]
    by_name = {s["name"]: s for s in SVCS}
    problems = []
    n_own = n_other = 0
    for i, fr in a_out.items():
        p = t.pkts[i]
        _, name, be = p.kind.split(":", 2)
        svc = by_name[name]
        fam, proto, src, dst, sport, dport = p.flow
        if mapping[(fam, proto, dst, svc["vip"], dport, svc["port"])] != be:
            n_other += 1
            if fr != p.data:
                problems.append("input #%d: reply from %s, not its flow's "
                                "backend, modified" % (i, be))
            continue
        n_own += 1
        problems += ["input #%d: %s" % (i, x) for x in
                     check_reply(fr, p, svc, port_mac, scapy=n_own <= 20)]
    assert_no_problems(problems, "bad replies on A")
    used = collections.Counter(v for v in mapping.values())
    assert all(used[a] > 0 for s in MAIN for a in svc_backends(s)), used
    lb = fleet["a_sum"]["lb"]
    assert n_own == 2 * N_FLOWS * len(MAIN), n_own
    assert lb["nat_replies"] == n_own, lb
    assert lb["nat_reply_unmatched"] == n_other, lb
    assert lb["nat_reply_stateless"] == 0, lb


@pytest.mark.parametrize("mode", ["rtc1", "rtc2"])
def test_fresh_appliance_translates_replies_exactly_as_the_one_with_the_flows(
        mode, fleet, port_mac):
    """B (same configuration, no state, only the replies): every reply A
    translated, B translates to the very same bytes (VIP and service
    port, checksums verified here and by scapy); every reply A passed
    unchanged, B passes unchanged and counts as nat_reply_unmatched; the
    backend of two services: translated to the one whose Maglev choice
    it is, dropped as nat_ambiguous when it is both's, unchanged when
    neither's."""
    t, mapping, a_out = fleet["t"], fleet["mapping"], fleet["a_out"]
    b_pkts = [t.pkts[i] for i in fleet["b_idx"]]
    # what the shared backend's replies must become
    want_shared = {}
    for i in fleet["b_idx"]:
        p = t.pkts[i]
        if p.kind != "shared":
            continue
        fam, proto, src, dst, sport, dport = p.flow
        owners = [s for s in (SX, SY) if mapping[
            (fam, proto, dst, s["vip"], dport, s["port"])] == SHARED_BE]
        want_shared[i] = owners
    n_amb = sum(1 for o in want_shared.values() if len(o) == 2)
    n_one = sum(1 for o in want_shared.values() if len(o) == 1)
    n_none = sum(1 for o in want_shared.values() if not o)
    assert n_amb > 0 and n_one > 0 and n_none > 0, (n_amb, n_one, n_none)

    sm, out, drops = run_lb(fleet["tmp"], "b-" + mode, lb_conf(SVCS, mode),
                            b_pkts, {"nat_ambiguous": n_amb})
    by_name = {s["name"]: s for s in SVCS}
    problems = []
    seen = collections.Counter()
    n_same = n_unchanged = n_shared_one = 0
    for n, fr in enumerate(out):
        i = lm.find_marker(fr)
        if i is None or i >= len(t) or i not in want_shared and \
                i not in a_out:
            problems.append("output #%d: no reply of the input" % n)
            continue
        seen[i] += 1
        p = t.pkts[i]
        if i in a_out:
            if fr != a_out[i]:
                problems.append("input #%d (%s): B's output differs from "
                                "A's:\n  A %s\n  B %s" % (
                                    i, p.kind, a_out[i].hex(), fr.hex()))
                continue
            if fr == p.data:
                n_unchanged += 1
            else:
                n_same += 1
                _, name, _ = p.kind.split(":", 2)
                problems += ["input #%d: %s" % (i, x) for x in
                             check_reply(fr, p, by_name[name], port_mac)]
            continue
        owners = want_shared[i]
        if len(owners) == 1:
            n_shared_one += 1
            problems += ["shared reply #%d: %s" % (i, x) for x in
                         check_reply(fr, p, owners[0], port_mac)]
        elif fr != p.data:
            problems.append("shared reply #%d (%d owners) modified" % (
                i, len(owners)))
    assert_no_problems(problems, "bad replies on B")
    dups = [i for i, c in seen.items() if c > 1]
    assert not dups, dups[:10]
    dropped = {lm.find_marker(fr) for fr in drops}
    assert dropped == {i for i, o in want_shared.items() if len(o) == 2}
    assert len(seen) + len(dropped) == len(b_pkts)
    assert n_same == 2 * N_FLOWS * len(MAIN), n_same
    assert n_shared_one == n_one
    lb = sm["lb"]
    assert lb["nat_replies"] == 0 and lb["flows_created"] == 0, lb
    assert lb["nat_reply_stateless"] == n_same + n_one, lb
    assert lb["nat_reply_unmatched"] == n_unchanged + n_none, lb
    assert lb["nat_reply_ambiguous"] == n_amb, lb
