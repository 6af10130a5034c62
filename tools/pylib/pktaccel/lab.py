# SPDX-License-Identifier: BSD-3-Clause
"""The live lab (test_lab.py, test_lab_bgp.py, perf/bench_lab.py,
perf/bench_fleet.py): the topology of scripts/lab-netns.sh, appliances
running in it, the router's routes to the VIPs (static, or made by BIRD
from the appliances' BGP announcements), and the lab client
(scripts/lab-client.py) in the client namespace."""

import copy
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import time

from .daemon import (DAEMON, PYTHON, REPO, Daemon, last_json_line, unique,
                     write_json)

SCRIPTS = os.path.join(REPO, "scripts")
LAB_SH = os.path.join(SCRIPTS, "lab-netns.sh")
LAB_CLIENT = os.path.join(SCRIPTS, "lab-client.py")
STATE_ROOT = "/run/pktaccel-lab"


def sh(args, timeout=60, check=False, **kw):
    r = subprocess.run(list(args), capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    if check and r.returncode != 0:
        raise AssertionError("%s exited %d\n%s%s" % (
            " ".join(args), r.returncode, r.stdout.decode(errors="replace"),
            r.stderr.decode(errors="replace")))
    return r


def namespaces_usable():
    """None when this machine lets us make network namespaces and veth
    pairs, else the reason why not."""
    if os.geteuid() != 0:
        return "the lab needs root (ip netns, veth, AF_PACKET)"
    for tool in ("ip", "ethtool", "tcpdump"):
        if sh(["sh", "-c", "command -v %s" % tool]).returncode != 0:
            return "%s is not installed (scripts/deps.sh installs it)" % tool
    ns = "pa-probe-%d" % os.getpid()
    r = sh(["ip", "netns", "add", ns])
    if r.returncode != 0:
        return "ip netns add failed: %s" % r.stderr.decode().strip()
    try:
        r = sh(["ip", "-n", ns, "link", "add", "pa0", "type", "veth", "peer",
                "name", "pa1"])
        if r.returncode != 0:
            return "veth pairs unavailable: %s" % r.stderr.decode().strip()
    finally:
        sh(["ip", "netns", "del", ns])
    return None


def reap_stale_labs():
    """Labs of earlier test runs ("t<pid>", "u<pid>", "o<pid>", "b<pid>",
    "q<pid>", "f<pid>", "g<pid>") whose process is gone (killed by a timeout before its
    clean-up ran): take them down.
    Only what lab-netns.sh recorded is touched."""
    try:
        names = os.listdir(STATE_ROOT)
    except OSError:
        return
    for n in names:
        m = re.fullmatch(r"[tuobqfg](\d+)", n)
        if m is None or not os.path.isdir(os.path.join(STATE_ROOT, n)):
            continue
        if os.path.exists("/proc/%s" % m.group(1)):
            continue
        sh([LAB_SH, "down", "--name", n], timeout=120)


def bird_usable():
    """None when BIRD 2 (bird, birdc) is installed, else why not."""
    for tool in ("bird", "birdc"):
        if shutil.which(tool) is None and \
                not os.path.exists("/usr/sbin/" + tool):
            return "%s is not installed (BIRD 2: Debian package bird2, " \
                "scripts/deps.sh)" % tool
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun: the BGP lab's appliances have a kernel_if"
    return None


def lab_cpus():
    """--lcores for a lab appliance: its two lcores (main, worker) float
    over the CPUs we may use, so that two appliances and the kernel's
    work share a small machine; the worker then yields when idle."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) == 1:
        cs = str(cpus[0])
    else:
        cs = "(%s)" % ",".join(str(c) for c in cpus)
    return "0@%s,1@%s" % (cs, cs)


class Lab:
    """A lab made by scripts/lab-netns.sh, with its KEY=VALUE description
    (lab-netns.sh env) in self.env. topology: "two-armed" (two appliance
    slots, wan and lan) or "one-armed" (one slot, a single routed port on
    the backends' bridge). fnat (one-armed): the full-NAT lab, backends
    with only an address and a default route (lab-netns.sh --fnat)."""

    def __init__(self, name, static_neigh, topology="two-armed", bgp=False,
                 apps=None, bfd=True, fnat=False):
        self.name = name
        self.fnat = fnat
        self.static_neigh = static_neigh
        self.topology = topology
        self.bgp = bgp
        self.apps = apps
        self.bfd = bfd
        self.env = {}
        self.daemons = []

    # -- topology
    def up(self):
        args = [LAB_SH, "up", "--name", self.name, "--topology",
                self.topology]
        if self.static_neigh:
            args.append("--static-neigh")
        if self.bgp:
            args.append("--bgp")
            if not self.bfd:
                args.append("--no-bfd")
        if self.apps:
            args += ["--apps", str(self.apps)]
        if self.fnat:
            args.append("--fnat")
        sh(args, timeout=180, check=True)
        r = sh([LAB_SH, "env", "--name", self.name], check=True)
        for ln in r.stdout.decode().splitlines():
            k, _, v = ln.partition("=")
            self.env[k] = v
        self.n_backends = int(self.env["BACKENDS"])
        self.ipip = self.env["IPIP"] == "1"
        self.backends = []
        for k in range(1, self.n_backends + 1):
            self.backends.append({
                "name": self.env["BE%d_NAME" % k],
                "ns": self.env["BE%d_NS" % k],
                "addr": self.env["BE%d_ADDR" % k],
                "mac": self.env["BE%d_MAC" % k],
                "weight": int(self.env["BE%d_WEIGHT" % k])})
        self.by_addr = {b["addr"]: b for b in self.backends}
        self.by_name = {b["name"]: b for b in self.backends}
        self.n_apps = int(self.env["APPS"])

    def down(self):
        for d in self.daemons:
            if d.alive():
                d.kill()
        self.forget_sockets()
        return sh([LAB_SH, "down", "--name", self.name], timeout=180)

    def forget_sockets(self):
        """Remove the RPC sockets (and their lock files) of the stopped
        appliances."""
        for d in self.daemons:
            if d.alive():
                continue
            for p in (d.sock, d.sock + ".lock"):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def route(self, arg):
        sh([LAB_SH, "route", arg, "--name", self.name], check=True)

    def ns(self, what):
        return self.env["NS_" + what.upper()]

    def nsx(self, ns):
        return ["ip", "netns", "exec", ns]

    # -- appliances
    def config(self, k):
        with open(self.env["APP%d_CONFIG" % k]) as f:
            return json.load(f)

    def _spawn(self, k, workdir, cfg):
        conf = write_json(os.path.join(str(workdir), "app%d.json" % k), cfg)
        sock = unique("lab-app%d" % k, ".sock")
        d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m",
                    "256", "--lcores", lab_cpus(), "--", "-c", conf, "-s",
                    sock], sock, str(workdir), "app%d" % k,
                   prefix=self.nsx(self.env["NS_APP%d" % k]))
        self.daemons.append(d)
        return d

    def start_app(self, k, workdir, mutate=None, check_neigh=True):
        """Start appliance k (1..APPS) in its namespace on the lab's
        config (mutate(cfg) may change it); returns the Daemon once its
        socket answers."""
        cfg = copy.deepcopy(self.config(k))
        if mutate is not None:
            mutate(cfg)
        d = self._spawn(k, workdir, cfg)
        d.wait_ready(60)
        d.cfg = cfg
        d.k = k

        if check_neigh and not self.static_neigh:
            methods = d.call("rpc_get_methods")
            if "neigh_list" not in methods:
                import pytest
                d.stop()
                pytest.skip("the appliance does not answer ARP yet (no "
                            "neigh_list; issue 7 item 0): the lab has no "
                            "static neighbour entries unless "
                            "PA_LAB_STATIC_NEIGH=1 (development mode)")
        return d

    # -- BGP (labs made with --bgp)
    def vips(self, cfg=None):
        """The VIPs an appliance announces: those of its services."""
        cfg = cfg or self.config(1)
        return sorted({s["vip"] for s in cfg["lb"]["services"]})

    def nexthop(self, k, vip):
        """The next hop appliance k announces for vip (its port's
        address of the VIP's family)."""
        v6 = ipaddress.ip_address(vip).version == 6
        return self.env["APP%d_NEXTHOP%s" % (k, "6" if v6 else "")]

    def app_routes(self, k):
        """The host routes in appliance k's announce table."""
        out = []
        for fam in ("-4", "-6"):
            r = sh(["ip", "-n", self.env["NS_APP%d" % k], "-j", fam,
                    "route", "show", "table",
                    self.env["ANNOUNCE_TABLE"]], check=True)
            out += [e["dst"] for e in json.loads(r.stdout.decode() or "[]")]
        return sorted(out)

    def drain(self, d, draining=True):
        """health_set {"draining": ...}: the appliance withdraws (or
        announces again) its VIPs and keeps forwarding."""
        assert d.call("health_set", {"draining": draining}) is True

    def kill9(self, d):
        """kill -9: the appliance dies at once (its kernel_if with it)."""
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(30)
        d.kill()

    def rtr_nexthops(self, vip):
        """The router's next hops for vip (a host route), as a set."""
        fam = "-6" if ":" in vip else "-4"
        r = sh(["ip", "-n", self.ns("rtr"), "-j", fam, "route", "show",
                "exact", vip + ("/128" if ":" in vip else "/32")],
               check=True)
        hops = set()
        for e in json.loads(r.stdout.decode() or "[]"):
            if "gateway" in e:
                hops.add(e["gateway"])
            for n in e.get("nexthops", []):
                if "gateway" in n:
                    hops.add(n["gateway"])
        return hops

    def fleet_routes(self, apps, vips=None):
        """What the router should have when appliances apps announce:
        {vip: {next hop of each}}."""
        return {v: {self.nexthop(k, v) for k in apps}
                for v in (vips or self.vips())}

    def router_routes(self, vips=None):
        return {v: self.rtr_nexthops(v) for v in (vips or self.vips())}

    def wait_routes(self, want, timeout=60, every=0.01):
        """Until the router's routes to the VIPs are want ({vip: set of
        next hops}, see fleet_routes); the seconds it took."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        while True:
            got = {v: self.rtr_nexthops(v) for v in want}
            if got == want:
                return time.monotonic() - t0
            if time.monotonic() > deadline:
                raise AssertionError(
                    "router's routes to the VIPs not as expected within "
                    "%ds: want %s, have %s\n%s" % (
                        timeout, want, got, self.birdc("rtr", "show",
                                                       "protocols")))
            time.sleep(every)

    def bfd_up(self):
        """The router's BFD sessions that are Up: {neighbour address}."""
        up = set()
        for ln in self.birdc("rtr", "show", "bfd", "sessions").splitlines():
            f = ln.split()
            if len(f) >= 3 and f[2] == "Up":
                up.add(f[0])
        return up

    def wait_bfd(self, apps, timeout=60):
        """With BFD on: until the router's BFD sessions with appliances
        apps (both families) are Up, so that a failure is seen by BFD
        (a session comes up a second or two after its BGP session)."""
        if not self.bfd:
            return
        want = {k: {self.nexthop(k, v) for v in ("10.0.0.1", "::1")}
                for k in apps}
        t0 = time.monotonic()
        deadline = t0 + timeout
        kicked = set()
        while True:
            up = self.bfd_up()
            stuck = [k for k in apps if not want[k] <= up]
            if not stuck:
                return
            # BIRD 2.0.12: when an appliance restarts, its kernel_if is
            # made again and the slot's BIRD may fail to bind its BFD
            # socket ("bfd1: Socket error: bind: Cannot assign requested
            # address" in bird-appK.log); BFD then stays down while BGP
            # is up. Restarting the slot's BFD protocol rebinds it
            # (docs/scale-out.md). Once per slot, after a grace period.
            if time.monotonic() - t0 > 5:
                for k in stuck:
                    if k not in kicked and self._bgp_established(k):
                        self.birdc("app%d" % k, "restart", "bfd1")
                        kicked.add(k)
            if time.monotonic() > deadline:
                raise AssertionError(
                    "BFD sessions with %s not up within %ds:\n%s" % (
                        sorted(want.values()), timeout,
                        self.birdc("rtr", "show", "bfd", "sessions")))
            time.sleep(0.1)

    def _bgp_established(self, k):
        out = self.birdc("app%d" % k, "show", "protocols")
        return len(re.findall(r"^rtr[46]\s.*Established", out, re.M)) == 2

    def birdc(self, where, *cmd):
        r = sh([LAB_SH, "birdc", where, "--name", self.name] + list(cmd))
        return r.stdout.decode(errors="replace")

    def set_bfd(self, on):
        sh([LAB_SH, "bfd", "on" if on else "off", "--name", self.name],
           check=True)
        self.bfd = on

    # -- client
    def client(self, *args, timeout=120):
        """Run lab-client.py in the client namespace; its last JSON line."""
        r = sh(self.nsx(self.ns("cli")) + [PYTHON, LAB_CLIENT] +
               [str(a) for a in args], timeout=timeout)
        res = last_json_line(r.stdout.decode())
        assert r.returncode == 0 and res is not None, \
            "lab-client %s exited %d\n%s\n%s" % (
                " ".join(map(str, args)), r.returncode,
                r.stdout.decode()[-2000:], r.stderr.decode()[-3000:])
        return res

    def burst(self, vip, count, port=80, concurrency=20, timeout=10,
              src=None, sport_base=None, requests=1):
        args = ["burst", "--vip", vip, "--port", port, "--count", count,
                "--concurrency", concurrency, "--timeout", timeout,
                "--requests", requests]
        if src:
            args += ["--src", src]
        if sport_base:
            args += ["--sport-base", sport_base]
        return self.client(*args, timeout=60 + count * timeout /
                           max(1, concurrency) * 2)

    def wait_service(self, vip, port=80, timeout=40):
        """Until a few connections to vip:port all complete (neighbours
        resolved, appliance forwarding)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.burst(vip, 6, port=port, concurrency=6, timeout=3)
            if last["failed"] == 0:
                return
            time.sleep(0.5)
        raise AssertionError("service %s:%d not answering after %ds: %s"
                             % (vip, port, timeout, {k: v for k, v in
                                                    last.items()
                                                    if k != "conns"}))

    def hold(self, vip, count, src=None, port=80, timeout=10):
        return Held(self, vip, count, src, port, timeout)

    def udp_probe(self, vip, flows=8, rate=400, src=None, port=5353,
                  sport_base=None):
        return UdpProbe(self, vip, flows, rate, src, port, sport_base)

    def backend_of(self, name_or_addr):
        if name_or_addr in self.by_name:
            return self.by_name[name_or_addr]
        return self.by_addr[name_or_addr]


class _Interactive:
    """lab-client.py with commands on stdin and JSON lines on stdout."""

    def _start(self, lab, args):
        self.proc = subprocess.Popen(
            lab.nsx(lab.ns("cli")) + [PYTHON, LAB_CLIENT] +
            [str(a) for a in args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def read(self, timeout=120):
        """The next JSON line from the client."""
        import select
        deadline = time.monotonic() + timeout
        buf = getattr(self, "_buf", b"")
        fd = self.proc.stdout.fileno()
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("lab-client: no answer within %ds "
                                     "(have %r)" % (timeout, buf[:300]))
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            c = os.read(fd, 1 << 20)
            if not c:
                self.proc.wait(10)
                err = self.proc.stderr.read().decode(errors="replace")
                raise AssertionError("lab-client exited (%s): %s"
                                     % (self.proc.returncode, err[-3000:]))
            buf += c
        line, self._buf = buf.split(b"\n", 1)
        return json.loads(line)

    def send(self, cmd):
        self.proc.stdin.write(cmd.encode() + b"\n")
        self.proc.stdin.flush()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Held(_Interactive):
    """Long-lived keep-alive connections (lab-client.py hold)."""

    def __init__(self, lab, vip, count, src, port, timeout):
        args = ["hold", "--vip", vip, "--port", port, "--count", count,
                "--timeout", timeout]
        if src:
            args += ["--src", src]
        self._start(lab, args)
        self.ready = self.read()
        assert self.ready["event"] == "ready", self.ready
        self.conns = self.ready["conns"]

    def round(self, timeout=10):
        self.send("round %g" % timeout)
        r = self.read(timeout + 60)
        assert r["event"] == "round", r
        return r["conns"]

    def close(self):
        self.send("close")
        r = self.read()
        assert r["event"] == "closed", r
        self.send("quit")
        self.proc.wait(30)
        return r["conns"]


class UdpProbe(_Interactive):
    """Numbered datagrams from a few flows until stop()."""

    def __init__(self, lab, vip, flows, rate, src, port, sport_base):
        args = ["udp", "--vip", vip, "--port", port, "--flows", flows,
                "--rate", rate, "--linger", 2]
        if src:
            args += ["--src", src]
        if sport_base:
            args += ["--sport-base", sport_base]
        self._start(lab, args)
        r = self.read()
        assert r["event"] == "started", r
        self.sports = r["flows"]

    def stop(self):
        self.send("stop")
        r = self.read()
        assert r["event"] == "udp", r
        self.proc.wait(30)
        return r
