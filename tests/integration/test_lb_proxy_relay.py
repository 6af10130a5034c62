# SPDX-License-Identifier: BSD-3-Clause
"""lib/lb's PROXY module between two real TCP stacks, with loss.

build/tests/unit/lb/lb_proxy_relay relays between two TUN devices, one in
a client namespace and one in a backend namespace, through
lb_proxy_to_backend() and lb_proxy_to_client() (the header built by
lb_proxy_build()); it loses a share of the packets after the module, and
the first two segments of each connection that carry the header
(the handshake's final ACK, then the first data segment or the answer to
the backend's SYN-ACK retransmission), so the header has to ride again.
On the backend side a server that reads the PROXY header and speaks
first (lb_proxy_peer.py), and nginx with `listen ... proxy_protocol`.
Transfers both ways are checked byte for byte, and the client address
the backends read from the header is the client's.

The full data path (fnat, its address rewrite, the lab) has its own
tests; this one pins the sequence arithmetic against Linux's TCP: a
wrong shift, a lost header or a bad checksum stalls or corrupts these
transfers.
"""

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import time

import pytest

from pautil import BUILD, PYTHON

HERE = os.path.dirname(os.path.abspath(__file__))
RELAY = os.path.join(BUILD, "tests", "unit", "lb", "lb_proxy_relay")
PEER = os.path.join(HERE, "lb_proxy_peer.py")
CLIENT = "10.77.0.1"
BACKEND = "10.77.1.1"
PEER_PORT = 9000
NGINX_PORT = 8080
LOSS_PERMILLE = 30
FORCED = 2
START_TIMEOUT = 20.0
XFER_TIMEOUT = 120


def run(*argv, **kw):
    return subprocess.run(list(argv), check=True, capture_output=True,
                          timeout=60, **kw)


def need_lab():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, TUN devices)")
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun")
    if shutil.which("ip") is None:
        pytest.skip("no ip(8)")
    if not os.access(RELAY, os.X_OK):
        pytest.skip("%s is not built" % RELAY)


def wait_for(pred, what, timeout=START_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


class Lab:
    """Two namespaces joined by the relay; the processes it started."""

    def __init__(self, tmp_path, version, seed):
        tag = "pp%d" % os.getpid()
        self.nsc, self.nsb = tag + "c", tag + "b"
        self.tmp = tmp_path
        self.procs = []
        self.relay_out = tmp_path / "relay.out"
        self.relay = None
        self._up(tag, version, seed)

    def _up(self, tag, version, seed):
        for ns in (self.nsc, self.nsb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            run("ip", "netns", "add", ns)
        tc, tb = tag + "tc", tag + "tb"
        self.relay = subprocess.Popen(
            [RELAY, tc, tb, version, str(LOSS_PERMILLE), str(seed),
             str(FORCED)],
            stdout=open(self.relay_out, "wb"),
            stderr=open(self.tmp / "relay.err", "wb"))
        wait_for(lambda: b"ready" in self.relay_out.read_bytes() or
                 self.relay.poll() is not None, "the relay")
        assert self.relay.poll() is None, (self.tmp / "relay.err").read_text()
        for ns, dev, addr, peer in ((self.nsc, tc, CLIENT, BACKEND),
                                    (self.nsb, tb, BACKEND, CLIENT)):
            run("ip", "link", "set", dev, "netns", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "addr", "add", addr + "/32", "dev", dev)
            run("ip", "-n", ns, "link", "set", dev, "up")
            run("ip", "-n", ns, "route", "add", peer + "/32", "dev", dev)

    def start(self, ns, argv, name, ready):
        """@p argv in @p ns, its output in tmp/<name>.out; waits until
        @p ready(output) holds."""
        out = self.tmp / (name + ".out")
        p = subprocess.Popen(["ip", "netns", "exec", ns] + argv,
                             stdout=open(out, "wb"), stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        wait_for(lambda: ready(out.read_bytes()) or p.poll() is not None,
                 name)
        assert p.poll() is None, "%s exited: %s" % (name, out.read_text())
        return p

    def client(self, *argv):
        r = subprocess.run(["ip", "netns", "exec", self.nsc] + list(argv),
                           capture_output=True, timeout=XFER_TIMEOUT)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        return r.stdout

    def down(self):
        """Stop everything; @return the relay's counters."""
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        stats = None
        if self.relay is not None and self.relay.poll() is None:
            self.relay.terminate()
            self.relay.wait(timeout=10)
            lines = self.relay_out.read_text().splitlines()
            stats = json.loads(lines[-1]) if len(lines) > 1 else None
        for ns in (self.nsc, self.nsb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        return stats


@contextlib.contextmanager
def lab(tmp_path, version, seed):
    need_lab()
    lb = Lab(tmp_path, version, seed)
    result = {}
    try:
        yield lb, result
    finally:
        result["stats"] = lb.down()


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_transfers_are_byte_exact_with_loss(version, tmp_path):
    with lab(tmp_path, version, 11) as (lb, result):
        lb.start(lb.nsb, [PYTHON, PEER, "serve", BACKEND, str(PEER_PORT)],
                 "peer", lambda out: b"listening" in out)
        runs = [(2000000, 2000000, "first"), (2000000, 2000000, ""),
                (3000000, 0, "first"), (0, 3000000, ""), (0, 0, "")]
        for i, (up, down, mode) in enumerate(runs):
            argv = [PYTHON, PEER, "connect", BACKEND, str(PEER_PORT),
                    str(up), str(down), str(100 + i)] + ([mode] if mode else [])
            got = json.loads(lb.client(*argv).decode().splitlines()[-1])
            assert got["ok"]
            assert got["addr"] == CLIENT, got
            assert got["port"] == got["local"][1], got
    st = result["stats"]
    assert st is not None
    assert st["refused"] == 0, st
    # each connection's header was lost twice and delivered once
    assert st["forced"] == FORCED * len(runs), st
    assert st["inserted"] >= (FORCED + 1) * len(runs), st
    assert st["lost"] > st["forced"], st


NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 16; }}
http {{
  access_log off;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  server {{
    listen {addr}:{port} proxy_protocol;
    root {d}/www;
    add_header X-Client "$proxy_protocol_addr $proxy_protocol_port";
  }}
}}
"""

FETCH = """
import http.client, json, random, sys
c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=60)
c.request("GET", "/blob")
r = c.getresponse()
body = r.read()
want = random.Random(int(sys.argv[3])).randbytes(int(sys.argv[4]))
print(json.dumps({"status": r.status, "client": r.getheader("X-Client"),
                  "local": c.sock.getsockname()[1], "same": body == want}))
"""


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_nginx_reads_the_header_and_serves_a_download_with_loss(version,
                                                                  tmp_path):
    nginx = shutil.which("nginx", path=os.environ.get("PATH", "") +
                         ":/usr/sbin:/sbin")
    if nginx is None:
        pytest.skip("nginx is not installed (scripts/deps.sh)")
    size = 4000000
    d = tmp_path / "nginx"
    (d / "www").mkdir(parents=True)
    (d / "www" / "blob").write_bytes(random.Random(5).randbytes(size))
    conf = d / "nginx.conf"
    conf.write_text(NGINX_CONF.format(d=d, addr=BACKEND, port=NGINX_PORT))
    with lab(tmp_path, version, 12) as (lb, result):
        lb.start(lb.nsb, [nginx, "-p", str(d), "-c", str(conf),
                          "-e", str(d / "error.log")], "nginx",
                 lambda out: (d / "nginx.pid").exists())
        for _ in range(2):
            got = json.loads(lb.client(PYTHON, "-c", FETCH, BACKEND,
                                       str(NGINX_PORT), "5", str(size)))
            assert got["status"] == 200, got
            assert got["same"], got
            assert got["client"] == "%s %d" % (CLIENT, got["local"]), got
    st = result["stats"]
    assert st is not None and st["refused"] == 0, st
    assert st["forced"] == 2 * FORCED, st


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
