#!/usr/bin/python3
"""Replayed spoofed SYN flood (issue 17, docs/performance.md "SYN flood").

A pcap of --flood SYNs from as many distinct random sources (100.64.0.0/10
and beyond, one SYN each) to the VIP 192.0.2.10:80, with --legit
legitimate connections spread through it (SYN, ACK, two data segments,
FIN+ACK, each packet marked with its index), replayed through one Maglev
ipip service of 16 backends (rtc, one worker, flow_table.size 1M):

  clean     the legitimate connections alone: the reference backends,
  none      the flood, no protect section,
  syn       the flood, protect.syn_timeout_s 5,
  defer     the flood, protect.syn_timeout_s 5 and syn_defer.

For each flood run: every legitimate packet delivered to the backend of
the clean run (exact check, by marker), the peak flow-table occupancy
(stats lb.flows_peak), flow_table_full, the replay's wall time and rate.
The replay has no time compression: a SYN-only entry outlives a replay of
a few seconds whatever syn_timeout_s, so "syn" shows the table as a flood
of that length leaves it; "defer" is independent of time.

Writes perf/results/flood-<date>.json.

Usage: /usr/bin/python3 perf/bench_flood.py [--flood 1000000]
           [--legit 10000] [--runs none,syn,defer] [--no-save]
"""
import argparse
import datetime
import json
import os
import random
import struct
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pylib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
import gen_sample  # noqa: E402
from pktaccel.daemon import DAEMON, replay  # noqa: E402

VIP = bytes([192, 0, 2, 10])
ETH = bytes.fromhex("0200000000fe") + bytes.fromhex("020000000101") + \
    b"\x08\x00"
SYN, ACK, FIN = 0x02, 0x10, 0x01
BACKENDS = ["10.1.%d.%d" % (k // 250, 1 + k % 250) for k in range(16)]


def csum16(b):
    return gen_sample.csum16(b)


def frame(src, sport, flags, payload=b""):
    """Ethernet + IPv4 + TCP to VIP:80 (the TCP checksum left 0: the
    appliance does not check it; ipip keeps the inner packet as is)."""
    tcp = struct.pack("!HHIIBBHHH", sport, 80, 1, 0, 5 << 4, flags, 8192,
                      0, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6,
                     0, struct.pack("!I", src), VIP)
    ip = ip[:10] + struct.pack("!H", csum16(ip)) + ip[12:]
    fr = ETH + ip + tcp
    return fr + b"\0" * max(0, 60 - len(fr))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        hdr = struct.Struct("<IIII")
        for i, fr in enumerate(frames):
            f.write(hdr.pack(1700000000 + i // 1000000, i % 1000000,
                             len(fr), len(fr)))
            f.write(fr)


def make(n_flood, n_legit, seed):
    rng = random.Random(seed)
    legit, idx = [], 0
    flows = [(0xc6120000 + i + 1, rng.randint(1024, 65535))
             for i in range(n_legit)]         # 198.18.0.0/15
    for flags in (SYN, ACK, ACK, ACK, FIN | ACK):
        for src, sport in flows:
            legit.append(frame(src, sport, flags, gen_sample.marker(idx)))
            idx += 1
    seen, flood = set(flows[i][0] for i in range(n_legit)), []
    while len(flood) < n_flood:
        s = 0x64400000 + rng.getrandbits(26)  # 100.64.0.0 - 104.63.255.255
        if s in seen:
            continue
        seen.add(s)
        flood.append(frame(s, rng.randint(1024, 65535), SYN))
    step = max(1, len(flood) // len(legit))
    mixed, k = [], 0
    for fr in legit:
        mixed.extend(flood[k:k + step])
        k += step
        mixed.append(fr)
    mixed.extend(flood[k:])
    return legit, mixed


def conf(protect=None):
    c = {"pipeline": {"mode": "rtc"},
         "lb": {"local_addr": "192.0.2.254", "icmp_echo": False,
                "flow_table": {"size": 1048576},
                "services": [{"name": "web", "vip": "192.0.2.10",
                              "port": 80, "proto": "tcp",
                              "forward": "ipip",
                              "backends": [{"addr": a} for a in BACKENDS]}]}}
    if protect:
        c["protect"] = protect
    return c


def backends_of(pcap):
    got = {}
    for fr in gen_sample.read_pcap(pcap):
        i = gen_sample.find_marker(fr)
        if i is not None:
            got[i] = fr[14 + 16:14 + 20]   # outer IPv4 destination
    return got


def run(tmp, name, pcap, protect):
    out = os.path.join(tmp, name + "-out.pcap")
    t0 = time.monotonic()
    res = replay(pcap, out, conf(protect), timeout=900)
    wall = time.monotonic() - t0
    if res.rc != 0 or not isinstance(res.summary, dict):
        sys.exit("%s: replay failed: %r" % (name, res))
    return res.summary, out, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flood", type=int, default=1000000)
    ap.add_argument("--legit", type=int, default=10000)
    ap.add_argument("--runs", default="none,syn,defer")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    if not os.access(DAEMON, os.X_OK):
        sys.exit("build the daemon first: meson setup build && ninja -C build")
    protects = {"none": None, "syn": {"syn_timeout_s": 5},
                "defer": {"syn_timeout_s": 5, "syn_defer": True}}
    res = {"date": datetime.datetime.utcnow().isoformat() + "Z",
           "flood_sources": args.flood, "legit_flows": args.legit,
           "legit_packets": 5 * args.legit, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="pa-bench-flood-") as tmp:
        t0 = time.monotonic()
        legit, mixed = make(args.flood, args.legit, args.seed)
        clean, flood = (os.path.join(tmp, "clean.pcap"),
                        os.path.join(tmp, "flood.pcap"))
        write_pcap(clean, legit)
        write_pcap(flood, mixed)
        print("pcaps: %d legit packets, %d in all (%.1f s)"
              % (len(legit), len(mixed), time.monotonic() - t0))
        del mixed
        s, out, _ = run(tmp, "clean", clean, None)
        want = backends_of(out)
        assert len(want) == len(legit), (len(want), len(legit))
        for name in args.runs.split(","):
            s, out, wall = run(tmp, name, flood, protects[name])
            got = backends_of(out)
            lost = sum(1 for i in want if i not in got)
            moved = sum(1 for i in want if i in got and got[i] != want[i])
            lb = s["lb"]
            r = {"protect": protects[name], "legit_lost": lost,
                 "legit_moved": moved, "flows_peak": lb["flows_peak"],
                 "flows_end": lb["flows"],
                 "flow_table_capacity": lb["flow_table_capacity"],
                 "flow_table_full": lb["flow_table_full"],
                 "syn_stateless": lb.get("syn_stateless", 0),
                 "replay_s": s.get("duration_s"), "wall_s": round(wall, 2),
                 "rx_packets": s["rx_packets"], "drops": {
                     k: v for k, v in s["drops"].items() if v}}
            res["runs"][name] = r
            print("%-6s legit lost %d moved %d | flows_peak %d of %d, "
                  "table full %d, stateless SYNs %d | replay %.2f s"
                  % (name, lost, moved, r["flows_peak"],
                     r["flow_table_capacity"], r["flow_table_full"],
                     r["syn_stateless"], r["replay_s"] or 0))
            os.unlink(out)
    if not args.no_save:
        path = os.path.join(ROOT, "perf", "results", "flood-%s.json"
                            % datetime.date.today().isoformat())
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        print("wrote", path)
    bad = [n for n, r in res["runs"].items()
           if r["legit_lost"] or r["legit_moved"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
