# SPDX-License-Identifier: BSD-3-Clause
"""One address, shared (docs/configuration.md "One address, shared"):
lb.local_addr / local_addr6 equal to a routed port's own address. The
data path keeps only what the load balancer owns there (ICMP errors about
the ipip packets it sent from that address) and everything else for the
address is the port's: its kernel_if's, or dropped to_self without one.

- replay (no kernel_if there): which frames to the shared address the
  data path keeps (no_service: as for a local_addr of its own) and which
  it leaves for the port (to_self); ARP for it answered once; ipip leaves
  with it as outer source;
- live, one-armed on a veth pair (net_af_packet + kernel_if): with
  local_addr the port's address and an ipip service balancing, the
  kernel_if answers ping, TCP both ways, ARP for it resolves from the
  peer, an ICMP fragmentation needed about the appliance's ipip packet
  stays with the data path; and the daemon made the veth's own stack
  ignore the port's frames (arp_ignore, rp_filter, disable_ipv6), put
  back on stop.
Root and `ip netns` for the live test; skipped otherwise."""

import collections
import json
import os
import time

import pytest

import pautil
from excp_lab import helper, sh, tcp_echo
from pautil import (DAEMON, PIPE4, RTC1, Daemon, check_summary, read_pcap,
                    unique, write_json, write_pcap)
from netpair import veth_namespaces

s = pytest.importorskip("scapy.all")

PORT_MAC = "02:70:63:61:70:00"     # net_pcap's first port: replay0
GW_MAC = "02:00:00:00:99:01"
PORT_ADDR = "198.51.100.5"
PORT_ADDR6 = "2001:db8:1::5"
VIP = "192.0.2.10"
BACKEND = "10.1.0.1"
CLIENT = "203.0.113.7"
ROUTER = "198.51.100.1"
ROUTER6 = "2001:db8:1::1"

CONF = {
    "ports": [{"name": "replay0", "devargs": "net_null0",
               "addr": [PORT_ADDR + "/24", PORT_ADDR6 + "/64"],
               "gateway_mac": GW_MAC}],
    "lb": {"local_addr": PORT_ADDR, "local_addr6": PORT_ADDR6,
           "services": [
               {"name": "web", "vip": VIP, "port": 80, "proto": "tcp",
                "forward": "ipip", "backends": [{"addr": BACKEND}]}]},
    "metrics": None,
}


def eth():
    return s.Ether(dst=PORT_MAC, src=GW_MAC)


def ipip_quote(src=PORT_ADDR):
    """The first bytes of an ipip packet sent from @src, as a router
    quotes it."""
    return s.IP(src=src, dst=BACKEND, proto=4, flags="DF") / \
        s.IP(src=CLIENT, dst=VIP) / s.TCP(sport=40000, dport=80)


def inputs():
    """(frame, where it goes)."""
    f = []
    # the load balancer's: balanced, and its ICMP errors
    f.append((eth() / s.IP(src=CLIENT, dst=VIP) /
              s.TCP(sport=40000, dport=80, flags="S"), "lb"))
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
              s.ICMP(type=3, code=4, nexthopmtu=1400) / ipip_quote(),
              "lb_keeps"))
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
              s.ICMP(type=11, code=0) / ipip_quote(), "lb_keeps"))
    f.append((eth() / s.IPv6(src=ROUTER6, dst=PORT_ADDR6) /
              s.ICMPv6PacketTooBig(mtu=1400) /
              s.IPv6(src=PORT_ADDR6, dst="2001:db8:9::1", nh=41) /
              s.IPv6(src="2001:db8:77::7", dst="2001:db8:100::10") /
              s.TCP(sport=40000, dport=80), "lb_keeps"))
    # the port's (its kernel_if's when it has one): BGP, ping, ssh, an
    # ICMP error about a packet of the kernel's (a UDP health check), an
    # error about an ipip packet somebody else sent
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
              s.TCP(sport=40179, dport=179, flags="S"), "port"))
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) / s.ICMP(),
              "port"))
    f.append((eth() / s.IPv6(src=ROUTER6, dst=PORT_ADDR6) /
              s.TCP(sport=40022, dport=22, flags="S"), "port"))
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
              s.ICMP(type=3, code=3) /
              s.IP(src=PORT_ADDR, dst=BACKEND) /
              s.UDP(sport=40053, dport=53), "port"))
    f.append((eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
              s.ICMP(type=3, code=4) / ipip_quote(src="198.51.100.9"),
              "port"))
    # ARP for it: answered once, with the port's MAC
    f.append((s.Ether(dst="ff:ff:ff:ff:ff:ff", src=GW_MAC) /
              s.ARP(op=1, hwsrc=GW_MAC, psrc=ROUTER, pdst=PORT_ADDR),
              "arp"))
    return [(bytes(p), w) for p, w in f]


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_replay_shared_local_addr_keeps_the_lbs_and_leaves_the_ports(
        mode, tmp_path):
    frames = inputs()
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, [f for f, _ in frames])
    res = pautil.replay(inp, out, dict(
        CONF, pipeline={"rtc1": RTC1, "pipeline4": PIPE4}[mode]))
    n = collections.Counter(w for _, w in frames)
    st = check_summary(res, len(frames), {
        "no_service": n["lb_keeps"], "to_self": n["port"],
        "local": n["arp"]})
    assert st["tx_packets"] == n["lb"], st     # ARP answers: not counted
    o = [s.Ether(f) for f in read_pcap(out)]
    enc = [p for p in o if p.haslayer(s.IP) and p[s.IP].proto == 4]
    assert len(enc) == 1 and enc[0][s.IP].src == PORT_ADDR and \
        enc[0][s.IP].dst == BACKEND, [p.summary() for p in o]
    arp = [p for p in o if p.haslayer(s.ARP)]
    assert len(arp) == 1 and arp[0][s.ARP].op == 2 and \
        arp[0][s.ARP].hwsrc == PORT_MAC and \
        arp[0][s.ARP].psrc == PORT_ADDR, [p.summary() for p in o]


def test_replay_local_addr_of_its_own_drops_the_same_icmp_errors(tmp_path):
    """The control: with local_addr an address of its own, errors to it
    about its ipip packets are dropped no_service as well, so sharing
    changes nothing for the load balancer."""
    own = "192.0.2.254"
    conf = dict(CONF, lb=dict(CONF["lb"], local_addr=own))
    frames = [bytes(eth() / s.IP(src=ROUTER, dst=own) /
                    s.ICMP(type=3, code=4) / ipip_quote(src=own)),
              bytes(eth() / s.IP(src=ROUTER, dst=PORT_ADDR) /
                    s.ICMP(type=3, code=4) / ipip_quote())]
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, frames)
    res = pautil.replay(inp, out, dict(conf, pipeline=RTC1))
    # the second: not the load balancer's any more, the port's
    check_summary(res, 2, {"no_service": 1, "to_self": 1})


# ---- live: veth pair, net_af_packet + kernel_if ----

TAP = "pa0"
LIVE_VIP = "192.0.2.10"
SYSCTLS = {"ipv4/conf/xA/arp_ignore": "8", "ipv4/conf/xA/rp_filter": "1",
           "ipv6/conf/xA/disable_ipv6": "1"}




def sysctls(ns):
    out = {}
    for k in SYSCTLS:
        r = sh("ip", "netns", "exec", ns, "cat", "/proc/sys/net/" + k)
        out[k] = r.stdout.decode().strip() if r.returncode == 0 else None
    return out


@pytest.fixture
def lab():
    with veth_namespaces("psh", "the shared-address lab", ipv6=False) as \
            (a, b):
        r = sh("ip", "-n", b, "addr", "add", ROUTER + "/24", "dev", "xB")
        assert r.returncode == 0, r.stderr.decode()
        # the peer routes the VIP to the appliance, as a router would
        r = sh("ip", "-n", b, "route", "add", LIVE_VIP + "/32", "via",
               PORT_ADDR)
        assert r.returncode == 0, r.stderr.decode()
        yield a, b


def test_live_shared_local_addr_kernel_if_still_answers(lab, tmp_path):
    """One-armed, lb.local_addr = the port's address, an ipip service to
    a backend on the peer: the kernel_if still answers ping and TCP in,
    its TCP out resolves its neighbour, the peer resolves the address by
    ARP to the port's MAC; the ipip packets leave with the shared address
    as outer source, and an ICMP fragmentation needed about one stays
    with the data path (no_service), not the kernel."""
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun (kernel_if)")
    a, b = lab
    before = sysctls(a)
    cfg = write_json(str(tmp_path / "shared.json"), {
        "ports": [{"name": "wan0", "devargs": "net_af_packet0,iface=xA",
                   "addr": [PORT_ADDR + "/24"], "gateway": ROUTER,
                   "kernel_if": TAP}],
        "pipeline": {"mode": "rtc"},
        "lb": {"local_addr": PORT_ADDR, "services": [
            {"name": "web", "vip": LIVE_VIP, "port": 80, "proto": "udp",
             "forward": "ipip", "backends": [{"addr": ROUTER}]}]},
        "metrics": None})
    sock = unique("shared", ".sock")
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", cfg, "-s", sock], sock,
               str(tmp_path), "shared", prefix=("ip", "netns", "exec", a))
    d.wait_ready(60)
    try:
        # the veth's own stack ignores the port's frames meanwhile
        now = sysctls(a)
        assert all(now[k] == v for k, v in SYSCTLS.items()
                   if before[k] is not None), (now, before)
        st0 = d.call("stats_get")

        # ping to the shared address: the kernel_if's to answer
        p = helper(b, "ping", PORT_ADDR, 5)
        assert p["received"] >= p["sent"] - 1, (p, d.describe())
        # ... and the peer resolved it by ARP to the port's MAC
        mac = json.loads(sh("ip", "-n", a, "-j", "link", "show",
                            "xA").stdout.decode())[0]["address"]
        r = sh("ip", "-n", b, "-j", "neigh", "show", PORT_ADDR, "dev", "xB")
        neigh = json.loads(r.stdout.decode() or "[]")
        assert neigh and neigh[0].get("lladdr") == mac, (neigh, mac)

        # TCP from the peer to a listener bound to the shared address
        c = tcp_echo(a, PORT_ADDR, 7001, b, 200000)
        # TCP from the kernel_if out: its ARP for the peer is answered to
        # the shared address, and the kernel gets the reply
        c = tcp_echo(b, ROUTER, 7002, a, 200000)
        assert c["local"] == PORT_ADDR, c

        # ipip from the shared address, and an error about it back
        x = helper(b, "ipip", "xB", LIVE_VIP, 80, 20, timeout=90)
        assert x["ipip"] >= 1 and x["outer_src"] == PORT_ADDR and \
            x["outer_dst"] == ROUTER, x
        st1 = d.call("stats_get")
        assert st1["lb"]["balanced"] - st0["lb"]["balanced"] >= x["ipip"]
        deadline = time.monotonic() + 30
        while True:
            st2 = d.call("stats_get")
            if st2["drops"]["no_service"] > st0["drops"]["no_service"]:
                break
            assert time.monotonic() < deadline, \
                "the fragmentation needed was not kept: %s" % st2["drops"]
            time.sleep(0.1)
        assert st2["drops"]["to_self"] == st0["drops"]["to_self"], \
            st2["drops"]
        assert st2["excp"]["clones"] >= 1, st2["excp"]
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()
    # put back on stop
    assert sysctls(a) == before, (sysctls(a), before)
