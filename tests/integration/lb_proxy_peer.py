# SPDX-License-Identifier: BSD-3-Clause
"""Both ends of test_lb_proxy_relay.py's connections, run in their
namespaces with /usr/bin/python3.

  lb_proxy_peer.py serve ADDR PORT
      Accept connections; read the PROXY header (v1 or v2) before
      anything else; speak first: "HELLO <addr> <port>\\n" with the
      client's address and port taken from the header; then read
      "<up> <down> <seed>\\n" and <up> bytes, and answer with the SHA-256
      of what it read and <down> bytes made from <seed>.

  lb_proxy_peer.py connect ADDR PORT UP DOWN SEED [first]
      One connection: wait for the HELLO without sending anything (the
      header must reach the server with the handshake), upload UP bytes,
      download DOWN bytes, check both byte for byte; "first": send the
      request and upload at once, before the HELLO (the header then
      rides on the first data segment too). Prints one JSON line: the
      HELLO's address and port, the local port, and "ok".
"""

import hashlib
import json
import random
import socket
import struct
import sys

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def data_of(seed, n):
    return random.Random(seed).randbytes(n)


def read_exact(c, n):
    b = bytearray()
    while len(b) < n:
        x = c.recv(min(1 << 16, n - len(b)))
        if not x:
            raise EOFError("%d of %d bytes" % (len(b), n))
        b += x
    return bytes(b)


def read_line(c, limit=200):
    b = b""
    while not b.endswith(b"\n"):
        b += read_exact(c, 1)
        if len(b) > limit:
            raise ValueError("line too long: %r" % b)
    return b


def read_proxy(c):
    """The PROXY header: (address, port) of the client."""
    first = read_exact(c, 12)
    if first == V2_SIG:
        ver_cmd, fam, ln = struct.unpack("!BBH", read_exact(c, 4))
        body = read_exact(c, ln)
        if ver_cmd != 0x21 or fam not in (0x11, 0x21):
            raise ValueError("v2 %#x %#x" % (ver_cmd, fam))
        if fam == 0x11:
            return (socket.inet_ntop(socket.AF_INET, body[0:4]),
                    struct.unpack("!H", body[8:10])[0])
        return (socket.inet_ntop(socket.AF_INET6, body[0:16]),
                struct.unpack("!H", body[32:34])[0])
    line = first
    while not line.endswith(b"\r\n"):
        line += read_exact(c, 1)
        if len(line) > 107:
            raise ValueError("v1 line too long: %r" % line)
    parts = line[:-2].decode("ascii").split(" ")
    if len(parts) != 6 or parts[0] != "PROXY" or parts[1] not in ("TCP4", "TCP6"):
        raise ValueError("v1 line %r" % line)
    return parts[2], int(parts[4])


def serve(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    print("listening", flush=True)
    while True:
        c, _ = s.accept()
        try:
            c.settimeout(60)
            caddr, cport = read_proxy(c)
            c.sendall(b"HELLO %s %d\n" % (caddr.encode(), cport))
            up, down, seed = (int(x) for x in read_line(c).split())
            h = hashlib.sha256(read_exact(c, up)).hexdigest()
            c.sendall(h.encode() + b"\n" + data_of(seed + 1, down))
            c.shutdown(socket.SHUT_WR)
            while c.recv(4096):
                pass
        except (OSError, ValueError, EOFError) as e:
            print("error:", e, flush=True)
        finally:
            c.close()


def connect(addr, port, up, down, seed, first):
    c = socket.create_connection((addr, port), timeout=60)
    payload = data_of(seed, up)
    if first:
        c.sendall(b"%d %d %d\n" % (up, down, seed) + payload)
    hello = read_line(c).split()
    assert hello[0] == b"HELLO", hello
    if not first:
        c.sendall(b"%d %d %d\n" % (up, down, seed) + payload)
    h = read_line(c, 100).strip().decode()
    assert h == hashlib.sha256(payload).hexdigest(), "upload differs"
    got = read_exact(c, down)
    assert got == data_of(seed + 1, down), "download differs"
    assert c.recv(1) == b"", "more than expected"
    local = c.getsockname()
    c.close()
    print(json.dumps({"addr": hello[1].decode(), "port": int(hello[2]),
                      "local": [local[0], local[1]], "ok": True}))


def main():
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        connect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                int(sys.argv[5]), int(sys.argv[6]),
                sys.argv[7:] == ["first"])


if __name__ == "__main__":
    main()
