#!/usr/bin/python3
"""LB benchmark: the lb stage (Maglev service, flow table) behind the ACL.

Throughput: 64-byte UDP traffic to one VIP (192.0.2.10:80) from --flows
distinct sources on a net_pcap vdev with infinite_rx=1, through 1k ACL
rules (bench_acl's rule generator: ~5% of the flows dropped) and then:
  acl      no service (the ACL-only reference),
  lb10     one Maglev ipip service of 10 backends, flow table on,
  lb1000   the same with 1000 backends,
  nat10    one Maglev nat service of 10 backends (destination rewritten,
           flow table and NAT reply table on),
  natrep10 the nat10 service, and the traffic is backends' replies
           (backend:80 -> client) that match no flow: each takes the
           stateless reply path (docs/scale-out.md, "NAT in a fleet"); a
           reply comes from a random one of the 10 backends, so about
           one in ten agrees with Maglev and is translated, the rest pass.
Each in rtc mode with one worker lcore (Mpps from stats_get over
--seconds after a warm-up that puts every flow in the flow table) and,
with --pipeline, in pipeline mode (4 lcores; on a 2-CPU machine they share
one CPU: the rx lcore fills the rings faster than the others drain them,
most packets are ring_full drops and only tx Mpps means anything).

Maglev builds: lb_service_add of services with 10, 100 and 1000 backends
(M = 65537) on a live daemon, build_ms from lb_service_list (median of 5).
Flow table memory: the DPDK heap the flow tables take, per flow of
capacity (flow_table.size 1M and 4M).

Writes perf/results/lb-<date>.json.

Usage: /usr/bin/python3 perf/bench_lb.py [--seconds 10]
           [--flows 10000,1000000] [--pipeline] [--skip-throughput]
           [--port transparent|routed|kernel_if]
"""
import argparse
import datetime
import json
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_acl as ba  # noqa: E402

ROOT = ba.ROOT
VIP = "192.0.2.10"
VIP_INT = 0xc000020a
VPORT = 80


def make_flows(n, seed=7):
    """n distinct UDP flows to the VIP: sources in 10/8, random ports."""
    rng = random.Random(seed)
    flows, seen = [], set()
    while len(flows) < n:
        src = 0x0a000000 | rng.getrandbits(24)
        sport = rng.randint(1024, 65535)
        if (src, sport) in seen:
            continue
        seen.add((src, sport))
        flows.append(ba.Flow(False, src, VIP_INT, sport, VPORT))
    return flows


def make_replies(n, n_backends, seed=7):
    """n replies of make_flows(n)'s flows, each from a random backend
    (backends(n_backends)) port VPORT to the flow's client."""
    rng = random.Random(seed + 1)
    return [ba.Flow(False, 0x0a010000 + 1 + rng.randrange(n_backends),
                    f.src, VPORT, f.sport) for f in make_flows(n, seed)]


def backends(n, base=0x0a010000):
    out = []
    for i in range(n):
        a = base + 1 + i
        out.append({"addr": "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255,
                                            (a >> 8) & 255, a & 255),
                    "weight": 1 + i % 3})
    return out


def service(name, n_backends, port=VPORT, forward="ipip"):
    return {"name": name, "vip": VIP, "port": port, "proto": "udp",
            "scheduler": "maglev", "forward": forward,
            "backends": backends(n_backends)}


# The bench port's role (--port): "transparent" (no addr, the default),
# "routed" (an addr and a gateway MAC: the MAC filter, and traffic that is
# not balanced routed, TTL decremented) or "kernel_if" (routed, with the
# exception path's TAP). net_pcap's first port has MAC 02:70:63:61:70:00,
# which the frames are sent to when the port is routed.
PORT_KIND = "transparent"
PCAP_PORT_MAC = b"\x02\x70\x63\x61\x70\x00"


def port_config(pcap, n_flows):
    port = {"name": "bench0", "devargs":
            "net_pcap_bench0,rx_pcap=%s,infinite_rx=1" % pcap,
            "mbufs": n_flows + 8192}
    if PORT_KIND in ("routed", "kernel_if"):
        port.update({"addr": ["198.18.0.1/24"],
                     "gateway_mac": "02:00:00:00:00:01"})
    if PORT_KIND == "kernel_if":
        port["kernel_if"] = "pab%d" % (os.getpid() % 100000)
    return port


def write_bench_pcap(path, flows):
    ba.write_pcap(path, flows, eth_dst=PCAP_PORT_MAC
                  if PORT_KIND != "transparent" else
                  b"\x02\x00\x00\x00\x00\x02")


PROTO_TCP = 6
TCP_SYN, TCP_PSH, TCP_ACK = 0x02, 0x08, 0x10


def _tcp4_frame(fl, flags, seq, ack, opts, payload, ip_id, eth_dst):
    """One IPv4 TCP frame of flow @p fl (client -> VIP), checksums right,
    padded to 60 bytes as the wire pads a short frame."""
    hl = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", fl.sport, fl.dport, seq, ack,
                      (hl // 4) << 4, flags, 65535, 0, 0) + opts + payload
    pseudo = struct.pack("!IIxBH", fl.src, fl.dst, PROTO_TCP, len(tcp))
    c = ba._csum(pseudo + tcp + (b"\x00" if len(tcp) & 1 else b""))
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(tcp), ip_id, 0x4000,
                     64, PROTO_TCP, 0, fl.src, fl.dst)
    ip = ip[:10] + struct.pack("!H", ba._csum(ip)) + ip[12:]
    frame = eth_dst + b"\x02\x00\x00\x00\x00\x01\x08\x00" + ip + tcp
    return frame + b"\x00" * (60 - len(frame)) if len(frame) < 60 else frame


TCP_DATA_LEN = 6     # a 60-byte frame: 14 + 20 + 20 + 6


def isn_of(fl):
    """A flow's client initial sequence number (any fixed function)."""
    return (fl.src * 2654435761 + fl.sport * 40503) & 0xffffffff


def write_tcp_pcap(path, flows, n_data=0, eth_dst=None):
    """IPv4 TCP connections' client side (client -> VIP only, never a
    reply), in rounds so that consecutive frames are of different flows
    and each flow's frames stay in order: round 0 every flow's SYN (MSS
    option, 60 bytes padded), then with @p n_data > 0 round 1 every
    flow's handshake ACK (seq ISN+1) and rounds 2.. its data segments of
    TCP_DATA_LEN bytes each (PSH|ACK, 60 bytes), seq ISN+1, ISN+7...
    Returns the number of frames written."""
    eth_dst = eth_dst or (PCAP_PORT_MAC if PORT_KIND != "transparent"
                          else b"\x02\x00\x00\x00\x00\x02")
    mss = struct.pack("!BBH", 2, 4, 1460)
    rounds = 1 + (1 + n_data if n_data > 0 else 0)
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for r in range(rounds):
            for i, fl in enumerate(flows):
                isn = isn_of(fl)
                if r == 0:
                    fr = _tcp4_frame(fl, TCP_SYN, isn, 0, mss, b"", i & 0xffff,
                                     eth_dst)
                elif r == 1:
                    fr = _tcp4_frame(fl, TCP_ACK, (isn + 1) & 0xffffffff, 1,
                                     b"", b"", (i + r) & 0xffff, eth_dst)
                else:
                    seq = (isn + 1 + (r - 2) * TCP_DATA_LEN) & 0xffffffff
                    fr = _tcp4_frame(fl, TCP_PSH | TCP_ACK, seq, 1, b"",
                                     bytes([r]) * TCP_DATA_LEN,
                                     (i + r) & 0xffff, eth_dst)
                f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)))
                f.write(fr)
                n += 1
    return n


def start(tmp, pcap, n_flows, rules, mem, lb=None, mode="rtc", name="lb",
          flow_table=None, lcores=None, eal_lcores=None, lb_extra=None):
    """Start a daemon on @p pcap; (proc, socket, seconds to start). In
    pipeline mode @p lcores (the config's pipeline.lcores) and
    @p eal_lcores (EAL --lcores) choose the layout; the default is one
    lcore per stage, all four on CPU 1. @p lb_extra: more keys of the lb
    section (local_addr6, ...)."""
    conf = os.path.join(tmp, name + ".json")
    sock = os.path.join(tmp, name + ".sock")
    pipe = {"mode": "rtc", "lcores": {"worker": [1]}} if mode == "rtc" else \
        {"mode": "pipeline", "lcores": lcores or {"rx": [1], "classify": [2],
                                                  "lb": [3], "tx": [4]}}
    cfg = {"ports": [port_config(pcap, n_flows)],
           "pipeline": pipe,
           "metrics": None}
    if rules is not None:
        cfg["acl"] = {"default": "permit",
                      "rules": [ba.rule_json(r) for r in rules]}
    cfg["lb"] = {"local_addr": "192.0.2.254", "services": lb or []}
    cfg["lb"].update(lb_extra or {})
    if flow_table is not None:
        cfg["lb"]["flow_table"] = flow_table
    with open(conf, "w") as f:
        json.dump(cfg, f, separators=(",", ":"))
    lcores = "0,1" if mode == "rtc" else eal_lcores or "0@0,(1,2,3,4)@1"
    log = open(os.path.join(tmp, name + ".log"), "w")
    eal = ba.eal() + ["-m", str(mem)] + (["-l", lcores] if mode == "rtc" else
                                        ["--lcores", lcores])
    proc = subprocess.Popen([ba.DAEMON] + eal + ["--", "-c", conf, "-s", sock],
                            stdout=log, stderr=subprocess.STDOUT)
    t0 = time.time()
    try:
        ba.wait_socket(sock, proc, timeout=600)
    except (RuntimeError, AssertionError):   # wait_socket: the daemon exited
        log.close()
        with open(os.path.join(tmp, name + ".log")) as f:
            sys.stderr.write(f.read()[-3000:])
        ba.stop(proc)
        raise
    return proc, sock, time.time() - t0


def lcore_delta(a, b):
    """Per lcore, what changed between two stats_get: packets per stage,
    busy cycles, ring_full drops."""
    out = {}
    for k, lb_ in b.get("lcores", {}).items():
        la = a.get("lcores", {}).get(k, {})
        sa, sb = la.get("stage_packets", {}), lb_.get("stage_packets", {})
        out[k] = {"stage_packets": {s: sb[s] - sa.get(s, 0) for s in sb},
                  "busy_cycles": lb_.get("busy_cycles", 0) -
                  la.get("busy_cycles", 0),
                  "ring_full": lb_.get("drops", {}).get("ring_full", 0) -
                  la.get("drops", {}).get("ring_full", 0)}
    return out


def bench_one(tmp, pcap, flows, rules, seconds, mem, lb, mode, flow_table,
              lcores=None, eal_lcores=None, lb_extra=None, name="lb",
              n_frames=None):
    """One measured run. @p n_frames: the pcap's frames where it holds
    more than one per flow (default len(flows))."""
    n_frames = n_frames or len(flows)
    proc, sock, start_s = start(tmp, pcap, n_frames, rules, mem, lb, mode,
                                flow_table=flow_table, lcores=lcores,
                                eal_lcores=eal_lcores, lb_extra=lb_extra,
                                name=name)
    try:
        c = ba.rpc_connect(sock)
        pl = c.call("pipeline_get")
        # warm-up: every flow seen once (the flow table filled)
        end = time.time() + 60
        while time.time() < end:
            st = c.call("stats_get")
            if st["rx_packets"] >= 2 * n_frames:
                break
            time.sleep(0.5)
        time.sleep(min(1.0, ba.WARMUP_S))
        a = c.call("stats_get")
        ca, t0 = ba.cpu_times(), time.time()
        wa = ba.threads_cpu_s(proc.pid)
        time.sleep(seconds)
        wb = ba.threads_cpu_s(proc.pid)
        b = c.call("stats_get")
        t1, cb = time.time(), ba.cpu_times()
        rss = ba.vm_kib(proc.pid, "VmRSS")
        c.close()
    finally:
        ba.stop(proc)
    hz = pl["tsc_hz"]
    pkts = b["rx_packets"] - a["rx_packets"]
    pps = pkts / (t1 - t0)
    lbs = b.get("lb") or {}
    lba = a.get("lb") or {}
    tx = b["tx_packets"] - a["tx_packets"]
    wcpu = {k: wb[k] - wa.get(k, 0) for k in wb}
    return {"mpps": pps / 1e6,
            "cycles_per_packet": hz / pps if pps else None,
            # the data-path threads' own CPU time x TSC Hz, per packet
            # received and per packet sent
            "cpu_cycles_per_packet": sum(wcpu.values()) * hz / pkts
            if pkts else None,
            "cpu_cycles_per_tx_packet": sum(wcpu.values()) * hz / tx
            if tx else None,
            "lcore_cpu_s": wcpu, "lcores": lcore_delta(a, b),
            "ring_full_share": (b["drops"].get("ring_full", 0) -
                                a["drops"].get("ring_full", 0)) / pkts
            if pkts else None,
            "latency": b.get("latency"),
            "drop_share": (b["dropped_packets"] - a["dropped_packets"]) / pkts
            if pkts else None,
            "balanced_share": (lbs.get("balanced", 0) - lba.get("balanced", 0))
            / pkts if pkts else None,
            "tx_mpps": (b["tx_packets"] - a["tx_packets"]) / (t1 - t0) / 1e6,
            "flows_in_table": lbs.get("flows"),
            "flow_table_full": lbs.get("flow_table_full"),
            "fnat_flows": (lbs.get("fnat") or {}).get("flows"),
            "fnat_no_port": (lbs.get("fnat") or {}).get("no_port"),
            "new_flows_during": lbs.get("flows_created", 0) -
            lba.get("flows_created", 0),
            "vmrss_kib": rss, "start_s": round(start_s, 2), "tsc_hz": hz,
            "cpu_busy": ba.cpu_busy(ca, cb)}


def bench_builds(tmp, pcap, n_flows, mem, sizes, reps=5):
    proc, sock, _ = start(tmp, pcap, n_flows, None, mem, name="builds")
    out = {}
    try:
        c = ba.rpc_connect(sock)
        for n in sizes:
            ms, wall = [], []
            for r in range(reps):
                svc = service("b%d_%d" % (n, r), n, port=1000 + r)
                t0 = time.time()
                c.call("lb_service_add", svc)
                wall.append((time.time() - t0) * 1e3)
                lst = c.call("lb_service_list")
                ms.append([s for s in lst if s["name"] == svc["name"]][0]
                          ["build_ms"])
                c.call("lb_service_delete", {"name": svc["name"]})
            out[str(n)] = {"build_ms_median": statistics.median(ms),
                           "build_ms_min": min(ms), "build_ms_max": max(ms),
                           "rpc_ms_median": statistics.median(wall)}
            print("maglev build, %4d backends, M=65537: %.2f ms (median of %d;"
                  " lb_service_add answered in %.1f ms)" % (
                      n, out[str(n)]["build_ms_median"], reps,
                      out[str(n)]["rpc_ms_median"]), flush=True)
        c.close()
    finally:
        ba.stop(proc)
    return out


def bench_memory(tmp, pcap, n_flows, mem):
    """Bytes per flow of flow table capacity: the DPDK heap the flow tables
    took (stats_get lb.flow_table_bytes) over their capacity, for 1M and
    4M flows. (VmRSS would undercount: DPDK hands out fresh memory already
    zero, so untouched table pages are never resident.)"""
    out = {}
    for size in (1048576, 4 * 1048576):
        proc, sock, _ = start(tmp, pcap, n_flows, None, mem, name="mem%d" % size,
                              lb=[service("web", 10)],
                              flow_table={"size": size})
        try:
            c = ba.rpc_connect(sock)
            lb = c.call("stats_get")["lb"]
            c.close()
        finally:
            ba.stop(proc)
        per = lb["flow_table_bytes"] / lb["flow_table_capacity"]
        out[str(size)] = {"bytes": lb["flow_table_bytes"],
                          "capacity": lb["flow_table_capacity"],
                          "bytes_per_flow": per}
        print("flow table of %d flows: %.1f MB, %.0f bytes per flow"
              % (size, lb["flow_table_bytes"] / 1e6, per), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", default=ba.DAEMON)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--flows", default="10000,1000000")
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--cases", default="acl,lb10,lb1000")
    ap.add_argument("--pipeline", action="store_true")
    ap.add_argument("--mem", type=int, default=1024)
    ap.add_argument("--build-sizes", default="10,100,1000")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-builds", action="store_true")
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--quiet-wait", type=int, default=600)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--port", choices=("transparent", "routed", "kernel_if"),
                    default="transparent",
                    help="the bench port's role: transparent (default), "
                    "routed (addr + gateway: MAC filter, unbalanced "
                    "traffic routed), kernel_if (routed, with the "
                    "exception path's TAP; root)")
    args = ap.parse_args()
    global PORT_KIND
    PORT_KIND = args.port
    ba.DAEMON = os.path.abspath(args.daemon)
    if not os.access(ba.DAEMON, os.X_OK):
        sys.exit("build the daemon first: meson setup build && ninja -C build")
    head = subprocess.run(["git", "-C", ROOT, "describe", "--always",
                           "--dirty"], capture_output=True, text=True).stdout
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "git": head.strip(), "rules": args.rules, "seconds": args.seconds,
           "frame_bytes": 60, "throughput": [], "builds": None,
           "memory": None}
    with tempfile.TemporaryDirectory(prefix="pa-bench-lb-") as tmp:
        small = None
        if not args.skip_throughput:
            modes = ["rtc"] + (["pipeline"] if args.pipeline else [])
            for nf in [int(x) for x in args.flows.split(",") if x]:
                flows = make_flows(nf)
                pcap = os.path.join(tmp, "lb-%d.pcap" % nf)
                write_bench_pcap(pcap, flows)
                small = small or pcap
                rules = ba.make_rules(args.rules, flows, False)
                rflows = make_replies(nf, 10)
                rpcap = os.path.join(tmp, "lbrep-%d.pcap" % nf)
                write_bench_pcap(rpcap, rflows)
                rrules = ba.make_rules(args.rules, rflows, False)
                # room for every flow in the table without cuckoo misses
                ft = {"size": max(1048576, 2 * nf)}
                mem = max(args.mem, 1024 + nf * 5 // 1000)
                for mode in modes:
                    for case in [x for x in args.cases.split(",") if x]:
                        rep = case.startswith("natrep")
                        if case == "acl":
                            lb = None
                        elif case.startswith("nat"):
                            lb = [service("web", int(case.lstrip(
                                "natrep")), forward="nat")]
                        else:
                            lb = [service("web", int(case[2:]))]
                        r = ba.measured(
                            lambda: bench_one(
                                tmp, rpcap if rep else pcap,
                                rflows if rep else flows,
                                rrules if rep else rules,
                                args.seconds, mem, lb, mode, ft),
                            args, args.retries)
                        r.update({"flows": nf, "mode": mode, "case": case})
                        res["throughput"].append(r)
                        print("%-8s %-6s %8d flows: %6.2f Mpps (%5.1f c/p, "
                              "tx %.2f Mpps, drop %.3f, balanced %.3f, flows %s, "
                              "full %s)" % (
                                  mode, case, nf, r["mpps"],
                                  r["cycles_per_packet"], r["tx_mpps"],
                                  r["drop_share"] or 0,
                                  r["balanced_share"] or 0,
                                  r["flows_in_table"], r["flow_table_full"]),
                              flush=True)
        if small is None:
            flows = make_flows(1000)
            small = os.path.join(tmp, "lb-small.pcap")
            write_bench_pcap(small, flows)
        if not args.skip_builds:
            ba.wait_quiet(args.quiet_wait)
            res["builds"] = bench_builds(tmp, small, 10000, args.mem,
                                         [int(x) for x in
                                          args.build_sizes.split(",") if x])
            res["memory"] = bench_memory(tmp, small, 10000, 2048)
    base = {(r["flows"], r["mode"]): r["mpps"] for r in res["throughput"]
            if r["case"] == "acl"}
    for r in res["throughput"]:
        b = base.get((r["flows"], r["mode"]))
        r["vs_acl_only"] = r["mpps"] / b if b else None
        if r["case"] != "acl" and b:
            print("%-8s %-6s %8d flows: %.2fx the ACL-only figure" % (
                r["mode"], r["case"], r["flows"], r["vs_acl_only"]))
    if not args.no_save:
        out = args.out or os.path.join(
            ROOT, "perf", "results", "lb-%s.json" % datetime.date.today())
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        print("wrote", out)


if __name__ == "__main__":
    main()
