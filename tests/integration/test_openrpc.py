# SPDX-License-Identifier: BSD-3-Clause
"""rpc.discover and docs/openrpc.json (CONTRACT section 5): the daemon's
OpenRPC document is the checked-in one, it is a valid OpenRPC 1.2.x
document (the npm meta-schema, scripts/openrpc-meta.sh), it names every
method of rpc_get_methods and docs/rpc.md, and the daemon accepts exactly
what it allows: call by call, a call built from a method's params schema
is not refused as invalid params, and a call with an unknown key, a wrong
type, an integer out of bounds, a bad enum or a string off its pattern
(at the top level and in nested objects) is refused with -32602."""

import json
import os
import re
import subprocess

import pytest

import pautil

import pktaccel

DOC = os.path.join(pautil.REPO, "docs", "openrpc.json")
RPC_MD = os.path.join(pautil.REPO, "docs", "rpc.md")
META = os.path.join(pautil.REPO, "scripts", "openrpc-meta.sh")
INVALID = -32602

CONF = {
    "pipeline": {"mode": "rtc"},
    "acl": {"default": "permit", "rules": [
        {"id": 10, "priority": 100, "src": "10.0.0.0/8", "proto": "udp",
         "dport": "53", "action": "drop"}]},
    "lb": {"local_addr": "192.0.2.254", "local_addr6": "2001:db8::fe",
           # a pool of both families: any backend of an fnat service has
           # a source address
           "fnat": {"addrs": ["198.51.100.50", "2001:db8::50"]},
           "services": [
               {"name": "web", "vip": "192.0.2.10", "port": 80,
                "proto": "tcp", "backends": [{"addr": "10.1.0.1"}]}]},
}

# Strings to try for a schema's "pattern", the first that matches is
# taken (a pattern is a shape: the value must also be what the decoder
# takes).
STRING_SAMPLES = ["t1", "192.0.2.0/24", "192.0.2.1", "02:00:00:00:00:01",
                  "0000:3b:00.0", "/", "127.0.0.1:9469", "1024-65535"]


@pytest.fixture(scope="module")
def d(module_daemons, mixed, mixed_pcap, tmp_path_factory):
    capdir = str(tmp_path_factory.mktemp("openrpc-cap"))
    dm = module_daemons(CONF, mixed_pcap, name="openrpc",
                        extra=("--capture-dir", capdir))
    dm.wait_replay_done(len(mixed))
    return dm


@pytest.fixture(scope="module")
def doc(d):
    with pktaccel.Client(d.sock, timeout=60) as c:
        return c.rpc_discover()


@pytest.fixture
def c(d):
    with pktaccel.Client(d.sock, timeout=60) as cl:
        yield cl


def by_name(doc):
    return {m["name"]: m for m in doc["methods"]}


# ---- the document --------------------------------------------------------

def test_docs_openrpc_json_is_what_rpc_discover_returns(doc):
    with open(DOC) as f:
        checked_in = json.load(f)
    assert checked_in == doc, (
        "docs/openrpc.json differs from the daemon's rpc.discover: "
        "regenerate it with scripts/openrpc-doc.sh")


def test_openrpc_doc_script_writes_the_checked_in_file(tmp_path):
    out = str(tmp_path / "openrpc.json")
    r = subprocess.run([os.path.join(pautil.REPO, "scripts",
                                     "openrpc-doc.sh"), out],
                       capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, PKTACCEL_BUILD_DIR=pautil.BUILD))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == out
    with open(out, "rb") as a, open(DOC, "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("script", ["openrpc-doc.sh", "openrpc-meta.sh"])
def test_openrpc_scripts_pass_shellcheck(script):
    import shutil
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (scripts/deps.sh installs it)")
    r = subprocess.run(["shellcheck", os.path.join(pautil.REPO, "scripts",
                                                   script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_client_package_carries_the_same_document():
    from pktaccel.client import load_openrpc
    with open(DOC) as f:
        assert load_openrpc() == json.load(f)


def test_rpc_discover_describes_every_method_of_rpc_get_methods(c, doc):
    names = c.rpc_get_methods()
    assert "rpc.discover" in names
    assert [m["name"] for m in doc["methods"]] == sorted(names)
    assert doc["openrpc"].startswith("1.2.")


def test_every_method_of_docs_rpc_md_is_described(doc):
    with open(RPC_MD) as f:
        text = f.read()
    documented = set()
    for line in text.splitlines():
        m = re.match(r"^#{3,4} (.+)$", line)
        if m:
            # a method's section: "### name" or "#### a, b"
            documented.update(n.strip() for n in m.group(1).split(",")
                              if re.fullmatch(r"[a-z_.]+", n.strip()))
    methods = set(by_name(doc))
    assert documented - methods == set(), "in docs/rpc.md, not described"
    assert methods - documented == set(), "described, not in docs/rpc.md"
    assert len(documented) > 20


def meta_schemas():
    r = subprocess.run([META], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ,
                                PKTACCEL_BUILD_DIR=pautil.BUILD))
    if r.returncode != 0:
        pytest.skip("cannot fetch the OpenRPC meta-schema from npm: %s"
                    % r.stderr.strip()[-300:])
    meta_dir = r.stdout.strip().splitlines()[-1]
    with open(os.path.join(meta_dir, "openrpc.schema.json")) as f:
        openrpc = json.load(f)
    with open(os.path.join(meta_dir, "jsonschema.schema.json")) as f:
        jsonschema_meta = json.load(f)
    return openrpc, jsonschema_meta


def test_openrpc_json_is_valid_against_the_openrpc_meta_schema():
    import jsonschema
    openrpc, js = meta_schemas()
    store = {"https://meta.json-schema.tools": js,
             "https://meta.json-schema.tools/": js}
    v = jsonschema.Draft7Validator(
        openrpc, resolver=jsonschema.RefResolver.from_schema(
            openrpc, store=store))
    with open(DOC) as f:
        doc = json.load(f)
    errors = ["%s: %s" % (list(e.absolute_path), e.message[:200])
              for e in v.iter_errors(doc)]
    assert errors == []
    # and the check is not vacuous: a broken document is refused
    doc["methods"][0]["params"] = {"not": "a list"}
    assert list(v.iter_errors(doc)) != []
    # every params schema is itself a valid JSON Schema (draft 7)
    for m in by_name(doc).values():
        jsonschema.Draft7Validator.check_schema(m["x-params-schema"])


# ---- building calls from the schemas -------------------------------------

def types_of(s):
    t = s.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    if "enum" in s:
        return {{bool: "boolean", int: "integer", str: "string",
                 float: "number"}[type(e)] for e in s["enum"]}
    for k in ("anyOf", "oneOf"):
        if k in s:
            out = set()
            for b in s[k]:
                out |= types_of(b)
            return out
    return set()


def sample(s):
    """A value that schema @s allows and the decoder takes."""
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return s["enum"][0]
    for k in ("anyOf", "oneOf"):
        if k in s and "type" not in s:
            return sample(s[k][0])
    t = types_of(s)
    if "object" in t:
        obj = {p: sample(s["properties"][p]) for p in s.get("required", [])}
        for k in ("anyOf", "oneOf"):     # "one of these keys"
            if k in s and all("required" in b for b in s[k]):
                for p in s[k][0]["required"]:
                    obj[p] = sample(s["properties"][p])
        return obj
    if "integer" in t:
        return s.get("minimum", 0)
    if "boolean" in t:
        return False
    if "array" in t:
        return [sample(s["items"])] if s.get("minItems") else []
    if "string" in t:
        if "pattern" not in s:
            return "t1"
        for v in STRING_SAMPLES:
            if re.search(s["pattern"], v):
                return v
        raise AssertionError("no sample for pattern %s" % s["pattern"])
    if "null" in t:
        return None
    return 1


WRONG_TYPES = [("boolean", True), ("object", {"wrong": 1}),
               ("array", [1]), ("string", "wrong"), ("number", 1.5)]


def mutations(s, value, where="params"):
    """(what, bad value) pairs: @value (allowed by schema @s) made into
    what @s refuses, at the top level and in nested objects."""
    t = types_of(s)
    # (params that are not an object or an array: -32600, by JSON-RPC)
    if t and where != "params":
        name, bad = next((n, b) for n, b in WRONG_TYPES if n not in t)
        yield "%s: a %s" % (where, name), bad
    if "enum" in s and all(isinstance(e, str) for e in s["enum"]):
        yield "%s: not in the enum" % where, "no-such-value"
    if "integer" in t and "enum" not in s:
        if "minimum" in s and s["minimum"] - 1 >= -(1 << 63):
            yield "%s: below minimum" % where, s["minimum"] - 1
        if "maximum" in s and s["maximum"] + 1 < (1 << 63):
            yield "%s: above maximum" % where, s["maximum"] + 1
    if "string" in t and "pattern" in s:
        yield "%s: off the pattern" % where, "#bad value#"
    if "object" in t and isinstance(value, dict):
        if s.get("additionalProperties") is False:
            yield "%s: unknown key" % where, dict(value, no_such_param=1)
        for p, ps in s.get("properties", {}).items():
            base = value.get(p, sample(ps))
            for what, bad in mutations(ps, base, "%s.%s" % (where, p)):
                yield what, dict(value, **{p: bad})
    if "array" in t and isinstance(s.get("items"), dict):
        item = sample(s["items"])
        for what, bad in mutations(s["items"], item, where + "[0]"):
            yield what, [bad]


# Methods whose valid call the test does not make: it stops the daemon.
NOT_CALLED = {"shutdown"}
# Values of the valid calls that the samples cannot get right: what
# exists (lb_backend_add looks its service up before it decodes the
# backend), and what another parameter decides (a backend is not the
# VIP).
OVERRIDES = {"lb_backend_add": {"service": "web"},
             "lb_service_add": {"vip": "192.0.2.20"}}


# Values of the configuration the daemon runs, for the parameters that
# name something of it (a schema cannot know which ports there are), and
# files: (method, parameter) or parameter -> value.
RUNNING = {"in_port": "replay0"}
# Parameters whose value only the running daemon decides: left out of
# the calls that try each optional parameter.
STATE_BOUND = {
    # the flow cache is sized at start: acl_rules_replace takes only the
    # running size
    ("acl_rules_replace", "flow_cache"),
}


def allowed(schema, value):
    import jsonschema
    v = jsonschema.Draft7Validator(
        schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return not list(v.iter_errors(value))


def variants(method, s, valid, running):
    """Calls the schema allows beside @valid: each optional property
    added, with each value of its enum, an array with one element (params
    whose schema refuses the addition, e.g. "dscp" without "action":
    "mark", are left out)."""
    for p, ps in s.get("properties", {}).items():
        if p in valid or (method, p) in STATE_BOUND:
            continue
        values = ps["enum"] if "enum" in ps else \
            [running.get((method, p), running.get(p, sample(ps)))]
        if "array" in types_of(ps) and isinstance(ps.get("items"), dict):
            values.append([sample(ps["items"])])    # one element
        for x in values:
            params = dict(valid, **{p: x})
            if allowed(s, params):
                yield params
    for p, ps in s.get("properties", {}).items():
        if p in valid and "enum" in ps:
            for x in ps["enum"][1:]:
                params = dict(valid, **{p: x})
                if allowed(s, params):
                    yield params


def call(c, method, params):
    try:
        c.call(method, params)
        return None
    except pktaccel.RpcError as e:
        return e


def test_sample_calls_cover_every_method(doc):
    # the walk below makes a call of each; none is left out silently
    for m in doc["methods"]:
        sample(m["x-params-schema"])


def checked_in_methods():
    with open(DOC) as f:
        return sorted(json.load(f)["methods"], key=lambda m: m["name"])


@pytest.mark.parametrize("method", checked_in_methods(),
                         ids=lambda m: m["name"])
def test_daemon_accepts_exactly_what_the_schema_allows(c, method, tmp_path):
    name = method["name"]
    ps = method["x-params-schema"]
    valid = dict(sample(ps), **OVERRIDES.get(name, {}))
    unbound = False
    if name not in NOT_CALLED:
        e = call(c, name, valid)
        assert e is None or e.code != INVALID, \
            "%s%s refused: %s" % (name, json.dumps(valid), e.message)
        # a subsystem that does not run in replay mode answers before
        # it decodes anything
        unbound = e is not None and e.code == -32603 and \
            "not running" in e.message
    if unbound:
        pytest.skip("%s: %s" % (name, e.message))
    assert allowed(ps, valid), valid
    if name not in NOT_CALLED:
        running = dict(RUNNING)
        running[("config_save", "path")] = str(tmp_path / "saved.json")
        for params in variants(name, ps, valid, running):
            e = call(c, name, params)
            assert e is None or e.code != INVALID, \
                "%s%s refused: %s" % (name, json.dumps(params), e.message)
    n = 0
    for what, bad in mutations(ps, valid):
        e = call(c, name, bad)
        assert e is not None, "%s accepted %s (%s)" % (
            name, json.dumps(bad)[:300], what)
        assert e.code == INVALID, "%s %s (%s): %s %s" % (
            name, json.dumps(bad)[:200], what, e.code, e.message)
        n += 1
    assert n >= 1      # at least the unknown key
