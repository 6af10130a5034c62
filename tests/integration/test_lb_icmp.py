# SPDX-License-Identifier: BSD-3-Clause
"""ICMP for VIPs (docs/configuration.md "lb.icmp_echo", docs/architecture.md
"ICMP for VIPs"), replayed and checked with scapy:
- 100 ICMP errors (fragmentation needed / packet too big) and 100
  parameter problems (IPv4 type 12, ICMPv6 type 4) quoting packets
  the VIP sent to 100 clients reach the backend of each client's flow,
  checked against the replay's own flows and against trace_packet for
  the flow's 5-tuple (a --stay daemon keeps the flow tables), with one
  worker and in pipeline mode with two lb lcores (the parser hashes an
  error by its quote, so it reaches the lb lcore that holds its flow;
  rr services have no other way to find the flow's backend);
- echo requests to a VIP are answered (and not with icmp_echo false);
- a DF packet that ipip would push over the port MTU gets fragmentation
  needed / packet too big back from the VIP: type, code, MTU, quoted
  bytes and checksums checked by scapy; the original counts as "mtu";
- the rate limit of those messages;
- an MSS clamp on SYNs, checked by scapy."""
import ipaddress
import time

import pytest
from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.inet6 import (ICMPv6EchoReply, ICMPv6EchoRequest,
                                ICMPv6PacketTooBig, ICMPv6ParamProblem, IPv6,
                                in6_chksum)
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import checksum

import lb_model as lm
import pautil
from pautil import RTC1, check_summary, read_pcap, write_pcap

# two lb lcores: a flow's entry is in one of two flow tables. (rtc2 is
# no test of this in replay: net_pcap has one RX queue, so one worker
# gets every packet.)
PIPE_LB2 = {"mode": "pipeline",
            "lcores": {"rx": [1], "classify": [2], "lb": [3, 4], "tx": [5]}}
MODES = {"rtc1": RTC1, "pipeline_lb2": PIPE_LB2}

LOCAL4 = "192.0.2.254"
LOCAL6 = "2001:db8::fe"
ROUTER_MAC = "02:00:00:00:00:aa"
APPL_MAC = "02:00:00:00:00:01"
# rr: a flow's backend is in general not the Maglev choice of its hash,
# so only the flow table can give an error the flow's backend
WEB = {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "scheduler": "rr", "forward": "ipip",
       "backends": [{"addr": "10.1.0.%d" % i} for i in (1, 2, 3)]}
WEB6 = {"name": "web6", "vip": "2001:db8:10::10", "port": 443,
        "proto": "tcp", "forward": "ipip",
        "backends": [{"addr": "2001:db8:1::%d" % i} for i in (1, 2)]}
CONF = {"pipeline": dict(RTC1),
        "lb": {"local_addr": LOCAL4, "local_addr6": LOCAL6,
               "flow_table": {"size": 8192, "tcp_timeout": 3600,
                              "tcp_fin_timeout": 3600, "udp_timeout": 3600},
               "services": [WEB, WEB6]}}
N4, N6 = 70, 30


def flows():
    """(client, vip, cport, vport) of the 100 flows."""
    return [("198.51.100.%d" % (1 + k), WEB["vip"], 20000 + k, 80)
            for k in range(N4)] + \
        [("2001:db8:c::%x" % (1 + k), WEB6["vip"], 40000 + k, 443)
         for k in range(N6)]


def ip_layer(src, dst, **kw):
    if ":" in src:
        return IPv6(src=src, dst=dst, hlim=kw.get("ttl", 64))
    return IP(src=src, dst=dst, flags="DF", ttl=kw.get("ttl", 64))


def syn(client, vip, cport, vport):
    return Ether(src=ROUTER_MAC, dst=APPL_MAC) / ip_layer(client, vip) / \
        TCP(sport=cport, dport=vport, flags="S", seq=1000) / Raw(b"x" * 8)


ERROR_KINDS = ("too_big", "param_problem")


def quoted_error(client, vip, cport, vport, kind="too_big"):
    """What a router on the way to the client sends the VIP about a
    packet the VIP (a DSR backend) sent the client: fragmentation needed
    / packet too big, or a parameter problem (pointer at the quoted
    TTL / hop limit)."""
    quoted = ip_layer(vip, client) / TCP(sport=vport, dport=cport,
                                         flags="SA", seq=7, ack=1001) / \
        Raw(b"y" * 1300)
    if ":" in vip:
        icmp = ICMPv6PacketTooBig(mtu=1280) if kind == "too_big" else \
            ICMPv6ParamProblem(code=0, ptr=7)
        err = IPv6(src="2001:db8:ff::1", dst=vip) / icmp / \
            bytes(quoted)[:1232]
    else:
        icmp = ICMP(type=3, code=4, nexthopmtu=1400) if kind == "too_big" \
            else ICMP(type=12, code=0, ptr=8)
        err = IP(src="203.0.113.1", dst=vip) / icmp / bytes(quoted)[:548]
    return Ether(src=ROUTER_MAC, dst=APPL_MAC) / err


def outer(fr):
    """(outer destination, inner bytes) of an ipip/ip6ip6 frame."""
    e = Ether(fr)
    if IP in e and e[IP].proto == 4:
        return e[IP].dst, bytes(e[IP].payload)
    assert IPv6 in e and e[IPv6].nh == 41, e.summary()
    return e[IPv6].dst, bytes(e[IPv6].payload)


@pytest.fixture(scope="module", params=sorted(MODES))
def icmp_daemon(request, module_daemons, tmp_path_factory):
    fl = flows()
    frames = [bytes(syn(*f)) for f in fl] + \
        [bytes(quoted_error(*f, kind=k)) for k in ERROR_KINDS for f in fl]
    path = str(tmp_path_factory.mktemp("icmp") / "icmp.pcap")
    write_pcap(path, frames)
    conf = dict(CONF, pipeline=dict(MODES[request.param]))
    d = module_daemons(conf, path, name="lb-icmp-" + request.param)
    st = d.wait_replay_done(len(frames))
    assert st["dropped_packets"] == 0, st
    deadline = time.monotonic() + 10
    while True:
        try:
            out = read_pcap(d.out_pcap)
        except ValueError:
            out = []
        if len(out) == len(frames) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(out) == len(frames), (len(out), d.describe())
    d.frames, d.out = frames, out
    return d


def test_100_quoted_errors_reach_their_flows_backends_as_trace_says(
        icmp_daemon):
    d = icmp_daemon
    fl = flows()
    flow_be = {}
    err_be = {k: {} for k in ERROR_KINDS}
    inner_of = {}
    for fr in d.out:
        dst, inner = outer(fr)
        inner_of[inner] = dst
    for i, f in enumerate(fl):
        # the SYN and the errors, carried byte for byte behind the outer
        # header (no Ethernet padding: the frames are long enough)
        flow_be[f] = inner_of[bytes(Ether(d.frames[i]).payload)]
        for j, k in enumerate(ERROR_KINDS):
            fr = d.frames[(1 + j) * len(fl) + i]
            err_be[k][f] = inner_of[bytes(Ether(fr).payload)]
    for k in ERROR_KINDS:
        assert err_be[k] == flow_be, k
    assert len(set(flow_be[f] for f in fl[:N4])) == 3, "rr used all three"
    with d.client(timeout=30) as c:
        for f in fl:
            t = c.call("trace_packet", {"src": f[0], "dst": f[1],
                                        "sport": f[2], "dport": f[3],
                                        "proto": "tcp"})
            assert t["service"] == ("web" if f[1] == WEB["vip"] else "web6")
            assert t["existing_flow"] is True, t
            for k in ERROR_KINDS:
                assert ipaddress.ip_address(t["backend"]) == \
                    ipaddress.ip_address(err_be[k][f]), (k, f, t)
        lb = c.call("stats_get")["lb"]
    assert lb["icmp_errors_forwarded"] == len(ERROR_KINDS) * len(fl), lb
    assert lb["flows"] == len(fl), lb


def run(tmp_path, name, conf, frames, expect_drops=None):
    inp = str(tmp_path / (name + "-in.pcap"))
    out = str(tmp_path / (name + "-out.pcap"))
    write_pcap(inp, [bytes(f) for f in frames])
    res = pautil.replay(inp, out, conf, timeout=pautil.REPLAY_TIMEOUT)
    s = check_summary(res, len(frames), expect_drops)
    return s, read_pcap(out)


def echo(src, dst, ident):
    if ":" in src:
        return Ether(src=ROUTER_MAC, dst=APPL_MAC) / IPv6(src=src, dst=dst) / \
            ICMPv6EchoRequest(id=ident, seq=1, data=b"ping" * 8)
    return Ether(src=ROUTER_MAC, dst=APPL_MAC) / IP(src=src, dst=dst) / \
        ICMP(type=8, id=ident, seq=1) / Raw(b"ping" * 8)


@pytest.mark.parametrize("on", [True, False])
def test_echo_requests_to_a_vip_are_answered_unless_icmp_echo_is_false(
        tmp_path, on):
    conf = {"pipeline": dict(RTC1),
            "lb": {"local_addr": LOCAL4, "local_addr6": LOCAL6,
                   "icmp_echo": on, "services": [WEB, WEB6]}}
    frames = [echo("198.51.100.7", WEB["vip"], 1),
              echo("2001:db8:c::7", WEB6["vip"], 2),
              echo("198.51.100.7", "192.0.2.99", 3)]      # not a VIP
    s, out = run(tmp_path, "echo", conf, frames)
    assert len(out) == 3
    assert out[2] == bytes(frames[2])
    assert s["lb"]["icmp_echo_replies"] == (2 if on else 0), s["lb"]
    if not on:
        assert out[:2] == [bytes(f) for f in frames[:2]]
        return
    r4, r6 = Ether(out[0]), Ether(out[1])
    assert r4.dst == ROUTER_MAC and r6.dst == ROUTER_MAC
    assert (r4[IP].src, r4[IP].dst) == (WEB["vip"], "198.51.100.7")
    assert r4[ICMP].type == 0 and r4[ICMP].id == 1
    assert bytes(r4[ICMP].payload)[:32] == b"ping" * 8
    assert checksum(bytes(r4[IP])[:20]) == 0
    assert checksum(bytes(r4[ICMP])) == 0
    assert (r6[IPv6].src, r6[IPv6].dst) == (WEB6["vip"], "2001:db8:c::7")
    assert ICMPv6EchoReply in r6 and r6[ICMPv6EchoReply].id == 2
    raw6 = bytes(r6[IPv6].payload)
    assert in6_chksum(58, r6[IPv6], raw6) == 0


def test_df_packets_over_the_tunnel_mtu_get_frag_needed_and_packet_too_big(
        tmp_path):
    """ipip adds 20 (IPv4) / 40 (IPv6) bytes to a port MTU of 1500: a DF
    TCP packet of 1481 bytes, an IPv6 one of 1461, get ICMP back from the
    VIP with MTU 1480 / 1460 quoting the packet; a non-DF one is only
    dropped. All three count as "mtu"."""
    web = dict(WEB, scheduler="maglev")
    conf = {"pipeline": dict(RTC1),
            "lb": {"local_addr": LOCAL4, "local_addr6": LOCAL6,
                   "services": [web, WEB6]}}
    big4 = Ether(src=ROUTER_MAC, dst=APPL_MAC) / \
        IP(src="198.51.100.7", dst=WEB["vip"], flags="DF") / \
        TCP(sport=1234, dport=80, flags="A") / Raw(b"a" * (1481 - 40))
    big6 = Ether(src=ROUTER_MAC, dst=APPL_MAC) / \
        IPv6(src="2001:db8:c::7", dst=WEB6["vip"]) / \
        TCP(sport=1234, dport=443, flags="A") / Raw(b"b" * (1461 - 60))
    nodf = Ether(src=ROUTER_MAC, dst=APPL_MAC) / \
        IP(src="198.51.100.8", dst=WEB["vip"]) / \
        TCP(sport=1234, dport=80, flags="A") / Raw(b"c" * (1481 - 40))
    fits = Ether(src=ROUTER_MAC, dst=APPL_MAC) / \
        IP(src="198.51.100.9", dst=WEB["vip"], flags="DF") / \
        TCP(sport=1234, dport=80, flags="A") / Raw(b"d" * (1480 - 40))
    frames = [big4, big6, nodf, fits]
    s, out = run(tmp_path, "ptb", conf, frames, {"mtu": 3})
    assert s["icmp_errors"]["icmp_tx_packets"] == 2, s
    assert s["tx_packets"] == 1, s
    assert s["lb"]["icmp_too_big_sent"] == 2 and s["lb"]["mtu"] == 3, s["lb"]
    assert len(out) == 3
    # the ICMP errors leave through the port's ring of generated frames,
    # the tunnelled packet through the pipeline: any order between them
    icmp = [Ether(f) for f in out if Ether(f).haslayer(ICMP) or
            Ether(f).haslayer(ICMPv6PacketTooBig)]
    tunnelled = [f for f in out if not (Ether(f).haslayer(ICMP) or
                                        Ether(f).haslayer(ICMPv6PacketTooBig))]
    assert len(icmp) == 2 and len(tunnelled) == 1, out
    e4 = [e for e in icmp if e.haslayer(ICMP)][0]
    e6 = [e for e in icmp if e.haslayer(ICMPv6PacketTooBig)][0]
    # to the client through the router it came from, from the VIP
    assert e4.dst == ROUTER_MAC and e6.dst == ROUTER_MAC
    assert (e4[IP].src, e4[IP].dst) == (WEB["vip"], "198.51.100.7")
    assert e4[IP].proto == 1 and checksum(bytes(e4[IP])[:20]) == 0
    assert (e4[ICMP].type, e4[ICMP].code, e4[ICMP].nexthopmtu) == (3, 4, 1480)
    assert e4[IP].len == 576
    assert bytes(e4[ICMP])[8:] == bytes(big4[IP])[:548]
    assert checksum(bytes(e4[ICMP])) == 0
    assert (e6[IPv6].src, e6[IPv6].dst) == (WEB6["vip"], "2001:db8:c::7")
    assert ICMPv6PacketTooBig in e6 and e6[ICMPv6PacketTooBig].mtu == 1460
    assert e6[IPv6].plen == 1280 - 40
    raw6 = bytes(e6[IPv6].payload)
    assert raw6[8:] == bytes(big6[IPv6])[:1232]
    assert in6_chksum(58, e6[IPv6], raw6) == 0
    # the packet that fits is tunnelled
    assert outer(tunnelled[0])[1] == bytes(fits[IP])


def test_too_big_messages_are_rate_limited(tmp_path):
    """The bucket holds 50 (then 1000 a second): of 400 too-big DF
    packets replayed at once, most get no ICMP; all count as "mtu"."""
    web = dict(WEB, scheduler="maglev")
    conf = {"pipeline": dict(RTC1),
            "lb": {"local_addr": LOCAL4, "services": [web]}}
    frames = [Ether(src=ROUTER_MAC, dst=APPL_MAC) /
              IP(src="198.51.100.%d" % (1 + k % 200), dst=WEB["vip"],
                 flags="DF") /
              TCP(sport=1000 + k, dport=80, flags="A") / Raw(b"a" * 1460)
              for k in range(400)]
    s, out = run(tmp_path, "rate", conf, frames, {"mtu": 400})
    lb = s["lb"]
    assert lb["icmp_too_big_sent"] + lb["icmp_rate_limited"] == 400, lb
    assert 50 <= lb["icmp_too_big_sent"] < 400, lb
    assert len(out) == lb["icmp_too_big_sent"] == \
        s["icmp_errors"]["icmp_tx_packets"]


def test_mss_clamp_lowers_the_mss_of_syns_only(tmp_path):
    web = dict(WEB, scheduler="maglev", mss_clamp=1360)
    conf = {"pipeline": dict(RTC1),
            "lb": {"local_addr": LOCAL4, "services": [web]}}

    def seg(flags, mss):
        return Ether(src=ROUTER_MAC, dst=APPL_MAC) / \
            IP(src="198.51.100.7", dst=WEB["vip"], flags="DF") / \
            TCP(sport=1234, dport=80, flags=flags,
                options=[("NOP", None), ("MSS", mss), ("SAckOK", b"")])
    frames = [seg("S", 9000), seg("S", 1200), seg("A", 9000)]
    s, out = run(tmp_path, "mss", conf, frames)
    assert s["lb"]["mss_clamped"] == 1
    got = []
    for fr in out:
        e = Ether(fr)
        inner = IP(bytes(e[IP].payload))
        got.append(dict(inner[TCP].options)["MSS"])
        tcp = bytes(inner[TCP])
        assert in4_ok(inner, tcp)
    assert got == [1360, 1200, 9000]


def in4_ok(ip, tcp):
    from scapy.layers.inet import in4_chksum
    return in4_chksum(6, ip, tcp) == 0
