# SPDX-License-Identifier: BSD-3-Clause
"""Hitless ACL updates (issue 3, docs/rpc.md): a long replay
(-s --stay) while a client swaps the whole table between two rule sets A
and B with acl_rules_replace as fast as it can (or toggles one rule with
acl_rule_add / acl_rule_delete). Every packet's fate must be the one of
table A or of table B, never anything else (no loss, no half-built
table): conservation holds, the only drop reason is "acl", no mbuf
leaks, forwarded and dropped frames are byte-identical to the input.

A drops UDP dport 1000-1999, B drops dport 2000-2999, both drop
3000-3099 (rule 3, in both tables, whose hit counter must survive every
swap exactly). The traffic is plain IPv4/IPv6 UDP built with struct
(fast); burst 1 makes the replay last long enough (about 1.5-2 s for
1.5M packets on 2 CPUs) for many swaps while packets flow."""

import ipaddress
import os
import random
import struct
import time

import pytest

import acl_model as am
import pautil
from pautil import PIPE4, RTC1, check_summary

N_PKTS = int(os.environ.get("PA_HITLESS_PACKETS", "1500000"))
N_FLOWS = 509
MIN_LIVE_SWAPS = 10
BURST = 1

RING = 1024
MODES = {"rtc1": dict(RTC1, burst=BURST),
         "pipeline4": dict(PIPE4, burst=BURST, ring_size=RING)}
# Timeline check (see check_timeline): packets counted as received after
# a change answered, plus LAG_LO, were classified by the new table;
# packets counted as received before the next change was sent, minus
# LAG_HI (what the rx->classify ring and the bursts in hand may hold),
# were classified before it.
LAG_LO = 64
LAG_HI = RING + 64
# every PAUSE_EVERY-th change is followed by a pause, so that the timeline
# check has packets well inside the intervals between changes
PAUSE_EVERY = 3     # odd: pauses follow either table
PAUSE_S = 0.005
MIN_TIMELINE = 20000

RULE_A = {"id": 1, "priority": 10, "dport": "1000-1999", "proto": "udp",
          "action": "drop"}
RULE_B = {"id": 2, "priority": 10, "dport": "2000-2999", "proto": "udp",
          "action": "drop"}
RULE_BOTH = {"id": 3, "priority": 5, "dport": "3000-3099", "action": "drop"}
# rules that never match the traffic, so that each build has some work
FILLERS = (
    [{"id": 100 + k, "priority": k % 7, "src": "192.0.%d.0/24" % k,
      "dport": "%d-%d" % (k * 10, k * 10 + 5), "proto": "udp",
      "action": "drop"} for k in range(60)] +
    [{"id": 200 + k, "priority": k % 7, "dst": "fd99:%x::/32" % k,
      "proto": "tcp", "action": "drop"} for k in range(60)])
TABLE_A = {"default": "permit", "rules": [RULE_A, RULE_BOTH] + FILLERS}
TABLE_B = {"default": "permit", "rules": [RULE_B, RULE_BOTH] + FILLERS}
TABLE_BASE = {"default": "permit", "rules": [RULE_BOTH] + FILLERS}

ETH = bytes.fromhex("0200000000fe" "020000000001")
PCAP_HDR = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


class Bulk:
    """N_PKTS UDP packets over N_FLOWS flows (packet i is in flow
    i % N_FLOWS); 3 of 4 flows IPv4, 1 of 4 IPv6. Frame i is
    head[flow] + b'IDX%08d' % i + tail[flow]."""

    def __init__(self, n, seed=4711):
        rng = random.Random(seed)
        self.n = n
        self.head, self.tail, self.descs, self.cls = [], [], [], []
        for f in range(N_FLOWS):
            c = rng.choice(["none"] * 7 + ["A"] * 5 + ["B"] * 5 +
                           ["both"] * 3)
            dport = {"none": rng.choice([rng.randint(0, 999),
                                         rng.randint(3100, 65535)]),
                     "A": rng.randint(1000, 1999),
                     "B": rng.randint(2000, 2999),
                     "both": rng.randint(3000, 3099)}[c]
            sport = 1024 + f
            if f % 4 != 3:
                src = "10.30.%d.%d" % (f >> 8, f & 255)
                dst = "203.0.113.%d" % (f % 250 + 1)
                udp = struct.pack("!HHHH", sport, dport, 8 + am.MARK_LEN, 0)
                ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0,
                                 20 + 8 + am.MARK_LEN, f, 0, 64, 17, 0,
                                 bytes(map(int, src.split("."))),
                                 bytes(map(int, dst.split("."))))
                ip = ip[:10] + struct.pack("!H", am.csum16(ip)) + ip[12:]
                self.head.append(ETH + b"\x08\x00" + ip + udp)
                self.tail.append(b"\0" * 7)          # Ethernet padding
                fam = 4
            else:
                src = "2001:db8:30::%x" % f
                dst = "2001:db8:31::%x" % (f % 250 + 1)
                udp = struct.pack("!HHHH", sport, dport, 8 + am.MARK_LEN, 0)
                ip = struct.pack("!IHBB16s16s", 6 << 28 | f, 8 + am.MARK_LEN,
                                 17, 64, ipaddress.IPv6Address(src).packed,
                                 ipaddress.IPv6Address(dst).packed)
                self.head.append(ETH + b"\x86\xdd" + ip + udp)
                self.tail.append(b"")
                fam = 6
            self.descs.append(am.PktDesc(fam, src, dst, 17, sport, dport,
                                         True, am.REPLAY_PORT, False))
            self.cls.append(c)

    def frame(self, i):
        f = i % N_FLOWS
        return self.head[f] + (am.MARK_FMT % i) + self.tail[f]

    def write(self, path):
        recs = []
        for f in range(N_FLOWS):
            ln = len(self.head[f]) + am.MARK_LEN + len(self.tail[f])
            recs.append(struct.pack("<IIII", 1700000000, 0, ln, ln))
        parts = [PCAP_HDR]
        head, tail, mk = self.head, self.tail, am.MARK_FMT
        for i in range(self.n):
            f = i % N_FLOWS
            parts.append(recs[f] + head[f] + (mk % i) + tail[f])
        with open(path, "wb") as fh:
            fh.write(b"".join(parts))

    def fates(self, path, code, fate, what):
        """Mark fate[i] = code for every frame of a pcap; frames must be
        byte-identical to their input and appear once."""
        buf = pautil.read_pcap(path)
        bad = []
        for fr in buf:
            pos = 45 if fr[12:14] == b"\x08\x00" else 65
            i = int(fr[pos:pos + 8]) if fr[pos - 3:pos] == b"IDX" else -1
            if i < 0 or i >= self.n or fr != self.frame(i):
                bad.append("%s frame not an input frame: %s" % (
                    what, fr[:80].hex()))
            elif fate[i]:
                bad.append("%s: packet %d seen twice" % (what, i))
            else:
                fate[i] = code
            if len(bad) > 10:
                break
        assert not bad, "\n".join(bad)
        return len(buf)


@pytest.fixture(scope="module")
def bulk(tmp_path_factory):
    b = Bulk(N_PKTS)
    path = str(tmp_path_factory.mktemp("hitless") / "bulk.pcap")
    b.write(path)
    yield b, path
    os.unlink(path)


def connect_asap(sock, d, timeout=30):
    """Connect as soon as the socket file appears."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not d.alive():
            raise AssertionError("daemon exited\n" + d.describe())
        if os.path.exists(sock):
            try:
                return pautil.RpcClient(sock, timeout=30)
            except OSError:
                pass
        time.sleep(0.001)
    raise AssertionError("no socket after %ds\n%s" % (timeout, d.describe()))


def done_count(c):
    st = c.call("stats_get")
    return st["rx_packets"], st["tx_packets"] + st["dropped_packets"]


def run_hitless(mode, bulk, daemon_factory, tmp_path, initial, ops):
    """Replay the bulk traffic with table `initial` while calling
    ops[k % len(ops)] (a (method, params) pair) back to back. Returns
    (fate per packet, swaps, live swaps, rule list, summary, log), log
    holding for each change (rx_packets before it was sent, rx_packets
    after it answered)."""
    b, pcap = bulk
    drops = str(tmp_path / "drops.pcap")
    conf = {"pipeline": MODES[mode], "acl": initial}
    d = daemon_factory(conf, pcap, extra=("--replay-drops", drops),
                       wait=False, name="hitless-" + mode)
    try:
        c = connect_asap(d.sock, d)
        swaps = live = 0
        log = []
        first_live = last_live = None
        t0 = time.monotonic()
        with c:
            while True:
                rx0, done0 = done_count(c)
                method, params = ops[swaps % len(ops)]
                resp = c.call_raw(method, params)
                assert "error" not in resp, "%s failed: %s" % (method, resp)
                swaps += 1
                rx1, done1 = done_count(c)
                log.append((rx0, rx1))
                if swaps % PAUSE_EVERY == 0:
                    time.sleep(PAUSE_S)
                if done0 < done1 < b.n:
                    live += 1
                    if first_live is None:
                        first_live = (swaps, rx0)
                    last_live = (swaps, rx1)
                if done1 >= b.n:
                    break
                if time.monotonic() - t0 > 120:
                    raise AssertionError("replay not done after 120s: %d/%d"
                                         % (done1, b.n))
            rules = c.call("acl_rule_list")
            stats = c.call("stats_get")
            assert c.call("shutdown") is True
        rc = d.wait()
        res = pautil.Result(d.args, rc, d.stdout, d.stderr)
        assert rc == 0, d.describe()
        s = check_summary(res, b.n)
        nonacl = {k: v for k, v in s["drops"].items() if v and k != "acl"}
        assert not nonacl, "drops other than acl: %s" % s["drops"]
        assert stats["drops"]["acl"] == s["drops"]["acl"], (stats, s)
        assert live >= MIN_LIVE_SWAPS, (
            "only %d of %d table changes completed while packets were "
            "flowing (first live %s, last live %s; replay %.2fs): make the "
            "replay longer (PA_HITLESS_PACKETS)" % (
                live, swaps, first_live, last_live,
                s.get("duration_s", -1)))
        print("%s: %d table changes, %d while packets flowed; replay "
              "%.2fs, acl drops %d" % (mode, swaps, live,
                                       s.get("duration_s", -1),
                                       s["drops"]["acl"]))
        fate = bytearray(b.n)
        n_out = b.fates(d.out_pcap, 1, fate, "output")
        n_drop = b.fates(drops, 2, fate, "drops")
        assert n_out == s["tx_packets"] and n_drop == s["dropped_packets"], \
            (n_out, n_drop, s)
        missing = fate.count(0)
        assert missing == 0, "%d packets neither forwarded nor dropped" % (
            missing)
        return fate, swaps, live, rules, s, log
    finally:
        for p in (d.out_pcap, drops):
            try:
                os.unlink(p)
            except OSError:
                pass


def check_fates(b, fate, tables):
    """Each packet's fate is its flow's fate under one of the tables; the
    flows on which the tables disagree saw both fates (the swaps took
    effect in the data path)."""
    models = [am.AclModel(t) for t in tables]
    allowed = []
    for desc in b.descs:
        allowed.append({1 if m.classify(desc).verdict == "forward" else 2
                        for m in models})
    bad = []
    seen = {}
    for i in range(b.n):
        f = i % N_FLOWS
        fi = fate[i]
        if fi not in allowed[f]:
            bad.append(i)
        seen.setdefault(b.cls[f], set()).add(fi)
    if bad:
        lines = ["%d packets with a fate no table gives" % len(bad)]
        for i in bad[:15]:
            f = i % N_FLOWS
            lines.append("#%d flow %d (%s, dport %d): %s, allowed %s" % (
                i, f, b.cls[f], b.descs[f].dport,
                "forwarded" if fate[i] == 1 else "dropped", allowed[f]))
        raise AssertionError("\n".join(lines))
    return seen


def check_timeline(b, fate, log, tables):
    """A change is live when its call answers, and not before it is sent:
    packets received (rx_packets, replayed in index order, classified in
    order by one classifier) after change k answered and before change
    k+1 was sent have the fate of tables[k + 1] (tables[0]: the initial
    one). Returns how many packets were checked."""
    models = [am.AclModel(t) for t in tables]
    flow_fate = [[1 if m.classify(d).verdict == "forward" else 2
                  for d in b.descs] for m in models]
    bounds = [(0, None)] + log + [(b.n + LAG_HI, None)]
    checked = 0
    intervals = [0] * len(models)
    bad = []
    for k in range(len(bounds) - 1):
        lo = 0 if k == 0 else bounds[k][1] + LAG_LO
        hi = min(b.n, bounds[k + 1][0] - LAG_HI)
        want = flow_fate[k % len(models)]
        if hi - lo > 100:
            intervals[k % len(models)] += 1
        for i in range(lo, hi):
            checked += 1
            if fate[i] != want[i % N_FLOWS]:
                bad.append((i, k, lo, hi))
    if bad:
        lines = ["%d packets classified by the wrong table for when they "
                 "were received" % len(bad)]
        for i, k, lo, hi in bad[:15]:
            f = i % N_FLOWS
            lines.append("#%d (%s, dport %d) %s, in [%d, %d) after change "
                         "%d (table %d)" % (
                             i, b.cls[f], b.descs[f].dport,
                             "forwarded" if fate[i] == 1 else "dropped",
                             lo, hi, k, k % len(models)))
        raise AssertionError("\n".join(lines))
    assert min(intervals) >= 5, "too few intervals checked per table: %s" % (
        intervals)
    print("timeline: %d packets in %s intervals checked" % (checked,
                                                          intervals))
    return checked


def _hits(rules):
    return {r["id"]: r["hits"] for r in rules}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_replace_swaps_hitless(mode, bulk, daemon_factory, tmp_path):
    b = bulk[0]
    ops = [("acl_rules_replace", TABLE_B), ("acl_rules_replace", TABLE_A)]
    fate, swaps, live, rules, s, log = run_hitless(
        mode, bulk, daemon_factory, tmp_path, TABLE_A, ops)
    seen = check_fates(b, fate, [TABLE_A, TABLE_B])
    checked = check_timeline(b, fate, log, [TABLE_A, TABLE_B])
    assert checked >= MIN_TIMELINE, "timeline checked only %d packets" % (
        checked)
    assert seen["none"] == {1} and seen["both"] == {2}, seen
    assert seen["A"] == {1, 2}, "dport 1000-1999 (A drops, B permits) " \
        "fates: %s after %d swaps" % (seen["A"], swaps)
    assert seen["B"] == {1, 2}, "dport 2000-2999 (B drops, A permits) " \
        "fates: %s after %d swaps" % (seen["B"], swaps)
    both = sum(1 for i in range(b.n) if b.cls[i % N_FLOWS] == "both")
    h = _hits(rules)
    assert h.get(3) == both, "rule 3 (in both tables) hits %s, %d packets " \
        "matched it: its counter did not survive the swaps" % (h.get(3), both)
    assert all(h[r["id"]] == 0 for r in FILLERS), rules


@pytest.mark.parametrize("mode", sorted(MODES))
def test_add_delete_toggle_hitless(mode, bulk, daemon_factory, tmp_path):
    b = bulk[0]
    ops = [("acl_rule_add", RULE_A), ("acl_rule_delete", {"id": 1})]
    fate, swaps, live, rules, s, log = run_hitless(
        mode, bulk, daemon_factory, tmp_path, TABLE_BASE, ops)
    with_a = {"default": "permit", "rules": TABLE_BASE["rules"] + [RULE_A]}
    seen = check_fates(b, fate, [TABLE_BASE, with_a])
    checked = check_timeline(b, fate, log, [TABLE_BASE, with_a])
    assert checked >= MIN_TIMELINE, "timeline checked only %d packets" % (
        checked)
    assert seen["none"] == {1} and seen["B"] == {1}, seen
    assert seen["both"] == {2}, seen
    assert seen["A"] == {1, 2}, "dport 1000-1999 fates: %s after %d " \
        "toggles" % (seen["A"], swaps)
    both = sum(1 for i in range(b.n) if b.cls[i % N_FLOWS] == "both")
    assert _hits(rules).get(3) == both, rules[:3]
