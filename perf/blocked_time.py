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
for the baseline over the window (--rate; default 100,000 packets/s, the
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
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tools", "pylib"))
from pktaccel.daemon import Daemon, unique, write_json  # noqa: E402

VIP = "192.0.2.10"
VPORT = 5000
BACKENDS = ["10.1.0.%d" % i for i in range(1, 5)]
FLOWS = 64
GW_MAC = "02:00:00:00:00:fe"

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
              "devargs": "net_af_packet%s,iface=%s" % (i, IF["a" + i]),
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


# Each kind: (description, what the traffic should see, the change).
# A change takes (client call, state) and is made during the window;
# kinds are run in this order, so that each finds what it changes.
def kinds(a, work):
    st = {"bl": None}

    def bl(call):
        if st["bl"] is None:
            st["bl"] = blocklist_file(os.path.join(work, "bl.txt"),
                                      a.prefixes)
        return call("blocklist_replace", {"path": st["bl"]})

    k = [
        ("none", "no change (the baseline)", lambda call: None),
        ("acl_rule_add", "one drop rule the traffic does not match",
         lambda call: call("acl_rule_add", {
             "id": 500, "priority": 50, "dst": "203.0.114.0/24",
             "proto": "udp", "action": "drop"})),
        ("acl_rule_delete", "that rule deleted",
         lambda call: call("acl_rule_delete", {"id": 500})),
        ("acl_rules_replace", "%d rules the traffic does not match"
         % a.rules, lambda call: call("acl_rules_replace", {
             "rules": rules10k(a.rules, 1000)})),
        ("lb_service_add", "a service the traffic does not use",
         lambda call: call("lb_service_add", {
             "name": "extra", "vip": "192.0.2.30", "port": 80,
             "proto": "tcp", "backends": [{"addr": "10.3.0.1"}]})),
        ("lb_service_delete", "that service deleted",
         lambda call: call("lb_service_delete", {"name": "extra"})),
        ("lb_service_delete_used", "the service the traffic uses "
         "deleted: its packets are forwarded unchanged from then on",
         lambda call: call("lb_service_delete", {"name": "used"})),
        ("lb_service_add_used", "the service added again: its packets "
         "are load-balanced again", lambda call: call(
             "lb_service_add", used_service())),
        ("lb_backend_add", "a fifth backend of the service in use",
         lambda call: call("lb_backend_add", {
             "service": "used", "addr": "10.1.0.9"})),
        ("lb_backend_set_weight", "its weight set to 3",
         lambda call: call("lb_backend_set", {
             "service": "used", "addr": "10.1.0.9", "weight": 3})),
        ("lb_backend_set_drain", "a backend with flows drained",
         lambda call: call("lb_backend_set", {
             "service": "used", "addr": BACKENDS[0], "state": "drain"})),
        ("lb_backend_set_up", "that backend up again",
         lambda call: call("lb_backend_set", {
             "service": "used", "addr": BACKENDS[0], "state": "up"})),
        ("lb_backend_delete", "a backend with flows deleted (its flows "
         "move to the others)", lambda call: call("lb_backend_delete", {
             "service": "used", "addr": BACKENDS[0]})),
        ("lb_backend_add_back", "that backend added back",
         lambda call: call("lb_backend_add", {
             "service": "used", "addr": BACKENDS[0]})),
        ("lb_backend_delete_unused", "the fifth backend deleted",
         lambda call: call("lb_backend_delete", {
             "service": "used", "addr": "10.1.0.9"})),
        ("blocklist_replace", "%d prefixes the sources are not in"
         % a.prefixes, bl),
    ]
    return k


def measure(d, cli, pcap, npkts, a, change):
    count = int(a.rate * a.seconds)
    c0 = counters()
    s0 = d.call("stats_get")
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
    time.sleep(0.5)  # what is in flight comes out
    c1 = counters()
    s1 = d.call("stats_get")
    sent = c1["sent"] - c0["sent"]
    received = (c1["rx0"] - c0["rx0"]) + (c1["rx1"] - c0["rx1"])
    lost = sent - received
    drops = {k: v - s0["drops"].get(k, 0)
             for k, v in s1["drops"].items() if v - s0["drops"].get(k, 0)}
    missed = sum(v["rx_missed"] - s0["ports"][n]["rx_missed"]
                 for n, v in s1["ports"].items())
    return {"sent": sent, "received": received, "expected_drops": 0,
            "lost": lost, "blocked_s": lost / a.rate,
            "rpc_ms": round(rpc_ms, 1),
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
    ap.add_argument("--rate", type=int, default=100000,
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
            for name, what, change in ks:
                if want and name not in want:
                    continue
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
    finally:
        d.stop()
        down()
    path = a.out or os.path.join(HERE, "results",
                                 "blocked-%s.json" % out["date"])
    write_json(path, out)
    print(table(out))
    print("written: %s" % path)
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
