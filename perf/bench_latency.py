#!/usr/bin/python3
"""Latency and idle benchmark.

Cost of timestamping (--skip-cost to leave out): pktaccel rtc with one
worker lcore on CPU 1, bench_acl's traffic (10k IPv4 UDP flows, 64-byte
frames, net_pcap infinite_rx=1) and rule sets (0 and 1k rules), with
pipeline.latency on and off, interleaved --pairs times (on/off order
alternating). Mpps from stats_get over --seconds after 2 s of warm-up,
cycles/packet = TSC Hz / rate; medians of each side. The "on" runs also
report the latency percentiles the histograms saw at full load.

Idle (--skip-idle to leave out): a live daemon on two net_af_packet veths
in a private network namespace, no traffic, for --idle-seconds: CPU use of
the whole process (utime + stime from /proc/PID/stat) with pipeline.idle
busy and adaptive, rtc (-l 0,1) and pipeline mode (lcores mapped by the
daemon). Then the wake-up: --probes frames sent --gap-ms apart (so that an
adaptive lcore is asleep at its longest each time) through the daemon,
each timed by the kernel (SO_TIMESTAMPNS) when it leaves the sender's veth
and when it arrives on the other veth: median / p99 / max, busy vs
adaptive.

Writes perf/results/latency-<date>.json.

Usage: /usr/bin/python3 perf/bench_latency.py [--seconds 6] [--pairs 5]
           [--rules 0,1000] [--idle-seconds 10] [--skip-cost] [--skip-idle]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_acl as ba  # noqa: E402

ROOT = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"
PROBE = os.path.join(HERE, "wake_probe.py")


# ----------------------------------------------------------------- cost

def run_daemon(tmp, pcap, flows, rules, mem, pipeline_extra, name):
    conf = os.path.join(tmp, name + ".json")
    sock = os.path.join(tmp, name + ".sock")
    pipeline = {"mode": "rtc", "lcores": {"worker": [1]}}
    pipeline.update(pipeline_extra)
    cfg = {"ports": [{"name": "bench0", "devargs":
                      "net_pcap_bench0,rx_pcap=%s,infinite_rx=1" % pcap,
                      "mbufs": flows + 8192}],
           "pipeline": pipeline, "metrics": None}
    if rules:
        cfg["acl"] = {"default": "permit",
                      "rules": [ba.rule_json(r) for r in rules]}
    with open(conf, "w") as f:
        json.dump(cfg, f)
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen([ba.DAEMON] + ba.eal() + ["-m", str(mem), "-l", "0,1",
                                                    "--", "-c", conf, "-s", sock],
                            stdout=log, stderr=subprocess.STDOUT)
    ba.wait_socket(sock, proc, timeout=600)
    return proc, sock


def thread_cpu_s(pid, comm):
    """CPU seconds of the thread of @p pid named @p comm."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() != comm:
                continue
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            v = f.read().rsplit(")", 1)[1].split()
        return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")
    raise RuntimeError("no thread %s in %d" % (comm, pid))


def one_cost_run(tmp, pcap, flows, rules, seconds, mem, latency):
    """Mpps over the window, and cycles per packet two ways: TSC Hz / rate
    (wall time: counts the time another process had the worker's CPU) and
    the worker thread's own CPU time x TSC Hz / packets (what the worker
    spent, whoever else ran: the figure to compare on a shared machine)."""
    proc, sock = run_daemon(tmp, pcap, flows, rules, mem,
                            {"latency": latency}, "cost")
    try:
        c = ba.rpc_connect(sock)
        hz = c.call("pipeline_get")["tsc_hz"]
        time.sleep(ba.WARMUP_S)
        a, ca, t0 = c.call("stats_get"), ba.cpu_times(), time.time()
        w0 = thread_cpu_s(proc.pid, "rte-worker-1")
        time.sleep(seconds)
        w1 = thread_cpu_s(proc.pid, "rte-worker-1")
        b, t1, cb = c.call("stats_get"), time.time(), ba.cpu_times()
        c.close()
    finally:
        ba.stop(proc)
    pkts = b["rx_packets"] - a["rx_packets"]
    pps = pkts / (t1 - t0)
    return {"latency": latency, "mpps": pps / 1e6, "cycles_per_packet": hz / pps,
            "worker_cpu_share": (w1 - w0) / (t1 - t0),
            "cpu_cycles_per_packet": (w1 - w0) * hz / pkts,
            "latency_stats": b.get("latency"), "cpu_busy": ba.cpu_busy(ca, cb)}


def bench_cost(args, tmp):
    flows = ba.make_flows(args.flows, False)
    pcap = os.path.join(tmp, "flows.pcap")
    ba.write_pcap(pcap, flows)
    out = []
    for n in [int(x) for x in args.rules.split(",") if x]:
        rules = ba.make_rules(n, flows, False) if n else None
        runs = []
        for k in range(args.pairs):
            order = (True, False) if k % 2 == 0 else (False, True)
            for lat in order:
                ba.wait_quiet(args.quiet_wait)
                r = one_cost_run(tmp, pcap, len(flows), rules, args.seconds,
                                 args.mem, lat)
                runs.append(r)
                print("rules %5d latency %-3s %6.2f Mpps %6.1f c/p, worker "
                      "CPU %.2f: %6.1f c/p  (machine %s)" % (
                          n, "on" if lat else "off", r["mpps"],
                          r["cycles_per_packet"], r["worker_cpu_share"],
                          r["cpu_cycles_per_packet"], r["cpu_busy"]),
                      flush=True)
        on = [r for r in runs if r["latency"]]
        off = [r for r in runs if not r["latency"]]
        row = {"rules": n, "runs": runs}
        for side, rs in (("on", on), ("off", off)):
            row[side] = {
                "mpps_median": statistics.median(r["mpps"] for r in rs),
                "cycles_per_packet_median": statistics.median(
                    r["cycles_per_packet"] for r in rs),
                "cpu_cycles_per_packet_median": statistics.median(
                    r["cpu_cycles_per_packet"] for r in rs),
            }
        row["cost_cycles_per_packet"] = \
            row["on"]["cycles_per_packet_median"] - \
            row["off"]["cycles_per_packet_median"]
        row["cost_cpu_cycles_per_packet"] = \
            row["on"]["cpu_cycles_per_packet_median"] - \
            row["off"]["cpu_cycles_per_packet_median"]
        row["latency_at_load"] = on[len(on) // 2]["latency_stats"]
        print("rules %5d: on %.2f Mpps %.1f c/p (CPU %.1f), off %.2f Mpps "
              "%.1f c/p (CPU %.1f), cost %+.1f c/p (CPU %+.1f); at load %s" % (
                  n, row["on"]["mpps_median"],
                  row["on"]["cycles_per_packet_median"],
                  row["on"]["cpu_cycles_per_packet_median"],
                  row["off"]["mpps_median"],
                  row["off"]["cycles_per_packet_median"],
                  row["off"]["cpu_cycles_per_packet_median"],
                  row["cost_cycles_per_packet"],
                  row["cost_cpu_cycles_per_packet"], row["latency_at_load"]),
              flush=True)
        out.append(row)
    return out


# ----------------------------------------------------------------- idle

def sh(*a, check=False, timeout=60):
    r = subprocess.run(list(a), capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (a, r.stderr.decode()))
    return r


NETNS_PREFIX = "pa-bench"     # perf/run.py sets it


def make_netns():
    ns = "%s-%s" % (NETNS_PREFIX, uuid.uuid4().hex[:6])
    sh("ip", "netns", "add", ns, check=True)
    ex = ("ip", "netns", "exec", ns)
    for a, b in (("vA1", "vB1"), ("vA2", "vB2")):
        sh("ip", "-n", ns, "link", "add", a, "type", "veth", "peer", "name", b,
           check=True)
        for dev in (a, b):
            sh(*ex, "sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dev)
            sh("ip", "-n", ns, "link", "set", dev, "up", check=True)
    return ns


def proc_cpu_s(pid):
    return ba.proc_cpu_s(pid)


def idle_run(tmp, ns, mode, idle, seconds, probes, gap_ms):
    name = "idle-%s-%s" % (mode, idle["mode"])
    conf = os.path.join(tmp, name + ".json")
    sock = os.path.join(tmp, name + ".sock")
    with open(conf, "w") as f:
        json.dump({"ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1", "peer": "p1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2", "peer": "p0"}],
            "pipeline": {"mode": mode, "idle": idle}, "metrics": None}, f)
    lc = ["-l", "0,1"] if mode == "rtc" else []
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen(["ip", "netns", "exec", ns, ba.DAEMON, "--no-huge",
                             "--no-shconf", "--no-pci", "-m", "512"] + lc +
                            ["--", "-c", conf, "-s", sock],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        ba.wait_socket(sock, proc, timeout=120)
        time.sleep(1)
        c0, t0, ca = proc_cpu_s(proc.pid), time.time(), ba.cpu_times()
        time.sleep(seconds)
        c1, t1, cb = proc_cpu_s(proc.pid), time.time(), ba.cpu_times()
        c = ba.rpc_connect(sock)
        st = c.call("stats_get")
        res = {"mode": mode, "idle": idle,
               "cpu_share": (c1 - c0) / (t1 - t0),
               "machine_cpu_busy": ba.cpu_busy(ca, cb),
               "sleeps": sum(s["sleeps"] for s in st["lcores"].values()),
               "lcores": len(st["lcores"])}
        if probes:
            r = sh("ip", "netns", "exec", ns, PYTHON, PROBE, "--tx", "vB1",
                   "--rx", "vB2", "--count", str(probes), "--gap-ms",
                   str(gap_ms), timeout=probes * (gap_ms / 1000 + 0.2) + 30)
            if r.returncode != 0:
                raise RuntimeError(r.stderr.decode())
            d = json.loads(r.stdout)
            us = sorted(d["us"])
            res["wake"] = {"probes": probes, "received": len(us),
                           "gap_ms": gap_ms,
                           "median_us": statistics.median(us) if us else None,
                           "p99_us": us[min(len(us) - 1, int(len(us) * 0.99))]
                           if us else None,
                           "max_us": us[-1] if us else None}
            res["latency_in_appliance"] = c.call("stats_get")["latency"]
        c.close()
    finally:
        ba.stop(proc)
    return res


def bench_idle(args, tmp):
    if os.geteuid() != 0:
        print("idle benchmark needs root (ip netns)", file=sys.stderr)
        return None
    ns = make_netns()
    out = []
    try:
        for mode in ("rtc", "pipeline"):
            for idle in ({"mode": "busy"},
                         {"mode": "adaptive", "max_sleep_us": 100},
                         {"mode": "adaptive", "max_sleep_us": 1000}):
                if idle.get("max_sleep_us") == 1000 and mode != "rtc":
                    continue
                ba.wait_quiet(args.quiet_wait)
                r = idle_run(tmp, ns, mode, idle, args.idle_seconds,
                             args.probes, args.gap_ms)
                print("%-8s %-32s idle CPU %.3f  sleeps %d  wake %s" % (
                    mode, json.dumps(idle), r["cpu_share"], r["sleeps"],
                    r.get("wake")), flush=True)
                out.append(r)
    finally:
        sh("ip", "netns", "del", ns)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", default=ba.DAEMON)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rules", default="0,1000")
    ap.add_argument("--mem", type=int, default=1024)
    ap.add_argument("--idle-seconds", type=int, default=10)
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--gap-ms", type=float, default=20)
    ap.add_argument("--quiet-wait", type=int, default=60)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-idle", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    ba.DAEMON = os.path.abspath(args.daemon)
    head = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip()
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "git": head, "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    with tempfile.TemporaryDirectory(prefix="pa-bench-lat-") as tmp:
        if not args.skip_cost:
            res["cost"] = bench_cost(args, tmp)
        if not args.skip_idle:
            res["idle"] = bench_idle(args, tmp)
    path = args.out or os.path.join(
        HERE, "results", "latency-%s.json" % datetime.date.today().isoformat())
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
