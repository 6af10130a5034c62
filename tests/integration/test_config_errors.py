# SPDX-License-Identifier: BSD-3-Clause
"""Start-up errors: bad configurations are refused before anything starts,
with a non-zero exit and one line on stderr naming the JSON path; bad
command lines likewise; --help and --version succeed."""

import copy
import json
import os
import re

import pytest

import pautil
from pautil import DAEMON, replay, run

GOOD = {
    "pipeline": {"mode": "rtc"},
    "acl": {
        "default": "permit",
        "rules": [
            {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
             "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
            {"id": 11, "priority": 90, "src": "2001:db8::/32", "dst": "any",
             "sport": "1024-65535", "dport": "80-88", "proto": "tcp",
             "action": "permit"},
        ],
    },
    "lb": {
        "local_addr": "192.0.2.254",
        "services": [
            {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
             "scheduler": "maglev", "forward": "ipip",
             "backends": [{"addr": "10.1.0.1", "weight": 1},
                          {"addr": "10.1.0.2", "weight": 2}]},
        ],
    },
}


def _set(doc, path, value):
    """Set doc[path...] (path: list of keys/indices); value DELETE removes."""
    d = doc
    for k in path[:-1]:
        d = d[k]
    if value is DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value


DELETE = object()

# (id, [(path, value)...], expected JSON path in the message)
BAD = [
    ("ring_size_not_pow2", [(["pipeline", "ring_size"], 1000)],
     "$.pipeline.ring_size"),
    ("ring_size_string", [(["pipeline", "ring_size"], "big")],
     "$.pipeline.ring_size"),
    ("mode_unknown", [(["pipeline", "mode"], "warp")], "$.pipeline.mode"),
    ("burst_zero", [(["pipeline", "burst"], 0)], "$.pipeline.burst"),
    ("lcores_not_list", [(["pipeline", "lcores"], {"worker": "1"})],
     "$.pipeline.lcores.worker"),
    ("unknown_top_key", [(["bogus"], 1)], "bogus"),
    ("unknown_pipeline_key", [(["pipeline", "turbo"], True)], "turbo"),
    ("acl_default_bad", [(["acl", "default"], "maybe")], "$.acl.default"),
    ("acl_src_prefix_too_long", [(["acl", "rules", 0, "src"], "10.0.0.0/33")],
     "$.acl.rules[0].src"),
    ("acl_src_garbage", [(["acl", "rules", 1, "src"], "2001:db8::zz/32")],
     "$.acl.rules[1].src"),
    ("acl_dport_out_of_range", [(["acl", "rules", 1, "dport"], "80-70000")],
     "$.acl.rules[1].dport"),
    ("acl_sport_reversed", [(["acl", "rules", 0, "sport"], "90-80")],
     "$.acl.rules[0].sport"),
    ("acl_proto_unknown", [(["acl", "rules", 0, "proto"], "sctpx")],
     "$.acl.rules[0].proto"),
    ("acl_action_unknown", [(["acl", "rules", 0, "action"], "explode")],
     "$.acl.rules[0].action"),
    ("acl_id_zero", [(["acl", "rules", 0, "id"], 0)], "$.acl.rules[0].id"),
    ("acl_id_duplicate", [(["acl", "rules", 1, "id"], 10)],
     "$.acl.rules[1].id"),
    ("acl_id_missing", [(["acl", "rules", 0, "id"], DELETE)],
     "$.acl.rules[0]"),
    ("lb_vip_garbage", [(["lb", "services", 0, "vip"], "not-an-ip")],
     "$.lb.services[0].vip"),
    ("lb_port_out_of_range", [(["lb", "services", 0, "port"], 70000)],
     "$.lb.services[0].port"),
    ("lb_scheduler_unknown", [(["lb", "services", 0, "scheduler"], "random")],
     "$.lb.services[0].scheduler"),
    ("lb_backend_weight_negative",
     [(["lb", "services", 0, "backends", 1, "weight"], -1)],
     "$.lb.services[0].backends[1].weight"),
    ("lb_backend_addr_garbage",
     [(["lb", "services", 0, "backends", 0, "addr"], "10.1.0.300")],
     "$.lb.services[0].backends[0].addr"),
    ("stall_ms_too_small", [(["pipeline", "stall_ms"], 50)],
     "$.pipeline.stall_ms"),
    ("announce_table_zero", [(["announce"], {"table": 0})],
     "$.announce.table"),
    ("announce_table_local", [(["announce"], {"table": 255})],
     "$.announce.table"),
    ("announce_table_main", [(["announce"], {"table": 254})],
     "$.announce.table"),
    ("announce_table_missing", [(["announce"], {"drain_s": 5})],
     "$.announce.table"),
    ("announce_drain_s_too_long", [(["announce"], {"table": 100,
                                                   "drain_s": 3601})],
     "$.announce.drain_s"),
    ("announce_unknown_key", [(["announce"], {"table": 100, "dev": "x"})],
     "$.announce.dev"),
    # full NAT (docs/configuration.md, "Full NAT")
    ("fnat_addrs_empty", [(["lb", "fnat"], {"addrs": []})],
     "$.lb.fnat.addrs"),
    ("fnat_addrs_missing", [(["lb", "fnat"], {"ports": "1024-2047"})],
     "$.lb.fnat.addrs"),
    ("fnat_addr_multicast", [(["lb", "fnat"], {"addrs": ["224.0.0.5"]})],
     "$.lb.fnat.addrs[0]"),
    ("fnat_addr_duplicate", [(["lb", "fnat"], {
        "addrs": ["198.51.100.50", "198.51.100.50"]})], "$.lb.fnat.addrs[1]"),
    ("fnat_ports_reversed", [(["lb", "fnat"], {"addrs": ["198.51.100.50"],
                                               "ports": "2000-1000"})],
     "$.lb.fnat.ports"),
    ("fnat_ports_zero", [(["lb", "fnat"], {"addrs": ["198.51.100.50"],
                                           "ports": "0-1000"})],
     "$.lb.fnat.ports"),
    ("fnat_time_wait_over_an_hour", [(["lb", "fnat"], {
        "addrs": ["198.51.100.50"], "time_wait_s": 3601})],
     "$.lb.fnat.time_wait_s"),
    ("fnat_service_without_pool",
     [(["lb", "services", 0, "forward"], "fnat")],
     "$.lb.services[0].forward"),
    ("proxy_protocol_on_ipip",
     [(["lb", "services", 0, "proxy_protocol"], "v1")],
     "$.lb.services[0].proxy_protocol"),
    ("proxy_protocol_on_udp_fnat",
     [(["lb", "fnat"], {"addrs": ["198.51.100.50"]}),
      (["lb", "services", 0, "forward"], "fnat"),
      (["lb", "services", 0, "proto"], "udp"),
      (["lb", "services", 0, "proxy_protocol"], "v2")],
     "$.lb.services[0].proxy_protocol"),
    ("nat_backend_of_the_other_family",
     [(["lb", "services", 0, "forward"], "nat"),
      (["lb", "services", 0, "backends", 1, "addr"], "2001:db8:2::1")],
     "$.lb.services[0].backends[1].addr"),
    # health checks (docs/configuration.md, "Health checks")
    ("health_type_unknown", [(["lb", "services", 0, "health"],
                              {"type": "smtp"})],
     "$.lb.services[0].health.type"),
    ("health_type_missing", [(["lb", "services", 0, "health"],
                              {"interval_ms": 1000})],
     "$.lb.services[0].health.type"),
    ("health_timeout_not_below_interval",
     [(["lb", "services", 0, "health"],
       {"type": "tcp", "interval_ms": 1000, "timeout_ms": 1000})],
     "$.lb.services[0].health.timeout_ms"),
    ("health_default_timeout_over_interval",
     [(["lb", "services", 0, "health"], {"type": "tcp", "interval_ms": 500})],
     "$.lb.services[0].health.timeout_ms"),
    ("health_rise_zero", [(["lb", "services", 0, "health"],
                           {"type": "tcp", "rise": 0})],
     "$.lb.services[0].health.rise"),
    ("health_fall_zero", [(["lb", "services", 0, "health"],
                           {"type": "tcp", "fall": 0})],
     "$.lb.services[0].health.fall"),
    ("health_port_out_of_range", [(["lb", "services", 0, "health"],
                                   {"type": "tcp", "port": 65536})],
     "$.lb.services[0].health.port"),
    ("health_port_on_icmp", [(["lb", "services", 0, "health"],
                              {"type": "icmp", "port": 80})],
     "$.lb.services[0].health.port"),
    ("health_http_on_udp_service",
     [(["lb", "services", 0, "proto"], "udp"),
      (["lb", "services", 0, "health"], {"type": "http"})],
     "$.lb.services[0].health.type"),
    ("health_udp_on_tcp_service", [(["lb", "services", 0, "health"],
                                    {"type": "udp"})],
     "$.lb.services[0].health.type"),
    ("health_path_relative", [(["lb", "services", 0, "health"],
                               {"type": "http", "path": "healthz"})],
     "$.lb.services[0].health.path"),
    ("health_path_on_tcp", [(["lb", "services", 0, "health"],
                             {"type": "tcp", "path": "/healthz"})],
     "$.lb.services[0].health.path"),
    ("health_expect_status_range", [(["lb", "services", 0, "health"],
                                     {"type": "http", "expect": 99})],
     "$.lb.services[0].health.expect"),
    ("health_expect_on_tcp", [(["lb", "services", 0, "health"],
                               {"type": "tcp", "expect": "x"})],
     "$.lb.services[0].health.expect"),
    ("health_interval_too_short", [(["lb", "services", 0, "health"],
                                    {"type": "tcp", "interval_ms": 50,
                                     "timeout_ms": 20})],
     "$.lb.services[0].health.interval_ms"),
    ("health_agent_port_zero", [(["lb", "services", 0, "health"],
                                  {"type": "tcp", "agent_port": 0})],
     "$.lb.services[0].health.agent_port"),
    ("health_grace_over_an_hour", [(["lb", "services", 0, "health"],
                                    {"type": "tcp", "grace_ms": 3600001})],
     "$.lb.services[0].health.grace_ms"),
    ("health_grace_negative", [(["lb", "services", 0, "health"],
                                {"type": "tcp", "grace_ms": -1})],
     "$.lb.services[0].health.grace_ms"),
    ("health_unknown_key", [(["lb", "services", 0, "health"],
                             {"type": "tcp", "retries": 3})],
     "$.lb.services[0].health.retries"),
]


def _one_line(stderr):
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, "expected one line on stderr, got %d:\n%s" % (
        len(lines), stderr[-2000:])
    return lines[0]


@pytest.mark.parametrize("name,edits,path", BAD, ids=[b[0] for b in BAD])
def test_bad_config_refused_with_path(name, edits, path, mixed_pcap,
                                      tmp_path):
    doc = copy.deepcopy(GOOD)
    for p, v in edits:
        _set(doc, p, v)
    out = str(tmp_path / "out.pcap")
    res = replay(mixed_pcap, out, doc, timeout=60)
    assert res.rc not in (0, None), "bad config accepted: %r" % res
    line = _one_line(res.stderr)
    assert path in line, "stderr does not name %s: %r" % (path, line)


# One address, shared (docs/configuration.md): combinations that cannot
# work, refused with a message naming both fields
SHARED_PORT = {"name": "replay0", "devargs": "net_null0",
               "addr": ["198.51.100.5/24", "2001:db8:1::5/64"],
               "gateway_mac": "02:00:00:00:99:01"}
# an fnat service with backends of both families
FNAT_SVC = {"name": "app", "vip": "192.0.2.40", "port": 443, "proto": "tcp",
            "forward": "fnat", "proxy_protocol": "v2",
            "backends": [{"addr": "10.1.0.7", "port": 8443},
                         {"addr": "2001:db8:2::7", "port": 8443}]}
SHARED_BAD = [
    ("vip_is_local_addr",
     [(["lb", "services", 0, "vip"], "192.0.2.254")],
     ["$.lb.services[0].vip", "$.lb.local_addr"]),
    ("vip_is_local_addr6",
     [(["lb", "local_addr6"], "2001:db8::fe"),
      (["lb", "services", 0], {"name": "w6", "vip": "2001:db8::fe",
                               "port": 80, "proto": "tcp",
                               "forward": "nat",
                               "backends": [{"addr": "2001:db8:2::1"}]})],
     ["$.lb.services[0].vip", "$.lb.local_addr6"]),
    ("vip_is_a_ports_address",
     [(["ports"], [SHARED_PORT]),
      (["lb", "services", 0, "vip"], "198.51.100.5")],
     ["$.lb.services[0].vip", "$.ports[0].addr[0]"]),
    ("vip_is_a_ports_address_and_local_addr",
     [(["ports"], [SHARED_PORT]), (["lb", "local_addr"], "198.51.100.5"),
      (["lb", "services", 0, "vip"], "198.51.100.5")],
     ["$.lb.services[0].vip", "$.lb.local_addr"]),
    ("vip_is_a_pool_address",
     [(["lb", "fnat"], {"addrs": ["2001:db8:5::50", "198.51.100.50"]}),
      (["lb", "services", 0, "vip"], "198.51.100.50")],
     ["$.lb.services[0].vip", "$.lb.fnat.addrs[1]"]),
    ("fnat_backend_family_not_in_the_pool",
     [(["lb", "fnat"], {"addrs": ["198.51.100.50"]}),
      (["lb", "services"], GOOD["lb"]["services"] + [FNAT_SVC])],
     ["$.lb.services[1].backends[1].addr", "lb.fnat.addrs"]),
    ("fnat_ipv6_vip_on_ipv4_backends_without_an_ipv4_pool_address",
     [(["lb", "fnat"], {"addrs": ["2001:db8:5::50"]}),
      (["lb", "services"], GOOD["lb"]["services"] + [
          dict(FNAT_SVC, vip="2001:db8:ffff::40",
               backends=[{"addr": "10.1.0.7"}])])],
     ["$.lb.services[1].backends[0].addr", "lb.fnat.addrs"]),
]


@pytest.mark.parametrize("name,edits,paths", SHARED_BAD,
                         ids=[b[0] for b in SHARED_BAD])
def test_shared_address_refusals_name_both_fields(name, edits, paths,
                                                  mixed_pcap, tmp_path):
    doc = copy.deepcopy(GOOD)
    for p, v in edits:
        _set(doc, p, v)
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), doc, timeout=60)
    assert res.rc not in (0, None), "bad config accepted: %r" % res
    line = _one_line(res.stderr)
    for path in paths:
        assert path in line, "stderr does not name %s: %r" % (path, line)


def test_local_addr_shared_with_a_port_is_accepted(mixed, mixed_pcap,
                                                    tmp_path):
    doc = copy.deepcopy(GOOD)
    doc["ports"] = [SHARED_PORT]
    doc["lb"]["local_addr"] = "198.51.100.5"
    doc["lb"]["local_addr6"] = "2001:db8:1::5"
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), doc, timeout=60)
    assert res.rc == 0, res


def test_fnat_pool_shared_with_a_port_and_local_addr_is_accepted(tmp_path):
    """One address, shared: a pool address may be a routed port's own
    address and lb.local_addr at once; an fnat service mixes families
    and changes the port."""
    doc = copy.deepcopy(LIVE_GOOD)
    doc["ports"][0]["addr"] = ["198.51.100.5/24", "2001:db8:1::5/64"]
    doc["lb"]["local_addr"] = "198.51.100.5"
    doc["lb"]["fnat"] = {"addrs": ["198.51.100.5", "2001:db8:1::5",
                                   "198.51.100.50"], "ports": "10000-19999",
                         "time_wait_s": 0}
    doc["lb"]["services"].append(FNAT_SVC)
    conf = pautil.write_json(str(tmp_path / "fnat.json"), doc)
    res = _check(conf)
    assert res.rc == 0 and res.stderr == "", res
    assert "configuration valid" in res.stdout, res


def test_good_config_accepted(mixed, mixed_pcap, tmp_path):
    """The base document of the bad-config cases is itself valid."""
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), GOOD)
    pautil.check_summary(res, len(mixed))


def test_top_level_not_object(mixed_pcap, tmp_path):
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"),
                 _write(tmp_path, "[1, 2]"), timeout=60)
    assert res.rc not in (0, None), res
    assert "$" in _one_line(res.stderr)


def _write(tmp_path, text, name="raw.json"):
    p = str(tmp_path / name)
    with open(p, "w") as f:
        f.write(text)
    return p


def test_json_syntax_error_names_file_and_line(mixed_pcap, tmp_path):
    conf = _write(tmp_path, '{\n  "pipeline": {"mode": "rtc",}\n}\n',
                  "syntax.json")
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), conf, timeout=60)
    assert res.rc not in (0, None), res
    line = _one_line(res.stderr)
    assert "syntax.json" in line, line
    assert re.search(r"\b2\b", line), "line number 2 not named: %r" % line


def test_missing_config_file(mixed_pcap, tmp_path):
    conf = str(tmp_path / "no-such-config.json")
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), conf, timeout=60)
    assert res.rc not in (0, None), res
    assert "no-such-config.json" in _one_line(res.stderr)


def test_unknown_option(mixed_pcap, tmp_path):
    res = run([DAEMON, "--replay", mixed_pcap, "--replay-out",
               str(tmp_path / "out.pcap"), "-c", pautil.DEFAULT_CONF,
               "--no-such-option"], timeout=60)
    assert res.rc not in (0, None), res
    assert res.stderr.strip(), res


def test_stay_without_replay_refused():
    res = run([DAEMON, "--", "--stay", "-c", pautil.DEFAULT_CONF], timeout=60)
    assert res.rc not in (0, None), res
    assert _one_line(res.stderr), res


def test_help():
    res = run([DAEMON, "--help"], timeout=30)
    assert res.rc == 0, res
    text = res.stdout + res.stderr
    for opt in ("--config", "--rpc-socket", "--replay", "--replay-out",
                "--stay"):
        assert opt in text, "--help does not mention %s:\n%s" % (opt, text)


def test_version():
    res = run([DAEMON, "--version"], timeout=30)
    assert res.rc == 0, res
    with open(os.path.join(pautil.REPO, "meson.build")) as f:
        ver = re.search(r"version:\s*'([^']+)'", f.read()).group(1)
    assert ver in res.stdout, "version %s not printed: %r" % (ver, res)


def test_ports_section_in_replay_mode_is_tolerated(mixed, mixed_pcap,
                                                   tmp_path):
    """A full document (with ports) also replays: replay0 replaces them."""
    doc = copy.deepcopy(GOOD)
    doc["ports"] = [{"name": "p0", "devargs": "net_null0"}]
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), doc)
    pautil.check_summary(res, len(mixed))


def test_default_json_is_valid_json():
    with open(pautil.DEFAULT_CONF) as f:
        doc = json.load(f)
    assert "ports" not in doc
    assert doc["pipeline"] == {"mode": "rtc"}


def _last_line(stderr):
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines, "no reason on stderr"
    return lines[-1]


def test_lcore_unavailable(mixed_pcap, tmp_path):
    """The main lcore cannot be a worker; the reason (after EAL's own
    start-up lines) names the field."""
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"),
                 {"pipeline": {"mode": "rtc", "lcores": {"worker": [0]}}},
                 timeout=60)
    assert res.rc not in (0, None), res
    assert "$.pipeline.lcores.worker[0]" in _last_line(res.stderr), res


def test_live_mode_without_ports(tmp_path):
    conf = pautil.write_json(str(tmp_path / "noports.json"),
                             {"pipeline": {"mode": "rtc"}})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "--", "-c", conf, "-s", pautil.unique("noports", ".sock")],
              timeout=60)
    assert res.rc not in (0, None), res
    assert "$.ports" in _last_line(res.stderr), res


def test_live_mode_missing_port(tmp_path):
    conf = pautil.write_json(str(tmp_path / "missing.json"), {
        "ports": [{"name": "p0",
                   "devargs": "net_af_packet0,iface=pa-nonexist0",
                   "addr": ["198.51.100.5/24"]}]})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "-l", "0,1", "--", "-c", conf,
               "-s", pautil.unique("missing", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    assert "p0" in _last_line(res.stderr), res
    assert "peer" not in _last_line(res.stderr), res


def test_live_transparent_port_alone_on_a_wire_is_refused(tmp_path):
    """A transparent port on a wire would be its own peer: refused at load,
    before any device is touched, naming the port; a lab device is not."""
    conf = pautil.write_json(str(tmp_path / "alone.json"), {
        "ports": [{"name": "t0",
                   "devargs": "net_af_packet0,iface=pa-nonexist0"}]})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "-l", "0,1", "--", "-c", conf,
               "-s", pautil.unique("alone", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    last = _last_line(res.stderr)
    assert "$.ports[0]: transparent port 't0'" in last, res
    assert 'needs a "peer"' in last, res


def test_live_announce_without_kernel_if(tmp_path):
    """announce needs a routed port with kernel_if (the routes' device)."""
    conf = pautil.write_json(str(tmp_path / "announce.json"), {
        "ports": [{"name": "p0", "devargs": "net_null0",
                   "addr": ["198.51.100.5/24"]}],
        "announce": {"table": 100}})
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "-l", "0,1", "--", "-c", conf,
               "-s", pautil.unique("i14d-noif", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    line = _last_line(res.stderr)
    assert "$.announce" in line and "kernel_if" in line, res


def test_health_without_kernel_if_refused_in_live_mode(tmp_path):
    """Probes leave from the appliance's own address through a port's
    kernel_if: a live configuration with checks and no kernel_if is
    refused at load, naming the service's health."""
    doc = copy.deepcopy(GOOD)
    doc["ports"] = [{"name": "p0", "devargs": "net_null0",
                     "addr": ["192.0.2.254/24"]}]
    doc["lb"]["services"][0]["health"] = {"type": "tcp"}
    conf = pautil.write_json(str(tmp_path / "nokif.json"), doc)
    res = run([DAEMON, "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
               "-l", "0,1", "--", "-c", conf,
               "-s", pautil.unique("nokif", ".sock")], timeout=60)
    assert res.rc not in (0, None), res
    line = _last_line(res.stderr)
    assert "$.lb.services[0].health" in line and "kernel_if" in line, res


def test_health_accepted_in_replay_and_round_trips(mixed, mixed_pcap,
                                                   tmp_path):
    """In replay mode health checks are accepted (and do not run): the
    replay's outcome is the same; config_validate takes them too."""
    doc = copy.deepcopy(GOOD)
    doc["lb"]["services"][0]["health"] = {
        "type": "http", "path": "/healthz", "expect": 204,
        "interval_ms": 1000, "timeout_ms": 400, "rise": 1, "fall": 2}
    res = replay(mixed_pcap, str(tmp_path / "out.pcap"), doc)
    pautil.check_summary(res, len(mixed))


# ------------------------------------------------------------ --check-config

def _check(conf, *extra):
    return run([DAEMON, "--check-config", "-c", conf] + list(extra),
               timeout=30)


@pytest.mark.parametrize("name,edits,path", BAD, ids=[b[0] for b in BAD])
def test_check_config_refuses_what_the_loader_refuses_naming_the_path(
        name, edits, path, tmp_path):
    """--check-config gives the loader's verdict, exit 1 and one line
    naming the JSON path, without starting anything (as a replay
    configuration here: the base document has no ports)."""
    doc = copy.deepcopy(GOOD)
    for p, v in edits:
        _set(doc, p, v)
    conf = pautil.write_json(str(tmp_path / "bad.json"), doc)
    res = _check(conf, "--replay", str(tmp_path / "never-read.pcap"))
    assert res.rc == 1, "bad config accepted: %r" % res
    line = _one_line(res.stderr)
    assert path in line, "stderr does not name %s: %r" % (path, line)
    assert res.stdout == "", res


LIVE_GOOD = dict(copy.deepcopy(GOOD), ports=[
    {"name": "p0", "devargs": "net_af_packet0,iface=pa-nonexist0",
     "addr": ["192.0.2.254/24"], "kernel_if": "pa-kif0"}])


def test_check_config_accepts_a_live_configuration_and_touches_nothing(
        tmp_path):
    """A valid live document exits 0 with one line on stdout; the port's
    interface need not exist, no socket, TAP or DPDK runtime is made."""
    conf = pautil.write_json(str(tmp_path / "live.json"), LIVE_GOOD)
    sock = str(tmp_path / "never.sock")
    res = _check(conf, "-s", sock)
    assert res.rc == 0, res
    assert res.stderr == "", res
    assert "configuration valid" in res.stdout, res
    assert not os.path.exists(sock)
    assert not os.path.exists("/sys/class/net/pa-kif0")


def test_check_config_wants_ports_unless_replay(tmp_path):
    conf = pautil.write_json(str(tmp_path / "noports.json"), GOOD)
    res = _check(conf)
    assert res.rc == 1 and "$.ports" in _one_line(res.stderr), res
    res = _check(conf, "--replay", str(tmp_path / "never-read.pcap"))
    assert res.rc == 0, res


def test_check_config_applies_live_only_rules(tmp_path):
    """Health checks without a kernel_if pass a replay check and fail a
    live one, naming the service's health (the daemon's own rule)."""
    doc = copy.deepcopy(LIVE_GOOD)
    del doc["ports"][0]["kernel_if"]
    doc["lb"]["services"][0]["health"] = {"type": "tcp"}
    conf = pautil.write_json(str(tmp_path / "nokif.json"), doc)
    res = _check(conf)
    assert res.rc == 1, res
    line = _one_line(res.stderr)
    assert "$.lb.services[0].health" in line and "kernel_if" in line, res


def test_check_config_names_file_and_line_of_a_syntax_error(tmp_path):
    conf = _write(tmp_path, '{\n  "pipeline": {"mode": "rtc",}\n}\n',
                  "syntax.json")
    res = _check(conf)
    assert res.rc == 1, res
    line = _one_line(res.stderr)
    assert "syntax.json" in line and re.search(r"\b2\b", line), line


def test_check_config_of_a_missing_file_or_without_c(tmp_path):
    res = _check(str(tmp_path / "no-such.json"))
    assert res.rc == 1 and "no-such.json" in _one_line(res.stderr), res
    res = run([DAEMON, "--check-config"], timeout=30)
    assert res.rc == 1 and "-c" in _one_line(res.stderr), res


def test_check_config_of_an_unknown_profile(tmp_path):
    doc = copy.deepcopy(LIVE_GOOD)
    doc["ports"][0]["profile"] = "no-such-nic"
    conf = pautil.write_json(str(tmp_path / "profile.json"), doc)
    res = _check(conf)
    assert res.rc == 1 and "$.ports[0].profile" in _one_line(res.stderr), res


def test_check_config_in_help():
    res = run([DAEMON, "--help"], timeout=30)
    assert res.rc == 0 and "--check-config" in res.stdout, res
