# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the pktaccel integration tests: paths, replay runs, a small
JSON-RPC client, a daemon handle, and packet matching."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("PKTACCEL_BUILD_DIR") or os.path.join(REPO, "build")
DAEMON = os.path.join(BUILD, "app", "pktaccel")
CTL = os.path.join(BUILD, "app", "pktaccelctl")
PYTHON = "/usr/bin/python3"
DATA = os.path.join(REPO, "tests", "data")
SAMPLE = os.path.join(DATA, "sample.pcap")
DEFAULT_CONF = os.path.join(REPO, "docs", "examples", "default.json")

if DATA not in sys.path:
    sys.path.insert(0, DATA)
import gen_sample  # noqa: E402  (tests/data/gen_sample.py)

read_pcap = gen_sample.read_pcap
write_pcap = gen_sample.write_pcap

DROP_REASONS = ("malformed", "acl", "police", "non_ip", "no_backend", "mtu",
                "ring_full", "tx_full", "rx_error", "shutdown", "local",
                "neigh_ring_full")

RPC_METHODS_NOW = ("rpc_get_methods", "stats_get", "pipeline_get",
                   "config_get", "shutdown",
                   "acl_rule_add", "acl_rule_delete", "acl_rule_list",
                   "acl_rules_replace", "trace_packet",
                   "lb_service_add", "lb_service_delete", "lb_service_list",
                   "lb_backend_add", "lb_backend_delete", "lb_backend_set",
                   "neigh_list", "capture_start", "capture_stop",
                   "capture_get")

# Pipeline configurations exercised by the replay tests.
PIPE4 = {"mode": "pipeline",
         "lcores": {"rx": [1], "classify": [2], "lb": [3], "tx": [4]}}
RTC1 = {"mode": "rtc"}
RTC2 = {"mode": "rtc", "lcores": {"worker": [1, 2]}}

# Timeouts (seconds). A replay of a few hundred packets takes about a
# second; these only keep a hung daemon from hanging the suite.
REPLAY_TIMEOUT = 90
START_TIMEOUT = 30
STOP_TIMEOUT = 30


def unique(prefix, suffix=""):
    """A short unique path under /tmp (AF_UNIX paths must stay < 108)."""
    return "/tmp/pa-%s-%d-%s%s" % (prefix, os.getpid(), uuid.uuid4().hex[:8],
                                   suffix)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def last_json_line(text):
    """Parse the last non-empty line of text as JSON (None if it is not)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


def json_lines(text):
    """Every line of text that parses as a JSON object."""
    out = []
    for ln in text.splitlines():
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                out.append(json.loads(ln))
            except ValueError:
                pass
    return out


class Result:
    def __init__(self, args, rc, stdout, stderr):
        self.args = args
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.summary = last_json_line(stdout)

    def __repr__(self):
        return ("<rc=%r args=%r\n--- stdout (tail) ---\n%s\n--- stderr ---\n%s>"
                % (self.rc, self.args, self.stdout[-3000:],
                   self.stderr[-3000:]))


def run(args, timeout=REPLAY_TIMEOUT, **kw):
    """Run a command with a timeout; a command that hangs is killed and
    reported as rc None."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = None
        err += b"\n[test harness: killed after %ds]" % timeout
    return Result(args, rc, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"))


def replay(in_pcap, out_pcap, config, drops=None, extra=(),
           timeout=REPLAY_TIMEOUT, conf_path=None):
    """Run one replay. config: a dict (written to a temp file) or a path."""
    if isinstance(config, dict):
        conf_path = conf_path or unique("conf", ".json")
        write_json(conf_path, config)
    else:
        conf_path = config
    args = [DAEMON, "--replay", in_pcap, "--replay-out", out_pcap,
            "-c", conf_path]
    if drops:
        args += ["--replay-drops", drops]
    args += list(extra)
    try:
        return run(args, timeout=timeout)
    finally:
        if isinstance(config, dict):
            try:
                os.unlink(conf_path)
            except OSError:
                pass


def check_summary(res, n_rx, expect_drops=None):
    """The replay exited 0 and its last stdout line is a consistent
    summary for n_rx packets. expect_drops: {reason: count}; reasons not
    named must be zero. Returns the summary."""
    assert res.rc == 0, "replay failed: %r" % res
    s = res.summary
    assert isinstance(s, dict), "last stdout line is not a JSON object: %r" % res
    for k in ("rx_packets", "tx_packets", "dropped_packets", "drops",
              "mbufs_in_use"):
        assert k in s, "summary lacks %r: %s" % (k, s)
    drops = s["drops"]
    for r in DROP_REASONS:
        assert r in drops, "summary drops lacks %r: %s" % (r, drops)
    assert s["rx_packets"] == n_rx, "rx_packets %s, expected %d" % (
        s["rx_packets"], n_rx)
    assert s["rx_packets"] == s["tx_packets"] + s["dropped_packets"], \
        "conservation broken: %s" % s
    assert sum(drops.values()) == s["dropped_packets"], \
        "drops do not add up to dropped_packets: %s" % s
    assert s["mbufs_in_use"] == 0, "mbufs leaked: %s" % s
    if expect_drops is not None:
        want = {r: 0 for r in DROP_REASONS}
        want.update(expect_drops)
        got = {r: drops[r] for r in DROP_REASONS}
        assert got == want, "drops %s, expected %s" % (got, want)
    return s


def match_output(pkts, frames, what="output"):
    """Map each frame of an output pcap to the index of the identical
    input packet. Fails on modified, unknown or duplicated frames.
    Returns the list of indices in output order."""
    by_bytes = {p.data: i for i, p in enumerate(pkts)}
    idx = []
    problems = []
    for n, fr in enumerate(frames):
        i = by_bytes.get(fr)
        if i is None:
            mk = gen_sample.find_marker(fr)
            if mk is not None and mk < len(pkts):
                orig = pkts[mk].data
                diff = next((k for k in range(min(len(orig), len(fr)))
                             if orig[k] != fr[k]), min(len(orig), len(fr)))
                problems.append(
                    "%s frame %d is input #%d (%s) modified: %d bytes vs %d, "
                    "first difference at offset %d" % (
                        what, n, mk, pkts[mk].kind, len(fr), len(orig), diff))
            else:
                problems.append("%s frame %d matches no input: %s" % (
                    what, n, fr[:64].hex()))
            continue
        idx.append(i)
    assert not problems, "\n".join(problems[:20])
    dups = len(idx) - len(set(idx))
    assert dups == 0, "%d duplicated frames in %s" % (dups, what)
    return idx


def check_flow_order(pkts, idx):
    """Within each flow, output order is input order."""
    last = {}
    bad = []
    for i in idx:
        f = pkts[i].flow
        if f in last and last[f] > i:
            bad.append("flow %s: #%d after #%d" % (f, i, last[f]))
        last[f] = max(i, last.get(f, -1))
    assert not bad, "per-flow order broken:\n" + "\n".join(bad[:20])


# --------------------------------------------------------------------------
# JSON-RPC client

class RpcClient:
    """Minimal JSON-RPC 2.0 client over AF_UNIX: raw sends, newline-framed
    responses."""

    def __init__(self, path, timeout=10.0):
        self.path = path
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1
        self.eof = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def recv_line(self, timeout=None):
        """Next newline-terminated line (bytes, without the newline).
        Raises TimeoutError, or EOFError when the server closed."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no response within %.1fs (have %r)"
                                   % (timeout or self.timeout, self.buf[:200]))
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""     # closed with our data unread: still EOF
            if not chunk:
                self.eof = True
                raise EOFError("server closed the connection (have %r)"
                               % self.buf[:200])
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def recv(self, timeout=None):
        line = self.recv_line(timeout)
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError("response is not JSON: %r" % line[:300])

    def expect_nothing(self, wait=0.3):
        """Assert that nothing arrives within `wait` seconds."""
        try:
            line = self.recv_line(wait)
        except TimeoutError:
            return
        raise AssertionError("unexpected response: %r" % line[:300])

    def request(self, method, params=None, id=None, notify=False):
        req = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            req["params"] = params
        if not notify:
            if id is None:
                id = self.next_id
                self.next_id += 1
            req["id"] = id
        return req

    def call_raw(self, method, params=None, id=None):
        """Send a request; return the whole response object."""
        req = self.request(method, params, id)
        self.send(req)
        resp = self.recv()
        assert resp.get("id") == req["id"], \
            "response id %r for request id %r" % (resp.get("id"), req["id"])
        return resp

    def call(self, method, params=None):
        """Send a request; return its result (AssertionError on error)."""
        resp = self.call_raw(method, params)
        assert "error" not in resp, "%s failed: %s" % (method, resp)
        assert resp.get("jsonrpc") == "2.0", resp
        return resp["result"]


def wait_socket(path, proc=None, timeout=START_TIMEOUT):
    """Wait until a Unix socket accepts connections."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError("daemon exited with %s before its socket "
                                 "accepted" % proc.returncode)
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1)
            s.connect(path)
            s.close()
            return
        except OSError as e:
            last = e
            s.close()
        time.sleep(0.05)
    raise AssertionError("socket %s not accepting after %ds: %s"
                         % (path, timeout, last))


# --------------------------------------------------------------------------
# A daemon running in the background

class Daemon:
    """pktaccel in the background (replay --stay, or live mode), output to
    files. stop() sends SIGTERM and returns the exit status."""

    def __init__(self, args, sock, workdir, name="daemon", prefix=(),
                 cwd=None):
        self.args = list(prefix) + list(args)
        self.sock = sock
        self.out_path = os.path.join(workdir, name + ".stdout")
        self.err_path = os.path.join(workdir, name + ".stderr")
        self.rc = None
        self._out = open(self.out_path, "wb")
        self._err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self._out,
                                     stderr=self._err,
                                     stdin=subprocess.DEVNULL, cwd=cwd)

    @property
    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    @property
    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def describe(self):
        return ("args=%r rc=%r\n--- stdout (tail) ---\n%s\n--- stderr ---\n%s"
                % (self.args, self.proc.poll(), self.stdout[-3000:],
                   self.stderr[-3000:]))

    def wait_ready(self, timeout=START_TIMEOUT):
        try:
            wait_socket(self.sock, self.proc, timeout)
        except AssertionError as e:
            raise AssertionError("%s\n%s" % (e, self.describe()))

    def client(self, timeout=10.0):
        return RpcClient(self.sock, timeout)

    def call(self, method, params=None):
        with self.client() as c:
            return c.call(method, params)

    def alive(self):
        return self.proc.poll() is None

    def wait(self, timeout=STOP_TIMEOUT):
        """Wait for exit; kill and fail after timeout."""
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._close()
            raise AssertionError("daemon did not exit within %ds\n%s"
                                 % (timeout, self.describe()))
        self._close()
        return self.rc

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self):
        for f in (self._out, self._err):
            try:
                f.close()
            except OSError:
                pass

    def wait_replay_done(self, n, timeout=60):
        """Poll stats_get until all n packets of the replay have left the
        pipeline. Returns the last stats."""
        deadline = time.monotonic() + timeout
        st = None
        while time.monotonic() < deadline:
            st = self.call("stats_get")
            if st.get("rx_packets") == n and \
                    st.get("tx_packets", 0) + st.get("dropped_packets", 0) == n:
                return st
            time.sleep(0.05)
        raise AssertionError("replay of %d packets not done after %ds: %s\n%s"
                             % (n, timeout, st, self.describe()))


def replay_daemon_args(in_pcap, out_pcap, conf_path, sock, extra=()):
    return [DAEMON, "--replay", in_pcap, "--replay-out", out_pcap,
            "-c", conf_path, "-s", sock, "--stay"] + list(extra)


# --------------------------------------------------------------------------
# Load-balancer traffic: plain IPv4/IPv6 TCP and UDP frames built with
# struct (fast, no scapy), and what the appliance did to them.

LB_CLIENT_MAC = bytes.fromhex("020000000101")
LB_APPLIANCE_MAC = bytes.fromhex("0200000000fe")


def _l4_csum(pseudo, seg):
    return gen_sample.csum16(pseudo + seg) or 0xFFFF


def l4_frame(src, dst, sport, dport, proto="tcp", idx=0, payload_len=24,
             tcp_flags=0x02):
    """One Ethernet frame: IPv4 or IPv6 (by the addresses), TCP (flags
    `tcp_flags`, SYN by default) or UDP, correct checksums, payload
    starting with gen_sample.marker(idx)."""
    import ipaddress
    import struct
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    assert s.version == d.version, (src, dst)
    payload = gen_sample.marker(idx)
    payload += bytes(97 + (k % 26) for k in range(max(0, payload_len -
                                                      len(payload))))
    pnum = {"tcp": 6, "udp": 17}[proto]
    if proto == "tcp":
        seg = struct.pack("!HHIIBBHHH", sport, dport, 1000 + idx, 0, 5 << 4,
                          tcp_flags, 8192, 0, 0) + payload
        ck_off = 16
    else:
        seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + \
            payload
        ck_off = 6
    if s.version == 4:
        pseudo = s.packed + d.packed + struct.pack("!BBH", 0, pnum, len(seg))
    else:
        pseudo = s.packed + d.packed + struct.pack("!IxxxB", len(seg), pnum)
    ck = _l4_csum(pseudo, seg)
    seg = seg[:ck_off] + struct.pack("!H", ck) + seg[ck_off + 2:]
    if s.version == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg),
                         idx & 0xFFFF, 0, 64, pnum, 0, s.packed, d.packed)
        ip = ip[:10] + struct.pack("!H", gen_sample.csum16(ip)) + ip[12:]
        eth = LB_APPLIANCE_MAC + LB_CLIENT_MAC + b"\x08\x00"
    else:
        ip = struct.pack("!IHBB16s16s", 0x60000000, len(seg), pnum, 64,
                         s.packed, d.packed)
        eth = LB_APPLIANCE_MAC + LB_CLIENT_MAC + b"\x86\xdd"
    frame = eth + ip + seg
    if len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def parse_ip(frame, off=None):
    """The IP header of an Ethernet frame (or at `off`): a dict with
    family, src, dst, proto, sport, dport (None without ports) and, for
    IP-in-IP (4 or 41), "inner": the encapsulated packet parsed alike.
    None for a frame that is not IP."""
    import ipaddress
    import struct
    if off is None:
        if len(frame) < 14:
            return None
        et = struct.unpack("!H", frame[12:14])[0]
        off = 14
        while et in (0x8100, 0x88A8) and len(frame) >= off + 4:
            et = struct.unpack("!H", frame[off + 2:off + 4])[0]
            off += 4
        if et not in (0x0800, 0x86DD):
            return None
    if len(frame) < off + 20:
        return None
    ver = frame[off] >> 4
    if ver == 4:
        ihl = (frame[off] & 0xF) * 4
        proto = frame[off + 9]
        src = str(ipaddress.IPv4Address(frame[off + 12:off + 16]))
        dst = str(ipaddress.IPv4Address(frame[off + 16:off + 20]))
        l4 = off + ihl
        frag = struct.unpack("!H", frame[off + 6:off + 8])[0] & 0x1FFF
    elif ver == 6:
        if len(frame) < off + 40:
            return None
        proto = frame[off + 6]
        src = str(ipaddress.IPv6Address(frame[off + 8:off + 24]))
        dst = str(ipaddress.IPv6Address(frame[off + 24:off + 40]))
        l4 = off + 40
        frag = 0
    else:
        return None
    out = {"family": ver, "src": src, "dst": dst, "proto": proto,
           "sport": None, "dport": None, "inner": None}
    if proto in (4, 41):
        out["inner"] = parse_ip(frame, l4)
    elif proto in (6, 17) and frag == 0 and len(frame) >= l4 + 4:
        out["sport"], out["dport"] = struct.unpack("!HH", frame[l4:l4 + 4])
    return out
