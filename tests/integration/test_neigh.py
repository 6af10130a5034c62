# SPDX-License-Identifier: BSD-3-Clause
"""Neighbours (lib/neigh) in the lab replay: ARP requests and neighbour
solicitations for the replay port's addresses (a "ports" entry named
replay0 lends them), the VIPs and lb.local_addr get exactly the right
answers in the output pcap (checked with scapy); the gateway is asked for
once at start and resolved by a reply in the input (neigh_list over RPC);
replay0 is then a routed port (docs/configuration.md "Port roles"): what
is not for the appliance is never forwarded (not_ours, to_self); hostile
ARP/ND is refused and counted. No static neighbour entry anywhere."""

import collections
import json
import os
import socket
import time

import pytest

import pautil
from pautil import PIPE4, RTC1, check_summary, read_pcap, write_pcap

s = pytest.importorskip("scapy.all")

HOST = "02:00:00:00:11:11"
PORT_MAC = "02:70:63:61:70:00"   # net_pcap's first port: replay0
GW_MAC = "02:00:00:00:99:01"
PORT_ADDR = "198.51.100.5"
PORT_ADDR6 = "2001:db8:1::5"
GATEWAY = "198.51.100.1"
VIP4 = "192.0.2.10"
VIP6 = "2001:db8:100::10"
LOCAL4 = "192.0.2.254"

CONF = {
    "ports": [{"name": "replay0", "devargs": "net_null0",
               "addr": [PORT_ADDR + "/24", PORT_ADDR6 + "/64"],
               "gateway": GATEWAY}],
    "lb": {"local_addr": LOCAL4, "services": [
        {"name": "web", "vip": VIP4, "port": 80, "proto": "tcp",
         "backends": [{"addr": "10.9.0.1"}]},
        {"name": "web6", "vip": VIP6, "port": 80, "proto": "tcp",
         "forward": "nat", "backends": [{"addr": "2001:db8:9::1"}]}]},
    "metrics": None,
}


def arp_req(k, tpa, vlan=None):
    mac = "02:00:00:00:11:%02x" % k
    e = s.Ether(src=mac, dst="ff:ff:ff:ff:ff:ff")
    if vlan is not None:
        e = e / s.Dot1Q(vlan=vlan)
    return bytes(e / s.ARP(op=1, hwsrc=mac, psrc="198.51.100.%d" % (100 + k),
                           pdst=tpa))


def ns(k, target, hlim=255, src=None):
    mac = "02:00:00:00:12:%02x" % k
    src = src or "2001:db8:1::%x" % (0x100 + k)
    sol = s.in6_getnsma(socket.inet_pton(socket.AF_INET6, target))
    dst = socket.inet_ntop(socket.AF_INET6, sol)
    p = s.Ether(src=mac, dst=s.in6_getnsmac(sol)) / \
        s.IPv6(src=src, dst=dst, hlim=hlim) / s.ICMPv6ND_NS(tgt=target)
    if src != "::":
        p = p / s.ICMPv6NDOptSrcLLAddr(lladdr=mac)
    return bytes(p)


def inputs():
    """(frames, what the appliance must do with each)."""
    f = []
    f.append((arp_req(1, PORT_ADDR), "reply"))
    f.append((arp_req(2, VIP4), "reply"))
    f.append((arp_req(3, LOCAL4), "reply"))
    f.append((arp_req(4, VIP4, vlan=42), "reply"))
    f.append((ns(5, VIP6), "reply"))
    f.append((ns(6, PORT_ADDR6), "reply"))
    f.append((ns(7, VIP6, src="::"), "reply"))         # DAD
    # the gateway's reply to the request sent at start
    f.append((bytes(s.Ether(src=GW_MAC, dst=PORT_MAC) /
                    s.ARP(op=2, hwsrc=GW_MAC, psrc=GATEWAY,
                          hwdst=PORT_MAC, pdst=PORT_ADDR)),
              "local"))
    # for the appliance but hostile: refused on the control side
    f.append((ns(8, VIP6, hlim=254), "local"))
    b = bytearray(arp_req(9, VIP4))
    b[6:12] = bytes.fromhex("020000001199")            # spoofed source
    f.append((bytes(b), "local"))
    f.append((bytes(s.Ether(src="02:00:00:00:11:0a", dst=PORT_MAC)
                    / s.ARP(op=2, hwsrc="02:00:00:00:11:0a",
                            psrc="198.51.100.77", pdst=PORT_ADDR)),
              "local"))                               # never asked
    # not for the appliance, on a routed port: never forwarded. A
    # broadcast is the port's own (to_self); a solicited-node group
    # carries only the ND it answers, other groups are not its own
    f.append((arp_req(11, "198.51.100.200"), "to_self"))
    f.append((ns(12, "2001:db8:1::99"), "not_ours"))
    f.append((bytes(s.Ether(src=HOST, dst="33:33:00:00:00:02") /
                    s.IPv6(src="fe80::1", dst="ff02::2", hlim=255) /
                    s.ICMPv6ND_RS()), "not_ours"))
    # an ARP reply for another host's MAC (a bridge flooding): not ours
    f.append((bytes(s.Ether(src=GW_MAC, dst="02:00:00:00:11:01") /
                    s.ARP(op=2, hwsrc=GW_MAC, psrc=GATEWAY,
                          hwdst="02:00:00:00:11:01",
                          pdst="198.51.100.101")), "not_ours"))
    # truncated ARP: malformed
    f.append((arp_req(13, VIP4)[:14 + 20], "malformed"))
    return f


def expected_reply(frame, port_mac):
    """The answer to a request, as RFC 826 / RFC 4861 7.2.4 make it."""
    p = s.Ether(frame)
    if p.haslayer(s.ARP):
        a = p[s.ARP]
        e = s.Ether(src=port_mac, dst=a.hwsrc)
        if p.haslayer(s.Dot1Q):
            e = e / s.Dot1Q(vlan=p[s.Dot1Q].vlan)
        r = bytes(e / s.ARP(op=2, hwsrc=port_mac, psrc=a.pdst,
                            hwdst=a.hwsrc, pdst=a.psrc))
        return r + b"\0" * max(0, 60 - len(r))
    n = p[s.ICMPv6ND_NS]
    dad = p[s.IPv6].src == "::"
    dst = "ff02::1" if dad else p[s.IPv6].src
    edst = "33:33:00:00:00:01" if dad else p.src
    return bytes(s.Ether(src=port_mac, dst=edst) /
                 s.IPv6(src=n.tgt, dst=dst, hlim=255) /
                 s.ICMPv6ND_NA(tgt=n.tgt, R=0, S=0 if dad else 1, O=1) /
                 s.ICMPv6NDOptDstLLAddr(lladdr=port_mac))


def run(tmp_path, mode, extra=()):
    frames = inputs()
    inp = str(tmp_path / "in.pcap")
    out = str(tmp_path / "out.pcap")
    drops = str(tmp_path / "drops.pcap")
    write_pcap(inp, [f for f, _ in frames])
    conf = dict(CONF, pipeline=mode)
    res = pautil.replay(inp, out, conf, drops=drops, extra=extra)
    return frames, res, read_pcap(out), read_pcap(drops)


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_replay_answers_exactly_for_our_addresses_and_resolves_the_gateway(
        mode, tmp_path):
    frames, res, out, dropped = run(tmp_path, {"rtc1": RTC1,
                                               "pipeline4": PIPE4}[mode])
    n = collections.Counter(w for _, w in frames)
    local = n["reply"] + n["local"]
    s_ = check_summary(res, len(frames), {"local": local,
                                          "malformed": n["malformed"],
                                          "to_self": n["to_self"],
                                          "not_ours": n["not_ours"]})
    assert s_["tx_packets"] == n["fwd"]
    # the replies come from the replay port: learn its MAC from the
    # request it sent for the gateway (broadcast, from the port address)
    gw_req = [f for f in out if s.Ether(f).haslayer(s.ARP) and
              s.Ether(f)[s.ARP].op == 1 and
              s.Ether(f)[s.ARP].psrc == PORT_ADDR]
    assert len(gw_req) == 1, [s.Ether(f).summary() for f in out]
    a = s.Ether(gw_req[0])
    assert a.dst == "ff:ff:ff:ff:ff:ff"
    assert (a[s.ARP].psrc, a[s.ARP].pdst) == (PORT_ADDR, GATEWAY)
    port_mac = a.src
    assert a[s.ARP].hwsrc == port_mac
    want = collections.Counter(expected_reply(f, port_mac)
                               for f, w in frames if w == "reply")
    want += collections.Counter(f for f, w in frames if w == "fwd")
    want[gw_req[0]] += 1
    got = collections.Counter(out)
    assert got == want, "missing %s\nextra %s" % (
        [s.Ether(f).summary() for f in (want - got)],
        [s.Ether(f).summary() for f in (got - want)])
    # every frame handed to the control side, and the malformed one, is
    # in the drops file
    assert collections.Counter(dropped) == collections.Counter(
        f for f, w in frames if w in ("reply", "local", "malformed",
                                      "to_self", "not_ours"))
    nb = s_["neigh"]
    assert nb["arp_replies_out"] == 4 and nb["na_out"] == 3, nb
    assert nb["arp_requests_out"] == 1 and nb["resolved"] == 1, nb
    assert nb["invalid"]["hop_limit"] == 1, nb
    assert nb["invalid"]["mac_mismatch"] == 1, nb
    assert nb["unsolicited"] == 1, nb
    assert nb["tx_sent"] == len(out) - n["fwd"], nb


def test_neigh_list_over_rpc_shows_the_gateway_reachable(tmp_path):
    frames = inputs()
    inp = str(tmp_path / "in.pcap")
    out = str(tmp_path / "out.pcap")
    write_pcap(inp, [f for f, _ in frames])
    conf = pautil.write_json(str(tmp_path / "c.json"), CONF)
    sock = pautil.unique("neigh", ".sock")
    d = pautil.Daemon(pautil.replay_daemon_args(inp, out, conf, sock),
                      sock, str(tmp_path), "neigh")
    try:
        d.wait_ready()
        d.wait_replay_done(len(frames))
        lst = d.call("neigh_list")
        by = {(e["address"], e["port"]): e for e in lst}
        gw = by[(GATEWAY, "replay0")]
        assert gw["state"] == "reachable" and gw["mac"] == GW_MAC, gw
        assert gw["target"] == "gateway" and 0 <= gw["age"] < 60, gw
        # hosts that asked for the port's addresses are known (stale)
        h = by[("198.51.100.101", "replay0")]
        assert h["state"] == "stale" and h["mac"] == "02:00:00:00:11:01"
        assert h["target"] is None
        # nothing from the hostile frames
        assert ("198.51.100.77", "replay0") not in by
        with d.client() as c:
            r = c.call_raw("neigh_list", {"port": "replay0"})
            assert r["error"]["code"] == -32602, r
        st = d.call("stats_get")
        assert st["neigh"]["resolved"] == 1
        assert st["drops"]["local"] == 11
        # the console's table
        r = pautil.run([pautil.CTL, "-s", sock, "neigh_list"])
        assert r.rc == 0, r
        lines = r.stdout.splitlines()
        assert lines[0].split()[:5] == ["address", "mac", "port", "state",
                                        "age"], r.stdout
        assert any(GATEWAY in ln and GW_MAC in ln and "reachable" in ln
                   for ln in lines), r.stdout
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()


# --------------------------------------------------------------------------
# Live: veth pairs in a private namespace, no static neighbour entry

from test_live_veth import netns, sh  # noqa: E402,F401  (the fixture)

LIVE_HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "neigh_live_helper.py")


def _mac_of(ns, dev):
    r = sh("ip", "-n", ns, "-j", "link", "show", dev)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)[0]["address"]


def _neigh_of(ns, ip):
    r = sh("ip", "-n", ns, "-j", "neigh", "show", ip)
    assert r.returncode == 0, r.stderr
    ents = json.loads(r.stdout or b"[]")
    return ents[0] if ents else {}


def test_live_kernel_resolves_us_and_we_resolve_gateway_and_backend(
        netns, tmp_path):
    """vB1 (198.51.100.1/24, the gateway) and vB2 (203.0.113.20/24, a
    backend) are the kernel's; the daemon runs vA1 (198.51.100.5/24) and
    vA2 (203.0.113.5/24), peers. The kernel's ARP for the appliance's
    address and a VIP is answered; the appliance resolves the gateway and
    the backend itself (neigh_list: reachable, the right MACs); a TCP SYN
    from the kernel to the VIP leaves vA2 in IPIP to the backend's
    resolved MAC (not the client's, which the fallback would use)."""
    ns = netns
    for dev, a in (("vB1", "198.51.100.1/24"), ("vB2", "203.0.113.20/24")):
        r = sh("ip", "-n", ns, "addr", "add", a, "dev", dev)
        assert r.returncode == 0, r.stderr
    # the VIP is on-link behind vB1: the kernel ARPs for it
    r = sh("ip", "-n", ns, "route", "add", "192.0.2.0/24", "dev", "vB1")
    assert r.returncode == 0, r.stderr
    mac_b1, mac_b2 = _mac_of(ns, "vB1"), _mac_of(ns, "vB2")
    sock = pautil.unique("nlive", ".sock")
    conf = pautil.write_json(str(tmp_path / "live.json"), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1", "addr": ["198.51.100.5/24"],
             "gateway": "198.51.100.1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0", "addr": ["203.0.113.5/24"]},
        ],
        "pipeline": {"mode": "rtc"},
        "lb": {"local_addr": "192.0.2.254", "services": [
            {"name": "web", "vip": "192.0.2.10", "port": 80,
             "proto": "tcp", "forward": "ipip",
             "backends": [{"addr": "203.0.113.20"}]}]},
        "metrics": None,
    })
    d = pautil.Daemon([pautil.DAEMON, "--no-huge", "--no-shconf",
                       "--no-pci", "-m", "512", "-l", "0,1", "--", "-c",
                       conf, "-s", sock], sock, str(tmp_path), "nlive",
                      prefix=("ip", "netns", "exec", ns))
    try:
        d.wait_ready(60)
        # the appliance resolves its targets by itself
        deadline = time.monotonic() + 15
        by = {}
        while time.monotonic() < deadline:
            by = {e["address"]: e for e in d.call("neigh_list")}
            if all(by.get(a, {}).get("state") == "reachable"
                   for a in ("198.51.100.1", "203.0.113.20")):
                break
            time.sleep(0.2)
        assert by["198.51.100.1"]["state"] == "reachable", (by, d.describe())
        assert by["198.51.100.1"]["mac"] == mac_b1
        assert by["198.51.100.1"]["port"] == "p0"
        assert by["198.51.100.1"]["target"] == "gateway"
        assert by["203.0.113.20"]["state"] == "reachable", by
        assert by["203.0.113.20"]["mac"] == mac_b2
        assert by["203.0.113.20"]["port"] == "p1"
        assert by["203.0.113.20"]["target"] == "backend"
        # the kernel resolves the appliance's address (a datagram to it
        # makes the kernel ask) and, below, the VIP
        deadline = time.monotonic() + 10
        e = {}
        while time.monotonic() < deadline and not e.get("lladdr"):
            sh("ip", "netns", "exec", ns, pautil.PYTHON, "-c",
               "import socket; socket.socket(socket.AF_INET, "
               "socket.SOCK_DGRAM).sendto(b'x', ('198.51.100.5', 9))")
            time.sleep(0.3)
            e = _neigh_of(ns, "198.51.100.5")
        assert e.get("lladdr") and "FAILED" not in e.get("state", []), e
        port_mac = e["lladdr"]
        out = str(tmp_path / "lb.json")
        r = sh("ip", "netns", "exec", ns, pautil.PYTHON, LIVE_HELPER,
               "--vip", "192.0.2.10", "--rx", "vB2", "--out", out,
               timeout=60)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        e = _neigh_of(ns, "192.0.2.10")
        assert e.get("lladdr") == port_mac, e
        with open(out) as f:
            frames = [bytes.fromhex(h) for h in json.load(f)]
        assert frames, "no IPIP frame on vB2\n%s" % d.describe()
        for fr in frames:
            p = s.Ether(fr)
            assert p.dst == mac_b2, p.summary()
            assert p[s.IP].dst == "203.0.113.20", p.summary()
            assert p[s.IP].src == "192.0.2.254"
            assert p[s.IP].payload[s.TCP].dport == 80
        st = d.call("stats_get")
        assert st["neigh"]["arp_replies_out"] >= 2, st["neigh"]
        assert st["neigh"]["resolved"] >= 2, st["neigh"]
        assert st["drops"]["local"] >= 4, st["drops"]
    finally:
        rc = d.stop()
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())


def test_live_dual_stack_gateways_one_per_family(netns, tmp_path):
    """A dual-stack routed port with "gateway": [IPv4, IPv6]: the appliance
    resolves both next hops (ARP and ND) and routes transit traffic of each
    family to its own, TTL / hop limit decremented. vB1 holds both
    gateways (198.51.100.1, 2001:db8:1::1); the kernel sends from vB2
    (203.0.113.20, 2001:db8:3::20) to far networks routed via the
    appliance's p1; what p0 sends towards the gateways is captured on
    vB1."""
    import labutil
    ns = netns
    for dev in ("vB1", "vB2"):
        sh("ip", "netns", "exec", ns, "sysctl", "-qw",
           "net.ipv6.conf.%s.disable_ipv6=0" % dev)
    for dev, a in (("vB1", "198.51.100.1/24"), ("vB1", "2001:db8:1::1/64"),
                   ("vB2", "203.0.113.20/24"), ("vB2", "2001:db8:3::20/64")):
        r = sh("ip", "-n", ns, "addr", "add", a, "dev", dev, "nodad")
        assert r.returncode == 0, r.stderr
    for r_ in (("10.99.0.0/16", "203.0.113.5"),
               ("2001:db8:99::/48", "2001:db8:3::5")):
        r = sh("ip", "-n", ns, "route", "add", r_[0], "via", r_[1],
               "dev", "vB2")
        assert r.returncode == 0, r.stderr
    mac_b1 = _mac_of(ns, "vB1")
    mac_a1 = _mac_of(ns, "vA1")
    sock = pautil.unique("ngw2", ".sock")
    conf = pautil.write_json(str(tmp_path / "gw2.json"), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1", "addr": ["198.51.100.5/24", "2001:db8:1::5/64"],
             "gateway": ["198.51.100.1", "2001:db8:1::1"]},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0", "addr": ["203.0.113.5/24", "2001:db8:3::5/64"]},
        ],
        "pipeline": {"mode": "rtc"},
        "metrics": None,
    })
    d = pautil.Daemon([pautil.DAEMON, "--no-huge", "--no-shconf",
                       "--no-pci", "-m", "512", "-l", "0,1", "--", "-c",
                       conf, "-s", sock], sock, str(tmp_path), "ngw2",
                      prefix=("ip", "netns", "exec", ns))
    cap = None
    try:
        d.wait_ready(60)
        gw = d.call("config_get")["ports"][0]["gateway"]
        assert gw == ["198.51.100.1", "2001:db8:1::1"], gw
        deadline = time.monotonic() + 20
        by = {}
        while time.monotonic() < deadline:
            by = {e["address"]: e for e in d.call("neigh_list")}
            if all(by.get(a, {}).get("state") == "reachable"
                   for a in ("198.51.100.1", "2001:db8:1::1")):
                break
            time.sleep(0.2)
        for a in ("198.51.100.1", "2001:db8:1::1"):
            assert by.get(a, {}).get("state") == "reachable", (by,
                                                               d.describe())
            assert by[a]["mac"] == mac_b1 and by[a]["port"] == "p0", by[a]
            assert by[a]["target"] == "gateway", by[a]
        cap = labutil.Capture(ns, "vB1", str(tmp_path / "gw2.pcap"),
                              "udp and (dst host 10.99.0.9 or "
                              "dst host 2001:db8:99::9)")
        # the kernel first resolves the appliance (p1) for each family:
        # send until both families came through, bounded
        send = ("import socket,sys\n"
                "for fam, a in ((socket.AF_INET, '10.99.0.9'),"
                " (socket.AF_INET6, '2001:db8:99::9')):\n"
                "    s = socket.socket(fam, socket.SOCK_DGRAM)\n"
                "    try: s.sendto(b'gw2', (a, 5353))\n"
                "    except OSError: pass\n")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sh("ip", "netns", "exec", ns, pautil.PYTHON, "-c", send)
            time.sleep(0.5)
            got = [s.Ether(f) for f in pautil.read_pcap(cap.path)]
            if (any(p.haslayer(s.IP) for p in got) and
                    any(p.haslayer(s.IPv6) for p in got)):
                break
        frames = [s.Ether(f) for f in cap.stop()]
        cap = None
        v4 = [p for p in frames if p.haslayer(s.IP)]
        v6 = [p for p in frames if p.haslayer(s.IPv6)]
        assert v4 and v6, ([p.summary() for p in frames],
                           d.call("stats_get")["drops"], d.describe())
        for p in v4:
            assert (p.dst, p.src) == (mac_b1, mac_a1), p.summary()
            assert p[s.IP].ttl == 63, p.summary()
        for p in v6:
            assert (p.dst, p.src) == (mac_b1, mac_a1), p.summary()
            assert p[s.IPv6].hlim == 63, p.summary()
        assert d.call("stats_get")["drops"]["no_route"] == 0
    finally:
        if cap is not None:
            cap.stop()
        rc = d.stop()
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())
