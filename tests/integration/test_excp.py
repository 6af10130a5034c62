# SPDX-License-Identifier: BSD-3-Clause
"""The exception path (kernel_if, lib/excp) in a netns lab: the daemon runs
net_af_packet on xA (no address) in namespace A; the peer namespace B has
198.51.100.1/24 on xB. The appliance's port wan0 owns 198.51.100.5/24 and
the TAP "pa0" in A, so that:
- ping from B to the port's address is answered by A's kernel;
- TCP from B reaches a listener in A bound to the port's address;
- TCP from A to B leaves through the DPDK port (xA has no address);
- the TAP has the port's MAC, addresses and MTU, and is gone on SIGTERM;
- a flood to the port's address is bounded and counted, RPC still works;
- a TAP that cannot be created stops start-up with a message naming the
  port; bad kernel_if values are refused at load with their JSON path.
Needs root and `ip netns` (the config checks do not)."""

import ipaddress
import json
import os
import statistics
import threading
import time

import pytest

from excp_lab import helper, sh, tcp_echo
from pautil import DAEMON, Daemon, run, unique, write_json
from netpair import veth_namespaces

PORT_ADDR = "198.51.100.5"
PEER_ADDR = "198.51.100.1"
PORT_ADDR6 = "2001:db8:1::5"
TAP = "pa0"




@pytest.fixture
def lab():
    with veth_namespaces("px", "the exception-path lab", ipv6=False) as (a, b):
        r = sh("ip", "-n", b, "addr", "add", PEER_ADDR + "/24", "dev", "xB")
        assert r.returncode == 0, r.stderr.decode()
        yield a, b


def conf(tmp_path, **port):
    p = {"name": "wan0", "devargs": "net_af_packet0,iface=xA",
         "addr": [PORT_ADDR + "/24", PORT_ADDR6 + "/64"], "kernel_if": TAP}
    p.update(port)
    return write_json(str(tmp_path / "excp.json"), {
        "ports": [p], "pipeline": {"mode": "rtc"}, "metrics": None})


def start(ns, cfg, tmp_path, name="excp"):
    sock = unique("excp", ".sock")
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", cfg, "-s", sock], sock,
               str(tmp_path), name, prefix=("ip", "netns", "exec", ns))
    d.wait_ready(60)
    return d


def thread_names(d):
    """Names of the daemon's threads (its process may be a child of
    "ip netns exec")."""
    pid = d.proc.pid
    r = sh("pgrep", "-P", str(pid))
    if r.stdout.strip():
        pid = int(r.stdout.split()[0])
    names = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
            names.append(f.read().strip())
    return names


def link(ns, dev):
    r = sh("ip", "-n", ns, "-j", "addr", "show", "dev", dev)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout.decode())[0]


def test_excp_ping_tcp_both_ways_and_removed_on_stop(lab, tmp_path):
    a, b = lab
    d = start(a, conf(tmp_path), tmp_path)
    try:
        tap, port = link(a, TAP), link(a, "xA")
        assert tap["address"] == port["address"], (tap, port)
        assert tap["mtu"] == port["mtu"], (tap, port)
        assert "UP" in tap["flags"], tap
        addrs = {(x["local"], x["prefixlen"]) for x in tap["addr_info"]}
        assert (PORT_ADDR, 24) in addrs and (PORT_ADDR6, 64) in addrs, addrs
        assert not any(x.get("local") for x in port["addr_info"]
                       if x["family"] == "inet"), port

        # ping: answered by A's kernel through the TAP, in a few ms on a
        # quiet machine. The bound only catches a path that waits for a
        # timer (a poll period of a second), not a loaded 2-CPU box: a
        # frame the veths drop under load is not the appliance's
        p = helper(b, "ping", PORT_ADDR, 10)
        assert p["received"] >= p["sent"] - 2, (p, d.describe())
        med = statistics.median(p["rtt_ms"])
        print("ping rtt ms: median %.2f max %.2f" % (med, max(p["rtt_ms"])))
        assert med < 250, p

        # TCP from B to a listener in A bound to the port's address
        c = tcp_echo(a, PORT_ADDR, 7001, b, 300000)

        # TCP from A to B: out through the TAP and the DPDK port (xA has
        # no address); the kernel resolves B itself
        c = tcp_echo(b, PEER_ADDR, 7002, a, 300000)
        assert c["local"] == PORT_ADDR, c

        st = d.call("stats_get")
        x = st["excp"]["interfaces"]["wan0"]
        assert x["kernel_if"] == TAP, x
        assert x["to_kernel"] > 100 and x["from_kernel"] > 100, x
        assert x["to_kernel_dropped"] == 0 and x["from_kernel_foreign"] == 0
        # the kernel's ARP request for B was answered to the port's
        # address: lib/neigh took the reply and the kernel got it too
        assert st["excp"]["clones"] >= 1, st["excp"]
        assert st["drops"]["excp_full"] == 0, st["drops"]
        assert st["drops"]["excp_rate"] == 0, st["drops"]
        assert st["drops"]["local"] >= x["to_kernel"], st["drops"]
        # the TAPs' frames have a thread of their own, not the control
        # thread's (lib/excp, pa_excp_start())
        names = thread_names(d)
        assert names.count("pa-excp") == 1, names
        assert "pa-ctrl" in names, names
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()
    r = sh("ip", "-n", a, "link", "show", TAP)
    assert r.returncode != 0, "kernel_if still there after SIGTERM: %s" % (
        r.stdout.decode())


def test_excp_flood_is_bounded_and_counted(lab, tmp_path):
    a, b = lab
    d = start(a, conf(tmp_path, kernel_if_pps=500, kernel_if_burst=50),
              tmp_path)
    try:
        mac = link(a, "xA")["address"]
        rpc_ok, stop = [], threading.Event()

        def poll_rpc():
            while not stop.is_set():
                t0 = time.monotonic()
                d.call("stats_get")
                rpc_ok.append(time.monotonic() - t0)
                time.sleep(0.05)

        t = threading.Thread(target=poll_rpc)
        t.start()
        try:
            f = helper(b, "flood", "xB", mac, PORT_ADDR, 60000, timeout=120)
        finally:
            stop.set()
            t.join(30)
        time.sleep(0.3)
        st = d.call("stats_get")
        x = st["excp"]["interfaces"]["wan0"]
        assert x["rate_pps"] == 500 and x["burst"] == 50, x
        dr = st["drops"]
        print("flood: %s; drops %s; excp %s" % (f, dr, x))
        assert dr["excp_rate"] > 0, (dr, f)
        # within the bucket: 500/s over the flood, plus its depth, plus
        # whatever else reached the kernel (ARP, slack for timing)
        bound = 500 * (f["seconds"] + 1.0) + 50 + 100
        assert x["to_kernel"] + x["queued"] <= bound, (x, f)
        assert rpc_ok and max(rpc_ok) < 2.0, rpc_ok
        # and the kernel still answers afterwards
        p = helper(b, "ping", PORT_ADDR, 3)
        assert p["received"] == 3, p
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()


def test_excp_tap_name_taken_stops_start(lab, tmp_path):
    a, _ = lab
    r = sh("ip", "-n", a, "link", "add", TAP, "type", "veth", "peer",
           "name", "pa0peer")
    if r.returncode != 0:
        pytest.skip("cannot make an interface named pa0: %s" % r.stderr.decode())
    res = run(["ip", "netns", "exec", a, DAEMON, "--no-huge", "--no-shconf",
               "--no-pci", "-m", "512", "-l", "0,1", "--", "-c",
               conf(tmp_path), "-s", unique("excp", ".sock")], timeout=60)
    assert res.rc == 1, res
    line = [ln for ln in res.stderr.splitlines() if ln.strip()][-1]
    assert "port wan0" in line and "kernel_if 'pa0'" in line, line
    assert "already exists" in line, line


BAD_PORTS = [
    ("too_long", {"kernel_if": "x" * 16}, "$.ports[0].kernel_if"),
    ("empty", {"kernel_if": ""}, "$.ports[0].kernel_if"),
    ("comma", {"kernel_if": "pa0,iface=eth0"}, "$.ports[0].kernel_if"),
    ("slash", {"kernel_if": "a/b"}, "$.ports[0].kernel_if"),
    ("not_string", {"kernel_if": 3}, "$.ports[0].kernel_if"),
    ("no_addr", {"kernel_if": "pa0", "addr": None}, "$.ports[0].kernel_if"),
    ("pps_zero", {"kernel_if": "pa0", "kernel_if_pps": 0},
     "$.ports[0].kernel_if_pps"),
    ("pps_without_if", {"kernel_if": None, "kernel_if_pps": 10},
     "$.ports[0].kernel_if_pps"),
    ("burst_without_if", {"kernel_if": None, "kernel_if_burst": 10},
     "$.ports[0].kernel_if_burst"),
]


@pytest.mark.parametrize("name,edit,path", BAD_PORTS,
                         ids=[c[0] for c in BAD_PORTS])
def test_excp_bad_kernel_if_refused_at_load(name, edit, path, tmp_path):
    p = {"name": "wan0", "devargs": "net_null0", "addr": ["198.51.100.5/24"]}
    for k, v in edit.items():
        if v is None:
            p.pop(k, None)
        else:
            p[k] = v
    cfg = write_json(str(tmp_path / "bad.json"), {"ports": [p]})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "--", "-c", cfg, "-s", unique("excpbad", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    line = [ln for ln in res.stderr.splitlines() if ln.strip()][-1]
    assert path in line, line


def test_excp_duplicate_kernel_if_refused(tmp_path):
    ports = [{"name": "p%d" % i, "devargs": "net_null%d" % i,
              "addr": ["198.51.10%d.5/24" % i], "kernel_if": "pa0"}
             for i in range(2)]
    cfg = write_json(str(tmp_path / "dup.json"), {"ports": ports})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "--", "-c", cfg, "-s", unique("excpdup", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    assert "$.ports[1].kernel_if" in res.stderr, res


def eui64_link_local(mac):
    """fe80:: and the modified EUI-64 of @mac (RFC 4291 appendix A)."""
    b = bytes.fromhex(mac.replace(":", ""))
    iid = bytes([b[0] ^ 2]) + b[1:3] + b"\xff\xfe" + b[3:6]
    return str(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + iid))


@pytest.fixture
def lab6():
    """Like lab, with IPv6 on the neighbour (B) and i13 names."""
    with veth_namespaces("i13x6", "the exception-path lab",
                         ipv6=True) as (a, b):
        yield a, b


def test_excp_ipv6_link_local_is_the_ports_own(lab6, tmp_path):
    """The TAP's only IPv6 link-local is fe80::EUI-64(port MAC), usable at
    once (no DAD); a neighbour's ping -6 to it (ND answered by lib/neigh,
    the echo by the kernel through the TAP, the kernel's own ND for the
    neighbour through the port) works, and the exception path counts it."""
    a, b = lab6
    d = start(a, conf(tmp_path), tmp_path)
    try:
        tap = link(a, TAP)
        ll = eui64_link_local(tap["address"])
        lls = [x for x in tap["addr_info"]
               if x["family"] == "inet6" and x.get("scope") == "link"]
        assert [x["local"] for x in lls] == [ll], tap["addr_info"]
        assert not lls[0].get("tentative"), lls[0]
        # B's own link-local must be usable before it can ping
        deadline = time.monotonic() + 30
        while any(x.get("tentative") for x in link(b, "xB")["addr_info"]):
            assert time.monotonic() < deadline, link(b, "xB")
            time.sleep(0.1)
        before = d.call("stats_get")["excp"]["interfaces"]["wan0"]
        # ping -6 fe80::...%xB (no ping binary here: the helper's)
        p = helper(b, "ping6", ll + "%xB", 3)
        assert p["received"] == p["sent"] == 3, (p, d.describe())
        st = d.call("stats_get")
        x = st["excp"]["interfaces"]["wan0"]
        # the echo requests went to the kernel, its replies left
        assert x["to_kernel"] - before["to_kernel"] >= 3, (before, x)
        assert x["from_kernel"] - before["from_kernel"] >= 3, (before, x)
        assert x["from_kernel_foreign"] == 0, x
        # B's solicitation for the link-local was answered by lib/neigh
        assert st["neigh"]["na_out"] >= 1, st["neigh"]
        assert st["drops"]["to_self"] == 0, st["drops"]
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()
