# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the live lab tests (test_lab.py). The lab itself (topology,
appliances, the lab client) is tools/pylib/pktaccel/lab.py, shared with
perf/bench_lab.py and re-exported here; what only the tests need stays:
Capture, tcpdump into a pcap read back with tests/data's reader."""

import os
import signal
import subprocess
import time

import pautil  # puts tools/pylib on sys.path
from pktaccel.lab import (  # noqa: E402,F401  (re-exported)
    LAB_CLIENT, LAB_SH, SCRIPTS, STATE_ROOT, Held, Lab, UdpProbe, bird_usable,
    lab_cpus, namespaces_usable, reap_stale_labs, sh)


class Capture:
    """tcpdump in a namespace, into a pcap file; stop() returns the
    frames (bytes). Start several with start_all() (in parallel)."""

    def __init__(self, ns, iface, path, bpf, direction="in", wait=True):
        self.path = path
        self.buf = b""
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-i", iface, "-Q",
             direction, "-U", "-n", "-s", "0", "-w", path, bpf],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if wait:
            self.wait_listening()

    def wait_listening(self, timeout=90):
        # tcpdump says "listening on ..." once its socket is open
        import select
        deadline = time.monotonic() + timeout
        while b"listening on" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, "tcpdump did not start: %r" % self.buf
            r, _, _ = select.select([self.proc.stderr], [], [], left)
            if r:
                c = os.read(self.proc.stderr.fileno(), 4096)
                assert c, "tcpdump exited: %r" % self.buf
                self.buf += c

    @staticmethod
    def start_all(specs):
        """specs: {key: (ns, iface, path, bpf)} -> {key: Capture}."""
        caps = {k: Capture(*v, wait=False) for k, v in specs.items()}
        try:
            for c in caps.values():
                c.wait_listening()
        except AssertionError:
            for c in caps.values():
                c.proc.kill()
                c.proc.wait()
            raise
        return caps

    def stop(self):
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return pautil.read_pcap(self.path)
