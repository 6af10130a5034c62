#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Lab helper for test_lb_history.py, run inside the test's network
namespace: send the frames of a JSON file (a list of hex strings) on one
interface, read what arrives on another until as many frames came or the
wait is over, and write those (hex) as JSON. No scapy: quick.

    ip netns exec NS /usr/bin/python3 lb_history_helper.py vB1 vB2 \
        frames.json out.json [WAIT_S]
"""

import json
import select
import socket
import sys
import time

ETH_P_ALL = 3


def main():
    tx, rx, path, out = sys.argv[1:5]
    wait = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
    with open(path) as f:
        frames = [bytes.fromhex(h) for h in json.load(f)]
    r = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    r.bind((rx, 0))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((tx, 0))
    got = []
    try:
        for fr in frames:
            s.send(fr)
            time.sleep(0.001)
        deadline = time.monotonic() + wait
        while len(got) < len(frames) and time.monotonic() < deadline:
            ready, _, _ = select.select([r], [], [], 0.2)
            if ready:
                data, addr = r.recvfrom(65535)
                if addr[2] != socket.PACKET_OUTGOING:
                    got.append(data.hex())
    finally:
        s.close()
        r.close()
    with open(out, "w") as fo:
        json.dump(got, fo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
