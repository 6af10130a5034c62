# SPDX-License-Identifier: BSD-3-Clause
"""Adaptive polling (pipeline.idle) on a live daemon with no traffic:
net_af_packet on veth pairs in a private network namespace. A busy-polling
worker uses a whole CPU; an adaptive one sleeps and uses a small share
of one, wakes up for the first packets after the idle period and forwards
all of them, and stops promptly on SIGTERM while asleep."""

import os
import time

import pytest

from pautil import DAEMON, Daemon, unique, write_json
from test_live_veth import _exchange, netns  # noqa: F401  (fixture)

CLK_TCK = os.sysconf("SC_CLK_TCK")
WINDOW_S = 2.0


def cpu_s(pid):
    """CPU seconds (user + system) of a process, all its threads."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / CLK_TCK


def idle_cpu_share(d):
    """Share of one CPU the daemon uses over WINDOW_S with no traffic."""
    c0, t0 = cpu_s(d.proc.pid), time.monotonic()
    time.sleep(WINDOW_S)
    return (cpu_s(d.proc.pid) - c0) / (time.monotonic() - t0)


def start(ns, tmp_path, name, pipeline, eal_lcores=("-l", "0,1")):
    sock = unique(name, ".sock")
    conf = write_json(str(tmp_path / (name + ".json")), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0"},
        ],
        "pipeline": pipeline,
        "metrics": None,
    })
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512"] +
               list(eal_lcores) + ["--", "-c", conf, "-s", sock], sock,
               str(tmp_path), name, prefix=("ip", "netns", "exec", ns))
    d.wait_ready(60)
    return d


def sleeps(st):
    return sum(s["sleeps"] for s in st["lcores"].values())


@pytest.mark.parametrize("mode", ["rtc", "pipeline"])
def test_adaptive_idle_sleeps_then_forwards_after_idle(netns, tmp_path, mode):
    pipeline = {"mode": mode,
                "idle": {"mode": "adaptive", "max_sleep_us": 500}}
    # rtc: one worker on its own CPU; pipeline: four stage lcores and the
    # main lcore floating over the machine's CPUs (the daemon maps them)
    lcores = ("-l", "0,1") if mode == "rtc" else ()
    d = start(netns, tmp_path, "adaptive-" + mode, pipeline, lcores)
    try:
        time.sleep(0.5)
        share = idle_cpu_share(d)
        st = d.call("stats_get")
        assert sleeps(st) > 0, st["lcores"]
        # a busy-polling worker takes 1.0 (rtc) or all CPUs (pipeline)
        assert share < 0.3, "adaptive idle daemon used %.2f CPUs" % share
        rate = sum(s["idle_polls"] for s in st["lcores"].values()) / (
            WINDOW_S + 0.5)
        assert rate < 200000, "adaptive lcores polled %.0f/s" % rate
        for s in st["lcores"].values():
            assert s["idle_polls"] > 0 and s["sleeps"] > 0, st["lcores"]

        # the first packets after an idle period wake it up; none is lost
        sent, got = _exchange(netns, "vB1", "vB2", 1, str(tmp_path), count=20)
        assert sorted(got) == sorted(sent), \
            "%d sent, %d received after idle\n%s" % (len(sent), len(got),
                                                     d.describe())
        st2 = d.call("stats_get")
        assert st2["tx_packets"] >= len(sent)
        assert st2["latency"]["count"] == st2["tx_packets"]
        assert sum(s["busy_polls"] for s in st2["lcores"].values()) > \
            sum(s["busy_polls"] for s in st["lcores"].values())
        # back to sleep afterwards
        time.sleep(0.3)
        assert sleeps(d.call("stats_get")) > sleeps(st2)
    finally:
        # SIGTERM reaches lcores that are asleep: a prompt, clean stop
        t0 = time.monotonic()
        rc = d.stop(timeout=15)
        took = time.monotonic() - t0
    assert rc == 0, "exit %s\n%s" % (rc, d.describe())
    assert took < 5, "stop took %.1f s" % took


def test_busy_idle_keeps_polling(netns, tmp_path):
    """The reference for the bound above: busy polling spins, never
    sleeps. Its CPU share depends on what else this shared machine runs
    (it is always runnable), so the check is on its poll rate: millions
    a second even on a share of a CPU, where an adaptive lcore asleep
    polls a few thousand times."""
    d = start(netns, tmp_path, "busy", {"mode": "rtc"})
    try:
        time.sleep(0.5)
        a, t0 = d.call("stats_get"), time.monotonic()
        share = idle_cpu_share(d)
        b, t1 = d.call("stats_get"), time.monotonic()
        rate = (sum(s["idle_polls"] for s in b["lcores"].values()) -
                sum(s["idle_polls"] for s in a["lcores"].values())) / (t1 - t0)
        assert sleeps(b) == 0, b["lcores"]
        assert rate > 200000, "busy lcore polled only %.0f/s (%.2f CPUs)" % (
            rate, share)
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()
