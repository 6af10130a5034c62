# SPDX-License-Identifier: BSD-3-Clause
"""JSON-RPC 2.0 management socket (docs/rpc.md), against a daemon in
replay --stay mode."""

import json
import os
import signal
import socket
import stat
import threading
import time

import pytest

import pautil
from pautil import (DAEMON, PIPE4, RPC_METHODS_NOW, check_summary,
                    json_lines, last_json_line, read_pcap, run)

CONF = {
    "pipeline": dict(PIPE4, ring_size=256, burst=16),
    "acl": {"default": "permit", "rules": [
        {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
         "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
        {"id": 11, "priority": 90, "src": "2001:db8::/32", "dst": "any",
         "sport": "1024-65535", "dport": "80-88", "proto": "tcp",
         "action": "permit"}]},
}


@pytest.fixture(scope="module")
def shared(module_daemons, mixed, mixed_pcap):
    """One daemon for the read-only tests of this module; its replay is
    done before any test runs."""
    d = module_daemons(CONF, mixed_pcap, name="rpc-shared")
    d.wait_replay_done(len(mixed))
    return d


def _err(resp, code, id_=None):
    assert "error" in resp and "result" not in resp, resp
    assert resp["error"]["code"] == code, resp
    assert isinstance(resp["error"].get("message"), str), resp
    assert resp.get("jsonrpc") == "2.0", resp
    assert resp.get("id", "missing") == id_, resp


# ---------------------------------------------------------------- errors

def test_parse_error(shared):
    with shared.client() as c:
        c.send_raw(b'{"jsonrpc": "2.0", "method": stats_get, "id": 1}\n')
        _err(c.recv(), -32700, None)


def test_parse_error_non_json_then_server_still_serves(shared):
    with shared.client() as c:
        c.send_raw(b"hello\n")
        _err(c.recv(), -32700, None)
    assert shared.call("rpc_get_methods")


@pytest.mark.parametrize("req,id_", [
    ({"jsonrpc": "2.0", "id": 1}, 1),
    ({"jsonrpc": "1.0", "method": "stats_get", "id": 2}, 2),
    ({"method": "stats_get", "id": 3}, 3),
    ({"jsonrpc": "2.0", "method": 5, "id": 4}, 4),
    ({"jsonrpc": "2.0", "method": "stats_get", "params": 7, "id": 5}, 5),
    ({"jsonrpc": "2.0", "method": "stats_get", "id": {"x": 1}}, None),
], ids=["no_method", "wrong_version", "no_version", "method_not_string",
        "params_scalar", "id_object"])
def test_invalid_request(shared, req, id_):
    with shared.client() as c:
        c.send(req)
        _err(c.recv(), -32600, id_)


def test_empty_batch_is_one_invalid_request(shared):
    with shared.client() as c:
        c.send_raw(b"[]\n")
        resp = c.recv()
        assert isinstance(resp, dict), resp
        _err(resp, -32600, None)


def test_batch_of_non_objects(shared):
    with shared.client() as c:
        c.send_raw(b"[1, 2]\n")
        resp = c.recv()
        assert isinstance(resp, list) and len(resp) == 2, resp
        for r in resp:
            _err(r, -32600, None)


def test_method_not_found(shared):
    with shared.client() as c:
        c.send({"jsonrpc": "2.0", "method": "no_such_method", "id": "abc"})
        _err(c.recv(), -32601, "abc")
        # valid JSON, but jansson refuses NUL in strings by default: a
        # parse error is tolerated; it must never call stats_get
        c.send({"jsonrpc": "2.0", "method": "stats_get\u0000x", "id": 2.5})
        r = c.recv()
        assert r.get("error", {}).get("code") in (-32601, -32700), r
        c.send({"jsonrpc": "2.0", "method": "", "id": None})
        _err(c.recv(), -32601, None)


def test_hostile_input_answered_and_survived(shared):
    """Deep nesting, invalid UTF-8, NULs, huge numbers: an error answer,
    never a crash."""
    cases = [
        b"[" * 100000 + b"]" * 100000 + b"\n",
        b'{"jsonrpc":"2.0","method":"\xff\xfe","id":1}\n',
        b'{"jsonrpc":"2.0","method":"stats_get","id":1e999999}\n',
        b'{"jsonrpc":"2.0","method":"stats_get","id":' + b"9" * 5000 + b"}\n",
        b'{"jsonrpc":"2.0","method":"stats_get","params":{"a":\x00},"id":1}\n',
        b'{"jsonrpc":"2.0","method":"stats_get","id":1,"id":2}\n',
    ]
    for raw in cases:
        with shared.client() as c:
            c.send_raw(raw)
            try:
                r = c.recv(timeout=10)
                assert "error" in r or "result" in r, r
            except EOFError:
                pass            # closing the connection is an answer too
        assert shared.alive(), shared.describe()
        assert "rx_packets" in shared.call("stats_get")


def test_invalid_params(shared):
    with shared.client() as c:
        c.send({"jsonrpc": "2.0", "method": "stats_get", "id": 7,
                "params": {"bogus": 1}})
        resp = c.recv()
        _err(resp, -32602, 7)
        assert "param" in resp["error"]["message"], resp
        c.send({"jsonrpc": "2.0", "method": "pipeline_get", "id": 8,
                "params": [1]})
        _err(c.recv(), -32602, 8)
        # empty params are no params
        for p in ({}, [], None):
            r = c.call_raw("stats_get", p)
            assert "result" in r, r


# ---------------------------------------------------------------- framing

def test_batch_with_notifications(shared):
    with shared.client() as c:
        c.send([
            {"jsonrpc": "2.0", "method": "stats_get", "id": 1},
            {"jsonrpc": "2.0", "method": "stats_get"},
            {"jsonrpc": "2.0", "method": "rpc_get_methods", "id": "two"},
            {"jsonrpc": "2.0", "method": "no_such_method"},
            {"foo": 1},
            {"jsonrpc": "2.0", "method": "no_such_method", "id": 3},
        ])
        resp = c.recv()
        assert isinstance(resp, list), resp
        by_id = {}
        for r in resp:
            by_id.setdefault(json.dumps(r.get("id")), []).append(r)
        assert sorted(by_id) == sorted(['1', '"two"', 'null', '3']), resp
        assert "rx_packets" in by_id['1'][0]["result"]
        assert set(RPC_METHODS_NOW) <= set(by_id['"two"'][0]["result"])
        _err(by_id['null'][0], -32600, None)
        _err(by_id['3'][0], -32601, 3)
        assert len(resp) == 4, resp


def test_notifications_get_no_response(shared):
    with shared.client() as c:
        c.send([{"jsonrpc": "2.0", "method": "stats_get"},
                {"jsonrpc": "2.0", "method": "no_such_method"},
                {"jsonrpc": "2.0", "method": "stats_get", "params": {"x": 1}}])
        c.send({"jsonrpc": "2.0", "method": "rpc_get_methods"})
        c.send({"jsonrpc": "2.0", "method": "stats_get", "id": 99})
        r = c.recv()
        assert r.get("id") == 99 and "result" in r, \
            "first response is not the one for id 99: %s" % r
        c.expect_nothing(0.3)


def test_two_requests_in_one_write(shared):
    with shared.client() as c:
        c.send_raw(b'{"jsonrpc":"2.0","method":"stats_get","id":1}\n'
                   b'{"jsonrpc":"2.0","method":"pipeline_get","id":2}'
                   b' \t{"jsonrpc":"2.0","method":"config_get","id":3}'
                   b'{"jsonrpc":"2.0","method":"rpc_get_methods","id":4}\r\n')
        got = {}
        for _ in range(4):
            r = c.recv()
            assert "result" in r, r
            got[r["id"]] = r
        assert sorted(got) == [1, 2, 3, 4]
        c.expect_nothing(0.2)


def test_request_split_into_many_writes(shared):
    with shared.client() as c:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        raw = json.dumps({"jsonrpc": "2.0", "method": "stats_get",
                          "id": "s\u00e9p\u00e4r\u00e9"},
                         ensure_ascii=False).encode()
        for k in range(len(raw)):
            c.send_raw(raw[k:k + 1])
            time.sleep(0.002)
        c.send_raw(b"\n")
        r = c.recv()
        assert r["id"] == "s\u00e9p\u00e4r\u00e9" and "result" in r, r


def test_responses_are_newline_terminated_single_lines(shared):
    with shared.client() as c:
        c.send({"jsonrpc": "2.0", "method": "config_get", "id": 1})
        line = c.recv_line()
        assert json.loads(line)["id"] == 1
        assert b"\n" not in line
        assert c.buf == b""


def test_large_request_under_limit_is_processed(shared):
    pad = "a" * (3 * 1024 * 1024)
    with shared.client(timeout=30) as c:
        c.send({"jsonrpc": "2.0", "method": "stats_get", "id": 5,
                "params": {"pad": pad}})
        _err(c.recv(timeout=30), -32602, 5)
        # the connection keeps working
        assert "rx_packets" in c.call("stats_get")


def test_oversized_request_rejected_and_connection_closed(shared):
    big = (b'{"jsonrpc":"2.0","method":"stats_get","id":1,"params":{"pad":"'
           + b"a" * (33 * 1024 * 1024) + b'"}}\n')
    c = shared.client(timeout=30)
    errors = []

    def sender():
        try:
            c.sock.sendall(big)
        except OSError as e:    # the server closed: EPIPE / ECONNRESET
            errors.append(e)

    t = threading.Thread(target=sender, daemon=True)
    t.start()
    try:
        r = c.recv(timeout=30)
        _err(r, -32600, None)
        with pytest.raises(EOFError):
            c.recv_line(timeout=30)
    finally:
        try:
            c.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        c.close()
        t.join(10)
    # others are still served
    assert "rx_packets" in shared.call("stats_get")


def test_client_disconnecting_mid_request_does_not_disturb_others(shared):
    with shared.client() as b:
        a = shared.client()
        a.send_raw(b'{"jsonrpc": "2.0", "method": "stats_')
        assert "rx_packets" in b.call("stats_get")
        a.close()
        # a client that sends requests and leaves without reading
        for _ in range(3):
            x = shared.client()
            x.send_raw(b'{"jsonrpc":"2.0","method":"config_get","id":1}\n' * 50)
            x.close()
        # one that shuts down its read side only
        y = shared.client()
        y.sock.shutdown(socket.SHUT_RD)
        y.send_raw(b'{"jsonrpc":"2.0","method":"stats_get","id":1}\n')
        y.close()
        for _ in range(5):
            assert "rx_packets" in b.call("stats_get")
    assert shared.alive(), shared.describe()


def test_many_clients_at_once(shared):
    clients = [shared.client() for _ in range(20)]
    try:
        for k, c in enumerate(clients):
            c.send({"jsonrpc": "2.0", "method": "stats_get", "id": k})
        for k, c in enumerate(clients):
            r = c.recv()
            assert r["id"] == k and "result" in r, r
    finally:
        for c in clients:
            c.close()


# ---------------------------------------------------------------- methods

def test_rpc_get_methods_lists_the_methods(shared):
    m = shared.call("rpc_get_methods")
    assert isinstance(m, list) and all(isinstance(x, str) for x in m), m
    missing = set(RPC_METHODS_NOW) - set(m)
    assert not missing, "rpc_get_methods lacks %s: %s" % (missing, m)
    assert len(set(m)) == len(m), m


def test_stats_get_shape_and_values(shared, mixed):
    st = shared.call("stats_get")
    for k in ("rx_packets", "tx_packets", "dropped_packets", "drops",
              "ports", "lcores", "acl", "lb"):
        assert k in st, "stats_get lacks %r: %s" % (k, sorted(st))
    # no lb section: the LB runs all the same, without services
    assert isinstance(st["lb"], dict), st["lb"]
    assert st["lb"].get("services") == 0 and st["lb"].get("flows") == 0, \
        st["lb"]
    for r in pautil.DROP_REASONS:
        assert r in st["drops"], "drops lacks %r: %s" % (r, st["drops"])
    n_mal = sum(p.malformed for p in mixed)
    assert st["rx_packets"] == len(mixed)
    assert st["dropped_packets"] == sum(st["drops"].values())
    assert st["drops"]["malformed"] == n_mal
    assert st["rx_packets"] == st["tx_packets"] + st["dropped_packets"]
    assert isinstance(st["ports"], (dict, list)) and st["ports"], st["ports"]
    assert isinstance(st["lcores"], (dict, list)) and st["lcores"], \
        st["lcores"]


def _walk(doc):
    yield doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v)


def test_pipeline_get_lists_lcores_and_stages(shared):
    pl = shared.call("pipeline_get")
    assert isinstance(pl, dict), pl
    text = json.dumps(pl)
    for stage in ("rx", "classify", "lb", "tx"):
        assert '"%s"' % stage in text, "stage %s not in %s" % (stage, text)
    assert "lcores" in pl, pl
    lc = pl["lcores"]
    ids = set()
    items = lc.values() if isinstance(lc, dict) else lc
    if isinstance(lc, dict):
        ids |= {int(k) for k in lc if str(k).isdigit()}
    for it in items:
        if isinstance(it, dict):
            for key in ("lcore", "lcore_id", "id"):
                if isinstance(it.get(key), int):
                    ids.add(it[key])
    assert {1, 2, 3, 4} <= ids, "lcores 1-4 not listed: %s" % lc
    assert pl.get("mode") in ("pipeline", None), pl


def _norm_range(v):
    if v in (None, "any"):
        return (0, 65535)
    if isinstance(v, int):
        return (v, v)
    lo, _, hi = str(v).partition("-")
    return (int(lo), int(hi or lo))


def _norm_proto(v):
    return {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "any": None}.get(
        v, v)


def test_config_get_reflects_loaded_config(shared):
    cfg = shared.call("config_get")
    assert cfg["pipeline"]["mode"] == "pipeline"
    assert cfg["pipeline"]["ring_size"] == 256
    assert cfg["pipeline"]["burst"] == 16
    lc = cfg["pipeline"]["lcores"]
    for st, ids in PIPE4["lcores"].items():
        assert lc[st] == ids, lc
    assert cfg["acl"]["default"] == "permit"
    rules = {r["id"]: r for r in cfg["acl"]["rules"]}
    assert sorted(rules) == [10, 11]
    for want in CONF["acl"]["rules"]:
        got = rules[want["id"]]
        for k in ("src", "dst", "action", "priority"):
            assert got[k] == want[k], (k, got, want)
        for k in ("sport", "dport"):
            assert _norm_range(got[k]) == _norm_range(want[k]), (k, got)
        assert _norm_proto(got["proto"]) == _norm_proto(want["proto"]), got


def test_config_get_round_trips(shared, daemon_factory, mixed, mixed_pcap,
                                tmp_path):
    """config_get's document, loaded by a new daemon, gives the same
    config_get."""
    cfg = shared.call("config_get")
    path = str(tmp_path / "roundtrip.json")
    pautil.write_json(path, cfg)
    d2 = daemon_factory(path, mixed_pcap, name="roundtrip")
    cfg2 = d2.call("config_get")
    # replay mode replaces "ports" by replay0 (its devargs name the files)
    cfg.pop("ports", None)
    cfg2.pop("ports", None)
    assert cfg2 == cfg


# ---------------------------------------------------------------- lifecycle

def test_summary_printed_when_replay_done_and_on_exit(daemon_factory, mixed,
                                                      mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC1}, mixed_pcap, name="summary")
    st = d.wait_replay_done(len(mixed))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not json_lines(d.stdout):
        time.sleep(0.1)
    first = [j for j in json_lines(d.stdout) if "rx_packets" in j]
    assert first, "no summary on stdout after the replay (--stay):\n%s" % \
        d.describe()
    assert first[0]["rx_packets"] == len(mixed)
    assert d.alive()
    with d.client() as c:
        resp = c.call_raw("shutdown")
        assert resp.get("result") is True, resp
    assert d.wait() == 0, d.describe()
    res = pautil.Result(d.args, d.rc, d.stdout, d.stderr)
    final = check_summary(res, len(mixed))
    for k in ("rx_packets", "tx_packets", "dropped_packets", "drops"):
        assert final[k] == st[k], (k, final[k], st[k])
    assert len(read_pcap(d.out_pcap)) == final["tx_packets"]
    assert not os.path.exists(d.sock), "socket file left behind"


def test_sigterm_exits_zero_with_summary(daemon_factory, mixed, mixed_pcap):
    d = daemon_factory({"pipeline": PIPE4}, mixed_pcap, name="sigterm")
    d.wait_replay_done(len(mixed))
    assert d.stop() == 0, d.describe()
    check_summary(pautil.Result(d.args, d.rc, d.stdout, d.stderr), len(mixed))


def test_sigint_exits_zero_with_summary(daemon_factory, mixed, mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC2}, mixed_pcap, name="sigint")
    d.wait_replay_done(len(mixed))
    assert d.stop(signal.SIGINT) == 0, d.describe()
    check_summary(pautil.Result(d.args, d.rc, d.stdout, d.stderr), len(mixed))
    assert not os.path.exists(d.sock), "socket file left behind"


def test_shutdown_notification_also_stops(daemon_factory, mixed, mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC1}, mixed_pcap, name="notif")
    d.wait_replay_done(len(mixed))
    with d.client() as c:
        c.send({"jsonrpc": "2.0", "method": "shutdown"})
        assert d.wait() == 0, d.describe()


def test_socket_mode_0660(shared):
    st = os.stat(shared.sock)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o660, oct(st.st_mode)


def test_live_socket_refused(shared, mixed_pcap, tmp_path):
    res = run([DAEMON, "--replay", mixed_pcap, "--replay-out",
               str(tmp_path / "o.pcap"), "-c", pautil.DEFAULT_CONF,
               "-s", shared.sock], timeout=60)
    assert res.rc not in (0, None), res
    # EAL may have logged before the socket was tried: the reason is the
    # last line
    last = [ln for ln in res.stderr.splitlines() if ln.strip()][-1]
    assert "in use" in last, res
    # the first daemon keeps its socket
    assert os.path.exists(shared.sock)
    assert "rx_packets" in shared.call("stats_get")


def test_stale_socket_replaced(daemon_factory, mixed, mixed_pcap):
    path = pautil.unique("stale", ".sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    s.close()                   # leaves the file, nobody listens
    assert os.path.exists(path)
    d = daemon_factory({"pipeline": pautil.RTC1}, mixed_pcap, sock=path,
                       name="stale")
    d.wait_replay_done(len(mixed))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o660


def test_replay_without_stay_and_with_socket_exits(mixed, mixed_pcap,
                                                   tmp_path):
    sock = pautil.unique("nostay", ".sock")
    res = run([DAEMON, "--replay", mixed_pcap, "--replay-out",
               str(tmp_path / "o.pcap"), "-c", pautil.DEFAULT_CONF,
               "-s", sock], timeout=60)
    check_summary(res, len(mixed))
    assert not os.path.exists(sock)


def test_stats_counters_match_summary_in_pipeline(daemon_factory, mixed,
                                                  mixed_pcap):
    d = daemon_factory({"pipeline": pautil.RTC2}, mixed_pcap, name="cnt")
    st = d.wait_replay_done(len(mixed))
    assert d.stop() == 0
    final = last_json_line(d.stdout)
    assert final and final["drops"] == st["drops"], (final, st)
