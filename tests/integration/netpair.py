# SPDX-License-Identifier: BSD-3-Clause
"""Two network namespaces joined by one veth pair (xA in A, xB in B), for
the tests that run the daemon on xA (net_af_packet) with a kernel
neighbour on xB: the exception path (test_excp.py) and the announced
routes (test_announce.py). Skips cleanly without root, /dev/net/tun or
ip netns; removes what it made."""

import contextlib
import os
import subprocess
import uuid

import pytest


def sh(*args, timeout=30):
    return subprocess.run(list(args), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@contextlib.contextmanager
def veth_namespaces(prefix, what, ipv6=None):
    """Yield (A, B): namespaces named PREFIX"a-..." / PREFIX"b-...", xA and
    xB up with checksum offload off, lo up. ipv6: None leaves the
    namespaces' default, False turns IPv6 off in B, True turns it on in
    both."""
    if os.geteuid() != 0:
        pytest.skip("%s needs root (ip netns, TAP)" % what)
    if not os.path.exists("/dev/net/tun"):
        pytest.skip("no /dev/net/tun")
    tag = "%d-%s" % (os.getpid(), uuid.uuid4().hex[:6])
    a, b = prefix + "a-" + tag, prefix + "b-" + tag
    made = []
    try:
        for ns in (a, b):
            r = sh("ip", "netns", "add", ns)
            if r.returncode != 0:
                pytest.skip("ip netns add failed: %s" %
                            r.stderr.decode().strip())
            made.append(ns)
        r = sh("ip", "link", "add", "xA", "netns", a, "type", "veth",
               "peer", "name", "xB", "netns", b)
        assert r.returncode == 0, r.stderr.decode()
        if ipv6 is False:
            sh("ip", "netns", "exec", b, "sysctl", "-qw",
               "net.ipv6.conf.all.disable_ipv6=1")
        for ns, dev in ((a, "xA"), (b, "xB")):
            if ipv6 is True:
                sh("ip", "netns", "exec", ns, "sysctl", "-qw",
                   "net.ipv6.conf.all.disable_ipv6=0")
            sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "rx", "off",
               "tx", "off")
            assert sh("ip", "-n", ns, "link", "set", dev, "up").returncode == 0
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield a, b
    finally:
        for ns in made:
            sh("ip", "netns", "del", ns)


@contextlib.contextmanager
def veth_namespace(prefix, veths, what, offload_off=True):
    """Yield one namespace PREFIX-..." holding the veth pairs @veths
    ((a, b), ...), all up, IPv6 off everywhere (the kernel sends nothing
    of its own on them: every frame a daemon on them receives is the
    test's); checksum offload off unless @offload_off is false."""
    if os.geteuid() != 0:
        pytest.skip("%s needs root (ip netns, veth)" % what)
    ns = "%s-%d-%s" % (prefix, os.getpid(), uuid.uuid4().hex[:6])
    r = sh("ip", "netns", "add", ns)
    if r.returncode != 0:
        pytest.skip("ip netns add failed: %s" % r.stderr.decode().strip())
    try:
        ex = ("ip", "netns", "exec", ns)
        for key in ("all", "default"):
            sh(*ex, "sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % key)
        for a, b in veths:
            r = sh("ip", "-n", ns, "link", "add", a, "type", "veth", "peer",
                   "name", b)
            assert r.returncode == 0, r.stderr.decode()
            for dev in (a, b):
                sh(*ex, "sysctl", "-qw",
                   "net.ipv6.conf.%s.disable_ipv6=1" % dev)
                if offload_off:
                    sh(*ex, "ethtool", "-K", dev, "rx", "off", "tx", "off")
                r = sh("ip", "-n", ns, "link", "set", dev, "up")
                assert r.returncode == 0, r.stderr.decode()
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield ns
    finally:
        sh("ip", "netns", "del", ns)
