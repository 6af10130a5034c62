# SPDX-License-Identifier: BSD-3-Clause
"""Full NAT in the one-armed live lab (scripts/lab-netns.sh --one-armed
--fnat, docs/lab.md): the appliance's single routed port on the
backends' bridge with its kernel_if, backends that have only an address
and a default route to the router (no VIP, no route through the
appliance), real kernel clients in the client namespace behind the
router. What the backends see is what their own sockets say.

- TCP and UDP through fnat services (Maglev): every backend sees its
  connections and datagrams come from the pool address; the stats and
  lb_service_list agree with what the clients saw;
- PROXY protocol v1 and v2 into nginx (listen ... proxy_protocol,
  $proxy_protocol_addr in its access log) and HAProxy (bind ...
  accept-proxy, %ci in its log): both log the client's real address and
  port;
- byte-exact transfers of several MB, download and upload, over PROXY v1
  and v2, with 1-2% of the packets dropped by nftables on both legs and
  the first data segment of every connection dropped once at the
  backend (the PROXY header is sent again with its retransmission);
- an IPv6 VIP on the IPv4 backends (TCP, UDP, PROXY v2 with the
  client's IPv6 address);
- a pool of one address and four ports: more connections than ports are
  dropped and counted (fnat_no_port), nothing crashes, and once the held
  connections are closed and aged out new ones work again;
- the pool address is the port's own address (shared): the kernel_if
  still answers ping and TCP on it, and its own outgoing TCP works, while
  fnat connections use the same address.

Root, network namespaces and /dev/net/tun needed, nginx-light, haproxy
and nftables for their parts (scripts/deps.sh); skipped with the reason
otherwise. Until the daemon accepts "forward": "fnat" (and
"proxy_protocol"), every test here is skipped and says so. Bounded by
events and generous deadlines (the CI machine shares 2 CPUs)."""

import ctypes
import json
import os
import re
import shutil
import subprocess
import time

import pytest

import labutil
import pautil
from labutil import Lab, sh

STATIC_NEIGH = os.environ.get("PA_LAB_STATIC_NEIGH") == "1"
HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HERE, "fnat_helper.py")
EXCP = os.path.join(HERE, "excp_helper.py")

NGINX_PORT = 8081       # nginx in be1, PROXY v1 and v2
HAPROXY_PORT = 8082     # HAProxy in be2, PROXY v1 and v2
BULK_PORT = 9000        # fnat_helper.py bulk in be3
UDP_PEER_PORT = 5354    # fnat_helper.py udp-peer in every backend
KERNEL_PORT = 61001     # a listener of the appliance's kernel (k0)
MB = 1 << 20
BULK_BYTES = 3 * MB


# ------------------------------------------------------------------ lab

@pytest.fixture(scope="module")
def lab():
    why = labutil.namespaces_usable()
    if why is not None:
        pytest.skip(why)
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun: the one-armed lab's appliance has a "
                    "kernel_if (TAP)")
    labutil.reap_stale_labs()
    lb = Lab("f%d" % os.getpid(), STATIC_NEIGH, topology="one-armed",
             fnat=True)
    try:
        lb.up()
        yield lb
    finally:
        lb.down()


def die_with_parent():
    """In the child, before exec: killed when the test process dies (a
    timeout's kill leaves no server behind in a namespace)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)   # PR_SET_PDEATHSIG, KILL


class Procs:
    """Servers in the lab's namespaces, each stopped at the end of the
    test (the namespaces going away does not stop a process)."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.procs = []

    def start(self, ns, args, name, ready=b"listening"):
        """Run args in ns, output to NAME.log; with ready, until its
        first line is that."""
        log = str(self.tmp / (name + ".log"))
        f = open(log, "wb")
        p = subprocess.Popen(["ip", "netns", "exec", ns] + list(args),
                             stdout=subprocess.PIPE if ready else f,
                             stderr=f, stdin=subprocess.DEVNULL,
                             preexec_fn=die_with_parent)
        p.log = log
        p.logf = f
        self.procs.append(p)
        if ready is not None:
            line = p.stdout.readline().strip()
            assert line == ready, "%s: %r\n%s" % (name, line, self.text(p))
            # the rest of what it prints goes to its log
            p.pump = subprocess.Popen(["cat"], stdin=p.stdout, stdout=f)
        return p

    def helper(self, ns, name, *args):
        return self.start(ns, [pautil.PYTHON, HELPER] + [str(a)
                                                          for a in args],
                          name)

    @staticmethod
    def text(p):
        p.logf.flush()
        with open(p.log, "rb") as f:
            return f.read().decode(errors="replace")

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            pump = getattr(p, "pump", None)
            if pump is not None:
                try:
                    pump.wait(20)
                except subprocess.TimeoutExpired:
                    pump.kill()
                    pump.wait()
            p.logf.close()


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    p.stop_all()


@pytest.fixture
def nft(lab):
    """nft(ns, ruleset): load a ruleset (tables of its own) into a lab
    namespace; the tables are deleted at the end of the test."""
    if shutil.which("nft") is None and not os.path.exists("/usr/sbin/nft"):
        pytest.skip("nft is not installed (Debian package nftables, "
                    "scripts/deps.sh): the loss tests drop packets with it")
    loaded = []

    def load(ns, ruleset):
        r = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                           input=ruleset.encode(), capture_output=True,
                           timeout=30)
        assert r.returncode == 0, "nft in %s: %s\n%s" % (
            ns, r.stderr.decode(), ruleset)
        for m in re.finditer(r"^table (\S+ \S+)", ruleset, re.M):
            loaded.append((ns, m.group(1)))

    yield load
    for ns, table in loaded:
        sh(["ip", "netns", "exec", ns, "nft", "delete", "table"] +
           table.split())


def nft_counters(ns, table):
    """{comment or rule handle: packets} of the counters in a table."""
    r = sh(["ip", "netns", "exec", ns, "nft", "-j", "list", "table"] +
           table.split(), check=True)
    out = {}
    for e in json.loads(r.stdout.decode())["nftables"]:
        rule = e.get("rule")
        if rule is None:
            continue
        for x in rule["expr"]:
            if "counter" in x:
                out[rule.get("comment", rule["handle"])] = \
                    x["counter"]["packets"]
    return out


# ------------------------------------------------------------------ appliance

FEATURE_MISSING = re.compile(
    r"(\S*(fnat|proxy_protocol)\S*: unknown key|"
    r"invalid value '(fnat|v1|v2)')")


def start_app(lab, tmp_path, mutate=None):
    """Appliance 1 on the lab's fnat configuration (mutate(cfg) may
    change it). Skips the test when this daemon does not have full NAT
    yet (its configuration refused for an fnat key or value)."""
    try:
        return lab.start_app(1, tmp_path, mutate)
    except AssertionError:
        d = lab.daemons[-1]
        if not d.alive():
            m = FEATURE_MISSING.search(d.stderr)
            if m is not None:
                lab.forget_sockets()
                pytest.skip("this pktaccel has no full NAT yet (issue 33): "
                            "its configuration is refused with %r" %
                            d.stderr.strip().splitlines()[-1])
        raise


def stop_app(lab, d):
    rc = d.stop(timeout=60)
    lab.forget_sockets()
    assert rc == 0, d.describe()
    assert "mbufs not returned" not in d.stderr, d.describe()


def stats(d):
    return d.call("stats_get")


def drops_delta(s0, s1, ignore=("local", "not_ours", "to_self")):
    return {k: s1["drops"][k] - s0["drops"].get(k, 0) for k in s1["drops"]
            if k not in ignore and s1["drops"][k] != s0["drops"].get(k, 0)}


def wait_for(what, cond, timeout=60, every=0.2):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("%s: not within %ds" % (what, timeout))
        time.sleep(every)


def backend(lab, addr, port, weight=1):
    b = lab.backend_of(addr)
    out = {"addr": addr, "weight": weight, "mac": b["mac"]}
    if port is not None:
        out["port"] = port
    return out


def svc(name, vip, port, proto, backends, proxy=None):
    s = {"name": name, "vip": vip, "port": port, "proto": proto,
         "forward": "fnat", "backends": backends}
    if proxy is not None:
        s["proxy_protocol"] = proxy
    return s


def lab_services(lab):
    """The services this file adds to the lab's (web-fnat, udp-fnat,
    web6-fnat, udp6-fnat): a UDP one answered with the peer address,
    PROXY v1 and v2 into nginx (be1) and HAProxy (be2), bulk transfers
    (be3) over v1 and v2, IPv4 and IPv6."""
    e = lab.env
    v4, v6 = e["VIP_FNAT"], e["VIP6_FNAT"]
    be = [b["addr"] for b in lab.backends]
    udp_peer = [backend(lab, a, UDP_PEER_PORT) for a in be]
    return [
        svc("udp-peer", v4, UDP_PEER_PORT, "udp", udp_peer),
        svc("udp6-peer", v6, UDP_PEER_PORT, "udp", udp_peer),
        svc("nginx-v1", v4, 81, "tcp", [backend(lab, be[0], NGINX_PORT)],
            "v1"),
        svc("nginx-v2", v4, 82, "tcp", [backend(lab, be[0], NGINX_PORT)],
            "v2"),
        svc("haproxy-v1", v4, 83, "tcp",
            [backend(lab, be[1], HAPROXY_PORT)], "v1"),
        svc("haproxy-v2", v4, 84, "tcp",
            [backend(lab, be[1], HAPROXY_PORT)], "v2"),
        svc("bulk-v1", v4, 91, "tcp", [backend(lab, be[2], BULK_PORT)],
            "v1"),
        svc("bulk-v2", v4, 92, "tcp", [backend(lab, be[2], BULK_PORT)],
            "v2"),
        svc("bulk6-v2", v6, 92, "tcp", [backend(lab, be[2], BULK_PORT)],
            "v2"),
    ]


def with_services(lab):
    def mutate(cfg):
        cfg["lb"]["services"] += lab_services(lab)
    return mutate


def client_helper(lab, *args, timeout=180):
    r = sh(lab.nsx(lab.ns("cli")) + [pautil.PYTHON, HELPER] +
           [str(a) for a in args], timeout=timeout)
    assert r.returncode == 0, "fnat_helper %s: %s" % (
        " ".join(map(str, args)), r.stderr.decode()[-3000:])
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def split_hp(hp):
    host, _, port = hp.rpartition(":")
    return host.strip("[]"), int(port)


def log_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace").splitlines()
    except OSError:
        return []


def json_lines(p):
    out = []
    for ln in Procs.text(p).splitlines():
        ln = ln.strip()
        if ln.startswith("{"):
            out.append(json.loads(ln))
    return out


def check_conns(lab, res, pool, what):
    """Every connection of a lab-client burst completed, at a backend
    that saw it come from the pool address; the backends that answered."""
    bad = [c for c in res["conns"] if c["error"] is not None]
    assert not bad, "%s: %d of %d failed, e.g. %s" % (
        what, len(bad), len(res["conns"]), bad[:5])
    wrong = []
    for c in res["conns"]:
        be = lab.backend_of(c["backend"])
        peer = split_hp(c["peer"])
        if peer[0] != pool or c["server_addr"] != "%s:%s" % (
                be["addr"], lab.env["NAT_BACKEND_PORT"]):
            wrong.append(c)
    assert not wrong, "%s: backends saw other than the pool %s: %s" % (
        what, pool, wrong[:5])
    # one pool port per connection at a time
    ports = [split_hp(c["peer"])[1] for c in res["conns"]]
    return res["backends"], ports


def tracer(d, in_port):
    c = d.client(timeout=20)

    def trace(src, sport, dst, dport, proto="tcp"):
        params = {"src": src, "dst": dst, "sport": sport, "dport": dport,
                  "proto": proto, "in_port": in_port}
        for _ in range(40):
            r = c.call_raw("trace_packet", params)
            # -32002: the lcore did not answer in time (shared CPU)
            if "error" not in r or r["error"]["code"] != -32002:
                break
            time.sleep(0.05)
        assert "error" not in r, "trace_packet %s: %s" % (params, r)
        return r["result"]
    trace.close = c.close
    return trace


def service_list(d):
    return {s["name"]: s for s in d.call("lb_service_list")}


# ------------------------------------------------------------------ tests

def test_fnat_tcp_udp_backends_see_the_pool(lab, tmp_path, procs):
    """TCP and UDP through fnat (Maglev) from real kernel clients through
    the router: each backend's socket sees the pool address as its peer
    (never the client), the connections spread over the backends, and
    stats_get / lb_service_list count what the clients saw."""
    e = lab.env
    vip, pool = e["VIP_FNAT"], e["APP1_POOL"]
    clients = e["CLI_ADDRS"].split()
    for b in lab.backends:
        procs.helper(b["ns"], "udp-" + b["name"], "udp-peer", b["addr"],
                     UDP_PEER_PORT, b["name"])
    d = start_app(lab, tmp_path, with_services(lab))
    try:
        lab.wait_service(vip, timeout=60)
        s0 = stats(d)
        l0 = service_list(d)
        n = 90
        res = lab.burst(vip, n, concurrency=15, src=",".join(clients))
        per, ports = check_conns(lab, res, pool, "tcp")
        assert len(per) == lab.n_backends, per

        # open connections: trace_packet names the pool address and port
        # each holds (the one its backend sees), and a backend's reply to
        # them the client it goes back to
        held = lab.hold(vip, 12, src=",".join(clients))
        trace = tracer(d, e["APP1_IF"])
        try:
            for c in held.conns:
                assert c["error"] is None, c
                be = lab.backend_of(c["backend"])
                paddr, pport = split_hp(c["peer"])
                t = trace(c["src"], c["sport"], vip, 80)
                assert t["existing_flow"] and t["backend"] == be["addr"] \
                    and t["fnat"]["held"] and t["fnat"]["addr"] == pool \
                    and t["fnat"]["port"] == pport, (c, t)
                r = trace(be["addr"], int(e["NAT_BACKEND_PORT"]), paddr,
                          pport)
                assert r["fnat_reply"]["match"] == "flow" and \
                    r["fnat_reply"]["service"] == "web-fnat" and \
                    r["fnat_reply"]["client"] == c["src"] and \
                    r["fnat_reply"]["client_port"] == c["sport"] and \
                    r["fnat_reply"]["vip"] == vip, (c, r)
        finally:
            trace.close()
            held.close()

        # UDP: the backend's socket answers with the source it saw
        u = client_helper(lab, "udp-ask", vip, UDP_PEER_PORT, 30,
                          ",".join(clients))
        lost = [x for x in u if x["reply"] is None]
        assert not lost, "udp: %d of %d unanswered: %s" % (
            len(lost), len(u), lost[:5])
        seen = {}
        for x in u:
            name, peer = x["reply"].split()
            host, port = split_hp(peer)
            assert host == pool, "udp: %s saw %s, not the pool %s" % (
                name, peer, pool)
            seen[name] = seen.get(name, 0) + 1
        assert len(seen) > 1, seen
        # the lab's own udp-fnat service (lab-backend.py) answers too
        u = client_helper(lab, "udp-ask", vip, e["UDP_PORT"], 6)
        assert all(x["reply"] and x["reply"].split()[0] in lab.by_name
                   for x in u), u

        s1 = stats(d)
        l1 = service_list(d)
        created = s1["lb"]["flows_created"] - s0["lb"]["flows_created"]
        assert created >= n + 12 + 30 + 6, (s0["lb"], s1["lb"])
        # the full-NAT counters: as many fnat flows, replies translated,
        # none unmatched, the pool as configured
        f0, f1 = s0["lb"]["fnat"], s1["lb"]["fnat"]
        fd = {k: f1[k] - f0[k] for k in f1 if isinstance(f1[k], int)}
        assert fd["flows_created"] >= n + 12 + 30 + 6, fd
        # a SYN-ACK and an answer at least per connection, an answer per
        # datagram
        assert fd["replies"] >= 2 * n + 30 + 6, fd
        assert fd["reply_unmatched"] == 0, fd
        assert fd["xlat_failed"] == 0 and fd["no_port"] == 0, fd
        assert [p["addr"] for p in f1["pool"]] == [pool], f1
        lost = drops_delta(s0, s1)
        assert not lost, (lost, s1["drops"])
        # per backend: those that answered the clients, and only they,
        # were sent packets
        for name, want in (("web-fnat", per), ("udp-peer", seen)):
            got = {}
            for b0, b1 in zip(l0[name]["backends"], l1[name]["backends"]):
                dp = b1["packets"] - b0["packets"]
                if dp:
                    got[lab.backend_of(b1["addr"])["name"]] = dp
            assert set(got) == set(want), (name, got, want)
            for k, v in want.items():
                # at least the SYN, the request and the ACKs (TCP), or a
                # datagram (UDP), per flow
                assert got[k] >= v, (name, got, want)
    finally:
        stop_app(lab, d)


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{ worker_connections 64; }}
http {{
    log_format pp '$proxy_protocol_addr $proxy_protocol_port '
                  '$remote_addr $remote_port "$request"';
    access_log {dir}/access.log pp;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    server {{
        listen {addr}:{port} proxy_protocol;
        location / {{
            default_type text/plain;
            return 200 "nginx $proxy_protocol_addr $proxy_protocol_port\\n";
        }}
    }}
}}
"""

HAPROXY_CONF = """
global
    log stdout format raw local0
defaults
    mode http
    log global
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend pp
    bind {addr}:{port} accept-proxy
    log-format "haproxy %ci %cp %fi %fp %{{+Q}}r"
    http-request return status 200 content-type text/plain lf-string "haproxy %[src] %[src_port]\\n"
"""


def find_exe(name):
    p = shutil.which(name)
    if p is None and os.path.exists("/usr/sbin/" + name):
        p = "/usr/sbin/" + name
    return p


def test_fnat_proxy_protocol_nginx_haproxy_log_the_client(lab, tmp_path,
                                                          procs):
    """PROXY v1 and v2 into real servers that read it: nginx (listen ...
    proxy_protocol) in be1 and HAProxy (bind ... accept-proxy) in be2,
    each on a config of its own in a temporary directory, in the
    foreground: their logs name every client's real address and port
    (and nginx's the pool address as the connection's peer)."""
    nginx, haproxy = find_exe("nginx"), find_exe("haproxy")
    if nginx is None or haproxy is None:
        pytest.skip("nginx (Debian nginx-light) or haproxy is not "
                    "installed (scripts/deps.sh)")
    e = lab.env
    vip, pool = e["VIP_FNAT"], e["APP1_POOL"]
    clients = e["CLI_ADDRS"].split()
    be1, be2 = lab.backends[0], lab.backends[1]
    nd = tmp_path / "nginx"
    nd.mkdir()
    (nd / "nginx.conf").write_text(NGINX_CONF.format(
        dir=nd, addr=be1["addr"], port=NGINX_PORT))
    hd = tmp_path / "haproxy"
    hd.mkdir()
    (hd / "haproxy.cfg").write_text(HAPROXY_CONF.format(
        addr=be2["addr"], port=HAPROXY_PORT))
    procs.start(be1["ns"], [nginx, "-e", str(nd / "error.log"), "-p",
                            str(nd), "-c", str(nd / "nginx.conf")],
                "nginx", ready=None)
    hp = procs.start(be2["ns"], [haproxy, "-db", "-f",
                                 str(hd / "haproxy.cfg")],
                     "haproxy", ready=None)
    for ns, port in ((be1["ns"], NGINX_PORT), (be2["ns"], HAPROXY_PORT)):
        wait_for("a listener on port %d in %s" % (port, ns), lambda: b"LISTEN"
                 in sh(["ip", "netns", "exec", ns, "ss", "-Hltn",
                        "sport = :%d" % port]).stdout, timeout=30)

    d = start_app(lab, tmp_path, with_services(lab))
    try:
        lab.wait_service(vip, timeout=60)
        s0 = stats(d)
        asked = []
        for i in range(6):
            src = clients[i % len(clients)]
            for port, server in ((81, "nginx"), (82, "nginx"),
                                 (83, "haproxy"), (84, "haproxy")):
                path = "/c%d-%d" % (i, port)
                r = client_helper(lab, "http", vip, port, path, src)
                host, sport = split_hp(r["local"])
                assert r["status"] == 200, r
                # the server answers with what the PROXY header told it
                assert r["body"].split() == [server, host, str(sport)], \
                    (port, r)
                asked.append((server, path, host, sport, port))

        def logged():
            lines = {"nginx": log_lines(str(nd / "access.log")),
                     "haproxy": Procs.text(hp).splitlines()}
            found = {}
            for server, path, host, sport, port in asked:
                for ln in lines[server]:
                    if (" %s " % path) in ln:
                        found[path] = (server, ln.split(), host, sport,
                                       port)
            return found if len(found) == len(asked) else None
        found = wait_for("every request in the servers' logs", logged,
                         timeout=30)
        for path, (server, f, host, sport, port) in found.items():
            # nginx: the PROXY header's address and port, then the TCP
            # peer (the pool); HAProxy: %ci %cp %fi %fp, all four from
            # the PROXY header (the client, the VIP and its port)
            if server == "nginx":
                assert f[0] == host and f[1] == str(sport) and \
                    f[2] == pool, (path, f)
            else:
                assert f[1:5] == [host, str(sport), vip, str(port)], \
                    (path, f)
        s1 = stats(d)
        lost = drops_delta(s0, s1)
        assert not lost, (lost, s1["drops"])
    finally:
        stop_app(lab, d)


LOSS = """
table inet paloss {{
    chain in {{
        type filter hook input priority 0; policy accept;
        tcp dport {port} numgen random mod 100 < {pct} counter drop comment "in"
    }}
    chain out {{
        type filter hook output priority 0; policy accept;
        tcp sport {port} numgen random mod 100 < {pct} counter drop comment "out"
    }}
}}
table inet pafirst {{
    set seen {{
        type ipv4_addr . inet_service
        flags dynamic
        timeout 10m
    }}
    chain in {{
        type filter hook input priority -10; policy accept;
        tcp dport {port} tcp flags & (syn | fin | rst) == 0 ip length > 52 ip saddr . tcp sport != @seen add @seen {{ ip saddr . tcp sport }} counter drop comment "first"
    }}
}}
"""

LOSS_RTR = """
table inet paloss {{
    chain fw {{
        type filter hook forward priority 0; policy accept;
        tcp dport {{ {ports} }} numgen random mod 100 < {pct} counter drop comment "up"
        tcp sport {{ {ports} }} numgen random mod 100 < {pct} counter drop comment "down"
    }}
}}
"""


def test_fnat_proxy_transfers_byte_exact_with_loss(lab, tmp_path, procs,
                                                   nft):
    """Several MB down and up over PROXY v1 and v2, with 2% of the
    packets dropped both ways between appliance and backend, 1% both
    ways at the router, and the first data segment of every connection
    dropped once at the backend: the SHA-256 of the bytes is the same on
    both sides, and the backend read a PROXY header naming the client
    before the first byte of each connection."""
    e = lab.env
    vip, pool = e["VIP_FNAT"], e["APP1_POOL"]
    clients = e["CLI_ADDRS"].split()
    be3 = lab.backends[2]
    bulk = procs.helper(be3["ns"], "bulk", "bulk", be3["addr"], BULK_PORT)
    d = start_app(lab, tmp_path, with_services(lab))
    try:
        lab.wait_service(vip, timeout=60)
        nft(be3["ns"], LOSS.format(port=BULK_PORT, pct=2))
        nft(lab.ns("rtr"), LOSS_RTR.format(ports="91, 92", pct=1))
        s0 = stats(d)
        runs = []
        for i, (cmd, port) in enumerate((("get", 91), ("put", 91),
                                         ("get", 92), ("put", 92))):
            src = clients[i % len(clients)]
            r = client_helper(lab, cmd, vip, port, BULK_BYTES, 1000 + i,
                              src)
            runs.append((cmd, port, r))
            if cmd == "get":
                assert r["n"] == BULK_BYTES and r["sha256"] == r["expect"], \
                    (port, r)
            else:
                assert r["server"] == r["sha256"], (port, r)
        # the server's side of each connection
        logs = wait_for("the bulk server's record of 4 connections",
                        lambda: (lambda x: x if len(x) >= 4 else None)(
                            json_lines(bulk)), timeout=30)
        by_client = {}
        for rec in logs:
            assert rec["error"] is None, rec
            assert split_hp(rec["peer"])[0] == pool, rec
            p = rec["proxy"]
            assert p is not None, "no PROXY header: %s" % rec
            by_client[(p["src"], p["sport"])] = rec
        for cmd, port, r in runs:
            host, sport = split_hp(r["local"])
            rec = by_client.get((host, sport))
            assert rec is not None, "no connection from %s:%d at the " \
                "server: %s" % (host, sport, logs)
            p = rec["proxy"]
            assert p["version"] == (1 if port == 91 else 2), rec
            assert p["proto"] == "TCP4" and p["dst"] == vip and \
                p["dport"] == port, rec
            assert rec["cmd"] == cmd.upper() and rec["n"] == BULK_BYTES \
                and rec["sha256"] == r["sha256"], (rec, r)
        # the loss happened: on every leg, and each first data segment
        c = nft_counters(be3["ns"], "inet paloss")
        f = nft_counters(be3["ns"], "inet pafirst")
        rt = nft_counters(lab.ns("rtr"), "inet paloss")
        assert f["first"] >= 4, f
        assert c["in"] > 0 and c["out"] > 0 and rt["up"] > 0 and \
            rt["down"] > 0, (c, rt)
        print("bulk: %s; dropped at the backend %s, first segments %s, at "
              "the router %s" % ([(cmd, port, round(r["elapsed"], 2))
                                  for cmd, port, r in runs], c, f, rt))
        s1 = stats(d)
        lost = drops_delta(s0, s1)
        assert not lost, (lost, s1["drops"])
        f0, f1 = s0["lb"]["fnat"], s1["lb"]["fnat"]
        assert f1["proxy_failed"] == f0["proxy_failed"] and \
            f1["reply_unmatched"] == f0["reply_unmatched"], (f0, f1)
    finally:
        stop_app(lab, d)


def test_fnat_ipv6_vip_on_ipv4_backends(lab, tmp_path, procs):
    """An IPv6 VIP in front of the IPv4-only backends: the client speaks
    IPv6 to the router; TCP (lab-backend.py) and UDP reach the backends
    from the IPv4 pool; over PROXY v2 the backend learns the client's
    IPv6 address and port (TCP6) and a MB comes back byte-exact."""
    e = lab.env
    vip6, pool = e["VIP6_FNAT"], e["APP1_POOL"]
    clients6 = e["CLI_ADDRS6"].split()
    for b in lab.backends:
        r = sh(["ip", "-n", b["ns"], "-6", "addr", "show", "scope",
                "global"], check=True)
        assert r.stdout.strip() == b"", "%s has IPv6: %s" % (b["name"],
                                                             r.stdout)
        procs.helper(b["ns"], "udp-" + b["name"], "udp-peer", b["addr"],
                     UDP_PEER_PORT, b["name"])
    be3 = lab.backends[2]
    bulk = procs.helper(be3["ns"], "bulk", "bulk", be3["addr"], BULK_PORT)
    d = start_app(lab, tmp_path, with_services(lab))
    try:
        lab.wait_service(vip6, timeout=60)
        s0 = stats(d)
        res = lab.burst(vip6, 45, concurrency=15, src=",".join(clients6))
        per, _ = check_conns(lab, res, pool, "tcp over IPv6")
        assert len(per) > 1, per

        u = client_helper(lab, "udp-ask", vip6, UDP_PEER_PORT, 15,
                          ",".join(clients6))
        for x in u:
            assert x["reply"] is not None, u
            name, peer = x["reply"].split()
            assert split_hp(peer)[0] == pool, x

        r = client_helper(lab, "get", vip6, 92, MB, 77, clients6[1])
        assert r["n"] == MB and r["sha256"] == r["expect"], r
        host, sport = split_hp(r["local"])
        rec = wait_for("the bulk server's record", lambda: json_lines(bulk),
                       timeout=30)[-1]
        assert rec["error"] is None and split_hp(rec["peer"])[0] == pool, \
            rec
        p = rec["proxy"]
        assert p["version"] == 2 and p["proto"] == "TCP6" and \
            p["src"] == host and p["sport"] == sport and \
            p["dst"] == vip6 and p["dport"] == 92, rec
        s1 = stats(d)
        lost = drops_delta(s0, s1)
        assert not lost, (lost, s1["drops"])
        f0, f1 = s0["lb"]["fnat"], s1["lb"]["fnat"]
        assert f1["xlat_failed"] == f0["xlat_failed"] and \
            f1["flows_created"] - f0["flows_created"] >= 45 + 15 + 1, \
            (f0, f1)
    finally:
        stop_app(lab, d)


def test_fnat_pool_exhaustion_counted_then_recovers(lab, tmp_path):
    """A pool of one address and four ports: four connections held open
    take them all; more are dropped and counted (fnat_no_port), the
    appliance keeps running; once the four are closed and their ports
    aged out (time_wait_s 1, short flow timeouts) new connections work
    again."""
    e = lab.env
    vip, pool = e["VIP_FNAT"], e["APP1_POOL"]
    n_ports = 4

    def mutate(cfg):
        cfg["lb"]["fnat"] = {"addrs": [pool], "ports": "40000-40003",
                             "time_wait_s": 1}
        cfg["lb"]["flow_table"].update(tcp_fin_timeout=1, udp_timeout=2)
    d = start_app(lab, tmp_path, mutate)
    held = None
    try:
        # ready: one connection at a time until one completes
        wait_for("a first connection through a pool of four ports",
                 lambda: lab.burst(vip, 1, concurrency=1,
                                   timeout=3)["ok"] == 1, timeout=60,
                 every=0.5)

        def take_all():
            h = lab.hold(vip, n_ports, timeout=5)
            if all(c["error"] is None for c in h.conns):
                return h
            h.close()
            return None
        # the first connection's port is free again after its close and
        # time_wait_s: until the four all get one
        held = wait_for("%d held connections" % n_ports, take_all,
                        timeout=60, every=0.5)
        for c in held.conns:
            assert split_hp(c["peer"])[0] == pool, c
        ports = {split_hp(c["peer"])[1] for c in held.conns}
        assert ports == set(range(40000, 40000 + n_ports)), ports

        s0 = stats(d)
        assert [(p["addr"], p["ports"], p["in_use"])
                for p in s0["lb"]["fnat"]["pool"]] == \
            [(pool, n_ports, n_ports)], s0["lb"]["fnat"]
        extra = lab.burst(vip, 6, concurrency=6, timeout=4)
        assert extra["ok"] == 0, "connections beyond the pool's ports " \
            "completed: %s" % extra
        s1 = stats(d)
        assert d.alive(), d.describe()
        no_port = s1["drops"]["fnat_no_port"] - s0["drops"]["fnat_no_port"]
        assert no_port >= 6, (s0["drops"], s1["drops"])
        assert s1["lb"]["fnat"]["no_port"] - s0["lb"]["fnat"]["no_port"] \
            == no_port, (s0["lb"]["fnat"], s1["lb"]["fnat"])
        # the held ones still work
        for c in held.round():
            assert c["error"] is None, c
        held.close()
        held = None

        # their ports age out: then new connections get them again
        def again():
            r = lab.burst(vip, n_ports, concurrency=n_ports, timeout=3)
            return r if r["ok"] == n_ports else None
        r = wait_for("new connections after the pool's ports aged out",
                     again, timeout=60, every=1)
        for c in r["conns"]:
            assert split_hp(c["peer"])[0] == pool and \
                40000 <= split_hp(c["peer"])[1] < 40000 + n_ports, c
        s2 = stats(d)
        lost = drops_delta(s0, s2, ignore=("local", "not_ours", "to_self",
                                           "fnat_no_port"))
        assert not lost, (lost, s2["drops"])
    finally:
        if held is not None:
            held.kill()
        stop_app(lab, d)


def excp(ns, *args, timeout=60):
    r = sh(["ip", "netns", "exec", ns, pautil.PYTHON, EXCP] +
           [str(a) for a in args], timeout=timeout)
    assert r.returncode == 0, "%s in %s: %s" % (args, ns,
                                                r.stderr.decode()[-3000:])
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def test_fnat_pool_shares_the_port_address(lab, tmp_path):
    """The pool is the port's own address (one address, shared), its
    ports 1024-32767 as configuration.md advises (the kernel's listeners
    and ephemeral ports, 32768-60999, stay out of them): fnat connections
    come from it while the kernel_if keeps it too: ping from the router,
    TCP to a listener bound to it, and TCP from the appliance's namespace
    out to a backend, all answered, with fnat connections held open
    across; then fnat again."""
    e = lab.env
    vip = e["VIP_FNAT"]
    addr = e["APP1_ADDR"]
    app_ns, rtr_ns = lab.ns("app1"), lab.ns("rtr")
    clients = e["CLI_ADDRS"].split()

    def mutate(cfg):
        cfg["lb"]["fnat"] = {"addrs": [addr], "ports": "1024-32767"}
    d = start_app(lab, tmp_path, mutate)
    held = None
    try:
        lab.wait_service(vip, timeout=60)
        res = lab.burst(vip, 30, concurrency=10, src=",".join(clients))
        check_conns(lab, res, addr, "tcp from the shared address")
        held = lab.hold(vip, 10, src=",".join(clients))
        assert all(c["error"] is None and split_hp(c["peer"])[0] == addr
                   for c in held.conns), held.conns
        x0 = stats(d)["excp"]["interfaces"][e["APP1_IF"]]

        # the kernel_if: ping, and TCP in to a listener on the address
        p = excp(rtr_ns, "ping", addr, 5)
        assert p["received"] == p["sent"], p
        srv = subprocess.Popen(["ip", "netns", "exec", app_ns,
                                pautil.PYTHON, EXCP, "serve", addr,
                                str(KERNEL_PORT)],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        try:
            assert srv.stdout.readline().strip() == b"listening"
            c = excp(rtr_ns, "connect", addr, KERNEL_PORT, 200000)
            assert c["same"] and c["echoed"] == 200000, c
        finally:
            try:
                srv.wait(30)
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()
        # ... and TCP out of the appliance's namespace to a backend, from
        # the shared address and a port of the kernel's
        be = lab.backends[0]
        for _ in range(3):
            r = sh(["ip", "netns", "exec", app_ns, pautil.PYTHON, "-c",
                    "import urllib.request as u; print(u.urlopen("
                    "'http://%s:%s/', timeout=15).read().decode())" % (
                        be["addr"], e["NAT_BACKEND_PORT"])], timeout=60)
            assert r.returncode == 0, r.stderr.decode()[-2000:]
            answer = r.stdout.decode().split()
            assert answer[0] == be["name"] and \
                split_hp(answer[1])[0] == addr, answer
        x1 = stats(d)["excp"]["interfaces"][e["APP1_IF"]]
        assert x1["to_kernel"] - x0["to_kernel"] >= 10 and \
            x1["from_kernel"] - x0["from_kernel"] >= 10, (x0, x1)

        # the held fnat connections went on through all that
        for c in held.round():
            assert c["error"] is None, c
        held.close()
        held = None
        res = lab.burst(vip, 30, concurrency=10, src=",".join(clients))
        check_conns(lab, res, addr, "tcp from the shared address, after")
        st = stats(d)
        x = st["excp"]["interfaces"][e["APP1_IF"]]
        assert x["to_kernel_dropped"] == 0 and \
            x["from_kernel_foreign"] == 0, x
    finally:
        if held is not None:
            held.kill()
        stop_app(lab, d)
