#!/usr/bin/python3
"""Blocklist benchmark (issue 17): what a 1M-prefix source blocklist costs.

- Lookup cost: the 1k-rule ACL benchmark of perf/bench_acl.py (64-byte UDP,
  10k flows, rtc, one worker lcore on net_pcap infinite_rx), run without
  and with a blocklist of 1,000,000 prefixes: 450k random IPv4 /24s, 450k
  random IPv4 /32s and 100k IPv6 prefixes (/48, /64, /128; a fifth of them
  in 2001:db8::/32, where the IPv6 flows' sources are, so that those
  packets pass the IPv6 filter and probe every length's hash). Prefixes
  that would match a flow's source are left out: every packet is looked
  up and none dropped (the common case, a miss). Runs without and with
  the blocklist are interleaved (--pairs pairs: without, with, without,
  with, ...; with --old-daemon, the old daemon's "with" run too, in each
  round) and the figure is the median: the worker thread's own CPU time x
  TSC Hz / packets (cpu_cycles_per_packet: what the worker spent, whoever
  else shared its CPU), beside TSC Hz / packets per second
  (cycles_per_packet, as in bench_acl.py). added_cycles_per_packet is the
  median of the pairs' differences in CPU cycles per packet.
- Loading: the daemon's start with and without protect.blocklist (the
  difference is the file's load), blocklist_replace {"path"} over RPC
  (wall time, and the build_ms / update_ms the daemon reports), the
  table's memory_bytes and the daemon's VmRSS.
- One change on the 1M set: blocklist_add and blocklist_delete of one
  prefix, median and p99 of --calls calls (the delta tier: a small table
  beside the 1M one; the background merge after it is reported from
  blocklist_get: merges, merge_ms).

Writes perf/results/blocklist-<date>.json.

Usage: /usr/bin/python3 perf/bench_blocklist.py [--seconds 10] [--pairs 3]
           [--variants ipv4,mixed] [--rules 1000] [--calls 20]
           [--quiet-wait 60] [--daemon PATH] [--old-daemon PATH]
"""
import argparse
import datetime
import ipaddress
import json
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_acl as ba  # noqa: E402


def make_blocklist(path, flows, n4_24=450000, n4_32=450000, n6=100000,
                   seed=17):
    """Write the 1M-prefix file; no prefix covers a flow's source."""
    rng = random.Random(seed)
    src4 = {f.src for f in flows if not f.v6}
    src4_24 = {a >> 8 for a in src4}
    src6 = [f.src for f in flows if f.v6]
    lines, seen = [], set()
    while len(lines) < n4_24:
        a = rng.getrandbits(24)
        if a in src4_24 or ("a", a) in seen:
            continue
        seen.add(("a", a))
        lines.append("%s/24" % ipaddress.IPv4Address(a << 8))
    while len(lines) < n4_24 + n4_32:
        a = rng.getrandbits(32)
        if a in src4 or ("b", a) in seen:
            continue
        seen.add(("b", a))
        lines.append(str(ipaddress.IPv4Address(a)))
    src6_48 = {s >> 80 for s in src6}
    src6_64 = {s >> 64 for s in src6}
    k = 0
    while k < n6:
        ln = rng.choice((48, 64, 128))
        if k % 5 == 0:      # near the flows: 2001:db8::/32
            a = (0x20010db8 << 96) | rng.getrandbits(96)
        else:
            a = (0x2 << 124) | rng.getrandbits(124)
        a &= ((1 << 128) - 1) ^ ((1 << (128 - ln)) - 1)
        if (ln == 48 and a >> 80 in src6_48) or \
           (ln == 64 and a >> 64 in src6_64) or (ln == 128 and a in src6) \
           or ("c", a, ln) in seen:
            continue
        seen.add(("c", a, ln))
        lines.append("%s/%d" % (ipaddress.IPv6Address(a), ln))
        k += 1
    with open(path, "w") as f:
        f.write("# bench_blocklist: %d prefixes\n" % len(lines))
        f.write("\n".join(lines) + "\n")
    return len(lines)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def bench_updates(tmp, pcap, flows, mem, path, calls):
    """Start with the 1M file; time the start, a replace from the file,
    single adds and deletes."""
    proc, sock, start_s = ba.pktaccel_start(
        tmp, pcap, len(flows), None, mem, name="upd",
        extra={"protect": {"blocklist": path}})
    try:
        c = ba.rpc_connect(sock)
        g0 = c.call("blocklist_get", {"limit": 0})
        rss = ba.vm_kib(proc.pid, "VmRSS")
        t0 = time.monotonic()
        r = c.call("blocklist_replace", {"path": path})
        replace_s = time.monotonic() - t0
        g1 = c.call("blocklist_get", {"limit": 0})
        # the set is full (1M): delete one of its prefixes, add it back
        with open(path) as f:
            some = [ln.strip() for _, ln in zip(range(calls + 1), f)
                    if not ln.startswith("#")]
        adds, dels = [], []
        for i in range(calls):
            p = some[i % len(some)]
            t0 = time.monotonic()
            r = c.call("blocklist_delete", {"prefixes": [p]})
            dels.append((time.monotonic() - t0) * 1000)
            assert r["changed"] == 1, r
            t0 = time.monotonic()
            r = c.call("blocklist_add", {"prefixes": [p]})
            adds.append((time.monotonic() - t0) * 1000)
            assert r["changed"] == 1, r
        # one delete left in the delta: the merger folds it into a new
        # base (bounded wait; merge_ms is the daemon's figure)
        r = c.call("blocklist_delete", {"prefixes": [some[0]]})
        g2 = c.call("blocklist_get", {"limit": 0})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            g3 = c.call("blocklist_get", {"limit": 0})
            if "merges" not in g3 or (
                    g3["merges"] > 0 and
                    g3["delta_added"] + g3["delta_deleted"] == 0):
                break
            time.sleep(0.1)
        c.close()
    finally:
        ba.stop(proc)
    return {"start_s": round(start_s, 3), "prefixes": r["prefixes"],
            "at_start": g0, "replace_wall_s": round(replace_s, 3),
            "after_replace": g1, "after_changes": g2, "after_merge": g3,
            "vm_rss_kib": rss,
            "add_ms": {"median": round(statistics.median(adds), 2),
                       "p99": round(pct(adds, 99), 2)},
            "delete_ms": {"median": round(statistics.median(dels), 2),
                          "p99": round(pct(dels, 99), 2)}}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--variants", default="ipv4,mixed")
    ap.add_argument("--mem", type=int, default=1024, help="EAL -m (MB)")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--quiet-wait", type=int, default=60,
                    help="seconds to wait for a quiet machine before each "
                    "run (shared machines never are)")
    ap.add_argument("--pairs", type=int, default=3,
                    help="interleaved without / with runs per variant")
    ap.add_argument("--daemon", default=ba.DAEMON)
    ap.add_argument("--old-daemon", default=None,
                    help="another build's daemon: its run with the "
                    "blocklist joins each round (before / after figures)")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    ba.DAEMON = os.path.abspath(args.daemon)
    if not os.access(ba.DAEMON, os.X_OK):
        sys.exit("build the daemon first: meson setup build && ninja -C build")
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "flows": args.flows, "rules": args.rules,
           "seconds": args.seconds, "pairs": args.pairs,
           "daemon": ba.shown_path(args.daemon),
           "old_daemon": ba.shown_path(args.old_daemon),
           "loadavg_start": open("/proc/loadavg").read().split()[:3],
           "throughput": []}
    with tempfile.TemporaryDirectory(prefix="pa-bench-blocklist-") as tmp:
        for v in [x for x in args.variants.split(",") if x]:
            flows = ba.make_flows(args.flows, v == "mixed")
            pcap = os.path.join(tmp, "flows-%s.pcap" % v)
            ba.write_pcap(pcap, flows)
            path = os.path.join(tmp, "block-%s.txt" % v)
            t0 = time.monotonic()
            n = make_blocklist(path, flows)
            print("%s: %d prefixes written in %.1f s (%d bytes)" % (
                v, n, time.monotonic() - t0, os.path.getsize(path)),
                file=sys.stderr)
            if v == "ipv4" or "updates" not in res:
                res["updates"] = bench_updates(tmp, pcap, flows, args.mem,
                                               path, args.calls)
                print("  updates: %s" % json.dumps(res["updates"]),
                      file=sys.stderr)
            if args.skip_throughput:
                continue
            rules = ba.make_rules(args.rules, flows, v == "mixed")
            row = {"variant": v, "rules": args.rules, "runs": []}
            kinds = [("without", None, args.daemon),
                     ("with", {"protect": {"blocklist": path}}, args.daemon)]
            if args.old_daemon:
                kinds.append(("with_old", {"protect": {"blocklist": path}},
                              args.old_daemon))
            for rnd in range(args.pairs):
                for name, extra, daemon in kinds:
                    ba.DAEMON = os.path.abspath(daemon)
                    r = ba.measured(lambda: ba.bench_pktaccel(
                        tmp, pcap, len(flows), rules, args.seconds,
                        args.mem, extra=extra), args, args.retries)
                    r.pop("acl", None)
                    r.pop("latency", None)
                    r.update(kind=name, round=rnd,
                             loadavg=open("/proc/loadavg").read().split()[:3])
                    row["runs"].append(r)
                    print("  %s %s #%d: %.2f Mpps, %.1f cycles/packet, "
                          "%.1f CPU cycles/packet, drops %.3f, start %.2f s, "
                          "load %s%s" % (
                              v, name, rnd, r["mpps"], r["cycles_per_packet"],
                              r["cpu_cycles_per_packet"],
                              r["drop_share"] or 0, r["start_s"],
                              r["loadavg"][0],
                              " (disturbed)" if r["disturbed"] else ""),
                          file=sys.stderr)
            ba.DAEMON = os.path.abspath(args.daemon)

            def med(kind, key):
                xs = [r[key] for r in row["runs"]
                      if r["kind"] == kind and r[key] is not None]
                return round(statistics.median(xs), 1) if xs else None

            def diffs(kind):
                by = {}
                for r in row["runs"]:
                    by.setdefault(r["round"], {})[r["kind"]] = \
                        r["cpu_cycles_per_packet"]
                return [d[kind] - d["without"] for d in by.values()
                        if d.get(kind) is not None and
                        d.get("without") is not None]
            for name, _, _ in kinds:
                row[name] = {"cpu_cycles_per_packet": med(
                    name, "cpu_cycles_per_packet"),
                    "cycles_per_packet": med(name, "cycles_per_packet"),
                    "mpps": med(name, "mpps")}
            d = diffs("with")
            row["added_cycles_per_packet"] = round(statistics.median(d), 1) \
                if d else None
            row["added_cycles_per_packet_pairs"] = [round(x, 1) for x in d]
            if args.old_daemon:
                d = diffs("with_old")
                row["added_cycles_per_packet_old"] = round(
                    statistics.median(d), 1) if d else None
                row["added_cycles_per_packet_old_pairs"] = [
                    round(x, 1) for x in d]
            print("  %s: added %s CPU cycles/packet (pairs %s)%s" % (
                v, row["added_cycles_per_packet"],
                row["added_cycles_per_packet_pairs"],
                "; old daemon %s (pairs %s)" % (
                    row["added_cycles_per_packet_old"],
                    row["added_cycles_per_packet_old_pairs"])
                if args.old_daemon else ""), file=sys.stderr)
            res["throughput"].append(row)
    res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    print(json.dumps(res, indent=1))
    if not args.no_save:
        out = args.out or os.path.join(
            HERE, "results", "blocklist-%s.json" % datetime.date.today())
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        print("saved %s" % out, file=sys.stderr)


if __name__ == "__main__":
    main()
