# SPDX-License-Identifier: BSD-3-Clause
"""The load balancer over JSON-RPC (docs/configuration.md, docs/rpc.md):
lb_service_add, lb_service_delete, lb_service_list, lb_backend_add,
lb_backend_delete, lb_backend_set and their errors; config_get and
stats_get following the changes; trace_packet's LB part (service,
backend, existing_flow, lb_note, fragment); stickiness, drain and down
with the flows of a real replay.

A --stay daemon replays its pcap once: the flows it creates stay in the
lcores' flow tables (timeouts of an hour), and trace_packet, which asks
those tables read-only, tells which backend each flow would keep."""

import copy
import ipaddress
import json
import time

import pytest

import pautil
from pautil import RTC2, l4_frame, parse_ip, read_pcap, write_pcap

LOCAL4 = "192.0.2.254"
LOCAL6 = "2001:db8::fe"

WEB = {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "scheduler": "maglev", "forward": "ipip",
       "backends": [{"addr": "10.1.0.1"}, {"addr": "10.1.0.2", "weight": 2},
                    {"addr": "10.1.0.3"}]}
DNS = {"name": "dns", "vip": "192.0.2.20", "port": 53, "proto": "udp",
       "scheduler": "rr", "forward": "nat",
       "backends": [{"addr": "10.2.0.%d" % i, "port": 5353}
                    for i in (1, 2, 3)]}
WEB6 = {"name": "web6", "vip": "2001:db8:10::10", "port": 443,
        "proto": "tcp", "forward": "ipip",
        "backends": [{"addr": "2001:db8:1::1"}, {"addr": "2001:db8:1::2"}]}
SERVICES = [WEB, DNS, WEB6]

# A client subnet the ACL drops (trace: ACL first, then the LB).
ACL_RULES = [{"id": 7, "priority": 10, "src": "203.0.113.128/25",
              "dst": "any", "proto": "tcp", "action": "drop"}]

CONF = {"pipeline": dict(RTC2),
        "acl": {"default": "permit", "rules": ACL_RULES},
        "lb": {"local_addr": LOCAL4, "local_addr6": LOCAL6,
               "flow_table": {"size": 8192, "tcp_timeout": 3600,
                              "tcp_fin_timeout": 3600, "udp_timeout": 3600},
               "services": SERVICES}}

N_WEB, N_DNS, N_WEB6 = 200, 60, 40
LB_METHODS = ("lb_service_add", "lb_service_delete", "lb_service_list",
              "lb_backend_add", "lb_backend_delete", "lb_backend_set")
COUNTERS = ("flows", "packets", "bytes")
STATS_KEYS = ("services", "backends", "flows", "flows_created",
              "flow_table_full", "fragments", "nat_replies", "no_backend",
              "mtu", "version", "build_ms")


def web_flows():
    return [("198.51.100.%d" % (1 + k % 200), WEB["vip"], 20000 + k, 80,
             "tcp") for k in range(N_WEB)]


def dns_flows():
    return [("203.0.113.%d" % (1 + k), DNS["vip"], 30000 + k, 53, "udp")
            for k in range(N_DNS)]


def web6_flows():
    return [("2001:db8:c::%x" % (1 + k), WEB6["vip"], 40000 + k, 443, "tcp")
            for k in range(N_WEB6)]


def all_flows():
    """(src, dst, sport, dport, proto) of every packet, one per flow, in
    pcap order, and a few packets to no service."""
    return web_flows() + dns_flows() + web6_flows() + [
        ("198.51.100.250", WEB["vip"], 1234, 443, "tcp"),    # VIP, no port
        ("198.51.100.251", "192.0.2.99", 1234, 80, "tcp"),   # not a VIP
    ]


def tparams(flow, **kw):
    p = dict(zip(("src", "dst", "sport", "dport", "proto"), flow))
    p.update(kw)
    return p


def new_tuples(vip, dport, proto, n, base="100.64"):
    """n 5-tuples to a VIP that the replay never sent."""
    return [("%s.%d.%d" % (base, k // 250, 1 + k % 250), vip, 50000 + k % 997,
             dport, proto) for k in range(n)]


def err(resp, code):
    assert "error" in resp and "result" not in resp, resp
    assert resp["error"]["code"] == code, resp
    assert isinstance(resp["error"].get("message"), str), resp
    return resp["error"]["message"]


def strip_counters(svc):
    """A lb_service_list entry without its counters and views: the
    service in the configuration's schema."""
    s = {k: v for k, v in svc.items()
         if k not in ("flows", "usable_backends", "build_ms", "panic",
                      "panics", "health_down", "table_hash")}
    s["backends"] = [{k: v for k, v in b.items() if k not in COUNTERS and
                      not k.startswith("health")}
                     for b in svc.get("backends", [])]
    return s


def norm_service(svc):
    """A service object with the defaults filled in, backends sorted by
    address, for comparisons."""
    s = {"scheduler": "maglev", "forward": "ipip", "table_size": 65537}
    s.update({k: v for k, v in svc.items() if k != "backends"})
    bes = []
    for b in svc.get("backends", []):
        x = {"port": 0, "weight": 1, "state": "up"}
        x.update(b)
        bes.append(x)
    s["backends"] = sorted(bes, key=lambda b: ipaddress.ip_address(
        b["addr"]))
    return s


def listed(c):
    """lb_service_list as {name: entry}, checking the counters' shape."""
    lst = c.call("lb_service_list")
    assert isinstance(lst, list), lst
    out = {}
    for s in lst:
        assert isinstance(s, dict) and isinstance(s.get("name"), str), s
        assert s["name"] not in out, "service listed twice: %s" % lst
        assert isinstance(s.get("backends"), list), s
        for b in s["backends"]:
            for k in COUNTERS:
                assert isinstance(b.get(k), int) and b[k] >= 0, (k, b)
        out[s["name"]] = s
    return out


def config_services(c):
    return {s["name"]: s for s in
            c.call("config_get").get("lb", {}).get("services", [])}


def assert_services(c, want):
    """lb_service_list, config_get and stats_get agree with `want` (a
    list of service objects, defaults omitted)."""
    want_n = {s["name"]: norm_service(s) for s in want}
    got = {n: norm_service(strip_counters(s)) for n, s in listed(c).items()}
    assert got == want_n, "lb_service_list:\n%s\nexpected:\n%s" % (
        json.dumps(got, indent=1), json.dumps(want_n, indent=1))
    cfg = {n: norm_service(s) for n, s in config_services(c).items()}
    assert cfg == want_n, "config_get lb.services:\n%s\nexpected:\n%s" % (
        json.dumps(cfg, indent=1), json.dumps(want_n, indent=1))
    st = c.call("stats_get")["lb"]
    assert st["services"] == len(want), st
    assert st["backends"] == sum(len(s.get("backends", [])) for s in want), st


def traffic_frames():
    return [l4_frame(*f[:4], proto=f[4], idx=i)
            for i, f in enumerate(all_flows())]


def replay_backends(frames, out_frames):
    """{flow 5-tuple: backend address} from the replay output; checks the
    forwarding of each service on the way."""
    flows = all_flows()
    key_of = {tuple(f[:4]): f for f in flows}
    seen = {}
    plain = 0
    for fr in out_frames:
        p = parse_ip(fr)
        assert p is not None, fr[:64].hex()
        mk = pautil.gen_sample.find_marker(fr)
        assert mk is not None and mk < len(flows), fr[:64].hex()
        f = flows[mk]
        if p["inner"] is not None:
            i = p["inner"]
            assert (i["src"], i["dst"], i["sport"], i["dport"]) == f[:4], \
                (p, f)
            # the packet is carried byte for byte behind the outer header
            outer = 20 if p["family"] == 4 else 40
            assert fr[14 + outer:] == frames[mk][14:], \
                "flow %s: inner packet modified" % (f,)
            assert p["src"] == (LOCAL4 if p["family"] == 4 else LOCAL6), p
            assert p["proto"] == (4 if p["family"] == 4 else 41), p
            seen[f] = p["dst"]
        elif f[1] == DNS["vip"]:
            assert (p["src"], p["sport"], p["dport"]) == (f[0], f[2], 5353), \
                (p, f)
            seen[f] = p["dst"]
        else:
            assert (p["src"], p["dst"], p["sport"], p["dport"]) == f[:4], p
            assert fr == frames[mk], "flow %s: a packet to no service was " \
                "modified" % (f,)
            plain += 1
    assert plain == 2, plain
    return seen


@pytest.fixture(scope="module")
def traffic(tmp_path_factory):
    frames = traffic_frames()
    path = str(tmp_path_factory.mktemp("lb") / "lb.pcap")
    write_pcap(path, frames)
    return frames, path


def start_lb_daemon(start, traffic, name, config=CONF):
    frames, path = traffic
    d = start(config, path, name=name)
    st = d.wait_replay_done(len(frames))
    assert st["dropped_packets"] == 0, st
    # the TX buffers are flushed within tx_drain_us; the pcap is complete
    # when it holds every transmitted frame
    deadline = time.monotonic() + 10
    while True:
        try:
            out = read_pcap(d.out_pcap)
        except ValueError:
            out = []
        if len(out) == len(frames) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(out) == len(frames), (len(out), d.describe())
    d.seen = replay_backends(frames, out)
    assert len(d.seen) == N_WEB + N_DNS + N_WEB6, len(d.seen)
    return d


@pytest.fixture(scope="module")
def d(module_daemons, traffic):
    """One daemon whose replay is done. Tests leave "web", "dns" and
    "web6" as configured; scratch services are deleted again."""
    return start_lb_daemon(module_daemons, traffic, "lb-rpc")


@pytest.fixture
def c(d):
    with d.client(timeout=30) as cl:
        yield cl
    # every test leaves the configured services as they were
    with d.client(timeout=30) as cl:
        assert_services(cl, SERVICES)


def by_backend(seen, vip):
    out = {}
    for f, be in seen.items():
        if f[1] == vip:
            out.setdefault(be, []).append(f)
    return out


def trace(c, flow, **kw):
    t = c.call("trace_packet", tparams(flow, **kw))
    for k in ("verdict", "acl_rule", "service", "backend", "existing_flow",
              "lb_note"):
        assert k in t, "trace_packet result lacks %r: %s" % (k, t)
    assert isinstance(t["existing_flow"], bool), t
    return t


# --------------------------------------------------------------------------
# listing, counters, stats

def test_methods_listed(c):
    methods = c.call("rpc_get_methods")
    for m in LB_METHODS + ("trace_packet",):
        assert m in methods, methods


def test_replay_balanced_every_flow(d):
    """The replay output: ipip packets carry the flow unchanged behind an
    outer header from local_addr(6), nat packets go to the backend's
    address and port; every backend got flows."""
    for svc in SERVICES:
        got = by_backend(d.seen, svc["vip"])
        assert sorted(got) == sorted(b["addr"] for b in svc["backends"]), \
            (svc["name"], {k: len(v) for k, v in got.items()})
    # rr: the flows go round the backends (per lcore): nearly even
    counts = [len(v) for v in by_backend(d.seen, DNS["vip"]).values()]
    assert max(counts) - min(counts) <= 2 * len(RTC2["lcores"]["worker"]), \
        counts


def test_list_counters_match_replay(c, d, traffic):
    frames, _ = traffic
    flows = all_flows()
    size = {f: len(frames[i]) for i, f in enumerate(flows)}
    lst = listed(c)
    assert sorted(lst) == sorted(s["name"] for s in SERVICES)
    total = 0
    for svc in SERVICES:
        got = lst[svc["name"]]
        per = by_backend(d.seen, svc["vip"])
        bes = {b["addr"]: b for b in got["backends"]}
        for addr, fl in per.items():
            b = bes[addr]
            assert b["flows"] == len(fl), (addr, b)
            assert b["packets"] == len(fl), (addr, b)
            # bytes: the frames as the appliance received them
            assert b["bytes"] == sum(size[f] for f in fl), (addr, b)
        assert got["flows"] == sum(len(v) for v in per.values()), got
        total += got["flows"]
    st = c.call("stats_get")["lb"]
    assert st["flows"] == total == N_WEB + N_DNS + N_WEB6, st
    assert st["flows_created"] == total, st


def test_stats_lb_keys(c):
    st = c.call("stats_get")
    lb = st["lb"]
    assert isinstance(lb, dict), lb
    for k in STATS_KEYS:
        assert k in lb, "stats_get lb lacks %r: %s" % (k, sorted(lb))
        assert isinstance(lb[k], (int, float)) and lb[k] >= 0, (k, lb)
    for k in STATS_KEYS:
        if k != "build_ms":
            assert isinstance(lb[k], int), (k, lb)
    assert lb["services"] == len(SERVICES)
    assert lb["backends"] == sum(len(s["backends"]) for s in SERVICES)
    assert lb["flow_table_full"] == 0 and lb["fragments"] == 0, lb
    assert lb["no_backend"] == 0 and lb["mtu"] == 0, lb
    assert lb["version"] >= 1, lb
    assert st["drops"]["no_backend"] == 0, st["drops"]


# --------------------------------------------------------------------------
# trace_packet

def test_trace_existing_flows(c, d):
    """Every flow of the replay is found in its lcore's table with the
    backend the replay sent it to."""
    bad = []
    for f, be in sorted(d.seen.items()):
        t = trace(c, f)
        want = {"verdict": "forward", "backend": be, "existing_flow": True,
                "lb_note": None}
        if {k: t[k] for k in want} != want or t["service"] is None:
            bad.append("%s: %s, expected %s" % (f, t, want))
    assert not bad, "%d of %d traces disagree:\n%s" % (
        len(bad), len(d.seen), "\n".join(bad[:15]))
    for svc in SERVICES:
        f = next(f for f in d.seen if f[1] == svc["vip"])
        assert trace(c, f)["service"] == svc["name"]


def test_trace_new_flows(c):
    web_addrs = {b["addr"] for b in WEB["backends"]}
    got = set()
    for f in new_tuples(WEB["vip"], 80, "tcp", 200):
        t = trace(c, f)
        assert t["verdict"] == "forward" and t["service"] == "web", t
        assert t["existing_flow"] is False, t
        assert t["backend"] in web_addrs, t
        got.add(t["backend"])
        # the Maglev choice is a function of the tuple and the backends
        assert trace(c, f)["backend"] == t["backend"]
    assert got == web_addrs, got
    # rr, wrr, lc: the backend of a new flow depends on the lcore that
    # takes its first packet: no backend, a note says why
    t = trace(c, new_tuples(DNS["vip"], 53, "udp", 1)[0])
    assert t["service"] == "dns" and t["backend"] is None, t
    assert t["verdict"] == "forward" and t["existing_flow"] is False, t
    assert isinstance(t["lb_note"], str) and t["lb_note"], t
    t = trace(c, ("2001:db8:c::ffff", WEB6["vip"], 9, 443, "tcp"))
    assert t["service"] == "web6", t
    assert t["backend"] in {b["addr"] for b in WEB6["backends"]}, t


@pytest.mark.parametrize("flow", [
    ("198.51.100.7", "192.0.2.99", 1234, 80, "tcp"),      # not a VIP
    ("198.51.100.7", WEB["vip"], 1234, 81, "tcp"),        # other port
    ("198.51.100.7", WEB["vip"], 1234, 80, "udp"),        # other protocol
    ("198.51.100.7", DNS["vip"], 1234, 53, "tcp"),
    ("198.51.100.7", WEB["vip"], 0, 0, "icmp"),
    ("2001:db8:c::1", "2001:db8:10::11", 1, 443, "tcp"),
], ids=["not_vip", "other_port", "other_proto", "dns_tcp", "icmp", "v6"])
def test_trace_no_service(c, flow):
    t = trace(c, flow)
    assert t["verdict"] == "forward", t
    assert t["service"] is None and t["backend"] is None, t
    assert t["existing_flow"] is False, t


def test_trace_acl_drop_comes_first(c):
    t = trace(c, ("203.0.113.200", WEB["vip"], 1234, 80, "tcp"))
    assert t["verdict"] == "drop" and t["acl_rule"] == 7, t
    assert t["service"] is None and t["backend"] is None, t


def test_trace_fragment(c, d):
    """A fragment is balanced on addresses and protocol alone, to the
    service of the VIP and protocol with the lowest port."""
    f = next(f for f in d.seen if f[1] == WEB["vip"])
    a = trace(c, f, fragment=True)
    assert a["service"] == "web" and a["existing_flow"] is False, a
    assert a["backend"] in {b["addr"] for b in WEB["backends"]}, a
    # ports do not matter (not even the destination port)
    for sp, dp in ((1, 2), (f[2] + 1, 80), (0, 0), (65535, 8080)):
        b = trace(c, f[:2] + (sp, dp, "tcp"), fragment=True)
        assert (b["service"], b["backend"]) == (a["service"], a["backend"]), \
            (a, b)
    t = trace(c, ("203.0.113.9", DNS["vip"], 0, 0, "udp"), fragment=True)
    assert t["service"] == "dns", t
    assert t["backend"] in {b["addr"] for b in DNS["backends"]}, t
    t = trace(c, ("198.51.100.1", "192.0.2.99", 0, 0, "udp"), fragment=True)
    assert t["service"] is None and t["backend"] is None, t
    resp = c.call_raw("trace_packet", tparams(f, fragment=1))
    assert "params.fragment" in err(resp, -32602)


def test_trace_all_backends_down_drops(c):
    svc = {"name": "alldown", "vip": "192.0.2.40", "port": 80,
           "proto": "tcp", "backends": [
               {"addr": "10.4.0.1", "state": "down"},
               {"addr": "10.4.0.2", "state": "down"}]}
    empty = {"name": "empty", "vip": "192.0.2.41", "port": 80,
             "proto": "tcp"}
    assert c.call("lb_service_add", svc) == {"name": "alldown"}
    assert c.call("lb_service_add", empty) == {"name": "empty"}
    try:
        for vip in (svc["vip"], empty["vip"]):
            for f in new_tuples(vip, 80, "tcp", 5):
                t = trace(c, f)
                assert t["verdict"] == "drop", t
                assert t["service"] in ("alldown", "empty"), t
                assert t["backend"] is None and t["acl_rule"] is None, t
                assert t["lb_note"] == "no_backend", t
        # weight 0 is no more usable than down
        c.call("lb_backend_set", {"service": "alldown", "addr": "10.4.0.1",
                                  "state": "up", "weight": 0})
        t = trace(c, new_tuples(svc["vip"], 80, "tcp", 1)[0])
        assert t["verdict"] == "drop" and t["backend"] is None, t
        c.call("lb_backend_set", {"service": "alldown", "addr": "10.4.0.1",
                                  "weight": 1})
        t = trace(c, new_tuples(svc["vip"], 80, "tcp", 1)[0])
        assert t["verdict"] == "forward" and t["backend"] == "10.4.0.1", t
        # draining is not usable for new flows either
        c.call("lb_backend_set", {"service": "alldown", "addr": "10.4.0.1",
                                  "state": "drain"})
        t = trace(c, new_tuples(svc["vip"], 80, "tcp", 1)[0])
        assert t["verdict"] == "drop" and t["backend"] is None, t
    finally:
        c.call("lb_service_delete", {"name": "alldown"})
        c.call("lb_service_delete", {"name": "empty"})


def test_trace_nat_replies(c, d):
    """A packet of no service from a nat backend's port is a reply:
    trace_packet says how the data path translates it (nat_reply): by the
    flow's reply entry ("flow"), by the one service whose Maglev choice
    for the client is this backend ("maglev"), dropped when several
    services' choices are ("ambiguous", drop_reason nat_ambiguous), or
    forwarded unchanged when none is ("unmatched")."""
    # the replay's dns flows (nat, rr): their reply entries
    dns = [(f, be) for f, be in d.seen.items() if f[1] == DNS["vip"]]
    assert dns
    for f, be in dns[:20]:
        t = trace(c, (be, f[0], 5353, f[2], "udp"))
        assert t["verdict"] == "forward" and t["service"] is None, t
        assert t["nat_reply"] == {"match": "flow", "service": "dns",
                                  "vip": DNS["vip"], "vport": 53}, t
    # not a reply: a backend address from another port, a client's packet
    f, be = dns[0]
    assert trace(c, (be, f[0], 5354, f[2], "udp"))["nat_reply"] is None
    assert trace(c, f)["nat_reply"] is None
    # two maglev nat services sharing a backend
    sx = {"name": "tnx", "vip": "192.0.2.61", "port": 80, "proto": "tcp",
          "forward": "nat", "backends": [{"addr": "10.7.1.1", "port": 8080},
                                         {"addr": "10.7.1.2", "port": 8080}]}
    sy = {"name": "tny", "vip": "192.0.2.62", "port": 80, "proto": "tcp",
          "forward": "nat", "backends": [{"addr": "10.7.1.3", "port": 8080},
                                         {"addr": "10.7.1.1", "port": 8080}]}
    assert c.call("lb_service_add", sx) == {"name": "tnx"}
    assert c.call("lb_service_add", sy) == {"name": "tny"}
    try:
        seen = set()
        for cl in new_tuples("0", 80, "tcp", 120, base="100.66"):
            x = trace(c, (cl[0], sx["vip"], cl[2], 80, "tcp"))["backend"]
            y = trace(c, (cl[0], sy["vip"], cl[2], 80, "tcp"))["backend"]
            for be in ("10.7.1.1", "10.7.1.2", "10.7.1.3"):
                t = trace(c, (be, cl[0], 8080, cl[2], "tcp"))
                owners = [s for s, ch in ((sx, x), (sy, y)) if ch == be]
                if len(owners) == 1:
                    want = {"match": "maglev", "service": owners[0]["name"],
                            "vip": owners[0]["vip"], "vport": 80}
                    kind = "one"
                elif owners:
                    want = {"match": "ambiguous", "service": None,
                            "vip": None, "vport": None}
                    kind = "both"
                else:
                    want = {"match": "unmatched", "service": None,
                            "vip": None, "vport": None}
                    kind = "none"
                assert t["nat_reply"] == want, (cl, be, x, y, t)
                assert t["verdict"] == ("drop" if kind == "both" else
                                        "forward"), t
                assert t.get("drop_reason") == (
                    "nat_ambiguous" if kind == "both" else None), t
                seen.add(kind)
        assert seen == {"one", "both", "none"}, seen
    finally:
        c.call("lb_service_delete", {"name": "tnx"})
        c.call("lb_service_delete", {"name": "tny"})


# --------------------------------------------------------------------------
# services

SCRATCH = {"name": "scratch", "vip": "192.0.2.50", "port": 8080,
           "proto": "tcp", "scheduler": "wrr", "forward": "nat",
           "table_size": 1021,
           "backends": [{"addr": "10.5.0.1", "port": 80, "weight": 3},
                        {"addr": "10.5.0.2", "state": "drain"}]}


def test_service_add_list_delete(c):
    v0 = c.call("stats_get")["lb"]["version"]
    assert c.call("lb_service_add", SCRATCH) == {"name": "scratch"}
    try:
        assert_services(c, SERVICES + [SCRATCH])
        lst = listed(c)["scratch"]
        assert all(b[k] == 0 for b in lst["backends"] for k in COUNTERS), lst
        assert lst["flows"] == 0, lst
        assert c.call("stats_get")["lb"]["version"] > v0
        t = trace(c, ("198.51.100.9", "192.0.2.50", 1, 8080, "tcp"))
        assert t["service"] == "scratch", t
        # a second service on the same VIP, another port; an IPv6 one
        more = [{"name": "scratch-udp", "vip": "192.0.2.50", "port": 8080,
                 "proto": "udp", "forward": "nat", "backends": []},
                {"name": "scratch6", "vip": "2001:db8:50::1", "port": 80,
                 "proto": "tcp", "scheduler": "lc",
                 "backends": [{"addr": "2001:db8:5::1", "weight": 65535}]},
                {"name": "scratch-dsr", "vip": "192.0.2.51", "port": 80,
                 "proto": "tcp", "forward": "dsr",
                 "backends": [{"addr": "10.5.1.1",
                               "mac": "02:00:00:00:05:01"}]}]
        for s in more:
            assert c.call("lb_service_add", s) == {"name": s["name"]}
        assert_services(c, SERVICES + [SCRATCH] + more)
        for s in more:
            assert c.call("lb_service_delete", {"name": s["name"]}) is True
        t = trace(c, ("198.51.100.9", "192.0.2.50", 1, 8080, "udp"))
        assert t["service"] is None, t
    finally:
        assert c.call("lb_service_delete", {"name": "scratch"}) is True
    assert_services(c, SERVICES)
    t = trace(c, ("198.51.100.9", "192.0.2.50", 1, 8080, "tcp"))
    assert t["service"] is None and t["backend"] is None, t
    # the name is free again, counters start from zero
    assert c.call("lb_service_add", SCRATCH) == {"name": "scratch"}
    assert c.call("lb_service_delete", {"name": "scratch"}) is True


def test_service_add_duplicates_exist(c):
    # the same name, whatever else
    msg = err(c.call_raw("lb_service_add", dict(SCRATCH, name="web")), -32000)
    assert "web" in msg, msg
    # the same (vip, port, proto) under another name
    msg = err(c.call_raw("lb_service_add",
                         {"name": "web-again", "vip": WEB["vip"], "port": 80,
                          "proto": "tcp"}), -32000)
    assert "web" in msg, msg
    msg = err(c.call_raw("lb_service_add",
                         {"name": "web6-again", "vip": "2001:db8:10:0::10",
                          "port": 443, "proto": "tcp"}), -32000)
    assert "web6" in msg, msg


def test_service_delete_errors(c):
    msg = err(c.call_raw("lb_service_delete", {"name": "nope"}), -32001)
    assert "nope" in msg, msg
    for params, field in (({}, "params.name"), ({"name": 5}, "params.name"),
                          ({"name": "web", "force": True}, "params.force"),
                          (["web"], "params")):
        msg = err(c.call_raw("lb_service_delete", params), -32602)
        assert msg.startswith(field), (params, msg)
    msg = err(c.call_raw("lb_service_list", {"name": "web"}), -32602)
    assert msg.startswith("params"), msg


def _svc(**kw):
    s = copy.deepcopy(SCRATCH)
    for k, v in kw.items():
        if v is KeyError:
            s.pop(k, None)
        else:
            s[k] = v
    return s


def _be(i, **kw):
    s = copy.deepcopy(SCRATCH)
    b = s["backends"][i]
    for k, v in kw.items():
        if v is KeyError:
            b.pop(k, None)
        else:
            b[k] = v
    return s


BAD_SERVICES = [
    ("missing_name", _svc(name=KeyError), "params.name"),
    ("name_not_string", _svc(name=5), "params.name"),
    ("empty_name", _svc(name=""), "params.name"),
    ("missing_vip", _svc(vip=KeyError), "params.vip"),
    ("vip_not_string", _svc(vip=3221225994), "params.vip"),
    ("vip_prefix", _svc(vip="192.0.2.0/24"), "params.vip"),
    ("bad_vip", _svc(vip="192.0.2.256"), "params.vip"),
    ("missing_port", _svc(port=KeyError), "params.port"),
    ("port_zero", _svc(port=0), "params.port"),
    ("port_too_big", _svc(port=65536), "params.port"),
    ("port_word", _svc(port="http"), "params.port"),
    ("missing_proto", _svc(proto=KeyError), "params.proto"),
    ("proto_icmp", _svc(proto="icmp"), "params.proto"),
    ("proto_any", _svc(proto="any"), "params.proto"),
    ("bad_scheduler", _svc(scheduler="random"), "params.scheduler"),
    ("scheduler_number", _svc(scheduler=1), "params.scheduler"),
    ("bad_forward", _svc(forward="gre"), "params.forward"),
    ("table_not_prime", _svc(table_size=1024), "params.table_size"),
    ("table_too_small", _svc(table_size=7), "params.table_size"),
    ("unknown_key", _svc(prio=1), "params.prio"),
    ("backends_object", _svc(backends={"addr": "10.5.0.1"}),
     "params.backends"),
    ("backend_not_object", _svc(backends=["10.5.0.1"]),
     "params.backends[0]"),
    ("backend_missing_addr", _be(0, addr=KeyError),
     "params.backends[0].addr"),
    ("backend_bad_addr", _be(1, addr="10.5.0.300"),
     "params.backends[1].addr"),
    ("backend_v6_for_v4", _be(1, addr="2001:db8:5::2"),
     "params.backends[1].addr"),
    ("backend_duplicate", _be(1, addr="10.5.0.1"),
     "params.backends[1].addr"),
    ("backend_bad_state", _be(1, state="sleeping"),
     "params.backends[1].state"),
    ("backend_state_bool", _be(1, state=True), "params.backends[1].state"),
    ("backend_weight_big", _be(0, weight=65536),
     "params.backends[0].weight"),
    ("backend_weight_negative", _be(0, weight=-1),
     "params.backends[0].weight"),
    ("backend_weight_string", _be(0, weight="3"),
     "params.backends[0].weight"),
    ("backend_weight_real", _be(0, weight=1.5),
     "params.backends[0].weight"),
    ("backend_bad_port", _be(0, port=70000), "params.backends[0].port"),
    ("backend_bad_mac", _be(0, mac="02:00:00:00:05"),
     "params.backends[0].mac"),
    ("backend_unknown_key", _be(0, id=1), "params.backends[0].id"),
    ("ipip_backend_port", _svc(forward="ipip", backends=[
        {"addr": "10.5.0.1", "port": 81}]), "params.backends[0].port"),
    ("dsr_without_mac", _svc(forward="dsr", backends=[
        {"addr": "10.5.0.1"}]), "params.backends[0].mac"),
    ("v6_service_v4_backend", _svc(vip="2001:db8:50::1", backends=[
        {"addr": "10.5.0.1"}]), "params.backends[0].addr"),
    # full NAT: a pool is needed (this daemon has none); PROXY protocol
    # only on TCP fnat services; families mix only with fnat
    ("fnat_without_pool", _svc(forward="fnat"), "params.forward"),
    ("proxy_protocol_on_nat", _svc(proxy_protocol="v1"),
     "params.proxy_protocol"),
    ("proxy_protocol_unknown", _svc(proxy_protocol="v3"),
     "params.proxy_protocol"),
    ("nat_v4_service_v6_backend", _be(0, addr="2001:db8:5::1"),
     "params.backends[0].addr"),
    # one address, shared: a VIP cannot be lb.local_addr
    ("vip_is_local_addr", _svc(vip=LOCAL4), "params.vip"),
    ("vip_is_local_addr6", _svc(vip=LOCAL6, backends=[
        {"addr": "2001:db8:5::1"}]), "params.vip"),
]


@pytest.mark.parametrize("svc,field", [(s, f) for _, s, f in BAD_SERVICES],
                         ids=[n for n, _, _ in BAD_SERVICES])
def test_service_add_invalid_names_param(c, svc, field):
    msg = err(c.call_raw("lb_service_add", svc), -32602)
    assert msg.startswith(field), "message %r does not start with %r" % (
        msg, field)
    assert "scratch" not in listed(c)


def test_service_add_params_not_an_object(c):
    for p in ([SCRATCH], None, []):
        msg = err(c.call_raw("lb_service_add", p), -32602)
        assert msg.startswith("params"), msg


def test_ipip_needs_local_addr(daemon_factory, traffic):
    """forward ipip (the default) needs lb.local_addr (IPv4 VIP) or
    lb.local_addr6 (IPv6 VIP): refused with params.forward otherwise."""
    _, path = traffic
    d2 = daemon_factory({"pipeline": {"mode": "rtc"},
                         "lb": {"local_addr": LOCAL4}}, path, name="nolocal6")
    d2.wait_replay_done(len(all_flows()))
    with d2.client() as c2:
        assert c2.call("lb_service_list") == []
        for s in ({"name": "v6", "vip": "2001:db8::10", "port": 80,
                   "proto": "tcp"},
                  {"name": "v6", "vip": "2001:db8::10", "port": 80,
                   "proto": "tcp", "forward": "ipip"}):
            msg = err(c2.call_raw("lb_service_add", s), -32602)
            assert msg.startswith("params.forward"), msg
            assert "local_addr6" in msg, msg
        # nat needs no outer source
        assert c2.call("lb_service_add", {
            "name": "v6", "vip": "2001:db8::10", "port": 80, "proto": "tcp",
            "forward": "nat"}) == {"name": "v6"}
        assert c2.call("lb_service_add", {
            "name": "v4", "vip": "192.0.2.10", "port": 80,
            "proto": "tcp"}) == {"name": "v4"}
        assert sorted(s["name"] for s in c2.call("lb_service_list")) == \
            ["v4", "v6"]
    d3 = daemon_factory({"pipeline": {"mode": "rtc"}}, path, name="nolb")
    d3.wait_replay_done(len(all_flows()))
    with d3.client() as c3:
        msg = err(c3.call_raw("lb_service_add", {
            "name": "v4", "vip": "192.0.2.10", "port": 80,
            "proto": "tcp"}), -32602)
        assert msg.startswith("params.forward") and "local_addr" in msg, msg
        assert c3.call("stats_get")["lb"]["services"] == 0
        # without an lb section the LB runs all the same
        assert c3.call("lb_service_add", {
            "name": "v4", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
            "forward": "nat", "backends": [{"addr": "10.1.0.1"}]}) == \
            {"name": "v4"}
        t = c3.call("trace_packet", tparams(web_flows()[0]))
        assert (t["service"], t["backend"]) == ("v4", "10.1.0.1"), t
        lb = c3.call("config_get").get("lb", {})
        assert [s["name"] for s in lb.get("services", [])] == ["v4"], lb


def test_service_add_vip_on_a_ports_address_refused(daemon_factory,
                                                    traffic):
    """One address, shared: lb.local_addr may be a port's own address, a
    VIP may not (docs/configuration.md): lb_service_add refuses it naming
    params.vip and the port's address, as the loader does."""
    _, path = traffic
    d2 = daemon_factory({
        "ports": [{"name": "replay0", "devargs": "net_null0",
                   "addr": ["198.51.100.5/24"],
                   "gateway_mac": "02:00:00:00:99:01"}],
        "pipeline": {"mode": "rtc"},
        "lb": {"local_addr": LOCAL4}}, path, name="sharedvip")
    d2.wait_replay_done(len(all_flows()))
    with d2.client() as c2:
        msg = err(c2.call_raw("lb_service_add", _svc(vip="198.51.100.5")),
                  -32602)
        assert msg.startswith("params.vip") and \
            "$.ports[0].addr[0]" in msg, msg
        assert c2.call("lb_service_list") == []
        assert c2.call("lb_service_add", _svc()) == {"name": "scratch"}


def test_fnat_pool_checks_and_proxy_protocol_over_rpc(daemon_factory,
                                                     traffic):
    """lb_service_add and lb_backend_add check an fnat service against the
    running lb.fnat as the loader does: a pool address of each backend's
    family (IPv4 only here), no VIP on a pool address; lb_service_list
    and config_get show "proxy_protocol" and the pool as written."""
    _, path = traffic
    fnat = {"addrs": ["198.51.100.50"], "ports": "20000-29999",
            "time_wait_s": 30}
    d2 = daemon_factory({"pipeline": {"mode": "rtc"},
                         "lb": {"fnat": fnat}}, path, name="fnatrpc")
    d2.wait_replay_done(len(all_flows()))
    full = {"name": "full", "vip": "192.0.2.60", "port": 443,
            "proto": "tcp", "forward": "fnat", "proxy_protocol": "v2",
            "backends": [{"addr": "10.5.0.1"}]}
    with d2.client() as c2:
        msg = err(c2.call_raw("lb_service_add", dict(
            full, backends=[{"addr": "2001:db8:5::1"}])), -32602)
        assert msg.startswith("params.backends[0].addr") and \
            "IPv6 address in lb.fnat.addrs" in msg, msg
        msg = err(c2.call_raw("lb_service_add", dict(
            full, vip="198.51.100.50")), -32602)
        assert msg.startswith("params.vip") and \
            "$.lb.fnat.addrs[0]" in msg, msg
        msg = err(c2.call_raw("lb_service_add", dict(
            full, proto="udp")), -32602)
        assert msg.startswith("params.proxy_protocol"), msg
        assert c2.call("lb_service_list") == []

        assert c2.call("lb_service_add", full) == {"name": "full"}
        msg = err(c2.call_raw("lb_backend_add", {
            "service": "full", "addr": "2001:db8:5::2"}), -32602)
        assert msg.startswith("params.addr") and \
            "IPv6 address in lb.fnat.addrs" in msg, msg
        assert c2.call("lb_backend_add", {
            "service": "full", "addr": "10.5.0.2"}) is True
        (svc,) = c2.call("lb_service_list")
        assert svc["proxy_protocol"] == "v2" and svc["forward"] == "fnat", \
            svc
        assert [b["addr"] for b in svc["backends"]] == [
            "10.5.0.1", "10.5.0.2"], svc
        lb = c2.call("config_get")["lb"]
        assert lb["fnat"] == fnat, lb
        (saved,) = lb["services"]
        assert saved["proxy_protocol"] == "v2", saved
        assert c2.call("lb_service_delete", {"name": "full"}) is True


# --------------------------------------------------------------------------
# backends

def test_backend_add_set_delete(c):
    base = copy.deepcopy(SCRATCH)
    assert c.call("lb_service_add", base) == {"name": "scratch"}
    try:
        want = copy.deepcopy(base)
        assert c.call("lb_backend_add", {"service": "scratch",
                                         "addr": "10.5.0.3"}) is True
        want["backends"].append({"addr": "10.5.0.3"})
        assert_services(c, SERVICES + [want])
        assert c.call("lb_backend_add", {
            "service": "scratch", "addr": "10.5.0.4", "port": 8443,
            "weight": 7, "state": "down",
            "mac": "02:00:00:00:05:04"}) is True
        want["backends"].append({"addr": "10.5.0.4", "port": 8443,
                                 "weight": 7, "state": "down",
                                 "mac": "02:00:00:00:05:04"})
        assert_services(c, SERVICES + [want])
        b4 = [b for b in listed(c)["scratch"]["backends"]
              if b["addr"] == "10.5.0.4"][0]
        assert all(b4[k] == 0 for k in COUNTERS), b4
        # set: weight, state, both; each change live at once
        for params, change in (
                ({"weight": 3}, {"weight": 3}),
                ({"state": "up"}, {"state": "up"}),
                ({"state": "drain", "weight": 0}, {"state": "drain",
                                                   "weight": 0}),
                ({"weight": 65535}, {"weight": 65535}),
                ({"state": "down"}, {"state": "down"}),
                ({"state": "up", "weight": 1}, {"state": "up", "weight": 1})):
            p = dict(params, service="scratch", addr="10.5.0.4")
            assert c.call("lb_backend_set", p) is True, p
            want["backends"][3].update(change)
            assert_services(c, SERVICES + [want])
        # the same value again is fine
        assert c.call("lb_backend_set", {"service": "scratch",
                                         "addr": "10.5.0.4",
                                         "weight": 1}) is True
        # delete the first one, the one in the middle, re-add
        assert c.call("lb_backend_delete", {"service": "scratch",
                                            "addr": "10.5.0.1"}) is True
        del want["backends"][0]
        assert_services(c, SERVICES + [want])
        assert c.call("lb_backend_delete", {"service": "scratch",
                                            "addr": "10.5.0.3"}) is True
        del want["backends"][1]
        assert_services(c, SERVICES + [want])
        assert c.call("lb_backend_add", {"service": "scratch",
                                         "addr": "10.5.0.1",
                                         "weight": 2}) is True
        want["backends"].append({"addr": "10.5.0.1", "weight": 2})
        assert_services(c, SERVICES + [want])
        # down to no backend at all, and back
        for b in list(want["backends"]):
            assert c.call("lb_backend_delete", {"service": "scratch",
                                                "addr": b["addr"]}) is True
        want["backends"] = []
        assert_services(c, SERVICES + [want])
        t = trace(c, ("198.51.100.9", "192.0.2.50", 1, 8080, "tcp"))
        assert t["verdict"] == "drop" and t["lb_note"] == "no_backend", t
        assert c.call("lb_backend_add", {"service": "scratch",
                                         "addr": "10.5.0.9"}) is True
        want["backends"] = [{"addr": "10.5.0.9"}]
        assert_services(c, SERVICES + [want])
    finally:
        c.call("lb_service_delete", {"name": "scratch"})


def test_backend_ipv6(c):
    assert c.call("lb_backend_add", {"service": "web6",
                                     "addr": "2001:db8:1::3"}) is True
    try:
        want = copy.deepcopy(WEB6)
        want["backends"].append({"addr": "2001:db8:1::3"})
        assert_services(c, [WEB, DNS, want])
        # addresses are compared as addresses, not as text
        assert c.call("lb_backend_set", {"service": "web6",
                                         "addr": "2001:DB8:1:0::3",
                                         "weight": 4}) is True
        want["backends"][2]["weight"] = 4
        assert_services(c, [WEB, DNS, want])
        msg = err(c.call_raw("lb_backend_add", {
            "service": "web6", "addr": "2001:db8:1:0:0::3"}), -32000)
        assert "2001:db8:1::3" in msg, msg
    finally:
        assert c.call("lb_backend_delete", {"service": "web6",
                                            "addr": "2001:db8:1::3"}) is True


def test_backend_not_found_and_exists(c):
    for method, extra in (("lb_backend_add", {}),
                          ("lb_backend_delete", {}),
                          ("lb_backend_set", {"weight": 1})):
        msg = err(c.call_raw(method, dict(extra, service="nope",
                                          addr="10.1.0.1")), -32001)
        assert "nope" in msg, (method, msg)
    for method, extra in (("lb_backend_delete", {}),
                          ("lb_backend_set", {"state": "down"})):
        msg = err(c.call_raw(method, dict(extra, service="web",
                                          addr="10.1.0.9")), -32001)
        assert "10.1.0.9" in msg, (method, msg)
    msg = err(c.call_raw("lb_backend_add", {"service": "web",
                                            "addr": "10.1.0.2"}), -32000)
    assert "10.1.0.2" in msg, msg


BAD_BACKEND_OPS = [
    # (method, params, message prefix)
    ("lb_backend_add", {"addr": "10.1.0.9"}, "params.service"),
    ("lb_backend_add", {"service": 1, "addr": "10.1.0.9"}, "params.service"),
    ("lb_backend_add", {"service": "web"}, "params.addr"),
    ("lb_backend_add", {"service": "web", "addr": 167837705}, "params.addr"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.256"},
     "params.addr"),
    ("lb_backend_add", {"service": "web", "addr": "2001:db8:1::9"},
     "params.addr"),
    ("lb_backend_add", {"service": "web6", "addr": "10.1.0.9"},
     "params.addr"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "weight": 65536}, "params.weight"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "weight": -1}, "params.weight"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "weight": "2"}, "params.weight"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "state": "off"}, "params.state"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "port": 8080}, "params.port"),
    ("lb_backend_add", {"service": "dns", "addr": "10.2.0.9",
                        "port": -5}, "params.port"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "mac": "zz:00:00:00:00:01"}, "params.mac"),
    ("lb_backend_add", {"service": "web", "addr": "10.1.0.9",
                        "vip": "192.0.2.10"}, "params.vip"),
    ("lb_backend_delete", {"service": "web"}, "params.addr"),
    ("lb_backend_delete", {"addr": "10.1.0.1"}, "params.service"),
    ("lb_backend_delete", {"service": "web", "addr": "10.1.0.1/32"},
     "params.addr"),
    ("lb_backend_delete", {"service": "web", "addr": "10.1.0.1",
                           "weight": 1}, "params.weight"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1"}, "params"),
    ("lb_backend_set", {"service": "web", "weight": 2}, "params.addr"),
    ("lb_backend_set", {"addr": "10.1.0.1", "weight": 2}, "params.service"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "weight": 65536}, "params.weight"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "weight": -1}, "params.weight"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "weight": "2"}, "params.weight"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "weight": 1.5}, "params.weight"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "state": "sleep"}, "params.state"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "state": 1}, "params.state"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "state": "UP"}, "params.state"),
    ("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                        "weight": 2, "mac": "02:00:00:00:00:01"},
     "params.mac"),
    ("lb_backend_set", ["web", "10.1.0.1", 2], "params"),
]


@pytest.mark.parametrize("method,params,field", BAD_BACKEND_OPS,
                         ids=["%s-%d" % (m[11:], i) for i, (m, _, _)
                              in enumerate(BAD_BACKEND_OPS)])
def test_backend_invalid_params(c, method, params, field):
    msg = err(c.call_raw(method, params), -32602)
    assert msg.startswith(field), "message %r does not start with %r" % (
        msg, field)


def test_backend_add_service_full(c):
    """A service holds table_size - 1 backends at most (4096 at most):
    one more is refused with -32602, and the service stays usable."""
    svc = {"name": "full", "vip": "192.0.2.70", "port": 80, "proto": "tcp",
           "table_size": 1021}
    assert c.call("lb_service_add", svc) == {"name": "full"}
    try:
        n = 0
        while True:
            r = c.call_raw("lb_backend_add", {
                "service": "full", "addr": "10.7.%d.%d" % (n // 250,
                                                          1 + n % 250)})
            if "error" in r:
                break
            assert r["result"] is True, r
            n += 1
            assert n <= 1020, "more than table_size - 1 backends taken"
        assert n == 1020, n
        msg = err(r, -32602)
        assert msg.startswith("params") and "full" in msg, msg
        assert len(listed(c)["full"]["backends"]) == 1020
        t = trace(c, ("198.51.100.1", "192.0.2.70", 1, 80, "tcp"))
        assert t["verdict"] == "forward" and t["backend"], t
    finally:
        assert c.call("lb_service_delete", {"name": "full"}) is True


def test_backend_dsr_needs_mac(c):
    svc = {"name": "dsr", "vip": "192.0.2.60", "port": 80, "proto": "tcp",
           "forward": "dsr", "backends": [
               {"addr": "10.6.0.1", "mac": "02:00:00:00:06:01"}]}
    assert c.call("lb_service_add", svc) == {"name": "dsr"}
    try:
        msg = err(c.call_raw("lb_backend_add", {"service": "dsr",
                                                "addr": "10.6.0.2"}), -32602)
        assert msg.startswith("params.mac"), msg
        assert c.call("lb_backend_add", {"service": "dsr", "addr": "10.6.0.2",
                                         "mac": "02:00:00:00:06:02"}) is True
        lst = listed(c)["dsr"]
        macs = {b["addr"]: b.get("mac") for b in lst["backends"]}
        assert macs == {"10.6.0.1": "02:00:00:00:06:01",
                        "10.6.0.2": "02:00:00:00:06:02"}, lst
    finally:
        c.call("lb_service_delete", {"name": "dsr"})


def test_config_get_round_trips_after_changes(c, daemon_factory, traffic,
                                              tmp_path):
    """After runtime changes config_get's document, loaded by a new
    daemon, gives the same services."""
    assert c.call("lb_service_add", SCRATCH) == {"name": "scratch"}
    try:
        c.call("lb_backend_add", {"service": "scratch", "addr": "10.5.0.7",
                                  "weight": 9})
        c.call("lb_backend_set", {"service": "scratch", "addr": "10.5.0.1",
                                  "state": "down"})
        cfg = c.call("config_get")
        want = {s["name"]: strip_counters(s) for s in
                c.call("lb_service_list")}
    finally:
        c.call("lb_service_delete", {"name": "scratch"})
    path = str(tmp_path / "lb-roundtrip.json")
    pautil.write_json(path, cfg)
    d2 = daemon_factory(path, traffic[1], name="lb-roundtrip")
    with d2.client() as c2:
        got = {s["name"]: strip_counters(s) for s in
               c2.call("lb_service_list")}
        assert got == want
        cfg2 = c2.call("config_get")
    assert cfg2["lb"] == cfg["lb"]


@pytest.mark.parametrize("pipeline", [
    dict(pautil.PIPE4),
    {"mode": "pipeline",
     "lcores": {"rx": [1], "classify": [2], "lb": [3, 4], "tx": [5]}},
    dict(pautil.RTC1),
], ids=["pipeline4", "pipeline_lb2", "rtc1"])
def test_trace_finds_flows_in_every_layout(daemon_factory, traffic, pipeline):
    """trace_packet finds each flow in the table of the lcore that runs
    its lb stage, whichever layout."""
    d2 = start_lb_daemon(daemon_factory, traffic, "lb-layout",
                         config=dict(CONF, pipeline=pipeline))
    with d2.client(timeout=30) as c:
        _assert_keep(c, sorted(d2.seen), d2.seen, "layout %s" % pipeline)
        st = c.call("stats_get")["lb"]
        assert st["flows"] == len(d2.seen), st


# --------------------------------------------------------------------------
# stickiness, drain, down: a daemon of its own

def _traces(c, flows):
    return {f: trace(c, f) for f in flows}


def test_sticky_drain_down(daemon_factory, traffic):
    d2 = start_lb_daemon(daemon_factory, traffic, "lb-sticky")
    c = d2.client(timeout=30)
    try:
        _sticky_drain_down(c, d2.seen)
    finally:
        c.close()


def _assert_keep(c, flows, seen, what):
    bad = []
    for f in flows:
        t = trace(c, f)
        if (t["backend"], t["existing_flow"], t["verdict"]) != \
                (seen[f], True, "forward"):
            bad.append("%s: %s (replay: %s)" % (f, t, seen[f]))
    assert not bad, "%s: %d of %d flows moved:\n%s" % (
        what, len(bad), len(flows), "\n".join(bad[:10]))


def _backend_row(c, service, addr):
    for b in listed(c)[service]["backends"]:
        if b["addr"] == addr:
            return b
    raise AssertionError("%s has no backend %s" % (service, addr))


def _sticky_drain_down(c, seen):
    web = [f for f in seen if f[1] == WEB["vip"]]
    dns = [f for f in seen if f[1] == DNS["vip"]]
    web6 = [f for f in seen if f[1] == WEB6["vip"]]
    per = by_backend(seen, WEB["vip"])
    probe = new_tuples(WEB["vip"], 80, "tcp", 600)
    st0 = c.call("stats_get")["lb"]
    _assert_keep(c, web + dns + web6, seen, "at start")

    # 1. more backends and other weights: every flow keeps its backend,
    #    new flows see the new Maglev table
    assert c.call("lb_backend_add", {"service": "web", "addr": "10.1.0.4",
                                     "weight": 3}) is True
    assert c.call("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                                     "weight": 5}) is True
    assert c.call("lb_backend_set", {"service": "web", "addr": "10.1.0.2",
                                     "weight": 0}) is True
    assert c.call("lb_backend_set", {"service": "dns", "addr": "10.2.0.1",
                                     "weight": 9}) is True
    assert c.call("lb_backend_add", {"service": "dns", "addr": "10.2.0.4",
                                     "port": 5353}) is True
    assert c.call("lb_backend_add", {"service": "web6",
                                     "addr": "2001:db8:1::3"}) is True
    _assert_keep(c, web + dns + web6, seen, "after adds and weights")
    news = {f: trace(c, f)["backend"] for f in probe}
    assert "10.1.0.4" in news.values(), "the added backend gets no flow"
    assert "10.1.0.2" not in news.values(), \
        "a backend of weight 0 got a new flow"
    st = c.call("stats_get")["lb"]
    assert st["version"] > st0["version"], (st0, st)
    assert st["flows"] == st0["flows"], (st0, st)
    assert st["flows_rescheduled"] == 0 and st["flows_backend_gone"] == 0, st
    assert c.call("lb_backend_set", {"service": "web", "addr": "10.1.0.2",
                                     "weight": 2}) is True

    # 2. drain: its flows stay, it gets no new flow, list counts them
    drained = "10.1.0.3"
    mine = per[drained]
    assert c.call("lb_backend_set", {"service": "web", "addr": drained,
                                     "state": "drain"}) is True
    _assert_keep(c, web + dns + web6, seen, "while %s drains" % drained)
    row = _backend_row(c, "web", drained)
    assert row["state"] == "drain" and row["flows"] == len(mine), row
    assert row["packets"] == len(mine), row
    for f in probe + new_tuples(WEB["vip"], 80, "tcp", 600, base="100.65"):
        t = trace(c, f)
        assert t["existing_flow"] is False, t
        assert t["backend"] not in (drained, None), (f, t)
    # draining a dns (rr) backend keeps its flows too
    assert c.call("lb_backend_set", {"service": "dns", "addr": "10.2.0.2",
                                     "state": "drain"}) is True
    _assert_keep(c, dns, seen, "while 10.2.0.2 drains")

    # 3. down: its flows move to other backends at once (trace), the
    #    others stay; the flow table forgets them
    assert c.call("lb_backend_set", {"service": "web", "addr": drained,
                                     "state": "down"}) is True
    moved = _traces(c, mine)
    for f, t in moved.items():
        assert t["backend"] not in (drained, None), (f, t)
        assert t["existing_flow"] is False and t["verdict"] == "forward", t
    _assert_keep(c, [f for f in web if seen[f] != drained] + dns + web6,
                 seen, "after %s went down" % drained)
    deadline = time.monotonic() + 20
    while _backend_row(c, "web", drained)["flows"] != 0:
        assert time.monotonic() < deadline, \
            "flows of a down backend still counted: %s" % \
            _backend_row(c, "web", drained)
        time.sleep(0.1)
    row = _backend_row(c, "web", drained)
    assert row["state"] == "down" and row["packets"] == len(mine), row
    st = c.call("stats_get")["lb"]
    assert st["flows"] == st0["flows"] - len(mine), (st0, st)
    assert st["flows_backend_gone"] + st["flows_rescheduled"] == len(mine), st
    # up again: a usable backend for new flows once more
    assert c.call("lb_backend_set", {"service": "web", "addr": drained,
                                     "state": "up"}) is True
    assert drained in {trace(c, f)["backend"] for f in probe}

    # 4. delete a backend with flows: they move, the rest stay
    gone = "10.1.0.1"
    assert c.call("lb_backend_delete", {"service": "web",
                                        "addr": gone}) is True
    for f in per[gone]:
        t = trace(c, f)
        assert t["backend"] not in (gone, None) and \
            t["existing_flow"] is False, (f, t)
    _assert_keep(c, per["10.1.0.2"] + dns + web6, seen,
                 "after %s was deleted" % gone)
    # added again, it is a new backend: no flows, counters from zero
    assert c.call("lb_backend_add", {"service": "web", "addr": gone}) is True
    row = _backend_row(c, "web", gone)
    assert all(row[k] == 0 for k in COUNTERS), row
    for f in per[gone]:
        assert trace(c, f)["existing_flow"] is False
    assert c.call("lb_backend_delete", {"service": "web",
                                        "addr": gone}) is True
    assert gone not in {b["addr"] for b in listed(c)["web"]["backends"]}
    assert gone not in {b["addr"] for b in
                        config_services(c)["web"]["backends"]}

    # 5. every backend down: the VIP drops, nothing is chosen
    for b in listed(c)["web"]["backends"]:
        assert c.call("lb_backend_set", {"service": "web", "addr": b["addr"],
                                         "state": "down"}) is True
    for f in web[:20] + probe[:20]:
        t = trace(c, f)
        assert (t["verdict"], t["backend"], t["lb_note"]) == \
            ("drop", None, "no_backend"), t
        assert t["service"] == "web", t
    # other services are untouched
    _assert_keep(c, dns + web6, seen, "with web all down")

    # 6. deleting the service forgets its flows
    assert c.call("lb_service_delete", {"name": "web"}) is True
    t = trace(c, web[0])
    assert t["service"] is None and t["backend"] is None, t
    deadline = time.monotonic() + 20
    while c.call("stats_get")["lb"]["flows"] != N_DNS + N_WEB6:
        assert time.monotonic() < deadline, c.call("stats_get")["lb"]
        time.sleep(0.1)
    _assert_keep(c, dns + web6, seen, "after web was deleted")
    # a new service of the same name and VIP starts without flows
    assert c.call("lb_service_add", WEB) == {"name": "web"}
    for f in web:
        t = trace(c, f)
        assert t["service"] == "web" and t["existing_flow"] is False, t
    assert listed(c)["web"]["flows"] == 0
