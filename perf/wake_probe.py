#!/usr/bin/python3
"""Wake-up probe, run inside the benchmark's network namespace: send
--count UDP frames on --tx, --gap-ms apart, and time each with the
kernel's timestamps (SO_TIMESTAMPNS) where it leaves --tx (a second packet
socket sees outgoing frames) and where it arrives on --rx. Prints
{"us": [one-way microseconds through the appliance, ...]}."""
import argparse
import json
import select
import socket
import struct
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
PACKET_OUTGOING = 4
MAGIC = b"PAWAKE"


def frame(idx):
    payload = MAGIC + struct.pack("!I", idx) + b"\0" * 8
    udp = struct.pack("!HHHH", 40000, 9, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(udp), idx & 0xffff, 0,
                     64, 17, 0, 0xc6336401, 0xcb007101)
    s = sum(struct.unpack("!10H", ip))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
    return b"\x02\x00\x00\x00\xc1\x01\x02\x00\x00\x00\xb1\x01\x08\x00" + ip + udp


def sniffer(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((iface, 0))
    s.setblocking(False)
    return s


def drain(s, want_outgoing, got):
    while True:
        try:
            data, anc, _, addr = s.recvmsg(2048, 256)
        except BlockingIOError:
            return
        if (addr[2] == PACKET_OUTGOING) != want_outgoing:
            continue
        k = data.find(MAGIC)
        if k < 0:
            continue
        idx = struct.unpack("!I", data[k + len(MAGIC):k + len(MAGIC) + 4])[0]
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                got.setdefault(idx, sec * 1e9 + nsec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tx", required=True)
    ap.add_argument("--rx", required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--gap-ms", type=float, default=20)
    a = ap.parse_args()
    out_s, in_s = sniffer(a.tx), sniffer(a.rx)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((a.tx, 0))
    sent, arrived = {}, {}
    time.sleep(0.2)
    for i in range(a.count):
        tx.send(frame(i))
        deadline = time.monotonic() + 0.2
        while i not in arrived and time.monotonic() < deadline:
            select.select([out_s, in_s], [], [], 0.01)
            drain(out_s, True, sent)
            drain(in_s, False, arrived)
        drain(out_s, True, sent)
        time.sleep(a.gap_ms / 1000)
    us = [(arrived[i] - sent[i]) / 1000 for i in sorted(arrived) if i in sent]
    print(json.dumps({"us": us, "sent": len(sent), "arrived": len(arrived)}))


if __name__ == "__main__":
    main()
