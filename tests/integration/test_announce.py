# SPDX-License-Identifier: BSD-3-Clause
"""Readiness, drain and the announced VIP routes (issue 14, lib/announce),
on the real daemon in a netns lab: the daemon runs net_af_packet on xA in
namespace A with a kernel_if; B is the client side (198.51.100.1/24).

- VIP host routes (proto 201) appear in table N of A once the appliance is
  ready, one per distinct VIP (IPv4 /32, IPv6 /128, dev the kernel_if);
  they follow lb_service_add / lb_service_delete over RPC, go on
  health_set draining (and come back), go while a worker lcore is stalled
  (the thread frozen from outside with ptrace) and come back when it runs
  again, and go on stop; the full-NAT pool's addresses that are no
  port's own get routes too, and follow readiness and drain the same way;
  stale routes of ours are removed at start,
  others' are left alone; `pktaccel --withdraw-routes` removes them too.
- SIGTERM with announce.drain_s withdraws at once, keeps forwarding for
  drain_s, then exits 0; a second signal ends the drain at once.
- health_get and GET /health (200 / 503) in each state, the metrics.
Needs root and `ip netns`."""

import ctypes
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

import pautil
from pautil import DAEMON, Daemon, RpcError, unique, write_json
from netpair import veth_namespaces

PORT_ADDR = "198.51.100.5"
PEER_ADDR = "198.51.100.1"
TAP = "i14d0"
TABLE = 100
PROTO = 201
VIP = "192.0.2.10"
VIP2 = "192.0.2.11"
VIP6 = "2001:db8:10::10"
METRICS_PORT = 19469


def sh(*args, timeout=30):
    return subprocess.run(list(args), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def lab():
    with veth_namespaces("i14d", "the announce lab") as (a, b):
        r = sh("ip", "-n", b, "addr", "add", PEER_ADDR + "/24", "dev", "xB")
        assert r.returncode == 0, r.stderr.decode()
        r = sh("ip", "-n", b, "route", "add", "192.0.2.0/24", "via",
               PORT_ADDR)
        assert r.returncode == 0, r.stderr.decode()
        yield a, b


def service(name, vip, port=80, proto="tcp"):
    be = "2001:db8:2::1" if ":" in vip else "10.1.0.1"
    return {"name": name, "vip": vip, "port": port, "proto": proto,
            "backends": [{"addr": be}]}


# The watchdog's bound in these tests: the development box is shared and
# heavily loaded (an lcore pinned to a CPU that a dozen busy pollers share
# was seen waiting 10 s for it), which a production stall_ms rightly
# reports as a stall; the tests that stall an lcore use a shorter bound
# and freeze it for as long as they need, and wait for readiness to come
# back rather than read it once.
STALL_MS = 60000
STALL_MS_SHORT = 3000


def config(tmp_path, announce=None, services=None, fnat=None, **pipeline):
    pl = {"mode": "rtc", "stall_ms": STALL_MS}
    pl.update(pipeline)
    doc = {"ports": [{"name": "wan0", "devargs": "net_af_packet0,iface=xA",
                      "addr": [PORT_ADDR + "/24", "2001:db8:1::5/64"],
                      "gateway": PEER_ADDR, "kernel_if": TAP}],
           "pipeline": pl,
           "lb": {"local_addr": "192.0.2.254", "local_addr6": "2001:db8:1::5",
                  "services": services if services is not None else [
                      service("web", VIP), service("dns", VIP, 53, "udp"),
                      service("web6", VIP6)]},
           "metrics": {"listen": "127.0.0.1:%d" % METRICS_PORT}}
    if fnat is not None:
        doc["lb"]["fnat"] = fnat
    if announce is not False:
        doc["announce"] = announce or {"table": TABLE}
    return write_json(str(tmp_path / "announce.json"), doc)


def start(ns, cfg, tmp_path, name="announce"):
    sock = unique("i14d", ".sock")
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", cfg, "-s", sock], sock,
               str(tmp_path), name, prefix=("ip", "netns", "exec", ns))
    d.wait_ready(90)
    return d


def routes(ns, table=TABLE, proto=PROTO):
    """{destination: device} of our routes in the table, both families."""
    out = {}
    for fam in ("-4", "-6"):
        r = sh("ip", fam, "-n", ns, "-j", "route", "show", "table",
               str(table), "proto", str(proto))
        if b"table does not exist" in r.stderr:
            continue        # no route at all in that table yet
        assert r.returncode == 0, r.stderr.decode()
        for x in json.loads(r.stdout.decode() or "[]"):
            out[x["dst"]] = x.get("dev")
    return out


def wait_for(what, pred, timeout=60.0, d=None):
    """Poll pred() until true (generous deadline: a shared, slow box)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = pred()
        if last:
            return last
        time.sleep(0.05)
    pytest.fail("timed out waiting for %s (last %r)%s" %
                (what, last, "\n" + d.describe() if d else ""))


def http_health(ns):
    """(status, body) of GET /health, fetched inside the namespace."""
    code = ("import json,sys,urllib.request,urllib.error\n"
            "try:\n"
            " r=urllib.request.urlopen('http://127.0.0.1:%d/health',timeout=10)\n"
            " print(r.status); print(r.read().decode().strip())\n"
            "except urllib.error.HTTPError as e:\n"
            " print(e.code); print(e.read().decode().strip())\n" %
            METRICS_PORT)
    r = sh("ip", "netns", "exec", ns, pautil.PYTHON, "-c", code)
    assert r.returncode == 0, r.stderr.decode()
    status, body = r.stdout.decode().split("\n", 1)
    return int(status), json.loads(body)


def http_metrics(ns):
    r = sh("ip", "netns", "exec", ns, "curl", "-s",
           "http://127.0.0.1:%d/metrics" % METRICS_PORT)
    if r.returncode != 0:
        code = ("import urllib.request;print(urllib.request.urlopen("
                "'http://127.0.0.1:%d/metrics',timeout=10).read().decode())" %
                METRICS_PORT)
        r = sh("ip", "netns", "exec", ns, pautil.PYTHON, "-c", code)
    assert r.returncode == 0, r.stderr.decode()
    vals = {}
    for line in r.stdout.decode().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            vals[k] = float(v)
    return vals


def test_routes_follow_readiness_services_drain_and_stop(lab, tmp_path):
    a, b = lab
    d = start(a, config(tmp_path), tmp_path)
    try:
        # ready: one route per distinct VIP (web and dns share VIP)
        wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        h = d.call("health_get")
        assert h["ready"] is True and h["draining"] is False, h
        assert h["reasons"] == [], h
        assert set(h["services"]) == {"web", "dns", "web6"}, h
        assert h["services"]["web"] == {
            "vip": VIP, "port": 80, "proto": "tcp", "backends": 1,
            "usable_backends": 1, "announced": True}, h
        assert h["announce"]["table"] == TABLE, h
        assert h["announce"]["protocol"] == PROTO, h
        assert h["announce"]["dev"] == TAP, h
        assert sorted(h["announce"]["routes"]) == sorted(
            [VIP + "/32", VIP6 + "/128"]), h
        assert h["lcores"] and all(x["progress"] for x in
                                   h["lcores"].values()), h
        assert http_health(a) == (200, {"ready": True, "draining": False,
                                        "reasons": []})
        m = http_metrics(a)
        assert m["pktaccel_ready"] == 1 and m["pktaccel_draining"] == 0, m
        assert m["pktaccel_announced_routes"] == 2, m

        # one deleted by hand comes back (re-asserted every 5 s)
        assert sh("ip", "-n", a, "route", "del", VIP + "/32", "table",
                  str(TABLE), "proto", str(PROTO)).returncode == 0
        wait_for("re-asserted", lambda: routes(a) == {VIP: TAP, VIP6: TAP},
                 d=d)
        assert d.call("health_get")["announce"]["route_reasserts"] >= 1

        # they follow the services over RPC
        d.call("lb_service_add", service("api", VIP2, 443))
        wait_for("VIP2 route", lambda: VIP2 in routes(a), d=d)
        assert d.call("health_get")["services"]["api"]["announced"] is True
        d.call("lb_service_delete", {"name": "api"})
        wait_for("VIP2 withdrawn", lambda: VIP2 not in routes(a), d=d)
        # a VIP two services share stays while one of them is left
        d.call("lb_service_delete", {"name": "dns"})
        time.sleep(0.3)
        assert routes(a) == {VIP: TAP, VIP6: TAP}
        d.call("lb_service_delete", {"name": "web"})
        wait_for("VIP withdrawn", lambda: routes(a) == {VIP6: TAP}, d=d)
        d.call("lb_service_add", service("web", VIP))
        wait_for("VIP back", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)

        # drain: routes withdrawn, still ready, /health 503; undrain
        assert d.call("health_set", {"draining": True}) is True
        assert routes(a) == {}, "health_set answers once withdrawn"
        h = d.call("health_get")
        assert h["ready"] is True and h["draining"] is True, h
        assert not h["services"]["web"]["announced"], h
        st, body = http_health(a)
        assert st == 503 and body["draining"] is True, body
        m = http_metrics(a)
        assert m["pktaccel_draining"] == 1, m
        assert m["pktaccel_announced_routes"] == 0, m
        assert d.call("health_set", {"draining": False}) is True
        # (added before the answer when ready; waited for in case a
        # loaded box made the appliance briefly not ready meanwhile)
        wait_for("undrained", lambda: routes(a) == {VIP: TAP, VIP6: TAP},
                 d=d)
        assert http_health(a)[0] == 200

        # bad params name the parameter
        with pytest.raises(RpcError) as e:
            d.call("health_set", {"draining": "yes"})
        assert e.value.err["code"] == -32602 and "params.draining" in str(e.value)
        with pytest.raises(RpcError) as e:
            d.call("health_set", {})
        assert e.value.err["code"] == -32602 and "params.draining" in str(e.value)

        # config_get shows the section as written
        c = d.call("config_get")
        assert c["announce"] == {"table": TABLE, "drain_s": 0}, c
        assert c["pipeline"]["stall_ms"] == STALL_MS, c
    finally:
        d.stop(signal.SIGINT)
    assert d.proc.returncode == 0, d.describe()
    assert routes(a) == {}


# the full-NAT pool: the port's own address (no route: the kernel_if has
# it) and two of the appliance's own (a host route each, like a VIP)
POOL4 = "198.51.100.60"
POOL6 = "2001:db8:20::60"


def test_pool_addresses_that_are_no_ports_are_announced_like_vips(lab,
                                                                  tmp_path):
    a, _ = lab
    want = {VIP: TAP, VIP6: TAP, POOL4: TAP, POOL6: TAP}
    d = start(a, config(tmp_path, fnat={
        "addrs": [PORT_ADDR, POOL4, POOL6, "2001:db8:1::5"],
        "ports": "1024-2047"}), tmp_path)
    try:
        wait_for("routes", lambda: routes(a) == want, d=d)
        h = d.call("health_get")
        assert sorted(h["announce"]["routes"]) == sorted(
            [VIP + "/32", VIP6 + "/128", POOL4 + "/32", POOL6 + "/128"]), h
        m = http_metrics(a)
        assert m["pktaccel_announced_routes"] == 4, m
        assert m["pktaccel_announce_vips"] == 2, m
        assert m["pktaccel_announce_pool_addrs"] == 2, m

        # they stay whatever the services do
        d.call("lb_service_delete", {"name": "web"})
        d.call("lb_service_delete", {"name": "dns"})
        wait_for("VIP withdrawn", lambda: routes(a) == {
            VIP6: TAP, POOL4: TAP, POOL6: TAP}, d=d)

        # drain withdraws them with the VIPs, undrain brings them back
        assert d.call("health_set", {"draining": True}) is True
        assert routes(a) == {}, "health_set answers once withdrawn"
        assert d.call("health_set", {"draining": False}) is True
        wait_for("undrained", lambda: routes(a) == {
            VIP6: TAP, POOL4: TAP, POOL6: TAP}, d=d)
    finally:
        d.stop(signal.SIGINT)
    assert d.proc.returncode == 0, d.describe()
    assert routes(a) == {}


def test_stale_routes_removed_at_start_others_kept(lab, tmp_path):
    a, _ = lab
    # a killed daemon's leftovers (ours: proto 201), and someone else's
    assert sh("ip", "-n", a, "route", "add", "203.0.113.99/32", "dev", "lo",
              "table", str(TABLE), "proto", str(PROTO)).returncode == 0
    assert sh("ip", "-n", a, "-6", "route", "add", "2001:db8:99::1/128",
              "dev", "lo", "table", str(TABLE), "proto",
              str(PROTO)).returncode == 0
    assert sh("ip", "-n", a, "route", "add", "203.0.113.98/32", "dev", "lo",
              "table", str(TABLE), "proto", "static").returncode == 0
    d = start(a, config(tmp_path), tmp_path)
    try:
        wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        h = d.call("health_get")
        assert h["announce"]["stale_removed"] == 2, h
        r = sh("ip", "-n", a, "route", "show", "table", str(TABLE),
               "proto", "static")
        assert "203.0.113.98" in r.stdout.decode()
    finally:
        d.stop()
    assert d.proc.returncode == 0, d.describe()
    assert routes(a) == {}


def test_killed_daemon_routes_go_with_its_kernel_if(lab, tmp_path):
    """SIGKILL: no withdrawal, but the TAP dies with the process and the
    kernel deletes the routes through it (docs/operations.md)."""
    a, _ = lab
    d = start(a, config(tmp_path), tmp_path)
    wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
    d.kill()
    wait_for("TAP gone", lambda: sh("ip", "-n", a, "link", "show",
                                    TAP).returncode != 0)
    wait_for("routes gone with the TAP", lambda: routes(a) == {})


def test_withdraw_routes_mode_cleans_up_after_a_killed_daemon(lab, tmp_path):
    """What the systemd unit's ExecStopPost runs."""
    a, _ = lab
    cfg = config(tmp_path)
    assert sh("ip", "-n", a, "route", "add", "203.0.113.99/32", "dev", "lo",
              "table", str(TABLE), "proto", str(PROTO)).returncode == 0
    r = sh("ip", "netns", "exec", a, DAEMON, "--withdraw-routes", "-c", cfg)
    assert r.returncode == 0, r.stderr.decode()
    assert "1 route" in r.stdout.decode(), r.stdout.decode()
    assert routes(a) == {}
    # without "announce": nothing to do, still 0
    r = sh("ip", "netns", "exec", a, DAEMON, "--withdraw-routes", "-c",
           config(tmp_path, announce=False))
    assert r.returncode == 0, r.stderr.decode()


# ---- a stalled worker lcore: frozen from outside with ptrace ----

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                            ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    return libc


def worker_tids(pid):
    """Thread ids of the daemon's data-path lcore threads (EAL names them
    rte-worker-N)."""
    tids = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
            if f.read().strip().startswith("rte-worker"):
                tids.append(int(t))
    return tids


class Frozen:
    """Stop one thread (not the process: PTRACE_INTERRUPT of a seized
    thread stops only it) until release()."""

    def __init__(self, tid):
        self.libc = _libc()
        self.tid = tid
        if self.libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
            pytest.skip("ptrace: %s" % os.strerror(ctypes.get_errno()))
        assert self.libc.ptrace(PTRACE_INTERRUPT, tid, None, None) == 0
        status = ctypes.c_int()
        got = self.libc.waitpid(tid, ctypes.byref(status), WALL)
        assert got == tid, os.strerror(ctypes.get_errno())

    def release(self):
        if self.tid:
            self.libc.ptrace(PTRACE_DETACH, self.tid, None, None)
            self.tid = 0


def daemon_pid(d):
    """The daemon's pid (the Daemon runs it under `ip netns exec`, which
    execs it: same pid)."""
    return d.proc.pid


def test_stalled_lcore_not_ready_routes_withdrawn_then_back(lab, tmp_path):
    a, _ = lab
    d = start(a, config(tmp_path, stall_ms=STALL_MS_SHORT), tmp_path)
    frozen = None
    try:
        wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        tids = wait_for("worker thread", lambda: worker_tids(daemon_pid(d)),
                        d=d)
        assert len(tids) == 1, tids
        frozen = Frozen(tids[0])
        wait_for("withdrawn", lambda: routes(a) == {}, d=d)
        h = d.call("health_get")
        assert h["ready"] is False and h["draining"] is False, h
        assert any(r.startswith("lcore 1: no progress for ")
                   for r in h["reasons"]), h
        assert h["lcores"]["1"]["progress"] is False, h
        assert h["lcores"]["1"]["stalled_ms"] >= STALL_MS_SHORT, h
        st, body = http_health(a)
        assert st == 503 and body["ready"] is False, body
        assert any("lcore 1" in r for r in body["reasons"]), body
        m = http_metrics(a)
        assert m['pktaccel_lcore_stalled{lcore="1"}'] == 1, m
        assert m["pktaccel_ready"] == 0, m
        frozen.release()
        wait_for("back", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        h = wait_for("ready", lambda: (lambda x: x if x["ready"] else None)(
            d.call("health_get")), d=d)
        assert h["reasons"] == [], h
        assert h["lcores"]["1"]["stalls"] >= 1, h
        wait_for("/health 200", lambda: http_health(a)[0] == 200, d=d)
    finally:
        if frozen is not None:
            frozen.release()
        d.stop()
    assert d.proc.returncode == 0, d.describe()


def test_stalled_lcore_blocking_the_control_thread_still_withdraws(
        lab, tmp_path):
    """A table update waits for every lcore (RCU): with the worker frozen,
    lb_backend_set blocks the control thread. The main thread's backstop
    withdraws the routes anyway; once the lcore runs, the call completes
    and the routes come back."""
    import threading
    a, _ = lab
    d = start(a, config(tmp_path, stall_ms=STALL_MS_SHORT), tmp_path)
    frozen = None
    done = {}
    try:
        wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        tids = wait_for("worker thread", lambda: worker_tids(daemon_pid(d)),
                        d=d)
        frozen = Frozen(tids[0])

        def blocked_call():
            c = pautil.RpcClient(d.sock, timeout=120)
            try:
                done["r"] = c.call("lb_backend_set", {
                    "service": "web", "addr": "10.1.0.1", "weight": 3})
            finally:
                c.close()
        t = threading.Thread(target=blocked_call, daemon=True)
        t.start()
        wait_for("withdrawn by the backstop", lambda: routes(a) == {}, d=d)
        assert "r" not in done, "the call should wait for the frozen lcore"
        assert "withdrawn from table %d by the main thread" % TABLE in \
            d.stderr, d.describe()
        frozen.release()
        t.join(60)
        assert done.get("r") is True, done
        wait_for("back", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        h = d.call("health_get")
        assert h["announce"]["backstop_flushes"] >= 1, h
    finally:
        if frozen is not None:
            frozen.release()
        d.stop()
    assert d.proc.returncode == 0, d.describe()


def test_adaptive_idle_lcore_is_not_taken_for_stalled(lab, tmp_path):
    """An idle lcore that naps (pipeline.idle adaptive, the longest nap
    allowed: 10 ms) counts a loop after every nap, which is what the
    watchdog reads (the bound itself: tests/unit/announce)."""
    a, _ = lab
    d = start(a, config(tmp_path,
                        idle={"mode": "adaptive", "max_sleep_us": 10000}),
              tmp_path)

    def lcore1():
        return d.call("stats_get")["lcores"]["1"]
    try:
        wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
        first = wait_for("naps", lambda: (lambda x: x if x["sleeps"] else
                                          None)(lcore1()), d=d)
        wait_for("loops counted across naps", lambda: (
            lambda x: x["sleeps"] > first["sleeps"] and
            x["idle_polls"] > first["idle_polls"])(lcore1()), d=d)
        h = d.call("health_get")
        assert h["ready"] is True and h["lcores"]["1"]["progress"], h
    finally:
        d.stop()
    assert d.proc.returncode == 0, d.describe()


# ---- SIGTERM drains ----

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "excp_helper.py")


def ping_ok(ns, addr):
    """One echo request answered (tests/integration/excp_helper.py)."""
    r = sh("ip", "netns", "exec", ns, pautil.PYTHON, HELPER, "ping", addr,
           "1", timeout=30)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout.decode().splitlines()[-1])["received"] == 1


def test_sigterm_drains_forwarding_then_exits_0(lab, tmp_path):
    a, b = lab
    drain_s = 6
    d = start(a, config(tmp_path, announce={"table": TABLE,
                                            "drain_s": drain_s}), tmp_path)
    wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
    # the data path answers echo requests to the VIP (lb.icmp_echo)
    wait_for("VIP answers", lambda: ping_ok(b, VIP), d=d)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    wait_for("withdrawn", lambda: routes(a) == {}, timeout=30, d=d)
    h = d.call("health_get")
    assert h["draining"] is True, h
    assert http_health(a)[0] == 503
    # still forwarding during the drain, routes withdrawn: echo requests
    # sent after SIGTERM are answered (each check takes a while here)
    answered = 0
    while time.monotonic() - t0 < drain_s / 3:
        answered += ping_ok(b, VIP)
    assert answered >= 1, d.describe()
    assert d.alive(), "stopped before drain_s:\n" + d.describe()
    d.wait(60)
    elapsed = time.monotonic() - t0
    assert d.proc.returncode == 0, d.describe()
    assert elapsed >= drain_s - 0.5, elapsed
    assert "forwarding for %d s" % drain_s in d.stderr, d.describe()


def test_second_signal_ends_the_drain_and_sigint_does_not_drain(lab,
                                                                tmp_path):
    a, _ = lab
    cfg = config(tmp_path, announce={"table": TABLE, "drain_s": 600})
    d = start(a, cfg, tmp_path)
    wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
    d.proc.send_signal(signal.SIGTERM)
    wait_for("withdrawn", lambda: routes(a) == {}, timeout=30, d=d)
    time.sleep(0.5)
    assert d.alive(), d.describe()
    d.proc.send_signal(signal.SIGTERM)
    d.wait(60)
    assert d.proc.returncode == 0, d.describe()

    # SIGINT (Ctrl-C): no drain, a plain clean stop
    d = start(a, cfg, tmp_path, name="announce2")
    wait_for("routes", lambda: routes(a) == {VIP: TAP, VIP6: TAP}, d=d)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGINT)
    d.wait(60)
    assert d.proc.returncode == 0, d.describe()
    assert time.monotonic() - t0 < 60
    assert routes(a) == {}


def test_without_announce_health_still_reports(lab, tmp_path):
    a, _ = lab
    d = start(a, config(tmp_path, announce=False), tmp_path)
    try:
        h = wait_for("ready", lambda: (lambda x: x if x["ready"] else None)(
            d.call("health_get")), d=d)
        assert h["announce"] is None and h["draining"] is False, h
        assert h["services"]["web"]["announced"] is False, h
        assert routes(a) == {}
        d.call("health_set", {"draining": True})
        assert http_health(a)[0] == 503
        d.call("health_set", {"draining": False})
        assert http_health(a)[0] == 200
    finally:
        d.stop()
    assert d.proc.returncode == 0, d.describe()
