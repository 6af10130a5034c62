# SPDX-License-Identifier: BSD-3-Clause
"""pktaccelctl top (docs/console.md, "top") and the stats_get summary
against a live daemon with traffic: a net_pcap port replaying a small
file without end (infinite_rx=1), one worker lcore, an ACL that polices
every packet to a steady 50 kpps (so the forwarded rate is the same
whenever it is measured, however loaded the machine), and a service.

The live view runs in a tmux pane (a real terminal for ncurses): its
rates agree with stats_get deltas, a drop reason that starts counting
appears, q quits with 0, a daemon killed under it gives exit status 2
and a message on the restored terminal, an 80x24 window (after a
resize) still shows the port and drop lines and nothing wraps. Batch
mode (-b -n 3) is parsed: rates are the counter deltas over the
measured interval. Every wait is bounded by an event and a generous
deadline, never by a tight timing."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid

import pytest

import pautil
from pautil import CTL, DAEMON, Daemon, unique, write_json

pytestmark = [
    pytest.mark.needs_ctl,
    pytest.mark.skipif(shutil.which("tmux") is None,
                       reason="tmux is not installed (scripts/deps.sh)"),
]

POLICE_PPS = 50000
DEADLINE = 90           # seconds: only a hung program takes this long


def ctl(*args, env=None, timeout=60):
    r = subprocess.run([CTL] + list(args), capture_output=True,
                       timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    return pautil.Result([CTL] + list(args), r.returncode,
                         r.stdout.decode("utf-8", "replace"),
                         r.stderr.decode("utf-8", "replace"))


def traffic_pcap(path):
    """64 TCP flows to the service and 64 UDP flows past it."""
    from scapy.all import IP, TCP, UDP, Ether, Raw, raw
    pkts = []
    for i in range(64):
        eth = Ether(src="02:00:00:00:01:01", dst="02:00:00:00:00:fe")
        pkts.append(raw(eth / IP(src="198.51.100.%d" % (i + 1),
                                 dst="192.0.2.10") /
                        TCP(sport=40000 + i, dport=80, flags="S") /
                        Raw(b"x" * 10)))
        pkts.append(raw(eth / IP(src="198.51.100.%d" % (i + 1),
                                 dst="203.0.113.5") /
                        UDP(sport=40000 + i, dport=53) / Raw(b"x" * 18)))
    pautil.write_pcap(path, pkts)
    return path


def start_live(workdir, name):
    pcap = traffic_pcap(os.path.join(workdir, name + ".pcap"))
    sock = unique("top", ".sock")
    conf = write_json(os.path.join(workdir, name + ".json"), {
        "ports": [{"name": "p0", "devargs":
                   "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap}],
        "pipeline": {"mode": "rtc", "lcores": {"worker": [1]}},
        "metrics": None,
        "acl": {"default": "permit", "rules": [
            {"id": 5, "priority": 10, "action": "police",
             "rate_pps": POLICE_PPS, "burst": POLICE_PPS // 5}]},
        "lb": {"local_addr": "192.0.2.254", "services": [
            {"name": "web", "vip": "192.0.2.10", "port": 80,
             "proto": "tcp", "forward": "ipip",
             "backends": [{"addr": "10.1.0.1"},
                          {"addr": "10.1.0.2", "weight": 2}]}]}})
    d = Daemon([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                "-l", "0,1", "--", "-c", conf, "-s", sock], sock, workdir,
               name)
    d.wait_ready(60)
    return d


@pytest.fixture(scope="module")
def lived(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("top"))
    d = start_live(work, "live")
    try:
        yield d
    finally:
        rc = d.stop()
    assert rc == 0, d.describe()


class Pane:
    """A command in a detached tmux session of its own server: the
    terminal top draws on. The command's exit status lands in a file;
    the pane stays (sleep) so what was printed last can be read."""

    def __init__(self, cmd, width=132, height=40):
        self.server = "pa-top-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8])
        self.rcfile = unique("toprc", ".txt")
        shell = "%s; rc=$?; echo \"rc=$rc\" > %s; echo \"exited rc=$rc\"; " \
            "sleep 3600" % (cmd, self.rcfile)
        env = dict(os.environ, TERM="xterm")
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "t",
                   "-x", str(width), "-y", str(height), shell, env=env)

    def _tmux(self, *args, env=None):
        r = subprocess.run(["tmux", "-L", self.server] + list(args),
                           capture_output=True, timeout=30, env=env)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout.decode("utf-8", "replace")

    def text(self, join=False):
        return self._tmux("capture-pane", "-p", *(["-J"] if join else []),
                          "-t", "t")

    def keys(self, *k):
        self._tmux("send-keys", "-t", "t", *k)

    def resize(self, w, h):
        self._tmux("resize-window", "-t", "t", "-x", str(w), "-y", str(h))

    def rc(self):
        try:
            with open(self.rcfile) as f:
                return int(f.read().strip().split("=")[1])
        except (OSError, ValueError, IndexError):
            return None

    def wait(self, pred, what, timeout=DEADLINE):
        end = time.monotonic() + timeout
        while True:
            txt = self.text()
            v = pred(txt)
            if v:
                return v
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for %s; screen:\n%s"
                                     % (what, txt))
            time.sleep(0.2)

    def wait_rc(self, timeout=DEADLINE):
        end = time.monotonic() + timeout
        while self.rc() is None:
            assert time.monotonic() < end, \
                "top did not exit; screen:\n%s" % self.text()
            time.sleep(0.2)
        return self.rc()

    def close(self):
        subprocess.run(["tmux", "-L", self.server, "kill-server"],
                       capture_output=True, timeout=30)
        try:
            os.unlink(self.rcfile)
        except OSError:
            pass


@pytest.fixture
def panes():
    made = []

    def make(*a, **kw):
        p = Pane(*a, **kw)
        made.append(p)
        return p
    yield make
    for p in made:
        p.close()


# --------------------------------------------------------------------------
# reading screens

HEADER_RE = re.compile(r"^pktaccel top\s+(\d\d:\d\d:\d\d)\s+every \S+\s+"
                       r"interval (\S+)")


def table(lines, first_col):
    """The table whose header line starts with first_col: (header words,
    [row dicts]) up to the next line that is not a row of it."""
    for i, ln in enumerate(lines):
        if ln.split()[:1] == [first_col]:
            head = ln.split()
            rows = []
            for r in lines[i + 1:]:
                w = r.split()
                if not w or r[0] == " " and first_col != "SERVICE/BACKEND":
                    break
                if len(w) < 2 or w[0].isupper() or w[0] in (
                        "Drops/s", "Total", "Latency", "Neigh"):
                    break
                rows.append(dict(zip(head, w)))
            return head, rows
    return None, []


def parse_si(s):
    mult = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    if s[-1] in mult:
        return float(s[:-1]) * mult[s[-1]]
    return float(s)


def parse_screen(text):
    """One screen's text into a dict: header time and interval, the
    ports table (by name), the drops (reason: rate per second)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    m = HEADER_RE.match(lines[0]) if lines else None
    if m is None:
        return None
    scr = {"time": m.group(1), "interval": m.group(2), "header": lines[0],
           "lines": lines}
    head, rows = table(lines, "PORT")
    scr["ports"] = {r["PORT"]: r for r in rows}
    scr["port_head"] = head
    drops = None
    for ln in lines:
        if ln.startswith("Drops/s"):
            words = ln.split()[1:]
            drops = {}
            if words not in (["-"], ["none"]):
                for k in range(0, len(words) - 1, 2):
                    drops[words[k]] = parse_si(words[k + 1])
        elif drops is not None and ln.startswith("        ") and \
                len(ln.split()) % 2 == 0:
            words = ln.split()        # the drops line wrapped
            for k in range(0, len(words) - 1, 2):
                drops[words[k]] = parse_si(words[k + 1])
    scr["drops"] = drops
    return scr


def rated(text):
    """The screen if it shows rates (its interval is measured)."""
    s = parse_screen(text)
    if s and s["interval"] != "-" and "p0" in s["ports"]:
        return s
    return None


def stats_sample(d):
    t0 = time.monotonic()
    st = d.call("stats_get")
    t1 = time.monotonic()
    return (t0 + t1) / 2, st


# --------------------------------------------------------------------------
# the live view in a terminal

def test_top_rates_agree_with_stats_get_and_q_quits(lived, panes):
    """Each screen's rates are the deltas of the stats_get counters it
    shows (RX_PKTS, TX_PKTS: the daemon's, bracketed by this test's own
    stats_get readings) over the interval it measured (the monotonic
    time between the two readings, not the nominal 2 s). They must agree
    within 10% (display rounding aside they agree exactly); comparing
    with readings taken at other moments would measure this machine's
    scheduling, not top."""
    pane = panes("%s -s %s -t 60 top -d 2" % (CTL, lived.sock))
    first = pane.wait(rated, "a screen with rates")
    t0, s0 = stats_sample(lived)
    screens, seen = [first], {first["header"]}
    appeared = []
    while len(screens) < 4:
        scr = pane.wait(lambda t: (lambda s: s if s and s["header"] not in
                                   seen else None)(rated(t)),
                        "the next screen")
        appeared.append(time.monotonic())
        seen.add(scr["header"])
        screens.append(scr)
        # the port line has every column on a wide terminal
        assert scr["port_head"][:9] == [
            "PORT", "LINK", "RX_Mpps", "RX_Gbps", "TX_Mpps", "TX_Gbps",
            "MISSED/s", "RX_PKTS", "TX_PKTS"], scr["lines"]
        assert scr["ports"]["p0"]["LINK"] == "up", scr["lines"]
        # only the reasons that counted in the interval show
        assert scr["drops"] is not None, scr["lines"]
        assert all(v > 0 for v in scr["drops"].values()), scr["lines"]
    t1, s1 = stats_sample(lived)
    # (a loaded machine may starve the worker for a whole interval:
    # traffic and police drops must show on some screen, not on each)
    assert any(float(s["ports"]["p0"]["RX_Mpps"]) > 0 and
               s["drops"].get("police", 0) > 0 for s in screens[1:]), \
        [s["lines"][:5] for s in screens]
    p0 = [s["ports"]["p0"] for s in screens]
    # the totals are the daemon's counters, read between our readings
    assert int(p0[0]["TX_PKTS"]) <= s0["ports"]["p0"]["tx_packets"] <= \
        int(p0[1]["TX_PKTS"]) <= int(p0[3]["TX_PKTS"]) <= \
        s1["ports"]["p0"]["tx_packets"], (p0, s0["ports"], s1["ports"])
    for a, b, scr in zip(p0, p0[1:], screens[1:]):
        dt = float(scr["interval"][:-1])
        # a measured interval (about the refresh period; the readings
        # themselves take time)
        assert dt > 0.5, scr["header"]
        for col, tot in (("RX_Mpps", "RX_PKTS"), ("TX_Mpps", "TX_PKTS")):
            want = (int(b[tot]) - int(a[tot])) / dt
            got = float(b[col]) * 1e6
            assert abs(got - want) <= 0.10 * want + 500, \
                "%s: top shows %.0f pps, stats_get deltas give %.0f pps " \
                "over %.3f s" % (col, got, want, dt)
            # and tighter: only rounding apart (0.0005 Mpps, 0.0005 s)
            assert abs(got - want) <= 500 + want * 0.0005 / dt + \
                0.001 * want, (col, got, want, dt)
    # the intervals add up to the time the screens took to come
    span = appeared[-1] - appeared[0]
    total = sum(float(s["interval"][:-1]) for s in screens[2:])
    assert abs(total - span) <= 0.5 * span + 3, (total, span)
    # the other sections are there too
    text = pane.text()
    for word in ("LCORE", "ACL_RULE", "SERVICE/BACKEND", "Total"):
        assert word in text, text
    assert re.search(r"^1\s+worker\s+rx,classify,lb,tx\s", text, re.M), text
    assert re.search(r"^web 192\.0\.2\.10:80/tcp\s", text, re.M), text
    assert re.search(r"^  10\.1\.0\.2\s+up\s", text, re.M), text
    # keys: help, sort, pause, quit
    pane.keys("h")
    pane.wait(lambda t: "this help" in t, "the help screen")
    pane.keys("x")
    pane.wait(lambda t: "ACL_RULE" in t, "the screen back")
    pane.keys("s")
    pane.wait(lambda t: "sort total" in t, "sort by total")
    pane.keys("p")
    pane.wait(lambda t: "PAUSED" in t, "paused")
    pane.keys("p")
    pane.wait(lambda t: "PAUSED" not in t and "ACL_RULE" in t, "resumed")
    pane.keys("q")
    assert pane.wait_rc() == 0, pane.text()
    # the terminal is given back: the shell's line is on the normal screen
    pane.wait(lambda t: "exited rc=0" in t and "ACL_RULE" not in t,
              "the restored terminal")


def test_top_new_drop_reason_appears(lived, panes):
    pane = panes("%s -s %s -t 60 top -d 1" % (CTL, lived.sock))
    pane.wait(lambda t: (lambda s: s and s["drops"] is not None and
                         "police" in s["drops"])(rated(t)),
              "police drops")
    assert "acl" not in (rated(pane.text()) or {"drops": {}})["drops"]
    lived.call("acl_rule_add", {"id": 9, "priority": 100, "proto": "udp",
                                "dport": "53", "action": "drop"})
    try:
        scr = pane.wait(lambda t: (lambda s: s if s and s["drops"] and
                                   s["drops"].get("acl", 0) > 0
                                   else None)(rated(t)),
                        "acl drops to appear")
        assert scr["drops"]["police"] > 0, scr["lines"]
        # the rule itself climbs the rule list
        pane.wait(lambda t: re.search(r"^9\s+100\s+\S+\s+\S+\s+drop\s+udp",
                                      t, re.M), "rule 9 listed")
    finally:
        lived.call("acl_rule_delete", {"id": 9})
    pane.keys("q")
    assert pane.wait_rc() == 0, pane.text()


def test_top_small_terminal_and_resize(lived, panes):
    pane = panes("%s -s %s -t 60 top -d 1" % (CTL, lived.sock), 132, 40)
    h0 = pane.wait(rated, "a screen with rates")["header"]
    pane.resize(80, 24)
    # a screen drawn after the resize (SIGWINCH): a new header
    scr = pane.wait(lambda t: (lambda s: s if s and s["header"] != h0
                               else None)(rated(t)),
                    "the screen redrawn at 80x24")
    assert len(pane.text().splitlines()) <= 24
    # the port and drop lines are there, whole columns only
    assert scr["port_head"][:7] == ["PORT", "LINK", "RX_Mpps", "RX_Gbps",
                                    "TX_Mpps", "TX_Gbps", "MISSED/s"], \
        scr["lines"]
    assert scr["ports"]["p0"]["LINK"] == "up", scr["lines"]
    assert scr["drops"] is not None, scr["lines"]
    # nothing wrapped: joined wrapped lines would be longer than 80
    joined = pane.text(join=True).splitlines()
    assert all(len(ln) <= 80 for ln in joined), "\n".join(joined)
    # smaller still: the lower sections give way, the ports stay
    h1 = scr["header"]
    pane.resize(60, 8)
    pane.wait(lambda t: "PORT" in t and "SERVICE/BACKEND" not in t and
              t.splitlines()[0] != h1[:60] and "small window" in t,
              "the screen at 60x8")
    joined = pane.text(join=True).splitlines()
    assert all(len(ln) <= 60 for ln in joined), "\n".join(joined)
    pane.keys("q")
    assert pane.wait_rc() == 0, pane.text()


def test_top_daemon_killed_exits_2(tmp_path, panes):
    d = start_live(str(tmp_path), "victim")
    try:
        pane = panes("%s -s %s top -d 1" % (CTL, d.sock))
        pane.wait(rated, "a screen with rates")
        d.proc.kill()
        d.proc.wait(30)
        assert pane.wait_rc() == 2, pane.text()
        pane.wait(lambda t: "exited rc=2" in t, "the restored terminal")
        text = pane.text(join=True)
        assert "went away" in text and d.sock in text.replace("\n", ""), \
            text
        assert "ACL_RULE" not in text, text
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(30)
        for p in (d.sock, d.sock + ".lock"):
            if os.path.exists(p):
                os.unlink(p)


def test_top_daemon_that_stops_answering_exits_2(tmp_path, panes):
    """A daemon that hangs (SIGSTOP) is not a frozen screen for ever:
    after the call timeout (5 s in top by default) the terminal comes
    back with exit status 2."""
    d = start_live(str(tmp_path), "stuck")
    try:
        pane = panes("%s -s %s top -d 1" % (CTL, d.sock))
        pane.wait(rated, "a screen with rates")
        os.kill(d.proc.pid, signal.SIGSTOP)
        assert pane.wait_rc() == 2, pane.text()
        pane.wait(lambda t: "exited rc=2" in t, "the restored terminal")
        text = pane.text(join=True)
        assert "no answer" in text and "went away" in text, text
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
        rc = d.stop()
    assert rc == 0, d.describe()


def test_top_unreachable_exits_2(panes):
    absent = unique("absent", ".sock")
    r = ctl("-s", absent, "top", "-b", "-n", "1")
    assert r.rc == 2, r
    assert absent in r.stderr, r
    pane = panes("%s -s %s top" % (CTL, absent))
    assert pane.wait_rc() == 2, pane.text()
    assert absent in pane.text(join=True), pane.text()


def test_top_usage(lived):
    for bad in (["-d", "0"], ["-d", "x"], ["-n", "0"], ["-z"], ["extra"]):
        r = ctl("-s", lived.sock, "top", *bad)
        assert r.rc == 64, (bad, r)
    # not a terminal and no -b
    r = ctl("-s", lived.sock, "top")
    assert r.rc == 64 and "-b" in r.stderr, r
    r = ctl("top", "-h")
    assert r.rc == 0 and "-n N" in r.stdout, r
    r = ctl("--help")
    assert r.rc == 0 and " top " in r.stdout and "-v" in r.stdout, r


# --------------------------------------------------------------------------
# batch mode

def test_top_batch_screens(lived):
    r = ctl("-s", lived.sock, "top", "-b", "-n", "3", "-d", "1.5",
            timeout=DEADLINE)
    assert r.rc == 0, r
    screens = [parse_screen(s) for s in r.stdout.split("\n\n")]
    assert len(screens) == 3 and all(screens), r.stdout
    # traffic on some screen (a loaded machine may starve the worker
    # for a whole interval)
    assert any(s["drops"].get("police", 0) > 0 for s in screens), r.stdout
    for s in screens:
        p0 = s["ports"]["p0"]
        assert s["interval"].endswith("s"), s["header"]
        assert float(s["interval"][:-1]) > 0.5, s["header"]
        # batch: no width limit, every column
        assert s["port_head"] == ["PORT", "LINK", "RX_Mpps", "RX_Gbps",
                                  "TX_Mpps", "TX_Gbps", "MISSED/s",
                                  "RX_PKTS", "TX_PKTS", "RX_MISSED"], \
            s["lines"]
        assert p0["MISSED/s"] == "0" and p0["RX_MISSED"] == "0", p0
        text = "\n".join(s["lines"])
        for word in ("Total", "LCORE", "ACL_RULE", "SERVICE/BACKEND"):
            assert word in text, text
        # the flow table above the services (64 TCP flows at most)
        m = re.search(r"^Flows    (\d+) of \S+  peak (\d+)  new/s (\S+)  "
                      r"refused/s (\S+)$", text, re.M)
        assert m and int(m.group(1)) <= int(m.group(2)) <= 64, text
        assert m.group(4) in ("0", "-"), text
    # a rate is the delta of the totals over the measured interval
    for a, b in zip(screens, screens[1:]):
        dt = float(b["interval"][:-1])
        for col, tot in (("RX_Mpps", "RX_PKTS"), ("TX_Mpps", "TX_PKTS")):
            delta = int(b["ports"]["p0"][tot]) - int(a["ports"]["p0"][tot])
            shown = float(b["ports"]["p0"][col]) * 1e6
            # display rounding: 0.0005 Mpps, 0.0005 s
            tol = 500 + delta * 0.0006 / dt + 0.01 * shown
            assert abs(shown - delta / dt) <= tol, (col, shown, delta, dt)
        # Gbps: bytes of the same packets (60..84-byte frames)
        gbps = float(b["ports"]["p0"]["TX_Gbps"])
        mpps = float(b["ports"]["p0"]["TX_Mpps"])
        assert 0.9 * mpps * 64 * 8 / 1e3 <= gbps + 0.001 <= \
            1.1 * mpps * 100 * 8 / 1e3 + 0.002, (mpps, gbps)


# --------------------------------------------------------------------------
# the stats_get summary with traffic

def test_stats_summary_rates_since_last_call(lived, tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    _, sa = stats_sample(lived)
    r = ctl("-s", lived.sock, "stats_get", env=env)
    _, sb = stats_sample(lived)
    assert r.rc == 0, r
    assert re.search(r"^rates\s+none yet", r.stdout, re.M), r.stdout
    state = os.listdir(str(tmp_path / "pktaccelctl"))
    assert len(state) == 1, state
    path = str(tmp_path / "pktaccelctl" / state[0])
    assert os.stat(path).st_mode & 0o777 == 0o600
    time.sleep(2)
    _, sc = stats_sample(lived)
    r = ctl("-s", lived.sock, "stats_get", env=env)
    _, sd = stats_sample(lived)
    assert r.rc == 0, r
    m = re.search(r"^rates\s+rx (\S+ \S+)\s+tx (\S+) (\S+)\s+dropped .*"
                  r"over the (\S+) s since the last summary", r.stdout, re.M)
    assert m, r.stdout
    tx = float(m.group(2)) * {"pps": 1, "kpps": 1e3, "Mpps": 1e6}[m.group(3)]
    dt = float(m.group(4))
    assert dt >= 1.9, r.stdout
    # the two summaries read the counters between our own readings:
    # their rate lies between what those allow (display rounding aside:
    # 3 digits, dt to 0.1 s)
    lo = (sc["tx_packets"] - sb["tx_packets"]) / dt
    hi = (sd["tx_packets"] - sa["tx_packets"]) / dt
    assert 0.95 * lo - 1 <= tx <= 1.05 * hi + 1, (lo, tx, hi, r.stdout)
    assert re.search(r"^drops .*  police \d+ \(\S+/s\)", r.stdout, re.M), \
        r.stdout
    assert re.search(r"^p0\s+up\s+\d+\s+\d+\s+0\s+\S+ \S*pps\s+\S+ \S*pps$",
                     r.stdout, re.M), r.stdout
    # the flow table: 64 TCP flows at most, their peak, new flows/s
    m = re.search(r"^lb\s+services 1  backends 2  flows (\d+) of (\S+) "
                  r"\(peak (\d+)\)  new (\S+)/s$", r.stdout, re.M)
    assert m, r.stdout
    lbst = lived.call("stats_get")["lb"]
    assert int(m.group(1)) <= 64 and int(m.group(1)) <= int(m.group(3)) \
        <= lbst["flows_peak"], (r.stdout, lbst)
    assert m.group(2) == {1 << 20: "1.05M", 1 << 16: "65.5k"}.get(
        lbst["flow_table_capacity"], m.group(2)), (r.stdout, lbst)
    float(m.group(4).rstrip("kM"))
    # another daemon on the path (the socket made anew): no rates
    with open(path) as f:
        doc = json.load(f)
    doc["daemon"] = "0:0:0"
    with open(path, "w") as f:
        json.dump(doc, f)
    r = ctl("-s", lived.sock, "stats_get", env=env)
    assert r.rc == 0 and re.search(r"^rates\s+none: the daemon restarted",
                                   r.stdout, re.M), r.stdout
    # -v: every counter, zeros included; the state is left alone
    before = os.stat(path).st_mtime_ns
    r = ctl("-s", lived.sock, "-v", "stats_get", env=env)
    assert r.rc == 0 and "mbufs_in_use:" in r.stdout, r
    assert re.search(r"^  acl: \d+$", r.stdout, re.M), r.stdout
    assert "rates" not in r.stdout, r.stdout
    assert os.stat(path).st_mtime_ns == before


def test_top_neighbours_and_sort(daemon_factory, tmp_path, panes):
    """Neighbour states (a gateway being resolved, hosts that asked for
    the port's address), in batch mode; the rule list sorted by rate,
    total and name in the live view."""
    from scapy.all import ARP, IP, TCP, Ether, raw
    pkts = [raw(Ether(src="02:00:00:00:11:09", dst="02:70:63:61:70:00") /
                IP(src="198.51.100.9", dst="203.0.113.1") /
                TCP(sport=1000 + k, dport=80)) for k in range(2)]
    for k in range(1, 4):
        mac = "02:00:00:00:11:%02x" % k
        pkts.append(raw(Ether(src=mac, dst="ff:ff:ff:ff:ff:ff") /
                        ARP(op=1, hwsrc=mac, psrc="198.51.100.%d" % (100 + k),
                            pdst="198.51.100.5")))
    pcap = str(tmp_path / "arp.pcap")
    pautil.write_pcap(pcap, pkts)
    d = daemon_factory({
        "ports": [{"name": "replay0", "devargs": "net_null0",
                   "addr": ["198.51.100.5/24"], "gateway": "198.51.100.1"}],
        "acl": {"default": "permit", "rules": [
            {"id": 30, "priority": 1, "proto": "tcp", "action": "permit"},
            {"id": 20, "priority": 2, "proto": "udp", "action": "drop"}]},
        "metrics": None}, pcap, name="neigh")
    d.wait_replay_done(len(pkts))
    ents = [e for e in d.call("neigh_list") if e["port"] == "replay0"]
    assert len(ents) >= 4, ents          # the gateway and three hosts
    r = ctl("-s", d.sock, "top", "-b", "-n", "1", "-d", "0.2")
    assert r.rc == 0, r
    lines = r.stdout.splitlines()
    summary = [ln for ln in lines if ln.startswith("Neigh ")]
    assert summary, r.stdout
    assert summary[0].split()[1] == str(len(ents)), summary
    for state in {e["state"] for e in ents}:
        n = sum(e["state"] == state for e in ents)
        assert "  %s %d" % (state, n) in summary[0], (state, summary)
    head, rows = table(lines, "NEIGHBOUR")
    assert head == ["NEIGHBOUR", "PORT", "STATE", "MAC", "AGE", "TARGET"], \
        r.stdout
    assert len(rows) == min(6, len(ents)), r.stdout
    rank = ["failed", "incomplete", "probe", "stale", "reachable"]
    shown = [rank.index(x["STATE"]) for x in rows]
    assert shown == sorted(shown), r.stdout
    gw = [x for x in rows if x["NEIGHBOUR"] == "198.51.100.1"]
    assert gw and gw[0]["TARGET"] == "gateway", r.stdout
    # rules by rate: all 0 now, so by hits (30 has the TCP packets),
    # then by id (the default last)
    head, rules = table(lines, "ACL_RULE")
    assert [x["ACL_RULE"] for x in rules] == ["30", "20", "default"], \
        r.stdout
    assert rules[0]["HITS"] == "2", r.stdout
    # the live view: s cycles rate -> total -> name
    pane = panes("%s -s %s -t 60 top -d 0.5" % (CTL, d.sock))

    def order(t):
        return [x["ACL_RULE"] for x in table(t.splitlines(), "ACL_RULE")[1]]
    pane.wait(lambda t: "sort rate" in t and order(t) == ["30", "20",
                                                          "default"],
              "rules by rate")
    pane.keys("s")
    pane.wait(lambda t: "sort total" in t and order(t) == ["30", "20",
                                                           "default"],
              "rules by total")
    pane.keys("s")
    pane.wait(lambda t: "sort name" in t and order(t) == ["20", "30",
                                                          "default"],
              "rules by id")
    pane.keys("q")
    assert pane.wait_rc() == 0, pane.text()


def test_top_batch_lcores_and_ring_fill(daemon_factory, mixed, mixed_pcap):
    """Pipeline mode: one line per lcore with its role and stages, and
    the fill of its fullest input ring as pipeline_get reports it."""
    d = daemon_factory({"pipeline": pautil.PIPE4}, mixed_pcap, name="rings")
    d.wait_replay_done(len(mixed))
    r = ctl("-s", d.sock, "top", "-b", "-n", "1", "-d", "0.2")
    assert r.rc == 0, r
    head, rows = table(r.stdout.splitlines(), "LCORE")
    assert head == ["LCORE", "ROLE", "STAGES", "BUSY%", "SLEEPS/s",
                    "RX_Mpps", "TX_Mpps", "DROPS/s", "RING_FILL"], r.stdout
    pl = {str(lc["lcore"]): lc for lc in d.call("pipeline_get")["lcores"]}
    assert sorted(x["LCORE"] for x in rows) == sorted(pl), r.stdout
    for x in rows:
        lc = pl[x["LCORE"]]
        assert x["ROLE"] == lc["role"], (x, lc)
        assert x["STAGES"] == ",".join(lc["stages"]), (x, lc)
        rings = lc["rings_in"]
        if not rings:
            assert x["RING_FILL"] == "-", (x, lc)
        else:
            cap = {"%d/%d" % (g["count"], g["capacity"]) for g in rings}
            assert x["RING_FILL"] in cap, (x, lc)
    assert {x["ROLE"] for x in rows} == {"rx", "classify", "lb", "tx"}
