#!/usr/bin/python3
"""Instructions per packet of the plain forwarding path under callgrind:
pktaccel (rtc, one worker) beside its peers, in perf/run.py's
passthrough (no rules; peer dpdk-testpmd --forward-mode=io) and acl1k
(1k ACL rules; peer l3fwd --lookup=acl) configurations, net_pcap
infinite_rx, --no-huge. Collection is switched on after the warm-up
(callgrind_control -i on / -z), dumped after --seconds. Packets: 32 x the
calls of net_pcap's eth_pcap_rx_infinite (valgrind is slow enough that
every burst is full), so both sides are divided alike.

  perf/fwd_callgrind.py --who pktaccel --scen pass --daemon B/app/pktaccel --out /tmp/x/pa
  perf/fwd_callgrind.py --who testpmd --scen pass --out /tmp/x/tp
  perf/fwd_callgrind.py --who l3fwd --scen acl --out /tmp/x/l3
  callgrind_annotate --inclusive=no /tmp/x/pa.1

The daemon should be a -Dcpu=x86-64-v3 build (valgrind cannot run
AVX-512). perf/NOTES.md, "Issue 16: the plain forwarding path"."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as bp        # noqa: E402
import bench_acl as ba    # noqa: E402


def ctl(pid, *op):
    subprocess.run(["callgrind_control"] + list(op) + [str(pid)],
                   check=True, capture_output=True)


def rx_calls(out):
    """eth_pcap_rx_infinite's calls in the dump (callgrind_annotate's
    'calls' of the function's own cost line)."""
    dump = out + ".1" if os.path.exists(out + ".1") else out
    n = 0
    with open(dump) as f:
        lines = f.read().split("\n")
    # callee lines: cfn=(id) name / calls=N ...
    names = {}
    for i, ln in enumerate(lines):
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", ln)
        if m and m.group(2):
            names[m.group(1)] = m.group(2)
        if ln.startswith("cfn="):
            cur = names.get(re.match(r"cfn=\((\d+)\)", ln).group(1), "")
            # the PMD is stripped: its rx function by address (22.11)
            if cur in ("eth_pcap_rx_infinite", "0x0000000000003f70") and \
                    lines[i + 1].startswith("calls="):
                n += int(lines[i + 1].split()[0][6:])
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--who", choices=["pktaccel", "testpmd", "l3fwd"],
                    required=True)
    ap.add_argument("--scen", choices=["pass", "acl"], default="pass")
    ap.add_argument("--daemon", help="pktaccel binary (x86-64-v3 build)")
    ap.add_argument("--out", required=True, help="callgrind output file")
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--warmup", type=float, default=40)
    ap.add_argument("--seconds", type=float, default=20)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fwd-cg-")
    pcap = os.path.join(tmp, "flows.pcap")
    rules = None
    if a.scen == "pass":
        bp.write_flows_pcap(pcap, a.flows)
    else:
        flows = ba.make_flows(a.flows, False)
        ba.write_pcap(pcap, flows)
        rules = ba.make_rules(a.rules, flows, False)
    proc = None
    try:
        if a.who == "pktaccel":
            ba.DAEMON = ba.callgrind_wrapper(tmp, a.out,
                                              os.path.abspath(a.daemon))
            proc, sock, _ = ba.pktaccel_start(tmp, pcap, a.flows, rules, 1024)
            c = ba.rpc_connect(sock)
            ba.wait_rx(c, 3 * a.flows)
            c.close()
        else:
            if a.who == "testpmd":
                assert a.scen == "pass"
                cmd = bp.testpmd_cmd(pcap, a.flows)
            else:
                r4 = os.path.join(tmp, "r4.txt")
                r6 = os.path.join(tmp, "r6.txt")
                ba.write_l3fwd_rules(rules or [], r4, r6)
                cmd = ba.l3fwd_cmd(pcap, a.flows, 1024,
                                   "fwdcg-%d" % os.getpid(), r4, r6)
            cmd = [ba.callgrind_wrapper(tmp, a.out, shutil.which(cmd[0]) or
                                          cmd[0])] + cmd[1:]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(a.warmup)
            if proc.poll() is not None:
                raise SystemExit("%s exited: %d" % (a.who, proc.returncode))
        ctl(proc.pid, "-i", "on")
        ctl(proc.pid, "-z")
        time.sleep(a.seconds)
        ctl(proc.pid, "-d")
    finally:
        if proc:
            ba.stop(proc, signal.SIGINT if a.who != "pktaccel"
                    else signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)
    print("rx bursts", rx_calls(a.out))


if __name__ == "__main__":
    main()
