# SPDX-License-Identifier: BSD-3-Clause
"""The JSON-RPC 2.0 client of pktaccel's control socket (AF_UNIX stream,
newline-framed responses), and waiting for that socket to accept."""

import json
import socket
import time

START_TIMEOUT = 30


class RpcError(AssertionError):
    """An RPC answered with an error (or a response that is not JSON-RPC
    2.0). .code and .message are the JSON-RPC error's (-32602 and
    "params.id: ..."; .code None for a response that is not JSON-RPC
    2.0), .data its optional "data"; .method the method called, .resp
    the whole response and .err its "error" object. An AssertionError, so
    that a test reads a failed call as a failed check."""

    def __init__(self, method, resp):
        super().__init__("%s failed: %s" % (method, resp))
        self.method = method
        self.resp = resp
        self.err = resp.get("error") if isinstance(resp, dict) else None
        err = self.err if isinstance(self.err, dict) else {}
        self.code = err.get("code")
        self.message = err.get("message",
                               "not a JSON-RPC 2.0 response: %r" % (resp,))
        self.data = err.get("data")


class RpcClosed(EOFError, ConnectionError):
    """The server closed the connection (an EOFError and a
    ConnectionError, for callers that catch either)."""


class RpcClient:
    """One persistent connection: raw sends (for protocol tests) and
    request/response calls. compact: send requests without spaces (as the
    benchmarks do, whose request sizes are measured)."""

    def __init__(self, path, timeout=10.0, compact=False):
        self.path = path
        self.timeout = timeout
        self.separators = (",", ":") if compact else None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""
        self.next_id = 1
        self.eof = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=self.separators).encode() +
                      b"\n")

    def recv_line(self, timeout=None):
        """Next newline-terminated line (bytes, without the newline).
        Raises TimeoutError, or RpcClosed (an EOFError) when the server
        closed."""
        deadline = time.monotonic() + (timeout or self.timeout)
        # each chunk scanned and copied once (a response of megabytes:
        # lb_service_list of 10,000 backends)
        if b"\n" not in self.buf:
            parts = [self.buf]
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.buf = b"".join(parts)
                    raise TimeoutError("no response within %.1fs (have %r)"
                                       % (timeout or self.timeout,
                                          self.buf[:200]))
                self.sock.settimeout(left)
                try:
                    chunk = self.sock.recv(65536)
                except socket.timeout:
                    continue
                except ConnectionResetError:
                    chunk = b""     # closed with our data unread: still EOF
                if not chunk:
                    self.eof = True
                    self.buf = b"".join(parts)
                    raise RpcClosed("server closed the connection (have %r)"
                                    % self.buf[:200])
                parts.append(chunk)
                if b"\n" in chunk:
                    break
            self.buf = b"".join(parts)
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def recv(self, timeout=None):
        line = self.recv_line(timeout)
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError("response is not JSON: %r" % line[:300])

    def expect_nothing(self, wait=0.3):
        """Assert that nothing arrives within `wait` seconds."""
        try:
            line = self.recv_line(wait)
        except TimeoutError:
            return
        raise AssertionError("unexpected response: %r" % line[:300])

    def request(self, method, params=None, id=None, notify=False):
        req = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            req["params"] = params
        if not notify:
            if id is None:
                id = self.next_id
                self.next_id += 1
            req["id"] = id
        return req

    def call_raw(self, method, params=None, id=None):
        """Send a request; return the whole response object. A server that
        refuses a request (too large) answers and closes: when the send
        fails, the answer already received is still returned."""
        req = self.request(method, params, id)
        try:
            self.send(req)
        except (BrokenPipeError, ConnectionResetError) as e:
            try:
                self.buf += self.sock.recv(1 << 20)
            except OSError:
                pass
            if b"\n" not in self.buf:
                raise RpcClosed("%s: %s" % (method, e))
        resp = self.recv()
        assert resp.get("id") == req["id"], \
            "response id %r for request id %r" % (resp.get("id"), req["id"])
        return resp

    def call(self, method, params=None):
        """Send a request; return its result (RpcError on error)."""
        resp = self.call_raw(method, params)
        if "error" in resp or resp.get("jsonrpc") != "2.0":
            raise RpcError(method, resp)
        return resp["result"]


def call(path, method, params=None, timeout=10.0):
    """One call on a connection of its own; returns the result."""
    with RpcClient(path, timeout) as c:
        return c.call(method, params)


def wait_socket(path, proc=None, timeout=START_TIMEOUT):
    """Wait until a Unix socket accepts connections; AssertionError when
    `proc` (a Popen) exits first or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError("daemon exited with %s before its socket "
                                 "accepted" % proc.returncode)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(1)
            s.connect(path)
            return
        except OSError as e:
            last = e
        finally:
            s.close()
        time.sleep(0.05)
    raise AssertionError("socket %s not accepting after %ds: %s"
                         % (path, timeout, last))
