# SPDX-License-Identifier: BSD-3-Clause
"""The Prometheus exporter and the /pktaccel DPDK telemetry commands
(docs/metrics.md), against the real daemon:

- a replay with --stay, a "metrics" key and telemetry on (--file-prefix,
  --telemetry): every scraped value equals what stats_get, acl_rule_list
  and lb_service_list say (per rule, per backend, per lcore), the text is
  well formed (HELP/TYPE, unique series) and passes `promtool check
  metrics`; the telemetry commands agree too, directly on the socket and
  through dpdk-telemetry.py, next to DPDK's own /ethdev/stats;
- a live daemon on a net_null port (which receives without end): hostile
  HTTP clients (huge headers, a connection flood, a client that stalls)
  while RPC keeps answering and packets keep flowing;
- a metrics port that is taken is a start-up error with a one-line reason.
"""

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import time
import uuid

import pytest

import pautil
from pautil import DAEMON, Daemon, unique, write_json

TELEMETRY_PY = shutil.which("dpdk-telemetry.py") or "/usr/bin/dpdk-telemetry.py"
MAX_CONNS = 16          # PA_METRICS_DEFAULT_MAX_CONNS
CONN_TIMEOUT = 10       # PA_METRICS_DEFAULT_TIMEOUT_S


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_request(port, path="/metrics", method="GET", timeout=10,
                 headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def scrape(port):
    status, headers, body = http_request(port)
    assert status == 200, (status, body[:300])
    assert headers.get("Content-Type") == \
        "text/plain; version=0.0.4; charset=utf-8", headers
    return body.decode("utf-8")


SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
                      r'(,|$)')


def parse_labels(s):
    out = []
    pos = 0
    while pos < len(s):
        m = LABEL_RE.match(s, pos)
        assert m, "bad label set %r at %d" % (s, pos)
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    names = [k for k, _ in out]
    assert names == sorted(names) and len(set(names)) == len(names), s
    return tuple(out)


def parse_exposition(text):
    """Strict parse of the text format as pktaccel writes it: each family
    is '# HELP', '# TYPE', then its samples; families sorted by name,
    samples by label set, no series twice. Returns {name: {"type",
    "help", "samples": {labels tuple: float}}}."""
    fams = {}
    cur = None
    names = []
    assert text.endswith("\n")
    for ln in text.splitlines():
        if ln.startswith("# HELP "):
            name, _, help_ = ln[7:].partition(" ")
            assert name not in fams, "family %s twice" % name
            cur = fams[name] = {"help": help_, "type": None, "samples": {},
                                "order": []}
            names.append(name)
            continue
        if ln.startswith("# TYPE "):
            name, _, typ = ln[7:].partition(" ")
            assert cur is fams.get(name) and cur["type"] is None, ln
            assert typ in ("counter", "gauge"), ln
            cur["type"] = typ
            continue
        m = SAMPLE_RE.match(ln)
        assert m, "bad line %r" % ln
        name = m.group(1)
        assert cur is fams.get(name) and cur["type"], \
            "sample %r outside its family" % ln
        labels = parse_labels(m.group(3) or "")
        assert labels not in cur["samples"], "series twice: %r" % ln
        cur["samples"][labels] = float(m.group(4))
        cur["order"].append(m.group(3) or "")
    assert names == sorted(names), "families not sorted"
    for name, f in fams.items():
        assert f["order"] == sorted(f["order"]), "%s not sorted" % name
        if f["type"] == "counter":
            assert name.endswith("_total"), name
        assert name.startswith("pktaccel_"), name
        assert f["help"], name
    return fams


def value(fams, name, **labels):
    key = tuple(sorted(labels.items()))
    assert name in fams, "no family %s" % name
    assert key in fams[name]["samples"], "%s%r not in %r" % (
        name, labels, list(fams[name]["samples"])[:10])
    return fams[name]["samples"][key]


def series(fams, name):
    return {dict(k).get(next(iter(dict(k)), None), ""): v
            for k, v in fams.get(name, {"samples": {}})["samples"].items()}


def runtime_dir(prefix):
    """The EAL's runtime directory of a --file-prefix (as DPDK picks it)."""
    base = "/var/run" if os.geteuid() == 0 else \
        os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def tel_socket(prefix):
    return os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")


def tel_query(prefix, *cmds):
    """Send each command on the telemetry socket; return their answers
    (the value under the command's name, None for an error)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(tel_socket(prefix))
    try:
        info = json.loads(s.recv(1024).decode())
        out = []
        for c in cmds:
            s.send(c.encode())
            reply = json.loads(s.recv(info["max_output_len"]).decode())
            out.append(reply[c.split(",")[0]])
        return out
    finally:
        s.close()


def cleanup_prefix(prefix):
    shutil.rmtree(runtime_dir(prefix), ignore_errors=True)


def conf_with_metrics(port):
    with open(pautil.DEFAULT_CONF) as f:
        doc = json.load(f)
    doc["metrics"] = {"listen": "127.0.0.1:%d" % port}
    return doc


# --------------------------------------------------------------------------
# A replay that stays, with metrics and telemetry

@pytest.fixture(scope="module")
def replayd(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("metrics"))
    port = free_port()
    prefix = "pa-mt-%s" % uuid.uuid4().hex[:8]
    sock = unique("metrics", ".sock")
    conf = write_json(os.path.join(work, "conf.json"), conf_with_metrics(port))
    d = Daemon([DAEMON, "--file-prefix=" + prefix, "--telemetry", "--",
                "--replay", pautil.SAMPLE, "--replay-out",
                os.path.join(work, "out.pcap"), "-c", conf, "-s", sock,
                "--stay"], sock, work, "replay")
    try:
        d.wait_ready()
        n = len(pautil.read_pcap(pautil.SAMPLE))
        d.wait_replay_done(n)
        d.port = port
        d.prefix = prefix
        d.n = n
        yield d
    finally:
        rc = d.stop()
        cleanup_prefix(prefix)
        for p in (sock, sock + ".lock"):
            if os.path.exists(p):
                os.unlink(p)
    assert rc == 0, d.describe()


def test_scrape_equals_rpc_views(replayd):
    st = replayd.call("stats_get")
    rules = replayd.call("acl_rule_list")
    svcs = replayd.call("lb_service_list")
    f = parse_exposition(scrape(replayd.port))

    assert value(f, "pktaccel_rx_packets_total") == st["rx_packets"] == \
        replayd.n
    assert value(f, "pktaccel_tx_packets_total") == st["tx_packets"]
    for reason, n in st["drops"].items():
        assert value(f, "pktaccel_drops_total", reason=reason) == n, reason
    assert sum(series(f, "pktaccel_drops_total").values()) == \
        st["dropped_packets"]

    p = st["ports"]["replay0"]
    for key, name in (("rx_packets", "pktaccel_port_rx_packets_total"),
                      ("tx_packets", "pktaccel_port_tx_packets_total"),
                      ("rx_bytes", "pktaccel_port_rx_bytes_total"),
                      ("tx_bytes", "pktaccel_port_tx_bytes_total"),
                      ("rx_missed", "pktaccel_port_rx_missed_total"),
                      ("rx_errors", "pktaccel_port_rx_errors_total"),
                      ("tx_errors", "pktaccel_port_tx_errors_total")):
        assert value(f, name, port="replay0") == p[key], name
    assert value(f, "pktaccel_port_link_up", port="replay0") == 1

    # per-lcore: stages, drops, busy vs idle polls
    for lc, s in st["lcores"].items():
        for stage, n in s["stage_packets"].items():
            assert value(f, "pktaccel_lcore_stage_packets_total", lcore=lc,
                         stage=stage) == n
        for reason, n in s["drops"].items():
            assert value(f, "pktaccel_lcore_drops_total", lcore=lc,
                         reason=reason) == n
        busy = value(f, "pktaccel_lcore_polls_total", lcore=lc, state="busy")
        idle = value(f, "pktaccel_lcore_polls_total", lcore=lc, state="idle")
        assert busy >= s["busy_polls"] and idle >= s["idle_polls"]
        assert busy > 0
    for stage in ("rx", "classify", "lb", "tx"):
        assert value(f, "pktaccel_stage_packets_total", stage=stage) == sum(
            s["stage_packets"][stage] for s in st["lcores"].values())

    # ACL: exact hits and bytes per rule id; table version
    assert {dict(k)["rule"] for k in
            f["pktaccel_acl_rule_hits_total"]["samples"]} == \
        {str(r["id"]) for r in rules}
    assert sum(r["hits"] for r in rules) > 0
    for r in rules:
        assert value(f, "pktaccel_acl_rule_hits_total",
                     rule=str(r["id"])) == r["hits"]
        assert value(f, "pktaccel_acl_rule_bytes_total",
                     rule=str(r["id"])) == r["bytes"]
    assert value(f, "pktaccel_acl_default_hits_total") == \
        st["acl"]["default_hits"]
    assert value(f, "pktaccel_acl_table_version") == st["acl"]["version"]
    assert value(f, "pktaccel_acl_build_duration_seconds") == pytest.approx(
        st["acl"]["build_ms"] / 1000.0)

    # LB: exact packets and flows per backend
    total = 0
    for s in svcs:
        for b in s["backends"]:
            lab = {"service": s["name"], "backend": b["addr"]}
            assert value(f, "pktaccel_lb_backend_packets_total", **lab) == \
                b["packets"]
            assert value(f, "pktaccel_lb_backend_flows", **lab) == b["flows"]
            assert value(f, "pktaccel_lb_backend_state", state=b["state"],
                         **lab) == 1
            total += b["packets"]
        assert value(f, "pktaccel_lb_service_flows", service=s["name"]) == \
            s["flows"]
    assert total > 0
    assert value(f, "pktaccel_lb_balanced_packets_total") == \
        st["lb"]["balanced"] == total
    assert value(f, "pktaccel_lb_table_version") == st["lb"]["version"]


def test_blocklist_families_equal_blocklist_get(replayd):
    """The blocklist's families, delta and merge included, say what
    blocklist_get and stats_get say. An add right after a replace sits in
    the delta table until the background merge (200 ms later): the three
    views are compared from a moment when blocklist_get read the same
    before and after them (else again: a merge came between)."""
    c = replayd
    c.call("blocklist_replace", {"prefixes": ["198.51.100.0/24",
                                              "192.0.2.77",
                                              "2001:db8:bad::/48"]})
    c.call("blocklist_add", {"prefixes": ["203.0.113.0/25"]})
    try:
        for _ in range(50):
            g = c.call("blocklist_get", {"limit": 0})
            f = parse_exposition(scrape(c.port))
            st = c.call("stats_get")["blocklist"]
            if c.call("blocklist_get", {"limit": 0}) == g:
                break
        else:
            pytest.fail("blocklist_get never read the same twice: %r" % g)
        assert g["prefixes"] == 4 and g["prefixes4"] == 3, g
        for k in ("prefixes", "prefixes4", "prefixes6", "hits",
                  "memory_bytes", "version", "delta_added", "delta_deleted",
                  "delta_bytes", "merges"):
            assert st[k] == g[k], (k, st, g)
        for k in ("update_ms", "merge_ms"):
            assert st[k] == pytest.approx(g[k]), (k, st, g)
        assert value(f, "pktaccel_blocklist_prefixes", family="ipv4") == \
            g["prefixes4"]
        assert value(f, "pktaccel_blocklist_prefixes", family="ipv6") == \
            g["prefixes6"]
        assert value(f, "pktaccel_blocklist_hits_total") == g["hits"]
        assert value(f, "pktaccel_blocklist_memory_bytes") == \
            g["memory_bytes"]
        assert value(f, "pktaccel_blocklist_version") == g["version"]
        assert value(f, "pktaccel_blocklist_delta_prefixes",
                     change="added") == g["delta_added"]
        assert value(f, "pktaccel_blocklist_delta_prefixes",
                     change="deleted") == g["delta_deleted"]
        assert value(f, "pktaccel_blocklist_delta_bytes") == g["delta_bytes"]
        assert value(f, "pktaccel_blocklist_merges_total") == g["merges"]
        assert value(f, "pktaccel_blocklist_merge_duration_seconds") == \
            pytest.approx(g["merge_ms"] / 1000.0)
        assert value(f, "pktaccel_blocklist_update_duration_seconds") == \
            pytest.approx(g["update_ms"] / 1000.0)
    finally:
        c.call("blocklist_replace", {"prefixes": []})


def test_latency_and_neighbour_families_equal_stats_get(replayd):
    st = replayd.call("stats_get")
    f = parse_exposition(scrape(replayd.port))
    lat = st["latency"]
    assert lat["enabled"] and lat["count"] == st["tx_packets"] > 0
    assert value(f, "pktaccel_latency_packets_total") == lat["count"]
    for key, pct in (("p50_ns", "50"), ("p90_ns", "90"), ("p99_ns", "99"),
                     ("p999_ns", "99.9"), ("max_ns", "100")):
        got = value(f, "pktaccel_latency_seconds", percentile=pct)
        assert abs(got - lat[key] / 1e9) <= 1e-12 + 1e-9 * got, (key, got)
    mean = value(f, "pktaccel_latency_sum_seconds_total") / lat["count"]
    assert abs(mean - lat["mean_ns"] / 1e9) < 1e-9 + 1e-6 * mean
    for lc, s in st["lcores"].items():
        assert value(f, "pktaccel_lcore_sleeps_total", lcore=lc) <= \
            s["sleeps"] + 10**6         # still counting while idle
    ng = st["neigh"]
    assert value(f, "pktaccel_neigh_entries") == ng["entries"]
    assert value(f, "pktaccel_neigh_rx_frames_total") == ng["rx"]
    for reason, n in ng["invalid"].items():
        assert value(f, "pktaccel_neigh_invalid_total", reason=reason) == n


def test_rpc_calls_and_errors_counted_per_method(replayd):
    def counts():
        f = parse_exposition(scrape(replayd.port))
        return (value(f, "pktaccel_rpc_calls_total", method="pipeline_get"),
                value(f, "pktaccel_rpc_call_errors_total",
                      method="pipeline_get"),
                value(f, "pktaccel_rpc_unknown_method_calls_total"))

    c0, e0, u0 = counts()
    with replayd.client() as c:
        for _ in range(3):
            c.call("pipeline_get")
        assert "error" in c.call_raw("pipeline_get", {"bogus": 1})
        assert "error" in c.call_raw("no_such_method")
    c1, e1, u1 = counts()
    assert (c1 - c0, e1 - e0, u1 - u0) == (4, 1, 1)


def test_promtool_check_metrics(replayd):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    text = scrape(replayd.port)
    r = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and not r.stdout.strip() and \
        not r.stderr.strip(), (r.returncode, r.stdout[-2000:],
                               r.stderr[-2000:])


def test_http_paths_and_methods(replayd):
    port = replayd.port
    before = series(parse_exposition(scrape(port)),
                    "pktaccel_http_responses_total")
    st, _, body = http_request(port, "/")
    assert st == 200 and b"/metrics" in body
    st, _, body = http_request(port, "/metrics?name[]=x")
    assert st == 200 and body.startswith(b"# HELP ")
    st, h, body = http_request(port, "/metrics", "HEAD")
    assert st == 200 and body == b""
    for path in ("/metrics/", "/nope", "/../metrics", "/metrics%00"):
        st, _, _ = http_request(port, path)
        assert st == 404, path
    for m in ("POST", "PUT", "DELETE", "OPTIONS"):
        st, h, _ = http_request(port, "/metrics", m)
        assert st == 405, m
        assert h.get("Allow") == "GET, HEAD", h
    # a body with the request: refused before it is read
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    raw.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 100000\r\n\r\nabc")
    assert raw.recv(4096).startswith(b"HTTP/1.1 405 ")
    raw.close()
    after = series(parse_exposition(scrape(port)),
                   "pktaccel_http_responses_total")
    assert after["404"] - before["404"] == 4
    assert after["405"] - before["405"] == 5
    # "/", "?", HEAD and the scrape before this one
    assert after["200"] - before["200"] == 4


def test_telemetry_socket_agrees_with_rpc(replayd):
    st = replayd.call("stats_get")
    rules = replayd.call("acl_rule_list")
    svcs = replayd.call("lb_service_list")
    lcore = sorted(st["lcores"])[0]
    (stats, ports, acl, lb, web, lcores, one, pipe, ethdev, helptext,
     bad_svc, bad_id) = tel_query(
        replayd.prefix, "/pktaccel/stats", "/pktaccel/ports", "/pktaccel/acl",
        "/pktaccel/lb", "/pktaccel/lb,web", "/pktaccel/lcores",
        "/pktaccel/lcores," + lcore, "/pktaccel/pipeline", "/ethdev/stats,0",
        "/help,/pktaccel/acl", "/pktaccel/lb,nosuch", "/pktaccel/acl,x1")
    assert stats["rx_packets"] == st["rx_packets"] == replayd.n
    assert stats["drops"] == st["drops"]
    assert ports["replay0"]["rx_packets"] == ethdev["ipackets"] == replayd.n
    assert ports["replay0"]["tx_packets"] == ethdev["opackets"]
    assert acl["hits"] == {str(r["id"]): r["hits"] for r in rules}
    assert acl["version"] == st["acl"]["version"]
    assert lb["service_flows"] == {s["name"]: s["flows"] for s in svcs}
    s = [x for x in svcs if x["name"] == "web"][0]
    assert web["vip"] == s["vip"]
    assert web["backend_addr"] == [b["addr"] for b in s["backends"]]
    assert web["backend_packets"] == [b["packets"] for b in s["backends"]]
    assert web["backend_flows"] == [b["flows"] for b in s["backends"]]
    assert lcores[lcore]["stage_packets/rx"] == \
        st["lcores"][lcore]["stage_packets"]["rx"]
    assert one["busy_polls"] >= st["lcores"][lcore]["busy_polls"]
    assert pipe["mode"] == "rtc" and pipe["roles"] == {lcore: "worker"}
    assert "rule" in helptext["/pktaccel/acl"]
    assert bad_svc is None and bad_id is None
    # /pktaccel/rpc counts what it sees
    n0 = tel_query(replayd.prefix, "/pktaccel/rpc")[0]["calls"]["stats_get"]
    replayd.call("stats_get")
    n1 = tel_query(replayd.prefix, "/pktaccel/rpc")[0]["calls"]["stats_get"]
    assert n1 == n0 + 1


def test_dpdk_telemetry_py_shows_pktaccel_next_to_ethdev(replayd):
    if not os.access(TELEMETRY_PY, os.X_OK):
        pytest.skip("dpdk-telemetry.py not installed (package dpdk)")
    r = subprocess.run(
        [pautil.PYTHON, TELEMETRY_PY, "-f", replayd.prefix],
        input=b"/\n/pktaccel/stats\n/ethdev/stats,0\n/pktaccel/acl\n",
        capture_output=True, timeout=60)
    assert r.returncode == 0, r
    out = {}
    for doc in pautil.json_lines(r.stdout.decode()):
        out.update(doc)
    cmds = out["/"]
    for c in ("/pktaccel/stats", "/pktaccel/ports", "/pktaccel/lcores",
              "/pktaccel/pipeline", "/pktaccel/acl", "/pktaccel/lb",
              "/pktaccel/rpc", "/ethdev/stats"):
        assert c in cmds, c
    assert out["/pktaccel/stats"]["rx_packets"] == \
        out["/ethdev/stats"]["ipackets"] == replayd.n
    assert sum(out["/pktaccel/acl"]["hits"].values()) > 0


def test_pipeline_mode_ring_fill_levels_on_ipv6(daemon_factory):
    """Pipeline mode: one ring series per input ring of pipeline_get,
    served on an IPv6 listener."""
    port = free_port()
    doc = conf_with_metrics(port)
    doc["pipeline"] = pautil.PIPE4
    doc["metrics"] = {"listen": "[::1]:%d" % port}
    d = daemon_factory(doc, pautil.SAMPLE)
    d.wait_replay_done(len(pautil.read_pcap(pautil.SAMPLE)))
    pl = d.call("pipeline_get")
    c = http.client.HTTPConnection("::1", port, timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    assert r.status == 200
    f = parse_exposition(r.read().decode())
    c.close()
    rings = {(str(w["lcore"]), g["name"]): g for w in pl["lcores"]
             for g in w["rings_in"]}
    assert len(rings) >= 3
    got = {(dict(k)["lcore"], dict(k)["ring"]): v for k, v in
           f["pktaccel_ring_capacity"]["samples"].items()}
    assert got == {k: g["capacity"] for k, g in rings.items()}
    assert set(dict(k)["ring"] for k in
               f["pktaccel_ring_entries"]["samples"]) == \
        {g["name"] for g in rings.values()}
    roles = {dict(k)["lcore"]: dict(k)["role"] for k in
             f["pktaccel_lcore_info"]["samples"]}
    assert roles == {str(w["lcore"]): w["role"] for w in pl["lcores"]}


def documented_metrics():
    with open(os.path.join(pautil.REPO, "docs", "metrics.md")) as f:
        return set(re.findall(r"^\| `(pktaccel_[a-z_]+)` \|", f.read(), re.M))


def test_docs_list_every_metric_and_dashboard_uses_real_ones(replayd,
                                                             tmp_path):
    documented = documented_metrics()
    scraped = set(parse_exposition(scrape(replayd.port)))
    assert scraped - documented == set(), "not in docs/metrics.md"
    with open(os.path.join(pautil.REPO, "docs", "grafana",
                           "pktaccel.json")) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 20
    used = set(n for e in exprs for n in re.findall(r"pktaccel_[a-z_]+", e))
    assert used - documented == set(), "dashboard uses unknown metrics"
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed: PromQL not checked")
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "pktaccel:panel%d" % i,
         "expr": e.replace("$__rate_interval", "1m").replace("$instance",
                                                             ".*")}
        for i, e in enumerate(exprs)]}]}
    path = write_json(str(tmp_path / "rules.json"), rules)   # YAML ⊃ JSON
    r = subprocess.run([promtool, "check", "rules", path],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])


# --------------------------------------------------------------------------
# Start-up

def test_taken_metrics_port_is_a_startup_error(tmp_path):
    hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hold.bind(("127.0.0.1", 0))
    hold.listen(1)
    port = hold.getsockname()[1]
    try:
        res = pautil.replay(pautil.SAMPLE, str(tmp_path / "out.pcap"),
                            conf_with_metrics(port), timeout=60)
    finally:
        hold.close()
    assert res.rc not in (0, None), res
    last = [ln for ln in res.stderr.splitlines() if ln.strip()][-1]
    assert last == "pktaccel: metrics: cannot listen on 127.0.0.1:%d: " \
        "Address already in use" % port, res


def test_replay_without_metrics_key_opens_no_listener(tmp_path):
    """Replays never collide: without a "metrics" key a replay opens no
    listener, so it runs while the default port is taken."""
    hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        hold.bind(("127.0.0.1", 9469))
        hold.listen(1)
    except OSError:
        pass        # taken by someone else: just as good
    try:
        doc = conf_with_metrics(9469)
        del doc["metrics"]
        res = pautil.replay(pautil.SAMPLE, str(tmp_path / "out.pcap"), doc,
                            timeout=60)
    finally:
        hold.close()
    pautil.check_summary(res, len(pautil.read_pcap(pautil.SAMPLE)))


# --------------------------------------------------------------------------
# Hostile HTTP clients against a live daemon that forwards all along

@pytest.fixture(scope="module")
def lived(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("live-metrics"))
    port = free_port()
    prefix = "pa-ml-%s" % uuid.uuid4().hex[:8]
    sock = unique("livem", ".sock")
    conf = write_json(os.path.join(work, "live.json"), {
        "ports": [{"name": "p0", "devargs": "net_null0"}],
        "pipeline": {"mode": "rtc"},
        "metrics": {"listen": "127.0.0.1:%d" % port}})
    d = Daemon([DAEMON, "--no-huge", "--no-pci", "-m", "512", "-l", "0,1",
                "--file-prefix=" + prefix, "--", "-c", conf, "-s", sock],
               sock, work, "live")
    try:
        d.wait_ready(60)
        d.port = port
        d.prefix = prefix
        yield d
    finally:
        rc = d.stop()
        cleanup_prefix(prefix)
    assert rc == 0, d.describe()


def closed_by_server(s, wait):
    """True if the server closes (or resets) the socket within wait s."""
    s.settimeout(wait)
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return True
    except socket.timeout:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def rx_packets(d):
    return d.call("stats_get")["rx_packets"]


def test_hostile_http_clients_do_not_stop_rpc_or_forwarding(lived):
    port = lived.port
    assert scrape(port)

    # a header block far over the per-connection memory: refused, closed
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                  b"a" * 200000 + b"\r\n\r\n")
    except (ConnectionResetError, BrokenPipeError):
        pass
    s.settimeout(10)
    try:
        head = s.recv(4096)
    except ConnectionResetError:
        head = b""
    s.close()
    assert head == b"" or head.startswith(b"HTTP/1.1 431 "), head[:200]
    assert lived.alive(), lived.describe()

    # a client that sends half a request and stalls
    stalled = socket.create_connection(("127.0.0.1", port), timeout=10)
    stalled.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    t_stall = time.monotonic()

    # a flood of idle connections: past the limit they are not served
    # (they wait in the listen backlog), so a scrape waits too
    flood = [socket.create_connection(("127.0.0.1", port), timeout=10)
             for _ in range(3 * MAX_CONNS)]
    with pytest.raises((socket.timeout, TimeoutError)):
        http_request(port, timeout=1)
    # meanwhile RPC answers and packets keep flowing
    rx0 = rx_packets(lived)
    time.sleep(0.5)
    rx1 = rx_packets(lived)
    assert rx1 > rx0, (rx0, rx1)
    tel = tel_query(lived.prefix, "/pktaccel/ports", "/ethdev/stats,0")
    assert tel[1]["ipackets"] >= tel[0]["p0"]["rx_packets"] >= rx1

    for s in flood:
        s.close()
    # with the flood gone the exporter serves again (the stalled client
    # still holds its connection)
    deadline = time.monotonic() + 5
    while True:
        try:
            f = parse_exposition(scrape(port))
            break
        except (OSError, http.client.HTTPException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert value(f, "pktaccel_port_rx_packets_total", port="p0") >= rx1

    # the stalled client is cut off by the connection timeout (a generous
    # deadline: the server runs on a control thread a loaded box delays)
    assert closed_by_server(stalled, CONN_TIMEOUT + 30), \
        "stalled connection still open after %.1fs" % (
            time.monotonic() - t_stall)
    assert time.monotonic() - t_stall >= CONN_TIMEOUT - 1
    stalled.close()
    assert rx_packets(lived) > rx1
    assert lived.alive(), lived.describe()
