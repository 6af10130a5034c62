# SPDX-License-Identifier: BSD-3-Clause
"""ACL over JSON-RPC (docs/rpc.md) and the console (section 6):
acl_rule_add, acl_rule_delete, acl_rule_list, acl_rules_replace and their
errors, trace_packet against the reference model, config_get and stats_get
following the changes, pktaccelctl key=value and the rule table."""

import json
import subprocess

import pytest

import acl_model as am
import pautil
from pautil import CTL, PIPE4

BASE_RULES = [
    {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
     "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
    {"id": 11, "priority": 90, "src": "2001:db8::/32", "dst": "any",
     "sport": "1024-65535", "dport": "80-88", "proto": "tcp",
     "action": "permit"},
]
CONF = {"pipeline": dict(PIPE4, ring_size=256, burst=16),
        "acl": {"default": "permit", "rules": BASE_RULES}}

ACL_METHODS = ("acl_rule_add", "acl_rule_delete", "acl_rule_list",
               "acl_rules_replace", "trace_packet")


@pytest.fixture(scope="module")
def d(module_daemons, mixed, mixed_pcap):
    """One daemon for this module, its replay (the mixed traffic, which
    hits rule 10) done. Tests that change the table restore it."""
    dm = module_daemons(CONF, mixed_pcap, name="acl-rpc")
    dm.wait_replay_done(len(mixed))
    return dm


@pytest.fixture
def c(d):
    with d.client(timeout=30) as cl:
        yield cl


def restore(c, rules=BASE_RULES, default="permit", non_ip="forward"):
    r = c.call("acl_rules_replace", {"default": default, "non_ip": non_ip,
                                     "rules": rules})
    assert r == {"rules": len(rules)}, r


def listed(c):
    """acl_rule_list as {id: canonical rule} plus the raw list."""
    lst = c.call("acl_rule_list")
    assert isinstance(lst, list), lst
    for r in lst:
        assert isinstance(r.get("hits"), int) and r["hits"] >= 0, r
        assert isinstance(r.get("bytes"), int) and r["bytes"] >= 0, r
    return {r["id"]: am.norm_rule(
        {k: v for k, v in r.items() if k not in ("hits", "bytes")})
        for r in lst}, lst


def assert_table(c, rules, default=None):
    """The live table is exactly `rules`: acl_rule_list (in order),
    config_get and stats_get agree."""
    got, lst = listed(c)
    want = {r["id"]: am.norm_rule(r) for r in rules}
    assert got == want, "acl_rule_list %s\nexpected %s" % (got, want)
    assert [r["id"] for r in lst] == \
        [r["id"] for r in sorted(rules, key=am.sort_key)], lst
    cfg = c.call("config_get")
    acl = cfg.get("acl", {})
    cfg_rules = {r["id"]: am.norm_rule(r) for r in acl.get("rules", [])}
    assert cfg_rules == want, "config_get acl %s\nexpected %s" % (acl, want)
    if default is not None:
        assert acl.get("default") == default, acl
    st = c.call("stats_get")["acl"]
    assert st.get("rules") == len(rules), st


def err(resp, code):
    assert "error" in resp and "result" not in resp, resp
    assert resp["error"]["code"] == code, resp
    return resp["error"]["message"]


TRACE_KEYS = ("verdict", "acl_rule", "service", "backend")


def contract_trace(t, action=None):
    """The contract's keys of a trace_packet result. Extra keys are an
    extension; "acl_action", when present, must be the action applied."""
    assert isinstance(t, dict), t
    for k in TRACE_KEYS:
        assert k in t, "trace_packet result lacks %r: %s" % (k, t)
    if action is not None and "acl_action" in t:
        assert t["acl_action"] == action, t
    return {k: t[k] for k in TRACE_KEYS}


def trace(c, src, dst, sport=1000, dport=80, proto="udp", in_port=None,
          action=None):
    p = {"src": src, "dst": dst, "sport": sport, "dport": dport,
         "proto": proto}
    if in_port is not None:
        p["in_port"] = in_port
    return contract_trace(c.call("trace_packet", p), action)


# --------------------------------------------------------------------------

def test_methods_listed(c):
    methods = c.call("rpc_get_methods")
    for m in ACL_METHODS:
        assert m in methods, methods


def test_list_reflects_config_with_hits(c, mixed):
    assert_table(c, BASE_RULES, default="permit")
    _, lst = listed(c)
    hits = {r["id"]: r["hits"] for r in lst}
    # the mixed traffic has DNS from 10.0.0.0/8: rule 10 was hit, and its
    # hits are the acl drops (the only drop rule)
    assert hits[10] > 0, lst
    st = c.call("stats_get")
    assert st["drops"]["acl"] == hits[10], (st["drops"], lst)
    assert isinstance(st["acl"].get("default_hits"), int), st["acl"]


def test_add_then_delete(c):
    rule = {"id": 77, "priority": 5, "src": "192.0.2.0/24", "dst": "any",
            "sport": "any", "dport": 8080, "proto": "tcp", "action": "drop"}
    before = trace(c, "192.0.2.9", "198.51.100.1", dport=8080, proto="tcp")
    assert before["verdict"] == "forward" and before["acl_rule"] is None, \
        before
    assert c.call("acl_rule_add", rule) == {"id": 77}
    try:
        assert_table(c, BASE_RULES + [rule])
        # live as soon as the call has answered
        t = trace(c, "192.0.2.9", "198.51.100.1", dport=8080, proto="tcp",
                  action="drop")
        assert t == {"verdict": "drop", "acl_rule": 77, "service": None,
                     "backend": None}, t
    finally:
        assert c.call("acl_rule_delete", {"id": 77}) is True
    assert_table(c, BASE_RULES)
    t = trace(c, "192.0.2.9", "198.51.100.1", dport=8080, proto="tcp")
    assert t["verdict"] == "forward" and t["acl_rule"] is None, t


def test_hits_survive_rebuilds(c):
    """Counters of rules that stay are kept when the table is rebuilt
    (add, delete, and a replace that keeps the rule)."""
    _, lst = listed(c)
    h0 = {r["id"]: (r["hits"], r["bytes"]) for r in lst}
    assert h0[10][0] > 0
    extra = {"id": 500, "priority": 1, "proto": 47, "action": "drop"}
    c.call("acl_rule_add", extra)
    c.call("acl_rule_delete", {"id": 500})
    _, lst = listed(c)
    assert {r["id"]: (r["hits"], r["bytes"]) for r in lst} == h0, lst
    restore(c, BASE_RULES + [extra])
    restore(c)
    _, lst = listed(c)
    assert {r["id"]: (r["hits"], r["bytes"]) for r in lst} == h0, lst


def test_add_duplicate_id_exists(c):
    dup = dict(BASE_RULES[1], src="any", priority=1)
    msg = err(c.call_raw("acl_rule_add", dup), -32000)
    assert "11" in msg, msg
    assert_table(c, BASE_RULES)


def test_delete_unknown_id_not_found(c):
    err(c.call_raw("acl_rule_delete", {"id": 4242}), -32001)
    msg = err(c.call_raw("acl_rule_delete", {}), -32602)
    assert msg.startswith("params.id"), msg
    msg = err(c.call_raw("acl_rule_delete", {"id": "x"}), -32602)
    assert msg.startswith("params.id"), msg
    assert_table(c, BASE_RULES)


GOOD = {"id": 900, "priority": 1, "src": "10.0.0.0/8", "dst": "any",
        "sport": "any", "dport": "53", "proto": "udp", "action": "drop"}


def _bad(**kw):
    r = dict(GOOD)
    for k, v in kw.items():
        if v is KeyError:
            r.pop(k, None)
        else:
            r[k] = v
    return r


BAD_RULES = [
    ("prefix_len_33", _bad(src="10.0.0.1/33"), ("params.src",)),
    ("host_bits", _bad(dst="10.0.0.1/8", src="any"), ("params.dst",)),
    ("bad_address", _bad(src="10.0.0.256/32"), ("params.src",)),
    ("v6_len_129", _bad(src="2001:db8::/129"), ("params.src",)),
    ("reversed_range", _bad(dport="90-80"), ("params.dport",)),
    ("port_too_big", _bad(sport="70000"), ("params.sport",)),
    ("port_negative", _bad(sport=-1), ("params.sport",)),
    ("unknown_proto", _bad(proto="tcpx"), ("params.proto",)),
    ("proto_256", _bad(proto=256), ("params.proto",)),
    ("family_mix", _bad(src="10.0.0.0/8", dst="2001:db8::/32"),
     ("params.dst", "params.src")),
    ("missing_id", _bad(id=KeyError), ("params.id",)),
    ("id_zero", _bad(id=0), ("params.id",)),
    ("id_string", _bad(id="900"), ("params.id",)),
    ("priority_negative", _bad(priority=-1), ("params.priority",)),
    ("missing_action", _bad(action=KeyError), ("params.action",)),
    ("unknown_action", _bad(action="reject"), ("params.action",)),
    ("mark_without_dscp", _bad(action="mark"), ("params.dscp",)),
    ("dscp_64", _bad(action="mark", dscp=64), ("params.dscp",)),
    ("dscp_on_drop", _bad(dscp=10), ("params.dscp",)),
    ("police_without_burst", _bad(action="police", rate_pps=10),
     ("params.burst",)),
    ("police_rate_0", _bad(action="police", rate_pps=0, burst=5),
     ("params.rate_pps",)),
    ("unknown_key", _bad(prio=5), ("params.prio",)),
    ("unknown_in_port", _bad(in_port="wan9"), ("params.in_port",)),
]


@pytest.mark.parametrize("rule,fields", [(r, f) for _, r, f in BAD_RULES],
                         ids=[n for n, _, _ in BAD_RULES])
def test_add_invalid_rule_names_field(c, rule, fields):
    msg = err(c.call_raw("acl_rule_add", rule), -32602)
    assert any(msg.startswith(f) for f in fields), \
        "message %r does not start with %s" % (msg, " or ".join(fields))
    assert_table(c, BASE_RULES)


def test_add_params_not_an_object(c):
    for p in ([GOOD], None):
        resp = c.call_raw("acl_rule_add", p)
        err(resp, -32602)
    assert_table(c, BASE_RULES)


def test_replace_is_atomic(c):
    """A set with one invalid rule (or a duplicate id, or a bad default)
    is refused as a whole: the old table, default and counters stay."""
    _, before = listed(c)
    rules = am.gen_rules(31, 40)
    bad = list(rules)
    bad[5] = dict(bad[5], dport="90-80")
    msg = err(c.call_raw("acl_rules_replace",
                         {"default": "drop", "rules": bad}), -32602)
    assert msg.startswith("params.rules[5].dport"), msg
    bad = list(rules)
    bad[7] = dict(bad[7], src="10.0.0.1/33", dst="any")
    msg = err(c.call_raw("acl_rules_replace",
                         {"default": "drop", "rules": bad}), -32602)
    assert msg.startswith("params.rules[7].src"), msg
    dup = rules + [dict(rules[3])]
    resp = c.call_raw("acl_rules_replace", {"default": "drop", "rules": dup})
    assert "error" in resp and resp["error"]["code"] in (-32602, -32000), resp
    msg = err(c.call_raw("acl_rules_replace",
                         {"default": "reject", "rules": rules}), -32602)
    assert msg.startswith("params.default"), msg
    msg = err(c.call_raw("acl_rules_replace",
                         {"default": "drop", "rules": {"id": 1}}), -32602)
    assert msg.startswith("params.rules"), msg
    _, after = listed(c)
    assert after == before, "table changed by a refused replace"
    assert_table(c, BASE_RULES, default="permit")


def test_replace_keeps_the_flow_cache_size(c):
    """flow_cache is fixed at start: a replace may repeat the running
    value (config_get's acl object replays as it is), not change it."""
    st = c.call("stats_get")["acl"]
    assert st["flow_cache_entries"] == 32768, st
    # the module's replay went through the cache: its repeated flows hit
    assert st["flow_cache_hits"] > 0 and st["flow_cache_misses"] > 0, st
    assert st["flow_cache_pauses"] == 0, st
    msg = err(c.call_raw("acl_rules_replace",
                         {"rules": [], "flow_cache": 1024}), -32602)
    assert msg == ("params.flow_cache: the flow cache is sized at start "
                   "(32768): restart the daemon to change it"), msg
    msg = err(c.call_raw("acl_rules_replace",
                         {"rules": [], "flow_cache": 7}), -32602)
    assert msg.startswith("params.flow_cache: expected 0 (no flow cache) "
                          "or 256..4194304 entries, got 7"), msg
    assert_table(c, BASE_RULES, default="permit")
    r = c.call("acl_rules_replace", {"rules": BASE_RULES,
                                     "flow_cache": 32768})
    assert r == {"rules": len(BASE_RULES)}, r
    assert "flow_cache" not in c.call("config_get")["acl"]


def test_replace_whole_table(c):
    rules = am.gen_rules(32, 300, actions=("permit", "drop", "mark"))
    try:
        r = c.call("acl_rules_replace", {"default": "drop", "non_ip": "drop",
                                         "rules": rules})
        assert r == {"rules": 300}, r
        assert_table(c, rules, default="drop")
        acl = c.call("config_get")["acl"]
        assert acl.get("non_ip") == "drop", acl
        assert c.call("stats_get")["acl"]["rules"] == 300
        _, lst = listed(c)
        # fresh rules start from zero (the replay is over)
        assert all(x["hits"] == 0 for x in lst if x["id"] not in (10, 11))
        r = c.call("acl_rules_replace", {"default": "permit", "rules": []})
        assert r == {"rules": 0}, r
        assert_table(c, [], default="permit")
        t = trace(c, "10.1.1.1", "10.2.2.2", dport=53)
        assert t["verdict"] == "forward" and t["acl_rule"] is None, t
    finally:
        restore(c)
    assert_table(c, BASE_RULES, default="permit")
    assert c.call("config_get")["acl"].get("non_ip") == "forward"


def _traceable(pkts):
    """Descriptions trace_packet can express: IP, and not a non-first
    fragment (trace gives ports for TCP/UDP/SCTP)."""
    return [p.desc for p in pkts
            if not p.desc.non_ip and
            (p.desc.has_ports or p.desc.proto not in am.PORT_PROTOS)]


@pytest.mark.parametrize("default,n_rules", [("permit", 300),
                                             ("drop", 1500)])
def test_trace_packet_agrees_with_model(c, default, n_rules):
    seed = 41 if default == "permit" else 42
    rules = am.gen_rules(seed, n_rules, actions=("permit", "drop", "mark"))
    descs = _traceable(am.gen_packets(rules, 450, seed + 100))[:400]
    assert len(descs) >= 300
    model = am.AclModel({"default": default, "rules": rules})
    try:
        restore(c, rules, default=default)
        bad = []
        for p in descs:
            v = model.classify(p)
            got = contract_trace(c.call("trace_packet", am.trace_params(p)),
                                 v.action["action"])
            want = {"verdict": v.verdict, "acl_rule": v.rule_id,
                    "service": None, "backend": None}
            if got != want:
                bad.append("%s: got %s, model %s" % (tuple(p), got, want))
        assert not bad, "%d of %d traces disagree:\n%s" % (
            len(bad), len(descs), "\n".join(bad[:15]))
    finally:
        restore(c)


def test_incremental_changes_agree_with_model(c):
    """A table loaded in part at once and then changed rule by rule
    (random order, deletions of old and new rules, priority ties between
    old and new rules) classifies like the same table loaded at once."""
    import random
    rng = random.Random(43)
    rules = am.gen_rules(43, 110, actions=("permit", "drop"))
    extra = am.gen_rules(44, 20, ids=list(range(3000000, 3000020)))
    base, added = rules[:70], rules[70:]
    gone = rng.sample(base, 10)
    try:
        restore(c, base, default="drop")
        order = added + extra
        rng.shuffle(order)
        for r in order:
            assert c.call("acl_rule_add", r) == {"id": r["id"]}
        dels = extra + gone
        rng.shuffle(dels)
        for r in dels:
            assert c.call("acl_rule_delete", {"id": r["id"]}) is True
        final = [r for r in rules if r not in gone]
        assert_table(c, final, default="drop")
        model = am.AclModel({"default": "drop", "rules": final})
        descs = _traceable(am.gen_packets(rules + extra, 400, 45))
        bad = []
        for p in descs:
            v = model.classify(p)
            got = contract_trace(c.call("trace_packet", am.trace_params(p)))
            if (got["verdict"], got["acl_rule"]) != (v.verdict, v.rule_id):
                bad.append("%s: got %s, model %s %s" % (
                    tuple(p), got, v.verdict, v.rule_id))
        assert not bad, "%d of %d traces disagree:\n%s" % (
            len(bad), len(descs), "\n".join(bad[:15]))
    finally:
        restore(c)


def test_trace_portless_protocols_match_ports_as_any(c):
    """ICMP, ICMPv6 and other protocols without ports match port fields as
    "any" whatever ports the trace request names; TCP/UDP/SCTP do not."""
    rules = [{"id": 1, "priority": 10, "dst": "192.0.2.0/24",
              "dport": "80", "action": "drop"},
             {"id": 2, "priority": 10, "dst": "2001:db8:2::/48",
              "sport": "1-10", "dport": "80", "action": "drop"}]
    try:
        restore(c, rules)
        for proto, hit in (("icmp", True), (47, True), (50, True),
                           ("udp", False), ("tcp", False), (132, False)):
            t = trace(c, "198.51.100.1", "192.0.2.1", sport=7, dport=9999,
                      proto=proto)
            want = ("drop", 1) if hit else ("forward", None)
            assert (t["verdict"], t["acl_rule"]) == want, (proto, t)
        for proto, hit in (("icmpv6", True), (47, True), ("udp", False)):
            t = trace(c, "2001:db8:1::1", "2001:db8:2::1", sport=99,
                      dport=9999, proto=proto)
            want = ("drop", 2) if hit else ("forward", None)
            assert (t["verdict"], t["acl_rule"]) == want, (proto, t)
        t = trace(c, "198.51.100.1", "192.0.2.1", sport=7, dport=80,
                  proto=132)
        assert (t["verdict"], t["acl_rule"]) == ("drop", 1), t
    finally:
        restore(c)


def test_trace_packet_in_port(c):
    rules = [{"id": 1, "priority": 9, "dst": "192.0.2.0/24",
              "in_port": "replay0", "action": "drop"},
             {"id": 2, "priority": 1, "dst": "192.0.2.0/24",
              "action": "permit"}]
    try:
        restore(c, rules)
        t = trace(c, "198.51.100.1", "192.0.2.1", in_port="replay0")
        assert (t["verdict"], t["acl_rule"]) == ("drop", 1), t
        msg = err(c.call_raw("trace_packet", {
            "src": "198.51.100.1", "dst": "192.0.2.1", "sport": 1,
            "dport": 2, "proto": "udp", "in_port": "wan9"}), -32602)
        assert "in_port" in msg, msg
    finally:
        restore(c)


@pytest.mark.parametrize("params,field", [
    ({"src": "10.0.0.256", "dst": "10.0.0.1", "sport": 1, "dport": 2,
      "proto": "udp"}, "src"),
    ({"src": "10.0.0.1", "dst": "2001:db8::1", "sport": 1, "dport": 2,
      "proto": "udp"}, "dst"),
    ({"src": "10.0.0.1", "sport": 1, "dport": 2, "proto": "udp"}, "dst"),
    ({"src": "10.0.0.1", "dst": "10.0.0.2", "sport": 70000, "dport": 2,
      "proto": "udp"}, "sport"),
    ({"src": "10.0.0.1", "dst": "10.0.0.2", "sport": 1, "dport": 2,
      "proto": "bogus"}, "proto"),
], ids=["bad_src", "family_mix", "missing_dst", "bad_sport", "bad_proto"])
def test_trace_packet_invalid_params(c, params, field):
    msg = err(c.call_raw("trace_packet", params), -32602)
    assert "params" in msg and field in msg, msg


def test_stats_acl_counters(c):
    st = c.call("stats_get")["acl"]
    for k in ("rules", "default_hits"):
        assert isinstance(st.get(k), int), st
    assert st["rules"] == len(BASE_RULES)


# --------------------------------------------------------------------------
# console

def ctl(*args, timeout=30):
    r = subprocess.run([CTL] + list(args), capture_output=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return pautil.Result([CTL] + list(args), r.returncode,
                         r.stdout.decode("utf-8", "replace"),
                         r.stderr.decode("utf-8", "replace"))


def _rows(stdout):
    """Table lines of pktaccelctl output by their first token (the id)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    return lines[0], {ln.split()[0]: ln for ln in lines[1:]}


@pytest.mark.needs_ctl
def test_console_add_list_delete(d, c):
    r = ctl("-s", d.sock, "acl_rule_add", "id=12", "priority=5",
            "src=10.0.0.0/8", "dst=any", "sport=any", "dport=53",
            "proto=udp", "action=drop")
    assert r.rc == 0, r
    extra = [{"id": 12, "priority": 5, "src": "10.0.0.0/8", "dport": "53",
              "proto": "udp", "action": "drop"},
             {"id": 13, "priority": 3, "dst": "2001:db8::/32",
              "dport": "80-88", "proto": "tcp", "action": "mark",
              "dscp": 46},
             {"id": 14, "proto": "icmp", "action": "police",
              "rate_pps": 1000, "burst": 100, "in_port": "replay0"},
             {"id": 15, "src": "2001:db8::1", "proto": 47,
              "action": "drop"}]
    try:
        r = ctl("-s", d.sock, "acl_rule_add", "id=13", "priority=3",
                "dst=2001:db8::/32", 'dport="80-88"', "proto=tcp",
                "action=mark", "dscp=46")
        assert r.rc == 0, r
        r = ctl("-s", d.sock, "acl_rule_add", "id=14", "proto=icmp",
                "action=police", "rate_pps=1000", "burst=100",
                "in_port=replay0")
        assert r.rc == 0, r
        r = ctl("-s", d.sock, "acl_rule_add", "id=15", "src=2001:db8::1",
                "proto=47", "action=drop")
        assert r.rc == 0, r
        assert_table(c, BASE_RULES + extra)
        r = ctl("-s", d.sock, "acl_rule_list")
        assert r.rc == 0, r
        head, rows = _rows(r.stdout)
        cols = head.lower().split()
        for col in ("id", "priority", "match", "action", "hits"):
            assert col in cols, "column %r missing from %r\n%s" % (
                col, head, r.stdout)
        assert cols.index("id") < cols.index("priority") < \
            cols.index("match") < cols.index("action") < cols.index("hits")
        assert list(rows) == ["10", "11", "12", "13", "14", "15"], r.stdout
        for rid, texts in (
                ("12", ("udp 10.0.0.0/8:any -> any:53", "drop")),
                ("11", ("tcp [2001:db8::/32]:1024-65535 -> any:80-88",
                        "permit")),
                ("13", ("tcp any -> [2001:db8::/32]:80-88", "mark dscp 46")),
                ("14", ("icmp any -> any in replay0", "police 1000pps/100")),
                ("15", ("proto 47 [2001:db8::1]:any -> any", "drop"))):
            for t in texts:
                assert t in rows[rid], "%r not in the row of rule %s:\n%s" % (
                    t, rid, r.stdout)
        r = ctl("-s", d.sock, "-j", "acl_rule_list")
        assert r.rc == 0, r
        assert [x["id"] for x in json.loads(r.stdout)] == [10, 11, 12, 13,
                                                          14, 15]
        # bad value: exit 1, the field named on stderr
        r = ctl("-s", d.sock, "acl_rule_add", "id=16", "src=10.0.0.1/33",
                "action=drop")
        assert r.rc == 1 and "params.src" in r.stderr, r
        r = ctl("-s", d.sock, "acl_rule_add", "id=12", "action=drop")
        assert r.rc == 1 and r.stderr.strip(), r
    finally:
        for rid in (13, 14, 15):
            ctl("-s", d.sock, "acl_rule_delete", "id=%d" % rid)
        r = ctl("-s", d.sock, "acl_rule_delete", "id=12")
    assert r.rc == 0, r
    assert_table(c, BASE_RULES)
    r = ctl("-s", d.sock, "acl_rule_delete", "id=12")
    assert r.rc == 1 and r.stderr.strip(), r


@pytest.mark.needs_ctl
def test_console_trace_and_replace(d, c):
    r = ctl("-s", d.sock, "-j", "trace_packet", "src=10.1.2.3",
            "dst=198.51.100.53", "sport=5353", "dport=53", "proto=udp")
    assert r.rc == 0, r
    assert contract_trace(json.loads(r.stdout), "drop") == {
        "verdict": "drop", "acl_rule": 10,
                                    "service": None, "backend": None}
    r = ctl("-s", d.sock, "acl_rules_replace",
            json.dumps({"default": "permit", "rules": []}))
    assert r.rc == 0, r
    r = ctl("-s", d.sock, "acl_rule_list")
    assert r.rc == 0 and r.stdout.strip() == "(empty)", r
    doc = json.dumps({"default": "permit", "rules": BASE_RULES})
    r = ctl("-s", d.sock, "acl_rules_replace", doc)
    assert r.rc == 0, r
    assert_table(c, BASE_RULES)
