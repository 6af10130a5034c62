# SPDX-License-Identifier: BSD-3-Clause
"""The PROXY protocol headers lib/lb makes (lb_proxy_build(), through the
small tool build/tests/unit/lb/lb_proxy_hdr) read by real PROXY readers:
nginx (listen ... proxy_protocol) and HAProxy (bind ... accept-proxy),
each on the loopback, answering an HTTP request with the client and
server addresses and ports it took from the header. v1 and v2, IPv4 and
IPv6 clients, the longest v1 line. The unit suite (test_lb_proxy) pins
the bytes; this checks that the readers agree with them."""

import contextlib
import ipaddress
import os
import shutil
import socket
import subprocess
import time

import pytest

from pautil import BUILD

TOOL = os.path.join(BUILD, "tests", "unit", "lb", "lb_proxy_hdr")
START_TIMEOUT = 20.0

CASES = [
    ("192.0.2.33", "192.0.2.10", 40000, 80),
    ("10.0.0.1", "255.255.255.255", 1, 65535),
    ("2001:db8:1::1", "2001:db8:ffff::40", 40000, 443),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
     "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, 65535),
    ("::ffff:192.0.2.1", "::1", 1234, 8443),
    ("fe80::1:0:0:1", "1::", 5, 6),
]

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
    listen 127.0.0.1:{port} proxy_protocol;
    location / {{
      return 200 "$proxy_protocol_addr $proxy_protocol_port $proxy_protocol_server_addr $proxy_protocol_server_port\\n";
    }}
  }}
}}
"""

HAPROXY_CONF = """global
  log stderr format raw local0
defaults
  mode http
  timeout client 10s
  timeout connect 10s
  timeout server 10s
frontend fe
  bind 127.0.0.1:{port} accept-proxy
  http-request return status 200 content-type text/plain lf-string "%[src] %[src_port] %[dst] %[dst_port]\\n"
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def header(version, src, dst, sport, dport):
    return subprocess.run([TOOL, version, src, dst, str(sport), str(dport)],
                          capture_output=True, check=True, timeout=10).stdout


def ask(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(data + b"GET / HTTP/1.0\r\nHost: t\r\n\r\n")
        r = b""
        while True:
            x = c.recv(4096)
            if not x:
                break
            r += x
    head, _, body = r.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 200 " in head.split(b"\r\n")[0], r
    return body.decode().split()


@contextlib.contextmanager
def server(kind, tmp_path):
    """nginx or haproxy on a free loopback port, waited for; yields the
    port."""
    exe = shutil.which(kind, path=os.environ.get("PATH", "") +
                       ":/usr/sbin:/sbin")
    if exe is None:
        pytest.skip("%s is not installed (scripts/deps.sh)" % kind)
    if not os.access(TOOL, os.X_OK):
        pytest.skip("%s is not built" % TOOL)
    d = tmp_path / kind
    d.mkdir()
    port = free_port()
    if kind == "nginx":
        conf = d / "nginx.conf"
        conf.write_text(NGINX_CONF.format(d=d, port=port))
        argv = [exe, "-p", str(d), "-c", str(conf), "-e", str(d / "error.log")]
    else:
        conf = d / "haproxy.cfg"
        conf.write_text(HAPROXY_CONF.format(port=port))
        argv = [exe, "-f", str(conf), "-db"]
    log = open(d / "out.log", "wb")
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert p.poll() is None, "%s exited: %s" % (
                kind, (d / "out.log").read_text(errors="replace"))
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "%s did not listen" % kind
                time.sleep(0.1)
        yield port
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()


@pytest.mark.parametrize("kind", ["nginx", "haproxy"])
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_reader_takes_the_client_from_the_header(kind, version, tmp_path):
    with server(kind, tmp_path) as port:
        for src, dst, sport, dport in CASES:
            h = header(version, src, dst, sport, dport)
            got = ask(port, h)
            assert len(got) == 4, (src, got)
            assert ipaddress.ip_address(got[0]) == ipaddress.ip_address(src)
            assert int(got[1]) == sport
            assert ipaddress.ip_address(got[2]) == ipaddress.ip_address(dst)
            assert int(got[3]) == dport
