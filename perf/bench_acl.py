#!/usr/bin/python3
"""ACL benchmark: pktaccel's classify stage beside DPDK's l3fwd --lookup=acl.

Throughput: rule sets of 0, 100, 1k and 10k rules (IPv4, and a mixed
IPv4+IPv6 variant) over 64-byte UDP traffic of 10k flows on a net_pcap vdev
with infinite_rx=1. pktaccel runs rtc with one worker lcore (Mpps from
stats_get over --seconds, after a warm-up); l3fwd-acl (built by
perf/l3fwd/build.sh) runs on the same vdev and file with the same rules
converted to its rule-file format, in the same run (Mpps from the port's
ipackets, read over DPDK telemetry: l3fwd prints no statistics).

Updates: acl_rule_add (and acl_rule_delete) latency on a live 10k-rule
table, 100 calls each over the RPC socket (each answers once the change is
live): median and p99. Builds: acl_rules_replace with 10k and 100k rules,
its wall time, the "acl" object of stats_get (build time, memory) and the
daemon's VmRSS.

Writes perf/results/acl-<date>.json.

Usage: /usr/bin/python3 perf/bench_acl.py [--seconds 10] [--flows 10000]
           [--rules 0,100,1000,10000] [--variants ipv4,mixed]
           [--skip-throughput] [--skip-updates] [--no-l3fwd]
"""
import argparse
import datetime
import ipaddress
import json
import os
import random
import re
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pylib"))
from pktaccel.daemon import DAEMON  # noqa: E402
from pktaccel.rpc import RpcClient, RpcError, wait_socket  # noqa: E402,F401

L3FWD_BUILD = os.path.join(ROOT, "perf", "l3fwd", "build.sh")
L3FWD_BIN = os.path.join(ROOT, "build", "peers", "examples", "l3fwd", "build",
                         "l3fwd")
# l3fwd's EAL file prefix (its telemetry socket's directory) is
# L3FWD_PREFIX-<pid>; seconds of traffic before a measuring window opens.
# perf/run.py sets both.
L3FWD_PREFIX = "pa-l3fwd"
WARMUP_S = 2.0
PROTO_UDP = 17
DROP_SPORT = (1024, 4299)       # the one drop rule: ~5% of the flows
DROP_ID = 1

# rte_acl classify algorithms (enum rte_acl_classify_alg) as l3fwd dumps them


def shown_path(path):
    """@p path as results record it: relative to the repository when it
    lies in it (build/app/pktaccel), else only its last three components
    after '.../' (.../build/app/pktaccel), so that no directory of the
    machine that ran the benchmark is written into a result; None stays
    None."""
    if path is None:
        return None
    path = os.path.abspath(path)
    if path == ROOT or path.startswith(ROOT + os.sep):
        return os.path.relpath(path, ROOT)
    return ".../" + "/".join(path.split(os.sep)[-3:]).lstrip("/")


ACL_ALG_NAMES = {0: "default", 1: "scalar", 2: "sse", 3: "neon", 4: "altivec",
                 5: "avx2", 6: "avx512x16", 7: "avx512x32"}


# --------------------------------------------------------------------------
# Traffic

class Flow:
    __slots__ = ("v6", "src", "dst", "sport", "dport")

    def __init__(self, v6, src, dst, sport, dport):
        self.v6, self.src, self.dst = v6, src, dst
        self.sport, self.dport = sport, dport


DPORTS = [53, 80, 443, 123, 9, 8080, 5353, 4789]


def make_flows(n, mixed, seed=1):
    """n distinct UDP flows. IPv4: src in 10/8, dst in 172.16/12. IPv6 (every
    other flow in the mixed variant): src in 2001:db8::/48, dst in
    2001:db8:ffff::/48. Well-known destination ports for 80% of them."""
    rng = random.Random(seed)
    flows, seen = [], set()
    while len(flows) < n:
        v6 = mixed and len(flows) % 2 == 1
        if v6:
            src = (0x20010db8 << 96) | (rng.getrandbits(16) << 64) | \
                rng.getrandbits(64)
            dst = (0x20010db8ffff << 80) | rng.getrandbits(80)
        else:
            src = 0x0a000000 | rng.getrandbits(24)
            dst = 0xac100000 | rng.getrandbits(20)
        sport = rng.randint(1024, 65535)
        dport = rng.choice(DPORTS) if rng.random() < 0.8 else \
            rng.randint(1024, 65535)
        key = (v6, src, dst, sport, dport)
        if key in seen:
            continue
        seen.add(key)
        flows.append(Flow(v6, src, dst, sport, dport))
    return flows


def _csum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def write_pcap(path, flows, eth_dst=b"\x02\x00\x00\x00\x00\x02"):
    """One frame per flow: IPv4/UDP 60 bytes (64 with FCS, 18 bytes of
    payload), IPv6/UDP 62 bytes (66 with FCS, no payload: the smallest
    IPv6/UDP frame), to @p eth_dst."""
    eth_src = b"\x02\x00\x00\x00\x00\x01"
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fl in enumerate(flows):
            if fl.v6:
                udp = struct.pack("!HHHH", fl.sport, fl.dport, 8, 0)
                src = fl.src.to_bytes(16, "big")
                dst = fl.dst.to_bytes(16, "big")
                pseudo = src + dst + struct.pack("!IxxxB", len(udp), PROTO_UDP)
                c = _csum(pseudo + udp) or 0xffff
                udp = udp[:6] + struct.pack("!H", c)
                ip = struct.pack("!IHBB", 0x60000000, len(udp), PROTO_UDP,
                                 64) + src + dst
                frame = eth_dst + eth_src + b"\x86\xdd" + ip + udp
            else:
                payload = b"\x00" * 18
                udp = struct.pack("!HHHH", fl.sport, fl.dport,
                                  8 + len(payload), 0) + payload
                ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(udp),
                                 i & 0xffff, 0, 64, PROTO_UDP, 0, fl.src,
                                 fl.dst)
                ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
                frame = eth_dst + eth_src + b"\x08\x00" + ip + udp
                assert len(frame) == 60
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)))
            f.write(frame)


# --------------------------------------------------------------------------
# Rules: an internal form (family, prefixes as (value, len), port ranges,
# proto or None, action, priority, id), written out as pktaccel JSON and as
# l3fwd rule files.

class Rule:
    __slots__ = ("id", "prio", "fam", "src", "dst", "sport", "dport",
                 "proto", "drop")

    def __init__(self, rid, prio, fam, src, dst, sport, dport, proto, drop):
        self.id, self.prio, self.fam = rid, prio, fam   # fam: 4, 6 or None
        self.src, self.dst = src, dst                    # (int, len) or None
        self.sport, self.dport = sport, dport            # (lo, hi)
        self.proto, self.drop = proto, drop              # int or None; bool


def _mask(v, plen, bits):
    return v & (((1 << plen) - 1) << (bits - plen)) if plen else 0


def _range_around(rng, x, width):
    lo = max(0, x - rng.randint(0, width))
    hi = min(65535, x + rng.randint(0, width))
    return (lo, hi)


def _random_range(rng):
    r = rng.random()
    if r < 0.4:
        return (0, 65535)
    if r < 0.7:
        p = rng.randint(1, 65535)
        return (p, p)
    lo = rng.randint(0, 65000)
    return (lo, min(65535, lo + rng.randint(1, 4096)))


def hit_rule(rng, rid, fl):
    """A permit rule built around one flow (so it matches that flow and
    often its neighbours), ClassBench-like field shapes."""
    bits = 128 if fl.v6 else 32
    # IPv6 flows share 2001:db8:0::/48, IPv4 ones 10/8: /56 is to the
    # IPv6 traffic what /16 is to the IPv4 traffic
    slen = rng.choice([56, 64, 80, 96, 128] if fl.v6
                      else [16, 20, 24, 28, 32])
    src = (_mask(fl.src, slen, bits), slen)
    dst = None
    if rng.random() < 0.7:
        dlen = rng.choice([48, 64, 96, 128] if fl.v6 else [12, 16, 24, 32])
        dst = (_mask(fl.dst, dlen, bits), dlen)
    sport = (0, 65535) if rng.random() < 0.7 else \
        _range_around(rng, fl.sport, 4000)
    r = rng.random()
    dport = (fl.dport, fl.dport) if r < 0.6 else \
        _range_around(rng, fl.dport, 1000) if r < 0.8 else (0, 65535)
    proto = PROTO_UDP if rng.random() < 0.8 else None
    return Rule(rid, rng.randint(1, 1000), 6 if fl.v6 else 4, src, dst,
                sport, dport, proto, False)


def miss_rule(rng, rid, v6):
    """A rule on address space the traffic never uses: it shapes the trie
    but matches nothing."""
    if v6:
        bits = 128
        slen = rng.choice([16, 32, 48, 64, 128])
        src = (_mask((0xfd << 120) | rng.getrandbits(120), slen, bits), slen)
        dlen = rng.choice([0, 32, 64, 128])
        dval = (0x2a << 120) | rng.getrandbits(120)
    else:
        bits = 32
        slen = rng.choice([10, 16, 20, 24, 28, 32])
        # 100.64.0.0/10 (src) and 198.18.0.0/15 (dst): never in the traffic
        src = (_mask(0x64400000 | rng.getrandbits(22), max(slen, 10), bits),
               max(slen, 10))
        dlen = rng.choice([0, 15, 24, 32])
        dval = 0xc6120000 | rng.getrandbits(17)
    dst = (_mask(dval, dlen, bits), dlen) if dlen else None
    proto = rng.choice([PROTO_UDP, 6, None])
    return Rule(rid, rng.randint(1, 1000), 6 if v6 else 4, src, dst,
                _random_range(rng), _random_range(rng), proto,
                rng.random() < 0.5)


def make_rules(n, flows, mixed, seed=2, first_id=1):
    """n rules: one high-priority drop rule (UDP source ports
    DROP_SPORT, both families: a known share of the traffic), then half
    permit rules built around random flows and half rules (permit or drop)
    on address space the traffic never uses. In the mixed variant half the
    rules are IPv6."""
    if n == 0:
        return []
    rng = random.Random(seed * 1000003 + n)
    rules = [Rule(first_id, 1000000, None, None, None, DROP_SPORT,
                  (0, 65535), PROTO_UDP, True)]
    v4 = [f for f in flows if not f.v6]
    v6 = [f for f in flows if f.v6]
    for k in range(1, n):
        rid = first_id + k
        want6 = mixed and k % 2 == 1
        if k % 4 < 2:
            rules.append(hit_rule(rng, rid, rng.choice(v6 if want6 else v4)))
        else:
            rules.append(miss_rule(rng, rid, want6))
    return rules


def _prefix_str(p, fam):
    if p is None:
        return "any"
    v, plen = p
    a = ipaddress.IPv6Address(v) if fam == 6 else ipaddress.IPv4Address(v)
    return "%s/%d" % (a, plen)


def _ports_str(r):
    lo, hi = r
    if (lo, hi) == (0, 65535):
        return None
    return str(lo) if lo == hi else "%d-%d" % (lo, hi)


def rule_json(r):
    """pktaccel's rule object (docs/configuration.md); "any" fields omitted."""
    o = {"id": r.id, "priority": r.prio}
    if r.src is not None:
        o["src"] = _prefix_str(r.src, r.fam)
    if r.dst is not None:
        o["dst"] = _prefix_str(r.dst, r.fam)
    for k, v in (("sport", _ports_str(r.sport)), ("dport", _ports_str(r.dport))):
        if v is not None:
            o[k] = v
    if r.proto is not None:
        o["proto"] = "udp" if r.proto == PROTO_UDP else \
            "tcp" if r.proto == 6 else r.proto
    o["action"] = "drop" if r.drop else "permit"
    return o


def _l3fwd_net(p, fam):
    if fam == 6:
        v, plen = p if p is not None else (0, 0)
        groups = [(v >> (112 - 16 * i)) & 0xffff for i in range(8)]
        return "%s/%d" % (":".join("%x" % g for g in groups), plen)
    v, plen = p if p is not None else (0, 0)
    return "%s/%d" % (ipaddress.IPv4Address(v), plen)


def l3fwd_line(r, fam, port=0):
    """One line of l3fwd's ACL rule file. '@' lines are ACL (deny) rules,
    'R' lines route rules ending with the output port; the file order is the
    priority (first line highest), so the caller writes them sorted."""
    proto = "0x%x/0xff" % r.proto if r.proto is not None else "0x0/0x0"
    body = "%s %s %d : %d %d : %d %s" % (
        _l3fwd_net(r.src, fam), _l3fwd_net(r.dst, fam), r.sport[0],
        r.sport[1], r.dport[0], r.dport[1], proto)
    return ("@" + body) if r.drop else ("R%s %d" % (body, port))


def write_l3fwd_rules(rules, path4, path6):
    """pktaccel's priority order (higher priority first, then lower id) as
    l3fwd's file order; permit becomes a route to port 0, drop an ACL rule;
    a rule with both prefixes "any" goes into both files; the default
    permit is a last catch-all route (l3fwd needs at least one route)."""
    order = sorted(rules, key=lambda r: (-r.prio, r.id))
    catch_all = Rule(0, 0, None, None, None, (0, 65535), (0, 65535), None,
                     False)
    for fam, path in ((4, path4), (6, path6)):
        with open(path, "w") as f:
            for r in order:
                if r.fam in (None, fam):
                    f.write(l3fwd_line(r, fam) + "\n")
            f.write(l3fwd_line(catch_all, fam) + "\n")


def expected_drop_share(flows):
    n = sum(1 for f in flows if DROP_SPORT[0] <= f.sport <= DROP_SPORT[1])
    return n / len(flows)


# --------------------------------------------------------------------------
# Processes and RPC

def rpc_connect(path, timeout=600):
    """One persistent JSON-RPC connection, compact requests (their sizes
    are reported), calls that may take minutes (large rule sets)."""
    return RpcClient(path, timeout, compact=True)


def stop(proc, sig=signal.SIGTERM):
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def vm_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def proc_cpu_s(pid):
    """CPU seconds (user + system) a process has used."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def system_cpu_s():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def threads_cpu_s(pid, prefix="rte-worker-"):
    """CPU seconds (user + system) of each thread of @p pid whose name
    starts with @p prefix: {name: seconds}. The data-path lcores are
    "rte-worker-<lcore>"."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            if not comm.startswith(prefix):
                continue
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                v = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[comm] = (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")
    return out


def cpu_times():
    """Per-CPU (busy, total) jiffies from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"cpu(\d+)\s+(.*)", line)
            if m:
                v = [int(x) for x in m.group(2).split()]
                idle = v[3] + v[4]
                out[int(m.group(1))] = (sum(v[:8]) - idle, sum(v[:8]))
    return out


def cpu_busy(a, b):
    return {c: round((b[c][0] - a[c][0]) / max(1, b[c][1] - a[c][1]), 3)
            for c in a}


def wait_quiet(max_wait, threshold=0.15, window=3):
    """Wait (up to max_wait s) until both CPUs have been idle enough to
    measure for window seconds in a row. Returns the busy fraction per CPU
    of the last second and whether the machine was quiet."""
    end = time.time() + max_wait
    calm, last_note = 0, 0
    while True:
        a = cpu_times()
        time.sleep(1)
        busy = cpu_busy(a, cpu_times())
        calm = calm + 1 if max(busy.values()) < threshold else 0
        if calm >= window:
            return {"busy": busy, "quiet": True}
        if time.time() > end:
            print("  (machine still busy after %d s: measuring anyway)"
                  % max_wait, file=sys.stderr)
            return {"busy": busy, "quiet": False}
        if time.time() - last_note > 30:
            print("  (machine busy: %s; waiting)" % busy, file=sys.stderr)
            last_note = time.time()


def disturbed(r, limit=0.3):
    """During a run the worker owns CPU 1 and CPU 0 should be nearly idle
    (pktaccel's control thread, l3fwd's EAL threads): more means another
    process ran and may have shared the worker's CPU."""
    return r["cpu_busy"].get(0, 0) > limit


def measured(fn, args, retries):
    """Run a measurement when the machine is quiet; repeat it (up to
    retries times) when another process disturbed it."""
    for attempt in range(retries + 1):
        q = wait_quiet(args.quiet_wait)
        r = fn()
        r["quiet_before"] = q
        r["attempt"] = attempt + 1
        r["disturbed"] = disturbed(r)
        if not r["disturbed"]:
            break
        print("  (disturbed: CPU busy %s during the run; again)"
              % r["cpu_busy"], file=sys.stderr)
    return r


# The EAL's memory: --no-huge (development machines have no huge pages
# reserved), unless perf/run.py --huge set HUGE_DIR to a hugetlbfs mount:
# then every process, the peers too, maps its memory there, as in
# production (mbufs packed, not one a 4 KB page; the flow table on 2 MB
# pages), and unlinks the page files at once, so a killed run holds no
# page after it exits.
HUGE_DIR = None


def eal_mem():
    if HUGE_DIR:
        return ["--huge-dir", HUGE_DIR, "--huge-unlink"]
    return ["--no-huge"]


def eal():
    """pktaccel's and testpmd's EAL options but -m and the lcores."""
    return eal_mem() + ["--no-shconf", "--no-pci", "--no-telemetry"]


def wait_rx(c, n, timeout=600):
    """Wait until the daemon behind RPC client @p c has received @p n
    packets (a daemon under valgrind starts slowly); exits after
    @p timeout seconds without them."""
    end = time.time() + timeout
    while c.call("stats_get")["rx_packets"] < n:
        if time.time() > end:
            raise SystemExit("no traffic after %d s" % timeout)
        time.sleep(1)


def pktaccel_start(tmp, pcap, flows, rules, mem, name="bench", extra=None):
    conf = os.path.join(tmp, name + ".json")
    sock = os.path.join(tmp, name + ".sock")
    cfg = {"ports": [{"name": "bench0", "devargs":
                      "net_pcap_bench0,rx_pcap=%s,infinite_rx=1" % pcap,
                      "mbufs": flows + 8192}],
           "pipeline": {"mode": "rtc", "lcores": {"worker": [1]}},
           "metrics": None}
    if rules is not None:
        cfg["acl"] = {"default": "permit",
                      "rules": [rule_json(r) for r in rules]}
    cfg.update(extra or {})     # e.g. "protect" (perf/bench_blocklist.py)
    with open(conf, "w") as f:
        json.dump(cfg, f, separators=(",", ":"))
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen([DAEMON] + eal() + ["-m", str(mem), "-l", "0,1",
                                              "--", "-c", conf, "-s", sock],
                            stdout=log, stderr=subprocess.STDOUT)
    t0 = time.time()
    try:
        wait_socket(sock, proc, timeout=600)
    except (RuntimeError, AssertionError):   # wait_socket: the daemon exited
        log.close()
        with open(os.path.join(tmp, name + ".log")) as f:
            sys.stderr.write(f.read()[-3000:])
        stop(proc)
        raise
    return proc, sock, time.time() - t0


def acl_algorithm(pipeline):
    """Find the ACL classify algorithm wherever pipeline_get reports it."""
    def walk(o, path=""):
        if isinstance(o, dict):
            for k, v in o.items():
                if "alg" in k and isinstance(v, str):
                    return v
                r = walk(v, path + "." + k)
                if r:
                    return r
        return None
    return walk(pipeline)


def bench_pktaccel(tmp, pcap, flows, rules, seconds, mem, extra=None):
    proc, sock, start_s = pktaccel_start(tmp, pcap, flows, rules, mem,
                                         extra=extra)
    try:
        c = rpc_connect(sock)
        pl = c.call("pipeline_get")
        time.sleep(WARMUP_S)
        a = c.call("stats_get")
        ca, t0 = cpu_times(), time.time()
        wa = threads_cpu_s(proc.pid)
        time.sleep(seconds)
        wb = threads_cpu_s(proc.pid)
        b = c.call("stats_get")
        t1, cb = time.time(), cpu_times()
        c.close()
    finally:
        stop(proc)
    hz = pl["tsc_hz"]
    pkts = b["rx_packets"] - a["rx_packets"]
    wcpu = sum(wb.values()) - sum(wa.values())
    la, lb = a["lcores"]["1"], b["lcores"]["1"]
    busy = lb["busy_cycles"] - la["busy_cycles"]
    pps = pkts / (t1 - t0)
    acl_drops = b.get("drops", {}).get("acl", 0) - \
        a.get("drops", {}).get("acl", 0)
    dflt = None
    if isinstance(a.get("acl"), dict) and "default_hits" in a["acl"]:
        dflt = b["acl"]["default_hits"] - a["acl"]["default_hits"]
    return {"mpps": pps / 1e6,
            "cycles_per_packet": hz / pps if pps else None,
            "busy_cycles_per_packet": busy / pkts if pkts else None,
            "tx_mpps": (b["tx_packets"] - a["tx_packets"]) / (t1 - t0) / 1e6,
            "drop_share": (b["dropped_packets"] - a["dropped_packets"]) / pkts
            if pkts else None,
            "acl_drop_share": acl_drops / pkts if pkts else None,
            # share of packets some rule matched (not the default action)
            "rule_match_share": 1 - dflt / pkts if pkts and dflt is not None
            else None,
            # the worker thread's own CPU time x TSC Hz / packets: what
            # the worker spent, whoever else had its CPU meanwhile
            "cpu_cycles_per_packet": wcpu * hz / pkts if pkts else None,
            "worker_cpu_share": wcpu / (t1 - t0),
            "latency": b.get("latency"),
            "acl": b.get("acl"), "algorithm": acl_algorithm(pl),
            "start_s": round(start_s, 2), "tsc_hz": hz,
            "cpu_busy": cpu_busy(ca, cb)}


def telemetry(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    s.recv(1 << 16)          # the greeting
    s.send(cmd.encode())
    r = json.loads(s.recv(1 << 20))
    s.close()
    return r


def l3fwd_cmd(pcap, flows, mem, prefix, r4, r6, alg=None):
    """l3fwd --lookup=acl on lcore 1 forwarding @p pcap (infinite_rx,
    @p flows frames preloaded) with the rule files @p r4 and @p r6 (
    write_l3fwd_rules()); @p alg: rte_acl's classify algorithm, None for
    l3fwd's own choice."""
    cmd = [L3FWD_BIN] + eal_mem() + ["--no-pci", "-m", str(mem), "-l", "1",
           "--file-prefix", prefix]
    if alg and alg.startswith("avx512x32"):
        # rte_acl refuses 512-bit classify unless EAL allows 512-bit SIMD
        # (pktaccel raises the limit itself when nobody capped it)
        cmd.append("--force-max-simd-bitwidth=512")
    cmd += [
           "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--",
           "-p", "0x1", "--config=(0,0,1)", "--lookup=acl",
           "--rule_ipv4=" + r4, "--rule_ipv6=" + r6,
           # net_pcap reports no packet types: l3fwd parses them itself
           "--parse-ptype",
           # the mbuf pool is sized from the RX ring; infinite_rx preloads
           # one mbuf per packet of the file
           "--rx-queue-size=%d" % min(65535, flows + 6144)]
    if alg:
        cmd.append("--alg=" + alg)
    return cmd


def l3fwd_env(flows):
    """l3fwd's environment for @p flows preloaded frames: its RX ring
    (which sizes its mbuf pool) holds 65535 at most, so a bigger file
    sets the pool's floor (PA_L3FWD_MBUFS, perf/l3fwd/build.sh's second
    change to the copy)."""
    env = dict(os.environ)
    if flows + 6144 > 65535:
        env["PA_L3FWD_MBUFS"] = str(flows + 8192)
    return env


def l3fwd_ready():
    """Is the l3fwd build current (built, with perf/l3fwd/build.sh's
    changes)?"""
    src = os.path.join(os.path.dirname(os.path.dirname(L3FWD_BIN)),
                       "main.c")
    try:
        with open(src, errors="replace") as f:
            return os.access(L3FWD_BIN, os.X_OK) and \
                "pktaccel perf: PA_L3FWD_MBUFS" in f.read()
    except OSError:
        return False


def callgrind_wrapper(tmp, out, binary, opts=""):
    """A script in @p tmp that runs @p binary under callgrind, collection
    off until callgrind_control -i on, the dump in @p out; @p opts: more
    valgrind options (the cache simulation's)."""
    wrap = os.path.join(tmp, "wrap.sh")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nexec valgrind --tool=callgrind %s"
                "--instr-atstart=no --dump-instr=yes "
                "--callgrind-out-file=%s %s \"$@\"\n" %
                (opts + " " if opts else "", os.path.abspath(out), binary))
    os.chmod(wrap, 0o755)
    return wrap


def bench_l3fwd(tmp, pcap, flows, rules, seconds, mem, alg=None):
    """l3fwd --lookup=acl on one lcore (lcore 1 = CPU 1, like pktaccel's
    worker; l3fwd opens one TX queue per lcore and net_pcap has one, so
    it gets no second lcore). Rates from the port's ipackets/opackets over
    DPDK telemetry (l3fwd prints no statistics; --no-huge processes take
    no secondary, so dpdk-proc-info cannot attach)."""
    r4, r6 = os.path.join(tmp, "rules4.txt"), os.path.join(tmp, "rules6.txt")
    write_l3fwd_rules(rules, r4, r6)
    prefix = "%s-%d" % (L3FWD_PREFIX, os.getpid())
    rundir = "/var/run/dpdk/%s" % prefix if os.getuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", prefix)
    tsock = os.path.join(rundir, "dpdk_telemetry.v2")
    logp = os.path.join(tmp, "l3fwd.log")
    cmd = l3fwd_cmd(pcap, flows, mem, prefix, r4, r6, alg)
    log = open(logp, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                            env=l3fwd_env(flows))
    try:
        t_start = time.time()
        while True:
            if proc.poll() is not None:
                log.close()
                with open(logp) as f:
                    sys.stderr.write(f.read()[-3000:])
                raise RuntimeError("l3fwd exited: rc %d" % proc.returncode)
            with open(logp, errors="replace") as f:
                text = f.read()
            if "entering main loop" in text and os.path.exists(tsock):
                break
            if time.time() - t_start > 600:
                raise RuntimeError("l3fwd never started")
            time.sleep(0.2)
        start_s = time.time() - t_start
        time.sleep(WARMUP_S)
        a = telemetry(tsock, "/ethdev/stats,0")["/ethdev/stats"]
        ca, t0 = cpu_times(), time.time()
        pa = proc_cpu_s(proc.pid)
        time.sleep(seconds)
        pb = proc_cpu_s(proc.pid)
        b = telemetry(tsock, "/ethdev/stats,0")["/ethdev/stats"]
        t1, cb = time.time(), cpu_times()
    finally:
        stop(proc, signal.SIGINT)
        log.close()
        subprocess.run(["rm", "-rf", rundir])
    with open(logp, errors="replace") as f:
        text = f.read()
    algs = [ACL_ALG_NAMES.get(int(x), x) for x in re.findall(r"alg=(\d+)",
                                                              text)]
    tries = [int(x) for x in re.findall(r"num_tries=(\d+)", text)]
    rx = b["ipackets"] - a["ipackets"]
    tx = b["opackets"] - a["opackets"]
    return {"mpps": rx / (t1 - t0) / 1e6, "tx_mpps": tx / (t1 - t0) / 1e6,
            # l3fwd's CPU time per packet (its one lcore is its main
            # thread; the others sleep): x TSC Hz = its cycles/packet,
            # whoever else had the CPU
            "cpu_s_per_packet": (pb - pa) / rx if rx else None,
            "drop_share": (rx - tx) / rx if rx else None,
            "algorithm": algs[0] if algs else None, "num_tries": tries,
            "start_s": round(start_s, 2), "cpu_busy": cpu_busy(ca, cb)}


# --------------------------------------------------------------------------
# Update latency and build cost

def percentile(xs, p):
    """Nearest-rank percentile."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def acl_summary(st):
    return st.get("acl") if isinstance(st, dict) else None


def bench_updates(tmp, pcap, flows, mem, calls, sizes, sustained=600,
                  base_deletes=10):
    """On a live daemon (traffic running): acl_rule_add / delete latency on
    a 10k-rule table, then acl_rules_replace with each size in sizes."""
    res = {}
    rules10k = make_rules(10000, flows, False)
    proc, sock, start_s = pktaccel_start(tmp, pcap, len(flows), rules10k, mem,
                                         name="upd")
    res["start_with_10k_rules_s"] = round(start_s, 2)
    try:
        c = rpc_connect(sock)
        time.sleep(2)
        st0 = c.call("stats_get")
        res["acl_at_start"] = acl_summary(st0)
        rng = random.Random(7)
        v4 = [f for f in flows if not f.v6]
        # CPU time used by other processes (all but the daemon and this
        # script) while the updates run: ~0 on a quiet machine
        others0 = system_cpu_s() - proc_cpu_s(proc.pid) - \
            proc_cpu_s(os.getpid())
        wall0 = time.time()
        add_ms, del_ms, ids = [], [], []
        for k in range(calls):
            rid = 5000000 + k
            r = hit_rule(rng, rid, rng.choice(v4)) if k % 2 == 0 else \
                miss_rule(rng, rid, False)
            t0 = time.perf_counter()
            c.call("acl_rule_add", rule_json(r))
            add_ms.append((time.perf_counter() - t0) * 1e3)
            ids.append(rid)
        n_after = len(c.call("acl_rule_list"))
        for rid in ids:
            t0 = time.perf_counter()
            c.call("acl_rule_delete", {"id": rid})
            del_ms.append((time.perf_counter() - t0) * 1e3)
        st1 = c.call("stats_get")
        res["rule_add"] = {"table_rules": 10000, "calls": calls,
                           "median_ms": statistics.median(add_ms),
                           "p99_ms": percentile(add_ms, 99),
                           "max_ms": max(add_ms), "min_ms": min(add_ms),
                           "rules_listed_after": n_after}
        res["rule_delete"] = {"calls": calls,
                              "median_ms": statistics.median(del_ms),
                              "p99_ms": percentile(del_ms, 99),
                              "max_ms": max(del_ms)}
        # Beyond the 100 calls: a longer stream of adds (the
        # daemon folds added rules into a full rebuild now and then) and
        # deletes of rules that came with the table.
        if sustained:
            ms = []
            for k in range(sustained):
                rid = 6000000 + k
                r = hit_rule(rng, rid, rng.choice(v4)) if k % 2 == 0 else \
                    miss_rule(rng, rid, False)
                t0 = time.perf_counter()
                c.call("acl_rule_add", rule_json(r))
                ms.append((time.perf_counter() - t0) * 1e3)
            slow = [round(x, 1) for x in ms if x > 50]
            res["rule_add_sustained"] = {
                "calls": sustained, "median_ms": statistics.median(ms),
                "p99_ms": percentile(ms, 99), "max_ms": max(ms),
                "calls_over_50ms": len(slow), "slow_ms": slow[:20]}
            ms = []
            for rid in range(2, 2 + base_deletes):
                t0 = time.perf_counter()
                c.call("acl_rule_delete", {"id": rid})
                ms.append((time.perf_counter() - t0) * 1e3)
            if ms:
                res["base_rule_delete"] = {
                    "calls": len(ms), "median_ms": statistics.median(ms),
                    "max_ms": max(ms)}
            st1 = c.call("stats_get")
        res["other_processes_cpu_share"] = round(
            (system_cpu_s() - proc_cpu_s(proc.pid) - proc_cpu_s(os.getpid()) -
             others0) / (time.time() - wall0), 3)
        lost = {k: st1["drops"].get(k, 0) - st0["drops"].get(k, 0)
                for k in st1.get("drops", {})
                if k != "acl" and st1["drops"].get(k, 0) !=
                st0["drops"].get(k, 0)}
        res["non_acl_drops_during_updates"] = lost
        res["replace"] = []
        for n in sizes:
            rules = make_rules(n, flows, False, seed=3)
            params = {"default": "permit",
                      "rules": [rule_json(r) for r in rules]}
            body = len(json.dumps(params, separators=(",", ":")))
            rss0 = vm_kib(proc.pid, "VmRSS")
            t0 = time.perf_counter()
            entry = {"rules": n, "request_bytes": body}
            try:
                out = c.call("acl_rules_replace", params)
                entry["wall_ms"] = (time.perf_counter() - t0) * 1e3
                entry["result"] = out
            except (RpcError, ConnectionError) as e:
                entry["error"] = str(e)
                print("  acl_rules_replace %d rules: %s" % (n, e),
                      file=sys.stderr)
                c.close()
                if proc.poll() is not None:
                    entry["daemon_exited"] = proc.returncode
                    res["replace"].append(entry)
                    break
                c = rpc_connect(sock)
            rss1 = vm_kib(proc.pid, "VmRSS")
            entry["rss_kib_before"] = rss0
            entry["rss_kib_after"] = rss1
            entry["hwm_kib"] = vm_kib(proc.pid, "VmHWM")
            entry["acl"] = acl_summary(c.call("stats_get"))
            res["replace"].append(entry)
        c.close()
    finally:
        stop(proc)
    return res


def bench_startup_build(tmp, pcap, flows, n, mem):
    """Fallback for tables too big for one RPC request: load them from the
    config file at start and read the build figures from stats_get."""
    rules = make_rules(n, flows, False, seed=3)
    try:
        proc, sock, start_s = pktaccel_start(tmp, pcap, len(flows), rules,
                                             mem, name="big")
    except RuntimeError as e:
        with open(os.path.join(tmp, "big.log"), errors="replace") as f:
            lines = [x.strip() for x in f if "ACL" in x or "acl" in x]
        return {"rules": n, "eal_mem_mb": mem, "error": str(e),
                "log": lines[-3:]}
    try:
        c = rpc_connect(sock)
        st = c.call("stats_get")
        c.close()
        return {"rules": n, "eal_mem_mb": mem, "start_s": round(start_s, 2),
                "rss_kib": vm_kib(proc.pid, "VmRSS"),
                "hwm_kib": vm_kib(proc.pid, "VmHWM"), "acl": acl_summary(st)}
    finally:
        stop(proc)


# --------------------------------------------------------------------------

def main():
    global DAEMON
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", default=DAEMON,
                    help="pktaccel binary (e.g. a snapshot of build/app/pktaccel)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rules", default="0,100,1000,10000")
    ap.add_argument("--variants", default="ipv4,mixed")
    ap.add_argument("--mem", type=int, default=1024, help="EAL -m (MB)")
    ap.add_argument("--l3fwd-algs", default="same,default",
                    help="l3fwd runs per row: 'same' (pktaccel's classify "
                    "algorithm, --alg), 'default' (l3fwd's own choice) or an "
                    "algorithm name; comma-separated")
    ap.add_argument("--big-mem", type=int, default=6144,
                    help="EAL -m (MB) for a table that failed to build with --mem")
    ap.add_argument("--update-calls", type=int, default=100)
    ap.add_argument("--build-sizes", default="10000,100000")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-updates", action="store_true")
    ap.add_argument("--no-l3fwd", action="store_true")
    ap.add_argument("--retries", type=int, default=3,
                    help="repeat a run disturbed by another process")
    ap.add_argument("--quiet-wait", type=int, default=900,
                    help="seconds to wait for an idle machine before each run")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    DAEMON = os.path.abspath(args.daemon)
    if not os.access(DAEMON, os.X_OK):
        sys.exit("build the daemon first: meson setup build && ninja -C build")
    if not args.no_l3fwd and not l3fwd_ready():
        subprocess.run(["sh", L3FWD_BUILD], check=True,
                       stdout=subprocess.DEVNULL)
    sizes = [int(x) for x in args.rules.split(",") if x != ""]
    variants = [v for v in args.variants.split(",") if v]
    head = subprocess.run(["git", "-C", ROOT, "describe", "--always",
                           "--dirty"], capture_output=True, text=True).stdout
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "git": head.strip(), "daemon": shown_path(DAEMON),
           "flows": args.flows, "seconds": args.seconds,
           "frame_bytes": {"ipv4": 60, "ipv6": 62}, "eal_mem_mb": args.mem,
           "loadavg_start": open("/proc/loadavg").read().split()[:3],
           "throughput": [], "updates": None}
    with tempfile.TemporaryDirectory(prefix="pa-bench-acl-") as tmp:
        flowsets = {}
        for v in variants:
            flows = make_flows(args.flows, v == "mixed")
            pcap = os.path.join(tmp, "flows-%s.pcap" % v)
            write_pcap(pcap, flows)
            flowsets[v] = (flows, pcap)
        if not args.skip_throughput:
            for v in variants:
                flows, pcap = flowsets[v]
                for n in sizes:
                    rules = make_rules(n, flows, v == "mixed")
                    row = {"variant": v, "rules": n,
                           "expected_drop_share":
                           expected_drop_share(flows) if n else 0.0}
                    row["pktaccel"] = measured(
                        lambda: bench_pktaccel(tmp, pcap, len(flows), rules,
                                               args.seconds, args.mem),
                        args, args.retries)
                    pa = row["pktaccel"]
                    print("%-6s %6d rules: pktaccel %6.2f Mpps (%5.1f c/p, "
                          "drop %.3f, matched %s, %s)" % (
                              v, n, pa["mpps"], pa["cycles_per_packet"],
                              pa["drop_share"] or 0,
                              "%.3f" % pa["rule_match_share"]
                              if pa["rule_match_share"] is not None else "?",
                              pa["algorithm"]), flush=True)
                    row["l3fwd"] = {}
                    for which in ([] if args.no_l3fwd else
                                  [x for x in args.l3fwd_algs.split(",") if x]):
                        alg = pa["algorithm"] if which == "same" else \
                            None if which == "default" else which
                        l3 = measured(
                            lambda: bench_l3fwd(tmp, pcap, len(flows), rules,
                                                args.seconds, args.mem, alg),
                            args, args.retries)
                        l3["cycles_per_packet"] = pa["tsc_hz"] / \
                            (l3["mpps"] * 1e6)
                        l3["ratio"] = pa["mpps"] / l3["mpps"]
                        row["l3fwd"][which] = l3
                        print("%-6s %6d rules: l3fwd-acl (%s: %s) %6.2f Mpps "
                              "(%5.1f c/p, drop %.3f, tries %s)  ratio %.2f" % (
                                  v, n, which, l3["algorithm"], l3["mpps"],
                                  l3["cycles_per_packet"], l3["drop_share"] or 0,
                                  l3["num_tries"], l3["ratio"]), flush=True)
                    res["throughput"].append(row)
        if not args.skip_updates:
            flows, pcap = flowsets.get("ipv4") or (make_flows(args.flows, False),
                                                   None)
            if pcap is None:
                pcap = os.path.join(tmp, "flows-ipv4.pcap")
                write_pcap(pcap, flows)
            quiet = wait_quiet(args.quiet_wait)
            bsizes = [int(x) for x in args.build_sizes.split(",") if x]
            upd = bench_updates(tmp, pcap, flows, args.mem, args.update_calls,
                                bsizes)
            for e in upd["replace"]:
                # The same rules from the config file in a fresh daemon:
                # there stats_get's memory_bytes is the whole table (after
                # a replace it is the difference to the old one). With the
                # EAL memory of the other runs, then --big-mem if that
                # failed.
                e["from_config_at_start"] = [bench_startup_build(
                    tmp, pcap, flows, e["rules"], args.mem)]
                if "error" in e["from_config_at_start"][0] and \
                        args.big_mem > args.mem:
                    e["from_config_at_start"].append(bench_startup_build(
                        tmp, pcap, flows, e["rules"], args.big_mem))
            upd["quiet_before"] = quiet
            res["updates"] = upd
    res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]

    print()
    cols = [x for x in args.l3fwd_algs.split(",") if x] \
        if not args.no_l3fwd else []
    print("| variant | rules | pktaccel Mpps | cycles/packet | " +
          " | ".join("l3fwd-acl (%s) Mpps | cycles/packet | ratio" % w
                     for w in cols) + " |")
    print("|---|---|---|---|" + "---|---|---|" * len(cols))
    for row in res["throughput"]:
        pa = row["pktaccel"]
        cells = []
        for w in cols:
            l3 = row["l3fwd"].get(w)
            cells += ["%.2f%s (%s)" % (l3["mpps"], "*" if l3.get("disturbed")
                                       else "", l3["algorithm"]),
                      "%.0f" % l3["cycles_per_packet"], "%.2f" % l3["ratio"]] \
                if l3 else ["-", "-", "-"]
        print("| %s | %d | %.2f%s | %.0f | %s |" % (
            row["variant"], row["rules"], pa["mpps"],
            "*" if pa.get("disturbed") else "", pa["cycles_per_packet"],
            " | ".join(cells)))
    if any(row["pktaccel"].get("disturbed") or
           any(x.get("disturbed") for x in row["l3fwd"].values())
           for row in res["throughput"]):
        print("* another process used the CPUs during this run")
    u = res["updates"]
    if u:
        if "rule_add" in u:
            ra, rd = u["rule_add"], u["rule_delete"]
            print("\nacl_rule_add on a live 10k table: median %.2f ms, p99 %.2f ms"
                  " (max %.2f) over %d calls" % (ra["median_ms"], ra["p99_ms"],
                                                  ra["max_ms"], ra["calls"]))
            print("acl_rule_delete: median %.2f ms, p99 %.2f ms"
                  % (rd["median_ms"], rd["p99_ms"]))
            rs = u.get("rule_add_sustained")
            if rs:
                print("%d more adds: median %.2f ms, p99 %.2f ms, max %.0f ms, "
                      "%d over 50 ms" % (rs["calls"], rs["median_ms"],
                                         rs["p99_ms"], rs["max_ms"],
                                         rs["calls_over_50ms"]))
            bd = u.get("base_rule_delete")
            if bd:
                print("delete of a rule of the loaded table: median %.0f ms, "
                      "max %.0f ms (%d calls)" % (bd["median_ms"], bd["max_ms"],
                                                  bd["calls"]))
        for e in u.get("replace", []):
            if "error" in e:
                print("acl_rules_replace %d rules: %s" % (e["rules"], e["error"]))
            else:
                print("acl_rules_replace %d rules: %.0f ms wall, RSS %+d KiB, acl %s"
                      % (e["rules"], e["wall_ms"],
                         (e["rss_kib_after"] or 0) - (e["rss_kib_before"] or 0),
                         json.dumps(e["acl"])))
            for s in e.get("from_config_at_start", []):
                a = s.get("acl") or {}
                print("  %d rules from the config at start, -m %d: %s" % (
                    e["rules"], s["eal_mem_mb"],
                    "build %.0f ms, memory %.1f MB, VmHWM %.0f MB" % (
                        a.get("build_ms", 0), a.get("memory_bytes", 0) / 1e6,
                        (s.get("hwm_kib") or 0) / 1024)
                    if a else json.dumps(s.get("log") or s)))
    if not args.no_save:
        out = args.out or os.path.join(ROOT, "perf", "results", "acl-%s.json"
                                       % datetime.date.today().isoformat())
        with open(out, "w") as f:
            json.dump(res, f, indent=2)
            f.write("\n")
        print("saved", os.path.relpath(out, ROOT))


if __name__ == "__main__":
    main()
