#!/usr/bin/python3
"""Effective blocked time of runtime changes (CSIT's measure of
reconfiguration): packets lost while a change is made under steady
traffic, divided by the offered rate, in seconds of traffic lost.

The lab: two network namespaces, TAGs (source and sink) and TAGa (the
appliance), joined by two veth pairs, TAGs0-TAGa0 and TAGs1-TAGa1.
pktaccel runs in TAGa in live mode on net_af_packet, the two ports
transparent and each other's peer (a bump in the wire), rtc mode, one
worker lcore. tcpreplay in TAGs sends a fixed pcap on TAGs0 at a fixed
rate (--pps) for an exact packet count (--limit): half UDP to the
service in use (192.0.2.10:5000, Maglev, ipip, 4 backends, 64 flows),
half UDP transit (to 198.51.100.0/24, forwarded unchanged).

Counting is exact and the daemon's own counters play no part in it:
  sent     = TAGs0's tx_packets delta (the kernel's counter of the veth)
  received = TAGs0's + TAGs1's rx_packets delta (every frame the
             appliance sent, whichever port it left by)
  lost     = sent - received - expected drops
Nothing else moves on those interfaces: transparent ports send nothing of
their own and IPv6 is off on all four ends (no ND, no MLD). Every change
below is chosen so that the traffic should pass (expected drops 0): an
ACL rule or a blocklist that would drop the traffic by design would have
to be accounted for apart, and none is used here.

One measurement: counters read, tcpreplay started, the change made at a
third of the window (its RPC timed), tcpreplay waited for, a short
settle, counters read again. `none` is the baseline (no change): it
shows that the method itself loses nothing at the chosen rate.

Full rate on this machine: the rate the appliance sustains with 0 loss
for the baseline over the window (--rate; default 200,000 packets/s, the
source and the control thread sharing CPU 0, the worker alone on CPU 1).

Root needed. Writes perf/results/blocked-<date>.json (or --out) and
prints a table; with --json, one JSON line on stdout at the end.

Usage: /usr/bin/python3 perf/blocked_time.py [--rate 100000]
           [--seconds 3] [--repeat 3] [--kinds a,b,...] [--rules 10000]
           [--prefixes 1000000] [--tag blk] [--build build] [--out FILE]
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tools", "pylib"))
from pktaccel import RpcError  # noqa: E402
from pktaccel.daemon import Daemon, unique, write_json  # noqa: E402

VIP = "192.0.2.10"
VPORT = 5000
BACKENDS = ["10.1.0.%d" % i for i in range(1, 5)]
FLOWS = 64
GW_MAC = "02:00:00:00:00:fe"
# the AF_PACKET RX ring, in frames: the NIC's RX descriptors of this lab
FRAMECNT = 4096

NS_S = NS_A = None
IF = {}


def sh(*args, check=True, timeout=120):
    r = subprocess.run(list(args), capture_output=True, timeout=timeout)
    if check and r.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(args), r.stderr.decode()))
    return r


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def names(tag):
    global NS_S, NS_A
    NS_S, NS_A = tag + "s", tag + "a"
    for k in ("s0", "s1", "a0", "a1"):
        IF[k] = tag + k


def down():
    for ns in (NS_S, NS_A):
        sh("ip", "netns", "del", ns, check=False)


def up():
    down()
    for ns in (NS_S, NS_A):
        sh("ip", "netns", "add", ns)
        nsx(ns, "ip", "link", "set", "lo", "up")
    for i in ("0", "1"):
        s, a = IF["s" + i], IF["a" + i]
        sh("ip", "-n", NS_S, "link", "add", s, "type", "veth", "peer",
           "name", a, "netns", NS_A)
        for ns, x in ((NS_S, s), (NS_A, a)):
            nsx(ns, "sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % x)
            nsx(ns, "ethtool", "-K", x, "rx", "off", "tx", "off",
                check=False)
            nsx(ns, "ip", "link", "set", x, "up")


def counter(ns, ifname, what):
    r = nsx(ns, "cat", "/sys/class/net/%s/statistics/%s" % (ifname, what))
    return int(r.stdout)


def counters():
    return {"sent": counter(NS_S, IF["s0"], "tx_packets"),
            "rx0": counter(NS_S, IF["s0"], "rx_packets"),
            "rx1": counter(NS_S, IF["s1"], "rx_packets")}


def make_pcap(path):
    from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402
    pkts = []
    for i in range(FLOWS):
        src = "10.0.%d.%d" % (i // 200, 1 + i % 200)
        e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        pkts.append(e / IP(src=src, dst=VIP) /
                    UDP(sport=10000 + i, dport=VPORT) / Raw(b"x" * 18))
        pkts.append(e / IP(src=src, dst="198.51.100.%d" % (1 + i % 250)) /
                    UDP(sport=10000 + i, dport=7000) / Raw(b"x" * 18))
    wrpcap(path, pkts)
    return len(pkts)


def used_service():
    return {"name": "used", "vip": VIP, "port": VPORT, "proto": "udp",
            "scheduler": "maglev", "forward": "ipip",
            "backends": [{"addr": b} for b in BACKENDS]}


def config():
    ports = [{"name": "p%s" % i,
              "devargs": "net_af_packet%s,iface=%s,framecnt=%d" % (
                  i, IF["a" + i], FRAMECNT),
              "peer": "p%s" % ("1" if i == "0" else "0"),
              "gateway_mac": GW_MAC} for i in ("0", "1")]
    return {"ports": ports,
            "pipeline": {"mode": "rtc"},
            "acl": {"default": "permit", "rules": [
                {"id": 1, "priority": 10, "src": "any",
                 "dst": "203.0.113.0/24", "proto": "udp", "action": "drop"}]},
            "lb": {"local_addr": "192.0.2.254", "services": [
                used_service(),
                {"name": "other", "vip": "192.0.2.20", "port": 80,
                 "proto": "tcp", "backends": [{"addr": "10.2.0.1"},
                                              {"addr": "10.2.0.2"}]}]},
            "metrics": None}


def rules10k(n, base):
    # drop rules on destinations the traffic never uses (100.64.0.0/10)
    return [{"id": base + i, "priority": 100,
             "src": "any", "dst": "100.%d.%d.%d/32" % (
                 64 + i // 65536, (i // 256) % 256, i % 256),
             "proto": "udp", "action": "drop"} for i in range(n)]


def blocklist_file(path, n):
    # n /32 sources from 20.0.0.0 up: none is a source of the traffic
    with open(path, "w") as f:
        base = 20 << 24
        for i in range(n):
            a = base + i
            f.write("%d.%d.%d.%d\n" % (a >> 24, (a >> 16) & 255,
                                       (a >> 8) & 255, a & 255))
    return path


EXTRA = {"name": "extra", "vip": "192.0.2.30", "port": 80, "proto": "tcp",
         "backends": [{"addr": "10.3.0.1"}]}
NEW_BE = "10.1.0.9"


def quiet(call, method, params):
    """A call whose refusal is fine (making sure of a state before a
    window: adding what may be there, deleting what may be gone)."""
    try:
        call(method, params)
    except RpcError:
        pass


def be(addr, **kw):
    return dict({"service": "used", "addr": addr}, **kw)


# Each kind: (name, what the traffic should see, before, change). before
# (outside the window, not measured) makes the state the change needs, so
# that any subset of kinds runs in any order and repeats.
def kinds(a, work):
    st = {"bl": None, "rule": 500}

    # the inputs of the big changes made outside the window: the RPC's
    # time is the daemon's, not that of writing them
    def bl_file(call):
        if st["bl"] is None:
            st["bl"] = blocklist_file(os.path.join(work, "bl.txt"),
                                      a.prefixes)

    def rules_made(call):
        if "rules" not in st:
            st["rules"] = {"rules": rules10k(a.rules, 1000)}

    def rule_add(call):
        st["rule"] += 1
        return call("acl_rule_add", {
            "id": st["rule"], "priority": 50,
            "dst": "203.0.114.%d/32" % (st["rule"] % 256),
            "proto": "udp", "action": "drop"})

    def rule_there(call):
        rules = call("acl_rule_list", {})
        if not any(r["id"] == st["rule"] for r in rules):
            rule_add(call)

    def stall(call):
        os.kill(a.pid, signal.SIGSTOP)
        try:
            time.sleep(a.stall)
        finally:
            os.kill(a.pid, signal.SIGCONT)

    def used_there(call):
        quiet(call, "lb_service_add", used_service())

    def new_be_there(call):
        used_there(call)
        quiet(call, "lb_backend_add", be(NEW_BE))

    def new_be_gone(call):
        used_there(call)
        quiet(call, "lb_backend_delete", be(NEW_BE))

    def first_there(call):
        used_there(call)
        quiet(call, "lb_backend_add", be(BACKENDS[0]))

    def nothing(call):
        pass

    k = [
        ("none", "no change (the baseline)", nothing, nothing),
        ("acl_rule_add", "one drop rule the traffic does not match",
         nothing, rule_add),
        ("acl_rule_delete", "that rule deleted", rule_there,
         lambda call: call("acl_rule_delete", {"id": st["rule"]})),
        ("acl_rules_replace", "%d rules the traffic does not match"
         % a.rules, rules_made,
         lambda call: call("acl_rules_replace", st["rules"])),
        ("lb_service_add", "a service the traffic does not use",
         lambda call: quiet(call, "lb_service_delete", {"name": "extra"}),
         lambda call: call("lb_service_add", EXTRA)),
        ("lb_service_delete", "that service deleted",
         lambda call: quiet(call, "lb_service_add", EXTRA),
         lambda call: call("lb_service_delete", {"name": "extra"})),
        ("lb_service_delete_used", "the service the traffic uses "
         "deleted: its packets are forwarded unchanged from then on",
         used_there,
         lambda call: call("lb_service_delete", {"name": "used"})),
        ("lb_service_add_used", "the service added again: its packets "
         "are load-balanced again",
         lambda call: quiet(call, "lb_service_delete", {"name": "used"}),
         lambda call: call("lb_service_add", used_service())),
        ("lb_backend_add", "a fifth backend of the service in use",
         new_be_gone, lambda call: call("lb_backend_add", be(NEW_BE))),
        ("lb_backend_set_weight", "the fifth backend's weight set to 3",
         new_be_there,
         lambda call: call("lb_backend_set", be(NEW_BE, weight=3))),
        ("lb_backend_delete_unused", "the fifth backend (no flows) "
         "deleted", new_be_there,
         lambda call: call("lb_backend_delete", be(NEW_BE))),
        ("lb_backend_set_drain", "a backend with flows drained",
         first_there,
         lambda call: call("lb_backend_set", be(BACKENDS[0],
                                                state="drain"))),
        ("lb_backend_set_up", "that backend up again", first_there,
         lambda call: call("lb_backend_set", be(BACKENDS[0], state="up"))),
        ("lb_backend_set_down", "a backend with flows set down (what a "
         "failing health check does to the table: its flows move)",
         used_there,
         lambda call: call("lb_backend_set", be(BACKENDS[1],
                                                state="down"))),
        ("lb_backend_set_up_again", "that backend up again", used_there,
         lambda call: call("lb_backend_set", be(BACKENDS[1], state="up"))),
        ("lb_backend_delete", "a backend with flows deleted (its flows "
         "move to the others)", first_there,
         lambda call: call("lb_backend_delete", be(BACKENDS[0]))),
        ("lb_backend_add_back", "that backend added back",
         lambda call: (used_there(call), quiet(
             call, "lb_backend_delete", be(BACKENDS[0]))),
         lambda call: call("lb_backend_add", be(BACKENDS[0]))),
        ("blocklist_replace", "%d prefixes the sources are not in"
         % a.prefixes, bl_file,
         lambda call: call("blocklist_replace", {"path": st["bl"]})),
    ]
    if a.control:
        k.append(("stall_control", "negative control: the daemon stopped "
                  "(SIGSTOP) for %g s, the method must see it" % a.stall,
                  nothing, stall))
    return k


def lb_packets(st):
    """Packets the LB balanced (all services), from stats_get."""
    lb = st.get("lb", {})
    for k in ("packets", "balanced", "forwarded"):
        if isinstance(lb.get(k), int):
            return lb[k]
    return 0


def measure(d, cli, pcap, npkts, a, change):
    count = int(a.rate * a.seconds)
    c0 = counters()
    s0 = d.call("stats_get")
    t0 = time.monotonic()
    p = subprocess.Popen(["ip", "netns", "exec", NS_S, "tcpreplay",
                          "-q", "-i", IF["s0"], "--pps=%d" % a.rate,
                          "--pps-multi=%d" % a.pps_multi,
                          "--loop=0", "--limit=%d" % count, pcap],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the change at a third of the window: traffic before and after it
    time.sleep(a.seconds / 3)
    t = time.monotonic()
    res = change(cli)
    rpc_ms = (time.monotonic() - t) * 1000
    out, err = p.communicate(timeout=a.seconds * 10 + 60)
    if p.returncode != 0:
        raise SystemExit("tcpreplay: %s" % err.decode())
    window = time.monotonic() - t0
    time.sleep(0.5)  # what is in flight comes out
    c1 = counters()
    s1 = d.call("stats_get")
    sent = c1["sent"] - c0["sent"]
    received = (c1["rx0"] - c0["rx0"]) + (c1["rx1"] - c0["rx1"])
    lost = sent - received
    drops = {k: v - s0["drops"].get(k, 0)
             for k, v in s1["drops"].items() if v - s0["drops"].get(k, 0)}
    ports = lambda s, k: sum(v[k] for v in s["ports"].values())  # noqa
    missed = sum(v["rx_missed"] - s0["ports"][n]["rx_missed"]
                 for n, v in s1["ports"].items())
    return {"sent": sent, "received": received, "expected_drops": 0,
            "lost": lost, "blocked_s": lost / a.rate,
            "rpc_ms": round(rpc_ms, 1),
            # the rate achieved: tcpreplay's window against --rate
            "window_s": round(window, 3),
            "daemon_rx": ports(s1, "rx_packets") - ports(s0, "rx_packets"),
            "daemon_tx": ports(s1, "tx_packets") - ports(s0, "tx_packets"),
            "lb_packets": lb_packets(s1) - lb_packets(s0),
            "tcpreplay_sent": count,
            "daemon_drops": drops, "daemon_rx_missed": missed,
            "result": res if not isinstance(res, (list, dict))
            or len(json.dumps(res)) < 200 else "..."}


def table(out):
    lines = ["| change | runs | sent (per run) | lost (each run) | "
             "blocked time (max) | RPC ms (median) |",
             "|---|---|---|---|---|---|"]
    for k in out["kinds"]:
        runs = k["runs"]
        ms = sorted(r["rpc_ms"] for r in runs)
        lines.append("| `%s` | %d | %d | %s | %.6f s | %.1f |" % (
            k["kind"], len(runs), runs[0]["sent"],
            ", ".join(str(r["lost"]) for r in runs),
            max(r["blocked_s"] for r in runs), ms[len(ms) // 2]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=200000,
                    help="offered rate, packets/s")
    ap.add_argument("--pps-multi", type=int, default=100,
                    help="tcpreplay's packets per timing step")
    ap.add_argument("--seconds", type=float, default=3,
                    help="the window of one measurement")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kinds", default="",
                    help="comma-separated subset (default: all)")
    ap.add_argument("--rules", type=int, default=10000)
    ap.add_argument("--prefixes", type=int, default=1000000)
    ap.add_argument("--control", action="store_true",
                    help="add the negative control: the daemon stopped "
                    "for --stall seconds in a window (it must lose)")
    ap.add_argument("--stall", type=float, default=0.2)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--tag", default="blk",
                    help="prefix of the namespaces and interfaces "
                    "(<= 8 characters)")
    ap.add_argument("--out", default="")
    ap.add_argument("--json", action="store_true",
                    help="one JSON line of the results on stdout at the end")
    a = ap.parse_args()
    if not 0 < len(a.tag) <= 8:
        raise SystemExit("--tag: 1 to 8 characters")
    if os.geteuid() != 0:
        raise SystemExit("root needed (network namespaces)")
    names(a.tag)
    work = unique(a.tag + "-blocked")
    os.makedirs(work, exist_ok=True)
    pcap = os.path.join(work, "traffic.pcap")
    npkts = make_pcap(pcap)
    up()
    conf = write_json(os.path.join(work, "conf.json"), config())
    sock = os.path.join(work, "pa.sock")
    d = Daemon(["ip", "netns", "exec", NS_A,
                os.path.join(a.build, "app", "pktaccel"), "--no-huge",
                "--no-shconf", "--no-pci", "-m", "512", "-l", "0,1", "--",
                "-c", conf, "-s", sock], sock, work, "blocked")
    want = [x for x in a.kinds.split(",") if x]
    out = {"date": datetime.date.today().isoformat(),
           "rate_pps": a.rate, "seconds": a.seconds, "repeat": a.repeat,
           "rules": a.rules, "prefixes": a.prefixes,
           "cpus": os.cpu_count(),
           "load_start": [round(x, 1) for x in os.getloadavg()],
           "kinds": []}
    try:
        d.wait_ready(120)
        a.pid = d.proc.pid  # "ip netns exec" execs the daemon
        cli = d.client(timeout=120)

        def call(method, params=None):
            return cli.call(method, params or {})
        ks = kinds(a, work)
        names_all = [k[0] for k in ks]
        for w in want:
            if w not in names_all:
                raise SystemExit("--kinds: unknown %r (known: %s)" % (
                    w, ", ".join(names_all)))
        # the flows warm: every flow in the table before the first window
        measure(d, call, pcap, npkts,
                argparse.Namespace(**dict(vars(a), seconds=1)),
                lambda call: None)
        for r in range(a.repeat):
            for name, what, before, change in ks:
                if want and name not in want:
                    continue
                before(call)
                m = measure(d, call, pcap, npkts, a, change)
                print("%-26s run %d: sent %d received %d lost %d "
                      "(rpc %.1f ms)" % (name, r + 1, m["sent"],
                                         m["received"], m["lost"],
                                         m["rpc_ms"]), file=sys.stderr,
                      flush=True)
                ent = next((e for e in out["kinds"] if e["kind"] == name),
                           None)
                if ent is None:
                    ent = {"kind": name, "what": what, "runs": []}
                    out["kinds"].append(ent)
                ent["runs"].append(m)
        for e in out["kinds"]:
            e["lost_total"] = sum(r["lost"] for r in e["runs"])
            e["blocked_s_max"] = max(r["blocked_s"] for r in e["runs"])
        out["load_end"] = [round(x, 1) for x in os.getloadavg()]
    except BaseException:
        # the daemon's output stays for a look
        print("kept: %s" % work, file=sys.stderr)
        raise
    finally:
        d.stop()
        down()
    shutil.rmtree(work, ignore_errors=True)
    path = a.out or os.path.join(HERE, "results",
                                 "blocked-%s.json" % out["date"])
    write_json(path, out)
    print(table(out))
    print("written: %s" % path)
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
