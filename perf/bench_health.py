#!/usr/bin/python3
"""Health checks at scale: N backends (default 10,000) probed every second.

A private pair of network namespaces (TAGp-app, TAGp-srv; --tag, default
"i15h") joined by a veth pair: pktaccel in TAGp-app on net_af_packet (one
routed port, 10.200.0.2/16, its own peer, kernel_if TAGk0), and in
TAGp-srv a helper that answers TCP on every address of 10.201.0.0/16 (a
local route: the kernel owns the whole range; one listener on 0.0.0.0
accepts and closes). The backends are spread over services of at most
4000 (nat, tcp checks on port 7000, interval 1000 ms, timeout 500 ms,
rise 2, fall 3).

Measured once every backend is up:
- the CPU of the control thread (pa-ctrl: RPC, metrics, the exception
  path), of the checks' thread (pa-health: the probes), of the main
  thread and of the worker lcore (utime + stime from
  /proc/PID/task/TID/stat) over --seconds, each as a share of one CPU;
- stats_get latency (one call every 50 ms on one connection): p50, p99,
  max (the goal: p99 < 20 ms);
- probes per second (lb_health_get);
- the load average at the start and the end (the machine is shared);
- lb_service_list: how long it takes, and the probes' latencies it
  shows (health_latency_ms: p50, p99, max over the backends);
then the helper stops (every backend fails: the services go into panic)
and starts again: seconds until every backend is down, then up, the
threads' CPU and stats_get latency (one call every 50 ms) meanwhile.

Not a test: figures for docs/performance.md. Root needed.
Writes perf/results/health-<date>-<backends>-<interval>ms[-SUFFIX].json.

Usage: /usr/bin/python3 perf/bench_health.py [--backends 10000]
           [--seconds 20] [--interval 1000] [--no-flap] [--tag i15h]
           [--build build] [--suffix after]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tools", "pylib"))
from pktaccel.daemon import Daemon, unique, write_json  # noqa: E402

# names of the namespaces and interfaces, from --tag (default "i15h"):
# TAG+"p-app", TAG+"p-srv", TAG+"a0", TAG+"s0", TAG+"k0"
NS_APP = NS_SRV = IF_APP = IF_SRV = KIF = None
CHECK_PORT = 7000
PER_SERVICE = 4000
KIF_PPS = 200000

SERVER = """
import socket, sys, selectors
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(65535)
s.setblocking(False)
print("listening", flush=True)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
while True:
    sel.select()
    while True:
        try:
            c, _ = s.accept()
        except BlockingIOError:
            break
        c.close()
"""


def sh(*args, check=True):
    r = subprocess.run(list(args), capture_output=True)
    if check and r.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(args), r.stderr.decode()))
    return r


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def down():
    for ns in (NS_APP, NS_SRV):
        sh("ip", "netns", "del", ns, check=False)


def up():
    down()
    for ns in (NS_APP, NS_SRV):
        sh("ip", "netns", "add", ns)
        nsx(ns, "ip", "link", "set", "lo", "up")
    sh("ip", "-n", NS_APP, "link", "add", IF_APP, "type", "veth", "peer",
       "name", IF_SRV, "netns", NS_SRV)
    nsx(NS_APP, "ethtool", "-K", IF_APP, "rx", "off", "tx", "off",
        check=False)
    nsx(NS_APP, "ip", "link", "set", IF_APP, "up")
    # the kernel of the appliance's namespace must not take the port's
    # frames (docs/operations.md, "Health checks")
    nsx(NS_APP, "sysctl", "-qw", "net.ipv4.conf.%s.rp_filter=1" % IF_APP,
        "net.ipv6.conf.%s.disable_ipv6=1" % IF_APP)
    # checksums filled in on both sides: AF_PACKET hands the frames over
    # as they are on the wire
    nsx(NS_SRV, "ethtool", "-K", IF_SRV, "rx", "off", "tx", "off",
        check=False)
    nsx(NS_SRV, "ip", "addr", "add", "10.200.0.1/16", "dev", IF_SRV)
    nsx(NS_SRV, "ip", "link", "set", IF_SRV, "up")
    nsx(NS_SRV, "ip", "route", "add", "local", "10.201.0.0/16", "dev", "lo")
    nsx(NS_SRV, "sysctl", "-qw", "net.core.somaxconn=65535",
        "net.ipv4.tcp_max_syn_backlog=65535")


def server():
    p = subprocess.Popen(["ip", "netns", "exec", NS_SRV, "/usr/bin/python3",
                          "-c", SERVER, str(CHECK_PORT)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"listening", p.stderr.read()
    return p


def config(n, interval):
    services = []
    for k in range(0, n, PER_SERVICE):
        bes = [{"addr": "10.201.%d.%d" % (i // 250, 1 + i % 250)}
               for i in range(k, min(n, k + PER_SERVICE))]
        services.append({
            "name": "s%d" % (k // PER_SERVICE),
            "vip": "10.99.0.%d" % (1 + k // PER_SERVICE), "port": 80,
            "proto": "tcp", "forward": "nat", "table_size": 65537,
            "health": {"type": "tcp", "port": CHECK_PORT,
                       "interval_ms": interval,
                       "timeout_ms": interval // 2,
                       "rise": 2, "fall": 3},
            "backends": bes})
    return {"ports": [{"name": "p0",
                       "devargs": "net_af_packet0,iface=%s" % IF_APP,
                       "addr": ["10.200.0.2/16"], "gateway": "10.200.0.1",
                       "kernel_if": KIF,
                       # each probe is 3 frames through the kernel_if
                       "kernel_if_pps": KIF_PPS, "kernel_if_burst": 2048}],
            "pipeline": {"mode": "rtc"},
            "lb": {"flow_table": {"size": 65536}, "services": services},
            "metrics": None}


# the threads whose CPU is reported: the control thread (RPC, metrics,
# the exception path), the checks' own thread (absent before it had
# one: its probes were the control thread's), the main thread, the
# worker lcore
THREADS = ("pa-ctrl", "pa-health", "pa-excp", "main", "rte-worker-1")


def thread_ids(pid):
    ids = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            name = f.read().strip()
        if int(tid) == pid:
            name = "main"
        if name in THREADS:
            ids[name] = int(tid)
    if "pa-ctrl" not in ids:
        raise SystemExit("no pa-ctrl thread")
    return ids


def cpu_s(pid, tids):
    """CPU seconds (user + system) of each thread of tids."""
    out = {}
    for name, tid in tids.items():
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[name] = (int(fields[11]) + int(fields[12])) / \
            os.sysconf("SC_CLK_TCK")
    return out


def cpu_share(c1, c0, seconds):
    return {k: round((c1[k] - c0[k]) / seconds, 3) for k in c0}


def health(d):
    return d.call("lb_health_get")


def wait(d, what, cond, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        h = health(d)
        if cond(h):
            return time.monotonic() - t0, h
        time.sleep(0.2)
    st = d.call("stats_get")
    raise SystemExit("%s: not within %d s: %s\ndrops %s\nexcp %s" % (
        what, timeout, health(d), st["drops"], st["excp"]))


def srv_tcpext():
    """The helper's namespace's TcpExt counters (ListenOverflows,
    ListenDrops: SYNs dropped because its accept queue was full)."""
    lines = nsx(NS_SRV, "cat", "/proc/net/netstat").stdout.decode().split(
        "\n")
    for i in range(0, len(lines) - 1, 2):
        if lines[i].startswith("TcpExt:"):
            k, v = lines[i].split()[1:], lines[i + 1].split()[1:]
            d = dict(zip(k, map(int, v)))
            return {x: d.get(x, 0) for x in ("ListenOverflows", "ListenDrops",
                                             "TCPReqQFullDrop")}
    return {}


def kif_tx_dropped():
    """Frames the kernel dropped on the kernel_if's TX queue (its
    txqueuelen overflowed while the exception path was late)."""
    r = nsx(NS_APP, "cat", "/sys/class/net/%s/statistics/tx_dropped" % KIF,
            check=False)
    return int(r.stdout or 0)


def pct(v):
    """p50, p99, max of a list of figures (ms)."""
    v = sorted(v)
    if not v:
        return None
    return {"n": len(v), "p50": round(statistics.median(v), 2),
            "p99": round(v[max(int(len(v) * 0.99) - 1, 0)], 2),
            "max": round(v[-1], 2)}


class Pinger(threading.Thread):
    """stats_get every 50 ms on a connection of its own until stop()."""

    def __init__(self, d):
        super().__init__(daemon=True)
        self.d, self.lat, self.halt = d, [], threading.Event()

    def run(self):
        try:
            with self.d.client(timeout=30) as c:
                while not self.halt.is_set():
                    s = time.monotonic()
                    c.call("stats_get")
                    self.lat.append((time.monotonic() - s) * 1000)
                    time.sleep(0.05)
        except Exception:   # the daemon stopped (a failed run)
            pass

    def stop(self):
        self.halt.set()
        self.join()
        return pct(self.lat)


def names(tag):
    global NS_APP, NS_SRV, IF_APP, IF_SRV, KIF
    NS_APP, NS_SRV = tag + "p-app", tag + "p-srv"
    IF_APP, IF_SRV, KIF = tag + "a0", tag + "s0", tag + "k0"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", type=int, default=10000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--interval", type=int, default=1000, help="ms")
    ap.add_argument("--no-flap", action="store_true",
                    help="skip the all-down / all-up part")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--suffix", default="",
                    help="added to the result file's name (before/after)")
    ap.add_argument("--tag", default="i15h",
                    help="prefix of the namespaces and interfaces (<= 8 "
                    "characters), so that runs side by side do not collide")
    a = ap.parse_args()
    if not 0 < len(a.tag) <= 8:
        raise SystemExit("--tag: 1 to 8 characters")
    names(a.tag)
    if os.geteuid() != 0:
        raise SystemExit("root needed (network namespaces)")
    n = a.backends
    work = "/tmp/%s-bench-health" % a.tag
    os.makedirs(work, exist_ok=True)
    up()
    srv = server()
    conf = write_json(os.path.join(work, "conf.json"), config(n, a.interval))
    sock = unique(a.tag + "p", ".sock")
    d = Daemon(["ip", "netns", "exec", NS_APP,
                os.path.join(a.build, "app", "pktaccel"), "--no-huge",
                "--no-shconf", "--no-pci", "-m", "512", "-l", "0,1", "--",
                "-c", conf, "-s", sock], sock, work, "bench-health")
    out = {"backends": n, "interval_ms": a.interval,
           "date": datetime.date.today().isoformat(),
           "cpus": os.cpu_count(),
           # the machine's load: figures of a shared 2-CPU box mean
           # little without it
           "load_start": [round(x, 1) for x in os.getloadavg()]}
    try:
        # the route as soon as the kernel_if exists: a probe bound to an
        # interface without a route is sent on-link (the kernel's
        # fallback), and 10,000 of them fill its neighbour table
        t0 = time.monotonic()
        while nsx(NS_APP, "ip", "link", "show", KIF,
                  check=False).returncode != 0:
            if time.monotonic() - t0 > 120 or d.proc.poll() is not None:
                raise SystemExit("no kernel_if %s" % KIF)
            time.sleep(0.05)
        nsx(NS_APP, "ip", "route", "add", "10.201.0.0/16", "via",
            "10.200.0.1", "dev", KIF)
        d.wait_ready(120)
        pid = d.proc.pid
        # the daemon is a child of "ip netns exec": find it
        r = sh("pgrep", "-P", str(pid), check=False)
        if r.stdout.strip():
            pid = int(r.stdout.split()[0])
        tid = thread_ids(pid)
        try:
            took, h = wait(d, "all up", lambda h: h["up"] == n, 120)
            out["all_up_s"] = round(took, 2)
            print("all %d up after %.1f s" % (n, took), flush=True)
        except SystemExit as e:
            # measured anyway: what the machine could not keep up with
            print(e, flush=True)
            st = d.call("stats_get")
            out["not_all_up"] = {"health": health(d),
                                 "excp": st["excp"]["interfaces"]["p0"],
                                 "drops": {k: v for k, v in
                                           st["drops"].items() if v}}
            a.no_flap = True

        # steady state: CPU of the control thread, stats_get latency
        h0, x0, k0 = health(d), srv_tcpext(), kif_tx_dropped()
        p0, c0, t0 = h0["probes"], cpu_s(pid, tid), time.monotonic()
        lat = []
        with d.client(timeout=30) as c:
            while time.monotonic() - t0 < a.seconds:
                s = time.monotonic()
                c.call("stats_get")
                lat.append((time.monotonic() - s) * 1000)
                time.sleep(0.05)
        el = time.monotonic() - t0
        cpu = cpu_share(cpu_s(pid, tid), c0, el)
        pps = (health(d)["probes"] - p0) / el
        lat.sort()
        out["steady"] = {
            "seconds": round(el, 1), "ctrl_cpu": cpu["pa-ctrl"],
            "checks_cpu": cpu.get("pa-health"), "cpu": cpu,
            "probes_per_s": round(pps), "stats_get_ms": {
                "n": len(lat), "p50": round(statistics.median(lat), 2),
                "p99": round(lat[int(len(lat) * 0.99) - 1], 2),
                "max": round(lat[-1], 2)}}
        # what held the rate back, if anything: probes waiting or timing
        # out, frames the exception path dropped
        st = d.call("stats_get")
        out["steady"]["health"] = h1 = health(d)
        # over the run only (the counters are since the daemon started)
        out["steady"]["results"] = {k: h1["results"][k] - h0["results"][k]
                                    for k in h1["results"]
                                    if h1["results"][k] - h0["results"][k]}
        out["steady"]["deferred"] = h1["deferred"] - h0["deferred"]
        x1 = srv_tcpext()
        out["steady"]["helper_tcpext"] = {k: x1[k] - x0[k] for k in x1}
        out["steady"]["kernel_if_tx_dropped"] = kif_tx_dropped() - k0
        out["steady"]["excp"] = st["excp"]["interfaces"]["p0"]
        out["steady"]["drops"] = {k: v for k, v in st["drops"].items() if v}
        print("steady: %s" % out["steady"], flush=True)
        took = []
        for _ in range(3):
            s = time.monotonic()
            lst = d.call("lb_service_list")
            took.append(round((time.monotonic() - s) * 1000, 1))
        out["lb_service_list_ms"] = statistics.median(took)
        out["lb_service_list_ms_each"] = took
        out["table_hashes"] = [x["table_hash"] for x in lst]
        out["probe_latency_ms"] = pct(
            [b["health_latency_ms"] for x in lst for b in x["backends"]
             if "health_latency_ms" in b])
        print("lb_service_list %.0f ms, probe latency %s" % (
            out["lb_service_list_ms"], out["probe_latency_ms"]), flush=True)

        # every backend fails, then comes back
        if a.no_flap:
            raise StopIteration
        c0, t0 = cpu_s(pid, tid), time.monotonic()
        pinger = Pinger(d)
        pinger.start()
        srv.kill()
        srv.wait()
        took, h = wait(d, "all down", lambda h: h["down"] == n, 120)
        out["all_down_s"] = round(took, 2)
        # the tables follow the verdicts within a publication gap
        n_svc = (n + PER_SERVICE - 1) // PER_SERVICE
        t1 = time.monotonic()
        while d.call("stats_get")["lb"]["panic_services"] < n_svc and \
                time.monotonic() - t1 < 10:
            time.sleep(0.05)
        panic = d.call("stats_get")["lb"]["panic_services"]
        srv = server()
        took, h = wait(d, "all up again", lambda h: h["up"] == n, 120)
        out["all_up_again_s"] = round(took, 2)
        cpu = cpu_share(cpu_s(pid, tid), c0, time.monotonic() - t0)
        out["flap"] = {"stats_get_ms": pinger.stop(),
                       "ctrl_cpu": cpu["pa-ctrl"],
                       "checks_cpu": cpu.get("pa-health"), "cpu": cpu,
                       "panic_services": panic,
                       "builds": d.call("stats_get")["lb"]["builds"]}
        print("flap: down in %.1f s, up in %.1f s, %s" % (
            out["all_down_s"], out["all_up_again_s"], out["flap"]),
            flush=True)
        out["deferred"] = health(d)["deferred"]
    except StopIteration:
        pass
    except SystemExit as e:
        out["error"] = str(e)
        print(e, flush=True)
    finally:
        out["load_end"] = [round(x, 1) for x in os.getloadavg()]
        d.stop()
        srv.kill()
        down()
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "health-%s-%d-%dms%s.json" % (
        out["date"], n, a.interval, "-" + a.suffix if a.suffix else ""))
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
