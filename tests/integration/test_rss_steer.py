# SPDX-License-Identifier: BSD-3-Clause
"""RSS steering of quoted ICMP errors in rtc mode with two workers and two
RX queues (docs/architecture.md "Which lcore gets an error"), through the
real daemon, live.

No virtual device of this DPDK spreads packets by Toeplitz RSS (net_pcap,
net_af_packet, net_tap report none or hash as the kernel does), so this
test is the NIC: the port is a net_pcap device with two RX queues, one
per veth (rx_iface), and "rss_steer": "toeplitz" tells the daemon to
model the queues as a NIC with the appliance's symmetric key and the
default RETA (entry i -> queue i % 2, 128 entries) would fill them. The
test computes that same Toeplitz hash in Python (checked against
Microsoft's verification vector) and sends each frame into the veth of
its queue: the SYNs of 100 flows (70 IPv4, 30 IPv6) to their queue, then
for each flow an ICMP error (fragmentation needed / packet too big) from
a router to the VIP, on the queue of the error's own outer header, as a
NIC would. About half the errors land on the other worker than their
flow. The service is rr, so only the flow table of the flow's worker
knows its backend (two workers, two cursors). Checked:
- every error leaves to the backend of its flow (the ipip outer
  destination of the error equals the SYN's);
- stats_get "handover" counts exactly the errors whose queue is not their
  flow's (packets and received), no drop, ports[].rss_steer "toeplitz";
- with "rss_steer": "off" (the negative control) nothing is handed over
  and some errors reach another backend than their flow's."""
import ipaddress
import json
import os
import subprocess
import time

import pytest
from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.inet6 import ICMPv6PacketTooBig, IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import pautil
from pautil import DAEMON, Daemon, read_pcap, unique, write_json
from netpair import veth_namespace

SENDER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "send_frames.py")
SYM_KEY = bytes([0x6d, 0x5a] * 20)       # lib/port pa_port_sym_rss_key
RETA = 128
QUEUES = 2
# daemon end, test end of each veth: RX queue 0, RX queue 1, the lan port
VETHS = (("i13q0", "i13q0p"), ("i13q1", "i13q1p"), ("i13l", "i13lp"))
CLIENT_MAC = "02:00:00:00:13:aa"
WEB = {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "scheduler": "rr", "forward": "ipip",
       "backends": [{"addr": "10.1.0.%d" % i} for i in (1, 2, 3)]}
WEB6 = {"name": "web6", "vip": "2001:db8:10::10", "port": 443,
        "proto": "tcp", "scheduler": "rr", "forward": "ipip",
        "backends": [{"addr": "2001:db8:1::%d" % i} for i in (1, 2, 3)]}
N4, N6 = 70, 30


def toeplitz(key, data):
    """The Toeplitz hash (Microsoft RSS) of bytes @data under @key."""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (kbits - 32 - i)) & 0xffffffff
    return h


def rss_queue(src, dst, sport=None, dport=None):
    """The queue the modelled NIC gives a packet: TCP over addresses and
    ports, ICMP over the addresses."""
    data = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    if sport is not None:
        data += sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return (toeplitz(SYM_KEY, data) % RETA) % QUEUES


def test_python_toeplitz_is_the_nic_hash():
    ms_key = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcb"
                           "ae7b30b477cb2da38030f20c6a42b73bbeac01fa")
    data = ipaddress.ip_address("66.9.149.187").packed + \
        ipaddress.ip_address("161.142.100.80").packed + \
        (2794).to_bytes(2, "big") + (1766).to_bytes(2, "big")
    assert toeplitz(ms_key, data) == 0x51ccc178


def flows():
    """(client, vip, cport, vport, router) of the 100 flows."""
    return [("198.51.100.%d" % (1 + k), WEB["vip"], 20000 + k, 80,
             "203.0.113.%d" % (1 + k % 40)) for k in range(N4)] + \
        [("2001:db8:c::%x" % (1 + k), WEB6["vip"], 40000 + k, 443,
          "2001:db8:ff::%x" % (1 + k % 20)) for k in range(N6)]


def ip_layer(src, dst):
    if ":" in src:
        return IPv6(src=src, dst=dst)
    return IP(src=src, dst=dst, flags="DF")


def syn(client, vip, cport, vport, _router):
    return Ether(src=CLIENT_MAC, dst="02:00:00:00:13:01") / \
        ip_layer(client, vip) / \
        TCP(sport=cport, dport=vport, flags="S", seq=1000) / Raw(b"x" * 8)


def quoted_error(client, vip, cport, vport, router):
    quoted = ip_layer(vip, client) / TCP(sport=vport, dport=cport,
                                         flags="SA", seq=7, ack=1001) / \
        Raw(b"y" * 1300)
    if ":" in vip:
        err = IPv6(src=router, dst=vip) / ICMPv6PacketTooBig(mtu=1280) / \
            bytes(quoted)[:1232]
    else:
        err = IP(src=router, dst=vip) / \
            ICMP(type=3, code=4, nexthopmtu=1400) / bytes(quoted)[:548]
    return Ether(src=CLIENT_MAC, dst="02:00:00:00:13:01") / err


def outer(fr):
    """(outer destination, inner bytes) of an ipip/ip6ip6 frame."""
    e = Ether(fr)
    if IP in e and e[IP].proto == 4:
        return e[IP].dst, bytes(e[IP].payload)
    assert IPv6 in e and e[IPv6].nh == 41, e.summary()
    return e[IPv6].dst, bytes(e[IPv6].payload)


def sh(*args, timeout=60):
    return subprocess.run(list(args), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def netns():
    with veth_namespace("i13rss", VETHS, "the RSS steering test",
                        offload_off=False) as ns:
        yield ns


def send(ns, workdir, iface, frames, tag):
    path = os.path.join(workdir, "frames-%s.json" % tag)
    with open(path, "w") as f:
        json.dump([bytes(fr).hex() for fr in frames], f)
    r = sh("ip", "netns", "exec", ns, pautil.PYTHON, SENDER, iface, path,
           "0.001", timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]


# libpcap's ring on an rx_iface is small, and the daemon's workers share
# two busy CPUs: send a chunk, then wait until the port took it (or the
# kernel counted it missed: rx_missed; the checks then skip that flow)
CHUNK = 8


def send_all(d, ns, workdir, per_queue, tag):
    """Send per_queue[q] (frames) into RX queue q's veth, a chunk at a
    time, each chunk once the port has received the one before."""
    base = d.call("stats_get")["ports"]["wan"]["rx_packets"]
    for q, frames in enumerate(per_queue):
        for i in range(0, len(frames), CHUNK):
            part = frames[i:i + CHUNK]
            send(ns, workdir, VETHS[q][1], part, "%s-%d-%d" % (tag, q, i))
            base += len(part)
            wait_stats(d, lambda s, n=base: s["ports"]["wan"]["rx_packets"]
                       + s["ports"]["wan"]["rx_missed"] >= n,
                       "%d frames received" % base)
    # and through the data path
    return wait_stats(d, lambda s: s["rx_packets"] == s["tx_packets"] +
                      s["dropped_packets"], "the frames through")


def wait_stats(d, pred, what, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        st = d.call("stats_get")
        if pred(st):
            return st
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for %s: %s\n%s" % (
                what, json.dumps(st)[:3000], d.describe()))
        time.sleep(0.1)


@pytest.mark.parametrize("steer", ["toeplitz", "off"])
def test_quoted_errors_of_100_flows_reach_their_flows_backends_rtc_2_queues(
        netns, tmp_path, steer):
    wan_out = str(tmp_path / "wan-out.pcap")
    lan_out = str(tmp_path / "lan-out.pcap")
    sock = unique("i13rss", ".sock")
    conf = write_json(str(tmp_path / "rss.json"), {
        "ports": [
            {"name": "wan", "rx_queues": QUEUES, "peer": "lan",
             "rss_steer": steer,
             "devargs": "net_pcap0,rx_iface=%s,rx_iface=%s,tx_pcap=%s" % (
                 VETHS[0][0], VETHS[1][0], wan_out)},
            {"name": "lan", "peer": "wan",
             "devargs": "net_pcap1,rx_iface=%s,tx_pcap=%s" % (
                 VETHS[2][0], lan_out)},
        ],
        "pipeline": {"mode": "rtc", "lcores": {"worker": [1, 2]}},
        "lb": {"local_addr": "192.0.2.254", "local_addr6": "2001:db8::fe",
               "flow_table": {"size": 8192, "tcp_timeout": 3600},
               "services": [WEB, WEB6]},
        "metrics": None,
    })
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "--", "-c", conf, "-s", sock], sock,
               str(tmp_path), "rss-" + steer,
               prefix=("ip", "netns", "exec", netns))
    fl = flows()
    fq = [rss_queue(c, v, cp, vp) for c, v, cp, vp, _ in fl]
    eq = [rss_queue(r, v) for _c, v, _cp, _vp, r in fl]
    moved = sum(1 for a, b in zip(fq, eq) if a != b)
    assert 20 <= moved <= 80, "the errors' queues are not mixed: %d" % moved
    try:
        d.wait_ready(90)
        st = d.call("stats_get")
        assert st["ports"]["wan"]["rss_steer"] == steer, st["ports"]["wan"]
        assert st["ports"]["wan"]["rx_queues"] == QUEUES
        # the flows first, each on its queue; then, once the appliance
        # holds every flow, the errors on their own outer header's queue
        send_all(d, netns, str(tmp_path),
                 [[syn(*f) for f, x in zip(fl, fq) if x == q]
                  for q in range(QUEUES)], "syn")
        send_all(d, netns, str(tmp_path),
                 [[quoted_error(*f) for f, x in zip(fl, eq) if x == q]
                  for q in range(QUEUES)], "err")
        st = send_all(d, netns, str(tmp_path), [[], []], "end")
    finally:
        rc = d.stop()
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())
    assert st["dropped_packets"] == 0, st["drops"]
    # what left (the lan port's TX): the SYNs and the errors, ipip
    inner_of = {}
    for fr in read_pcap(lan_out):
        dst, inner = outer(fr)
        inner_of[inner] = dst
    missed = st["ports"]["wan"]["rx_missed"]
    assert len(inner_of) == 2 * len(fl) - missed, (len(inner_of), missed)
    assert st["lb"]["icmp_errors_forwarded"] == len(fl) - sum(
        1 for f in fl if bytes(quoted_error(*f).payload) not in inner_of)
    # the flows whose SYN and error both arrived (all of them, unless the
    # kernel missed some frames on the veths)
    flow_be, err_be = {}, {}
    moved = 0
    for f, a, b in zip(fl, fq, eq):
        s_in = bytes(syn(*f).payload)
        e_in = bytes(quoted_error(*f).payload)
        if e_in in inner_of and a != b:
            moved += 1
        if s_in in inner_of and e_in in inner_of:
            flow_be[f] = inner_of[s_in]
            err_be[f] = inner_of[e_in]
    assert len(flow_be) >= 90, "%d frames missed on the veths" % missed
    v4_backends = set(flow_be[f] for f in fl[:N4] if f in flow_be)
    assert len(v4_backends) == 3, "rr used all three: %s" % v4_backends
    wrong = [f for f in flow_be if err_be[f] != flow_be[f]]
    ho = st["handover"]
    if steer == "toeplitz":
        assert not wrong, "%d errors went to another backend than their " \
            "flow's, e.g. %s" % (len(wrong), wrong[:3])
        assert ho == {"packets": moved, "received": moved}, (ho, moved)
        per = [lc["handover_packets"] for lc in st["lcores"].values()]
        assert sum(per) == moved and all(p > 0 for p in per), st["lcores"]
    else:
        assert ho == {"packets": 0, "received": 0}, ho
        assert wrong, "without steering some errors must miss their flow " \
            "(rr, two workers): the test would not see a regression"


def test_fnat_replies_reach_their_flows_worker_rtc_2_queues(netns, tmp_path):
    """Full NAT, rtc with two workers, one RX queue each: the flows are
    made on both (their SYNs sent to either queue), each takes a port of
    its worker's share of the pool (20000-20007, 20008-20015); then the
    backend's replies to every port of the range all arrive on queue 0.
    The worker of queue 0 hands those of the other's share to its
    hand-over ring (by port: no RSS model needed, rss_steer "off"); every
    reply to a port in use leaves translated to the client that holds the
    port, the others are dropped as fnat_unmatched."""
    wan_out = str(tmp_path / "wan-out.pcap")
    lan_out = str(tmp_path / "lan-out.pcap")
    sock = unique("i13fnat", ".sock")
    pool, backend, vip = "198.51.100.50", "10.1.0.7", "192.0.2.10"
    conf = write_json(str(tmp_path / "fnat.json"), {
        "ports": [
            {"name": "wan", "rx_queues": QUEUES, "peer": "lan",
             "rss_steer": "off",
             "devargs": "net_pcap0,rx_iface=%s,rx_iface=%s,tx_pcap=%s" % (
                 VETHS[0][0], VETHS[1][0], wan_out)},
            {"name": "lan", "peer": "wan",
             "devargs": "net_pcap1,rx_iface=%s,tx_pcap=%s" % (
                 VETHS[2][0], lan_out)},
        ],
        "pipeline": {"mode": "rtc", "lcores": {"worker": [1, 2]}},
        "lb": {"fnat": {"addrs": [pool], "ports": "20000-20015"},
               "flow_table": {"size": 8192, "tcp_timeout": 3600},
               "services": [{"name": "web", "vip": vip, "port": 80,
                             "proto": "tcp", "forward": "fnat",
                             "backends": [{"addr": backend,
                                           "port": 8080}]}]},
        "metrics": None,
    })
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "--", "-c", conf, "-s", sock], sock,
               str(tmp_path), "rss-fnat",
               prefix=("ip", "netns", "exec", netns))

    def client_syn(i):
        return Ether(src=CLIENT_MAC, dst="02:00:00:00:13:bb") / \
            IP(src="203.0.113.%d" % (1 + i), dst=vip) / \
            TCP(sport=41000 + i, dport=80, flags="S", seq=1000 + i)

    def reply(p):
        return Ether(src="02:00:00:00:13:cc", dst="02:00:00:00:13:bb") / \
            IP(src=backend, dst=pool) / \
            TCP(sport=8080, dport=20000 + p, flags="SA", seq=5) / \
            Raw(bytes([p]) * 4)

    n = 12
    try:
        d.wait_ready(90)
        send_all(d, netns, str(tmp_path),
                 [[client_syn(i) for i in range(0, n, 2)],
                  [client_syn(i) for i in range(1, n, 2)]], "syn")
        st = send_all(d, netns, str(tmp_path),
                      [[reply(p) for p in range(16)], []], "reply")
    finally:
        rc = d.stop()
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())
    missed = st["ports"]["wan"]["rx_missed"]
    if missed:
        pytest.skip("the kernel missed %d frames on the veths" % missed)
    out = [Ether(fr) for fr in read_pcap(lan_out)]
    fwd = [p for p in out if p[IP].dst == backend]
    rep = [p for p in out if p[IP].src == vip]
    assert len(fwd) == n and len(rep) == n, [p.summary() for p in out]
    client_of = {p[TCP].sport: p[TCP].seq - 1000 for p in fwd}
    # both workers' shares in use
    assert any(q < 20008 for q in client_of) and \
        any(q >= 20008 for q in client_of), sorted(client_of)
    for p in rep:
        pport = 20000 + bytes(p[TCP].payload)[0]
        i = client_of[pport]
        assert (p[IP].dst, p[TCP].dport) == ("203.0.113.%d" % (1 + i),
                                             41000 + i), p.summary()
    assert st["drops"]["fnat_unmatched"] == 16 - n, st["drops"]
    assert st["dropped_packets"] == 16 - n, st["drops"]
    # the 8 replies of the other worker's share changed worker
    assert st["handover"] == {"packets": 8, "received": 8}, st["handover"]
