# SPDX-License-Identifier: BSD-3-Clause
"""One lcore named for several pipeline stages (CONTRACT section 4): it
runs them in turn, with rings only where a packet changes lcore.

A replay in each layout forwards what the ACL permits, in order, and
drops the rest (mbufs_in_use 0 at the end); pipeline_get lists each
lcore's stages. A live daemon in the CONTRACT's example layout, and one
in the automatic plan for two lcores (rx+classify, lb+tx), forward on
veth pairs and stop cleanly. The model-checked replays in that layout
are pautil.PIPE2 in test_acl_replay.py and test_lb_replay.py."""

import pytest
from scapy.all import IP, UDP, Ether

from pautil import (PIPE2, check_summary, read_pcap, write_pcap)
import pautil

N_PKTS = 3000

# layout -> {lcore: stages pipeline_get lists}
LAYOUTS = {
    "contract": (PIPE2["lcores"],
                 {1: ["rx", "tx"], 2: ["classify", "lb"]}),
    "rx+classify,lb+tx": ({"rx": [1], "classify": [1], "lb": [2],
                           "tx": [2]},
                          {1: ["rx", "classify"], 2: ["lb", "tx"]}),
    "all-on-one": ({"rx": [1], "classify": [1], "lb": [1], "tx": [1]},
                   {1: ["rx", "classify", "lb", "tx"]}),
    # lcore 1's tx gets nothing: lb's lcore sends itself
    "tx-on-both": ({"rx": [1], "classify": [2], "lb": [2], "tx": [1, 2]},
                   {1: ["rx", "tx"], 2: ["classify", "lb", "tx"]}),
}


def frames():
    """UDP from 64 sources; dport 53 is dropped by the ACL."""
    out = []
    for i in range(N_PKTS):
        p = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
             IP(src="10.1.%d.%d" % (i % 4, i % 64 + 1), dst="10.9.0.1") /
             UDP(sport=1024 + i % 300, dport=53 if i % 5 == 0 else 80) /
             (b"i16l%06d" % i))
        out.append(bytes(p))
    return out


@pytest.fixture(scope="module")
def pcap(tmp_path_factory):
    pkts = frames()
    path = str(tmp_path_factory.mktemp("stage_lcores") / "in.pcap")
    write_pcap(path, pkts)
    return path, pkts


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layout_forwards_in_order_and_lists_stages(layout, pcap,
                                                  daemon_factory):
    path, pkts = pcap
    lcores, want_stages = LAYOUTS[layout]
    conf = {"pipeline": {"mode": "pipeline", "lcores": lcores,
                         "ring_size": 64, "burst": 16},
            "acl": {"default": "permit",
                    "rules": [{"id": 1, "proto": "udp", "dport": 53,
                               "action": "drop"}]}}
    d = daemon_factory(conf, path, name="i16l-" + layout.replace("+", "_").replace(",", "-"))
    d.wait_replay_done(len(pkts), timeout=120)
    pl = d.call("pipeline_get")
    st = d.call("stats_get")
    with d.client() as c:
        assert c.call("shutdown") is True
    rc = d.wait()
    assert rc == 0, d.describe()

    assert pl["mode"] == "pipeline"
    got = {lc["lcore"]: lc["stages"] for lc in pl["lcores"]}
    assert got == want_stages, pl
    for lc in pl["lcores"]:
        assert lc["role"] == "+".join(lc["stages"]), lc
    # per-stage counts add up over the lcores, whoever runs the stage
    n_drop = sum(1 for i in range(N_PKTS) if i % 5 == 0)
    per_stage = {}
    for s in st["lcores"].values():
        for k, v in s["stage_packets"].items():
            per_stage[k] = per_stage.get(k, 0) + v
    assert per_stage["rx"] == per_stage["classify"] == len(pkts), per_stage
    assert per_stage["lb"] == per_stage["tx"] == len(pkts) - n_drop, \
        per_stage

    res = pautil.Result(d.args, rc, d.stdout, d.stderr)
    check_summary(res, len(pkts), {"acl": n_drop})  # mbufs_in_use 0
    out = read_pcap(d.out_pcap)
    # one flow of rings from rx to tx: the input's order is kept
    assert out == [p for i, p in enumerate(pkts) if i % 5 != 0]


def test_contract_layout_live_forwards_and_stops(tmp_path):
    """A live daemon (veth pairs, net_af_packet) in the CONTRACT layout,
    napping when idle (adaptive): forwards, counts per lcore and stage,
    stops cleanly."""
    from test_idle import start
    from test_live_veth import VETHS, _exchange
    from netpair import veth_namespace

    with veth_namespace("i16l", VETHS, "stage lcores live test") as ns:
        d = start(ns, tmp_path, "i16l-live",
                  dict(PIPE2, idle={"mode": "adaptive"}), ())
        try:
            pl = d.call("pipeline_get")
            assert {lc["lcore"]: lc["stages"] for lc in pl["lcores"]} == \
                LAYOUTS["contract"][1], pl
            sent, got = _exchange(ns, "vB1", "vB2", 1, str(tmp_path),
                                  count=20)
            assert sorted(got) == sorted(sent), d.describe()
            st = d.call("stats_get")
            assert st["tx_packets"] >= len(sent), st
            assert st["lcores"]["1"]["stage_packets"]["tx"] >= len(sent), st
            assert st["lcores"]["2"]["stage_packets"]["lb"] >= len(sent), st
        finally:
            rc = d.stop(timeout=30)
        # a clean stop (live mode prints no summary: the replays above
        # check mbufs_in_use)
        assert rc == 0, d.describe()


def test_auto_plan_two_lcores_live_forwards_and_stops(tmp_path):
    """Pipeline mode without lcores, two offered (--lcores 0@0,1@0,2@1):
    the automatic plan runs rx+classify on one and lb+tx on the other,
    one ring between them; live on veth pairs it forwards, the
    per-lcore stage counters say who ran what, and it stops cleanly."""
    from test_idle import start
    from test_live_veth import VETHS, _exchange
    from netpair import veth_namespace

    with veth_namespace("i16a", VETHS, "stage lcores auto plan") as ns:
        d = start(ns, tmp_path, "i16a-live",
                  {"mode": "pipeline", "idle": {"mode": "adaptive"}},
                  ("--lcores", "0@0,1@0,2@1"))
        try:
            pl = d.call("pipeline_get")
            assert {lc["lcore"]: lc["stages"] for lc in pl["lcores"]} == \
                {1: ["rx", "classify"], 2: ["lb", "tx"]}, pl
            sent, got = _exchange(ns, "vB1", "vB2", 1, str(tmp_path),
                                  count=20)
            assert sorted(got) == sorted(sent), d.describe()
            st = d.call("stats_get")
            assert st["tx_packets"] >= len(sent), st
            assert st["lcores"]["1"]["stage_packets"]["classify"] >= \
                len(sent), st
            assert "tx" not in st["lcores"]["1"]["stage_packets"] or \
                st["lcores"]["1"]["stage_packets"]["tx"] == 0, st
            assert st["lcores"]["2"]["stage_packets"]["tx"] >= len(sent), st
        finally:
            rc = d.stop(timeout=30)
        assert rc == 0, d.describe()
