# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the pktaccel integration tests: what the tests check
(replay summaries, output matching, flow order, load-balancer frames).
The RPC client, the daemon handle, replay runs and the paths of the built
binaries are tools/pylib/pktaccel's (shared with perf/ and the lab),
re-exported here under their old names."""

import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PYLIB = os.path.join(REPO, "tools", "pylib")
if PYLIB not in sys.path:
    sys.path.insert(0, PYLIB)

from pktaccel.daemon import (  # noqa: E402,F401  (re-exported)
    BUILD, CTL, DAEMON, DEFAULT_CONF, PYTHON, REPLAY_TIMEOUT, START_TIMEOUT,
    STOP_TIMEOUT, Daemon, Result, last_json_line, replay, replay_daemon_args,
    run, unique, write_json)
from pktaccel.rpc import RpcClient, RpcError, wait_socket  # noqa: E402,F401

DATA = os.path.join(REPO, "tests", "data")
SAMPLE = os.path.join(DATA, "sample.pcap")

if DATA not in sys.path:
    sys.path.insert(0, DATA)
import gen_sample  # noqa: E402  (tests/data/gen_sample.py)

read_pcap = gen_sample.read_pcap
write_pcap = gen_sample.write_pcap

DROP_REASONS = ("malformed", "acl", "police", "non_ip", "no_backend", "mtu",
                "ring_full", "tx_full", "rx_error", "shutdown", "local",
                "neigh_ring_full", "excp_full", "excp_rate", "not_ours", "to_self", "ttl", "no_route",
                "icmp_bad_quote", "icmp_no_service", "no_service", "handover_full",
                "nat_ambiguous", "src_limit", "max_flows", "blocklist",
                "fnat_no_port", "fnat_table_full", "fnat_fragment",
                "fnat_unmatched", "fnat_xlat")

RPC_METHODS_NOW = ("rpc_get_methods", "rpc.discover", "stats_get",
                   "pipeline_get",
                   "config_get", "shutdown",
                   "acl_rule_add", "acl_rule_delete", "acl_rule_list",
                   "acl_rules_replace", "trace_packet",
                   "lb_service_add", "lb_service_delete", "lb_service_list",
                   "lb_backend_add", "lb_backend_delete", "lb_backend_set",
                   "neigh_list", "capture_start", "capture_stop",
                   "capture_get", "health_get", "health_set",
                   "lb_health_get", "blocklist_replace", "blocklist_add",
                   "blocklist_delete", "blocklist_get")

# Pipeline configurations exercised by the replay tests.
PIPE4 = {"mode": "pipeline",
         "lcores": {"rx": [1], "classify": [2], "lb": [3], "tx": [4]}}
# CONTRACT section 4's example: one lcore runs several stages in turn,
# rings only where a packet changes lcore (rx -> classify, lb -> tx)
PIPE2 = {"mode": "pipeline",
         "lcores": {"rx": [1], "tx": [1], "classify": [2], "lb": [2]}}
RTC1 = {"mode": "rtc"}
RTC2 = {"mode": "rtc", "lcores": {"worker": [1, 2]}}


def json_lines(text):
    """Every line of text that parses as a JSON object."""
    out = []
    for ln in text.splitlines():
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                out.append(json.loads(ln))
            except ValueError:
                pass
    return out


def check_summary(res, n_rx, expect_drops=None):
    """The replay exited 0 and its last stdout line is a consistent
    summary for n_rx packets. expect_drops: {reason: count}; reasons not
    named must be zero. Returns the summary."""
    assert res.rc == 0, "replay failed: %r" % res
    s = res.summary
    assert isinstance(s, dict), "last stdout line is not a JSON object: %r" % res
    for k in ("rx_packets", "tx_packets", "dropped_packets", "drops",
              "mbufs_in_use"):
        assert k in s, "summary lacks %r: %s" % (k, s)
    drops = s["drops"]
    for r in DROP_REASONS:
        assert r in drops, "summary drops lacks %r: %s" % (r, drops)
    assert s["rx_packets"] == n_rx, "rx_packets %s, expected %d" % (
        s["rx_packets"], n_rx)
    # the ICMP errors the data path makes (time exceeded, too big) are
    # counted apart ("icmp_errors"); the packets they answer as dropped
    assert s["rx_packets"] == s["tx_packets"] + s["dropped_packets"], \
        "conservation broken: %s" % s
    assert sum(drops.values()) == s["dropped_packets"], \
        "drops do not add up to dropped_packets: %s" % s
    assert s["mbufs_in_use"] == 0, "mbufs leaked: %s" % s
    if expect_drops is not None:
        want = {r: 0 for r in DROP_REASONS}
        want.update(expect_drops)
        got = {r: drops[r] for r in DROP_REASONS}
        assert got == want, "drops %s, expected %s" % (got, want)
    return s


def match_output(pkts, frames, what="output"):
    """Map each frame of an output pcap to the index of the identical
    input packet. Fails on modified, unknown or duplicated frames.
    Returns the list of indices in output order."""
    by_bytes = {p.data: i for i, p in enumerate(pkts)}
    idx = []
    problems = []
    for n, fr in enumerate(frames):
        i = by_bytes.get(fr)
        if i is None:
            mk = gen_sample.find_marker(fr)
            if mk is not None and mk < len(pkts):
                orig = pkts[mk].data
                diff = next((k for k in range(min(len(orig), len(fr)))
                             if orig[k] != fr[k]), min(len(orig), len(fr)))
                problems.append(
                    "%s frame %d is input #%d (%s) modified: %d bytes vs %d, "
                    "first difference at offset %d" % (
                        what, n, mk, pkts[mk].kind, len(fr), len(orig), diff))
            else:
                problems.append("%s frame %d matches no input: %s" % (
                    what, n, fr[:64].hex()))
            continue
        idx.append(i)
    assert not problems, "\n".join(problems[:20])
    dups = len(idx) - len(set(idx))
    assert dups == 0, "%d duplicated frames in %s" % (dups, what)
    return idx


def check_flow_order(pkts, idx):
    """Within each flow, output order is input order."""
    last = {}
    bad = []
    for i in idx:
        f = pkts[i].flow
        if f in last and last[f] > i:
            bad.append("flow %s: #%d after #%d" % (f, i, last[f]))
        last[f] = max(i, last.get(f, -1))
    assert not bad, "per-flow order broken:\n" + "\n".join(bad[:20])


# --------------------------------------------------------------------------
# Load-balancer traffic: plain IPv4/IPv6 TCP and UDP frames built with
# struct (fast, no scapy), and what the appliance did to them.

LB_CLIENT_MAC = bytes.fromhex("020000000101")
LB_APPLIANCE_MAC = bytes.fromhex("0200000000fe")


def _l4_csum(pseudo, seg):
    return gen_sample.csum16(pseudo + seg) or 0xFFFF


def l4_frame(src, dst, sport, dport, proto="tcp", idx=0, payload_len=24,
             tcp_flags=0x02):
    """One Ethernet frame: IPv4 or IPv6 (by the addresses), TCP (flags
    `tcp_flags`, SYN by default) or UDP, correct checksums, payload
    starting with gen_sample.marker(idx)."""
    import ipaddress
    import struct
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    assert s.version == d.version, (src, dst)
    payload = gen_sample.marker(idx)
    payload += bytes(97 + (k % 26) for k in range(max(0, payload_len -
                                                      len(payload))))
    pnum = {"tcp": 6, "udp": 17}[proto]
    if proto == "tcp":
        seg = struct.pack("!HHIIBBHHH", sport, dport, 1000 + idx, 0, 5 << 4,
                          tcp_flags, 8192, 0, 0) + payload
        ck_off = 16
    else:
        seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + \
            payload
        ck_off = 6
    if s.version == 4:
        pseudo = s.packed + d.packed + struct.pack("!BBH", 0, pnum, len(seg))
    else:
        pseudo = s.packed + d.packed + struct.pack("!IxxxB", len(seg), pnum)
    ck = _l4_csum(pseudo, seg)
    seg = seg[:ck_off] + struct.pack("!H", ck) + seg[ck_off + 2:]
    if s.version == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg),
                         idx & 0xFFFF, 0, 64, pnum, 0, s.packed, d.packed)
        ip = ip[:10] + struct.pack("!H", gen_sample.csum16(ip)) + ip[12:]
        eth = LB_APPLIANCE_MAC + LB_CLIENT_MAC + b"\x08\x00"
    else:
        ip = struct.pack("!IHBB16s16s", 0x60000000, len(seg), pnum, 64,
                         s.packed, d.packed)
        eth = LB_APPLIANCE_MAC + LB_CLIENT_MAC + b"\x86\xdd"
    frame = eth + ip + seg
    if len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def parse_ip(frame, off=None):
    """The IP header of an Ethernet frame (or at `off`): a dict with
    family, src, dst, proto, sport, dport (None without ports) and, for
    IP-in-IP (4 or 41), "inner": the encapsulated packet parsed alike.
    None for a frame that is not IP."""
    import ipaddress
    import struct
    if off is None:
        if len(frame) < 14:
            return None
        et = struct.unpack("!H", frame[12:14])[0]
        off = 14
        while et in (0x8100, 0x88A8) and len(frame) >= off + 4:
            et = struct.unpack("!H", frame[off + 2:off + 4])[0]
            off += 4
        if et not in (0x0800, 0x86DD):
            return None
    if len(frame) < off + 20:
        return None
    ver = frame[off] >> 4
    if ver == 4:
        ihl = (frame[off] & 0xF) * 4
        proto = frame[off + 9]
        src = str(ipaddress.IPv4Address(frame[off + 12:off + 16]))
        dst = str(ipaddress.IPv4Address(frame[off + 16:off + 20]))
        l4 = off + ihl
        frag = struct.unpack("!H", frame[off + 6:off + 8])[0] & 0x1FFF
    elif ver == 6:
        if len(frame) < off + 40:
            return None
        proto = frame[off + 6]
        src = str(ipaddress.IPv6Address(frame[off + 8:off + 24]))
        dst = str(ipaddress.IPv6Address(frame[off + 24:off + 40]))
        l4 = off + 40
        frag = 0
    else:
        return None
    out = {"family": ver, "src": src, "dst": dst, "proto": proto,
           "sport": None, "dport": None, "inner": None}
    if proto in (4, 41):
        out["inner"] = parse_ip(frame, l4)
    elif proto in (6, 17) and frag == 0 and len(frame) >= l4 + 4:
        out["sport"], out["dport"] = struct.unpack("!HH", frame[l4:l4 + 4])
    return out
