# SPDX-License-Identifier: BSD-3-Clause
"""Recovery across table changes (lb.table_history_s, docs/architecture.md
"Recovery across table changes"), through the daemon: live mode on a veth
pair in a private network namespace (as test_live_veth.py), a Maglev ipip
TCP service on two backends.

trace_packet names each flow's backend before a change (a new flow's
Maglev choice: no entry is made), lb_backend_add adds a third backend,
trace_packet names the new choices; then ACKs of those flows, which match
no flow entry (their connections began elsewhere, or before the change),
must reach the backend of the table before the add, and SYNs of other
flows the new choice. The negative control (table_history_s 0) sends the
moved ACKs to the new backend, as before this feature.

Needs root and `ip netns`; skipped otherwise."""

import json
import os
import socket
import struct
import subprocess

import pytest

import pautil
from pautil import DAEMON, Daemon, unique, write_json
from netpair import veth_namespace

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "lb_history_helper.py")
VETHS = (("vA1", "vB1"), ("vA2", "vB2"))
VIP = "10.0.0.10"
N = 60


@pytest.fixture
def netns():
    with veth_namespace("ph", VETHS, "lb history test") as ns:
        yield ns


def start(netns, tmp_path, history):
    sock = unique("hist", ".sock")
    conf = write_json(str(tmp_path / "hist.json"), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0"},
        ],
        "pipeline": {"mode": "rtc"},
        "lb": {"local_addr": "192.0.2.1", "table_history_s": history,
               "services": [{
                   "name": "web", "vip": VIP, "port": 80, "proto": "tcp",
                   "forward": "ipip",
                   "backends": [{"addr": "10.1.0.1"},
                                {"addr": "10.1.0.2"}]}]},
    })
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", conf, "-s", sock], sock,
               str(tmp_path), "hist", prefix=("ip", "netns", "exec", netns))
    d.wait_ready(60)
    return d


def flow(i):
    return ("198.51.100.%d" % (1 + i % 200), VIP, 20000 + i, 80, "tcp")


def choice(d, i):
    src, dst, sport, dport, proto = flow(i)
    t = d.call("trace_packet", {"src": src, "dst": dst, "sport": sport,
                                "dport": dport, "proto": proto})
    assert t["service"] == "web" and not t["existing_flow"], t
    return t["backend"]


def frame(i, flags):
    """Ethernet / IPv4 / TCP of flow i, 10 bytes of payload."""
    src, dst, sport, dport, _ = flow(i)
    payload = b"hist%06d" % i
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1000 + i, 1, 5 << 4,
                      flags, 8192, 0, 0) + payload
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + \
        struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), i, 0x4000,
                     64, 6, 0, socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = bytes.fromhex("0200000000c1" "0200000000b1" "0800")
    return eth + ip + tcp


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def send(netns, tmp_path, frames, tag):
    """Send frames on vB1: {flow index: outer destination} of what came
    out of vB2 encapsulated."""
    fin = str(tmp_path / ("in-%s.json" % tag))
    fout = str(tmp_path / ("out-%s.json" % tag))
    with open(fin, "w") as f:
        json.dump([fr.hex() for fr in frames], f)
    r = subprocess.run(["ip", "netns", "exec", netns, pautil.PYTHON, HELPER,
                        "vB1", "vB2", fin, fout, "20"],
                       capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    with open(fout) as f:
        got = [bytes.fromhex(h) for h in json.load(f)]
    out = {}
    for g in got:
        if len(g) < 14 + 40 or g[12:14] != b"\x08\x00" or g[14 + 9] != 4:
            continue
        inner = g[34:]
        sport = struct.unpack("!H", inner[20:22])[0]
        out[sport - 20000] = socket.inet_ntoa(g[14 + 16:14 + 20])
    return out


@pytest.mark.parametrize("history", [60, 0])
def test_ack_without_entry_reaches_its_backend_before_a_backend_add(
        netns, tmp_path, history):
    d = start(netns, tmp_path, history)
    try:
        before = {i: choice(d, i) for i in range(2 * N)}
        d.call("lb_backend_add", {"service": "web", "addr": "10.1.0.3"})
        after = {i: choice(d, i) for i in range(2 * N)}
        moved = [i for i in range(N) if before[i] != after[i]]
        assert len(moved) >= 5, (before, after)
        assert all(after[i] == "10.1.0.3" for i in moved), after
        # ACKs of flows 0..N-1: connections without an entry here
        acks = send(netns, tmp_path, [frame(i, 0x10) for i in range(N)],
                    "ack")
        assert sorted(acks) == list(range(N)), (acks, d.describe())
        # SYNs of flows N..2N-1: new connections
        syns = send(netns, tmp_path,
                    [frame(i, 0x02) for i in range(N, 2 * N)], "syn")
        assert sorted(syns) == list(range(N, 2 * N)), (syns, d.describe())
        lb = d.call("stats_get")["lb"]
    finally:
        rc = d.stop()
    assert rc == 0, "daemon exited %s on SIGTERM\n%s" % (rc, d.describe())
    for i in range(N, 2 * N):
        assert syns[i] == after[i], "SYN of flow %d: %s, not the current " \
            "choice %s" % (i, syns[i], after[i])
    if history:
        wrong = [i for i in range(N) if acks[i] != before[i]]
        assert not wrong, "ACKs not to their backend before the add: %s" % (
            [(i, acks[i], before[i]) for i in wrong])
        assert lb["flows_recovered"] == len(moved), lb
    else:
        # the negative control: the moved connections reach the new
        # backend (which would reset them)
        wrong = [i for i in range(N) if acks[i] != after[i]]
        assert not wrong, [(i, acks[i], after[i]) for i in wrong]
        assert lb["flows_recovered"] == 0, lb
