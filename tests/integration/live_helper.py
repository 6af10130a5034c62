#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Lab helper for test_live_veth.py, run inside the test's network
namespace: send frames on one interface, sniff on another, and write what
was sent and received (hex) as JSON.

    ip netns exec NS /usr/bin/python3 live_helper.py --tx vB1 --rx vB2 \
        --count 40 --tag 1 --out result.json
"""

import argparse
import json
import logging
import time

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import (IP, TCP, UDP, AsyncSniffer, Ether, IPv6,  # noqa: E402
                       Raw, conf)

MAGIC = b"PKTLIVE"


def frames(count, tag):
    out = []
    for k in range(count):
        payload = MAGIC + b"%d-IDX%08d-" % (tag, k) + bytes(range(k % 50))
        eth = Ether(src="02:00:00:00:b%d:01" % tag,
                    dst="02:00:00:00:c%d:01" % tag)
        if k % 5 == 3:
            l3 = IPv6(src="2001:db8:%d::1" % tag, dst="2001:db8:%d::2" % tag)
        else:
            l3 = IP(src="198.51.100.%d" % tag, dst="203.0.113.%d" % tag)
        if k % 2:
            l4 = TCP(sport=10000 + k, dport=80, flags="PA", seq=k)
        else:
            l4 = UDP(sport=20000 + k, dport=53)
        f = bytes(eth / l3 / l4 / Raw(payload))
        if len(f) < 60:
            f += b"\0" * (60 - len(f))
        out.append(f)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tx", required=True)
    ap.add_argument("--rx", required=True)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--tag", type=int, default=1)
    ap.add_argument("--wait", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    sent = frames(a.count, a.tag)
    mark = MAGIC + b"%d-" % a.tag
    seen = [0]

    def count(_):
        seen[0] += 1

    sniffer = AsyncSniffer(iface=a.rx, store=True, prn=count,
                           lfilter=lambda p: mark in bytes(p))
    sniffer.start()
    time.sleep(0.7)             # let the capture socket open
    s = conf.L2socket(iface=a.tx)
    try:
        for f in sent:
            s.send(f)
            time.sleep(0.005)
    finally:
        s.close()
    deadline = time.monotonic() + a.wait
    while time.monotonic() < deadline:
        if seen[0] >= len(sent):
            break
        time.sleep(0.1)
    time.sleep(0.3)             # late duplicates, if any, would show
    got = sniffer.stop() or []
    with open(a.out, "w") as fo:
        json.dump({"sent": [f.hex() for f in sent],
                   "received": [bytes(p).hex() for p in got]}, fo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
