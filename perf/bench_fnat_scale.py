#!/usr/bin/python3
"""Full NAT at scale: the memory of 1M concurrent fnat flows.

A daemon (rtc, one worker lcore, no ACL rules) with lb.flow_table.size
--table (1048576) and one TCP fnat service of 10 backends reads a pcap
of --flows (1M) distinct client connections' SYNs (client -> VIP only,
sources in 10/8, random ports: bench_lb.write_tcp_pcap) once, from a
net_pcap vdev without infinite_rx. Each SYN opens an fnat flow that
holds one (pool address, port) until it ages out (a SYN-only flow lives
tcp_timeout, 300 s, longer than the run). For each pool size of
--pools (16 and 8 addresses, ports 1024-65535: 64512 each):

  idle      the same daemon on a one-frame pcap (one flow): the tables
            are made with the first service, their pages touched as
            flows use them;
  loaded    after every SYN was read: lb.flows, lb.fnat.flows, in_use
            per pool address, fnat_no_port (a SYN that found no free
            port: counted and dropped), flow_table_full,
            lb.flow_table_bytes (the heap the flow tables and their fnat
            side entries take) and the process's VmRSS / VmHWM.

With 8 addresses the pool holds 516096 ports: the flows after those are
fnat_no_port drops, which the run checks (flows + no_port = SYNs read).

Writes perf/results/fnat-scale-<date>.json.

Usage: /usr/bin/python3 perf/bench_fnat_scale.py [--flows 1000000]
           [--table 1048576] [--pools 16,8] [--mem 1536] [--no-save]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_acl as ba  # noqa: E402
import bench_lb as bl  # noqa: E402

ROOT = ba.ROOT
PORTS = (1024, 65535)


def pool(n_addrs):
    return {"addrs": ["198.51.100.%d" % (1 + i) for i in range(n_addrs)],
            "ports": "%d-%d" % PORTS}


def service():
    svc = bl.service("web", 10, forward="fnat")
    svc["proto"] = "tcp"
    return svc


def config(pcap, n_addrs, table):
    return {"ports": [{"name": "bench0",
                       "devargs": "net_pcap_bench0,rx_pcap=%s" % pcap}],
            "pipeline": {"mode": "rtc", "lcores": {"worker": [1]}},
            "metrics": None,
            "lb": {"local_addr": "192.0.2.254", "services": [service()],
                   "fnat": pool(n_addrs), "flow_table": {"size": table}}}


def run_one(tmp, name, pcap, n_frames, n_addrs, table, mem, timeout=900):
    """A daemon on @p pcap until it has read its @p n_frames frames and
    its flow count is steady; its figures."""
    conf = os.path.join(tmp, name + ".json")
    sock = os.path.join(tmp, name + ".sock")
    with open(conf, "w") as f:
        json.dump(config(pcap, n_addrs, table), f)
    log = open(os.path.join(tmp, name + ".log"), "w")
    t0 = time.time()
    proc = subprocess.Popen([ba.DAEMON] + ba.eal() + ["-m", str(mem), "-l",
                                                      "0,1", "--", "-c", conf,
                                                      "-s", sock],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        ba.wait_socket(sock, proc, timeout=600)
        c = ba.rpc_connect(sock)
        start_s = time.time() - t0
        end, last = time.time() + timeout, None
        while True:
            st = c.call("stats_get")
            cur = (st["rx_packets"], st["lb"]["flows"])
            if st["rx_packets"] >= n_frames and cur == last:
                break
            if time.time() > end:
                raise RuntimeError("%s: %d of %d frames after %d s" % (
                    name, st["rx_packets"], n_frames, timeout))
            last = cur
            time.sleep(1)
        read_s = time.time() - t0 - start_s
        lb = st["lb"]
        fn = lb.get("fnat") or {}
        out = {"frames": n_frames, "pool_addrs": n_addrs,
               "pool_ports": n_addrs * (PORTS[1] - PORTS[0] + 1),
               "flow_table_size": table,
               "rx_packets": st["rx_packets"],
               "tx_packets": st["tx_packets"],
               "dropped_packets": st["dropped_packets"],
               "drops": {k: v for k, v in st["drops"].items() if v},
               "flows": lb["flows"],
               "flow_table_capacity": lb["flow_table_capacity"],
               "flow_index_slots": lb.get("flow_index_slots"),
               "flow_table_full": lb["flow_table_full"],
               "flow_table_bytes": lb["flow_table_bytes"],
               "fnat_flows": fn.get("flows"),
               "fnat_flows_created": fn.get("flows_created"),
               "fnat_no_port": fn.get("no_port"),
               "fnat_table_full": fn.get("table_full"),
               "pool_in_use": [a["in_use"] for a in fn.get("pool", [])],
               "vmrss_kib": ba.vm_kib(proc.pid, "VmRSS"),
               "vmhwm_kib": ba.vm_kib(proc.pid, "VmHWM"),
               "start_s": round(start_s, 2), "read_s": round(read_s, 1)}
        c.close()
        return out
    finally:
        ba.stop(proc)
        log.close()


def check(r, syns):
    """What must hold of a loaded run: every SYN read, each either an
    fnat flow holding a port or an fnat_no_port drop (or a full flow
    table, counted); the pool's use summing to the flows."""
    errs = []
    if r["rx_packets"] != syns:
        errs.append("read %d of %d SYNs" % (r["rx_packets"], syns))
    if r["fnat_flows"] != sum(r["pool_in_use"]):
        errs.append("fnat flows %s != pool in use %s" % (
            r["fnat_flows"], sum(r["pool_in_use"])))
    if r["fnat_flows"] + r["fnat_no_port"] + r["flow_table_full"] != syns:
        errs.append("fnat flows %d + no_port %d + table_full %d != %d SYNs"
                    % (r["fnat_flows"], r["fnat_no_port"],
                       r["flow_table_full"], syns))
    want = min(syns, r["pool_ports"], r["flow_table_capacity"])
    if r["fnat_flows"] != want:
        errs.append("fnat flows %d, expected min(SYNs, pool ports, table) "
                    "= %d" % (r["fnat_flows"], want))
    return errs


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=1000000)
    ap.add_argument("--table", type=int, default=1048576,
                    help="lb.flow_table.size")
    ap.add_argument("--pools", default="16,8",
                    help="pool sizes (addresses) to run, comma separated")
    ap.add_argument("--mem", type=int, default=1536, help="EAL -m (MB)")
    ap.add_argument("--out", default=None, help="result JSON path")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    pools = [int(x) for x in args.pools.split(",") if x]
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "flows": args.flows, "table": args.table,
        "daemon": ba.shown_path(ba.DAEMON), "runs": {}, "errors": []}
    with tempfile.TemporaryDirectory(prefix="pa-fnat-scale-") as tmp:
        t0 = time.time()
        flows = bl.make_flows(args.flows)
        big = os.path.join(tmp, "syn.pcap")
        n = bl.write_tcp_pcap(big, flows)
        one = os.path.join(tmp, "one.pcap")
        bl.write_tcp_pcap(one, flows[:1])
        print("pcap: %d SYNs in %.1f s" % (n, time.time() - t0),
              file=sys.stderr, flush=True)
        for k in pools:
            idle = run_one(tmp, "idle%d" % k, one, 1, k, args.table,
                           args.mem)
            loaded = run_one(tmp, "loaded%d" % k, big, n, k, args.table,
                             args.mem)
            errs = check(loaded, n)
            res["errors"] += ["%d addresses: %s" % (k, e) for e in errs]
            loaded["rss_growth_kib"] = loaded["vmrss_kib"] - idle["vmrss_kib"]
            loaded["rss_growth_bytes_per_flow"] = \
                loaded["rss_growth_kib"] * 1024 / loaded["fnat_flows"] \
                if loaded["fnat_flows"] else None
            res["runs"]["%d_addrs" % k] = {"idle": idle, "loaded": loaded}
            print(json.dumps({k: res["runs"]["%d_addrs" % k]}, indent=1),
                  file=sys.stderr, flush=True)
    text = json.dumps(res, indent=1)
    if not args.no_save:
        out = args.out or os.path.join(
            ROOT, "perf", "results", "fnat-scale-%s.json" %
            datetime.date.today().isoformat())
        with open(out, "w") as f:
            f.write(text + "\n")
        print("wrote %s" % out, file=sys.stderr)
    print(text)
    for e in res["errors"]:
        print("bench_fnat_scale.py: %s" % e, file=sys.stderr)
    return 1 if res["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
