# SPDX-License-Identifier: BSD-3-Clause
"""Latency histograms (pipeline.latency) and the idle settings seen through
the RPC: after a replay with --stay, stats_get's latency count equals the
forwarded packets (drops are not counted), percentiles are ordered, and
with latency off nothing is recorded."""

import json
import time

import pytest

from conftest import daemons
from pautil import DEFAULT_CONF, PIPE4, RTC1, SAMPLE, read_pcap

PCTS = ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns")


def _conf(pipeline):
    with open(DEFAULT_CONF) as f:
        conf = json.load(f)
    conf["pipeline"] = pipeline
    return conf


def _check_latency(st, n_tx):
    lat = st["latency"]
    assert lat["enabled"] is True, lat
    assert lat["count"] == n_tx == st["tx_packets"], (lat, st["tx_packets"])
    vals = [lat[k] for k in PCTS]
    assert vals[0] > 0, lat
    assert vals == sorted(vals), "percentiles out of order: %s" % lat
    assert lat["mean_ns"] <= lat["max_ns"], lat
    # per lcore histograms merge into the total
    per = [lc["latency"]["count"] for lc in st["lcores"].values()]
    assert sum(per) == lat["count"], st["lcores"]
    return lat


@pytest.mark.parametrize("pipeline", [RTC1, PIPE4], ids=["rtc", "pipeline"])
def test_latency_counts_every_forwarded_packet_once(tmp_path, pipeline):
    n = len(read_pcap(SAMPLE))
    with daemons(tmp_path) as start:
        d = start(_conf(dict(pipeline)), SAMPLE)
        st = d.wait_replay_done(n)
        assert st["dropped_packets"] > 0, "the sample must have drops"
        _check_latency(st, n - st["dropped_packets"])
        if pipeline["mode"] == "pipeline":
            # only the tx lcore hands packets to the TX queue
            pl = d.call("pipeline_get")
            tx = [str(lc["lcore"]) for lc in pl["lcores"]
                  if lc["role"] == "tx"]
            for lc, s in st["lcores"].items():
                if lc not in tx:
                    assert s["latency"]["count"] == 0, (lc, s)
        cfg = d.call("config_get")
        assert cfg["pipeline"]["latency"] is True
        assert cfg["pipeline"]["idle"] == {"mode": "busy", "spin_polls": 1000,
                                           "max_sleep_us": 100}


def test_latency_off_records_nothing(tmp_path):
    n = len(read_pcap(SAMPLE))
    with daemons(tmp_path) as start:
        d = start(_conf({"mode": "rtc", "latency": False}), SAMPLE)
        st = d.wait_replay_done(n)
        assert st["tx_packets"] > 0
        lat = st["latency"]
        assert lat["enabled"] is False, lat
        assert lat["count"] == 0 and lat["max_ns"] == 0, lat
        for s in st["lcores"].values():
            assert s["latency"]["count"] == 0, s
        assert d.call("config_get")["pipeline"]["latency"] is False


def test_adaptive_replay_keeps_its_outcome_and_round_trips(tmp_path):
    """Adaptive idle in both modes: the replay gives the same packets as
    busy polling, the lcores sleep once the pcap has run dry, and
    config_get returns the idle settings as given."""
    n = len(read_pcap(SAMPLE))
    idle = {"mode": "adaptive", "spin_polls": 10, "max_sleep_us": 200}
    with daemons(tmp_path) as start:
        ref = start(_conf({"mode": "rtc"}), SAMPLE, name="busy")
        st_ref = ref.wait_replay_done(n)
        for pipeline in (RTC1, PIPE4):
            p = dict(pipeline, idle=idle)
            d = start(_conf(p), SAMPLE, name="adaptive-" + p["mode"])
            st = d.wait_replay_done(n)
            assert st["tx_packets"] == st_ref["tx_packets"]
            assert st["drops"] == st_ref["drops"]
            _check_latency(st, st["tx_packets"])
            assert d.call("config_get")["pipeline"]["idle"] == idle
            # every lcore goes to sleep once there is no more work
            deadline = time.monotonic() + 5
            while True:
                st = d.call("stats_get")
                if all(s["sleeps"] > 0 and s["sleep_cycles"] > 0
                       for s in st["lcores"].values()):
                    break
                assert time.monotonic() < deadline, st["lcores"]
                time.sleep(0.05)
