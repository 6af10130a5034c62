# SPDX-License-Identifier: BSD-3-Clause
"""The one-armed live lab (scripts/lab-netns.sh --one-armed, docs/lab.md):
the appliance's single routed port on the backends' bridge, beside the
router, its own peer, with the kernel exception path (kernel_if k0).

Issue 13 found that such an appliance, then in promiscuous mode and
sending every frame it did not balance back out of the port with its
original MACs, taught the bridge the backends' MACs on the appliance's
port, so that its own dsr frames to a backend came back to it: new
connections to the VIP timed out. Here, with real kernel TCP from the
client namespace through the router:
- frames for a foreign MAC, sent by every backend onto the bridge (which
  floods them to the appliance's port too), are dropped `not_ours`;
  every frame that leaves the appliance carries its own MAC as source
  (captured on the bridge port); the bridge never learns a backend's MAC
  (nor the router's, nor the client's) on the appliance's port;
- dsr and nat connections complete, each at the backend trace_packet
  names;
- the exception path: ping from the router to the appliance's address
  (which is lb.local_addr too: one address, shared),
  TCP to a listener bound to it in the appliance's namespace (from the
  router and from the client), TCP from the appliance's namespace to a
  backend out through the DPDK port;
- the appliance stops with status 0, its TAP removed, no mbuf leaked.

Root and network namespaces needed; skipped otherwise. Bounded by events
and generous deadlines (the CI machine shares 2 CPUs)."""

import json
import os
import subprocess
import time

import pytest

import labutil
import pautil
from labutil import Capture, Lab, sh

STATIC_NEIGH = os.environ.get("PA_LAB_STATIC_NEIGH") == "1"
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "excp_helper.py")
FOREIGN_MAC = "02:1a:ff:00:00:99"     # nobody's: the bridge floods it
FOREIGN_PER_BACKEND = 100
LISTEN_PORT = 7001


@pytest.fixture(scope="module")
def lab():
    why = labutil.namespaces_usable()
    if why is not None:
        pytest.skip(why)
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun: the one-armed lab's appliance has a "
                    "kernel_if (TAP)")
    labutil.reap_stale_labs()
    lb = Lab("o%d" % os.getpid(), STATIC_NEIGH, topology="one-armed")
    try:
        lb.up()
        yield lb
    finally:
        lb.down()


def helper(ns, *args, timeout=60):
    r = sh(["ip", "netns", "exec", ns, pautil.PYTHON, HELPER] +
           [str(a) for a in args], timeout=timeout)
    assert r.returncode == 0, "%s in %s: %s" % (args, ns,
                                                r.stderr.decode()[-3000:])
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def fdb_on(lab, dev):
    """MACs the router's bridge has learned on bridge port dev."""
    r = sh(["bridge", "-n", lab.ns("rtr"), "-j", "fdb", "show", "br",
            lab.env["RTR_BR"]], check=True)
    return {e["mac"] for e in json.loads(r.stdout.decode() or "[]")
            if e.get("ifname") == dev and "permanent" not in
            e.get("state", "") and "self" not in e.get("flags", [])}


def stats(d):
    return d.call("stats_get")


def wait_for(what, cond, timeout=30, every=0.2):
    """Poll cond() until it returns a true value; fail with what."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("%s: not within %ds" % (what, timeout))
        time.sleep(every)


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


class Listener:
    """excp_helper.py serve ADDR PORT in a namespace: one connection,
    echoed."""

    def __init__(self, ns, addr, port):
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, pautil.PYTHON, HELPER, "serve",
             addr, str(port)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().strip()
        assert line == b"listening", (line, self.proc.stderr.read())

    def wait(self):
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("listener still waiting after 30 s")


def test_onearm_script_topology_config_route(lab):
    """up --one-armed: one appliance slot whose config has one routed port
    (addr, gateway the router, its own peer, kernel_if), dsr and nat
    services; env/status know the topology; the VIPs are routed to the
    appliance's address on the bridge; route takes only 1 or none."""
    e = lab.env
    assert e["TOPOLOGY"] == "one-armed" and e["APPS"] == "1", e
    assert "NS_APP2" not in e, e
    cfg = lab.config(1)
    assert len(cfg["ports"]) == 1, cfg["ports"]
    p = cfg["ports"][0]
    assert p["addr"] == [e["APP1_ADDR"] + "/24"], p
    assert "peer" not in p or p["peer"] == p["name"], p
    assert p["kernel_if"] == e["APP1_KERNEL_IF"], p
    if STATIC_NEIGH:
        assert p["gateway_mac"] == e["RTR_BR_MAC"], p
    else:
        assert p["gateway"] == e["RTR_BR_ADDR"], p
    assert sorted(s["forward"] for s in cfg["lb"]["services"]) == \
        ["dsr", "dsr", "nat", "nat"], cfg["lb"]["services"]
    # one address, shared: the exception path below works all the same
    assert cfg["lb"]["local_addr"] == e["APP1_ADDR"], cfg["lb"]

    r = sh([labutil.LAB_SH, "status", "--name", lab.name], check=True)
    out = r.stdout.decode()
    assert "topology: one-armed" in out and "app2" not in out, out
    r = sh(["ip", "-n", lab.ns("rtr"), "route", "show", "10.99.0.0/24"],
           check=True)
    assert ("via %s dev %s" % (e["APP1_ADDR"], e["RTR_BR"])).encode() \
        in r.stdout, r.stdout
    r = sh([labutil.LAB_SH, "route", "2", "--name", lab.name])
    assert r.returncode == 1 and b"one appliance" in r.stderr, r
    # up again: the same lab, left as it is
    ino = os.stat("/run/netns/" + lab.ns("rtr")).st_ino
    r = sh([labutil.LAB_SH, "up", "--one-armed", "--name", lab.name] +
           (["--static-neigh"] if STATIC_NEIGH else []), timeout=120,
           check=True)
    assert b"already up" in r.stdout, r.stdout
    assert os.stat("/run/netns/" + lab.ns("rtr")).st_ino == ino
    # the appliance's veth carries no kernel address (the TAP will)
    r = sh(["ip", "-n", lab.ns("app1"), "-4", "addr", "show", "dev",
            e["APP1_IF"]], check=True)
    assert b"inet " not in r.stdout, r.stdout


REFLECTOR = """
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.settimeout(30)
print("ready", flush=True)
while True:
    try:
        fr, addr = s.recvfrom(65536)
    except socket.timeout:
        break
    if addr[2] != socket.PACKET_OUTGOING:
        s.send(fr)
"""


def test_onearm_reflection_is_caught(lab):
    """Negative control for the main test's bridge check: the appliance's
    behaviour before port roles, as issue 13 describes it (every frame it
    does not balance sent back out of the port unchanged), played by a
    reflector on the appliance's veth: the backends' foreign-MAC frames
    teach the bridge their MACs on the appliance's port, which fdb_on()
    sees. The appliance of the main test must not do that."""
    e = lab.env
    brport = e["APP1_BRIDGE_PORT"]
    be = lab.backends[0]
    refl = subprocess.Popen(["ip", "netns", "exec", lab.ns("app1"),
                             pautil.PYTHON, "-c", REFLECTOR, e["APP1_IF"]],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert refl.stdout.readline().strip() == b"ready", \
            refl.stderr.read()
        helper(be["ns"], "flood", "e0", FOREIGN_MAC, "10.30.0.99",
               FOREIGN_PER_BACKEND)
        wait_for("the reflected frames teach the bridge %s on %s"
                 % (be["mac"], brport),
                 lambda: be["mac"].lower() in fdb_on(lab, brport),
                 timeout=20)
    finally:
        refl.kill()
        refl.wait()
        # forget what the reflector taught the bridge
        sh(["ip", "-n", lab.ns("rtr"), "link", "set", brport, "type",
            "bridge_slave", "fdb_flush"], check=True)
    assert be["mac"].lower() not in fdb_on(lab, brport)


def test_onearm_dsr_nat_no_reflection_exception_path(lab, tmp_path):
    """dsr and nat through the one-armed appliance with real kernel TCP,
    after foreign-MAC frames from every backend: nothing reflected (bridge
    fdb, captured source MACs, not_ours), every connection where
    trace_packet says; then the exception path (ping, TCP in, TCP out
    through the DPDK port); a clean stop."""
    e = lab.env
    port, mac = e["APP1_IF"], e["APP1_MAC"].lower()
    brport = e["APP1_BRIDGE_PORT"]
    app_ns, rtr_ns, cli_ns = lab.ns("app1"), lab.ns("rtr"), lab.ns("cli")
    app_addr = e["APP1_ADDR"]
    clients = e["CLI_ADDRS"].split()
    lab.route("1")
    # every frame the appliance sends, as the bridge receives it
    cap = Capture(rtr_ns, brport, str(tmp_path / "from-app.pcap"), "")
    d = lab.start_app(1, tmp_path)
    try:
        st0 = stats(d)

        # -- 1. foreign frames: every backend sends unicast frames to a
        # MAC nobody has; the bridge floods them to every port, the
        # appliance's included. Before port roles the appliance sent them
        # back with the backend's source MAC (the bridge then moved the
        # backend to the appliance's port): now they are not_ours.
        sent = 0
        for b in lab.backends:
            f = helper(b["ns"], "flood", "e0", FOREIGN_MAC, "10.30.0.99",
                       FOREIGN_PER_BACKEND)
            sent += f["sent"]
        wait_for("%d foreign frames counted not_ours (%s)" % (sent, port),
                 lambda: stats(d)["drops"]["not_ours"] -
                 st0["drops"]["not_ours"] >= sent)
        learned = fdb_on(lab, brport)
        backend_macs = {b["mac"].lower() for b in lab.backends}
        assert not learned & backend_macs, "the bridge learned backends " \
            "on the appliance's port %s: %s" % (brport, learned)

        # -- 2. dsr and nat: real TCP through the router and the appliance
        nat_port = int(e["NAT_BACKEND_PORT"])
        trace = tracer(d, port)
        try:
            for mode in ("dsr", "nat"):
                v = e["VIP_" + mode.upper()]
                lab.wait_service(v, timeout=60)
                n = 100
                res = lab.burst(v, n, concurrency=20, src=",".join(clients))
                bad = [c for c in res["conns"] if c["error"] is not None]
                assert res["ok"] == n, "%s: %d of %d failed, e.g. %s" % (
                    mode, len(bad), n, bad[:5])
                wrong = []
                for c in res["conns"]:
                    be = lab.backend_of(c["backend"])
                    seen = "%s:%d" % ((be["addr"], nat_port) if mode == "nat"
                                      else (v, 80))
                    t = trace(c["src"], c["sport"], v, 80)
                    if c["server_addr"] != seen or t["backend"] != be["addr"]:
                        wrong.append((c, seen, t))
                assert not wrong, "%s: %d connections not where the " \
                    "appliance sent them: %s" % (mode, len(wrong), wrong[:5])
                assert len(res["backends"]) > 1, res["backends"]
        finally:
            trace.close()
        st1 = stats(d)
        assert st1["lb"]["nat_replies"] - st0["lb"]["nat_replies"] >= 300, \
            (st0["lb"], st1["lb"])

        # -- 3. the exception path (kernel_if): ping from the router,
        # answered by the appliance namespace's kernel through the TAP
        p = helper(rtr_ns, "ping", app_addr, 5)
        assert p["received"] == p["sent"], (p, stats(d)["excp"])
        # TCP from the router to a listener bound to the port's address
        srv = Listener(app_ns, app_addr, LISTEN_PORT)
        c = helper(rtr_ns, "connect", app_addr, LISTEN_PORT, 200000)
        srv.wait()
        assert c["same"] and c["echoed"] == 200000, c
        # ... and from the client, behind the router: the appliance's
        # kernel needs a route back (what a routing daemon would add)
        sh(["ip", "-n", app_ns, "route", "replace", "default", "via",
            e["APP1_GATEWAY"], "dev", e["APP1_KERNEL_IF"]], check=True)
        srv = Listener(app_ns, app_addr, LISTEN_PORT)
        c = helper(cli_ns, "connect", app_addr, LISTEN_PORT, 200000)
        srv.wait()
        assert c["same"] and c["echoed"] == 200000 and \
            c["local"] in clients, c
        # TCP from the appliance's namespace to a backend: the only way
        # out is the TAP, then the DPDK port (the veth has no address)
        be = lab.backends[0]
        r = sh(["ip", "-n", app_ns, "route", "get", be["addr"]], check=True)
        assert (" dev %s " % e["APP1_KERNEL_IF"]).encode() in r.stdout, \
            r.stdout
        x0 = stats(d)["excp"]["interfaces"][port]
        r = sh(["ip", "netns", "exec", app_ns, pautil.PYTHON, "-c",
                "import urllib.request as u; print(u.urlopen('http://%s:%d/',"
                " timeout=15).read().decode())" % (be["addr"], nat_port)],
               timeout=60)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        answer = r.stdout.decode().split()
        assert answer[0] == be["name"] and \
            answer[1].startswith(app_addr + ":"), answer
        x1 = stats(d)["excp"]["interfaces"][port]
        assert x1["from_kernel"] - x0["from_kernel"] >= 3 and \
            x1["to_kernel"] - x0["to_kernel"] >= 3, (x0, x1)

        # -- 4. counters: nothing reflected, nothing lost
        st2 = stats(d)
        x = st2["excp"]["interfaces"][port]
        assert x["kernel_if"] == e["APP1_KERNEL_IF"], x
        assert x["to_kernel_dropped"] == 0 and \
            x["from_kernel_foreign"] == 0, x
        lost = {k: st2["drops"][k] - st0["drops"][k] for k in st2["drops"]
                if k not in ("local", "not_ours", "to_self") and
                st2["drops"][k] != st0["drops"][k]}
        assert not lost, (lost, st2["drops"])
    finally:
        frames = cap.stop()
        rc = d.stop()
        lab.forget_sockets()
    assert rc == 0, d.describe()
    assert "mbufs not returned" not in d.stderr, d.describe()
    r = sh(["ip", "-n", app_ns, "link", "show", e["APP1_KERNEL_IF"]])
    assert r.returncode != 0, "kernel_if still there after SIGTERM"

    # every frame that left the appliance has its own MAC as source, and
    # none is for the foreign MAC
    srcs = {}
    for fr in frames:
        s = ":".join("%02x" % x for x in fr[6:12])
        srcs[s] = srcs.get(s, 0) + 1
    assert set(srcs) == {mac}, "frames left the appliance with a source " \
        "MAC not its own (reflected): %s" % srcs
    dsts = {":".join("%02x" % x for x in fr[:6]) for fr in frames}
    assert FOREIGN_MAC not in dsts, dsts
    assert len(frames) > 600, len(frames)
    print("one-armed: %d frames left the appliance (source %s); not_ours "
          "%d; excp %s" % (len(frames), mac, st2["drops"]["not_ours"] -
                          st0["drops"]["not_ours"], x))
    # and at the end the bridge still has nobody but the appliance there
    learned = fdb_on(lab, brport)
    assert learned <= {mac}, "the bridge learned %s on the appliance's " \
        "port %s (appliance MAC %s)" % (learned, brport, mac)
