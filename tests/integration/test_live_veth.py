# SPDX-License-Identifier: BSD-3-Clause
"""Live mode on veth pairs in a private network namespace: the daemon runs
net_af_packet on vA1 and vA2 (peers of each other); frames sent on vB1
arrive on vB2 unchanged, and back. Needs root and `ip netns`."""

import json
import os
import subprocess

import pytest

import pautil
from pautil import DAEMON, Daemon, unique, write_json
from netpair import veth_namespace

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "live_helper.py")
VETHS = (("vA1", "vB1"), ("vA2", "vB2"))


def sh(*args, timeout=30):
    return subprocess.run(list(args), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def netns():
    with veth_namespace("pa", VETHS, "live veth test") as ns:
        yield ns


def _exchange(ns, tx, rx, tag, workdir, count=40):
    out = os.path.join(workdir, "live-%d.json" % tag)
    r = sh("ip", "netns", "exec", ns, pautil.PYTHON, HELPER, "--tx", tx,
           "--rx", rx, "--count", str(count), "--tag", str(tag), "--out", out,
           timeout=90)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    with open(out) as f:
        res = json.load(f)
    return res["sent"], res["received"]


def test_live_veth_forwarding(netns, tmp_path):
    sock = unique("live", ".sock")
    conf = write_json(str(tmp_path / "live.json"), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0"},
        ],
        "pipeline": {"mode": "rtc"},
    })
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", conf, "-s", sock], sock,
               str(tmp_path), "live", prefix=("ip", "netns", "exec", netns))
    try:
        d.wait_ready(60)
        total = 0
        for tag, (tx, rx) in ((1, ("vB1", "vB2")), (2, ("vB2", "vB1"))):
            sent, got = _exchange(netns, tx, rx, tag, str(tmp_path))
            total += len(sent)
            missing = sorted(set(sent) - set(got))
            assert not missing, "%d of %d frames from %s did not arrive on " \
                "%s unchanged (got %d frames)\n%s" % (
                    len(missing), len(sent), tx, rx, len(got), d.describe())
            assert len(got) == len(sent), "duplicates on %s: %d frames for " \
                "%d sent" % (rx, len(got), len(sent))
        st = d.call("stats_get")
        assert st["rx_packets"] >= total, st
        assert st["tx_packets"] >= total, st
    finally:
        rc = d.stop()
    assert rc == 0, "daemon exited %s on SIGTERM\n%s" % (rc, d.describe())
