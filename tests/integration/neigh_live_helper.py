#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Lab helper for test_neigh.py's live test, run inside its namespace:
open a TCP connection to VIP:80 from the kernel (which must first resolve
the VIP by ARP: the appliance answers), sniff what the appliance sends out
on --rx, write the frames (hex) as JSON.

    ip netns exec NS /usr/bin/python3 neigh_live_helper.py --vip V \
        --rx vB2 --out result.json
"""

import argparse
import json
import logging
import socket
import time

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import AsyncSniffer  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vip", required=True)
    ap.add_argument("--rx", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sn = AsyncSniffer(iface=a.rx, store=True,
                      lfilter=lambda p: p.haslayer("IP") and
                      p["IP"].proto == 4)
    sn.start()
    time.sleep(0.7)
    for _ in range(3):
        s = socket.socket()
        s.settimeout(1.0)
        try:
            s.connect((a.vip, 80))
        except OSError:
            pass
        finally:
            s.close()
    time.sleep(0.5)
    got = sn.stop() or []
    with open(a.out, "w") as f:
        json.dump([bytes(p).hex() for p in got], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
