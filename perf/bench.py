#!/usr/bin/python3
"""Pass-through benchmark: pktaccel (rtc, one worker lcore) beside
dpdk-testpmd --forward-mode=io, both on a net_pcap vdev with infinite_rx=1
and no TX file, 64-byte UDP frames over 10k flows.

Prints Mpps of both, their ratio and pktaccel's cycles per packet, and
writes the figures to perf/results/passthrough-<date>.json.

Usage: /usr/bin/python3 perf/bench.py [--seconds 10] [--flows 10000]
"""
import argparse
import datetime
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pylib"))
from pktaccel import rpc  # noqa: E402
from pktaccel.daemon import DAEMON  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_acl  # noqa: E402

def eal():
    return bench_acl.eal() + ["-m", "1024", "-l", "0,1"]


def write_flows_pcap(path, flows):
    """64-byte Ethernet/IPv4/UDP frames, one per flow, written directly
    (no scapy needed for something this regular)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(flows):
            src = 0x0a000000 | (i & 0xffffff)
            dst = 0xc0000201
            sport = 1024 + (i % 60000)
            payload = b"\x00" * 18
            udp = struct.pack("!HHHH", sport, 9, 8 + len(payload), 0) + payload
            tot = 20 + len(udp)
            ip = struct.pack("!BBHHHBBHII", 0x45, 0, tot, i & 0xffff, 0, 64,
                             17, 0, src, dst)
            s = sum(struct.unpack("!10H", ip))
            s = (s & 0xffff) + (s >> 16)
            s = (s & 0xffff) + (s >> 16)
            ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
            eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + \
                b"\x08\x00"
            frame = eth + ip + udp
            assert len(frame) == 60
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)))
            f.write(frame)


def bench_pktaccel(pcap, flows, seconds, tmp):
    conf = os.path.join(tmp, "bench.json")
    sock = os.path.join(tmp, "bench.sock")
    with open(conf, "w") as f:
        json.dump({"ports": [{"name": "bench0", "devargs":
                              "net_pcap_bench0,rx_pcap=%s,infinite_rx=1" % pcap,
                              # infinite_rx preloads the whole file
                              "mbufs": flows + 8192}],
                   "pipeline": {"mode": "rtc", "lcores": {"worker": [1]}},
                   # no listener on the default port beside a real daemon
                   "metrics": None}, f)
    proc = subprocess.Popen([DAEMON] + eal() + ["--", "-c", conf, "-s", sock],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        rpc.wait_socket(sock, proc)
        time.sleep(bench_acl.WARMUP_S)
        a = rpc.call(sock, "stats_get")
        t0 = time.time()
        wa = bench_acl.threads_cpu_s(proc.pid)
        time.sleep(seconds)
        wb = bench_acl.threads_cpu_s(proc.pid)
        b = rpc.call(sock, "stats_get")
        t1 = time.time()
        hz = rpc.call(sock, "pipeline_get")["tsc_hz"]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    pkts = b["rx_packets"] - a["rx_packets"]
    la, lb = a["lcores"]["1"], b["lcores"]["1"]
    busy = lb["busy_cycles"] - la["busy_cycles"]
    pps = pkts / (t1 - t0)
    wcpu = sum(wb.values()) - sum(wa.values())
    return {"mpps": pps / 1e6,
            "cycles_per_packet": hz / pps if pps else None,
            "busy_cycles_per_packet": busy / pkts if pkts else None,
            # the worker thread's own CPU time x TSC Hz / packets
            "cpu_cycles_per_packet": wcpu * hz / pkts if pkts else None,
            "worker_cpu_share": wcpu / (t1 - t0),
            "dropped": b["dropped_packets"] - a["dropped_packets"],
            "tsc_hz": hz}


def testpmd_cmd(pcap, flows):
    """dpdk-testpmd io forwarding of @p pcap (infinite_rx), a pool for
    @p flows preloaded frames; statistics every second."""
    return ["dpdk-testpmd"] + eal() + [
        "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--",
        "--forward-mode=io", "--total-num-mbufs=%d" % (flows + 8192), "--stats-period", "1"]


def bench_testpmd(pcap, flows, seconds):
    cmd = testpmd_cmd(pcap, flows)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    rates, samples = [], []
    end = time.time() + seconds + 30
    try:
        for line in proc.stdout:
            m = re.search(r"RX-packets:\s+(\d+)", line)
            if m:
                # the forwarding lcore's CPU time at each statistics line
                samples.append((int(m.group(1)), sum(
                    bench_acl.threads_cpu_s(proc.pid).values())))
            m = re.search(r"Rx-pps:\s+(\d+)", line)
            if m:
                rates.append(int(m.group(1)))
            if len(rates) >= seconds + 3 or time.time() > end:
                break
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    steady = [r for r in rates[3:] if r > 0] or [r for r in rates if r > 0]
    if not steady:
        raise RuntimeError("no rate from testpmd")
    # CPU seconds per packet over the steady samples (x TSC Hz: cycles
    # per packet, whoever else had the CPU)
    steady_s = samples[3:] if len(samples) > 4 else samples
    cpp = None
    if len(steady_s) >= 2 and steady_s[-1][0] > steady_s[0][0]:
        cpp = (steady_s[-1][1] - steady_s[0][1]) / \
            (steady_s[-1][0] - steady_s[0][0])
    return {"mpps": sum(steady) / len(steady) / 1e6, "samples": len(steady),
            "cpu_s_per_packet": cpp}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    if not os.access(DAEMON, os.X_OK):
        sys.exit("build the daemon first: meson setup build && ninja -C build")
    with tempfile.TemporaryDirectory(prefix="pa-bench-") as tmp:
        pcap = os.path.join(tmp, "flows.pcap")
        write_flows_pcap(pcap, args.flows)
        pa = bench_pktaccel(pcap, args.flows, args.seconds, tmp)
        tp = bench_testpmd(pcap, args.flows, args.seconds)
    ratio = pa["mpps"] / tp["mpps"]
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "flows": args.flows, "seconds": args.seconds, "frame_bytes": 60,
           "pktaccel_rtc_1_worker": pa, "testpmd_io": tp, "ratio": ratio}
    print("pktaccel rtc, 1 worker : %.2f Mpps (%.1f cycles/packet, %.1f busy cycles/packet)"
          % (pa["mpps"], pa["cycles_per_packet"], pa["busy_cycles_per_packet"] or 0))
    print("dpdk-testpmd io        : %.2f Mpps" % tp["mpps"])
    print("ratio                  : %.3f" % ratio)
    if not args.no_save:
        out = os.path.join(ROOT, "perf", "results", "passthrough-%s.json"
                           % datetime.date.today().isoformat())
        with open(out, "w") as f:
            json.dump(res, f, indent=2)
            f.write("\n")
        print("saved", os.path.relpath(out, ROOT))


if __name__ == "__main__":
    main()
