# SPDX-License-Identifier: BSD-3-Clause
"""Operator console (docs/console.md): pktaccelctl -s SOCK [-j] METHOD
[JSON | key=value ...]; exit 0 ok, 1 on a JSON-RPC error, 2 when the daemon
cannot be reached; piped input runs the interactive mode."""

import json
import os
import re
import socket
import subprocess
import time

import pytest

import pautil
from pautil import CTL, RPC_METHODS_NOW, unique

pytestmark = pytest.mark.needs_ctl


def ctl(*args, stdin=None, timeout=30, env=None):
    r = subprocess.run([CTL] + list(args), input=stdin, capture_output=True,
                       timeout=timeout, env=env)
    return pautil.Result([CTL] + list(args), r.returncode,
                         r.stdout.decode("utf-8", "replace"),
                         r.stderr.decode("utf-8", "replace"))


@pytest.fixture(scope="module")
def shared(module_daemons, mixed, mixed_pcap):
    d = module_daemons({"pipeline": pautil.RTC1}, mixed_pcap, name="ctl")
    d.wait_replay_done(len(mixed))
    return d


def test_list_result_printed_as_table(shared):
    r = ctl("-s", shared.sock, "rpc_get_methods")
    assert r.rc == 0, r
    assert not r.stdout.lstrip().startswith("["), \
        "list printed as raw JSON without -j: %r" % r.stdout
    tokens = {t for ln in r.stdout.splitlines() for t in ln.split()}
    for m in RPC_METHODS_NOW:
        assert m in tokens, "%s missing from:\n%s" % (m, r.stdout)


def test_json_flag_prints_raw_result(shared):
    r = ctl("-s", shared.sock, "-j", "rpc_get_methods")
    assert r.rc == 0, r
    assert json.loads(r.stdout) == shared.call("rpc_get_methods")
    r = ctl("-s", shared.sock, "-j", "stats_get")
    assert r.rc == 0, r
    st = json.loads(r.stdout)
    assert st["rx_packets"] == shared.call("stats_get")["rx_packets"]


def test_object_result_readable(shared):
    """-v: every counter as "key: value" lines, zero drops included."""
    r = ctl("-s", shared.sock, "-v", "stats_get")
    assert r.rc == 0, r
    assert "rx_packets" in r.stdout and "malformed" in r.stdout, r
    assert "  police: 0" in r.stdout, r


def test_stats_get_summary(shared, tmp_path):
    """stats_get without -v/-j: totals, rates since the last summary of
    the socket (none the first time; 0 when nothing moved), only the
    drop reasons that counted, the ports."""
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    st = shared.call("stats_get")
    r = ctl("-s", shared.sock, "stats_get", env=env)
    assert r.rc == 0, r
    lines = r.stdout.splitlines()
    assert lines[0] == ("packets   rx %d  tx %d  dropped %d  (mbufs in use %d)"
                        % (st["rx_packets"], st["tx_packets"],
                           st["dropped_packets"], st["mbufs_in_use"])), r
    assert lines[1].startswith("rates     none yet"), r
    drops = {k: v for k, v in st["drops"].items() if v}
    assert drops and "malformed" in drops, st["drops"]
    want = "drops   " + "".join("  %s %d" % kv for kv in drops.items())
    assert lines[2] == want, r
    assert "police" not in r.stdout, r
    r = ctl("-s", shared.sock, "stats_get", env=env)
    assert r.rc == 0, r
    assert re.match(r"rates     rx 0 pps  tx 0 pps  dropped 0 pps  "
                    r"\(over the \S+ s since the last summary\)$",
                    r.stdout.splitlines()[1]), r
    assert "  malformed %d (0/s)" % drops["malformed"] in r.stdout, r
    head = [ln for ln in r.stdout.splitlines() if ln.startswith("port ")]
    assert head and head[0].split() == ["port", "link", "rx_packets",
                                        "tx_packets", "rx_missed", "rx_rate",
                                        "tx_rate"], r
    assert re.search(r"^replay0\s+up\s+%d\s" % st["ports"]["replay0"][
        "rx_packets"], r.stdout, re.M), r
    # state files of sockets not summarised for a week are removed
    d = tmp_path / "pktaccelctl"
    old, recent = d / "stats-00000000000000aa.json", d / "stats-00000000000000bb.json"
    for f in (old, recent):
        f.write_text("{}")
    week = time.time() - 8 * 86400
    os.utime(str(old), (week, week))
    r = ctl("-s", shared.sock, "stats_get", env=env)
    assert r.rc == 0, r
    assert not old.exists() and recent.exists()
    assert len(list(d.iterdir())) == 2, list(d.iterdir())


def test_stats_get_summary_acl_line(module_daemons, mixed, mixed_pcap,
                                    tmp_path):
    """With ACL rules the summary has an acl line: rules, default hits and
    the flow cache's share of the lookups, as stats_get counts them."""
    rules = [{"id": 1, "proto": "udp", "dport": "53", "action": "permit"},
             {"id": 2, "src": "10.0.0.0/8", "action": "permit"}]
    d = module_daemons({"pipeline": pautil.RTC1,
                        "acl": {"default": "permit", "rules": rules}},
                       mixed_pcap, name="ctl-acl")
    d.wait_replay_done(len(mixed))
    st = d.call("stats_get")["acl"]
    looked = st["flow_cache_hits"] + st["flow_cache_misses"]
    assert looked > 0 and st["flow_cache_hits"] > 0, st
    r = ctl("-s", d.sock, "stats_get",
            env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    assert r.rc == 0, r
    want = ("acl       rules 2  default hits %d  flow cache %.1f%% of %d "
            "lookups (pauses 0)" % (st["default_hits"],
                                    100.0 * st["flow_cache_hits"] / looked,
                                    looked))
    assert want in r.stdout.splitlines(), r.stdout


def test_piped_console_top_batch(shared):
    r = ctl("-s", shared.sock, stdin=b"top -b -n 1 -d 0.2\n")
    assert r.rc == 0, r
    assert r.stdout.startswith("pktaccel top "), r
    assert re.search(r"^replay0\s+up\s+0\.000\s", r.stdout, re.M), r


def test_health_get_readable(shared):
    """health_get: a verdict line, then the announce state (off in a
    replay) and the services table."""
    r = ctl("-s", shared.sock, "health_get")
    assert r.rc == 0, r
    first = r.stdout.splitlines()[0]
    assert first in ("ready", "NOT READY"), r.stdout
    assert "announce: off" in r.stdout, r.stdout


def test_key_value_params_are_sent(shared):
    """stats_get takes no parameters: key=value must reach the daemon as
    params and come back as -32602 (exit 1, message on stderr)."""
    r = ctl("-s", shared.sock, "stats_get", "bogus=1")
    assert r.rc == 1, r
    assert "param" in r.stderr, r
    r = ctl("-s", shared.sock, "stats_get", '{"bogus": 1}')
    assert r.rc == 1, r
    assert "param" in r.stderr, r
    r = ctl("-s", shared.sock, "stats_get", "{}")
    assert r.rc == 0, r


def test_unknown_method_exit_1(shared):
    r = ctl("-s", shared.sock, "no_such_method")
    assert r.rc == 1, r
    assert r.stderr.strip(), r
    assert "no_such_method" in r.stderr or "not found" in r.stderr, r


def test_unreachable_exit_2(tmp_path):
    r = ctl("-s", unique("absent", ".sock"), "stats_get")
    assert r.rc == 2, r
    assert r.stderr.strip(), r
    # a socket file nobody listens on
    path = unique("dead", ".sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    try:
        r = ctl("-s", path, "stats_get")
        assert r.rc == 2, r
    finally:
        os.unlink(path)


def test_piped_interactive_mode(shared):
    r = ctl("-s", shared.sock, stdin=b"rpc_get_methods\nstats_get\n")
    assert r.rc == 0, r
    for m in RPC_METHODS_NOW:
        assert m in r.stdout, r
    assert "rx_packets" in r.stdout, r


def tty_session(sock, keys):
    """Type @keys (byte strings, one after the other) into the interactive
    console on a terminal (a pty); what the terminal showed after each."""
    import pty
    import select
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(CTL, [CTL, "-s", sock])
    shown = []

    def read_until(want, timeout=20):
        out = b""
        deadline = time.monotonic() + timeout
        while want not in out and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        return out

    try:
        read_until(b"pktaccel> ")
        for k, want in keys:
            os.write(fd, k)
            shown.append(read_until(want))
        os.write(fd, b"\x15quit\r")
        read_until(b"\n")
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return shown


def test_tty_console_completes_methods_then_their_parameter_names(shared):
    # a method name, then "id=" from the method's params in rpc.discover,
    # then the call runs
    shown = tty_session(shared.sock, [
        (b"acl_rule_del\t", b"ete "),
        (b"i\t", b"d="),
        (b"77\r", b"pktaccel> "),
        (b"trace_packet s\t\t", b"src="),
    ])
    assert shown[0].endswith(b"ete "), shown
    assert shown[1].endswith(b"d="), shown
    assert b"-32001" in shown[2], shown     # no rule 77: the call was made
    assert b"sport=" in shown[3] and b"src=" in shown[3], shown


def test_shutdown_via_console(daemon_factory, mixed, mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC1}, mixed_pcap, name="ctlstop")
    d.wait_replay_done(len(mixed))
    r = ctl("-s", d.sock, "shutdown")
    assert r.rc == 0, r
    assert d.wait() == 0, d.describe()


# --------------------------------------------------------------------------
# load balancer: lb_service_list tables, key=value for the lb_* methods

LB_CONF = {
    "pipeline": pautil.RTC1,
    "lb": {"local_addr": "192.0.2.254", "services": [
        {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
         "scheduler": "maglev", "forward": "ipip",
         "backends": [{"addr": "10.1.0.1", "weight": 1},
                      {"addr": "10.1.0.2", "weight": 2}]}]},
}


@pytest.fixture(scope="module")
def lbd(module_daemons, mixed, mixed_pcap):
    """A daemon with the default service; the mixed traffic has flows to
    its VIP."""
    d = module_daemons(LB_CONF, mixed_pcap, name="ctl-lb")
    d.wait_replay_done(len(mixed))
    return d


def _tables(stdout):
    """pktaccelctl lb_service_list output as (service header, service rows
    by name, {service: (backend header, backend rows by addr)})."""
    blocks = stdout.split("\n\n")
    lines = [ln for ln in blocks[0].splitlines() if ln.strip()]
    head, svcs = lines[0].split(), {}
    for ln in lines[1:]:
        svcs[ln.split()[0]] = dict(zip(head, ln.split()))
    bes = {}
    for b in blocks[1:]:
        lines = [ln for ln in b.splitlines() if ln.strip()]
        title = lines[0]
        assert title.startswith("backends of ") and title.endswith(":"), b
        name = title.split()[2]
        if lines[1].strip() == "(none)":
            bes[name] = (None, {})
            continue
        bh = lines[1].split()
        assert lines[1].startswith("  "), "backend table not indented:\n%s" % b
        bes[name] = (bh, {ln.split()[0]: dict(zip(bh, ln.split()))
                          for ln in lines[2:]})
    return head, svcs, bes


def _lb_svc(d, name):
    return next(s for s in d.call("lb_service_list") if s["name"] == name)


def test_lb_service_list_tables(lbd):
    r = ctl("-s", lbd.sock, "lb_service_list")
    assert r.rc == 0, r
    head, svcs, bes = _tables(r.stdout)
    want_cols = ["name", "vip", "port", "proto", "scheduler", "forward",
                 "backends"]
    assert [c for c in head if c in want_cols] == want_cols, r.stdout
    assert "flows" in head and head.index("flows") > head.index("backends")
    rpc = lbd.call("lb_service_list")
    assert sorted(svcs) == ["web"], r.stdout
    web = svcs["web"]
    assert (web["vip"], web["port"], web["proto"], web["scheduler"],
            web["forward"], web["backends"]) == \
        ("192.0.2.10", "80", "tcp", "maglev", "ipip", "2"), r.stdout
    assert web["flows"] == str(rpc[0]["flows"]), r.stdout
    assert rpc[0]["flows"] > 0, rpc      # the mixed traffic has web flows
    bh, rows = bes["web"]
    assert bh == ["addr", "port", "weight", "state", "health",
                  "last_check", "flows", "packets", "bytes"], r.stdout
    assert web["checks"] == "-", r.stdout          # no health checks
    assert sorted(rows) == ["10.1.0.1", "10.1.0.2"], r.stdout
    for b in rpc[0]["backends"]:
        row = rows[b["addr"]]
        for k in ("port", "weight", "state", "flows", "packets", "bytes",
                  "health"):
            assert row[k] == str(b[k]), (k, row, b)
        assert row["health"] == "unknown" and row["last_check"] == "-", row
    assert "(192.0.2.10:80 tcp)" in r.stdout, r.stdout
    # -j: the raw result
    r = ctl("-s", lbd.sock, "-j", "lb_service_list")
    assert r.rc == 0, r
    assert json.loads(r.stdout) == lbd.call("lb_service_list")


def test_lb_service_list_empty(shared):
    r = ctl("-s", shared.sock, "lb_service_list")
    assert r.rc == 0, r
    assert r.stdout.strip() == "(empty)", r


def test_lb_key_value_params(lbd):
    svc = {"name": "api", "vip": "2001:db8::10", "port": 443,
           "proto": "tcp", "forward": "nat", "scheduler": "wrr"}
    r = ctl("-s", lbd.sock, "lb_service_add", json.dumps(svc))
    assert r.rc == 0 and "api" in r.stdout, r
    try:
        r = ctl("-s", lbd.sock, "lb_backend_add", "service=api",
                "addr=2001:db8:1::1", "port=8443", "weight=3")
        assert r.rc == 0 and r.stdout.strip() == "ok", r
        r = ctl("-s", lbd.sock, "lb_backend_add", "service=api",
                "addr=2001:db8:1::2", "mac=02:00:00:00:00:02")
        assert r.rc == 0, r
        bes = {b["addr"]: b for b in _lb_svc(lbd, "api")["backends"]}
        assert bes["2001:db8:1::1"]["weight"] == 3, bes
        assert bes["2001:db8:1::1"]["port"] == 8443, bes
        assert bes["2001:db8:1::2"]["mac"] == "02:00:00:00:00:02", bes
        # weight=N is sent as an integer, state=drain as a string
        r = ctl("-s", lbd.sock, "lb_backend_set", "service=api",
                "addr=2001:db8:1::1", "state=drain", "weight=5")
        assert r.rc == 0 and r.stdout.strip() == "ok", r
        b = {b["addr"]: b for b in _lb_svc(lbd, "api")["backends"]}[
            "2001:db8:1::1"]
        assert (b["state"], b["weight"]) == ("drain", 5), b
        # the tables show both services, the MAC column for api
        r = ctl("-s", lbd.sock, "lb_service_list")
        assert r.rc == 0, r
        head, svcs, bes = _tables(r.stdout)
        assert sorted(svcs) == ["api", "web"], r.stdout
        assert svcs["api"]["backends"] == "2", r.stdout
        assert "([2001:db8::10]:443 tcp)" in r.stdout, r.stdout
        bh, rows = bes["api"]
        assert "mac" in bh, r.stdout
        assert rows["2001:db8:1::1"]["state"] == "drain", r.stdout
        assert rows["2001:db8:1::1"]["weight"] == "5", r.stdout
        # errors: exit 1, the parameter named on stderr
        r = ctl("-s", lbd.sock, "lb_backend_set", "service=api",
                "addr=2001:db8:1::1", "weight=heavy")
        assert r.rc == 1 and "params.weight" in r.stderr, r
        r = ctl("-s", lbd.sock, "lb_backend_set", "service=api",
                "addr=2001:db8:1::1", "state=off")
        assert r.rc == 1 and "params.state" in r.stderr, r
        r = ctl("-s", lbd.sock, "lb_backend_add", "service=api",
                "addr=10.1.0.9")
        assert r.rc == 1 and "params.addr" in r.stderr, r
        r = ctl("-s", lbd.sock, "lb_backend_set", "service=nope",
                "addr=10.1.0.1", "weight=1")
        assert r.rc == 1 and "-32001" in r.stderr, r
        r = ctl("-s", lbd.sock, "lb_service_add", "name=api",
                "vip=192.0.2.99", "port=80", "proto=tcp")
        assert r.rc == 1 and "-32000" in r.stderr, r
        r = ctl("-s", lbd.sock, "lb_backend_delete", "service=api",
                "addr=2001:db8:1::2")
        assert r.rc == 0, r
        assert [b["addr"] for b in _lb_svc(lbd, "api")["backends"]] == \
            ["2001:db8:1::1"]
    finally:
        r = ctl("-s", lbd.sock, "lb_service_delete", "name=api")
    assert r.rc == 0 and r.stdout.strip() == "ok", r
    assert [s["name"] for s in lbd.call("lb_service_list")] == ["web"]
    r = ctl("-s", lbd.sock, "lb_service_delete", "name=api")
    assert r.rc == 1 and "-32001" in r.stderr, r


def test_lb_piped_console(lbd):
    script = (b"lb_service_add name=tmp vip=192.0.2.11 port=80 proto=tcp "
              b"forward=nat\n"
              b"lb_backend_add service=tmp addr=10.9.0.1\n"
              b"lb_service_list\n"
              b"lb_service_delete name=tmp\n")
    r = ctl("-s", lbd.sock, stdin=script)
    assert r.rc == 0, r
    assert "backends of tmp (192.0.2.11:80 tcp):" in r.stdout, r.stdout
    assert "10.9.0.1" in r.stdout, r.stdout
    assert [s["name"] for s in lbd.call("lb_service_list")] == ["web"]
