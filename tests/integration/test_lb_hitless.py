# SPDX-License-Identifier: BSD-3-Clause
"""Hitless load-balancer updates (lib/lb/pa_lb.h, docs/rpc.md "Load-balancer
methods"): new Maglev tables are built off the data path and swapped with
RCU like ACL tables, so no packet is lost, mangled or misrouted because of
an update.

A long replay (-s --stay, burst 1: about 1-3 s) of UDP traffic to a Maglev
ipip service "web" (4 original backends) and to a second VIP, plus traffic
that is for no service, while a client hammers the LB with changes as fast
as it can: lb_backend_add / lb_backend_delete of extra backends,
lb_backend_set weight changes and drain / up on backends, and
lb_service_add / lb_service_delete of an unrelated service "other" on the
second VIP. "web" always keeps a usable backend (10.1.0.1 is never
touched), so no drop of any kind is legitimate.

Checked afterwards:
 - conservation, no drop at all, no mbuf leak, no lb no_backend / mtu /
   no_room / flow_table_full / expiry, one LB version per change;
 - every output frame is an unchanged input frame (traffic for no
   service) or a valid IPv4-in-IPv4 encapsulation (lb_model.check_ipip4)
   of an input frame, byte-identical inside, to a backend of its
   service; every input frame is in the output exactly once;
 - stickiness: the "early" flows, whose first packets all pass before the
   first change, stay on one original backend for the whole run; the
   "late" flows, created while the changes run, leave a backend only when
   it is an extra backend deleted between the flow's previous packet and
   this one (within the timeline's lags; originals are never deleted nor
   set down);
   "other"'s flows always get the same backend (its Maglev table is a
   function of its backend set, which never changes);
 - timeline (as in test_acl_hitless.py): packets received after a change
   answered (+LAG_LO) and before the next one was sent (-LAG_HI) see the
   state after that change: they go only to backends the service has,
   a flow's first packet (or its first after a move) only to a usable one
   (up, weight > 0: never to a draining one), and packets to the second
   VIP are encapsulated exactly when "other" exists;
 - the per-backend packet counters of the original backends
   (lb_service_list) equal what the output shows, and the final
   lb_service_list matches the state the changes should have left.

The traffic is plain IPv4/IPv6 UDP built with struct (fast). Packet i is
in slot i % N_SLOTS; each slot is one flow ("late" slots carry a flow for
no service until their flow starts)."""

import array
import collections
import os
import random
import struct
import time

import pytest

import lb_model as lm
import pautil
from pautil import PIPE4, RTC1, check_summary

N_PKTS = int(os.environ.get("PA_LB_HITLESS_PACKETS", "600000"))
N_SLOTS = 509
N_EARLY = 250
N_LATE = 130
N_VIP2 = 50
# the rest (79 slots): traffic for no service
MIN_LIVE_CHANGES = 10
BURST = 1

RING = 1024
MODES = {"rtc1": dict(RTC1, burst=BURST),
         "pipeline4": dict(PIPE4, burst=BURST, ring_size=RING)}
# Timeline (see test_acl_hitless.py): packets counted as received LAG_LO
# after a change answered were balanced by the new tables; packets counted
# as received LAG_HI before the next change was sent were balanced before
# it: in pipeline mode the lb stage is two rings (rx->classify and
# classify->lb) and the bursts in hand behind rx; in rtc mode, a burst.
LAG_LO = 64
LAG_HI = {"rtc1": 64, "pipeline4": 2 * RING + 64}
# every PAUSE_EVERY-th change is followed by a pause, so that the timeline
# check has packets well inside the intervals between changes
PAUSE_EVERY = 5     # coprime with len(OPS): pauses follow every state
PAUSE_S = 0.01
MIN_TIMELINE = 20000

LOCAL4 = "192.0.2.254"
VIP = "192.0.2.10"
VIP2 = "192.0.2.20"
PORT = 5000
O0, O1, O2, O3 = ORIG = ["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"]
X0, X1 = EXTRA = ["10.1.0.11", "10.1.0.12"]
Y = ["10.2.0.1", "10.2.0.2"]
ALL_BE = ORIG + EXTRA + Y
UNCHANGED = 1
CODE = {a: k + 2 for k, a in enumerate(ALL_BE)}
ADDR = {c: a for a, c in CODE.items()}
ORIG_C = frozenset(CODE[a] for a in ORIG)
EXTRA_C = frozenset(CODE[a] for a in EXTRA)
WEB_C = ORIG_C | EXTRA_C
Y_C = frozenset(CODE[a] for a in Y)

WEB = {"name": "web", "vip": VIP, "port": PORT, "proto": "udp",
       "scheduler": "maglev", "forward": "ipip",
       "backends": [{"addr": a, "weight": 1} for a in ORIG]}
OTHER = {"name": "other", "vip": VIP2, "port": PORT, "proto": "udp",
         "scheduler": "maglev", "forward": "ipip",
         "backends": [{"addr": a, "weight": 1} for a in Y]}


def _web(addr, **kw):
    d = {"service": "web", "addr": addr}
    d.update(kw)
    return d


# One cycle of changes; it ends in the state it starts from (checked by
# simulate()). O0 is never touched: "web" always has a usable backend.
OPS = [
    ("lb_backend_add", _web(X0, weight=3)),
    ("lb_service_add", OTHER),
    ("lb_backend_set", _web(O1, state="drain")),
    ("lb_backend_add", _web(X1, weight=2)),
    ("lb_backend_set", _web(X0, weight=1)),
    ("lb_backend_set", _web(O2, weight=0)),
    ("lb_service_delete", {"name": "other"}),
    ("lb_backend_set", _web(O1, state="up")),
    ("lb_backend_delete", _web(X0)),
    ("lb_backend_set", _web(O2, weight=1)),
    ("lb_backend_set", _web(X1, state="drain")),
    ("lb_backend_set", _web(O3, weight=3)),
    ("lb_backend_delete", _web(X1)),
    ("lb_backend_set", _web(O3, weight=1)),
]


class State:
    """What the LB should hold: web's backends {addr: [weight, state]}
    and whether "other" exists."""

    def __init__(self, web=None, other=False):
        self.web = {a: [1, "up"] for a in ORIG} if web is None else web
        self.other = other

    def copy(self):
        return State({a: list(v) for a, v in self.web.items()}, self.other)

    def apply(self, method, p):
        s = self.copy()
        if method == "lb_backend_add":
            assert p["addr"] not in s.web, (method, p)
            s.web[p["addr"]] = [p.get("weight", 1), p.get("state", "up")]
        elif method == "lb_backend_delete":
            del s.web[p["addr"]]
        elif method == "lb_backend_set":
            be = s.web[p["addr"]]
            if "weight" in p:
                be[0] = p["weight"]
            if "state" in p:
                be[1] = p["state"]
        elif method == "lb_service_add":
            assert not s.other
            s.other = True
        elif method == "lb_service_delete":
            assert s.other
            s.other = False
        else:
            raise ValueError(method)
        assert any(w > 0 and st == "up" for w, st in s.web.values()), \
            "web left without a usable backend"
        s.present = frozenset(CODE[a] for a, (w, st) in s.web.items()
                              if st != "down")
        s.usable = frozenset(CODE[a] for a, (w, st) in s.web.items()
                             if st == "up" and w > 0)
        return s

    def key(self):
        return (sorted((a, tuple(v)) for a, v in self.web.items()),
                self.other)


def simulate(n_changes):
    """States[0] (initial) .. states[n_changes] (after change k-1)."""
    s0 = State()
    s0.present = s0.usable = ORIG_C
    states = [s0]
    for k in range(n_changes):
        m, p = OPS[k % len(OPS)]
        states.append(states[-1].apply(m, p))
    return states


def test_ops_cycle_is_consistent():
    """The cycle of changes is valid from the initial state, returns to it
    and never leaves web without a usable backend."""
    st = simulate(2 * len(OPS))
    assert st[len(OPS)].key() == st[0].key() == st[-1].key()


# --------------------------------------------------------------------------
# traffic

ETH4 = lm.APPLIANCE_MAC + lm.CLIENT_MAC + b"\x08\x00"
ETH6 = lm.APPLIANCE_MAC + lm.CLIENT_MAC + b"\x86\xdd"
MARK_FMT = pautil.gen_sample.MARK_FMT
MARK_LEN = pautil.gen_sample.MARK_LEN
PCAP_HDR = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
# where the marker's digits are: plain IPv4 UDP (marker at 42, frame
# padded to 60), IPv6 (marker at 62, 73 bytes), ipip (outer 20 bytes,
# marker at 62, 73 bytes, padding cut)
M4, M6, MIPIP = 45, 65, 65
IPIP_LEN = 14 + 20 + 20 + 8 + MARK_LEN

K_EARLY, K_LATE, K_VIP2, K_NOISE = range(4)
KIND_NAME = {K_EARLY: "early", K_LATE: "late", K_VIP2: "vip2",
             K_NOISE: "noise", -1: "late (before its start)"}


def ip4_head(src, dst, sport, dport, ident, tos, df):
    udp = struct.pack("!HHHH", sport, dport, 8 + MARK_LEN, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + 8 + MARK_LEN, ident,
                     0x4000 if df else 0, 64, 17, 0, lm.ip_bytes(src),
                     lm.ip_bytes(dst))
    ip = ip[:10] + struct.pack("!H", lm.csum16(ip)) + ip[12:]
    return ETH4 + ip + udp


class LbBulk:
    """n packets over N_SLOTS slots (packet i in slot i % N_SLOTS). Frame i
    is head + b'IDX%08d' % i + tail of its slot (of its "pre" flow for a
    late slot before its start)."""

    def __init__(self, n, seed=20250520):
        rng = random.Random(seed)
        self.n = n
        kinds = ([K_EARLY] * N_EARLY + [K_LATE] * N_LATE +
                 [K_VIP2] * N_VIP2)
        kinds += [K_NOISE] * (N_SLOTS - len(kinds))
        rng.shuffle(kinds)
        self.kind = kinds
        self.head, self.tail, self.pre, self.start = [], [], [], []
        self.df = []
        noise = 0
        for f in range(N_SLOTS):
            k = kinds[f]
            src = "100.64.%d.%d" % (f >> 8, f & 255)
            sport = 1024 + f
            df = f % 3 != 0
            tos = rng.choice([0, 0, 0x10, 0xB8, 0x03])
            self.df.append(df)
            start = 0
            pre = None
            if k == K_NOISE:
                noise += 1
                sub = noise % 4
                if sub == 3:
                    ip = struct.pack("!IHBB16s16s", 6 << 28 | f,
                                     8 + MARK_LEN, 17, 64,
                                     lm.ip_bytes("2001:db8:30::%x" % f),
                                     lm.ip_bytes("2001:db8:31::%x" % f))
                    head = ETH6 + ip + struct.pack("!HHHH", sport, PORT,
                                                   8 + MARK_LEN, 0)
                    self.head.append(head)
                    self.tail.append(b"")
                else:
                    dst, dport = [(VIP, PORT + 1), (VIP2, PORT + 1),
                                  ("198.51.100.%d" % (1 + f % 250),
                                   PORT)][sub]
                    self.head.append(ip4_head(src, dst, sport, dport, f, tos,
                                              df))
                    self.tail.append(b"\0" * 7)
            else:
                dst = VIP2 if k == K_VIP2 else VIP
                self.head.append(ip4_head(src, dst, sport, PORT, f, tos, df))
                self.tail.append(b"\0" * 7)
                if k == K_LATE:
                    start = rng.randint(n // 20, n * 17 // 20)
                    pre = ip4_head("100.65.%d.%d" % (f >> 8, f & 255),
                                   "198.51.100.251", sport, PORT, f, tos, df)
            self.start.append(start)
            self.pre.append(pre)

    def kind_at(self, i):
        f = i % N_SLOTS
        return -1 if i < self.start[f] else self.kind[f]

    def frame(self, i):
        f = i % N_SLOTS
        head = self.pre[f] if i < self.start[f] else self.head[f]
        return head + (MARK_FMT % i) + self.tail[f]

    def write(self, path):
        recs = [struct.pack("<IIII", 1700000000, 0, len(h) + MARK_LEN + len(t),
                            len(h) + MARK_LEN + len(t))
                for h, t in zip(self.head, self.tail)]
        parts = [PCAP_HDR]
        head, pre, start, tail, mk = (self.head, self.pre, self.start,
                                      self.tail, MARK_FMT)
        for i in range(self.n):
            f = i % N_SLOTS
            parts.append(recs[f] + (pre[f] if i < start[f] else head[f]) +
                         (mk % i) + tail[f])
        with open(path, "wb") as fh:
            fh.write(b"".join(parts))

    def fates(self, frames, fate):
        """fate[i] = UNCHANGED or CODE[backend] for each output frame, each
        checked against its input (ipip: lm.check_ipip4 once per flow and
        backend, then the same outer header and inner headers, the right
        marker; the outer id and checksum only of non-DF packets vary).
        Returns the port MAC (the source MAC of ipip frames)."""
        cache = {}
        bad = []
        port_mac = None
        csum16 = lm.csum16
        for n, fr in enumerate(frames):
            et = fr[12:14]
            if et == b"\x08\x00" and fr[23] == lm.IPIP:
                if len(fr) != IPIP_LEN or fr[MIPIP - 3:MIPIP] != b"IDX":
                    bad.append("output #%d: ipip frame of unexpected shape: "
                               "%s" % (n, fr[:80].hex()))
                    continue
                i = int(fr[MIPIP:MIPIP + 8])
                if i >= self.n or fr[MIPIP - 3:] != MARK_FMT % i:
                    bad.append("output #%d: bad marker %r" % (n, fr[-14:]))
                    continue
                f = i % N_SLOTS
                df = self.df[f]
                key = fr[:MIPIP] if df else \
                    fr[:18] + fr[20:24] + fr[26:MIPIP]
                v = cache.get(key)
                if v is None:
                    if port_mac is None:
                        port_mac = fr[6:12]
                    v = self._check_ipip(n, i, fr, port_mac)
                    cache[key] = v
                if isinstance(v, str):
                    bad.append(v)
                    continue
                if v[0] != f or self.kind_at(i) not in (K_EARLY, K_LATE,
                                                        K_VIP2):
                    bad.append("output #%d: input #%d (slot %d, %s) "
                               "encapsulated like slot %d's packets" % (
                                   n, i, f, KIND_NAME[self.kind_at(i)],
                                   v[0]))
                    continue
                if not df and csum16(fr[14:34]) != 0:
                    bad.append("output #%d (input #%d): outer header "
                               "checksum invalid" % (n, i))
                    continue
                code = v[1]
            else:
                pos = M4 if et == b"\x08\x00" else M6
                i = int(fr[pos:pos + 8]) if fr[pos - 3:pos] == b"IDX" else -1
                if i < 0 or i >= self.n or fr != self.frame(i):
                    bad.append("output #%d is no input frame: %s" % (
                        n, fr[:80].hex()))
                    continue
                code = UNCHANGED
            if fate[i]:
                bad.append("output #%d: input #%d seen twice" % (n, i))
            else:
                fate[i] = code
            if len(bad) > 15:
                break
        assert not bad, "\n".join(bad)
        return port_mac

    def _check_ipip(self, n, i, fr, port_mac):
        """(slot, backend code) of a valid ipip frame of input i, or the
        problems as a string."""
        f = i % N_SLOTS
        k = self.kind_at(i)
        dst = lm.outer_dst(fr)[0]
        allowed = {K_EARLY: WEB_C, K_LATE: WEB_C, K_VIP2: Y_C}.get(k, ())
        pr = lm.check_ipip4(fr, self.frame(i), LOCAL4, dst, port_mac,
                            lm.CLIENT_MAC)
        if CODE.get(dst) not in allowed:
            pr.append("backend %s is no backend of its service" % dst)
        if pr:
            return "output #%d (input #%d, slot %d, %s): %s" % (
                n, i, f, KIND_NAME[k], "; ".join(pr))
        return (f, CODE[dst])


@pytest.fixture(scope="module")
def bulk(tmp_path_factory):
    b = LbBulk(N_PKTS)
    path = str(tmp_path_factory.mktemp("lbhitless") / "bulk.pcap")
    b.write(path)
    yield b, path
    os.unlink(path)


# --------------------------------------------------------------------------
# the run

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


def run_hitless(mode, bulk, daemon_factory, tmp_path):
    """Replay while calling OPS back to back, from when every early flow
    has had its first packet balanced. Returns (fate per packet, port MAC,
    log of (rx before sent, rx after answered) per change, summary,
    lb_service_list at the end)."""
    b, pcap = bulk
    drops = str(tmp_path / "drops.pcap")
    conf = {"pipeline": MODES[mode],
            "lb": {"local_addr": LOCAL4, "services": [WEB]}}
    d = daemon_factory(conf, pcap, extra=("--replay-drops", drops),
                       wait=False, name="lbhitless-" + mode)
    try:
        c = connect_asap(d.sock, d)
        changes = live = 0
        log = []
        t0 = time.monotonic()
        with c:
            # the early flows' first packets are the first N_SLOTS ones
            while True:
                rx, done = done_count(c)
                if rx >= N_SLOTS + LAG_HI[mode] or done >= b.n:
                    break
                if time.monotonic() - t0 > 60:
                    raise AssertionError("replay not started after 60s")
            while done < b.n:
                rx0, done0 = done_count(c)
                method, params = OPS[changes % len(OPS)]
                resp = c.call_raw(method, params)
                assert "error" not in resp, "change %d, %s %s failed: %s" % (
                    changes, method, params, resp)
                changes += 1
                rx1, done = done_count(c)
                log.append((rx0, rx1))
                if done0 < done < b.n:
                    live += 1
                if changes % PAUSE_EVERY == 0:
                    time.sleep(PAUSE_S)
                if time.monotonic() - t0 > 120:
                    raise AssertionError("replay not done after 120s: %d/%d"
                                         % (done, b.n))
            services = c.call("lb_service_list")
            stats = c.call("stats_get")
            assert c.call("shutdown") is True
        rc = d.wait()
        res = pautil.Result(d.args, rc, d.stdout, d.stderr)
        assert rc == 0, d.describe()
        s = check_summary(res, b.n, expect_drops={})
        assert s["dropped_packets"] == 0 == stats["dropped_packets"], s
        assert live >= MIN_LIVE_CHANGES, (
            "only %d of %d LB changes completed while packets were flowing "
            "(replay %.2fs): make the replay longer (PA_LB_HITLESS_PACKETS)"
            % (live, changes, s.get("duration_s", -1)))
        lb = s["lb"]
        for k in ("no_backend", "mtu", "no_room", "flow_table_full",
                  "flows_expired", "fragments", "nat_replies"):
            assert lb[k] == 0, "lb.%s = %s: %s" % (k, lb[k], lb)
        assert lb["version"] == 1 + changes, (
            "lb.version %s after 1 service at start and %d changes: %s" % (
                lb["version"], changes, lb))
        frames = pautil.read_pcap(d.out_pcap)
        assert len(frames) == s["tx_packets"] == b.n, (len(frames), s)
        assert pautil.read_pcap(drops) == []
        fate = bytearray(b.n)
        port_mac = b.fates(frames, fate)
        del frames
        missing = fate.count(0)
        assert missing == 0, "%d packets not in the output" % missing
        assert lb["balanced"] == b.n - fate.count(UNCHANGED), lb
        print("%s: %d LB changes, %d while packets flowed; replay %.2fs, "
              "%d packets, %d balanced; lb %s" % (
                  mode, changes, live, s.get("duration_s", -1), b.n,
                  lb["balanced"], {k: lb[k] for k in (
                      "flows_created", "flows_rescheduled",
                      "flows_backend_gone", "builds", "build_ms_max")}))
        return fate, port_mac, log, s, services
    finally:
        for p in (d.out_pcap, drops):
            try:
                os.unlink(p)
            except OSError:
                pass


def check_flows(b, fate, log, lag_hi):
    """Stickiness and timeline (see the module's docstring). Returns a
    dict of figures."""
    states = simulate(len(log))
    st_of = array.array("i", [-1]) * b.n
    bounds = [(None, 0)] + log + [(b.n + lag_hi, None)]
    checked = 0
    for k in range(len(bounds) - 1):
        lo = 0 if k == 0 else bounds[k][1] + LAG_LO
        hi = min(b.n, bounds[k + 1][0] - lag_hi)
        if hi > lo:
            st_of[lo:hi] = array.array("i", [k]) * (hi - lo)
            checked += hi - lo
    deletes = collections.defaultdict(list)    # code -> [(rx0, rx1)]
    for k, (m, p) in enumerate(OPS[j % len(OPS)] for j in range(len(log))):
        if m == "lb_backend_delete":
            deletes[CODE[p["addr"]]].append(log[k])
    last = [0] * N_SLOTS          # backend code of the slot's last packet
    last_i = [0] * N_SLOTS
    other_be = [0] * N_SLOTS
    kind, start = b.kind, b.start
    bad = []
    moves = 0
    vip2_fates = collections.Counter()
    on_extra = set()
    first_after = {}               # state index -> first packets checked
    for i in range(b.n):
        f = i % N_SLOTS
        c = fate[i]
        k = kind[f] if i >= start[f] else -1
        if k == K_NOISE or k == -1:
            if c != UNCHANGED:
                bad.append((i, "balanced to %s" % ADDR.get(c)))
            continue
        s = st_of[i]
        if k == K_VIP2:
            enc = c != UNCHANGED
            vip2_fates[enc] += 1
            if enc:
                if other_be[f] == 0:
                    other_be[f] = c
                elif other_be[f] != c:
                    bad.append((i, "other's flow moved from %s to %s" % (
                        ADDR[other_be[f]], ADDR[c])))
            if s >= 0 and enc != states[s].other:
                bad.append((i, "%s while 'other' %s (state %d)" % (
                    "balanced" if enc else "not balanced",
                    "exists" if states[s].other else "does not exist", s)))
            continue
        # web
        if c not in WEB_C:
            bad.append((i, "web packet with fate %s" % ADDR.get(c, c)))
            continue
        if c in EXTRA_C:
            on_extra.add(f)
        prev = last[f]
        if s >= 0 and c not in states[s].present:
            bad.append((i, "sent to %s, not web's in state %d" % (
                ADDR[c], s)))
        if prev != c:
            if prev:
                moves += 1
                p = last_i[f]
                if prev not in EXTRA_C:
                    bad.append((i, "flow left original backend %s (for %s;"
                                " previous packet #%d)" % (
                                    ADDR[prev], ADDR[c], p)))
                elif not any(rx0 - lag_hi <= i and p < rx1 + LAG_LO
                             for rx0, rx1 in deletes[prev]):
                    bad.append((i, "flow moved from %s to %s (previous "
                                "packet #%d) without a delete of %s in "
                                "between" % (ADDR[prev], ADDR[c], p,
                                             ADDR[prev])))
            elif k == K_EARLY and c not in ORIG_C:
                bad.append((i, "early flow's first packet to %s" % ADDR[c]))
            if s >= 0:
                first_after[s] = first_after.get(s, 0) + 1
                if c not in states[s].usable:
                    bad.append((i, "new choice %s not usable in state %d "
                                "(usable %s)" % (ADDR[c], s, sorted(
                                    ADDR[x] for x in states[s].usable))))
            last[f] = c
        last_i[f] = i
        if len(bad) > 30:
            break
    if bad:
        lines = ["%d packets break stickiness or the timeline" % len(bad)]
        for i, why in bad[:20]:
            f = i % N_SLOTS
            lines.append("#%d slot %d (%s): %s" % (
                i, f, KIND_NAME[b.kind_at(i)], why))
        raise AssertionError("\n".join(lines))
    return {"timeline_checked": checked, "moves": moves,
            "vip2_fates": dict(vip2_fates), "late_on_extra": len(on_extra),
            "new_choices_checked": sum(first_after.values()),
            "final_state": states[-1], "last": last}


def check_services(b, fate, services, final):
    """lb_service_list at the end: the expected services and backends, and
    the originals' packet counters equal to what the output shows."""
    by_name = {sv["name"]: sv for sv in services}
    assert set(by_name) == ({"web", "other"} if final.other else {"web"}), \
        services
    got = {be["addr"]: [be["weight"], be["state"]]
           for be in by_name["web"]["backends"]}
    assert got == final.web, (got, final.web)
    counts = collections.Counter(fate)
    for be in by_name["web"]["backends"]:
        if be["addr"] in ORIG:
            assert be["packets"] == counts[CODE[be["addr"]]], (
                "%s: lb_service_list packets %d, %d in the output" % (
                    be["addr"], be["packets"], counts[CODE[be["addr"]]]))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_lb_changes_hitless(mode, bulk, daemon_factory, tmp_path):
    b = bulk[0]
    fate, port_mac, log, s, services = run_hitless(mode, bulk,
                                                   daemon_factory, tmp_path)
    assert port_mac not in (lm.CLIENT_MAC, lm.APPLIANCE_MAC) and \
        not port_mac[0] & 1, lm.mac_str(port_mac)
    fig = check_flows(b, fate, log, LAG_HI[mode])
    check_services(b, fate, services, fig["final_state"])
    print("%s: timeline %d packets, %d new choices checked; %d flow moves "
          "off deleted extras; %d late flows used an extra; vip2 fates %s" % (
              mode, fig["timeline_checked"], fig["new_choices_checked"],
              fig["moves"], fig["late_on_extra"], fig["vip2_fates"]))
    assert fig["timeline_checked"] >= MIN_TIMELINE, fig
    # the changes took effect in the data path
    assert fig["late_on_extra"] > 0, "no late flow ever got an extra backend"
    assert fig["moves"] > 0, "no flow moved off a deleted extra backend"
    assert fig["vip2_fates"].get(True) and fig["vip2_fates"].get(False), \
        "packets to %s: %s (balanced: True)" % (VIP2, fig["vip2_fates"])
    # early flows: one original backend each, and all four in use
    early = [fig["last"][f] for f in range(N_SLOTS) if b.kind[f] == K_EARLY]
    assert set(early) == ORIG_C, collections.Counter(early)
