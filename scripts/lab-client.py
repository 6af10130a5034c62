#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The lab's client (run in the client namespace of scripts/lab-netns.sh):
real TCP connections and UDP probes to a VIP, and what answered.

    lab-client.py burst --vip 10.99.0.10 --count 300 --concurrency 30
        N connections, each sends --requests HTTP requests (keep-alive)
        and closes; prints one JSON object: ok, failed, elapsed, per
        backend counts and every connection (source, backend, error).
        --src A,B spreads the connections over source addresses;
        --sport-base P binds connection i to source port P+i (the same
        flows every run; such connections close with RST so that no
        TIME_WAIT keeps their ports).

    lab-client.py hold --vip 10.99.0.10 --count 20
        opens N keep-alive connections, makes one request on each and
        prints {"event": "ready", "conns": [...]}; then reads commands on
        stdin, one a line, answering each with one JSON line:
          round [TIMEOUT]   one request on every open connection
          close             close every connection (FIN), report
          quit              exit (also at end of input)

    lab-client.py udp --vip 10.99.0.10 --flows 8 --rate 400
        sends numbered datagrams from --flows sockets at --rate per second
        in all, from the start until "stop" on stdin (or --duration
        seconds), then waits --linger seconds for late answers; prints
        {"event": "started"} first and a JSON summary at the end: per flow
        sent, answered, lost, the backends that answered, and the longest
        run of consecutive losses.
"""

import argparse
import asyncio
import json
import socket
import struct
import sys
import time


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------- TCP

class Conn:
    def __init__(self, i, src, sport):
        self.i = i
        self.src = src
        self.sport = sport
        self.reader = None
        self.writer = None
        self.backends = []
        self.error = None
        self.local = None       # the server's view of its own address
        self.peer = None        # the server's view of the client

    def brief(self):
        return {"i": self.i, "src": self.src, "sport": self.sport,
                "backend": self.backends[-1] if self.backends else None,
                "server_addr": self.local, "peer": self.peer,
                "error": self.error}

    async def connect(self, vip, port, timeout):
        local = (self.src, self.sport or 0) if self.src or self.sport else None
        self.reader, self.writer = await asyncio.wait_for(
            asyncio.open_connection(vip, port, local_addr=local), timeout)
        if not self.sport:
            self.sport = self.writer.get_extra_info("sockname")[1]
        if not self.src:
            self.src = self.writer.get_extra_info("sockname")[0]

    async def request(self, vip, timeout, close=False):
        req = ("GET / HTTP/1.1\r\nHost: %s\r\nConnection: %s\r\n\r\n"
               % (vip, "close" if close else "keep-alive")).encode()
        self.writer.write(req)
        await self.writer.drain()
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"),
                                      timeout)
        n = 0
        for ln in head.decode("latin-1").split("\r\n"):
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                n = int(v)
        body = await asyncio.wait_for(self.reader.readexactly(n), timeout)
        fields = body.decode().split()
        self.backends.append(fields[0])
        self.local = fields[2] if len(fields) > 2 else None
        self.peer = fields[1] if len(fields) > 1 else None
        return fields[0]

    def abort(self):
        """Close with RST (SO_LINGER 0): no TIME_WAIT on either side."""
        if self.writer is None:
            return
        sock = self.writer.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.writer.transport.abort()
        self.writer = None

    async def close(self, timeout):
        if self.writer is None:
            return
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), timeout)
        except (asyncio.TimeoutError, OSError):
            pass
        self.writer = None


def sources(a):
    return [s for s in (a.src or "").split(",") if s] or [None]


async def cmd_burst(a):
    srcs = sources(a)
    conns = [Conn(i, srcs[i % len(srcs)],
                  a.sport_base + i if a.sport_base else 0)
             for i in range(a.count)]
    sem = asyncio.Semaphore(a.concurrency)
    lat = []

    async def one(c):
        async with sem:
            t0 = time.monotonic()
            try:
                await c.connect(a.vip, a.port, a.timeout)
                for r in range(a.requests):
                    await c.request(a.vip, a.timeout,
                                    close=(r == a.requests - 1 and
                                           not a.sport_base))
                if a.sport_base:
                    c.abort()
                else:
                    # the server closes after "Connection: close"
                    await c.close(a.timeout)
                lat.append(time.monotonic() - t0)
            except (OSError, asyncio.TimeoutError,
                    asyncio.IncompleteReadError, ValueError) as e:
                c.error = "%s: %s" % (type(e).__name__, e)
                if c.writer is not None:
                    c.abort()

    t0 = time.monotonic()
    await asyncio.gather(*(one(c) for c in conns))
    elapsed = time.monotonic() - t0
    per = {}
    for c in conns:
        if c.error is None:
            b = c.backends[-1]
            per[b] = per.get(b, 0) + 1
    ok = sum(1 for c in conns if c.error is None)
    lat.sort()
    out({"event": "burst", "vip": a.vip, "port": a.port, "ok": ok,
         "failed": len(conns) - ok, "requests": ok * a.requests,
         "elapsed": elapsed, "backends": per,
         "latency_p50": lat[len(lat) // 2] if lat else None,
         "latency_p99": lat[int(len(lat) * 0.99)] if lat else None,
         "conns": [c.brief() for c in conns]})
    return 0


async def cmd_hold(a):
    srcs = sources(a)
    conns = [Conn(i, srcs[i % len(srcs)],
                  a.sport_base + i if a.sport_base else 0)
             for i in range(a.count)]

    async def first(c):
        try:
            await c.connect(a.vip, a.port, a.timeout)
            await c.request(a.vip, a.timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError,
                ValueError) as e:
            c.error = "%s: %s" % (type(e).__name__, e)

    async def again(c, timeout):
        if c.error is not None or c.writer is None:
            return
        try:
            await c.request(a.vip, timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError,
                ValueError) as e:
            c.error = "%s: %s" % (type(e).__name__, e)

    await asyncio.gather(*(first(c) for c in conns))
    out({"event": "ready", "conns": [c.brief() for c in conns]})
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        words = line.split()
        if not words:
            continue
        if words[0] == "round":
            t = float(words[1]) if len(words) > 1 else a.timeout
            t0 = time.monotonic()
            await asyncio.gather(*(again(c, t) for c in conns))
            out({"event": "round", "elapsed": time.monotonic() - t0,
                 "conns": [c.brief() for c in conns]})
        elif words[0] == "close":
            await asyncio.gather(*(c.close(a.timeout) for c in conns))
            out({"event": "closed", "conns": [c.brief() for c in conns]})
        elif words[0] == "quit":
            break
        else:
            out({"event": "error", "error": "unknown command %r" % words[0]})
    for c in conns:
        if c.writer is not None:
            c.abort()
    return 0


# ---------------------------------------------------------------- UDP

class Probe(asyncio.DatagramProtocol):
    def __init__(self, flow, stats):
        self.flow = flow
        self.st = stats
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        # "<backend> P <flow> <seq>"
        f = data.split()
        if len(f) != 4 or f[1] != b"P" or int(f[2]) != self.flow:
            return
        seq = int(f[3])
        st = self.st
        if seq not in st["seen"]:
            st["seen"].add(seq)
            st["backends"][f[0].decode()] = \
                st["backends"].get(f[0].decode(), 0) + 1

    def error_received(self, exc):
        self.st["errors"] += 1


async def cmd_udp(a):
    loop = asyncio.get_running_loop()
    srcs = sources(a)
    flows = []
    for i in range(a.flows):
        st = {"flow": i, "src": srcs[i % len(srcs)], "sent": 0,
              "seen": set(), "backends": {}, "errors": 0}
        local = (st["src"] or ("::" if ":" in a.vip else "0.0.0.0"),
                 a.sport_base + i if a.sport_base else 0)
        tr, _ = await loop.create_datagram_endpoint(
            lambda i=i, st=st: Probe(i, st), local_addr=local,
            remote_addr=(a.vip, a.port))
        st["sport"] = tr.get_extra_info("sockname")[1]
        flows.append((tr, st))
    stop = asyncio.Event()

    async def reader():
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "stop":
                stop.set()
                return

    if a.duration:
        loop.call_later(a.duration, stop.set)
    else:
        asyncio.ensure_future(reader())
    out({"event": "started", "flows": [st["sport"] for _, st in flows]})
    interval = a.flows / float(a.rate)
    t0 = time.monotonic()
    k = 0
    seq = 0
    while not stop.is_set():
        # one datagram per flow each round, rounds paced to the rate
        for tr, st in flows:
            tr.sendto(b"P %d %d" % (st["flow"], seq))
            st["sent"] += 1
        seq += 1
        k += 1
        delay = t0 + k * interval - time.monotonic()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except asyncio.TimeoutError:
                pass
    await asyncio.sleep(a.linger)
    res = []
    for tr, st in flows:
        tr.close()
        lost = [s for s in range(st["sent"]) if s not in st["seen"]]
        run = best = 0
        prev = None
        for s in lost:
            run = run + 1 if prev is not None and s == prev + 1 else 1
            best = max(best, run)
            prev = s
        res.append({"flow": st["flow"], "src": st["src"],
                    "sport": st["sport"], "sent": st["sent"],
                    "answered": len(st["seen"]), "lost": len(lost),
                    "longest_loss_run": best, "lost_first": lost[:10],
                    "backends": st["backends"],
                    "errors": st["errors"]})
    out({"event": "udp", "vip": a.vip, "port": a.port,
         "elapsed": time.monotonic() - t0,
         "interval_ms": interval * 1000.0,
         "sent": sum(r["sent"] for r in res),
         "lost": sum(r["lost"] for r in res), "flows": res})
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("burst", "hold", "udp"):
        p = sub.add_parser(name)
        p.add_argument("--vip", required=True)
        p.add_argument("--port", type=int,
                       default=5353 if name == "udp" else 80)
        p.add_argument("--src", help="source addresses, comma-separated")
        p.add_argument("--sport-base", type=int, default=0)
        p.add_argument("--timeout", type=float, default=10.0)
        if name == "burst":
            p.add_argument("--count", type=int, default=100)
            p.add_argument("--concurrency", type=int, default=20)
            p.add_argument("--requests", type=int, default=1)
        elif name == "hold":
            p.add_argument("--count", type=int, default=10)
        else:
            p.add_argument("--flows", type=int, default=8)
            p.add_argument("--rate", type=float, default=400.0,
                           help="datagrams per second, all flows together")
            p.add_argument("--duration", type=float, default=0.0,
                           help="seconds (default: until 'stop' on stdin)")
            p.add_argument("--linger", type=float, default=1.0)
    a = ap.parse_args()
    fn = {"burst": cmd_burst, "hold": cmd_hold, "udp": cmd_udp}[a.cmd]
    return asyncio.run(fn(a))


if __name__ == "__main__":
    raise SystemExit(main())
