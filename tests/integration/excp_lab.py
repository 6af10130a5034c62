# SPDX-License-Identifier: BSD-3-Clause
"""The test side of excp_helper.py, shared by the kernel_if lab tests
(test_excp.py, test_shared_addr.py): run a helper command in a network
namespace, and a TCP echo between two namespaces."""

import json
import os
import subprocess

import pautil

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "excp_helper.py")


def sh(*args, timeout=30):
    return subprocess.run(list(args), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def helper(ns, *args, timeout=60):
    """excp_helper.py ARGS in namespace NS: its last line, as JSON."""
    r = sh("ip", "netns", "exec", ns, pautil.PYTHON, HELPER,
           *[str(a) for a in args], timeout=timeout)
    assert r.returncode == 0, "%s: %s" % (args, r.stderr.decode()[-3000:])
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def tcp_echo(server_ns, addr, port, client_ns, nbytes):
    """A listener on ADDR:PORT in SERVER_NS echoes NBYTES a client in
    CLIENT_NS sends; the client's result ({"same", "echoed", "local"})."""
    srv = subprocess.Popen(["ip", "netns", "exec", server_ns, pautil.PYTHON,
                            HELPER, "serve", addr, str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert srv.stdout.readline().strip() == b"listening"
        c = helper(client_ns, "connect", addr, port, nbytes)
        assert c["same"] and c["echoed"] == nbytes, c
        return c
    finally:
        srv.wait(30)
