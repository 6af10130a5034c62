#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Lab helper for test_capture.py, run inside the test's network
namespace: send the frames of a JSON file (a list of hex strings), in
order, on one interface through an AF_PACKET socket. No scapy: quick.

    ip netns exec NS /usr/bin/python3 send_frames.py vB1 frames.json
"""

import json
import socket
import sys
import time


def main():
    iface, path = sys.argv[1], sys.argv[2]
    gap = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0005
    with open(path) as f:
        frames = [bytes.fromhex(h) for h in json.load(f)]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    try:
        for fr in frames:
            s.send(fr)
            if gap:
                time.sleep(gap)
    finally:
        s.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
