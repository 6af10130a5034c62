#!/usr/bin/python3
"""Live SYN flood in the netns lab (issue 17, docs/performance.md "SYN
flood"): `hping3 --flood --rand-source -S` at the dsr VIP from the
client namespace while --conns real HTTP connections (lab-client.py
burst, --concurrency at once) run to the same VIP, through one appliance
of the lab of scripts/lab-netns.sh. For each variant:

  none    the lab's configuration (no protect section),
  defer   protect {"syn_timeout_s": 5, "syn_defer": true}.

Reports failed connections, the flood's packets seen by the appliance
(rx), the peak flow-table occupancy (stats lb.flows_peak), the flows at
the end, and the drops. Needs root and hping3 (apt-get install hping3).
Builds and removes its own lab (name "i17sf").

Usage: /usr/bin/python3 perf/bench_flood_lab.py [--conns 500]
           [--concurrency 20] [--flood-s 20] [--variants none,defer]
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pylib"))
from pktaccel.lab import Lab, namespaces_usable  # noqa: E402

PROTECT = {"none": None,
           "defer": {"syn_timeout_s": 5, "syn_defer": True}}


def one(lab, work, name, a):
    def mutate(cfg):
        if PROTECT[name]:
            cfg["protect"] = PROTECT[name]
    d = lab.start_app(1, work, mutate=mutate, check_neigh=False)
    lab.route("1")
    vip = lab.env["VIP_DSR"]
    lab.wait_service(vip)
    before = d.call("stats_get")
    flood = subprocess.Popen(
        lab.nsx(lab.ns("cli")) + ["timeout", str(a.flood_s), "hping3",
                                  "--flood", "--rand-source", "-S", "-p",
                                  "80", vip],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    t0 = time.monotonic()
    r = lab.burst(vip, a.conns, concurrency=a.concurrency,
                  src=lab.env["CLI_ADDRS"].replace(" ", ","))
    took = time.monotonic() - t0
    mid = d.call("stats_get")
    flood.wait()
    after = d.call("stats_get")
    d.stop()
    lb = after["lb"]
    drops = {k: v - before["drops"].get(k, 0)
             for k, v in after["drops"].items()
             if v - before["drops"].get(k, 0)}
    return {"protect": PROTECT[name], "conns": a.conns,
            "failed": r["failed"], "ok": r["ok"], "burst_s": round(took, 2),
            "rx_packets": after["rx_packets"] - before["rx_packets"],
            "flows_during": mid["lb"]["flows"],
            "flows_peak": lb["flows_peak"], "flows_end": lb["flows"],
            "flow_table_capacity": lb["flow_table_capacity"],
            "syn_stateless": lb.get("syn_stateless", 0), "drops": drops}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conns", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--flood-s", type=int, default=20)
    ap.add_argument("--variants", default="none,defer")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    why = namespaces_usable()
    if why:
        sys.exit("bench_flood_lab: %s" % why)
    if shutil.which("hping3") is None:
        sys.exit("bench_flood_lab: hping3 missing (apt-get install hping3)")
    lab = Lab("i17sf", False)
    res = {"date": datetime.datetime.utcnow().isoformat() + "Z",
           "cpus": len(os.sched_getaffinity(0)), "runs": {}}
    work = tempfile.mkdtemp(prefix="pa-bench-floodlab-")
    try:
        lab.up()
        for v in a.variants.split(","):
            res["runs"][v] = r = one(lab, work, v, a)
            print("%-6s failed %d of %d | flood rx %d | flows during %d, "
                  "peak %d, end %d | drops %s"
                  % (v, r["failed"], r["conns"], r["rx_packets"],
                     r["flows_during"], r["flows_peak"], r["flows_end"],
                     r["drops"]))
    finally:
        lab.down()
    if not a.no_save:
        out = os.path.join(ROOT, "perf", "results", "flood-lab-%s.json"
                           % datetime.date.today().isoformat())
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        print("written to", out)


if __name__ == "__main__":
    main()
