# SPDX-License-Identifier: BSD-3-Clause
"""Hostile RPC clients (issue 5, item 4): whatever clients do to the
socket, the daemon keeps answering a well-behaved client quickly and the
data path keeps forwarding.

Each test runs one kind of abuse while a prober -- a separate process, so
that the abusers' CPU and GIL do not count against it -- holds its own
connection and calls stats_get every PROBE_INTERVAL_S. The median answer
must come within MEDIAN_BOUND_MS and every answer within LATENCY_BOUND_MS
(measured from send to the end of the response line; the second bound
wide enough for a loaded machine's scheduling, not for a server that
stops), and its rx_packets must keep growing while
the data path has packets to receive.

Two daemons, each running the whole list (module-scoped, parametrized):
- "replay": replay --stay of a pcap of REPLAY_PACKETS small frames with
  burst 1 (it replays during the first tests), default limits but
  idle_timeout 1 s; at the end it must stop with conservation and no mbuf
  left in use;
- "live": live mode on a net_null port, which receives without end (the
  rx counter must grow during every abuse), with small limits in its
  config "rpc" section, so that the config reaches the server.

The latency figures of each abuse are printed (pytest -s shows them)."""

import json
import os
import select
import socket
import struct
import subprocess
import threading
import time

import pytest

import pautil
from pautil import DAEMON, PYTHON, check_summary, unique, write_json

# Bounds on the stats_get answers during abuse. The server needs well under
# 10 ms (its per-connection budget is 64 calls / 2 ms per poll). The median
# says the server keeps serving the good client; the bound on every answer
# catches a server that stops for the abuse (a blocked read, a request
# parsed for seconds), and is wide because a loaded 2-CPU machine (one CPU
# spins the data path) may leave the prober without a CPU for a few hundred
# ms: it once took 404 ms for an answer under a load of 8.
LATENCY_BOUND_MS = float(os.environ.get("PA_RPC_LATENCY_MS", "1500"))
MEDIAN_BOUND_MS = float(os.environ.get("PA_RPC_MEDIAN_MS", "50"))
PROBE_INTERVAL_S = 0.005
MIN_SAMPLES = 20
REPLAY_PACKETS = int(os.environ.get("PA_HOSTILE_PACKETS", "400000"))
IDLE_TIMEOUT_S = 1
BAD_PARAMS = [None, True, 1, 1.5, "s", [], {}, {"unknown": 1}]

TARGETS = {
    "replay": {"rpc": {"idle_timeout": IDLE_TIMEOUT_S}},
    "live": {"rpc": {"idle_timeout": IDLE_TIMEOUT_S, "max_connections": 16,
                     "max_request_bytes": 8 * 1024 * 1024, "max_depth": 32}},
}
DEFAULT_LIMITS = {"max_connections": 64, "max_request_bytes": 32 << 20,
                  "max_depth": 64, "idle_timeout": 30}

FIGURES = []        # (target, abuse, n, p50, p99, max, rx delta)


# ------------------------------------------------------------------ prober

PROBER = r"""
import json, select, sys, time
path, interval, pylib = sys.argv[1], float(sys.argv[2]), sys.argv[3]
sys.path.insert(0, pylib)
import pktaccel
out = {"lat": [], "rx": [], "errors": []}
def call(c):
    t0 = time.perf_counter()
    rx = c.stats_get()["rx_packets"]
    return time.perf_counter() - t0, rx
try:
    c = pktaccel.Client(path, timeout=5)
    call(c)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while not select.select([sys.stdin], [], [], 0)[0]:
        dt, rx = call(c)
        out["lat"].append(dt)
        out["rx"].append(rx)
        time.sleep(max(0.0, interval - dt))
except Exception as e:
    out["errors"].append(repr(e))
sys.stdout.write(json.dumps(out) + "\n")
"""


class Probe:
    """A well-behaved client in its own process."""

    def __init__(self, target, name):
        self.target = target
        self.name = name
        self.p = subprocess.Popen(
            [PYTHON, "-c", PROBER, target.sock, str(PROBE_INTERVAL_S),
             pautil.PYLIB],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.p.stdout.readline()
        assert line == b"ready\n", "prober did not start: %r\n%s" % (
            line, target.describe())
        self.res = None

    def stop(self):
        if self.res is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            out = self.p.stdout.read()
            self.p.wait(30)
            self.res = json.loads(out.decode().strip().splitlines()[-1])
        return self.res

    def check(self, min_samples=MIN_SAMPLES):
        """Stop; assert every answer came in time and the data path moved
        (if it had packets to receive). Returns the summary."""
        r = self.stop()
        lat = sorted(x * 1000.0 for x in r["lat"])
        assert not r["errors"], "prober failed during %s: %s\n%s" % (
            self.name, r["errors"], self.target.describe())
        assert len(lat) >= min_samples, "prober made only %d calls during " \
            "%s" % (len(lat), self.name)
        n = len(lat)
        p50 = lat[n // 2]
        p99 = lat[min(n - 1, (n * 99) // 100)]
        mx = lat[-1]
        rx0, rx1 = r["rx"][0], r["rx"][-1]
        FIGURES.append((self.target.kind, self.name, n, p50, p99, mx,
                        rx1 - rx0))
        print("\n[%s] %-28s calls %4d  p50 %6.2f ms  p99 %6.2f ms  "
              "max %6.2f ms  rx +%d" % (self.target.kind, self.name, n, p50,
                                        p99, mx, rx1 - rx0))
        assert mx <= LATENCY_BOUND_MS, \
            "%s: a stats_get took %.1f ms (bound %.0f ms; p50 %.2f, p99 " \
            "%.2f)" % (self.name, mx, LATENCY_BOUND_MS, p50, p99)
        assert p50 <= MEDIAN_BOUND_MS, \
            "%s: stats_get's median %.2f ms (bound %.0f ms; p99 %.2f, max " \
            "%.2f)" % (self.name, p50, MEDIAN_BOUND_MS, p99, mx)
        if self.target.receiving(rx0):
            assert rx1 > rx0, "%s: rx_packets stuck at %d during the abuse" \
                % (self.name, rx0)
        assert self.target.alive(), self.target.describe()
        return {"n": n, "p50": p50, "p99": p99, "max": mx}

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if et is not None:
            self.stop()
            return False
        self.check()
        return False


# ------------------------------------------------------------------ targets

PCAP_HDR = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def write_small_pcap(path, n):
    """n UDP/IPv4 frames of 60 bytes over 251 flows."""
    recs = []
    for f in range(251):
        udp = struct.pack("!HHHH", 1024 + f, 53, 8 + 10, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 10, f, 0, 64, 17,
                         0, bytes([10, 9, 0, f]), bytes([203, 0, 113, 7]))
        ip = ip[:10] + struct.pack("!H", pautil.gen_sample.csum16(ip)) + \
            ip[12:]
        fr = bytes.fromhex("0200000000fe020000000001") + b"\x08\x00" + ip + \
            udp + b"hostile-rp"
        fr += b"\0" * (60 - len(fr))
        recs.append(struct.pack("<IIII", 1700000000, 0, 60, 60) + fr)
    with open(path, "wb") as fh:
        fh.write(PCAP_HDR + b"".join(recs[i % 251] for i in range(n)))


class Target:
    def __init__(self, kind, workdir):
        self.kind = kind
        self.sock = unique("hostile", ".sock")
        conf = dict(TARGETS[kind])
        self.limits = dict(DEFAULT_LIMITS, **conf["rpc"])
        conf_path = os.path.join(workdir, kind + ".json")
        if kind == "replay":
            self.packets = REPLAY_PACKETS
            pcap = os.path.join(workdir, "small.pcap")
            write_small_pcap(pcap, self.packets)
            conf["pipeline"] = dict(pautil.RTC1, burst=1)
            write_json(conf_path, conf)
            args = pautil.replay_daemon_args(
                pcap, os.path.join(workdir, "out.pcap"), conf_path, self.sock)
        else:
            self.packets = None
            conf["ports"] = [{"name": "p0", "devargs": "net_null0"}]
            conf["pipeline"] = {"mode": "rtc"}
            conf["metrics"] = None
            write_json(conf_path, conf)
            args = [DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m",
                    "512", "-l", "0,1", "--", "-c", conf_path, "-s",
                    self.sock]
        # in its own directory: a call that writes a relative path
        # (config_save {"path": "s"}) writes there
        self.d = pautil.Daemon(args, self.sock, workdir, kind, cwd=workdir)
        self.d.wait_ready(60)

    def alive(self):
        return self.d.alive()

    def describe(self):
        return self.d.describe()

    def receiving(self, rx):
        """Has the data path still packets to receive after rx of them?"""
        return self.packets is None or rx < self.packets

    def call(self, method, params=None):
        return self.d.call(method, params)

    def rss_kib(self):
        with open("/proc/%d/status" % self.d.proc.pid) as f:
            st = dict(ln.split(":", 1) for ln in f if ":" in ln)
        return (int(st["VmRSS"].split()[0]), int(st["VmHWM"].split()[0]))


@pytest.fixture(scope="module", params=sorted(TARGETS))
def target(request, tmp_path_factory):
    t = Target(request.param, str(tmp_path_factory.mktemp(request.param)))
    yield t
    if t.d.proc.poll() is None:
        t.d.stop()
    for p in (t.sock, t.sock + ".lock"):
        if os.path.exists(p):
            os.unlink(p)


# ------------------------------------------------------------------ helpers

def connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_to_eof(s, timeout=5.0):
    """Read until the server closes (EOF or reset). Returns (data, closed)."""
    deadline = time.monotonic() + timeout
    data = b""
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(1 << 16)
        except socket.timeout:
            break
        except (ConnectionResetError, BrokenPipeError):
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def wait_hangup(s, timeout):
    """Wait, without reading, until the server closes. Returns True then."""
    p = select.poll()
    p.register(s.fileno(), select.POLLRDHUP)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, ev in p.poll(50):
            if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                return True
    return False


def lines(data):
    return [json.loads(ln) for ln in data.split(b"\n") if ln.strip()]


def error_code(resp):
    return resp.get("error", {}).get("code")


class Sender(threading.Thread):
    """sendall() in the background; a server that closes ends it."""

    def __init__(self, s, chunks):
        super().__init__(daemon=True)
        self.s = s
        self.chunks = chunks
        self.sent = 0
        self.error = None
        self.start()

    def run(self):
        try:
            for c in self.chunks:
                self.s.sendall(c)
                self.sent += len(c)
        except OSError as e:
            self.error = e


def rpc_line(method, id_, params=None):
    req = {"jsonrpc": "2.0", "method": method, "id": id_}
    if params is not None:
        req["params"] = params
    return json.dumps(req).encode() + b"\n"


# ------------------------------------------------------------------ tests

def test_non_json_bytes(target):
    """Garbage that is not a request: -32700 and the connection closed.
    Garbage inside balanced brackets: -32700 and the stream goes on."""
    bad_start = [b"hello\n", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"\x00\x01\x02\xff" * 64, b"42\n", b'"str"\n', b"null\n",
                 b"}{\n", b"]\n", b"x" + os.urandom(4096), b"\xef\xbb\xbf{}"]
    n = 0
    with Probe(target, "non-JSON bytes"):
        t_end = time.monotonic() + 0.8
        while time.monotonic() < t_end:
            for raw in bad_start:
                with connect(target.sock) as s:
                    try:
                        s.sendall(raw)
                    except OSError:
                        pass
                    data, closed = read_to_eof(s)
                assert closed, "not closed after %r" % raw[:40]
                r = lines(data)
                assert len(r) == 1 and error_code(r[0]) == -32700, (raw[:40],
                                                                    data)
                n += 1
            with connect(target.sock) as s:
                junk = bytes(b for b in os.urandom(2048)
                             if b not in b'"\\[]{}')
                s.sendall(b"{" + junk + b"}" + rpc_line("rpc_get_methods", 7))
                f = s.makefile("rb")
                assert error_code(json.loads(f.readline())) == -32700
                r = json.loads(f.readline())
                assert r["id"] == 7 and "result" in r, r
                n += 1
    assert n > 10


def test_deep_nesting(target):
    depth = target.limits["max_depth"]
    cases = [b"[" * 100000,
             b'{"a":' * 100000,
             b'{"jsonrpc":"2.0","method":"stats_get","id":1,"params":' +
             b"[" * 100000 + b"]" * 100000 + b"}\n",
             b"[" * (depth + 1) + b"]" * (depth + 1) + b"\n"]
    n = 0
    with Probe(target, "100k-deep nesting"):
        t_end = time.monotonic() + 0.8
        while time.monotonic() < t_end:
            for raw in cases:
                s = connect(target.sock)
                snd = Sender(s, [raw])
                data, closed = read_to_eof(s)
                snd.join(5)
                s.close()
                assert closed
                r = lines(data)
                assert len(r) == 1 and error_code(r[0]) == -32700, data[:300]
                assert "nesting too deep (limit %d levels)" % depth in \
                    r[0]["error"]["message"], r
                n += 1
    # exactly the limit is parsed: the request is level 1, params level 2
    with connect(target.sock) as s:
        arr = b"[" * (depth - 1) + b"]" * (depth - 1)
        s.sendall(b'{"jsonrpc":"2.0","method":"rpc_get_methods","id":3,'
                  b'"params":' + arr + b"}\n")
        r = json.loads(s.makefile("rb").readline())
        assert r["id"] == 3 and error_code(r) == -32602, r
    assert n >= 4


def test_100mib_request_streamed(target):
    """A request of 100 MiB, sent as fast as the server takes it: -32600
    at max_request_bytes, then closed; the server never holds it whole."""
    limit = target.limits["max_request_bytes"]
    chunk = b"a" * (1 << 20)
    head = b'{"jsonrpc":"2.0","method":"stats_get","id":1,"params":{"pad":"'
    rss0, _ = target.rss_kib()
    tries = []
    with Probe(target, "100 MiB requests"):
        t_end = time.monotonic() + 0.6
        while not tries or time.monotonic() < t_end:
            s = connect(target.sock, timeout=30)
            t0 = time.monotonic()
            snd = Sender(s, [head] + [chunk] * 100 + [b'"}}\n'])
            data, closed = read_to_eof(s, timeout=30)
            dt = time.monotonic() - t0
            snd.join(30)
            s.close()
            assert closed, "not closed after %d bytes" % snd.sent
            r = lines(data)
            assert len(r) == 1 and error_code(r[0]) == -32600, data[:300]
            assert r[0]["id"] is None
            assert r[0]["error"]["message"] == \
                "request too large (limit %d bytes)" % limit, r
            assert snd.error is not None, "the server took all 100 MiB"
            assert snd.sent < limit + (16 << 20), snd.sent
            tries.append((dt, snd.sent))
    rss1, hwm = target.rss_kib()
    print("\n[%s] %d requests of 100 MiB: each refused within %.2f s, "
          "after at most %d MiB sent; daemon RSS %d -> %d MiB (peak %d MiB)"
          % (target.kind, len(tries), max(t[0] for t in tries),
             max(t[1] for t in tries) >> 20, rss0 >> 10, rss1 >> 10,
             hwm >> 10))
    assert rss1 - rss0 < (limit >> 10) + 64 * 1024, (rss0, rss1)


def test_dense_json(target):
    """Requests that are cheap to send and dear to parse ([{},{},...],
    [0,0,...]): parsed aside, so that only their sender waits; beyond the
    object and value limits that follow from max_request_bytes, -32600
    "request too complex" and closed."""
    limit = target.limits["max_request_bytes"]
    max_containers = max(limit // 64, 4096)
    max_values = max(limit // 8, 32768)

    def dense(item, n):
        return (b'{"jsonrpc":"2.0","method":"stats_get","id":1,"params":[' +
                b",".join([item] * n) + b"]}\n")

    # some 100 ms of parsing each (the exact limits are unit-tested)
    ok = [dense(b"{}", min(max_containers - 2, 100000)),
          dense(b"0", min(max_values - 3, 1000000))]
    over = [dense(b"[]", max_containers - 1), dense(b"0", max_values - 1)]
    n = 0
    with Probe(target, "dense JSON"):
        t_end = time.monotonic() + 0.8
        while time.monotonic() < t_end or n < 4:
            for raw in ok:
                with connect(target.sock, timeout=30) as s:
                    snd = Sender(s, [raw, rpc_line("rpc_get_methods", 2)])
                    f = s.makefile("rb")
                    r = json.loads(f.readline())
                    assert r["id"] == 1 and error_code(r) == -32602, r
                    r = json.loads(f.readline())
                    assert r["id"] == 2 and "result" in r, r
                    snd.join(30)
                n += 1
            for raw in over:
                with connect(target.sock, timeout=30) as s:
                    snd = Sender(s, [raw])
                    data, closed = read_to_eof(s, timeout=30)
                    snd.join(30)
                assert closed
                r = lines(data)
                assert len(r) == 1 and error_code(r[0]) == -32600, data[:300]
                assert r[0]["error"]["message"].startswith(
                    "request too complex (limit "), r
                n += 1


def test_invalid_utf8_in_strings(target):
    bad = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xc3",
           b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80", b"a\x80b"]
    templates = [
        b'{"jsonrpc":"2.0","method":"stats_get","id":"%s"}',
        b'{"jsonrpc":"2.0","method":"stats_%s_get","id":1}',
        b'{"jsonrpc":"2.0","method":"trace_packet","id":1,'
        b'"params":{"src":"10.0.0.1%s"}}',
        b'{"jsonrpc":"2.0","method":"acl_rule_add","id":1,'
        b'"params":{"id":5,"action":"drop","%s":1}}',
        b'["%s"]',
        b'{"jsonrpc":"2.0%s","method":"stats_get","id":1}',
    ]
    escapes = [b'\\ud800', b'\\udfff', b'\\ud800\\u0041', b'\\u00', b'\\x41']
    n = 0
    with Probe(target, "invalid UTF-8"):
        with connect(target.sock) as s:
            f = s.makefile("rb")
            t_end = time.monotonic() + 0.6
            k = 0
            while time.monotonic() < t_end:
                for tpl in templates:
                    for b in bad + escapes:
                        s.sendall(tpl.replace(b"%s", b) + b"\n")
                        r = json.loads(f.readline())
                        assert error_code(r) == -32700 and r["id"] is None, r
                        n += 1
                k += 1
                s.sendall(rpc_line("stats_get", k))
                r = json.loads(f.readline())
                assert r["id"] == k and "result" in r, r
    assert n > 50


def test_half_request_then_stall(target):
    """Clients that send part of a request and stop: answered -32600 and
    closed after idle_timeout; one that trickles its request slower than
    the others but never pauses that long is answered normally."""
    idle = target.limits["idle_timeout"]
    parts = [b"{", b"[", b'{"jsonrpc":"2.0","method":"stats_get",',
             b'{"jsonrpc":"2.0","method":"stats_get","id":1,"params":{"x":"ab',
             b'[{"jsonrpc":"2.0","method":"stats_get","id":1},',
             b'{"jsonrpc":"2.0","method":"stats_get","id":"\\']
    # the prober and the trickler hold a slot each
    n = min(20, target.limits["max_connections"] - 3)
    trickled = []

    def trickler():
        with connect(target.sock) as t:
            req = rpc_line("rpc_get_methods", 42)
            step = max(1, len(req) // 4)
            for i in range(0, len(req), step):
                t.sendall(req[i:i + step])
                time.sleep(idle * 0.3)
            trickled.append(json.loads(t.makefile("rb").readline()))

    with Probe(target, "half request, stall"):
        stallers = []
        for k in range(n):
            s = connect(target.sock, timeout=idle * 5)
            s.sendall(parts[k % len(parts)])
            stallers.append(s)
        t0 = time.monotonic()
        th = threading.Thread(target=trickler, daemon=True)
        th.start()
        first = None
        for s in stallers:
            data, closed = read_to_eof(s, timeout=idle * 4)
            dt = time.monotonic() - t0
            first = first or dt
            assert closed, "staller not closed after %.1f s" % dt
            r = lines(data)
            assert len(r) == 1 and error_code(r[0]) == -32600, data
            assert "incomplete" in r[0]["error"]["message"], r
            s.close()
        th.join(idle * 5)
    print("\n[%s] %d stalled clients closed %.2f..%.2f s after their "
          "last byte (idle_timeout %d s)" % (target.kind, n, first, dt, idle))
    assert idle * 0.9 <= first and dt <= idle * 3, (first, dt)
    assert trickled and trickled[0]["id"] == 42 and \
        "result" in trickled[0], trickled


def test_1000_connections_at_once(target):
    """Beyond max_connections a connection is closed at once; those within
    it stay (idle connections are allowed); the prober, connected first,
    is served all along, and new clients are again once the crowd left."""
    limit = target.limits["max_connections"]
    socks = []
    with Probe(target, "1000 connections"):
        t0 = time.monotonic()
        for _ in range(1000):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(target.sock)
            s.setblocking(False)
            socks.append(s)
        closed = set()

        def reap(wait):
            r, _, _ = select.select([s for s in socks if s not in closed],
                                    [], [], wait)
            for s in r:
                try:
                    if s.recv(1) == b"":
                        closed.add(s)
                except (ConnectionResetError, BlockingIOError):
                    closed.add(s)

        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(closed) < 1000 - limit:
            reap(0.05)
        dt = time.monotonic() - t0
        time.sleep(0.3)
        reap(0)
        held = [s for s in socks if s not in closed]
        # the prober holds one slot, the crowd the others (a slot or two
        # may still be held by an earlier test's connection for a moment)
        assert 1000 - limit <= len(closed) <= 1000 - limit + 3, len(closed)
        assert dt < 5, dt
        print("\n[%s] 1000 connections: %d closed within %.2f s, %d held" % (
            target.kind, len(closed), dt, len(held)))
        # a held one is served
        held[0].setblocking(True)
        held[0].settimeout(5)
        held[0].sendall(rpc_line("rpc_get_methods", 1))
        assert b'"result"' in held[0].recv(65536)
        for s in socks:
            s.close()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert "rx_packets" in target.call("stats_get")
            break
        except (EOFError, OSError, AssertionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_connect_disconnect_storm(target):
    n = 0
    with Probe(target, "connect/disconnect storm"):
        t_end = time.monotonic() + 1.0
        while time.monotonic() < t_end or n < 2000:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(target.sock)
            k = n % 4
            try:
                if k == 1:
                    s.sendall(rpc_line("stats_get", n))
                elif k == 2:
                    s.sendall(b'{"jsonrpc":"2.0","method":"sta')
                elif k == 3:
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass        # closed at once: over the limit for a moment
            s.close()
            n += 1
            if n % 64 == 0:
                time.sleep(0.001)   # let the prober have the CPU now and then
            if n >= 5000:
                break
    print("\n[%s] storm: %d connections" % (target.kind, n))
    assert n >= 2000


def test_many_requests_never_read(target):
    """10k requests, and a batch of 10k calls, from clients that never read:
    the server stops reading once ~4 MiB of answers wait, and closes them
    after idle_timeout; the prober is served all along."""
    idle = target.limits["idle_timeout"]
    reqs = b"".join(rpc_line("stats_get", i) for i in range(10000))
    batch = json.dumps([{"jsonrpc": "2.0", "method": "stats_get", "id": i}
                        for i in range(10000)]).encode() + b"\n"
    with Probe(target, "10k requests, no reading"):
        t0 = time.monotonic()
        a = connect(target.sock, timeout=30)
        b = connect(target.sock, timeout=30)
        for x in (a, b):
            x.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sa = Sender(a, [reqs])
        sb = Sender(b, [batch])
        # nothing read: wait for the server to give up on them
        for x, what in ((a, "10k requests"), (b, "10k-call batch")):
            assert wait_hangup(x, idle * 6), \
                "never-reading client (%s) not closed" % what
        dt = time.monotonic() - t0
        sa.join(idle * 6)
        sb.join(idle * 6)
        got = []
        for x in (a, b):
            data, closed = read_to_eof(x, timeout=idle * 6)
            assert closed
            got.append(data)
            x.close()
    n_a = got[0].count(b"\n")
    print("\n[%s] never-reading clients closed after %.2f s; %d of 10000 "
          "answers sent to one, %d KiB of the batch line to the other" % (
              target.kind, dt, n_a, len(got[1]) >> 10))
    assert n_a < 10000
    assert b"\n" not in got[1], "the whole 10k batch was answered"
    assert dt >= idle * 0.9


def test_big_batch_does_not_hold_the_server(target):
    """A batch of 50k calls from a client that reads: run across polls,
    streamed as one line; the prober is answered between its calls."""
    calls = [{"jsonrpc": "2.0", "method": "rpc_get_methods", "id": i}
             for i in range(48000)] + \
            [{"jsonrpc": "2.0", "method": "stats_get", "id": 48000 + i}
             for i in range(2000)] + [{"jsonrpc": "2.0", "method": "x"}]
    raw = json.dumps(calls).encode() + b"\n"
    assert len(raw) < target.limits["max_request_bytes"]
    with Probe(target, "50k-call batch"):
        with connect(target.sock, timeout=60) as s:
            t0 = time.monotonic()
            s.sendall(raw)
            f = s.makefile("rb")
            r = json.loads(f.readline())
            dt = time.monotonic() - t0
    assert isinstance(r, list) and len(r) == 50000, len(r)
    assert [x["id"] for x in r] == list(range(50000))
    assert all("result" in x for x in r)
    print("\n[%s] 50k-call batch answered in %.2f s" % (target.kind, dt))


def test_every_method_with_every_wrong_param_type(target):
    methods = target.call("rpc_get_methods")
    assert "stats_get" in methods and "shutdown" in methods
    keys = ["id", "name", "service", "addr", "rules", "default", "src",
            "dst", "sport", "dport", "proto", "action", "weight", "state",
            "vip", "port", "path", "backends", "priority", "in_port"]
    cases = []
    for m in methods:
        for p in BAD_PARAMS:
            # shutdown takes [] and {} as "no params": it would stop
            if m == "shutdown" and p in ([], {}):
                continue
            cases.append((m, p))
        for k in keys:
            for v in BAD_PARAMS:
                cases.append((m, {k: v}))
            cases.append((m, [{k: "x"}]))
    n_err = n_ok = 0
    with Probe(target, "wrong param types"):
        with connect(target.sock) as s:
            f = s.makefile("rb")
            for i, (m, p) in enumerate(cases):
                # params always present (null too): absent params would
                # be a valid call of shutdown
                req = {"jsonrpc": "2.0", "method": m, "id": i, "params": p}
                s.sendall(json.dumps(req).encode() + b"\n")
                r = json.loads(f.readline())
                assert r.get("id") == i, (m, p, r)
                assert ("error" in r) != ("result" in r), (m, p, r)
                if "error" in r:
                    assert r["error"]["code"] in (-32600, -32602, -32603,
                                                  -32000, -32001, -32002), \
                        (m, p, r)
                    n_err += 1
                else:
                    n_ok += 1
            # the same as one batch, and as notifications
            s.sendall(json.dumps([{"jsonrpc": "2.0", "method": m,
                                   "params": p, "id": i}
                                  for i, (m, p) in enumerate(cases)
                                  if isinstance(p, (list, dict))]).encode())
            r = json.loads(f.readline())
            assert isinstance(r, list) and r, r
            s.sendall(json.dumps([{"jsonrpc": "2.0", "method": m,
                                   "params": p}
                                  for m, p in cases
                                  if isinstance(p, (list, dict)) and
                                  m != "shutdown"]).encode())
            s.sendall(rpc_line("stats_get", "last"))
            r = json.loads(f.readline())
            assert r["id"] == "last" and "result" in r, r
    print("\n[%s] %d calls with wrong params: %d errors, %d results" % (
        target.kind, len(cases), n_err, n_ok))
    assert n_err > len(cases) // 2


def test_zz_daemon_still_serves_and_exits_cleanly(target):
    """After all of it: served, then a clean stop (replay: every packet
    accounted for, every mbuf back)."""
    st = target.call("stats_get")
    assert "rx_packets" in st
    if target.kind == "replay":
        target.d.wait_replay_done(target.packets, timeout=120)
    rc = target.d.stop()
    assert rc == 0, target.describe()
    if target.kind == "replay":
        check_summary(pautil.Result(target.d.args, rc, target.d.stdout,
                                    target.d.stderr), target.packets)
    assert "mbufs not returned" not in target.d.stderr, target.describe()
    if FIGURES:
        print("\nlatency of stats_get during each abuse (%s):" % target.kind)
        for f in FIGURES:
            if f[0] == target.kind:
                print("  %-28s n=%4d p50=%6.2f ms p99=%6.2f ms max=%6.2f ms "
                      "rx+%d" % f[1:])
