# SPDX-License-Identifier: BSD-3-Clause
"""The source blocklist (issue 17, CONTRACT sections 4 "protect" and 5
blocklist_*): replayed packets from blocklisted sources are dropped with
reason "blocklist" before the ACL (whose rules and counters never see
them), others unchanged, in rtc and pipeline modes; the blocklist_*
methods over the real socket; bad prefixes refused by index or line
number with nothing applied; the 1,000,000 limit; a bad protect.blocklist
file stops the daemon; a replay during repeated replaces loses or
misjudges no packet."""

import ipaddress
import json
import os
import re
import struct
import subprocess
import time

import pytest

import pautil
from pautil import CTL, PIPE4, RTC1, check_summary

DST = "203.0.113.10"
DST6 = "2001:db8:ff::10"
BLOCK = ["198.51.100.0/24", "192.0.2.77", "2001:db8:bad::/48",
         "2001:db8:1::5/128"]
# (source, blocked by BLOCK)
SOURCES = [("198.51.100.1", True), ("198.51.100.254", True),
           ("198.51.101.1", False), ("192.0.2.77", True),
           ("192.0.2.78", False), ("10.9.9.9", False),
           ("2001:db8:bad:ffff::1", True), ("2001:db8:bae::1", False),
           ("2001:db8:1::5", True), ("2001:db8:1::6", False)]
# an ACL rule that would drop every blocked source too: the blocklist
# comes first, so it never matches them
ACL = {"default": "permit", "rules": [
    {"id": 1, "priority": 10, "src": "198.51.0.0/16", "action": "drop"},
    {"id": 2, "priority": 10, "src": "10.0.0.0/8", "dport": "53",
     "proto": "udp", "action": "drop"}]}


def uniq(tmp_path, name):
    return str(tmp_path / ("i17b-" + name))


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def frames():
    """Per source: a TCP packet and a UDP/53 packet."""
    out = []
    for k, (src, blocked) in enumerate(SOURCES):
        dst = DST6 if ":" in src else DST
        out.append((pautil.l4_frame(src, dst, 1000 + k, 80, "tcp", idx=2 * k),
                    src, blocked, False))
        out.append((pautil.l4_frame(src, dst, 1000 + k, 53, "udp",
                                    idx=2 * k + 1),
                    src, blocked, src.startswith("10.")))
    return out


@pytest.mark.parametrize("mode", ["rtc", "pipeline"])
def test_replay_drops_blocklisted_sources_before_the_acl(mode, tmp_path,
                                                         run_replay):
    fr = frames()
    pcap = uniq(tmp_path, "in.pcap")
    pautil.write_pcap(pcap, [f[0] for f in fr])
    bl = write_lines(uniq(tmp_path, "block.txt"),
                     ["# test blocklist"] + BLOCK)
    conf = {"pipeline": RTC1 if mode == "rtc" else dict(PIPE4, burst=8),
            "acl": ACL, "protect": {"blocklist": bl}}
    res = run_replay(pcap, conf, drops=True)
    assert res.rc == 0, res.stderr
    n_block = sum(1 for f in fr if f[2])
    n_acl = sum(1 for f in fr if not f[2] and
                (f[1].startswith("198.51.") or f[3]))
    check_summary(res, len(fr), {"blocklist": n_block, "acl": n_acl})
    want_out = [f[0] for f in fr if not f[2] and not
                (f[1].startswith("198.51.") or f[3])]
    assert sorted(pautil.read_pcap(res.out_pcap)) == sorted(want_out)
    assert sorted(pautil.read_pcap(res.drops_pcap)) == sorted(
        f[0] for f in fr if f[2] or f[1].startswith("198.51.") or f[3])


def test_a_bad_blocklist_file_stops_the_daemon_with_its_line(tmp_path,
                                                            run_replay):
    pcap = uniq(tmp_path, "in.pcap")
    pautil.write_pcap(pcap, [frames()[0][0]])
    bl = write_lines(uniq(tmp_path, "bad.txt"),
                     ["10.0.0.0/8", "# fine", "192.0.2.1/24"])
    res = run_replay(pcap, {"protect": {"blocklist": bl}})
    assert res.rc != 0
    assert "$.protect.blocklist: %s: line 3: invalid prefix '192.0.2.1/24'" \
        ": host bits set (did you mean '192.0.2.0/24'?)" % bl in res.stderr, \
        res.stderr
    res = run_replay(pcap, {"protect": {"blocklist": bl + ".missing"}})
    assert res.rc != 0
    assert "$.protect.blocklist: cannot read '%s.missing'" % bl in \
        res.stderr, res.stderr


@pytest.fixture(scope="module")
def d(module_daemons, tmp_path_factory):
    pcap = str(tmp_path_factory.mktemp("bl") / "i17b-one.pcap")
    pautil.write_pcap(pcap, [frames()[0][0]])
    dm = module_daemons({"pipeline": RTC1, "acl": ACL}, pcap,
                        name="i17b-blocklist-rpc")
    dm.wait_replay_done(1)
    return dm


@pytest.fixture
def c(d):
    with d.client(timeout=60) as cl:
        yield cl


def err(c, method, params):
    resp = c.call_raw(method, params)
    assert "error" in resp, resp
    return resp["error"]


def test_rpc_replace_add_delete_get_and_trace(c):
    assert c.call("blocklist_replace", {"prefixes": BLOCK})["prefixes"] == 4
    g = c.call("blocklist_get")
    assert g["prefixes"] == 4 and g["prefixes4"] == 2 and \
        g["prefixes6"] == 2, g
    assert sorted(g["sample"]) == sorted(
        str(ipaddress.ip_network(p)) for p in BLOCK), g
    assert g["memory_bytes"] > 0 and isinstance(g["hits"], int), g
    assert c.call("blocklist_get", {"limit": 1})["sample"] == \
        ["192.0.2.77/32"]
    # add: duplicates count once; the total comes back
    r = c.call("blocklist_add", {"prefixes": ["192.0.2.77", "10.1.0.0/16",
                                              "10.1.0.0/16"]})
    assert r["prefixes"] == 5, r
    t = c.call("trace_packet", {"src": "10.1.2.3", "dst": DST,
                                "sport": 1, "dport": 80, "proto": "tcp"})
    assert t["verdict"] == "drop" and t["blocklist"] is True and \
        t["acl_rule"] is None and t["drop_reason"] == "blocklist", t
    r = c.call("blocklist_delete", {"prefixes": ["10.1.0.0/16",
                                                 "172.16.0.0/12"]})
    assert r["prefixes"] == 4, r
    t = c.call("trace_packet", {"src": "10.1.2.3", "dst": DST,
                                "sport": 1, "dport": 80, "proto": "tcp"})
    assert t["verdict"] == "forward" and t["blocklist"] is False, t
    st = c.call("stats_get")
    assert st["blocklist"]["prefixes"] == 4, st["blocklist"]
    assert c.call("blocklist_replace", {"prefixes": []})["prefixes"] == 0


def trace_src(c, src):
    dst = DST6 if ":" in src else DST
    return c.call("trace_packet", {"src": src, "dst": dst, "sport": 1,
                                   "dport": 80, "proto": "tcp"})["blocklist"]


def test_add_and_delete_go_to_the_delta_then_the_merger_folds_it(c):
    """An add or delete on a set is answered from a delta table beside the
    whole one (delta_added / delta_deleted), judged exactly (a deleted
    base prefix under a wider one, a delete of a prefix only in the
    delta), and the background merger folds it into a new whole table
    (merges) without changing the set. Events only: no timing."""
    base = ["10.2.0.0/16", "10.2.1.0/24", "10.2.2.7", "2001:db8:2::/48",
            "2001:db8:2:1::/64"]
    c.call("blocklist_replace", {"prefixes": base})
    m0 = c.call("blocklist_get", {"limit": 0}).get("merges")
    assert isinstance(m0, int), m0
    r = c.call("blocklist_add", {"prefixes": ["10.3.0.0/24", "10.2.3.128/25",
                                              "2001:db8:3::/48"]})
    assert r == {"prefixes": 8, "changed": 3}, r
    r = c.call("blocklist_delete", {"prefixes": ["10.2.0.0/16",
                                                 "2001:db8:2::/48",
                                                 "10.3.0.0/24"]})
    assert r == {"prefixes": 5, "changed": 3}, r
    g = c.call("blocklist_get", {"limit": 10})
    assert g["prefixes"] == 5, g
    assert sorted(g["sample"]) == sorted(
        ["10.2.1.0/24", "10.2.2.7/32", "10.2.3.128/25", "2001:db8:2:1::/64",
         "2001:db8:3::/48"]), g
    expect = {"10.2.1.9": True, "10.2.2.7": True, "10.2.2.8": False,
              "10.2.3.200": True, "10.2.3.1": False, "10.3.0.1": False,
              "2001:db8:2:1::9": True, "2001:db8:2:2::9": False,
              "2001:db8:3:5::1": True}
    for src, blocked in expect.items():
        assert trace_src(c, src) is blocked, src
    # the merger folds the delta (200 ms after the last change; a
    # generous deadline, no timing asserted)
    deadline = time.monotonic() + 120
    while True:
        g = c.call("blocklist_get", {"limit": 10})
        if g["merges"] > m0 and g["delta_added"] + g["delta_deleted"] == 0:
            break
        assert time.monotonic() < deadline, g
        time.sleep(0.1)
    assert g["prefixes"] == 5 and g["delta_bytes"] == 0, g
    for src, blocked in expect.items():
        assert trace_src(c, src) is blocked, src
    c.call("blocklist_replace", {"prefixes": []})


def test_rpc_bad_prefixes_are_named_and_nothing_applied(c):
    c.call("blocklist_replace", {"prefixes": BLOCK})
    e = err(c, "blocklist_replace", {"prefixes": ["10.0.0.0/8",
                                                  "10.0.0.1/8"]})
    assert e["code"] == -32602 and e["message"].startswith(
        "params.prefixes[1]: invalid prefix '10.0.0.1/8': host bits set"), e
    e = err(c, "blocklist_add", {"prefixes": ["10.0.0.0/8", 7]})
    assert e["code"] == -32602 and "params.prefixes[1]" in e["message"], e
    e = err(c, "blocklist_delete", {"prefixes": ["nope"]})
    assert e["code"] == -32602 and "params.prefixes[0]" in e["message"], e
    e = err(c, "blocklist_replace", {"prefixes": [], "path": "/x"})
    assert e["code"] == -32602, e
    e = err(c, "blocklist_add", {"prefix": ["10.0.0.0/8"]})
    assert e["code"] == -32602 and "params.prefix" in e["message"], e
    e = err(c, "blocklist_get", {"limit": -1})
    assert e["code"] == -32602 and "params.limit" in e["message"], e
    assert c.call("blocklist_get", {"limit": 0})["prefixes"] == 4


def test_rpc_bad_file_is_refused_with_its_line_and_nothing_applied(c,
                                                                   tmp_path):
    c.call("blocklist_replace", {"prefixes": BLOCK})
    bad = write_lines(uniq(tmp_path, "bad.txt"),
                      ["10.0.0.0/8", "", "2001:db8::/129"])
    e = err(c, "blocklist_replace", {"path": bad})
    assert e["code"] == -32602 and e["message"] == (
        "params.path: %s: line 3: invalid prefix '2001:db8::/129': length "
        "129 exceeds 128" % bad), e
    e = err(c, "blocklist_replace", {"path": bad + ".none"})
    assert e["code"] == -32602 and "cannot read" in e["message"], e
    g = c.call("blocklist_get")
    assert g["prefixes"] == 4, g
    good = write_lines(uniq(tmp_path, "good.txt"),
                       ["10.0.0.0/8  # a comment", "2001:db8::/32"])
    assert c.call("blocklist_replace", {"path": good})["prefixes"] == 2


def test_the_limit_is_a_million_and_over_it_nothing_changes(c, tmp_path):
    # 1,000,000 distinct /32s in 10.0.0.0/8 fit exactly ...
    path = uniq(tmp_path, "million.txt")
    with open(path, "w") as f:
        f.write("\n".join("10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255)
                          for i in range(1000000)) + "\n")
    t0 = time.monotonic()
    assert c.call("blocklist_replace", {"path": path})["prefixes"] == 1000000
    load = time.monotonic() - t0
    # ... one more does not, by add or by file
    e = err(c, "blocklist_add", {"prefixes": ["192.0.2.1"]})
    assert e["code"] == -32602 and "limit of 1000000" in e["message"], e
    with open(path, "a") as f:
        f.write("192.0.2.1\n")
    e = err(c, "blocklist_replace", {"path": path})
    assert e["code"] == -32602 and "more than 1000000 prefixes" in \
        e["message"], e
    g = c.call("blocklist_get", {"limit": 2})
    assert g["prefixes"] == 1000000 and g["sample"] == [
        "10.0.0.0/32", "10.0.0.1/32"], g
    print("1M /32s from a file: %.2f s over RPC, table %d bytes" % (
        load, g["memory_bytes"]))
    assert c.call("blocklist_replace", {"prefixes": []})["prefixes"] == 0


def test_console_prints_the_blocklist(d, tmp_path):
    d.call("blocklist_replace", {"prefixes": BLOCK})
    out = subprocess.run([CTL, "-s", d.sock, "blocklist_get"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "2001:db8:bad::/48" in out.stdout and "prefixes" in out.stdout, \
        out.stdout
    out = subprocess.run([CTL, "-s", d.sock, "blocklist_add",
                          "prefixes=[\"10.7.0.0/16\"]"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr + out.stdout
    assert d.call("blocklist_get")["prefixes"] == 5
    # the stats_get summary: a blocklist line with the same figures
    out = subprocess.run([CTL, "-s", d.sock, "stats_get"],
                         capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    g = d.call("blocklist_get", {"limit": 0})
    assert out.returncode == 0, out.stderr
    m = re.search(r"^blocklist prefixes (\d+) \(IPv4 (\d+), IPv6 (\d+)\)  "
                  r"hits (\d+)  delta \+(\d+) -(\d+) \(merges (\d+)\)  "
                  r"memory \S+B$", out.stdout, re.M)
    assert m, out.stdout
    assert [int(x) for x in m.group(1, 2, 3, 4)] == [
        g["prefixes"], g["prefixes4"], g["prefixes6"], g["hits"]], \
        (out.stdout, g)
    # the delta may have been merged between the two reads
    assert int(m.group(5)) in (1, g["delta_added"]) and \
        int(m.group(6)) == 0 and int(m.group(7)) <= g["merges"], \
        (out.stdout, g)
    d.call("blocklist_replace", {"prefixes": []})
    out = subprocess.run([CTL, "-s", d.sock, "stats_get"],
                         capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    assert out.returncode == 0 and "blocklist" not in out.stdout, out.stdout


# ---------------------------------------------------------------------------
# Hitless replace: a replay (burst 1) while the set flips between A and B

N_PKTS = int(os.environ.get("PA_BL_HITLESS_PACKETS", "300000"))
MIN_LIVE = 20
ETH = bytes.fromhex("0200000000fe" "020000000001")
PCAP_HDR = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
GROUPS = ("none", "a", "b", "both")
FILL = ["172.%d.%d.0/24" % (16 + (k >> 8), k & 255) for k in range(1000)] + \
    ["100.64.%d.%d" % (k >> 8, k & 255) for k in range(1000)]
SET_A = ["10.40.1.0/24", "10.40.3.0/24", "2001:db8:41::/48",
         "2001:db8:43::/48"] + FILL
SET_B = ["10.40.2.0/24", "10.40.3.0/24", "2001:db8:42::/48",
         "2001:db8:43::/48"] + FILL


def hitless_flows():
    """16 flows, 4 per group; group g's sources lie in 10.40.g.0/24 and
    2001:db8:4g::/48 (g 0 none, 1 a, 2 b, 3 both)."""
    flows = []
    for f in range(16):
        g = f % 4
        if f % 2 == 0:
            src = "10.40.%d.%d" % (g, f + 1)
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, f, 0, 64, 17, 0,
                             ipaddress.IPv4Address(src).packed,
                             ipaddress.IPv4Address(DST).packed)
            ip = ip[:10] + struct.pack(
                "!H", pautil.gen_sample.csum16(ip)) + ip[12:]
            fr = ETH + b"\x08\x00" + ip + struct.pack("!HHHH", 2000 + f, 80,
                                                      8, 0)
            fr += b"\0" * (60 - len(fr))
        else:
            src = "2001:db8:4%d::%x" % (g, f + 1)
            ip = struct.pack("!IHBB16s16s", 6 << 28, 8, 17, 64,
                             ipaddress.IPv6Address(src).packed,
                             ipaddress.IPv6Address(DST6).packed)
            fr = ETH + b"\x86\xdd" + ip + struct.pack("!HHHH", 2000 + f, 80,
                                                      8, 0)
        flows.append((fr, GROUPS[g]))
    return flows


ONLY_A = ["10.40.1.0/24", "2001:db8:41::/48"]
ONLY_B = ["10.40.2.0/24", "2001:db8:42::/48"]
# how: "replace" swaps the sets A and B whole; "delta" goes A -> A+B ->
# B -> A+B -> A with blocklist_add / blocklist_delete (the delta tier,
# merged in the background meanwhile): a packet of group a or b may meet
# A+B, none of groups none / both is ever misjudged
DELTA_STEPS = [("blocklist_add", ONLY_B, len(SET_A) + 2),
               ("blocklist_delete", ONLY_A, len(SET_A)),
               ("blocklist_add", ONLY_A, len(SET_A) + 2),
               ("blocklist_delete", ONLY_B, len(SET_A))]


@pytest.mark.parametrize("how", ["replace", "delta"])
def test_replace_during_a_replay_is_hitless(daemon_factory, tmp_path, how):
    flows = hitless_flows()
    pcap = uniq(tmp_path, "hitless.pcap")
    parts = [PCAP_HDR]
    recs = [struct.pack("<IIII", 1700000000, 0, len(fr), len(fr)) + fr
            for fr, _ in flows]
    for i in range(N_PKTS):
        parts.append(recs[i % len(flows)])
    with open(pcap, "wb") as fh:
        fh.write(b"".join(parts))
    path_a = write_lines(uniq(tmp_path, "a.txt"), SET_A)
    drops = uniq(tmp_path, "hitless-drops.pcap")
    conf = {"pipeline": dict(RTC1, burst=1), "protect": {"blocklist": path_a}}
    d = daemon_factory(conf, pcap, extra=("--replay-drops", drops),
                       wait=False, name="i17b-hitless-" + how)
    deadline = time.monotonic() + 30
    while not os.path.exists(d.sock):
        assert d.alive() and time.monotonic() < deadline, d.describe()
        time.sleep(0.002)
    c = None
    while c is None:
        try:
            c = pautil.RpcClient(d.sock, timeout=30)
        except OSError:
            assert time.monotonic() < deadline, d.describe()
            time.sleep(0.002)
    swaps = live = 0
    with c:
        st1 = c.call("stats_get")
        while True:
            st0 = st1
            if how == "delta":
                method, ps, total = DELTA_STEPS[swaps % 4]
                r = c.call(method, {"prefixes": ps})
                assert r == {"prefixes": total, "changed": 2}, r
            elif swaps % 2 == 0:
                r = c.call("blocklist_replace", {"prefixes": SET_B})
            else:
                r = c.call("blocklist_replace", {"path": path_a})
            assert how == "delta" or r["prefixes"] == len(SET_A), r
            swaps += 1
            st1 = c.call("stats_get")
            done = st1["tx_packets"] + st1["dropped_packets"]
            if st0["tx_packets"] + st0["dropped_packets"] < done < N_PKTS:
                live += 1
            if done >= N_PKTS:
                break
            assert swaps < 100000, "replay never finished"
        assert c.call("shutdown") is True
    rc = d.wait()
    assert rc == 0, d.describe()
    res = pautil.Result(d.args, rc, d.stdout, d.stderr)
    s = check_summary(res, N_PKTS)
    assert set(k for k, v in s["drops"].items() if v) <= {"blocklist"}, s
    by_frame = {fr: g for fr, g in flows}
    seen = {g: [0, 0] for g in GROUPS}     # forwarded, dropped
    for k, p in ((0, d.out_pcap), (1, drops)):
        for fr in pautil.read_pcap(p):
            assert fr in by_frame, "unknown frame %s" % fr[:60].hex()
            seen[by_frame[fr]][k] += 1
    per_group = N_PKTS // 4
    assert seen["none"] == [per_group, 0], seen
    assert seen["both"] == [0, per_group], seen
    assert sum(seen["a"]) == per_group and sum(seen["b"]) == per_group, seen
    assert live >= MIN_LIVE, "only %d of %d replaces while packets flowed" \
        " (make PA_BL_HITLESS_PACKETS larger)" % (live, swaps)
    # both sets took effect while the replay ran
    assert min(seen["a"]) > 0 and min(seen["b"]) > 0, seen
    print("%d replaces, %d while packets flowed: %s" % (swaps, live, seen))


def test_pipeline_get_reports_the_offload_probe_of_each_port(c):
    """net_pcap (the replay port) has no rte_flow: the probe says so and
    the whole blocklist stays in software."""
    c.call("blocklist_replace", {"prefixes": BLOCK})
    off = c.call("pipeline_get")["offload"]
    assert set(off) == {"replay0"}, off
    o = off["replay0"]
    assert o["capable"] is False and o["active"] is False and \
        o["blocklist"] == 0 and \
        o["acl_drop"] == 0 and o["hits"] is None, o
    assert o["reason"] == "no drop by IPv4 source prefix: " \
        "rte_flow_validate: Function not implemented", o
    assert o["acl_reason"] == "not capable", o
    print(o["reason"])
