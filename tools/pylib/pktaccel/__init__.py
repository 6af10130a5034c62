# SPDX-License-Identifier: BSD-3-Clause
"""pktaccel's Python tooling, one home for what the integration tests,
perf/ and the lab share.

    pktaccel.rpc     the JSON-RPC client over the daemon's Unix socket,
                     waiting for the socket
    pktaccel.daemon  paths of the built binaries ($PKTACCEL_BUILD_DIR),
                     replay runs, a daemon in the background
    pktaccel.lab     the network-namespace lab of scripts/lab-netns.sh:
                     appliances in it and the lab client

Import it with tools/pylib on sys.path (the callers insert it relative
to their own file). Run it with /usr/bin/python3.
"""
