# SPDX-License-Identifier: BSD-3-Clause
"""Full NAT (forward "fnat", lb.fnat) in lab replay mode, byte for byte:
the client's packets leave from a pool address and port to the backend,
the backend's replies to that address and port come back from the VIP
and service port to the client, every checksum valid (scapy recomputes
them); what is not a flow's reply is dropped and counted; and with the
lb stage on two lcores, each reply reaches the lcore that holds its flow
(the pool's ports are shared among the lb lcores by range).

With one lb lcore and one pool address per family, ports are handed out
in order (the first flow of a family gets the range's first port, the
next the second...), so the replies can be written before the run."""

import pytest

import pautil
from pautil import RTC1, check_summary, read_pcap, write_pcap

scapy = pytest.importorskip("scapy.all")
from scapy.all import IP, IPv6, TCP, UDP, Ether, Raw  # noqa: E402

CLIENT_MAC = "02:00:00:00:00:01"
BACKEND_MAC = "02:00:00:00:00:02"
PORT_MAC = "02:00:00:00:00:fe"

POOL4 = "198.51.100.50"
POOL6 = "2001:db8:5::50"
LO = 20000

WEB4 = {"name": "web4", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
        "forward": "fnat",
        "backends": [{"addr": "10.1.0.7", "port": 8080}]}
DNS4 = {"name": "dns4", "vip": "192.0.2.10", "port": 53, "proto": "udp",
        "forward": "fnat", "backends": [{"addr": "10.1.0.8", "port": 5353}]}
WEB6 = {"name": "web6", "vip": "2001:db8:ffff::10", "port": 443,
        "proto": "tcp", "forward": "fnat",
        "backends": [{"addr": "2001:db8:1::7"}]}


def conf(services, pipeline=RTC1, ports="20000-20999"):
    return {"pipeline": pipeline,
            "lb": {"icmp_echo": False,
                   "fnat": {"addrs": [POOL4, POOL6], "ports": ports},
                   "services": services}}


def client(fam, src, dst, sport, dport, proto, flags="S", payload=b""):
    ip = IP(src=src, dst=dst) if fam == 4 else IPv6(src=src, dst=dst)
    l4 = TCP(sport=sport, dport=dport, flags=flags, seq=1000 + sport) \
        if proto == "tcp" else UDP(sport=sport, dport=dport)
    return Ether(src=CLIENT_MAC, dst=PORT_MAC) / ip / l4 / Raw(payload)


def reply(fam, src, dst, sport, dport, proto, flags="SA", payload=b""):
    ip = IP(src=src, dst=dst) if fam == 4 else IPv6(src=src, dst=dst)
    l4 = TCP(sport=sport, dport=dport, flags=flags, seq=5000,
             ack=1) if proto == "tcp" else UDP(sport=sport, dport=dport)
    return Ether(src=BACKEND_MAC, dst=PORT_MAC) / ip / l4 / Raw(payload)


def csum_ok(fr):
    """Every checksum of frame fr is what scapy computes afresh."""
    p = Ether(fr)
    q = p.copy()
    for layer in (IP, TCP, UDP):
        if q.haslayer(layer):
            if layer is UDP and q.haslayer(IP) and p[UDP].chksum == 0:
                continue
            del q[layer].chksum
    if q.haslayer(IP):
        q[IP].len = p[IP].len
    return bytes(Ether(bytes(q))) == bytes(p)


def run(tmp_path, name, cfg, frames, expect_drops):
    inp = str(tmp_path / (name + "-in.pcap"))
    out = str(tmp_path / (name + "-out.pcap"))
    drops = str(tmp_path / (name + "-drops.pcap"))
    write_pcap(inp, [bytes(f) for f in frames])
    res = pautil.replay(inp, out, cfg, drops=drops,
                        timeout=pautil.REPLAY_TIMEOUT)
    s = check_summary(res, len(frames), expect_drops)
    return s, [Ether(f) for f in read_pcap(out)], read_pcap(drops)


def load(p):
    """The L4 payload's bytes (whatever scapy dissected them as)."""
    return bytes((p[TCP] if p.haslayer(TCP) else p[UDP]).payload)


def ips(p):
    ip = p[IP] if p.haslayer(IP) else p[IPv6]
    l4 = p[TCP] if p.haslayer(TCP) else p[UDP]
    return ip.src, ip.dst, l4.sport, l4.dport


def test_fnat_both_ways_byte_for_byte(tmp_path):
    """Client packets of IPv4 TCP and UDP and IPv6 TCP flows leave from
    the pool address of their family, port by port in order, to the
    backend and its port, payload untouched; the backends' replies to
    those ports come back from the VIP and service port to the clients;
    checksums valid throughout."""
    flows = [(4, "203.0.113.%d" % (1 + i), WEB4, "tcp") for i in range(5)] + \
        [(4, "203.0.113.%d" % (50 + i), DNS4, "udp") for i in range(3)] + \
        [(6, "2001:db8:77::%x" % (1 + i), WEB6, "tcp") for i in range(4)]
    frames, want_fwd, want_rep = [], [], []
    next_port = {4: LO, 6: LO}
    for k, (fam, src, svc, proto) in enumerate(flows):
        sport = 40000 + k
        be = svc["backends"][0]
        bport = be.get("port", svc["port"])
        payload = bytes([k]) * (10 + k)
        frames.append(client(fam, src, svc["vip"], sport, svc["port"],
                             proto, payload=payload))
        pport = next_port[fam]
        next_port[fam] += 1
        pool = POOL4 if fam == 4 else POOL6
        want_fwd.append(((pool, be["addr"], pport, bport), payload))
        want_rep.append((svc["vip"], src, svc["port"], sport))
    for k, (fam, src, svc, proto) in enumerate(flows):
        (pool, baddr, pport, bport), _ = want_fwd[k]
        frames.append(reply(fam, baddr, pool, bport, pport, proto,
                            payload=bytes([0x80 + k]) * 7))
    s, out, _ = run(tmp_path, "fnat", conf([WEB4, DNS4, WEB6]), frames, {})
    assert len(out) == 2 * len(flows)
    for k in range(len(flows)):
        fwd, rep = out[k], out[len(flows) + k]
        assert ips(fwd) == want_fwd[k][0], (k, fwd.summary())
        assert load(fwd) == want_fwd[k][1]
        assert csum_ok(bytes(fwd)), fwd.show(dump=True)
        assert ips(rep) == want_rep[k], (k, rep.summary())
        assert load(rep) == bytes([0x80 + k]) * 7
        assert csum_ok(bytes(rep)), rep.show(dump=True)
    f = s["lb"]["fnat"]
    assert f["flows_created"] == len(flows) and f["replies"] == len(flows)
    assert f["flows"] == len(flows), f
    pool = {e["addr"]: e for e in f["pool"]}
    assert pool[POOL4]["in_use"] == 8 and pool[POOL6]["in_use"] == 4
    assert pool[POOL4]["ports"] == 1000


def test_fnat_drops_what_is_no_flows_reply(tmp_path):
    """To a pool port: from another address, from the backend's other
    port, to a port no flow holds: dropped, reason fnat_unmatched; a
    fragment to an fnat service: fnat_fragment; the pool exhausted:
    fnat_no_port. Each in the drops capture."""
    frames = [client(4, "203.0.113.1", WEB4["vip"], 40000, 80, "tcp"),
              client(4, "203.0.113.3", WEB4["vip"], 40002, 80, "tcp"),
              client(4, "203.0.113.4", WEB4["vip"], 40003, 80, "tcp"),
              reply(4, "10.1.0.99", POOL4, 8080, LO, "tcp"),
              reply(4, "10.1.0.7", POOL4, 8081, LO, "tcp"),
              # the IPv6 pool address: no flow holds its ports
              reply(6, "2001:db8:1::7", POOL6, 443, LO, "tcp"),
              Ether(src=CLIENT_MAC, dst=PORT_MAC) /
              IP(src="203.0.113.2", dst=WEB4["vip"], flags="MF", id=7) /
              TCP(sport=40001, dport=80) / Raw(b"x" * 32)]
    # (one burst: the clients' packets are decided before the replies)
    s, out, drops = run(tmp_path, "fnat-drops",
                        conf([WEB4, WEB6], ports="20000-20001"), frames,
                        {"fnat_unmatched": 3, "fnat_fragment": 1,
                         "fnat_no_port": 1})
    assert len(out) == 2 and len(drops) == 5
    f = s["lb"]["fnat"]
    assert f["reply_unmatched"] == 3 and f["no_port"] == 1 and \
        f["fragments"] == 1, f


def test_fnat_replies_reach_the_lcore_of_their_flow(tmp_path):
    """Two lb lcores (rx and classify on one lcore, lb on two): flows
    spread over them by hash, each takes a port of its lcore's share
    (20000-20007, 20008-20015); a reply's own hash would send it to
    either, yet every reply to a port in use comes back translated to the
    client that holds the port (the ring into lb steers it), and the
    others are dropped as unmatched."""
    pipe = {"mode": "pipeline",
            "lcores": {"rx": [1], "classify": [1], "lb": [2, 3], "tx": [1]}}
    n = 12
    frames = [client(4, "203.0.113.%d" % (1 + i), WEB4["vip"], 41000 + i,
                     80, "tcp") for i in range(n)]
    # replies to every port of the range, from the backend, each saying
    # which port it was sent to
    frames += [reply(4, "10.1.0.7", POOL4, 8080, LO + p, "tcp",
                     payload=bytes([p]) * 4) for p in range(16)]
    s, out, _ = run(tmp_path, "fnat-steer",
                    conf([WEB4], pipeline=pipe, ports="20000-20015"),
                    frames, {"fnat_unmatched": 16 - n})
    fwd = [p for p in out if ips(p)[1] == "10.1.0.7"]
    rep = [p for p in out if ips(p)[0] == WEB4["vip"]]
    assert len(fwd) == n and len(rep) == n
    client_of = {}
    for p in fwd:
        src, _, pport, _ = ips(p)
        assert src == POOL4
        client_of[pport] = p[TCP].seq - 1000     # the client's port
    # both lcores' shares in use
    assert any(q < LO + 8 for q in client_of) and \
        any(q >= LO + 8 for q in client_of), sorted(client_of)
    for p in rep:
        assert csum_ok(bytes(p))
        _, cl, _, cport = ips(p)
        pport = LO + load(p)[0]
        assert cport == client_of[pport], (pport, cport, client_of)
        assert cl == "203.0.113.%d" % (1 + cport - 41000)
    assert s["lb"]["fnat"]["replies"] == n


WEB6ON4 = {"name": "web6on4", "vip": "2001:db8:ffff::20", "port": 80,
           "proto": "tcp", "forward": "fnat",
           "backends": [{"addr": "10.1.0.9", "port": 8080}]}
DNS4ON6 = {"name": "dns4on6", "vip": "192.0.2.20", "port": 53,
           "proto": "udp", "forward": "fnat",
           "backends": [{"addr": "2001:db8:1::9", "port": 5353}]}


def test_fnat_other_family_backends_translated_both_ways(tmp_path):
    """An IPv6 VIP on an IPv4 backend and an IPv4 VIP on an IPv6 one
    (RFC 7915): the client's packet leaves as the backend's family, from
    the pool address of that family; the reply comes back in the
    client's family from the VIP; payloads untouched, checksums valid
    (the UDP checksum an IPv4 client left out is computed for IPv6)."""
    c6 = client(6, "2001:db8:77::1", WEB6ON4["vip"], 40000, 80, "tcp",
                payload=b"hello over 6")
    c4 = client(4, "203.0.113.9", DNS4ON6["vip"], 40001, 53, "udp",
                payload=b"query over 4")
    c4[UDP].chksum = 0
    r4 = reply(4, "10.1.0.9", POOL4, 8080, LO, "tcp", payload=b"hi 4")
    r6 = reply(6, "2001:db8:1::9", POOL6, 5353, LO, "udp",
               payload=b"answer 6")
    s, out, _ = run(tmp_path, "fnat-xlat", conf([WEB6ON4, DNS4ON6]),
                    [c6, c4, r4, r6], {})
    assert len(out) == 4
    f6, f4, b6, b4 = out
    assert f6.haslayer(IP) and not f6.haslayer(IPv6)
    assert ips(f6) == (POOL4, "10.1.0.9", LO, 8080) and \
        load(f6) == b"hello over 6"
    assert f4.haslayer(IPv6) and ips(f4) == (POOL6, "2001:db8:1::9", LO,
                                             5353)
    assert load(f4) == b"query over 4" and f4[UDP].chksum != 0
    assert b6.haslayer(IPv6) and ips(b6) == (WEB6ON4["vip"],
                                             "2001:db8:77::1", 80, 40000)
    assert load(b6) == b"hi 4"
    assert b4.haslayer(IP) and ips(b4) == (DNS4ON6["vip"], "203.0.113.9",
                                           53, 40001)
    assert load(b4) == b"answer 6"
    for p in out:
        assert csum_ok(bytes(p)), p.show(dump=True)
    assert s["lb"]["fnat"]["replies"] == 2


def proxy_v2(fam, src, dst, sport, dport):
    import socket
    import struct
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    addrs = socket.inet_pton(af, src) + socket.inet_pton(af, dst) + \
        struct.pack("!HH", sport, dport)
    return b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11 if fam == 4
                                              else 0x21]) + \
        struct.pack("!H", len(addrs)) + addrs


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_fnat_proxy_header_and_sequence_shift(tmp_path, version):
    """proxy_protocol: the client's first data segment reaches the
    backend behind the PROXY header (the client's address and port, the
    VIP's), its sequence number unchanged; later segments shifted by the
    header's length; the backend's acknowledgements shifted back for the
    client; a retransmission of the first segment carries the header
    again."""
    svc = dict(WEB4, proxy_protocol=version)
    cl, cport, isn = "203.0.113.7", 40123, 7000

    def seg(flags, seq, ack=0, data=b""):
        return Ether(src=CLIENT_MAC, dst=PORT_MAC) / \
            IP(src=cl, dst=WEB4["vip"]) / \
            TCP(sport=cport, dport=80, flags=flags, seq=seq, ack=ack) / \
            Raw(data)

    def bseg(flags, seq, ack, data=b""):
        return Ether(src=BACKEND_MAC, dst=PORT_MAC) / \
            IP(src="10.1.0.7", dst=POOL4) / \
            TCP(sport=8080, dport=LO, flags=flags, seq=seq, ack=ack) / \
            Raw(data)

    hdr = ("PROXY TCP4 %s %s %d 80\r\n" % (cl, WEB4["vip"], cport)).encode() \
        if version == "v1" else proxy_v2(4, cl, WEB4["vip"], cport, 80)
    h = len(hdr)
    frames = [seg("S", isn),
              bseg("SA", 9000, isn + 1),
              seg("A", isn + 1, 9001),
              seg("PA", isn + 1, 9001, b"GET / HTTP/1.0\r\n\r\n"),
              seg("PA", isn + 1, 9001, b"GET / HTTP/1.0\r\n\r\n"),
              seg("PA", isn + 19, 9001, b"more"),
              bseg("A", 9001, isn + 1 + h + 19 + 4)]
    s, out, _ = run(tmp_path, "fnat-proxy-" + version, conf([svc]), frames,
                    {})
    assert len(out) == len(frames)
    syn, synack, ack, d1, d1again, d2, back = out
    assert syn[TCP].seq == isn
    assert synack[TCP].ack == isn + 1
    for p in (d1, d1again):
        assert p[TCP].seq == isn + 1
        assert load(p) == hdr + b"GET / HTTP/1.0\r\n\r\n", load(p)
    assert d2[TCP].seq == isn + 19 + h and load(d2) == b"more"
    assert back[TCP].ack == isn + 1 + 19 + 4
    assert ips(back) == (WEB4["vip"], cl, 80, cport)
    for p in out:
        assert csum_ok(bytes(p)), p.show(dump=True)


def test_fnat_icmp_errors_translated_both_ways(tmp_path):
    """A backend's ICMP error about an fnat packet (port unreachable,
    quoting pool -> backend) reaches the client as one about its own
    packet (client -> VIP) from the VIP; a client's error about a reply
    (quoting VIP -> client) reaches the backend as one about its own
    packet (backend -> pool) from the pool address; ICMP checksums
    valid."""
    from scapy.all import ICMP, IPerror, UDPerror
    c = client(4, "203.0.113.5", DNS4["vip"], 40500, 53, "udp",
               payload=b"q")
    be_err = Ether(src=BACKEND_MAC, dst=PORT_MAC) / \
        IP(src="10.1.0.8", dst=POOL4) / ICMP(type=3, code=3) / \
        IPerror(src=POOL4, dst="10.1.0.8") / \
        UDPerror(sport=LO, dport=5353) / Raw(b"q")
    cl_err = Ether(src=CLIENT_MAC, dst=PORT_MAC) / \
        IP(src="203.0.113.5", dst=DNS4["vip"]) / ICMP(type=3, code=1) / \
        IPerror(src=DNS4["vip"], dst="203.0.113.5") / \
        UDPerror(sport=53, dport=40500) / Raw(b"a")
    s, out, _ = run(tmp_path, "fnat-icmp", conf([DNS4]),
                    [c, be_err, cl_err], {})
    assert len(out) == 3
    to_client, to_backend = out[1], out[2]
    assert (to_client[IP].src, to_client[IP].dst) == (DNS4["vip"],
                                                      "203.0.113.5")
    q = to_client[IPerror]
    assert (q.src, q.dst, to_client[UDPerror].sport,
            to_client[UDPerror].dport) == ("203.0.113.5", DNS4["vip"],
                                           40500, 53)
    assert (to_backend[IP].src, to_backend[IP].dst) == (POOL4, "10.1.0.8")
    q = to_backend[IPerror]
    assert (q.src, q.dst, to_backend[UDPerror].sport,
            to_backend[UDPerror].dport) == ("10.1.0.8", POOL4, 5353, LO)
    for p in (to_client, to_backend):
        raw = bytes(p[ICMP])
        x = ICMP(raw)
        del x.chksum
        assert bytes(ICMP(bytes(x)))[2:4] == raw[2:4], "ICMP checksum"
    assert s["lb"]["icmp_errors_forwarded"] == 2
