# SPDX-License-Identifier: BSD-3-Clause
"""Operator console (CONTRACT section 6): pktaccelctl -s SOCK [-j] METHOD
[JSON | key=value ...]; exit 0 ok, 1 on a JSON-RPC error, 2 when the daemon
cannot be reached; piped input runs the interactive mode."""

import json
import os
import socket
import subprocess

import pytest

import pautil
from pautil import CTL, RPC_METHODS_NOW, unique

pytestmark = pytest.mark.needs_ctl


def ctl(*args, stdin=None, timeout=30):
    r = subprocess.run([CTL] + list(args), input=stdin, capture_output=True,
                       timeout=timeout)
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
    r = ctl("-s", shared.sock, "stats_get")
    assert r.rc == 0, r
    assert "rx_packets" in r.stdout and "malformed" in r.stdout, r


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


def test_shutdown_via_console(daemon_factory, mixed, mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC1}, mixed_pcap, name="ctlstop")
    d.wait_replay_done(len(mixed))
    r = ctl("-s", d.sock, "shutdown")
    assert r.rc == 0, r
    assert d.wait() == 0, d.describe()
