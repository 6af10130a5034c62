#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A lab backend (scripts/lab-netns.sh starts one in each backend
namespace): a small HTTP/1.1 server and a UDP responder that answer with
the backend's name.

HTTP, any method and path: "200 OK", body one line
    "<name> <client ip>:<client port> <local ip>:<local port>\\n"
(the local address is the VIP for dsr, the backend's own address and port
for nat). Keep-alive unless the client asks to close (or speaks HTTP/1.0
without keep-alive).

UDP: each datagram is answered, from the address it was sent to, with
"<name> " followed by the datagram.

    lab-backend.py --lab LAB --name be1 --tcp 80 --tcp 8080 \\
        --udp 10.30.0.11:5353 --udp 10.99.0.10:5353 \\
        [--ipv6 --udp [fd00:30::11]:5353 --udp [fd00:99::10]:5353]
"""

import argparse
import asyncio
import signal
import socket


class Udp(asyncio.DatagramProtocol):
    def __init__(self, name):
        self.prefix = name.encode() + b" "
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.transport.sendto(self.prefix + data, addr)


def http_handler(name):
    async def handle(reader, writer):
        peer = writer.get_extra_info("peername")
        local = writer.get_extra_info("sockname")
        body = ("%s %s:%d %s:%d\n" % (name, peer[0], peer[1], local[0],
                                      local[1])).encode()
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                req = lines[0].split()
                hdrs = {}
                for ln in lines[1:]:
                    k, _, v = ln.partition(":")
                    hdrs[k.strip().lower()] = v.strip().lower()
                n = int(hdrs.get("content-length", "0") or 0)
                if n > 0:
                    await reader.readexactly(n)
                ver = req[2] if len(req) >= 3 else "HTTP/1.0"
                conn = hdrs.get("connection", "")
                close = conn == "close" or (ver == "HTTP/1.0" and
                                            conn != "keep-alive")
                writer.write(b"%s 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\nConnection: %s\r\n\r\n"
                             % (ver.encode(), len(body),
                                b"close" if close else b"keep-alive") + body)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError, ValueError, IndexError):
            pass
        finally:
            try:
                writer.close()
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
    return handle


async def main(a):
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(0))
    servers = []
    hosts = ["0.0.0.0", "::"] if a.ipv6 else "0.0.0.0"
    for port in a.tcp:
        servers.append(await asyncio.start_server(
            http_handler(a.name), hosts, port, backlog=1024,
            reuse_address=True))
    for spec in a.udp:
        host, _, port = spec.rpartition(":")
        fam = socket.AF_INET
        if host.startswith("["):
            host, fam = host.strip("[]"), socket.AF_INET6
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind((host, int(port)))
        await loop.create_datagram_endpoint(lambda: Udp(a.name), sock=s)
    print("%s: ready (tcp %s, udp %s)" % (a.name, a.tcp, a.udp), flush=True)
    await stop
    for s in servers:
        s.close()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--lab", required=True, help="lab name (for lab-netns.sh)")
    ap.add_argument("--name", required=True)
    ap.add_argument("--tcp", type=int, action="append", default=[])
    ap.add_argument("--udp", action="append", default=[],
                    help="ADDR:PORT ([ADDR]:PORT for IPv6) to answer UDP on")
    ap.add_argument("--ipv6", action="store_true",
                    help="TCP on IPv6 too (the namespace has IPv6)")
    raise SystemExit(asyncio.run(main(ap.parse_args())))
