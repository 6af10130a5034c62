#!/usr/bin/python3
"""Lab benchmark: real TCP and UDP through the live lab of
scripts/lab-netns.sh (docs/lab.md), through one appliance. (Several
appliances behind the ECMP routes BGP makes: perf/bench_fleet.py.)

  cps        connections per second: --conns connections (one HTTP request
             each, --concurrency at once) to the dsr and nat VIPs
  requests   requests per second: --conns / 5 keep-alive connections of
             10 requests each
  direct     the same to a backend's own address, through the router only
             (no appliance): what the lab's kernels and Python servers
             allow at most
  loss       UDP datagrams lost (--rate per second from 16 flows) around a
             drain (a backend set to drain and back to up) and a rule
             change (a drop rule for another source added and deleted);
             and held TCP connections broken by each (--repeat times each)

Each figure is the median of --repeat runs. Writes
perf/results/lab-<date>.json and prints a Markdown table (docs/lab.md).

Usage: /usr/bin/python3 perf/bench_lab.py [--conns 1000] [--repeat 3]
           [--static-neigh]      (or PA_LAB_STATIC_NEIGH=1: for an
                                  appliance that does not answer ARP yet)
Needs root; builds and removes its own lab (name "bench").
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
from pktaccel.lab import Lab, namespaces_usable, sh  # noqa: E402


def med(xs):
    return statistics.median(xs) if xs else None


def run_load(lab, target, port, conns, conc, repeat):
    out = {"cps": [], "rps": [], "failed": 0}
    for _ in range(repeat):
        r = lab.burst(target, conns, port=port, concurrency=conc,
                      src=lab.env["CLI_ADDRS"].replace(" ", ","))
        out["failed"] += r["failed"]
        out["cps"].append(r["ok"] / r["elapsed"])
        r = lab.burst(target, max(1, conns // 5), port=port,
                      concurrency=max(1, conc // 2), requests=10,
                      src=lab.env["CLI_ADDRS"].replace(" ", ","))
        out["failed"] += r["failed"]
        out["rps"].append(r["requests"] / r["elapsed"])
    return {"cps": med(out["cps"]), "rps": med(out["rps"]),
            "cps_runs": out["cps"], "rps_runs": out["rps"],
            "failed": out["failed"]}


def event_loss(lab, workdir, event, rate, repeat):
    """UDP loss and broken TCP connections around one event."""
    runs = []
    vip = lab.env["VIP_DSR"]
    src = lab.env["CLI_ADDRS"].split()
    for _ in range(repeat):
        d1 = lab.start_app(1, workdir, check_neigh=False)
        lab.route("1")
        lab.wait_service(vip)
        held = lab.hold(vip, 30, src=src[0])
        probe = lab.udp_probe(vip, flows=16, rate=rate, src=src[0])
        time.sleep(1.0)
        t0 = time.monotonic()
        if event == "drain":
            be = lab.backends[-1]["addr"]
            for svc in ("web-dsr", "udp-dsr"):
                d1.call("lb_backend_set", {"service": svc, "addr": be,
                                           "state": "drain"})
            time.sleep(0.5)
            for svc in ("web-dsr", "udp-dsr"):
                d1.call("lb_backend_set", {"service": svc, "addr": be,
                                           "state": "up"})
        elif event == "rule":
            d1.call("acl_rule_add", {"id": 77, "priority": 10,
                                     "src": src[2] + "/32",
                                     "action": "drop"})
            time.sleep(0.5)
            d1.call("acl_rule_delete", {"id": 77})
        took = time.monotonic() - t0
        time.sleep(1.0)
        rnd = held.round()
        pr = probe.stop()
        held.close()
        broken = sum(1 for c in rnd if c["error"] is not None)
        runs.append({"sent": pr["sent"], "lost": pr["lost"],
                     "event_s": took, "held": len(rnd),
                     "held_broken": broken})
        if d1.alive():
            d1.stop()
    return {"lost": [r["lost"] for r in runs],
            "sent": [r["sent"] for r in runs],
            "held_broken": [r["held_broken"] for r in runs], "runs": runs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--static-neigh", action="store_true",
                    default=os.environ.get("PA_LAB_STATIC_NEIGH") == "1")
    a = ap.parse_args()
    why = namespaces_usable()
    if why:
        sys.exit("bench_lab: %s" % why)

    lab = Lab("bench", a.static_neigh)
    res = {"date": datetime.date.today().isoformat(),
           "cpus": len(os.sched_getaffinity(0)),
           "static_neigh": a.static_neigh, "conns": a.conns,
           "concurrency": a.concurrency, "repeat": a.repeat, "load": {},
           "loss": {}}
    work = tempfile.mkdtemp(prefix="pa-bench-lab-")
    try:
        lab.up()
        # direct: the backends answer the clients through the router (the
        # lab routes their answers from their own address through
        # appliance 1, for nat) for the time of this measure
        be = lab.backends[0]
        cli_net = "10.10.0.0/24"
        for via in (lab.env["RTR_BR_ADDR"], lab.env["APP1_LAN_ADDR"]):
            for b in lab.backends:
                sh(["ip", "-n", b["ns"], "route", "replace", cli_net,
                    "via", via], check=True)
            if via == lab.env["RTR_BR_ADDR"]:
                res["load"]["direct"] = run_load(lab, be["addr"], 80,
                                                 a.conns, a.concurrency,
                                                 a.repeat)
        d = lab.start_app(1, work, check_neigh=False)
        lab.route("1")
        for mode in ("dsr", "nat"):
            lab.wait_service(lab.env["VIP_" + mode.upper()])
            res["load"]["%s-1" % mode] = run_load(
                lab, lab.env["VIP_" + mode.upper()], 80, a.conns,
                a.concurrency, a.repeat)
        d.stop()
        for ev in ("drain", "rule"):
            res["loss"][ev] = event_loss(lab, work, ev, a.rate, a.repeat)
    finally:
        lab.down()

    out = os.path.join(ROOT, "perf", "results",
                       "lab-%s.json" % res["date"])
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print("| path | connections/s | requests/s (keep-alive) | failed |")
    print("|---|---|---|---|")
    for k, v in res["load"].items():
        print("| %s | %.0f | %.0f | %d |" % (k, v["cps"], v["rps"],
                                             v["failed"]))
    print()
    print("| event | datagrams lost (per run) | of sent | held TCP "
          "connections broken |")
    print("|---|---|---|---|")
    for k, v in res["loss"].items():
        print("| %s | %s | %s | %s |" % (k, v["lost"], v["sent"],
                                         v["held_broken"]))
    print("\nwritten to %s" % out)


if __name__ == "__main__":
    main()
