#!/usr/bin/python3
"""Fleet benchmark: appliances behind the ECMP routes that BGP makes, in
the BGP lab of scripts/lab-netns.sh (up --bgp --apps 3; docs/scale-out.md).

  failover   seconds from kill -9 of an appliance (SIGKILL sent) to the
             router's route change (its next hop gone from the routes to
             the IPv4 and the IPv6 VIP), with BFD on the BGP sessions and
             without (the BGP hold time, 3 s, decides); --repeat times each
  drain      a planned drain while 30 keep-alive TCP connections are held
             (three sources) and UDP runs at --rate datagrams/s from 16
             flows: health_set {"draining": true} on appliance 1, wait
             until the router has withdrawn it, --drain-wait seconds, stop
             it (SIGTERM); then a request on every held connection: how
             many broke, how many reached another backend than before
             (each connection's backend is checked before and after),
             datagrams lost; --repeat times
  kill       the same with kill -9 of appliance 1 instead (unplanned), a
             request on every held connection sent right after the kill
  load       connections/s (one HTTP request each, --conns connections,
             --concurrency at once, dsr VIP) and requests/s (keep-alive,
             10 a connection) through 1, 2 and 3 announcing appliances;
             the flows each appliance created

Writes perf/results/fleet-<date>.json and prints Markdown tables
(docs/scale-out.md).

Usage: /usr/bin/python3 perf/bench_fleet.py [--repeat 3] [--conns 1000]
           [--rate 1000] [--name fleet] [--only failover,drain,kill,load]
Needs root and BIRD 2; builds and removes its own lab (--name).
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pylib"))
from pktaccel.lab import Lab, bird_usable, namespaces_usable  # noqa: E402


def med(xs):
    return statistics.median(xs) if xs else None


def start(lab, work, ks):
    ds = {k: lab.start_app(k, work, check_neigh=False) for k in ks}
    lab.wait_routes(lab.fleet_routes(sorted(ds)), timeout=120)
    lab.wait_bfd(sorted(ds))
    for v in (lab.env["VIP_DSR"], lab.env["VIP6_DSR"]):
        lab.wait_service(v, timeout=60)
    return ds


def stop_all(lab, ds):
    for d in ds.values():
        if d.alive():
            d.stop(timeout=60)
    lab.forget_sockets()
    lab.wait_routes(lab.fleet_routes([]), timeout=60)


def wait_gone(lab, k, vips, timeout=60):
    """Poll the router until appliance k is the next hop of none of vips;
    the monotonic time it happened."""
    hops = {v: lab.nexthop(k, v) for v in vips}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(hops[v] not in lab.rtr_nexthops(v) for v in vips):
            return time.monotonic()
        time.sleep(0.005)
    raise AssertionError("appliance %d still a next hop after %ds"
                         % (k, timeout))


def failover(lab, work, repeat, bfd):
    if lab.bfd != bfd:
        lab.set_bfd(bfd)
    vips = [lab.env["VIP_DSR"], lab.env["VIP6_DSR"]]
    ds = start(lab, work, [1, 2])
    runs = []
    try:
        for _ in range(repeat):
            lab.wait_routes(lab.fleet_routes([1, 2]), timeout=120)
            lab.wait_bfd([1, 2])
            time.sleep(1.0)
            t0 = time.monotonic()
            lab.kill9(ds[2])
            t1 = wait_gone(lab, 2, vips)
            runs.append(t1 - t0)
            ds[2] = lab.start_app(2, work, check_neigh=False)
    finally:
        stop_all(lab, ds)
    return {"bfd": bfd, "seconds": runs, "median": med(runs)}


def event(lab, work, kind, rate, repeat, drain_wait):
    """Held connections and UDP flows through two appliances while
    appliance 1 drains and stops (kind "drain") or dies (kind "kill")."""
    vip = lab.env["VIP_DSR"]
    srcs = ",".join(lab.env["CLI_ADDRS"].split())
    runs = []
    for _ in range(repeat):
        ds = start(lab, work, [1, 2])
        held = lab.hold(vip, 30, src=srcs)
        probe = lab.udp_probe(vip, flows=16, rate=rate, src=srcs)
        try:
            before = {c["i"]: c["backend"] for c in held.conns}
            opened = sum(1 for c in held.conns if c["error"] is None)
            time.sleep(1.0)
            share = [d.call("stats_get")["lb"]["flows"] for d in
                     (ds[1], ds[2])]
            t0 = time.monotonic()
            if kind == "drain":
                lab.drain(ds[1])
                t1 = wait_gone(lab, 1, [vip])
                time.sleep(drain_wait)
                ds[1].stop(timeout=60)
                rnd = held.round()
            else:
                lab.kill9(ds[1])
                # requests in flight while the router still sends half
                # of the flows to the dead appliance
                held.send("round 20")
                t1 = wait_gone(lab, 1, [vip])
                r = held.read(80)
                assert r["event"] == "round", r
                rnd = r["conns"]
            time.sleep(1.0)
            pr = probe.stop()
            broken = [c for c in rnd if c["error"] is not None]
            moved = [c for c in rnd if c["error"] is None and
                     c["backend"] != before[c["i"]]]
            runs.append({"held": opened, "broken": len(broken),
                         "other_backend": len(moved),
                         "withdrawn_s": t1 - t0,
                         "udp_sent": pr["sent"], "udp_lost": pr["lost"],
                         "udp_flows_other_backend": sum(
                             1 for f in pr["flows"]
                             if len(f["backends"]) > 1),
                         "udp_lost_per_flow": [f["lost"]
                                               for f in pr["flows"]],
                         "flows_per_appliance_before": share,
                         "errors": [c["error"] for c in broken][:5]})
            held.close()
        finally:
            probe.kill()
            held.kill()
            stop_all(lab, ds)
    return {"runs": runs,
            "broken": [r["broken"] for r in runs],
            "other_backend": [r["other_backend"] for r in runs],
            "udp_lost": [r["udp_lost"] for r in runs],
            "udp_sent": [r["udp_sent"] for r in runs],
            "withdrawn_s": med([r["withdrawn_s"] for r in runs])}


def load(lab, work, n, conns, conc, repeat):
    ds = start(lab, work, list(range(1, n + 1)))
    vip = lab.env["VIP_DSR"]
    srcs = ",".join(lab.env["CLI_ADDRS"].split())
    out = {"cps": [], "rps": [], "failed": 0}
    try:
        f0 = [d.call("stats_get")["lb"]["flows_created"]
              for d in ds.values()]
        for _ in range(repeat):
            r = lab.burst(vip, conns, concurrency=conc, src=srcs)
            out["failed"] += r["failed"]
            out["cps"].append(r["ok"] / r["elapsed"])
            r = lab.burst(vip, max(1, conns // 5),
                          concurrency=max(1, conc // 2), requests=10,
                          src=srcs)
            out["failed"] += r["failed"]
            out["rps"].append(r["requests"] / r["elapsed"])
        f1 = [d.call("stats_get")["lb"]["flows_created"]
              for d in ds.values()]
    finally:
        stop_all(lab, ds)
    return {"appliances": n, "cps": med(out["cps"]), "rps": med(out["rps"]),
            "cps_runs": out["cps"], "rps_runs": out["rps"],
            "failed": out["failed"],
            "flows_per_appliance": [b - a for a, b in zip(f0, f1)]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--drain-wait", type=float, default=1.0)
    ap.add_argument("--name", default="fleet")
    ap.add_argument("--only", default="failover,drain,kill,load")
    a = ap.parse_args()
    why = namespaces_usable() or bird_usable()
    if why:
        sys.exit("bench_fleet: %s" % why)
    only = set(a.only.split(","))

    lab = Lab(a.name, False, bgp=True, apps=3)
    res = {"date": datetime.date.today().isoformat(),
           "cpus": len(os.sched_getaffinity(0)),
           "load_average": os.getloadavg(), "repeat": a.repeat,
           "conns": a.conns, "concurrency": a.concurrency,
           "rate": a.rate, "drain_wait_s": a.drain_wait}
    work = tempfile.mkdtemp(prefix="pa-bench-fleet-")
    try:
        lab.up()
        if "failover" in only:
            res["failover"] = {
                "bfd": failover(lab, work, a.repeat, True),
                "hold_time": failover(lab, work, a.repeat, False)}
            lab.set_bfd(True)
        if "drain" in only:
            res["drain"] = event(lab, work, "drain", a.rate, a.repeat,
                                 a.drain_wait)
        if "kill" in only:
            res["kill"] = event(lab, work, "kill", a.rate, a.repeat,
                                a.drain_wait)
        if "load" in only:
            res["load"] = [load(lab, work, n, a.conns, a.concurrency,
                                a.repeat) for n in (1, 2, 3)]
    finally:
        lab.down()
    res["load_average_after"] = os.getloadavg()

    out = os.path.join(ROOT, "perf", "results",
                       "fleet-%s.json" % res["date"])
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    if "failover" in res:
        print("| failure detection | kill -9 -> route change, s (runs) "
              "| median |")
        print("|---|---|---|")
        for k, v in res["failover"].items():
            print("| %s | %s | %.2f |" % (
                "BFD (100 ms x 5)" if v["bfd"] else "BGP hold time (3 s)",
                ", ".join("%.2f" % x for x in v["seconds"]), v["median"]))
        print()
    for k in ("drain", "kill"):
        if k not in res:
            continue
        v = res[k]
        print("%s: held TCP connections broken %s (of 30), on another "
              "backend %s; UDP lost %s of %s; withdrawn after %.2f s"
              % (k, v["broken"], v["other_backend"], v["udp_lost"],
                 v["udp_sent"], v["withdrawn_s"]))
    if "load" in res:
        print()
        print("| appliances | connections/s | requests/s (keep-alive) "
              "| failed | flows per appliance |")
        print("|---|---|---|---|---|")
        for v in res["load"]:
            print("| %d | %.0f | %.0f | %d | %s |" % (
                v["appliances"], v["cps"], v["rps"], v["failed"],
                v["flows_per_appliance"]))
    print("\nwritten to %s" % out)


if __name__ == "__main__":
    main()
