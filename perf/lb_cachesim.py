#!/usr/bin/env python3
"""Cache misses per packet of the daemon in perf/run.py's acl_lb
configuration (rtc, one worker, net_pcap infinite_rx, 1k ACL rules, 10k
flows, one Maglev ipip service; --no-lb: the same without the service),
under callgrind's cache simulator, counted after the warm-up only
(callgrind_control -i on / -z / -d). perf/NOTES.md, "Issue 16:
where ACL + LB's cycles go at 10k flows".

  perf/lb_cachesim.py --daemon BUILD/app/pktaccel --out /tmp/x/cg-lb
  perf/lb_cachesim.py --v6 --no-cache-sim --daemon ... --out /tmp/x/cg-lb6
  callgrind_annotate --inclusive=no /tmp/x/cg-lb.1

The daemon should be a -Dcpu=x86-64-v3 build (valgrind cannot run
AVX-512). Per packet: divide by 32 x the calls of pa_acl_classify
(valgrind's net_pcap returns full bursts); the packets the daemon
counted in the window are in OUT.json."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_acl as ba  # noqa: E402
import bench_lb as bl   # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--out", required=True, help="callgrind output file")
    ap.add_argument("--no-lb", action="store_true", help="ACL alone")
    ap.add_argument("--v6", action="store_true",
                    help="IPv6-in-IPv6: run.py's modes.ipip6 traffic, "
                    "rules and service")
    ap.add_argument("--no-cache-sim", action="store_true",
                    help="instructions only (about twice as fast)")
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--d1", default="49152,12,64")
    ap.add_argument("--ll", default="33554432,16,64")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="lb-cachesim-")
    pcap = os.path.join(tmp, "lb.pcap")
    extra = None
    if a.v6:
        import run as R  # noqa: E402 (run.py's IPv6 traffic and service)
        flows = R.lb_flows6(a.flows)
        ba.write_pcap(pcap, flows)
        rules = R.rules_v6(a.rules, flows)
        svc = R.ipip6_service(10)
        extra = {"local_addr6": "2001:db8::fe"}
    else:
        flows = bl.make_flows(a.flows)
        bl.write_bench_pcap(pcap, flows)
        rules = ba.make_rules(a.rules, flows, False)
        svc = bl.service("web", 10)
    wrap = ba.callgrind_wrapper(tmp, a.out, os.path.abspath(a.daemon),
                                "" if a.no_cache_sim else
                                "--cache-sim=yes --D1=%s --LL=%s" % (a.d1,
                                                                     a.ll))
    ba.DAEMON = wrap
    proc, sock, _ = bl.start(tmp, pcap, a.flows, rules,
                             1024 + a.flows * 5 // 1000,
                             [] if a.no_lb else [svc], "rtc",
                             flow_table={"size": max(1048576, 2 * a.flows)},
                             name="cachesim", lb_extra=extra)
    try:
        c = ba.rpc_connect(sock)
        ba.wait_rx(c, 3 * a.flows)
        for op in (["-i", "on"], ["-z"]):
            subprocess.run(["callgrind_control"] + op + [str(proc.pid)],
                           check=True, capture_output=True)
        s0 = c.call("stats_get")
        time.sleep(a.seconds)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)],
                       check=True, capture_output=True)
        s1 = c.call("stats_get")
        c.close()
    finally:
        ba.stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    d = {k: s1[k] - s0[k] for k in ("rx_packets", "tx_packets",
                                    "dropped_packets")}
    with open(a.out + ".json", "w") as f:
        json.dump(d, f)
    print(json.dumps(d))


if __name__ == "__main__":
    main()
