#!/usr/bin/python3
"""Draw the saved benchmark results as PNG charts (matplotlib, Debian
python3-matplotlib) for docs/performance.md and docs/scale-out.md.

  perf-mpps.png      Mpps per scenario, pktaccel beside its peer  (run-*.json)
  perf-cycles.png    CPU cycles per packet, pktaccel beside its peer
  perf-latency.png   latency percentiles at full load (run-*.json, and the
                     rows of latency-*.json when there is one)
  fleet-cps.png      connections/s and requests/s through 1, 2 and 3
                     appliances (fleet-*.json), the lab's direct path and
                     one appliance (lab-*.json) beside them
  fleet-failover.png kill -9 / drain to the router's route change, each run
                     (fleet-*.json)

The newest file of each kind in --results is used unless named. Charts
whose data is missing are left out (and said so). Never draw them by hand:

  /usr/bin/python3 perf/charts.py [--results perf/results] [--out docs/img]
      [--run FILE] [--fleet FILE] [--lab FILE] [--latency FILE]
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

plt = None     # matplotlib.pyplot, imported once there is something to draw


def import_matplotlib():
    global plt
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot
    except ImportError:
        sys.exit("charts.py: matplotlib is missing (apt-get install "
                 "python3-matplotlib; run with /usr/bin/python3)")
    plt = matplotlib.pyplot

SIZE = (6.4, 3.3)
DPI = 100
PA = "#1f77b4"
PEER = "#bbbbbb"


def newest(results, pattern):
    files = sorted(glob.glob(os.path.join(results, pattern)))
    return files[-1] if files else None


def load(path):
    with open(path) as f:
        return json.load(f)


def fig_value(run, key):
    f = run.get("figures", {}).get(key)
    return f.get("value") if f else None


def fig_range(run, key):
    f = run.get("figures", {}).get(key)
    got = [v for v in (f or {}).get("runs", []) if v is not None]
    return (min(got), max(got)) if got else None


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    print("wrote %s (%d bytes)" % (os.path.relpath(path, ROOT),
                                   os.path.getsize(path)))
    return path


def subtitle(run):
    m = run.get("machine", {})
    cfg = run.get("config", {})
    return "%s, git %s, %s CPUs, %s pair(s) of %g s, medians" % (
        run.get("date", "")[:10], run.get("git", "?"), m.get("cpus", "?"),
        cfg.get("pairs", "?"), cfg.get("seconds", 0))


# (label, pktaccel figure, peer figure, peer label) per scenario
def scenario_rows(run, what):
    n = run.get("config", {}).get("flows", 10000)
    big = run.get("config", {}).get("big_flows", 1000000)
    k = lambda x: "%dM" % (x // 1000000) if x >= 1000000 else "%dk" % (x // 1000)  # noqa: E731
    if what == "mpps":
        pa, l3 = "pktaccel_mpps", "l3fwd_mpps"
    else:
        pa, l3 = "pktaccel_cycles_per_packet", "l3fwd_cycles_per_packet"
    rows = [
        ("pass-through", "passthrough." + pa, "passthrough." +
         ("testpmd_mpps" if what == "mpps" else "testpmd_cycles_per_packet"),
         "testpmd io"),
        ("ACL 1k", "acl1k." + pa, "acl1k." + l3, "l3fwd-acl"),
        ("ACL+LB\n%s flows" % k(n), "acl_lb." + pa, "acl_lb." + l3,
         "l3fwd-acl"),
    ]
    # the 1M-flow row's peer: l3fwd-acl on the same 1M-flow traffic
    # where the run measured it (run.py since 2026-12-02), else the
    # older runs' l3fwd-acl on the 10k-flow traffic, and said so
    if fig_value(run, "flows1m." + l3) is not None:
        peer, peer_label = "flows1m." + l3, "l3fwd-acl"
    else:
        peer, peer_label = "acl_lb." + l3, "l3fwd-acl (%s flows)" % k(n)
    rows.append(("ACL+LB\n%s flows" % k(big), "flows1m." + pa, peer,
                 peer_label))
    suffix = "_mpps" if what == "mpps" else "_cycles_per_packet"
    for m, label in (("nat", "nat"), ("dsr", "dsr"), ("ipip6", "IPv6\nipip"),
                     ("fnat", "fnat")):
        rows.append((label, "modes." + m + suffix, "modes.ipip" + suffix,
                     "IPv4 ipip"))
    if what == "mpps":
        fallback = "fallback" in (run.get("pipeline_layout") or "")
        rows.append(("pipeline\n(%s)" % ("4 lcores,\nshared CPUs" if fallback
                                          else "sent"),
                     "pipeline.pipeline_tx_mpps", "pipeline.rtc_tx_mpps",
                     "rtc"))
    return [r for r in rows if fig_value(run, r[1]) is not None]


def bars(run, what, out, name, ylabel, title):
    rows = scenario_rows(run, what)
    if not rows:
        print("charts.py: %s: no figures in the run" % name, file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    x = range(len(rows))
    w = 0.38
    for i, (label, pk, ek, peer) in enumerate(rows):
        a, b = fig_value(run, pk), fig_value(run, ek)
        ax.bar(i - w / 2, a, w, color=PA,
               label="pktaccel" if i == 0 else None)
        ra = fig_range(run, pk)
        if ra and ra[0] != ra[1]:
            ax.errorbar(i - w / 2, a, yerr=[[a - ra[0]], [ra[1] - a]],
                        color="black", capsize=2, lw=0.8)
        if b is not None:
            ax.bar(i + w / 2, b, w, color=PEER,
                   label="peer (named below)" if i == 0 else None)
            ax.text(i + w / 2, b, peer, rotation=90, ha="center",
                    va="bottom", fontsize=6)
    ax.set_xticks(list(x))
    ax.set_xticklabels([r[0] for r in rows], fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title + "\n" + subtitle(run), fontsize=8)
    ax.legend(fontsize=7, loc="upper right")
    ax.margins(y=0.25)
    return save(fig, out, name)


def latency_chart(run, lat, out):
    series = []
    keys = ("p50", "p90", "p99", "p999")
    if run and fig_value(run, "latency.p50_ns") is not None:
        series.append(("run.py %s: %s rules" % (run.get("date", "")[:10],
                                                run["config"].get("rules")),
                       [fig_value(run, "latency.%s_ns" % p) for p in keys]))
    for row in (lat or {}).get("cost", []):
        st = row.get("latency_at_load") or {}
        if st.get("p50_ns") is not None:
            series.append(("bench_latency %s: %d rules" % (
                lat.get("date", "")[:10], row["rules"]),
                [st.get("%s_ns" % p) for p in keys]))
    if not series:
        print("charts.py: perf-latency.png: no latency figures",
              file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    w = 0.8 / len(series)
    for j, (label, vals) in enumerate(series):
        xs = [i + (j - (len(series) - 1) / 2) * w for i in range(len(keys))]
        ax.bar(xs, [v / 1e3 if v else 0 for v in vals], w, label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["p50", "p90", "p99", "p99.9"])
    ax.set_ylabel("microseconds (log)")
    ax.set_title("Time in the appliance at full load (rx burst to tx burst)",
                 fontsize=8)
    ax.legend(fontsize=7)
    return save(fig, out, "perf-latency.png")


def fleet_cps(fleet, lab, out):
    load_ = (fleet or {}).get("load")
    if not load_:
        print("charts.py: fleet-cps.png: no load figures", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    n = [r["appliances"] for r in load_]
    for key, label, color in (("cps", "connections/s", PA),
                              ("rps", "requests/s (keep-alive)", "#ff7f0e")):
        med = [r[key] for r in load_]
        lo = [m - min(r[key + "_runs"]) for m, r in zip(med, load_)]
        hi = [max(r[key + "_runs"]) - m for m, r in zip(med, load_)]
        ax.errorbar(n, med, yerr=[lo, hi], marker="o", capsize=3,
                    label=label + " (median, runs' range)", color=color)
    ll = (lab or {}).get("load", {})
    if "direct" in ll:
        ax.axhline(ll["direct"]["cps"], color=PA, ls=":", lw=1)
        ax.text(n[-1], ll["direct"]["cps"],
                "connections/s direct to a backend (lab)", fontsize=6,
                va="bottom", ha="right")
    ax.set_xticks(n)
    ax.set_xlabel("announcing appliances (ECMP)")
    ax.set_ylabel("per second")
    ax.set_ylim(bottom=0)
    ax.set_title("Through the BGP fleet (dsr VIP), %s; client, router, "
                 "backends and\nappliances share %s CPUs" % (
                     fleet.get("date", ""), fleet.get("cpus", "?")),
                 fontsize=8)
    ax.legend(fontsize=7, loc="lower left")
    return save(fig, out, "fleet-cps.png")


def fleet_failover(fleet, out):
    rows = []
    fo = (fleet or {}).get("failover", {})
    if "bfd" in fo:
        rows.append(("kill -9, BFD", fo["bfd"]["seconds"]))
    if "hold_time" in fo:
        rows.append(("kill -9, BGP hold", fo["hold_time"]["seconds"]))
    for k, label in (("drain", "drain (planned)"), ("kill", "kill -9 (held\n"
                                                     "conns, BFD)")):
        ev = (fleet or {}).get(k)
        if ev and ev.get("runs"):
            rows.append((label, [r["withdrawn_s"] for r in ev["runs"]]))
    if not rows:
        print("charts.py: fleet-failover.png: no failover figures",
              file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    for i, (label, xs) in enumerate(rows):
        ax.plot(xs, [i] * len(xs), "o", color=PA, alpha=0.7)
        m = sorted(xs)[len(xs) // 2]
        ax.plot([0, m], [i, i], color=PA, lw=1)
        ax.text(m, i + 0.15, "%.2f s" % m, fontsize=7)
    ax.axvline(0, color="red", lw=1)
    ax.text(0, len(rows) - 0.5, " event (t = 0)", color="red", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows], fontsize=7)
    ax.set_xlabel("seconds from the event to the router's route change "
                  "(each run; line: median)")
    ax.set_ylim(-0.5, len(rows) - 0.2)
    ax.set_title("Failover and drain in the BGP lab, %s" % fleet.get("date", ""),
                 fontsize=8)
    return save(fig, out, "fleet-failover.png")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img"))
    ap.add_argument("--run", help="a perf/run.py result (default: the newest "
                    "run-*.json)")
    ap.add_argument("--fleet", help="default: the newest fleet-*.json")
    ap.add_argument("--lab", help="default: the newest lab-*.json")
    ap.add_argument("--latency", help="default: the newest latency-*.json")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    paths = {k: getattr(args, k) or newest(args.results, k + "-*.json")
             for k in ("run", "fleet", "lab", "latency")}
    data = {k: load(p) if p else None for k, p in paths.items()}
    for k, p in paths.items():
        print("%-7s %s" % (k, os.path.relpath(p, ROOT) if p else "(none)"))
    if not any(data.values()):
        sys.exit("charts.py: nothing to draw (no results in %s)"
                 % args.results)
    import_matplotlib()
    made = []
    if data["run"]:
        made.append(bars(data["run"], "mpps", args.out, "perf-mpps.png",
                         "Mpps", "Mpps per scenario (60-byte frames, one "
                         "worker lcore; bars: pairs' range)"))
        made.append(bars(data["run"], "cycles", args.out, "perf-cycles.png",
                         "CPU cycles per packet",
                         "Cycles per packet from each side's own CPU time"))
    if data["run"] or data["latency"]:
        made.append(latency_chart(data["run"], data["latency"], args.out))
    if data["fleet"]:
        made.append(fleet_cps(data["fleet"], data["lab"], args.out))
        made.append(fleet_failover(data["fleet"], args.out))
    made = [m for m in made if m]
    if not made:
        sys.exit("charts.py: nothing to draw (no results in %s)"
                 % args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
