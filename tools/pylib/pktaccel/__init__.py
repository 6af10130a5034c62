# SPDX-License-Identifier: BSD-3-Clause
"""pktaccel's Python client and tooling.

    pktaccel.Client    the daemon's JSON-RPC API, a method per RPC with
                       keyword parameters (pktaccel.client; docs/client.md)
    pktaccel.RpcError  a JSON-RPC error (.code, .message)
    pktaccel.rpc       the JSON-RPC connection underneath (raw sends,
                       batches, waiting for the socket)
    pktaccel.daemon    for the source tree's tests and tools: paths of the
                       built binaries ($PKTACCEL_BUILD_DIR), replay runs, a
                       daemon in the background
    pktaccel.lab       the network-namespace lab of scripts/lab-netns.sh

Install it with `pip install tools/pylib` (standard library only), or
import it with tools/pylib on sys.path as the tests and perf/ do. Run it
with /usr/bin/python3.
"""

from .rpc import RpcClient, RpcClosed, RpcError, call, wait_socket
from .client import DEFAULT_SOCKET, Client

__all__ = ["Client", "RpcError", "RpcClient", "RpcClosed", "call",
           "wait_socket", "DEFAULT_SOCKET"]
__version__ = "0.1.0"
