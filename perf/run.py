#!/usr/bin/python3
"""One command for the data-path benchmarks (issue 16): every scenario
beside its peer in one run, interleaved pairs, medians; a Markdown table
and a JSON file in perf/results/; --compare against a saved result.

Scenarios (--only NAME,NAME; members are shared: a run that two
scenarios need is made once per pair):

  passthrough  no rules, no service: pktaccel rtc (1 worker) vs
               dpdk-testpmd --forward-mode=io                 (bench.py)
  acl1k        1k ACL rules: pktaccel vs l3fwd --lookup=acl   (bench_acl.py)
  acl_lb       1k rules + one Maglev ipip service (10 backends, warm
               flow table, --flows flows to the VIP) vs l3fwd-acl with
               the same rules and traffic                     (bench_lb.py)
  flows1m      acl_lb with --big-flows flows (1M): cycles/packet against
               acl_lb's, Mpps against l3fwd-acl on the same 1M traffic
               (perf/l3fwd/build.sh lets its mbuf pool preload it), and
               l3fwd's own growth 1M over 10k beside ours;
               and both traffics without the service (pktaccel, same
               rules): how much of the growth is the traffic source
               (net_pcap copying from as many stored frames as flows),
               the parse and the ACL, and how much the LB's own
  modes        nat, dsr and full NAT (fnat: 8 pool addresses x 64512
               ports) on the same traffic, and IPv6-in-IPv6 (IPv6 traffic
               and rules) against acl_lb's IPv4 ipip; and the PROXY
               protocol's cost: a TCP fnat service with proxy_protocol v2
               against the same service without it, on TCP connections'
               client side (--flows flows, each opening with its SYN in
               the pcap: SYN, handshake ACK, 6 data segments). Full NAT's
               traffic is client -> VIP only: the backends' replies would
               have to be sent to pool ports the flows only get at run
               time, so none is replayed.
  pipeline     pipeline mode on the acl_lb traffic against rtc with one
               worker: two stage lcores, rx+tx on CPU 0 (with the napping
               main lcore), classify+lb on CPU 1; if the daemon refuses one
               lcore for several stages, one lcore per stage, rx and tx on
               CPU 0, classify and lb on CPU 1 (the JSON says which). The
               ring hop, two ways: the stage lcores' CPU cycles per packet
               sent, minus rtc's, over the ring hops a packet makes (all
               the split costs); and measured alone by
               build/perf/bench_ring_hop (the ring operation and the
               packet's lines crossing CPU 0 -> 1: 3 rounds of 3
               variants of --seconds/6). Beside it, the automatic plan
               for two lcores: rx+classify on CPU 0, lb+tx on CPU 1,
               one hop.
  latency      1k rules, pipeline.latency on vs off: the stamping's cost
               and the percentiles at full load (bench_latency.py); with
               root (and not --quick) also the wake-up of an idle adaptive
               rtc daemon on veths, once

Every pktaccel run is rtc with one worker lcore on CPU 1 (pipeline mode
excepted), 60-byte frames (62 for IPv6) on a net_pcap vdev with
infinite_rx=1. Memory (--memory): by default (auto) every process, the
peers too, runs on 2 MB huge pages, production's layout, which run.py
reserves for the run and releases after, when it can: as root, with 2 MB
pages offered and none reserved already; otherwise on --no-huge memory,
saying why (there each mbuf sits alone on a 4 KB page, which costs every
side D1 conflicts). --huge insists on huge pages, --no-huge on the other.
Each pair runs every member once, the order reversed on
odd pairs. Mpps is over --seconds after the warm-up; "CPU cycles/packet"
is the data-path threads' own CPU time x TSC Hz / packets, which leaves
out the time other processes had their CPU (the figure to trust on a
shared machine); ratios are taken within a pair, then the median.

A/B, --daemon-b PATH: two builds compared in one run, for every hot-path
change (main as A, --daemon or build/app/pktaccel; the change, built in
a second build directory, as B: --daemon-b build-new/app/pktaccel).
Every pktaccel run (pa_*) is made on both daemons, side by side in each
pair (A then B, B then A on odd pairs), so that both share the machine's
slow and fast spells, which two separate runs of run.py do not; the
peers run once a pair as always. That doubles the pktaccel runs' time.
B's figures come from the same code against the same peer runs; the
table adds, per figure, B's median and B over A taken within each pair
(median, pairs' range): > 1 is B ahead for Mpps and the ratios, < 1 is
B cheaper for cycles/packet. The JSON keeps A's figures as they are, B's
in "b" (the same shape, each with "b_over_a") and both daemons (path,
git describe of the tree they sit in, mtime, size, sha256) in "daemons".
The latency scenario's wake-up run is A's alone.

Usage:
  /usr/bin/python3 perf/run.py [--pairs 3] [--seconds 5] [--only NAMES]
      [--quick] [--huge | --no-huge] [--compare OLD.json] [--out PREFIX]
      [--no-save] [--daemon A] [--daemon-b B]
  /usr/bin/python3 perf/run.py --compare OLD.json --new NEW.json   (no run)
  /usr/bin/python3 perf/run.py --show RESULT.json        (its table, no run)

Exit status: 0; 1 when a run failed (each failure is named on stderr and
kept in the JSON; the other runs go on); 2 on bad arguments.
"""
import argparse
import datetime
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import bench_acl as ba  # noqa: E402
import bench_latency as blat  # noqa: E402
import bench_lb as bl  # noqa: E402

ROOT = os.path.dirname(HERE)

VIP6 = "2001:db8:ffff::10"
VIP6_INT = 0x20010db8ffff << 80 | 0x10

# --------------------------------------------------------------------------
# Traffic and tables, made once per run (lazily: only what the scenarios
# selected need)


def lb_flows6(n, seed=7):
    """n distinct IPv6 UDP flows to VIP6 port 80: sources in
    2001:db8::/48, random ports."""
    rng = random.Random(seed)
    flows, seen = [], set()
    while len(flows) < n:
        src = (0x20010db8 << 96) | rng.getrandbits(80)
        sport = rng.randint(1024, 65535)
        if (src, sport) in seen:
            continue
        seen.add((src, sport))
        flows.append(ba.Flow(True, src, VIP6_INT, sport, bl.VPORT))
    return flows


def rules_v6(n, flows6, seed=2):
    """bench_acl.make_rules for IPv6 alone: the same drop rule (both
    families), then half permit rules around the flows, half rules on
    address space the traffic never uses, all IPv6."""
    rng = random.Random(seed * 1000003 + n + 6)
    rules = [ba.Rule(1, 1000000, None, None, None, ba.DROP_SPORT,
                     (0, 65535), ba.PROTO_UDP, True)]
    for k in range(1, n):
        rules.append(ba.hit_rule(rng, 1 + k, rng.choice(flows6))
                     if k % 4 < 2 else ba.miss_rule(rng, 1 + k, True))
    return rules


def dsr_service(n):
    svc = bl.service("web", n, forward="dsr")
    for i, b in enumerate(svc["backends"]):
        b["mac"] = "02:00:00:00:%02x:%02x" % (i >> 8, i & 255)
    return svc


# Full NAT's pool in the modes scenario: 8 addresses x 64512 ports, far
# more than the flows (each flow holds one (address, port)).
FNAT_POOL = {"addrs": ["198.51.100.%d" % (1 + i) for i in range(8)],
             "ports": "1024-65535"}
FNAT_TCP_DATA = 6     # data segments per connection in the TCP traffic


def fnat_service(n, proto="udp", proxy=None):
    svc = bl.service("web", n, forward="fnat")
    svc["proto"] = proto
    if proxy is not None:
        svc["proxy_protocol"] = proxy
    return svc


def fnat_lb_extra():
    return {"fnat": dict(FNAT_POOL)}


def ipip6_service(n):
    return {"name": "web6", "vip": VIP6, "port": bl.VPORT, "proto": "udp",
            "scheduler": "maglev", "forward": "ipip",
            "backends": [{"addr": "2001:db8:1::%x" % (i + 1),
                          "weight": 1 + i % 3} for i in range(n)]}


class Traffic:
    """Lazily built pcaps, flows and rule sets."""

    def __init__(self, tmp, args):
        self.tmp, self.args, self.cache = tmp, args, {}

    def get(self, name):
        if name not in self.cache:
            t0 = time.time()
            self.cache[name] = getattr(self, "_" + name)()
            print("  (traffic %s: %.1f s to make)" % (name, time.time() - t0),
                  file=sys.stderr, flush=True)
        return self.cache[name]

    def _path(self, name):
        return os.path.join(self.tmp, name + ".pcap")

    def _pass(self):
        p = self._path("pass")
        bench.write_flows_pcap(p, self.args.flows)
        return {"pcap": p, "n": self.args.flows}

    def _acl(self):
        flows = ba.make_flows(self.args.flows, False)
        p = self._path("acl")
        ba.write_pcap(p, flows)
        return {"pcap": p, "n": len(flows), "flows": flows,
                "rules": ba.make_rules(self.args.rules, flows, False)}

    def _lb(self, n=None, name="lb"):
        flows = bl.make_flows(n or self.args.flows)
        p = self._path(name)
        bl.write_bench_pcap(p, flows)
        return {"pcap": p, "n": len(flows), "flows": flows,
                "rules": ba.make_rules(self.args.rules, flows, False)}

    def _lb_big(self):
        return self._lb(self.args.big_flows, "lb_big")

    def _fnat_tcp(self):
        """TCP connections to the VIP, client side only, each opening
        with its SYN (bench_lb.write_tcp_pcap): the PROXY protocol's
        state starts at the SYN, so its header state check is on the
        measured path."""
        flows = bl.make_flows(self.args.flows)
        p = self._path("fnat_tcp")
        frames = bl.write_tcp_pcap(p, flows, FNAT_TCP_DATA)
        return {"pcap": p, "n": frames, "frames": frames, "flows": flows,
                "rules": ba.make_rules(self.args.rules, flows, False)}

    def _lb6(self):
        flows = lb_flows6(self.args.flows)
        p = self._path("lb6")
        ba.write_pcap(p, flows)
        return {"pcap": p, "n": len(flows), "flows": flows,
                "rules": rules_v6(self.args.rules, flows)}


# --------------------------------------------------------------------------
# Members: one measured run each


class Ctx:
    def __init__(self, tmp, args):
        self.tmp, self.args = tmp, args
        self.traffic = Traffic(tmp, args)
        self.acl_alg = None          # pktaccel's classify algorithm, once seen
        self.tsc_hz = None
        self.pipeline_layout = None  # the layout the daemon accepted
        self.daemon_b = args.daemon_b  # --daemon-b: side B's binary


def _mem(n):
    return max(1024, 1024 + n * 5 // 1000)


def max_frames(args, scens):
    """The most frames a pcap of scenarios @p scens holds (the
    preloaded mbufs the biggest daemon needs)."""
    n = args.flows
    if "modes" in scens:
        n = max(n, args.flows * (2 + FNAT_TCP_DATA))
    if "flows1m" in scens:
        n = max(n, args.big_flows)
    return n


def _ft(n):
    return {"size": max(1048576, 2 * n)}


def m_pa_pass(ctx):
    t = ctx.traffic.get("pass")
    with tempfile.TemporaryDirectory(prefix=ctx.args.tag + "-pass-") as d:
        return bench.bench_pktaccel(t["pcap"], t["n"], ctx.args.seconds, d)


def m_testpmd(ctx):
    t = ctx.traffic.get("pass")
    return bench.bench_testpmd(t["pcap"], t["n"], ctx.args.seconds)


def m_pa_acl1k(ctx):
    t = ctx.traffic.get("acl")
    r = ba.bench_pktaccel(ctx.tmp, t["pcap"], t["n"], t["rules"],
                          ctx.args.seconds, 1024)
    ctx.acl_alg = ctx.acl_alg or r.get("algorithm")
    return r


def _l3fwd(ctx, t):
    alg = ctx.args.l3fwd_alg
    if alg == "same":
        alg = ctx.acl_alg        # None (l3fwd's own choice) until known
    elif alg == "default":
        alg = None
    return ba.bench_l3fwd(ctx.tmp, t["pcap"], t["n"], t["rules"],
                          ctx.args.seconds, _mem(t["n"]), alg)


def m_l3fwd_acl1k(ctx):
    return _l3fwd(ctx, ctx.traffic.get("acl"))


def _lb_run(ctx, t, svc, mode="rtc", **kw):
    """The LB benchmark's daemon, rules and traffic with service svc
    (None: without a service)."""
    return bl.bench_one(ctx.tmp, t["pcap"], t["flows"], t["rules"],
                        ctx.args.seconds, _mem(t["n"]),
                        [svc] if svc is not None else [], mode,
                        _ft(len(t["flows"])), n_frames=t.get("frames"),
                        **kw)


def m_pa_lb(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb"), bl.service("web", 10))


def m_l3fwd_lb(ctx):
    return _l3fwd(ctx, ctx.traffic.get("lb"))


def m_l3fwd_lb_big(ctx):
    return _l3fwd(ctx, ctx.traffic.get("lb_big"))


def m_pa_lb_big(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb_big"), bl.service("web", 10))


# without the service: what the traffic source, the parse and the ACL
# cost alone
def m_pa_nolb(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb"), None, name="nolb")


def m_pa_nolb_big(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb_big"), None, name="nolb_big")


def m_pa_nat(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb"),
                   bl.service("web", 10, forward="nat"))


def m_pa_dsr(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb"), dsr_service(10))


# Each fnat member: (traffic, service, lb section's extra keys), apart so
# that a test can check what a member would run without running it.
FNAT_MEMBERS = {
    "pa_fnat": ("lb", lambda: fnat_service(10), fnat_lb_extra),
    "pa_fnat_tcp": ("fnat_tcp", lambda: fnat_service(10, "tcp"),
                    fnat_lb_extra),
    "pa_fnat_proxy": ("fnat_tcp", lambda: fnat_service(10, "tcp", "v2"),
                      fnat_lb_extra),
}


def fnat_member(ctx, m):
    tr, svc, extra = FNAT_MEMBERS[m]
    return ctx.traffic.get(tr), svc(), extra()


def _fnat_run(ctx, m):
    t, svc, extra = fnat_member(ctx, m)
    return _lb_run(ctx, t, svc, lb_extra=extra, name=m[3:])


def m_pa_fnat(ctx):
    return _fnat_run(ctx, "pa_fnat")


def m_pa_fnat_tcp(ctx):
    return _fnat_run(ctx, "pa_fnat_tcp")


def m_pa_fnat_proxy(ctx):
    return _fnat_run(ctx, "pa_fnat_proxy")


def m_pa_ipip6(ctx):
    return _lb_run(ctx, ctx.traffic.get("lb6"), ipip6_service(10),
                   lb_extra={"local_addr6": "2001:db8::fe"})


# Pipeline layouts: the issue's (two stage lcores, CONTRACT "One lcore may
# be named for several stages"), and the nearest one a daemon that refuses
# it runs (one lcore per stage, two per CPU).
LAYOUTS = [
    {"name": "2 stage lcores: rx+tx on CPU 0, classify+lb on CPU 1",
     "lcores": {"rx": [1], "tx": [1], "classify": [2], "lb": [2]},
     "eal": "0@0,1@0,2@1", "hops": 2, "own_cpus": True},
    {"name": "4 stage lcores: rx and tx on CPU 0, classify and lb on CPU 1 "
     "(fallback: this daemon refuses one lcore for several stages)",
     "lcores": {"rx": [1], "classify": [2], "lb": [3], "tx": [4]},
     "eal": "0@0,(1,4)@0,(2,3)@1", "hops": 3, "own_cpus": False},
]


def _pipeline_run(ctx, t, lay, name):
    """The LB benchmark in pipeline mode in layout @p lay (LAYOUTS'
    shape), its run marked with the layout."""
    r = _lb_run(ctx, t, bl.service("web", 10), mode="pipeline",
                lcores=lay["lcores"], eal_lcores=lay["eal"], name=name)
    r["layout"] = lay["name"]
    r["ring_hops"] = lay["hops"]
    # Stage lcores that time-share a CPU: one whose ring is empty
    # yields, its CPU time is mostly polls and yields, and a busy one
    # never yields (rx, fed by infinite_rx, starves the tx lcore beside
    # it): no per-packet cost can be read from their CPU time.
    r["stage_lcores_own_cpus"] = lay["own_cpus"]
    return r


def m_pa_pipeline(ctx):
    t = ctx.traffic.get("lb")
    layouts = [ctx.pipeline_layout] if ctx.pipeline_layout else LAYOUTS
    last = None
    for lay in layouts:
        try:
            r = _pipeline_run(ctx, t, lay, "pipeline")
        except (RuntimeError, AssertionError) as e:
            last = e
            with open(os.path.join(ctx.tmp, "pipeline.log"),
                      errors="replace") as f:
                log = f.read()
            if "already used by" in log and lay is LAYOUTS[0]:
                print("  (the daemon refuses one lcore for several stages: "
                      "falling back to one lcore per stage)", file=sys.stderr)
                continue
            raise
        ctx.pipeline_layout = lay
        return r
    raise last


# The automatic plan for two lcores (lib/pipeline/planner.c): one ring
# hop, classify -> lb, and the two halves of the path about even.
LAYOUT_1HOP = {"name": "2 stage lcores: rx+classify on CPU 0, lb+tx on CPU 1",
               "lcores": {"rx": [1], "classify": [1], "lb": [2], "tx": [2]},
               "eal": "0@0,1@0,2@1", "hops": 1, "own_cpus": True}


def m_pa_pipeline_1hop(ctx):
    """Pipeline mode in the automatic two-lcore plan (rx+classify, lb+tx);
    no figures where the daemon refuses one lcore for several stages."""
    t = ctx.traffic.get("lb")
    if ctx.pipeline_layout is not None and \
            ctx.pipeline_layout is not LAYOUTS[0]:
        return {"skipped": "the daemon refuses one lcore for several stages"}
    return _pipeline_run(ctx, t, LAYOUT_1HOP, "pipeline1")


def m_ring_hop_bench(ctx):
    """perf/ring_hop/bench_ring_hop (built beside the daemon): the ring hop
    alone, cross-CPU, the edge lcore on CPU 0 and the stage lcore on CPU 1
    as in the pipeline layout; the pipeline's ring flags, size and burst.
    Its "ring", "lines" and "local" variants in turn, 3 rounds of
    --seconds/6 each, medians."""
    exe = os.path.join(os.path.dirname(os.path.dirname(ba.DAEMON)), "perf",
                       "bench_ring_hop")
    if not os.access(exe, os.X_OK):
        raise RuntimeError("no %s (ninja -C build)" % exe)
    out = os.path.join(ctx.tmp, "ring_hop.json")
    p = subprocess.run([exe, "--seconds", "%g" % max(ctx.args.seconds / 6,
                                                     0.3),
                        "--rounds", "3", "--variant", "ring,lines,local",
                        "--json", out,
                        "--file-prefix", ctx.args.tag + "-ring-hop"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("bench_ring_hop: %s" %
                           (p.stderr or p.stdout).strip()[-300:])
    with open(out) as f:
        j = json.load(f)
    res = dict(j["variants"])
    res["tsc_hz"] = j["tsc_hz"]
    ring, lines, local = res["ring"], res["lines"], res["local"]
    res["ring_op_cycles"] = ring["ring_per_hop"]
    res["line_transfer_cycles"] = lines["touch_per_hop"] - \
        local["touch_per_hop"]
    res["hop_cycles"] = res["ring_op_cycles"] + res["line_transfer_cycles"]
    return res


def _lat(ctx, on):
    t = ctx.traffic.get("acl")
    r = blat.one_cost_run(ctx.tmp, t["pcap"], t["n"], t["rules"],
                          ctx.args.seconds, 1024, on)
    return r


def m_pa_lat_on(ctx):
    return _lat(ctx, True)


def m_pa_lat_off(ctx):
    return _lat(ctx, False)


MEMBERS = {
    "pa_pass": m_pa_pass, "testpmd_io": m_testpmd,
    "pa_acl1k": m_pa_acl1k, "l3fwd_acl1k": m_l3fwd_acl1k,
    "pa_lb": m_pa_lb, "l3fwd_lb": m_l3fwd_lb,
    "l3fwd_lb_big": m_l3fwd_lb_big,
    "pa_lb_big": m_pa_lb_big, "pa_nolb": m_pa_nolb,
    "pa_nolb_big": m_pa_nolb_big,
    "pa_nat": m_pa_nat, "pa_dsr": m_pa_dsr, "pa_ipip6": m_pa_ipip6,
    "pa_fnat": m_pa_fnat, "pa_fnat_tcp": m_pa_fnat_tcp,
    "pa_fnat_proxy": m_pa_fnat_proxy,
    "pa_pipeline": m_pa_pipeline, "ring_hop_bench": m_ring_hop_bench,
    "pa_pipeline_1hop": m_pa_pipeline_1hop,
    "pa_lat_on": m_pa_lat_on, "pa_lat_off": m_pa_lat_off,
}

# scenario -> the members it needs, in the order an even pair runs them
SCENARIOS = {
    "passthrough": ["pa_pass", "testpmd_io"],
    "acl1k": ["pa_acl1k", "l3fwd_acl1k"],
    "acl_lb": ["pa_lb", "l3fwd_lb"],
    "flows1m": ["pa_lb_big", "pa_lb", "l3fwd_lb", "l3fwd_lb_big",
                "pa_nolb_big", "pa_nolb"],
    "modes": ["pa_nat", "pa_dsr", "pa_ipip6", "pa_fnat", "pa_lb",
              "pa_fnat_tcp", "pa_fnat_proxy"],
    "pipeline": ["pa_pipeline", "pa_lb", "ring_hop_bench",
                 "pa_pipeline_1hop"],
    "latency": ["pa_lat_on", "pa_lat_off"],
}

# --daemon-b: each pktaccel member also runs on daemon B, as member
# NAME + B_SUFFIX, right after its A run (so just before it on odd pairs,
# whose order is reversed): both sides share the machine's phases, and
# B's figures come from the same pair_figures() over the same peer runs.
B_SUFFIX = ":b"


def with_b(members):
    """members with each pktaccel member's B twin right after it."""
    out = []
    for m in members:
        out.append(m)
        if m.startswith("pa_"):
            out.append(m + B_SUFFIX)
    return out


def run_member(ctx, m):
    """Member m's run; a B twin's on daemon B (ctx.daemon_b). What ctx
    learns from the first run is the pair's and both sides': the pipeline
    layout that daemon accepted (A's, pair 1's first) and l3fwd's
    algorithm."""
    if not m.endswith(B_SUFFIX):
        return MEMBERS[m](ctx)
    a = ba.DAEMON
    ba.DAEMON = bench.DAEMON = ctx.daemon_b
    try:
        return MEMBERS[m[:-len(B_SUFFIX)]](ctx)
    finally:
        ba.DAEMON = bench.DAEMON = a


# --------------------------------------------------------------------------
# Figures: per pair from the pair's runs, then the median over pairs.
# Each figure: unit, which way is better, the goal if it has one.


def _get(run, key):
    if run is None or "error" in run:
        return None
    return run.get(key)


def _ratio(a, b):
    return a / b if a is not None and b else None


def _hz_cp(ctx, mpps):
    return ctx.tsc_hz / (mpps * 1e6) if ctx.tsc_hz and mpps else None


def _peer_cp(ctx, run):
    """A peer's cycles/packet from its own CPU time."""
    v = _get(run, "cpu_s_per_packet")
    return v * ctx.tsc_hz if v and ctx.tsc_hz else None


def _beside(f, ctx, pa, name, peer):
    """Into f: pktaccel's run beside its peer's (called name), Mpps and
    CPU cycles per packet each, and both ratios (>1: pktaccel ahead)."""
    f["pktaccel_mpps"] = _get(pa, "mpps")
    f["pktaccel_cycles_per_packet"] = _get(pa, "cpu_cycles_per_packet")
    f[name + "_mpps"] = _get(peer, "mpps")
    f[name + "_cycles_per_packet"] = _peer_cp(ctx, peer)
    f["ratio"] = _ratio(f["pktaccel_mpps"], f[name + "_mpps"])
    f["ratio_cpu"] = _ratio(f[name + "_cycles_per_packet"],
                            f["pktaccel_cycles_per_packet"])


def pair_figures(ctx, scen, runs):
    """{figure: value} of one scenario from one pair's runs."""
    f = {}
    if scen == "passthrough":
        _beside(f, ctx, runs.get("pa_pass"), "testpmd",
                runs.get("testpmd_io"))
    elif scen in ("acl1k", "acl_lb"):
        k = "acl1k" if scen == "acl1k" else "lb"
        _beside(f, ctx, runs.get("pa_" + k), "l3fwd",
                runs.get("l3fwd_" + k))
    elif scen == "flows1m":
        big, small = runs.get("pa_lb_big"), runs.get("pa_lb")
        # the peer on the same 1M traffic (l3fwd_env() lets its pool
        # preload it); the 10k-flow peer only where that run is missing
        # (results before it existed, or it failed)
        args = getattr(ctx, "args", None)
        l3 = runs.get("l3fwd_lb_big")
        f["l3fwd_flows"] = getattr(args, "big_flows", None)
        if _get(l3, "mpps") is None:
            l3 = runs.get("l3fwd_lb")
            f["l3fwd_flows"] = getattr(args, "flows", None)
        f["pktaccel_mpps"] = _get(big, "mpps")
        f["pktaccel_cycles_per_packet"] = _get(big, "cpu_cycles_per_packet")
        f["cycles_vs_10k"] = _ratio(_get(big, "cpu_cycles_per_packet"),
                                    _get(small, "cpu_cycles_per_packet"))
        f["l3fwd_mpps"] = _get(l3, "mpps")
        f["l3fwd_cycles_per_packet"] = _peer_cp(ctx, l3)
        f["ratio"] = _ratio(_get(big, "mpps"), _get(l3, "mpps"))
        f["ratio_cpu"] = _ratio(_peer_cp(ctx, l3),
                                _get(big, "cpu_cycles_per_packet"))
        # the peer's own growth, 1M over 10k flows (the traffic source's
        # and its ACL's: what pktaccel's nolb_cycles_vs_10k measures)
        f["l3fwd_cycles_vs_10k"] = _ratio(
            _peer_cp(ctx, runs.get("l3fwd_lb_big")),
            _peer_cp(ctx, runs.get("l3fwd_lb")))
        # the same two traffics without the service: the traffic source
        # (net_pcap copying from as many stored frames as flows), the
        # parse and the ACL; the difference is the LB's own share
        nb = _get(runs.get("pa_nolb_big"), "cpu_cycles_per_packet")
        ns = _get(runs.get("pa_nolb"), "cpu_cycles_per_packet")
        f["nolb_cycles_per_packet"] = nb
        f["nolb_10k_cycles_per_packet"] = ns
        f["nolb_cycles_vs_10k"] = _ratio(nb, ns)
        lb_big = f["pktaccel_cycles_per_packet"] - nb \
            if f["pktaccel_cycles_per_packet"] is not None and \
            nb is not None else None
        c10 = _get(small, "cpu_cycles_per_packet")
        lb_small = c10 - ns if c10 is not None and ns is not None else None
        f["lb_cycles_per_packet"] = lb_big
        f["lb_10k_cycles_per_packet"] = lb_small
        f["lb_cycles_vs_10k"] = _ratio(lb_big, lb_small) \
            if lb_small is not None and lb_small > 0 else None
    elif scen == "modes":
        ipip = runs.get("pa_lb")
        for k in ("nat", "dsr", "ipip6", "fnat", "fnat_tcp", "fnat_proxy"):
            r = runs.get("pa_" + k)
            f[k + "_mpps"] = _get(r, "mpps")
            f[k + "_cycles_per_packet"] = _get(r, "cpu_cycles_per_packet")
            f[k + "_vs_ipip"] = _ratio(_get(r, "mpps"), _get(ipip, "mpps"))
            f[k + "_vs_ipip_cpu"] = _ratio(
                _get(ipip, "cpu_cycles_per_packet"),
                _get(r, "cpu_cycles_per_packet"))
        f["ipip_mpps"] = _get(ipip, "mpps")
        f["ipip_cycles_per_packet"] = _get(ipip, "cpu_cycles_per_packet")
        # the PROXY protocol's own cost: the same TCP traffic and fnat
        # service with and without proxy_protocol v2
        pr, tc = runs.get("pa_fnat_proxy"), runs.get("pa_fnat_tcp")
        f["proxy_vs_fnat_tcp"] = _ratio(_get(pr, "mpps"), _get(tc, "mpps"))
        f["proxy_vs_fnat_tcp_cpu"] = _ratio(
            _get(tc, "cpu_cycles_per_packet"),
            _get(pr, "cpu_cycles_per_packet"))
        cp, ct = _get(pr, "cpu_cycles_per_packet"), \
            _get(tc, "cpu_cycles_per_packet")
        f["proxy_cost_cycles_per_packet"] = cp - ct \
            if cp is not None and ct is not None else None
    elif scen == "pipeline":
        pl, rtc = runs.get("pa_pipeline"), runs.get("pa_lb")
        f["pipeline_tx_mpps"] = _get(pl, "tx_mpps")
        f["rtc_tx_mpps"] = _get(rtc, "tx_mpps")
        f["ratio"] = _ratio(f["pipeline_tx_mpps"], f["rtc_tx_mpps"])
        # what the ratio would be with each stage lcore on a CPU
        # of its own: rtc's cycles over those of the pipeline's busiest
        # lcore (its slowest stage) -- only where the lcores own CPUs
        f["ratio_cpu"] = _ratio(_get(rtc, "cpu_cycles_per_tx_packet"),
                                busiest_lcore_cycles(pl))
        f["ring_full_share"] = _get(pl, "ring_full_share")
        f["pipeline_cycles_per_tx_packet"] = _get(pl,
                                                  "cpu_cycles_per_tx_packet")
        f["rtc_cycles_per_tx_packet"] = _get(rtc, "cpu_cycles_per_tx_packet")
        f["pipeline_path_cycles"], f["rtc_path_cycles"], \
            f["ring_hop_cycles"] = ring_hop(pl, rtc)
        # the automatic two-lcore plan: rx+classify, lb+tx (one hop)
        p1 = runs.get("pa_pipeline_1hop")
        f["auto2_tx_mpps"] = _get(p1, "tx_mpps")
        f["auto2_cycles_per_tx_packet"] = _get(p1,
                                               "cpu_cycles_per_tx_packet")
        f["auto2_ratio"] = _ratio(f["auto2_tx_mpps"], f["rtc_tx_mpps"])
        f["auto2_ratio_cpu"] = _ratio(_get(rtc, "cpu_cycles_per_tx_packet"),
                                      busiest_lcore_cycles(p1))
        # the ring hop measured alone (perf/ring_hop/bench_ring_hop.c):
        # the ring operation and the packet's lines crossing, per hop
        rb = runs.get("ring_hop_bench")
        f["hop_alone_cycles"] = _get(rb, "hop_cycles")
        f["hop_alone_ring_op_cycles"] = _get(rb, "ring_op_cycles")
        f["hop_alone_line_transfer_cycles"] = _get(rb,
                                                   "line_transfer_cycles")
    elif scen == "latency":
        on, off = runs.get("pa_lat_on"), runs.get("pa_lat_off")
        lat = _get(on, "latency_stats") or {}
        for p in ("p50", "p90", "p99", "p999"):
            f[p + "_ns"] = lat.get(p + "_ns")
        f["on_cycles_per_packet"] = _get(on, "cpu_cycles_per_packet")
        f["off_cycles_per_packet"] = _get(off, "cpu_cycles_per_packet")
        f["stamp_cost_cycles_per_packet"] = \
            f["on_cycles_per_packet"] - f["off_cycles_per_packet"] \
            if None not in (f["on_cycles_per_packet"],
                            f["off_cycles_per_packet"]) else None
    return f


STAGES = ("rx", "classify", "lb", "tx")


def busiest_lcore_cycles(pl):
    """CPU cycles per packet sent of the pipeline's busiest stage lcore
    (which bounds its rate); None where the stage lcores share CPUs."""
    if _get(pl, "lcore_cpu_s") is None or not pl.get("stage_lcores_own_cpus"):
        return None
    tx = sum(lc["stage_packets"].get("tx", 0) for lc in pl["lcores"].values())
    if not tx:
        return None
    return max(pl["lcore_cpu_s"].values()) * pl["tsc_hz"] / tx


def ring_hop(pl, rtc):
    """The cost of a ring hop from the stage lcores' own CPU time and the
    packets each handled (stats_get lcores.*.stage_packets). Per lcore:
    its CPU cycles over the packets of the first stage it runs, weighted by
    the share of received packets that reach that stage in the rtc run
    (the ACL drops some before lb and tx); the sum along the path is what
    a packet costs in pipeline mode, ring_full drops apart (an lcore's
    cycles are divided by what it handled, not by what got through).
    Minus rtc's cycles per received packet, over the hops a packet makes.
    Returns (pipeline path cycles, rtc cycles, per hop); None where a run
    is missing."""
    if _get(pl, "lcores") is None or _get(rtc, "lcores") is None or \
            not pl.get("stage_lcores_own_cpus"):
        return None, None, None
    hz = pl["tsc_hz"]
    rs = {}
    for lc in rtc["lcores"].values():
        for st, n in lc["stage_packets"].items():
            rs[st] = rs.get(st, 0) + n
    if not rs.get("rx"):
        return None, None, None
    rtc_cpu = sum(rtc["lcore_cpu_s"].values())
    rtc_cyc = rtc_cpu * rtc["tsc_hz"] / rs["rx"]
    path = 0.0
    for lcore, lc in pl["lcores"].items():
        sp = lc["stage_packets"]
        first = next((st for st in STAGES if sp.get(st)), None)
        cpu = pl["lcore_cpu_s"].get("rte-worker-%s" % lcore)
        if first is None or cpu is None:
            continue
        path += cpu * hz / sp[first] * rs.get(first, 0) / rs["rx"]
    hops = pl.get("ring_hops")
    return path, rtc_cyc, (path - rtc_cyc) / hops if hops else None


# Figures of the peers' runs alone: the same run on both sides of an A/B,
# so not among B's figures.
PEER_FIGURES = ("testpmd_", "l3fwd_", "hop_alone_")


def b_runs(runs):
    """A pair's runs as side B has them: B's pktaccel runs in the places
    of A's, the same peer runs."""
    return {m: runs.get(m + B_SUFFIX) if m.startswith("pa_") else r
            for m, r in runs.items() if not m.endswith(B_SUFFIX)}


def _b_over_a(a, b):
    return b / a if a is not None and b is not None and a > 0 else None


def b_pair_figures(ctx, scen, runs, fa):
    """Side B's figures of one scenario from one pair's runs (A's and B's),
    the peers' own left out, and each over A's figure fa of the same pair:
    ({figure: value}, {figure: B over A})."""
    fb = {k: v for k, v in pair_figures(ctx, scen, b_runs(runs)).items()
          if not k.startswith(PEER_FIGURES)}
    return fb, {k: _b_over_a(fa.get(k), v) for k, v in fb.items()}


# unit, better ("higher"/"lower"/None), goal text
FIGURE_INFO = {
    "mpps": ("Mpps", "higher"),
    "cycles_per_packet": ("cycles/packet", "lower"),
    "cycles_per_tx_packet": ("cycles/packet", "lower"),
    "ratio": ("x", "higher"),
    "vs_ipip": ("x", "higher"),
    "vs_ipip_cpu": ("x", "higher"),
    "vs_fnat_tcp": ("x", "higher"),
    "vs_fnat_tcp_cpu": ("x", "higher"),
    "proxy_cost_cycles_per_packet": ("cycles/packet", "lower"),
    "ratio_cpu": ("x", "higher"),
    "cycles_vs_10k": ("x", "lower"),
    "_flows": ("flows", None),
    "ring_hop_cycles": ("cycles/packet", "lower"),
    "hop_alone_cycles": ("cycles/packet", "lower"),
    "_op_cycles": ("cycles/packet", "lower"),
    "transfer_cycles": ("cycles/packet", "lower"),
    "path_cycles": ("cycles/packet", "lower"),
    "ring_full_share": ("share", "lower"),
    "_ns": ("ns", "lower"),
    "stamp_cost_cycles_per_packet": ("cycles/packet", "lower"),
}

GOALS = {
    "passthrough.ratio": ">= 0.9",
    "acl1k.ratio": ">= 1.3 (moonshot; 1.0)",
    "acl_lb.ratio": ">= 0.8 (moonshot 1.0)",
    "flows1m.ratio": ">= 0.6",
    "flows1m.cycles_vs_10k": "<= 1.3",
    "modes.nat_vs_ipip": ">= 0.9",
    "modes.dsr_vs_ipip": ">= 0.9",
    "modes.ipip6_vs_ipip": ">= 0.8",
    "modes.fnat_vs_ipip": ">= 0.9",
    "pipeline.ratio": ">= 1.5",
    "pipeline.ring_hop_cycles": "<= 25",
    "pipeline.hop_alone_cycles": "<= 25",
}


def figure_info(key):
    for suffix in sorted(FIGURE_INFO, key=len, reverse=True):
        if key.endswith(suffix):
            return FIGURE_INFO[suffix]
    return ("", None)


def summarize(per_pair):
    """{scenario: [{figure: value} per pair]} -> flat {"scen.fig":
    {"value": median, "runs": [...], "unit", "better", "goal"}}."""
    out = {}
    for scen, pairs in per_pair.items():
        keys = []
        for p in pairs:
            keys += [k for k in p if k not in keys]
        for k in keys:
            vals = [p.get(k) for p in pairs]
            got = [v for v in vals if v is not None]
            name = "%s.%s" % (scen, k)
            unit, better = figure_info(k)
            out[name] = {"value": statistics.median(got) if got else None,
                         "runs": vals, "unit": unit, "better": better}
            if name in GOALS:
                out[name]["goal"] = GOALS[name]
    return out


def summarize_b(per_pair_b):
    """{scenario: [({figure: B's value}, {figure: B over A}) per pair]} ->
    summarize()'s shape for B's values, each figure with "b_over_a":
    {"value": median, "runs": [per pair]}."""
    out = summarize({s: [p[0] for p in v] for s, v in per_pair_b.items()})
    r = summarize({s: [p[1] for p in v] for s, v in per_pair_b.items()})
    for k, f in out.items():
        f["b_over_a"] = {"value": r[k]["value"], "runs": r[k]["runs"]}
    return out


def daemon_info(path):
    """What identifies a daemon binary: its path (relative to the
    repository, or .../ and its last three components outside it:
    bench_acl.shown_path), the git describe of the tree it sits in (None
    outside one: the binary's mtime, size and hash say which build it
    is), its mtime, size and sha256 (first 16)."""
    st = os.stat(path)
    g = subprocess.run(["git", "-C", os.path.dirname(path), "describe",
                        "--always", "--dirty"], capture_output=True,
                       text=True)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return {"path": ba.shown_path(path),
            "git": g.stdout.strip() if g.returncode == 0 else None,
            "mtime": datetime.datetime.fromtimestamp(
                st.st_mtime).isoformat(timespec="seconds"),
            "size": st.st_size, "sha256": h.hexdigest()[:16]}


# --------------------------------------------------------------------------
# The table


def _fmt(v, unit=""):
    if v is None:
        return "-"
    if unit == "x":
        return "%.2f" % v
    if unit == "share":
        return "%.3f" % v
    if unit == "ns":
        return "%s" % fmt_ns(v)
    if abs(v) >= 100:
        return "%.0f" % v
    return "%.2f" % v if unit == "Mpps" else "%.1f" % v


def fmt_ns(ns):
    if ns is None:
        return "-"
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.2f us" % (ns / 1e3)
    return "%.0f ns" % ns


def _spread(fig):
    got = [v for v in fig["runs"] if v is not None]
    if len(got) < 2:
        return ""
    u = fig["unit"]
    return " (%s–%s)" % (_fmt(min(got), u), _fmt(max(got), u))


def table(res):
    """The Markdown table of a result."""
    F = res["figures"]

    def v(k):
        f = F.get(k)
        return _fmt(f["value"], f["unit"]) if f else "-"

    def vr(k):
        f = F.get(k)
        return (_fmt(f["value"], f["unit"]) + _spread(f)) if f else "-"

    rows = []
    head = ("| scenario | pktaccel Mpps | CPU cycles/packet | against | "
            "its Mpps | its CPU cycles/packet | ratio, Mpps (pairs' range) | "
            "ratio, CPU cycles (pairs' range) | goal |")
    rows += [head, "|---|---|---|---|---|---|---|---|---|"]

    def row(label, mpps, cyc, peer, pmpps, pcyc, ratio, ratio_cpu):
        if ratio not in F and mpps not in F:
            return
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, v(mpps), v(cyc), peer, v(pmpps) if pmpps else "",
            v(pcyc) if pcyc else "", vr(ratio), vr(ratio_cpu),
            GOALS.get(ratio, "")))

    n = res["config"]["flows"]
    big = res["config"]["big_flows"]
    row("pass-through", "passthrough.pktaccel_mpps",
        "passthrough.pktaccel_cycles_per_packet", "testpmd io",
        "passthrough.testpmd_mpps", "passthrough.testpmd_cycles_per_packet",
        "passthrough.ratio", "passthrough.ratio_cpu")
    row("ACL %d rules" % res["config"]["rules"], "acl1k.pktaccel_mpps",
        "acl1k.pktaccel_cycles_per_packet", "l3fwd-acl",
        "acl1k.l3fwd_mpps", "acl1k.l3fwd_cycles_per_packet", "acl1k.ratio",
        "acl1k.ratio_cpu")
    row("ACL + LB ipip, %s flows" % _k(n), "acl_lb.pktaccel_mpps",
        "acl_lb.pktaccel_cycles_per_packet", "l3fwd-acl",
        "acl_lb.l3fwd_mpps", "acl_lb.l3fwd_cycles_per_packet",
        "acl_lb.ratio", "acl_lb.ratio_cpu")
    if "flows1m.l3fwd_mpps" in F:
        pf = F.get("flows1m.l3fwd_flows", {}).get("value")
        row("ACL + LB ipip, %s flows" % _k(big), "flows1m.pktaccel_mpps",
            "flows1m.pktaccel_cycles_per_packet",
            "l3fwd-acl (%s flows)" % (_k(int(pf)) if pf else "?"),
            "flows1m.l3fwd_mpps", "flows1m.l3fwd_cycles_per_packet",
            "flows1m.ratio", "flows1m.ratio_cpu")
    else:
        # results from before flows1m had a peer of its own
        row("ACL + LB ipip, %s flows" % _k(big), "flows1m.pktaccel_mpps",
            "flows1m.pktaccel_cycles_per_packet",
            "l3fwd-acl (%s flows)" % _k(n), "acl_lb.l3fwd_mpps",
            "acl_lb.l3fwd_cycles_per_packet", "flows1m.ratio",
            "flows1m.ratio_cpu")
    if "flows1m.cycles_vs_10k" in F:
        rows.append("| %s flows: CPU cycles/packet over %s flows' | | | | | "
                    "| | %s | %s |" % (
                        _k(big), _k(n), vr("flows1m.cycles_vs_10k"),
                        GOALS["flows1m.cycles_vs_10k"]))
    if "flows1m.nolb_cycles_vs_10k" in F:
        rows.append("| of which without the service (traffic source, parse, "
                    "ACL), %s flows over %s | | %s | %s flows | | %s | | %s "
                    "| |" % (
                        _k(big), _k(n), v("flows1m.nolb_cycles_per_packet"),
                        _k(n),
                        v("flows1m.nolb_10k_cycles_per_packet"),
                        vr("flows1m.nolb_cycles_vs_10k")))
    if "flows1m.lb_cycles_vs_10k" in F:
        rows.append("| of which the LB's own (with minus without the "
                    "service), %s flows over %s | | %s | %s flows | | %s | "
                    "| %s | |"
                    % (_k(big), _k(n), v("flows1m.lb_cycles_per_packet"),
                       _k(n),
                       v("flows1m.lb_10k_cycles_per_packet"),
                       vr("flows1m.lb_cycles_vs_10k")))
    if F.get("flows1m.l3fwd_cycles_vs_10k", {}).get("value") is not None:
        rows.append("| l3fwd-acl itself, %s flows over %s: CPU cycles/packet "
                    "| | | | | | | %s | |" % (
                        _k(big), _k(n), vr("flows1m.l3fwd_cycles_vs_10k")))
    for k, label in (("nat", "ACL + LB nat"), ("dsr", "ACL + LB dsr"),
                     ("ipip6", "ACL + LB IPv6-in-IPv6 (IPv6 traffic)"),
                     ("fnat", "ACL + LB fnat (full NAT, 8 pool addresses)"),
                     ("fnat_tcp", "ACL + LB fnat, TCP connections (SYN, "
                      "ACK, 6 data segments each)"),
                     ("fnat_proxy", "ACL + LB fnat + PROXY v2, the same "
                      "TCP connections")):
        row(label, "modes.%s_mpps" % k, "modes.%s_cycles_per_packet" % k,
            "IPv4 ipip", "modes.ipip_mpps", "modes.ipip_cycles_per_packet",
            "modes.%s_vs_ipip" % k, "modes.%s_vs_ipip_cpu" % k)
    if F.get("modes.proxy_vs_fnat_tcp", {}).get("value") is not None:
        row("ACL + LB fnat + PROXY v2", "modes.fnat_proxy_mpps",
            "modes.fnat_proxy_cycles_per_packet", "fnat, same TCP traffic",
            "modes.fnat_tcp_mpps", "modes.fnat_tcp_cycles_per_packet",
            "modes.proxy_vs_fnat_tcp", "modes.proxy_vs_fnat_tcp_cpu")
    if "pipeline.ratio" in F:
        rows.append("| pipeline mode, ACL + LB (packets sent) | %s | %s | rtc, "
                    "1 worker | %s | %s | %s | %s | %s |" % (
                        v("pipeline.pipeline_tx_mpps"),
                        v("pipeline.pipeline_cycles_per_tx_packet"),
                        v("pipeline.rtc_tx_mpps"),
                        v("pipeline.rtc_cycles_per_tx_packet"),
                        vr("pipeline.ratio"), vr("pipeline.ratio_cpu"),
                        GOALS["pipeline.ratio"]))
        if F.get("pipeline.auto2_ratio", {}).get("value") is not None:
            rows.append("| pipeline mode, the automatic 2-lcore plan: "
                        "rx+classify on CPU 0, lb+tx on CPU 1 (one hop) "
                        "| %s | %s | rtc, 1 worker | %s | %s | %s | %s | |"
                        % (v("pipeline.auto2_tx_mpps"),
                           v("pipeline.auto2_cycles_per_tx_packet"),
                           v("pipeline.rtc_tx_mpps"),
                           v("pipeline.rtc_cycles_per_tx_packet"),
                           vr("pipeline.auto2_ratio"),
                           vr("pipeline.auto2_ratio_cpu")))
        rows.append("| ring hop, per hop, all the split costs (the stage "
                    "lcores' CPU cycles/packet along the path: %s, rtc: %s) "
                    "| | %s | | | | | | %s |"
                    % (v("pipeline.pipeline_path_cycles"),
                       v("pipeline.rtc_path_cycles"),
                       vr("pipeline.ring_hop_cycles"),
                       GOALS["pipeline.ring_hop_cycles"]))
        if "pipeline.hop_alone_cycles" in F:
            rows.append("| ring hop, per hop, measured alone (bench_ring_hop, "
                        "CPU 0 -> CPU 1: ring operation %s + the packet's "
                        "lines crossing %s) | | %s | | | | | | %s |"
                        % (vr("pipeline.hop_alone_ring_op_cycles"),
                           vr("pipeline.hop_alone_line_transfer_cycles"),
                           vr("pipeline.hop_alone_cycles"),
                           GOALS["pipeline.hop_alone_cycles"]))
    out = "\n".join(rows) + "\n" if len(rows) > 2 else ""
    if "latency.p50_ns" in F:
        out += ("\n| latency at full load, %d rules | p50 | p90 | p99 | p99.9 "
                "| stamping cost (cycles/packet) |\n|---|---|---|---|---|---|\n"
                "| rtc, 1 worker | %s | %s | %s | %s | %s |\n" % (
                    res["config"]["rules"], v("latency.p50_ns"),
                    v("latency.p90_ns"), v("latency.p99_ns"),
                    v("latency.p999_ns"),
                    vr("latency.stamp_cost_cycles_per_packet")))
    w = res.get("wake")
    if w and "wake" in w:
        out += ("\nIdle rtc daemon (adaptive, max_sleep_us 100): %.3f of a "
                "CPU; wake-up median %s, p99 %s (%d probes)\n" % (
                    w["cpu_share"], fmt_ns(w["wake"]["median_us"] * 1e3),
                    fmt_ns(w["wake"]["p99_us"] * 1e3), w["wake"]["probes"]))
    lay = res.get("pipeline_layout")
    if lay:
        out += "\nPipeline layout: %s.\n" % lay
        if "fallback" in lay:
            out += ("The stage lcores time-share the CPUs: this measures "
                    "that sharing, not pipeline mode, and no ring-hop cost "
                    "can be read from it (see ring_hop() in perf/run.py).\n")
    if res.get("b"):
        out += "\n" + table_b(res)
    return out


def _daemon_text(d):
    if not d:
        return "?"
    path = d.get("path", "?")
    if path.startswith(ROOT + os.sep):
        path = os.path.relpath(path, ROOT)
    return "%s (%sbuilt %s, %s bytes, sha256 %s)" % (
        path, "git %s, " % d["git"] if d.get("git") else "",
        d.get("mtime", "?"), d.get("size", "?"), d.get("sha256", "?"))


def table_b(res):
    """The A/B table of a result run with --daemon-b: per figure of
    pktaccel's, A's and B's medians and B over A taken within each pair,
    its median and the pairs' range."""
    F, B = res["figures"], res["b"]
    d = res.get("daemons", {})
    rows = ["A/B (--daemon-b): each pktaccel run made on both daemons, "
            "side by side in every pair; B over A taken within each pair, "
            "then the median (pairs' range).",
            "",
            "- A: " + _daemon_text(d.get("a")),
            "- B: " + _daemon_text(d.get("b")),
            "",
            "B over A > 1 is B ahead for Mpps and the ratios; < 1 is B "
            "cheaper for cycles/packet (and ns, share).",
            "",
            "| figure | unit | A | B | B over A (pairs' range) | B ahead "
            "when |",
            "|---|---|---|---|---|---|"]
    for k, f in B.items():
        r = f.get("b_over_a") or {}
        got = [x for x in r.get("runs", []) if x is not None]
        ratio = "-" if r.get("value") is None else "%.3f" % r["value"]
        if len(got) >= 2:
            ratio += " (%.3f–%.3f)" % (min(got), max(got))
        a = F.get(k)
        rows.append("| %s | %s | %s | %s | %s | %s |" % (
            k, f["unit"], _fmt(a["value"], a["unit"]) if a else "-",
            _fmt(f["value"], f["unit"]), ratio,
            {"higher": "> 1", "lower": "< 1"}.get(f["better"], "")))
    return "\n".join(rows) + "\n"


def _k(n):
    if n >= 1000000 and n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    if n >= 1000 and n % 1000 == 0:
        return "%dk" % (n // 1000)
    return str(n)


# --------------------------------------------------------------------------
# --compare


def compare(old, new):
    """Lines: each figure of either result, old, new, change (absolute
    and %), and whether that is better or worse."""
    fo, fn = old.get("figures", {}), new.get("figures", {})
    keys = [k for k in fn] + [k for k in fo if k not in fn]
    lines = []
    co, cn = old.get("config", {}), new.get("config", {})
    # results from before 2026-12-02 11:20 have no "memory": all --no-huge
    co = dict(co, memory=co.get("memory", "--no-huge"))
    cn = dict(cn, memory=cn.get("memory", "--no-huge"))
    diff = ["%s %s -> %s" % (k, co.get(k), cn.get(k))
            for k in ("memory", "flows", "big_flows", "rules", "seconds",
                      "pairs", "l3fwd_alg") if co.get(k) != cn.get(k)]
    if diff:
        lines.append("(not the same settings: %s)" % ", ".join(diff))
    for tag, r in (("old", old), ("new", new)):
        lines.append("%s: %s, git %s, load %s" % (
            tag, r.get("date", "?"), r.get("git", "?"),
            "%.1f" % r["loadavg_start"][0] if r.get("loadavg_start")
            else "?"))
    for tag, r in (("old", old), ("new", new)):
        if r.get("b"):
            lines.append("(%s was run with --daemon-b: these are its A "
                         "figures; --show gives its B over A)" % tag)
    lines.append("%-44s %12s %12s  %s" % ("figure", "old", "new", "change"))
    for k in keys:
        a = fo.get(k, {}).get("value")
        b = fn.get(k, {}).get("value")
        info = fn.get(k) or fo.get(k)
        unit = info.get("unit", "")
        if a is None or b is None:
            what = "only in the new result" if a is None and b is not None \
                else "only in the old result" if b is None and a is not None \
                else "no value"
            lines.append("%-44s %12s %12s  %s" % (
                k, _num(a), _num(b), what))
            continue
        d = b - a
        pct = "%+.1f%%" % (100.0 * d / a) if a else "n/a"
        verdict = ""
        if d and info.get("better") in ("higher", "lower"):
            good = (d > 0) == (info["better"] == "higher")
            verdict = " better" if good else " worse"
        lines.append("%-44s %12s %12s  %s %s (%s)%s" % (
            k, _num(a), _num(b), "%+.4g" % d, unit, pct, verdict))
    return "\n".join(lines)


def _num(v):
    return "-" if v is None else "%.4g" % v


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("run.py: cannot read %s: %s" % (path, e))


# --------------------------------------------------------------------------


def machine():
    model = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu_model": model, "cpus": os.cpu_count(),
            "kernel": os.uname().release}


def wake_once(ctx):
    """bench_latency's idle and wake-up run, once: rtc, adaptive
    (max_sleep_us 100, the default), on veths in a private namespace."""
    blat.NETNS_PREFIX = ctx.args.tag
    ns = blat.make_netns()
    try:
        return blat.idle_run(ctx.tmp, ns, "rtc",
                             {"mode": "adaptive", "max_sleep_us": 100},
                             ctx.args.idle_seconds, ctx.args.probes, 20)
    finally:
        blat.sh("ip", "netns", "del", ns)


class HugePages:
    """2 MB huge pages for --huge: enough for the biggest run's -m (one
    process runs at a time) reserved on every NUMA node and mounted in a
    directory of the run's own, then released and unmounted."""

    SCRIPT = os.path.join(ROOT, "scripts", "setup-hugepages.sh")
    NR = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

    def __init__(self, tag, mem_mb):
        self.pages = mem_mb // 2 + 128
        self.mount = os.path.join(tempfile.gettempdir(), tag + "-huge")

    def unavailable(self):
        """Why huge pages cannot be had here (None: they can be tried)."""
        if os.geteuid() != 0:
            return "not root (reserving huge pages needs it)"
        try:
            with open(self.NR) as f:
                have = int(f.read())
        except OSError:
            return "this kernel offers no 2 MB pages"
        if have:
            return ("%d huge pages are reserved already (someone else's?): "
                    "release them first (scripts/setup-hugepages.sh --clear)"
                    % have)
        return None

    def reserve(self):
        """Reserve and mount; None when done, else why not (nothing left
        reserved or mounted)."""
        why = self.unavailable()
        if why:
            return why
        os.makedirs(self.mount, exist_ok=True)
        r = subprocess.run([self.SCRIPT, "--pages", str(self.pages),
                            "--mount", self.mount], capture_output=True,
                           text=True)
        with open(self.NR) as f:
            got = int(f.read())
        if r.returncode != 0 or got < self.pages:
            self.release()
            return "could not reserve %d pages (got %d): %s" % (
                self.pages, got, r.stderr.strip())
        ba.HUGE_DIR = self.mount
        print("run.py: %d huge pages of 2 MB at %s" % (self.pages, self.mount),
              flush=True)
        return None

    def release(self):
        ba.HUGE_DIR = None
        subprocess.run([self.SCRIPT, "--clear", "--mount", self.mount],
                       capture_output=True)
        try:
            os.rmdir(self.mount)
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3,
                    help="interleaved pairs (medians over them; default 3)")
    ap.add_argument("--seconds", type=float, default=5,
                    help="measuring window of each run (default 5)")
    ap.add_argument("--warmup", type=float, default=2,
                    help="seconds of traffic before a window (default 2)")
    ap.add_argument("--only", default=None,
                    help="scenarios, comma-separated: " + ",".join(SCENARIOS))
    ap.add_argument("--quick", action="store_true",
                    help="a short run: 1 pair, 2 s windows, 1 s warm-up, "
                    "100k flows for flows1m, no wake-up run")
    ap.add_argument("--flows", type=int, default=10000,
                    help="flows of every scenario but flows1m (10000)")
    ap.add_argument("--big-flows", type=int, default=1000000,
                    help="flows of flows1m (1000000)")
    ap.add_argument("--rules", type=int, default=1000,
                    help="ACL rules of every scenario but passthrough (1000)")
    ap.add_argument("--l3fwd-alg", default="same",
                    help="l3fwd-acl's classify algorithm: same (pktaccel's), "
                    "default (l3fwd's own) or a name")
    ap.add_argument("--idle-seconds", type=int, default=10,
                    help="wake-up run: idle CPU measured over (10)")
    ap.add_argument("--probes", type=int, default=200,
                    help="wake-up run: frames sent 20 ms apart (200)")
    ap.add_argument("--no-wake", action="store_true",
                    help="leave out the wake-up run of the latency scenario")
    ap.add_argument("--daemon", default=ba.DAEMON,
                    help="pktaccel binary (default build/app/pktaccel); "
                    "side A with --daemon-b")
    ap.add_argument("--daemon-b", metavar="PATH", default=None,
                    help="A/B: a second pktaccel binary, side B; every "
                    "pktaccel run is made on both, side by side in each "
                    "pair (twice their time), and the table adds B and B "
                    "over A per figure. For every hot-path change: main "
                    "as A, the change (e.g. build-new/app/pktaccel) as B")
    ap.add_argument("--tag", default="pa-perf",
                    help="prefix of temporary directories, l3fwd's EAL file "
                    "prefix and network namespaces")
    ap.add_argument("--note", default="",
                    help="free text kept in the JSON (e.g. 'shared machine')")
    ap.add_argument("--out", default=None,
                    help="path of the results without extension (default "
                    "perf/results/run-<date>-<time>): .json and .md")
    ap.add_argument("--memory", choices=("auto", "huge", "no-huge"),
                    default="auto",
                    help="auto (default): 2 MB huge pages for every process, "
                    "the peers too (production's memory layout), when run.py "
                    "can reserve them (root, 2 MB pages offered, none "
                    "reserved already), else --no-huge, saying why; huge: "
                    "huge pages or stop; no-huge: --no-huge memory. run.py "
                    "reserves and mounts the pages with "
                    "scripts/setup-hugepages.sh and releases them after; "
                    "bench_ring_hop stays on --no-huge")
    ap.add_argument("--huge", dest="memory", action="store_const",
                    const="huge", help="--memory huge")
    ap.add_argument("--no-huge", dest="memory", action="store_const",
                    const="no-huge", help="--memory no-huge")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--compare", metavar="OLD.json",
                    help="print the change of every figure against OLD.json")
    ap.add_argument("--new", metavar="NEW.json",
                    help="with --compare: compare NEW.json, run nothing")
    ap.add_argument("--show", metavar="RESULT.json",
                    help="print the table of a saved result, run nothing")
    args = ap.parse_args()

    if args.show:
        print(table(load_json(args.show)), end="")
        return 0

    if args.new:
        if not args.compare:
            ap.error("--new goes with --compare")
        print(compare(load_json(args.compare), load_json(args.new)))
        return 0
    old = load_json(args.compare) if args.compare else None
    if args.quick:
        args.pairs, args.seconds, args.warmup = 1, 2, 1
        args.big_flows = min(args.big_flows, 100000)
        args.no_wake = True
    scens = list(SCENARIOS) if not args.only else \
        [s for s in args.only.split(",") if s]
    bad = [s for s in scens if s not in SCENARIOS]
    if bad:
        ap.error("unknown scenario %s (known: %s)" % (
            ",".join(bad), ",".join(SCENARIOS)))
    if args.pairs < 1 or args.seconds <= 0:
        ap.error("--pairs >= 1 and --seconds > 0")
    ba.DAEMON = os.path.abspath(args.daemon)
    if not os.access(ba.DAEMON, os.X_OK):
        sys.exit("run.py: build the daemon first: meson setup build && "
                 "ninja -C build (no %s)" % ba.DAEMON)
    bench.DAEMON = ba.DAEMON
    if args.daemon_b:
        args.daemon_b = os.path.abspath(args.daemon_b)
        if not os.access(args.daemon_b, os.X_OK):
            sys.exit("run.py: --daemon-b: no executable %s" % args.daemon_b)
    ba.WARMUP_S = args.warmup
    ba.L3FWD_PREFIX = args.tag + "-l3fwd"
    members = []
    for s in scens:
        members += [m for m in SCENARIOS[s] if m not in members]
    if any(m.startswith("l3fwd") for m in members) and \
            not ba.l3fwd_ready():
        r = subprocess.run(["sh", ba.L3FWD_BUILD], stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.exit("run.py: perf/l3fwd/build.sh failed (l3fwd-acl is the "
                     "peer of acl1k, acl_lb and flows1m)")

    huge, why = None, "--no-huge asked for"
    if args.memory != "no-huge":
        huge = HugePages(args.tag, _mem(max_frames(args, scens)))
        why = huge.reserve()
        if why:
            huge = None
            if args.memory == "huge":
                sys.exit("run.py: --huge: " + why)
            print("run.py: on --no-huge memory: " + why, flush=True)
    try:
        return run_all(args, scens, members, old, huge, why)
    finally:
        if huge is not None:
            huge.release()


def run_all(args, scens, members, old, huge, why):
    head = subprocess.run(["git", "-C", ROOT, "describe", "--always",
                           "--dirty"], capture_output=True, text=True)
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "git": head.stdout.strip(), "machine": machine(),
           "note": args.note,
           "config": {"pairs": args.pairs, "seconds": args.seconds,
                      "warmup_s": args.warmup, "flows": args.flows,
                      "big_flows": args.big_flows, "rules": args.rules,
                      "l3fwd_alg": args.l3fwd_alg, "scenarios": scens,
                      "quick": args.quick,
                      "memory": "2M huge pages" if huge else "--no-huge",
                      "memory_why": None if huge else why},
           "loadavg_start": os.getloadavg(), "runs": [], "failures": []}
    if args.daemon_b:
        res["daemons"] = {"a": daemon_info(ba.DAEMON),
                          "b": daemon_info(args.daemon_b)}
        members = with_b(members)
    per_pair = {s: [] for s in scens}
    per_pair_b = {s: [] for s in scens}
    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix=args.tag + "-run-") as tmp:
        ctx = Ctx(tmp, args)
        for k in range(args.pairs):
            order = members if k % 2 == 0 else members[::-1]
            runs = {}
            for m in order:
                t0 = time.time()
                load = os.getloadavg()[0]
                try:
                    r = run_member(ctx, m)
                except Exception as e:   # noqa: BLE001 - reported, kept
                    msg = "%s: %s" % (type(e).__name__, e)
                    print("run.py: pair %d, run %s FAILED: %s" % (k + 1, m, msg),
                          file=sys.stderr, flush=True)
                    traceback.print_exc(file=sys.stderr)
                    r = {"error": msg}
                    res["failures"].append({"pair": k + 1, "run": m,
                                            "error": msg})
                r.update({"member": m, "pair": k + 1,
                          "loadavg_1m": load,
                          "wall_s": round(time.time() - t0, 1)})
                if r.get("tsc_hz"):
                    ctx.tsc_hz = ctx.tsc_hz or r["tsc_hz"]
                runs[m] = r
                res["runs"].append(r)
                if "error" not in r and "hop_cycles" in r:
                    print("pair %d %-12s hop %.1f c/p (ring %.1f + lines %.1f)"
                          "  load %.1f" % (k + 1, m, r["hop_cycles"],
                                           r["ring_op_cycles"],
                                           r["line_transfer_cycles"], load),
                          flush=True)
                elif "error" not in r:
                    print("pair %d %-12s %7.2f Mpps  %s c/p (CPU)  load %.1f"
                          % (k + 1, m, r.get("mpps") or 0,
                             "%.0f" % r["cpu_cycles_per_packet"]
                             if r.get("cpu_cycles_per_packet") else "-",
                             load), flush=True)
            for s in scens:
                per_pair[s].append(pair_figures(ctx, s, runs))
                if args.daemon_b:
                    per_pair_b[s].append(b_pair_figures(ctx, s, runs,
                                                        per_pair[s][-1]))
        if "latency" in scens and not args.no_wake:
            if os.geteuid() != 0:
                print("run.py: wake-up run left out (needs root for ip netns)",
                      file=sys.stderr)
            else:
                try:
                    res["wake"] = wake_once(ctx)
                except Exception as e:  # noqa: BLE001
                    msg = "%s: %s" % (type(e).__name__, e)
                    print("run.py: wake-up run FAILED: %s" % msg,
                          file=sys.stderr)
                    res["failures"].append({"run": "wake", "error": msg})
        res["tsc_hz"] = ctx.tsc_hz
        res["machine"]["tsc_hz"] = ctx.tsc_hz
        if ctx.pipeline_layout:
            res["pipeline_layout"] = ctx.pipeline_layout["name"]
    res["loadavg_end"] = os.getloadavg()
    res["wall_s"] = round(time.time() - t_start)
    res["figures"] = summarize(per_pair)
    if args.daemon_b:
        res["b"] = summarize_b(per_pair_b)
    text = table(res)
    print()
    print(text)
    if not args.no_save:
        base = args.out or os.path.join(
            HERE, "results", "run-%s" %
            datetime.datetime.now().strftime("%Y-%m-%d-%H%M"))
        with open(base + ".json", "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        with open(base + ".md", "w") as f:
            f.write("%s, %s, %s, git %s, %s CPUs (%s), TSC %.2f GHz, load "
                    "%.1f -> %.1f%s\n\n" % (
                        res["date"], "quick" if args.quick else
                        "%d pairs of %g s" % (args.pairs, args.seconds),
                        res["config"]["memory"] + (
                            " (%s)" % why if why and huge is None and
                            args.memory == "auto" else ""),
                        res["git"], res["machine"]["cpus"],
                        res["machine"]["cpu_model"],
                        (ctx.tsc_hz or 0) / 1e9, res["loadavg_start"][0],
                        res["loadavg_end"][0],
                        ", " + args.note if args.note else ""))
            f.write(text)
        print("saved %s.json and .md" % os.path.relpath(base, ROOT))
    if old is not None:
        print()
        print(compare(old, res))
    if res["failures"]:
        print("run.py: %d run(s) failed: %s" % (
            len(res["failures"]), "; ".join(
                "%s (pair %s): %s" % (f["run"], f.get("pair", "-"), f["error"])
                for f in res["failures"])), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
