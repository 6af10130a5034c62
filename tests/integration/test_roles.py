# SPDX-License-Identifier: BSD-3-Clause
"""Port roles (docs/configuration.md "Port roles") in the lab replay. The
replay port replay0 becomes a routed one-armed port when a "ports" entry
named replay0 lends it addresses: it takes only frames for its MAC,
broadcast and the multicast it handles (the rest: not_ours, never sent),
answers ARP, sends everything with its own MAC, routes transit traffic to
its gateway with the TTL / hop limit decremented, answers TTL 1 with ICMP
time exceeded (checked with scapy), and drops what is for itself
(to_self). A transparent port named as its own peer is refused."""

import collections
import socket

import pytest

import pautil
from pautil import PIPE4, RTC1, check_summary, read_pcap, write_pcap

s = pytest.importorskip("scapy.all")

PORT_MAC = "02:70:63:61:70:00"     # net_pcap's first port: replay0
GW_MAC = "02:00:00:00:99:01"
CLIENT_MAC = GW_MAC                # clients come through the router
BACKEND_MAC = "02:00:00:00:be:01"
PORT_ADDR = "198.51.100.5"
PORT_ADDR6 = "2001:db8:1::5"
VIP = "192.0.2.10"
CLIENT = "203.0.113.7"
CLIENT6 = "2001:db8:77::7"
FAR = "203.0.113.200"
FAR6 = "2001:db8:99::9"

CONF = {
    "ports": [{"name": "replay0", "devargs": "net_null0",
               "addr": [PORT_ADDR + "/24", PORT_ADDR6 + "/64"],
               "gateway_mac": GW_MAC}],
    "lb": {"local_addr": "192.0.2.254", "services": [
        {"name": "web", "vip": VIP, "port": 80, "proto": "tcp",
         "forward": "dsr",
         "backends": [{"addr": "198.51.100.21", "mac": BACKEND_MAC}]}]},
    "metrics": None,
}


def eth(dst=PORT_MAC, src=CLIENT_MAC):
    return s.Ether(dst=dst, src=src)


def inputs():
    """(frame, what happens to it)."""
    f = []
    # to the VIP: balanced (DSR to the backend's MAC), even at TTL 1
    f.append((eth() / s.IP(src=CLIENT, dst=VIP, ttl=64) /
              s.TCP(sport=40000, dport=80, flags="S"), "lb"))
    f.append((eth() / s.IP(src=CLIENT, dst=VIP, ttl=1) /
              s.TCP(sport=40001, dport=80, flags="S"), "lb"))
    # transit: to the gateway, TTL / hop limit decremented
    for ttl in (64, 2, 255):
        f.append((eth() / s.IP(src=CLIENT, dst=FAR, ttl=ttl, id=ttl) /
                  s.UDP(sport=5000, dport=53) / (b"q" * 20), "route"))
    f.append((eth() / s.IPv6(src=CLIENT6, dst=FAR6, hlim=64) /
              s.UDP(sport=5000, dport=53) / (b"q" * 20), "route"))
    # TTL / hop limit 1 or 0: time exceeded back, the packet dropped
    for ttl in (1, 0):
        f.append((eth() / s.IP(src=CLIENT, dst=FAR, ttl=ttl) /
                  s.UDP(sport=5001, dport=33434) / (b"t" * 12), "ttl"))
    f.append((eth() / s.IPv6(src=CLIENT6, dst=FAR6, hlim=1) /
              s.UDP(sport=5001, dport=33434) / (b"t" * 12), "ttl"))
    # ... but not about an ICMP error (RFC 1122): dropped, no answer
    f.append((eth() / s.IP(src=CLIENT, dst=FAR, ttl=1) /
              s.ICMP(type=3, code=1) / s.IP(src=FAR, dst=CLIENT) /
              s.UDP(sport=1, dport=2), "ttl_silent"))
    # for foreign MACs (a bridge flooding the backends' frames): dropped
    f.append((eth(dst=BACKEND_MAC) / s.IP(src=CLIENT, dst="198.51.100.21") /
              s.TCP(sport=40002, dport=80), "not_ours"))
    f.append((eth(dst=GW_MAC, src=BACKEND_MAC) /
              s.IP(src=VIP, dst=CLIENT) / s.TCP(sport=80, dport=40000),
              "not_ours"))
    f.append((eth(dst="33:33:ff:00:00:21", src=BACKEND_MAC) /
              s.IPv6(src="fe80::21", dst="ff02::1:ff00:21", hlim=255) /
              s.ICMPv6ND_NS(tgt="2001:db8:1::21"), "not_ours"))
    f.append((eth(dst="01:00:5e:00:00:05", src=BACKEND_MAC) /
              s.IP(src="198.51.100.21", dst="224.0.0.5", ttl=1) /
              s.UDP(sport=1, dport=2), "not_ours"))
    # broadcast ARP for the port's address: answered
    f.append((eth(dst="ff:ff:ff:ff:ff:ff", src=BACKEND_MAC) /
              s.ARP(op=1, hwsrc=BACKEND_MAC, psrc="198.51.100.21",
                    pdst=PORT_ADDR), "arp"))
    # for the port itself, consumed by nothing: not forwarded
    f.append((eth() / s.IP(src=CLIENT, dst=PORT_ADDR) /
              s.TCP(sport=40003, dport=22, flags="S"), "to_self"))
    f.append((eth() / s.IPv6(src=CLIENT6, dst=PORT_ADDR6) /
              s.ICMPv6EchoRequest(), "to_self"))
    f.append((eth(dst="ff:ff:ff:ff:ff:ff") /
              s.IP(src="198.51.100.30", dst="255.255.255.255") /
              s.UDP(sport=68, dport=67), "to_self"))
    return [(bytes(p), w) for p, w in f]


def run(tmp_path, mode, conf=CONF):
    frames = inputs()
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, [f for f, _ in frames])
    res = pautil.replay(inp, out, dict(conf, pipeline=mode))
    return frames, res, read_pcap(out)


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_routed_one_armed_port(mode, tmp_path):
    frames, res, out = run(tmp_path, {"rtc1": RTC1, "pipeline4": PIPE4}[mode])
    n = collections.Counter(w for _, w in frames)
    st = check_summary(res, len(frames), {
        "not_ours": n["not_ours"], "to_self": n["to_self"],
        "ttl": n["ttl"] + n["ttl_silent"], "local": n["arp"]})
    assert st["tx_packets"] == n["lb"] + n["route"]
    # a routed port never sends a frame with another source MAC, so no
    # frame for a foreign MAC ever leaves
    assert out and all(s.Ether(f).src == PORT_MAC for f in out), \
        [s.Ether(f).summary() for f in out]
    got = collections.Counter(out)
    want = collections.Counter()
    for f, w in frames:
        p = s.Ether(f)
        if w == "lb":
            p.dst, p.src = BACKEND_MAC, PORT_MAC
            want[bytes(p)] += 1
        elif w == "route":
            p.dst, p.src = GW_MAC, PORT_MAC
            if p.haslayer(s.IP):
                p[s.IP].ttl -= 1
                del p[s.IP].chksum      # scapy recomputes it in full
            else:
                p[s.IPv6].hlim -= 1
            want[bytes(s.Ether(bytes(p)))] += 1
        elif w == "ttl":
            ip = p.getlayer(1)
            quote = bytes(ip)
            if p.haslayer(s.IP):
                e = s.Ether(dst=CLIENT_MAC, src=PORT_MAC) / \
                    s.IP(src=PORT_ADDR, dst=CLIENT, ttl=64, tos=0xc0, id=0,
                         flags=0) / s.ICMP(type=11, code=0) / quote
            else:
                e = s.Ether(dst=CLIENT_MAC, src=PORT_MAC) / \
                    s.IPv6(src=PORT_ADDR6, dst=CLIENT6, hlim=64) / \
                    s.ICMPv6TimeExceeded(code=0) / quote
            want[bytes(e)] += 1
        elif w == "arp":
            r = bytes(s.Ether(dst=BACKEND_MAC, src=PORT_MAC) /
                      s.ARP(op=2, hwsrc=PORT_MAC, psrc=PORT_ADDR,
                            hwdst=BACKEND_MAC, pdst="198.51.100.21"))
            want[r + b"\0" * (60 - len(r))] += 1
    assert got == want, "missing %s\nextra %s" % (
        [s.Ether(f).summary() for f in (want - got)],
        [s.Ether(f).summary() for f in (got - want)])
    # the time exceeded answers, as scapy reads them
    te = [s.Ether(f) for f in out if s.Ether(f).haslayer(s.ICMP) or
          s.Ether(f).haslayer(s.ICMPv6TimeExceeded)]
    assert len(te) == n["ttl"]
    for p in te:
        if p.haslayer(s.IP):
            assert (p[s.ICMP].type, p[s.ICMP].code) == (11, 0)
            assert p[s.IP].src == PORT_ADDR and p[s.IP].dst == CLIENT
            c = p[s.IP].chksum
            del p[s.IP].chksum
            assert s.IP(bytes(p[s.IP])).chksum == c
        else:
            assert p[s.ICMPv6TimeExceeded].code == 0
            assert p[s.IPv6].src == PORT_ADDR6 and p[s.IPv6].dst == CLIENT6
    route = st["icmp_errors"]
    assert route["icmp_tx_packets"] == n["ttl"], route
    assert route["icmp_not_sent"] == n["ttl_silent"], route
    assert route["icmp_rate_limited"] == 0, route


def test_transit_without_a_resolved_gateway_is_dropped_no_route(tmp_path):
    conf = dict(CONF, ports=[{"name": "replay0", "devargs": "net_null0",
                              "addr": [PORT_ADDR + "/24"]}])
    frames = [bytes(eth() / s.IP(src=CLIENT, dst=FAR) / s.UDP()),
              bytes(eth() / s.IP(src=CLIENT, dst=VIP) /
                    s.TCP(sport=40000, dport=80, flags="S"))]
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, frames)
    res = pautil.replay(inp, out, dict(conf, pipeline=RTC1))
    check_summary(res, 2, {"no_route": 1})
    o = read_pcap(out)
    assert len(o) == 1 and s.Ether(o[0]).dst == BACKEND_MAC


def test_transparent_replay_port_still_passes_frames_unchanged(tmp_path):
    """replay0 without addresses: the pass-through lab port, as before."""
    frames = [bytes(eth(dst=BACKEND_MAC) / s.IP(src=CLIENT, dst=FAR, ttl=1) /
                    s.UDP()),
              bytes(eth(dst="01:00:5e:00:00:05") /
                    s.IP(src=CLIENT, dst="224.0.0.5") / s.UDP())]
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, frames)
    res = pautil.replay(inp, out, {"pipeline": RTC1, "metrics": None})
    check_summary(res, 2, {})
    assert read_pcap(out) == frames


def test_transparent_port_named_its_own_peer_is_refused(tmp_path):
    doc = {"ports": [{"name": "a", "devargs": "net_null0",
                      "addr": [PORT_ADDR + "/24"], "peer": "a"},
                     {"name": "t", "devargs": "net_null1", "peer": "t"}],
           "metrics": None}
    inp, out = str(tmp_path / "in.pcap"), str(tmp_path / "out.pcap")
    write_pcap(inp, [bytes(eth() / s.IP() / s.UDP())])
    res = pautil.replay(inp, out, doc, timeout=60)
    assert res.rc not in (0, None), res
    assert "$.ports[1].peer: transparent port 't'" in res.stderr, res.stderr
    assert "own peer" in res.stderr
