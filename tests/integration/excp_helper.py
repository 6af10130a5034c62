# SPDX-License-Identifier: BSD-3-Clause
"""Run inside a network namespace by test_excp.py (no ping binary here):
  ping ADDR COUNT          ICMP echo over a raw socket; prints JSON
                           {"sent", "received", "rtt_ms": [...]}
  ping6 ADDR%IFACE COUNT   the same over ICMPv6 (link-local with its
                           interface), what `ping -6 ADDR%IFACE` does
  serve ADDR PORT          accept one TCP connection, echo until EOF
  connect ADDR PORT BYTES  send BYTES over TCP, expect them echoed;
                           prints JSON {"echoed": N, "local": "addr"}
  flood IFACE DMAC ADDR N  N UDP frames to ADDR from AF_PACKET on IFACE
  ipip IFACE VIP PORT N    N UDP datagrams to VIP:PORT, catch the IPIP
                           packets arriving on IFACE (AF_PACKET), answer
                           the first with an ICMP fragmentation needed
                           to its outer source; prints JSON {"sent",
                           "ipip", "outer_src", "outer_dst", "icmp_sent"}
"""

import json
import os
import select
import socket
import struct
import sys
import time


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def ping(addr, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xffff
    rtts, got = [], 0
    for seq in range(count):
        body = struct.pack("!d", time.monotonic()) + b"pktaccel" * 4
        h = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        h = struct.pack("!BBHHH", 8, 0, csum(h + body), ident, seq)
        t0 = time.monotonic()
        s.sendto(h + body, (addr, 0))
        deadline = t0 + 2.0
        while time.monotonic() < deadline:
            r, _, _ = select.select([s], [], [], deadline - time.monotonic())
            if not r:
                break
            pkt, src = s.recvfrom(2048)
            ihl = (pkt[0] & 15) * 4
            t, _, _, i, q = struct.unpack("!BBHHH", pkt[ihl:ihl + 8])
            if src[0] == addr and t == 0 and i == ident and q == seq:
                got += 1
                rtts.append((time.monotonic() - t0) * 1000.0)
                break
        time.sleep(0.1)
    print(json.dumps({"sent": count, "received": got, "rtt_ms": rtts}))


def ping6(addr, count):
    host, _, ifname = addr.partition("%")
    sa = (host, 0, 0, socket.if_nametoindex(ifname) if ifname else 0)
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    ident = os.getpid() & 0xffff
    rtts, got = [], 0
    for seq in range(count):
        body = struct.pack("!d", time.monotonic()) + b"pktaccel" * 4
        # the kernel computes an ICMPv6 raw socket's checksum
        h = struct.pack("!BBHHH", 128, 0, 0, ident, seq)
        t0 = time.monotonic()
        s.sendto(h + body, sa)
        deadline = t0 + 5.0
        while time.monotonic() < deadline:
            r, _, _ = select.select([s], [], [], deadline - time.monotonic())
            if not r:
                break
            pkt, src = s.recvfrom(2048)
            t, _, _, i, q = struct.unpack("!BBHHH", pkt[:8])
            if src[0].split("%")[0] == host and t == 129 \
                    and i == ident and q == seq:
                got += 1
                rtts.append((time.monotonic() - t0) * 1000.0)
                break
        time.sleep(0.1)
    print(json.dumps({"sent": count, "received": got, "rtt_ms": rtts}))


def serve(addr, port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    print("listening", flush=True)
    ls.settimeout(30)
    c, _ = ls.accept()
    c.settimeout(30)
    while True:
        b = c.recv(65536)
        if not b:
            break
        c.sendall(b)
    c.close()


def connect(addr, port, n):
    data = bytes((i * 7) & 0xff for i in range(n))
    deadline = time.monotonic() + 10
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=10)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    c.settimeout(30)
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        got += b
    print(json.dumps({"echoed": len(got), "same": got == data,
                      "local": c.getsockname()[0]}))


def flood(iface, dmac, addr, n):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    smac = s.getsockname()[4]
    dst = socket.inet_aton(addr)
    src = socket.inet_aton("198.51.100.66")
    udp = struct.pack("!HHHH", 40000, 9, 8 + 18, 0) + b"junk" * 4 + b"\0\0"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17,
                     0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    frame = bytes.fromhex(dmac.replace(":", "")) + smac + b"\x08\x00" + \
        ip + udp
    sent = 0
    t0 = time.monotonic()
    for _ in range(n):
        try:
            s.send(frame)
            sent += 1
        except OSError:
            pass
    print(json.dumps({"sent": sent, "seconds": time.monotonic() - t0}))


def ipip(iface, vip, port, n):
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                        socket.htons(0x0800))
    cap.bind((iface, 0))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        u.sendto(b"shared-%d" % i, (vip, port))
        time.sleep(0.01)
    got, first = 0, None
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        r, _, _ = select.select([cap], [], [], deadline - time.monotonic())
        if not r:
            break
        fr, addr = cap.recvfrom(65536)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        ip = fr[14:]
        if len(ip) < 28 or ip[9] != 4:
            continue
        got += 1
        if first is None:
            first = ip
        if got == n:
            break
    out = {"sent": n, "ipip": got, "icmp_sent": 0}
    if first is not None:
        out["outer_src"] = socket.inet_ntoa(first[12:16])
        out["outer_dst"] = socket.inet_ntoa(first[16:20])
        ihl = (first[0] & 15) * 4
        quote = first[:ihl + 8]
        h = struct.pack("!BBHHH", 3, 4, 0, 0, 1400)
        h = struct.pack("!BBHHH", 3, 4, csum(h + quote), 0, 1400)
        r = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                          socket.IPPROTO_ICMP)
        r.sendto(h + quote, (out["outer_src"], 0))
        out["icmp_sent"] = 1
    print(json.dumps(out))


def main():
    cmd = sys.argv[1]
    if cmd == "ping":
        ping(sys.argv[2], int(sys.argv[3]))
    elif cmd == "ping6":
        ping6(sys.argv[2], int(sys.argv[3]))
    elif cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif cmd == "connect":
        connect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "flood":
        flood(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif cmd == "ipip":
        ipip(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit("unknown command %r" % cmd)


if __name__ == "__main__":
    main()
