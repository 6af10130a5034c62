#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Servers and clients of the full-NAT lab (test_fnat_lab.py), run in the
lab's network namespaces; what they see of addresses is what the kernel's
sockets say (the peer address of an accepted connection, the source of a
datagram), never what the appliance reports.

Servers (print "listening" once bound, then serve until killed; one JSON
line a connection on stdout):
  udp-peer ADDR PORT NAME    answer each datagram with "NAME IP:PORT", the
                             datagram's source as this socket sees it
  bulk ADDR PORT             TCP: an optional PROXY protocol header (v1 or
                             v2, whichever comes), then one command line:
                               "GET N SEED\\n": send N bytes of the SEED
                                 stream, then close
                               "PUT N\\n": read N bytes, answer their
                                 SHA-256 in hex and a newline
                             logs {"peer", "proxy", "cmd", "n", "sha256"}
Clients (print one JSON line):
  udp-ask ADDR PORT COUNT [SRC,...]   COUNT sockets (sources in turn) each
                             send a datagram until answered (or 10 s):
                             [{"src", "sport", "reply"}]
  get ADDR PORT N SEED [SRC]  GET: {"n", "sha256", "expect", "local"}
  put ADDR PORT N SEED [SRC]  PUT: {"n", "sha256", "server", "local"}
  http ADDR PORT PATH [SRC]   one HTTP/1.0 GET: {"status", "body", "local"}

The stream of SEED is random.Random(SEED).randbytes(N): the same bytes on
both sides, without a file.
"""

import hashlib
import ipaddress
import json
import random
import socket
import struct
import sys
import threading
import time

PP2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
CHUNK = 65536


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def stream(n, seed):
    return random.Random(seed).randbytes(n)


def hostport(sa):
    return "%s:%d" % (sa[0], sa[1])


# ---------------------------------------------------------------- servers

def udp_peer(addr, port, name):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    print("listening", flush=True)
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(("%s %s" % (name, hostport(peer))).encode(), peer)


class Reader:
    """Exact reads over a socket, with what was read ahead kept."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self, n):
        while len(self.buf) < n:
            c = self.sock.recv(CHUNK)
            if not c:
                raise EOFError("closed after %d bytes" % len(self.buf))
            self.buf += c

    def take(self, n):
        self.fill(n)
        b, self.buf = self.buf[:n], self.buf[n:]
        return b

    def line(self, limit=256):
        while b"\n" not in self.buf:
            if len(self.buf) > limit:
                raise ValueError("no line in %r" % self.buf[:limit])
            c = self.sock.recv(CHUNK)
            if not c:
                raise EOFError("closed in a line: %r" % self.buf)
            self.buf += c
        ln, self.buf = self.buf.split(b"\n", 1)
        return ln


def read_proxy(r):
    """The PROXY protocol header at the start of the stream, if any:
    {"version", "src", "sport", "dst", "dport"} (None without one)."""
    r.fill(6)
    if r.buf.startswith(b"PROXY "):
        ln = r.line(limit=108).rstrip(b"\r").decode()
        f = ln.split()
        if f[1] == "UNKNOWN":
            return {"version": 1, "proto": "UNKNOWN"}
        return {"version": 1, "proto": f[1], "src": f[2], "dst": f[3],
                "sport": int(f[4]), "dport": int(f[5])}
    r.fill(12)
    if not r.buf.startswith(PP2_SIG):
        return None
    hdr = r.take(16)
    ver_cmd, fam, ln = hdr[12], hdr[13], struct.unpack("!H", hdr[14:16])[0]
    body = r.take(ln)
    p = {"version": ver_cmd >> 4, "command": ver_cmd & 0xf,
         "family": fam, "len": ln}
    if fam == 0x11:
        p.update(proto="TCP4",
                 src=str(ipaddress.IPv4Address(body[0:4])),
                 dst=str(ipaddress.IPv4Address(body[4:8])),
                 sport=struct.unpack("!H", body[8:10])[0],
                 dport=struct.unpack("!H", body[10:12])[0])
    elif fam == 0x21:
        p.update(proto="TCP6",
                 src=str(ipaddress.IPv6Address(body[0:16])),
                 dst=str(ipaddress.IPv6Address(body[16:32])),
                 sport=struct.unpack("!H", body[32:34])[0],
                 dport=struct.unpack("!H", body[34:36])[0])
    return p


def bulk_conn(conn, peer, lock):
    rec = {"peer": hostport(peer), "proxy": None, "cmd": None, "n": 0,
           "sha256": None, "error": None}
    try:
        conn.settimeout(120)
        r = Reader(conn)
        rec["proxy"] = read_proxy(r)
        cmd = r.line().decode().split()
        rec["cmd"] = cmd[0]
        n = int(cmd[1])
        if cmd[0] == "GET":
            data = stream(n, int(cmd[2]))
            rec["sha256"] = hashlib.sha256(data).hexdigest()
            conn.sendall(data)
            rec["n"] = n
            conn.shutdown(socket.SHUT_WR)
            # until the client has everything and closes
            while conn.recv(CHUNK):
                pass
        elif cmd[0] == "PUT":
            h = hashlib.sha256()
            left = n
            if r.buf:
                b = r.take(min(left, len(r.buf)))
                h.update(b)
                left -= len(b)
            while left > 0:
                c = conn.recv(min(CHUNK, left))
                if not c:
                    raise EOFError("closed with %d bytes left" % left)
                h.update(c)
                left -= len(c)
            rec["n"] = n
            rec["sha256"] = h.hexdigest()
            conn.sendall(rec["sha256"].encode() + b"\n")
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(CHUNK):
                pass
        else:
            raise ValueError("unknown command %r" % cmd)
    except (OSError, EOFError, ValueError, IndexError) as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        conn.close()
        with lock:
            out(rec)


def bulk(addr, port):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(64)
    print("listening", flush=True)
    lock = threading.Lock()
    while True:
        conn, peer = s.accept()
        threading.Thread(target=bulk_conn, args=(conn, peer, lock),
                         daemon=True).start()


# ---------------------------------------------------------------- clients

def connect(addr, port, src=None, timeout=60):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((addr, int(port)))
    return s


def udp_ask(addr, port, count, srcs=""):
    srcs = [x for x in srcs.split(",") if x] or [None]
    socks = []
    for i in range(int(count)):
        s = socket.socket(family(addr), socket.SOCK_DGRAM)
        s.bind((srcs[i % len(srcs)] or "", 0))
        s.settimeout(0.5)
        socks.append(s)
    res = []
    for s in socks:
        reply = None
        deadline = time.monotonic() + 10
        while reply is None and time.monotonic() < deadline:
            s.sendto(b"who", (addr, int(port)))
            try:
                data, frm = s.recvfrom(2048)
            except socket.timeout:
                continue
            reply = data.decode()
        loc = s.getsockname()
        res.append({"src": loc[0], "sport": loc[1], "reply": reply})
        s.close()
    out(res)


def get(addr, port, n, seed, src=None):
    n, seed = int(n), int(seed)
    t0 = time.monotonic()
    s = connect(addr, port, src)
    local = hostport(s.getsockname())
    s.sendall(b"GET %d %d\n" % (n, seed))
    h = hashlib.sha256()
    got = 0
    while True:
        c = s.recv(CHUNK)
        if not c:
            break
        h.update(c)
        got += len(c)
    s.close()
    out({"n": got, "sha256": h.hexdigest(),
         "expect": hashlib.sha256(stream(n, seed)).hexdigest(),
         "local": local, "elapsed": time.monotonic() - t0})


def put(addr, port, n, seed, src=None):
    n, seed = int(n), int(seed)
    data = stream(n, seed)
    t0 = time.monotonic()
    s = connect(addr, port, src)
    local = hostport(s.getsockname())
    s.sendall(b"PUT %d\n" % n)
    s.sendall(data)
    r = Reader(s)
    server = r.line().decode().strip()
    s.close()
    out({"n": n, "sha256": hashlib.sha256(data).hexdigest(),
         "server": server, "local": local,
         "elapsed": time.monotonic() - t0})


def http(addr, port, path, src=None):
    s = connect(addr, port, src, timeout=20)
    local = hostport(s.getsockname())
    host = "[%s]" % addr if ":" in addr else addr
    s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (path, host))
              .encode())
    buf = b""
    while True:
        c = s.recv(CHUNK)
        if not c:
            break
        buf += c
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else None
    out({"status": status, "body": body.decode(errors="replace"),
         "local": local})


def main(argv):
    cmds = {"udp-peer": udp_peer, "bulk": bulk, "udp-ask": udp_ask,
            "get": get, "put": put, "http": http}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
