# SPDX-License-Identifier: BSD-3-Clause
"""Service "health" over RPC, in a replay --stay daemon (where checks are
accepted but do not run: a replay's outcome depends on its packets only):
lb_service_add with checks (grace_ms too), their defaults in config_get,
config_save and config_validate round trips, errors naming the parameter,
every backend's health "unknown", lb_health_get not running. The checks
themselves run in the one-armed lab: test_health_lab.py."""

import json

import pautil

SVC = {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "forward": "ipip",
       "backends": [{"addr": "10.1.0.1"}, {"addr": "10.1.0.2"}]}
CONF = {"pipeline": dict(pautil.RTC1),
        "lb": {"local_addr": "192.0.2.254", "services": []}}


def test_health_over_rpc_round_trips(daemon_factory, mixed, mixed_pcap,
                                     tmp_path):
    d = daemon_factory(CONF, mixed_pcap)
    d.wait_replay_done(len(mixed))
    c = d.client()
    svc = dict(SVC, health={"type": "http", "path": "/healthz"})
    assert c.call("lb_service_add", svc) == {"name": "web"}
    got = c.call("config_get")["lb"]["services"][0]["health"]
    assert got == {"type": "http", "path": "/healthz", "expect": 200,
                   "interval_ms": 2000, "timeout_ms": 1000, "rise": 2,
                   "fall": 3}, got
    lst = c.call("lb_service_list")[0]
    assert lst["health"] == got and lst["panic"] is False, lst
    assert [b["health"] for b in lst["backends"]] == ["unknown"] * 2, lst
    assert len(lst["table_hash"]) == 16, lst
    # udp with "expect", a port of its own
    udp = {"name": "dns", "vip": "192.0.2.10", "port": 53, "proto": "udp",
           "forward": "ipip", "backends": [{"addr": "10.1.0.3"}],
           "health": {"type": "udp", "expect": "pong", "port": 5353,
                      "interval_ms": 500, "timeout_ms": 200, "rise": 1,
                      "fall": 1, "agent_port": 5555, "grace_ms": 30000}}
    assert c.call("lb_service_add", udp) == {"name": "dns"}
    doc = c.call("config_get")
    assert doc["lb"]["services"][1]["health"] == udp["health"], doc
    assert c.call("config_validate", doc) is True
    path = str(tmp_path / "saved.json")
    assert c.call("config_save", {"path": path}) is True
    with open(path) as f:
        saved = json.load(f)
    assert [s.get("health") for s in saved["lb"]["services"]] == \
        [got, udp["health"]], saved
    # errors name the parameter
    for health, where in (
            ({"type": "tcp", "timeout_ms": 3000}, "params.health.timeout_ms"),
            ({"type": "tcp", "rise": 0}, "params.health.rise"),
            ({"type": "tcp", "grace_ms": 3600001}, "params.health.grace_ms"),
            ({"type": "udp"}, "params.health.type"),
            ({"type": "ping"}, "params.health.type")):
        r = c.call_raw("lb_service_add", dict(SVC, name="bad",
                                              vip="192.0.2.11",
                                              health=health))
        assert r["error"]["code"] == -32602, r
        assert r["error"]["message"].startswith(where), r
    r = c.call_raw("lb_health_get")
    assert r["error"]["code"] == -32603 and \
        "not running" in r["error"]["message"], r
    c.close()
