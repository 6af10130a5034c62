# SPDX-License-Identifier: BSD-3-Clause
"""Capture of dropped packets (capture_start / capture_stop / capture_get,
docs/capture.md).

- Parameters and files, on a replay --stay daemon (no root needed):
  strict decoding with -32602 naming the parameter, one capture at a time,
  files only new ones in the capture directory (no overwrite, no symbolic
  link followed, no path).
- What is written, on a live daemon on veth pairs in a private network
  namespace (root): a capture for a reason holds exactly the frames dropped
  for it, in order, byte for byte; max_packets, max_bytes and snaplen
  bound it; stop counts are exact.
"""

import json
import os
import stat
import struct
import subprocess
import time

import pytest

import pautil
from pautil import DAEMON, Daemon, unique, write_json
from test_live_veth import netns  # noqa: F401  (fixture)

SENDER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "send_frames.py")
DROP_RULE = {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
             "dport": "53", "proto": "udp", "action": "drop"}


def read_records(path):
    """(ts_sec, ts_usec, caplen, len, data) of each record of a
    microsecond pcap file written by the daemon, and the header's
    snaplen. Fails on anything else."""
    with open(path, "rb") as f:
        buf = f.read()
    assert len(buf) >= 24, "%s: %d bytes, no pcap header" % (path, len(buf))
    magic, vmaj, vmin, _, _, snaplen, link = struct.unpack("<IHHiIII",
                                                           buf[:24])
    assert magic == 0xA1B2C3D4, "%s: magic %#x" % (path, magic)
    assert (vmaj, vmin, link) == (2, 4, 1), (vmaj, vmin, link)
    recs = []
    off = 24
    while off < len(buf):
        assert off + 16 <= len(buf), "%s: truncated record header" % path
        sec, usec, incl, orig = struct.unpack("<IIII", buf[off:off + 16])
        off += 16
        assert off + incl <= len(buf), "%s: truncated record" % path
        assert incl <= orig and usec < 1000000, (incl, orig, usec)
        recs.append((sec, usec, incl, orig, buf[off:off + incl]))
        off += incl
    return recs, snaplen


def rpc_error(client, method, params=None):
    resp = client.call_raw(method, params)
    assert "error" in resp, "%s %r: expected an error, got %s" % (
        method, params, resp)
    return resp["error"]["code"], resp["error"]["message"]


# --------------------------------------------------------------------------
# Parameters and files (replay --stay: no traffic during the tests)

@pytest.fixture
def stay_daemon(daemon_factory, tmp_path):
    capdir = str(tmp_path / "caps" / "sub")       # made at the first start
    d = daemon_factory({}, pautil.SAMPLE,
                       extra=("--capture-dir", capdir))
    d.wait_replay_done(400)
    d.capdir = capdir
    return d


BAD_PARAMS = [
    # (params, parameter named in the message)
    (None, "params"),
    ([], "params"),
    (["acl", "x.pcap"], "params"),
    ({"path": "x.pcap"}, "params.reason"),
    ({"reason": 3, "path": "x.pcap"}, "params.reason"),
    ({"reason": "nope", "path": "x.pcap"}, "params.reason"),
    ({"reason": "ACL", "path": "x.pcap"}, "params.reason"),
    ({"reason": ["acl"], "path": "x.pcap"}, "params.reason"),
    ({"reason": "acl"}, "params.path"),
    ({"reason": "acl", "path": None}, "params.path"),
    ({"reason": "acl", "path": 7}, "params.path"),
    ({"reason": "acl", "path": ""}, "params.path"),
    ({"reason": "acl", "path": "../x.pcap"}, "params.path"),
    ({"reason": "acl", "path": ".."}, "params.path"),
    ({"reason": "acl", "path": ".hidden"}, "params.path"),
    ({"reason": "acl", "path": "/etc/passwd"}, "params.path"),
    ({"reason": "acl", "path": "a/b.pcap"}, "params.path"),
    ({"reason": "acl", "path": "a b.pcap"}, "params.path"),
    ({"reason": "acl", "path": "caf\u00e9.pcap"}, "params.path"),
    ({"reason": "acl", "path": "x" * 65}, "params.path"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": 0},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": -1},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": 10000001},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": 1.5},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": "10"},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": True},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": 2 ** 63 - 1},
     "params.max_packets"),
    ({"reason": "acl", "path": "x.pcap", "max_bytes": 1023},
     "params.max_bytes"),
    ({"reason": "acl", "path": "x.pcap", "max_bytes": 2 ** 30 + 1},
     "params.max_bytes"),
    ({"reason": "acl", "path": "x.pcap", "max_bytes": None},
     "params.max_bytes"),
    ({"reason": "acl", "path": "x.pcap", "snaplen": 63}, "params.snaplen"),
    ({"reason": "acl", "path": "x.pcap", "snaplen": 65536},
     "params.snaplen"),
    ({"reason": "acl", "path": "x.pcap", "dir": "/tmp"}, "dir"),
    ({"reason": "acl", "path": "x.pcap", "max_packets": 5, "extra": 1},
     "extra"),
]


def test_capture_rpc_rejects_invalid_params_naming_them(stay_daemon):
    d = stay_daemon
    with d.client() as c:
        for params, name in BAD_PARAMS:
            resp = c.call_raw("capture_start", params)
            if params is None:
                assert resp.get("error", {}).get("code") == -32602, resp
                assert "params" in resp["error"]["message"], resp
                continue
            assert "error" in resp, "capture_start %r: %s" % (params, resp)
            code, msg = resp["error"]["code"], resp["error"]["message"]
            assert code == -32602, "capture_start %r: %s" % (params, resp)
            assert name in msg, "capture_start %r: message %r does not " \
                "name %s" % (params, msg, name)
        for method in ("capture_stop", "capture_get"):
            for params in ({"x": 1}, [1], {"reason": "acl"}):
                code, msg = rpc_error(c, method, params)
                assert code == -32602 and "params" in msg, (method, msg)
        # nothing was created, not even the directory
        assert not os.path.exists(d.capdir)
        assert c.call("capture_get") == {"state": "idle",
                                         "directory": d.capdir}
        code, msg = rpc_error(c, "capture_stop")
        assert code == -32001 and "no capture running" in msg, msg
        methods = c.call("rpc_get_methods")
        for m in ("capture_start", "capture_stop", "capture_get"):
            assert m in methods


def test_capture_files_are_new_files_in_the_capture_directory(stay_daemon,
                                                              tmp_path):
    d = stay_daemon
    with d.client() as c:
        r = c.call("capture_start", {"reason": "acl", "path": "one.pcap"})
        path = os.path.join(d.capdir, "one.pcap")
        assert r["state"] == "running" and r["id"] == 1, r
        assert r["path"] == path and r["reason"] == "acl", r
        assert (r["max_packets"], r["max_bytes"], r["snaplen"]) == \
            (10000, 64 << 20, 65535), r
        assert (r["packets"], r["bytes"], r["lost"]) == (0, 24, 0), r
        assert r["stopped_by"] is None, r
        st = os.stat(d.capdir)
        assert stat.S_IMODE(st.st_mode) == 0o750, oct(st.st_mode)
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o640, oct(st.st_mode)
        recs, snaplen = read_records(path)      # a valid, empty pcap now
        assert recs == [] and snaplen == 65535

        # one at a time
        code, msg = rpc_error(c, "capture_start",
                              {"reason": "any", "path": "two.pcap"})
        assert code == -32000 and "running" in msg, msg
        assert not os.path.exists(os.path.join(d.capdir, "two.pcap"))
        g = c.call("capture_get")
        assert g["state"] == "running" and g["id"] == 1, g

        s = c.call("capture_stop")
        assert s["state"] == "stopped" and s["stopped_by"] == "rpc", s
        assert (s["id"], s["packets"], s["bytes"], s["lost"]) == \
            (1, 0, 24, 0), s
        assert os.path.getsize(path) == 24
        code, msg = rpc_error(c, "capture_stop")
        assert code == -32001 and "capture 1 ended: rpc" in msg, msg
        assert c.call("capture_get")["state"] == "stopped"

        # never an existing file: the same name again, a file put there,
        # a symbolic link (to a file that exists and to one that does not)
        code, msg = rpc_error(c, "capture_start",
                              {"reason": "acl", "path": "one.pcap"})
        assert code == -32000 and "exists" in msg, msg
        precious = tmp_path / "precious"
        precious.write_bytes(b"do not touch")
        os.symlink(str(precious), os.path.join(d.capdir, "link.pcap"))
        absent = tmp_path / "absent"
        os.symlink(str(absent), os.path.join(d.capdir, "dangling.pcap"))
        for name in ("link.pcap", "dangling.pcap"):
            code, msg = rpc_error(c, "capture_start",
                                  {"reason": "acl", "path": name})
            assert code == -32000 and "exists" in msg, msg
        assert precious.read_bytes() == b"do not touch"
        assert not absent.exists()
        # a refused start leaves the last capture's status as it was
        g = c.call("capture_get")
        assert g["state"] == "stopped" and g["id"] == 1, g

        # the next capture, with every parameter; the file is as asked
        r = c.call("capture_start", {"reason": "malformed", "path": "b-2.pcap",
                                     "max_packets": 3, "max_bytes": 4096,
                                     "snaplen": 64})
        assert r["id"] == 2 and r["reason"] == "malformed", r
        assert (r["max_packets"], r["max_bytes"], r["snaplen"]) == \
            (3, 4096, 64), r
        assert read_records(os.path.join(d.capdir, "b-2.pcap")) == ([], 64)
        assert c.call("capture_stop")["id"] == 2
    # the console prints a status readably
    res = pautil.run([pautil.CTL, "-s", d.sock, "capture_get"], timeout=30)
    assert res.rc == 0, res
    for line in ("state: stopped", "id: 2", "reason: malformed",
                 "stopped_by: rpc", "directory: " + d.capdir):
        assert line in res.stdout.splitlines(), res.stdout


def test_capture_directory_that_cannot_be_made_is_an_error(daemon_factory,
                                                           tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    d = daemon_factory({}, pautil.SAMPLE,
                       extra=("--capture-dir", str(blocker / "caps")))
    d.wait_replay_done(400)
    with d.client() as c:
        code, msg = rpc_error(c, "capture_start",
                              {"reason": "acl", "path": "x.pcap"})
        assert code == -32603 and "capture directory" in msg, msg
        assert c.call("capture_get")["state"] == "idle"


# --------------------------------------------------------------------------
# What is written: live daemon on veths

def _frames(n, tag):
    """n frames from vB1: every third a UDP DNS query from 10/8 (dropped
    by the ACL), every seventh malformed (IPv4 header length 16 bytes),
    the rest permitted. Returns (frames, acl_dropped, malformed), the last
    two lists of frames in order."""
    frames, acl, bad = [], [], []
    for k in range(n):
        idx = tag * 100000 + k
        if k % 7 == 6:
            f = pautil.l4_frame("198.51.100.7", "203.0.113.9", 1000 + k, 80,
                                "tcp", idx=idx)
            f = f[:14] + bytes([0x44]) + f[15:]
            bad.append(f)
        elif k % 3 == 0:
            f = pautil.l4_frame("10.1.%d.%d" % (tag, k % 250 + 1),
                                "192.0.2.53", 20000 + k, 53, "udp", idx=idx,
                                payload_len=24 + k % 40)
            acl.append(f)
        else:
            f = pautil.l4_frame("198.51.100.%d" % (k % 250 + 1),
                                "192.0.2.80", 30000 + k, 80, "tcp", idx=idx)
        frames.append(f)
    return frames, acl, bad


class LiveCapture:
    def __init__(self, ns, tmp_path):
        self.ns = ns
        self.tmp = tmp_path
        self.capdir = str(tmp_path / "caps")
        self.sock = unique("cap", ".sock")
        conf = write_json(str(tmp_path / "cap.json"), {
            "ports": [
                {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
                 "peer": "p1"},
                {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
                 "peer": "p0"},
            ],
            "pipeline": {"mode": "rtc"},
            "acl": {"default": "permit", "rules": [DROP_RULE]},
            "metrics": None,
        })
        self.d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci",
                         "-m", "256", "-l", "0,1", "--", "-c", conf,
                         "-s", self.sock, "--capture-dir", self.capdir],
                        self.sock, str(tmp_path), "capture",
                        prefix=("ip", "netns", "exec", ns))
        self.d.wait_ready(60)
        self.c = self.d.client(timeout=20)
        self.batches = 0
        self.mbufs_at_rest = self.c.call("stats_get")["mbufs_in_use"]

    def send(self, frames):
        """Send frames on vB1 and wait until the daemon has seen them all
        (every one forwarded or dropped)."""
        self.batches += 1
        path = str(self.tmp / ("frames-%d.json" % self.batches))
        with open(path, "w") as f:
            json.dump([fr.hex() for fr in frames], f)
        before = self.c.call("stats_get")["rx_packets"]
        r = subprocess.run(["ip", "netns", "exec", self.ns, pautil.PYTHON,
                            SENDER, "vB1", path], capture_output=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        deadline = time.monotonic() + 20
        while True:
            st = self.c.call("stats_get")
            if st["rx_packets"] - before >= len(frames) and \
                    st["tx_packets"] + st["dropped_packets"] == \
                    st["rx_packets"]:
                return st
            assert time.monotonic() < deadline, \
                "daemon saw %d of %d frames: %s\n%s" % (
                    st["rx_packets"] - before, len(frames), st,
                    self.d.describe())
            time.sleep(0.05)

    def wait_written(self, n):
        deadline = time.monotonic() + 10
        while True:
            g = self.c.call("capture_get")
            if g["packets"] >= n or g["state"] != "running":
                return g
            assert time.monotonic() < deadline, g
            time.sleep(0.02)

    def close(self):
        self.c.close()
        return self.d.stop()


@pytest.fixture
def live(netns, tmp_path):  # noqa: F811
    lc = LiveCapture(netns, tmp_path)
    try:
        yield lc
    finally:
        rc = lc.close()
    assert rc == 0, "daemon exited %s\n%s" % (rc, lc.d.describe())


def _check_frames(path, want, what):
    recs, _ = read_records(path)
    got = [r[4] for r in recs]
    assert len(got) == len(want), "%s: %d frames, %d expected" % (
        what, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, "%s: frame %d differs:\n got %s\nwant %s" % (
            what, i, g.hex(), w.hex())
    return recs


def test_capture_writes_exactly_the_packets_dropped_for_its_reason(live):
    lc = live
    frames, acl, bad = _frames(120, 1)
    r = lc.c.call("capture_start", {"reason": "acl", "path": "acl.pcap"})
    t0 = time.time()
    st0 = lc.c.call("stats_get")["drops"]
    st = lc.send(frames)
    t1 = time.time()
    assert st["drops"]["acl"] - st0["acl"] == len(acl), st["drops"]
    assert st["drops"]["malformed"] - st0["malformed"] == len(bad), \
        st["drops"]
    lc.wait_written(len(acl))
    s = lc.c.call("capture_stop")
    path = os.path.join(lc.capdir, "acl.pcap")
    assert s["path"] == r["path"] == path
    assert (s["state"], s["stopped_by"], s["packets"], s["lost"]) == \
        ("stopped", "rpc", len(acl), 0), s
    assert s["bytes"] == 24 + sum(16 + len(f) for f in acl), s
    assert os.path.getsize(path) == s["bytes"]
    recs = _check_frames(path, acl, "acl capture")
    # times are those of the drops: within the sending, in order
    times = [sec + usec / 1e6 for sec, usec, _, _, _ in recs]
    assert times == sorted(times), "timestamps not in order"
    assert t0 - 1 <= times[0] and times[-1] <= t1 + 1, (t0, times, t1)
    # read back by tcpdump too
    res = pautil.run(["tcpdump", "-nn", "-r", path], timeout=30)
    assert res.rc == 0, res
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == len(acl) and all(".53:" in ln for ln in lines), \
        res.stdout[:2000]

    # malformed only: not the ACL's drops
    lc.c.call("capture_start", {"reason": "malformed", "path": "bad.pcap"})
    frames, acl, bad = _frames(70, 2)
    lc.send(frames)
    lc.wait_written(len(bad))
    s = lc.c.call("capture_stop")
    assert (s["packets"], s["lost"], s["reason"]) == \
        (len(bad), 0, "malformed"), s
    _check_frames(os.path.join(lc.capdir, "bad.pcap"), bad,
                  "malformed capture")

    # "any": every drop, in the order of the drops: the parser's
    # (malformed) come before the ACL's of the same burst, so each
    # reason's are in sending order
    lc.c.call("capture_start", {"reason": "any", "path": "any.pcap"})
    frames, acl, bad = _frames(70, 3)
    lc.send(frames)
    lc.wait_written(len(acl) + len(bad))
    s = lc.c.call("capture_stop")
    assert (s["packets"], s["lost"], s["reason"]) == \
        (len(acl) + len(bad), 0, "any"), s
    recs, _ = read_records(os.path.join(lc.capdir, "any.pcap"))
    got = [r[4] for r in recs]
    assert sorted(got) == sorted(acl + bad), "any capture: not the drops"
    assert [f for f in got if f in acl] == acl, "ACL drops out of order"
    assert [f for f in got if f in bad] == bad, "malformed out of order"

    # stopped: nothing more is written, dropping goes on
    size = os.path.getsize(os.path.join(lc.capdir, "any.pcap"))
    st = lc.send(_frames(30, 4)[0])
    assert os.path.getsize(os.path.join(lc.capdir, "any.pcap")) == size
    # every captured packet went back to its pool
    assert st["mbufs_in_use"] == lc.mbufs_at_rest, st
    # --no-shconf: the daemon says why dpdk-dumpcap cannot attach
    assert "dpdk-dumpcap cannot attach" in lc.d.stderr, lc.d.describe()


def test_capture_bounds_stop_it_by_itself(live):
    lc = live
    # max_packets: the first 7 ACL drops, then it stops
    lc.c.call("capture_start", {"reason": "acl", "path": "seven.pcap",
                                "max_packets": 7})
    frames, acl, _ = _frames(90, 5)
    lc.send(frames)
    g = lc.wait_written(7)
    deadline = time.monotonic() + 5
    while g["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        g = lc.c.call("capture_get")
    assert (g["state"], g["stopped_by"], g["packets"]) == \
        ("stopped", "max_packets", 7), g
    _check_frames(os.path.join(lc.capdir, "seven.pcap"), acl[:7],
                  "max_packets capture")
    code, msg = rpc_error(lc.c, "capture_stop")
    assert code == -32001 and "ended: max_packets" in msg, msg

    # max_bytes: as many whole records as fit, the file never larger
    lc.c.call("capture_start", {"reason": "acl", "path": "small.pcap",
                                "max_bytes": 1024})
    frames, acl, _ = _frames(90, 6)
    lc.send(frames)
    fit, size = 0, 24
    while size + 16 + len(acl[fit]) <= 1024:
        size += 16 + len(acl[fit])
        fit += 1
    deadline = time.monotonic() + 5
    while True:
        g = lc.c.call("capture_get")
        if g["state"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert (g["state"], g["stopped_by"], g["packets"], g["bytes"]) == \
        ("stopped", "max_bytes", fit, size), g
    path = os.path.join(lc.capdir, "small.pcap")
    assert os.path.getsize(path) == size <= 1024
    _check_frames(path, acl[:fit], "max_bytes capture")

    # snaplen: records cut to 64 bytes, original lengths kept
    lc.c.call("capture_start", {"reason": "acl", "path": "snap.pcap",
                                "snaplen": 64})
    frames, acl, _ = _frames(60, 7)
    lc.send(frames)
    lc.wait_written(len(acl))
    s = lc.c.call("capture_stop")
    recs, snaplen = read_records(os.path.join(lc.capdir, "snap.pcap"))
    assert snaplen == 64 and len(recs) == len(acl) == s["packets"], s
    for (_, _, incl, orig, data), f in zip(recs, acl):
        assert (incl, orig, data) == (min(64, len(f)), len(f), f[:64])
    assert s["bytes"] == 24 + sum(16 + min(64, len(f)) for f in acl), s
