# SPDX-License-Identifier: BSD-3-Clause
"""Flood protection in lab replay mode (docs/configuration.md "protect",
docs/performance.md "SYN flood"): a scaled-down spoofed SYN flood (20,000
sources) mixed with 200 legitimate TCP connections. Every legitimate
packet is delivered, to the backend it gets without the flood (exact);
with protect.syn_defer the flood takes no flow entry at all (occupancy
exactly the legitimate flows), without it a small flow table fills and
the Maglev fallback keeps the legitimate flows on their backends. Also:
src_limit and max_flows drops counted, lb_service_add with max_flows over
RPC. perf/bench_flood.py is the full-size version (1M sources, 10k
flows)."""

import random
import struct

import pautil
from pautil import check_summary, read_pcap, write_pcap

VIP = "192.0.2.10"
LOCAL4 = "192.0.2.254"
BACKENDS = ["10.1.0.%d" % (k + 1) for k in range(8)]
N_FLOOD = 20000
N_LEGIT = 200
SYN, ACK, FIN = 0x02, 0x10, 0x01
SEED = 1717
# one worker: the limits are shared out among lb lcores, and these tests
# count them exactly
ONE_WORKER = {"mode": "rtc", "lcores": {"worker": [1]}}


def conf(protect=None, flow_table=None, max_flows=None, proto="tcp"):
    svc = {"name": "web", "vip": VIP, "port": 80, "proto": proto,
           "forward": "ipip",
           "backends": [{"addr": a} for a in BACKENDS]}
    if max_flows is not None:
        svc["max_flows"] = max_flows
    # a small table: the default 1M entries take seconds to allocate
    c = {"pipeline": ONE_WORKER,
         "lb": {"local_addr": LOCAL4, "icmp_echo": False,
                "flow_table": flow_table or {"size": 32768},
                "services": [svc]}}
    if protect is not None:
        c["protect"] = protect
    return c


def legit_frames():
    """200 connections of 5 packets each (SYN, ACK, 2 data, FIN+ACK),
    interleaved, each packet marked with its index."""
    rng = random.Random(SEED)
    flows = [("198.18.%d.%d" % (i // 200, 1 + i % 200),
              rng.randint(1024, 65535)) for i in range(N_LEGIT)]
    out, idx = [], 0
    for flags in (SYN, ACK, ACK, ACK, FIN | ACK):
        for src, sport in flows:
            out.append((idx, pautil.l4_frame(src, VIP, sport, 80, idx=idx,
                                              tcp_flags=flags)))
            idx += 1
    return out


def flood_frames():
    """20,000 SYNs from distinct random sources (100.64.0.0/10), no
    marker (bare 60-byte frames packed by hand: fast)."""
    rng = random.Random(SEED + 1)
    eth = pautil.LB_APPLIANCE_MAC + pautil.LB_CLIENT_MAC + b"\x08\x00"
    dst = bytes(int(x) for x in VIP.split("."))
    seen, out = set(), []
    while len(out) < N_FLOOD:
        s = 0x64400000 | rng.getrandbits(22)
        if s in seen:
            continue
        seen.add(s)
        tcp = struct.pack("!HHIIBBHHH", rng.randint(1024, 65535), 80,
                          rng.getrandbits(32), 0, 5 << 4, SYN, 8192, 0, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 0, 0, 64, 6, 0,
                         struct.pack("!I", s), dst)
        ip = ip[:10] + struct.pack("!H", pautil.gen_sample.csum16(ip)) + \
            ip[12:]
        out.append(eth + ip + tcp + b"\0" * 6)
    return out


def mix(legit, flood):
    """The flood with the legitimate packets spread through it, in
    their order."""
    step = len(flood) // len(legit)
    out, k = [], 0
    for i, (_, fr) in enumerate(legit):
        out.extend(flood[k:k + step])
        k += step
        out.append(fr)
    out.extend(flood[k:])
    return out


def backends_of(pcap):
    """{marker index: outer destination} of the ipip frames of a pcap
    that carry a marker."""
    got = {}
    for fr in read_pcap(pcap):
        idx = pautil.gen_sample.find_marker(fr)
        if idx is None:
            continue
        p = pautil.parse_ip(fr)
        assert p["proto"] == 4, "not ipip: %r" % p
        got[idx] = p["dst"]
    return got


def test_spoofed_syn_flood_legit_flows_keep_their_backend(tmp_path,
                                                          run_replay):
    legit, flood = legit_frames(), flood_frames()
    clean = str(tmp_path / "clean.pcap")
    mixed = str(tmp_path / "mixed.pcap")
    write_pcap(clean, [fr for _, fr in legit])
    write_pcap(mixed, mix(legit, flood))
    n = len(legit) + len(flood)

    ref = run_replay(clean, conf())
    s = check_summary(ref, len(legit), {})
    # the flow index starts small (it grows with the flows)
    assert s["lb"]["flow_index_slots"] == 4096, s["lb"]
    want = backends_of(ref.out_pcap)
    assert len(want) == len(legit)

    # syn_defer: the flood's SYNs take no entry
    res = run_replay(mixed, conf(protect={"syn_timeout_s": 5,
                                          "syn_defer": True}))
    s = check_summary(res, n, {})
    assert backends_of(res.out_pcap) == want
    assert s["lb"]["flows_peak"] == N_LEGIT, s["lb"]
    assert s["lb"]["syn_stateless"] == N_FLOOD + N_LEGIT, s["lb"]

    # no syn_defer, a table of 4096: the flood fills it, the legitimate
    # flows that find it full still get their Maglev choice
    res = run_replay(mixed, conf(protect={"syn_timeout_s": 5},
                                 flow_table={"size": 4096}))
    s = check_summary(res, n, {})
    assert backends_of(res.out_pcap) == want
    lb = s["lb"]
    assert lb["flows_peak"] <= lb["flow_table_capacity"], lb
    # the index grew with the flood's flows to its whole size: the
    # power of two above 4/3 of the 4097 entries
    assert lb["flow_index_slots"] == 8192, lb
    assert lb["flow_table_full"] > 0, lb


def test_src_limit_and_max_flows_drops_are_counted(tmp_path, run_replay):
    """One replay: a source opens 50 flows to web (a burst of 10 passes;
    rate 1/s: a token or two more if the replay is slow), 60 sources of
    60 prefixes open one flow each to lim (max_flows 20: 40 dropped,
    exactly; none src-limited)."""
    frames = [pautil.l4_frame("198.18.0.1", VIP, 2000 + i, 80, idx=i)
              for i in range(50)]
    frames += [pautil.l4_frame("198.19.%d.1" % i, VIP, 2000, 81,
                               idx=100 + i) for i in range(60)]
    p = str(tmp_path / "src.pcap")
    write_pcap(p, frames)
    c = conf(protect={"src_new_flows": {"rate": 1, "burst": 10,
                                         "prefix4": 24}})
    c["lb"]["services"].append({
        "name": "lim", "vip": VIP, "port": 81, "proto": "tcp",
        "max_flows": 20, "backends": [{"addr": a} for a in BACKENDS]})
    res = run_replay(p, c)
    s = check_summary(res, len(frames))
    d = s["drops"]
    assert 37 <= d["src_limit"] <= 40, s
    assert d["max_flows"] == 40, s
    assert s["dropped_packets"] == d["src_limit"] + 40, s
    assert s["lb"]["src_limited"] == d["src_limit"]
    assert s["lb"]["max_flows_dropped"] == 40
    assert s["lb"]["flows"] == 50 - d["src_limit"] + 20
    got = backends_of(res.out_pcap)
    assert sorted(i for i in got if i >= 100) == list(range(100, 120))


def test_lb_service_add_with_max_flows_over_rpc(tmp_path, daemon_factory):
    p = str(tmp_path / "one.pcap")
    write_pcap(p, [pautil.l4_frame("198.18.0.1", "192.0.2.99", 1, 80)])
    d = daemon_factory(conf(flow_table={"size": 8192}), p,
                       sock=pautil.unique("i17s", ".sock"))
    c = pautil.RpcClient(d.sock)
    svc = {"name": "lim", "vip": "192.0.2.11", "port": 80, "proto": "tcp",
           "max_flows": 100, "backends": [{"addr": "10.1.0.1"}]}
    assert c.call("lb_service_add", svc) == {"name": "lim"}
    lst = {x["name"]: x for x in c.call("lb_service_list")}
    assert lst["lim"]["max_flows"] == 100
    assert "max_flows" not in lst["web"]
    cfg = {x["name"]: x for x in c.call("config_get")["lb"]["services"]}
    assert cfg["lim"]["max_flows"] == 100
    for bad, why in ((0, "params.max_flows"), (8193, "params.max_flows"),
                     ("x", "params.max_flows")):
        svc2 = dict(svc, name="bad", vip="192.0.2.12", max_flows=bad)
        try:
            c.call("lb_service_add", svc2)
        except pautil.RpcError as e:
            assert e.err["code"] == -32602, e
            assert why in str(e), e
        else:
            raise AssertionError("max_flows %r accepted" % (bad,))
    st = c.call("stats_get")
    for k in ("flows_peak", "syn_stateless", "src_limited",
              "max_flows_dropped"):
        assert k in st["lb"], st["lb"]
    for k in ("src_limit", "max_flows"):
        assert k in st["drops"]
    c.close()
