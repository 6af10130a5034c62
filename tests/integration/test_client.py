# SPDX-License-Identifier: BSD-3-Clause
"""The Python client package (tools/pylib, CONTRACT section 1): it installs
with pip offline, and pktaccel.Client has a method per RPC taking keyword
parameters, c.call(method, params), and pktaccel.RpcError with .code and
.message."""

import contextlib
import inspect
import io
import json
import os
import re
import subprocess
import textwrap

import pytest

import pautil
from pautil import PIPE4

import pktaccel
from pktaccel.client import load_openrpc, py_name

CONF = {"pipeline": dict(PIPE4, ring_size=256, burst=16),
        "acl": {"default": "permit", "rules": [
            {"id": 10, "priority": 100, "src": "10.0.0.0/8",
             "proto": "udp", "dport": "53", "action": "drop"}]},
        "lb": {"local_addr": "192.0.2.254", "services": []}}
PYLIB = os.path.join(pautil.REPO, "tools", "pylib")


@pytest.fixture(scope="module")
def d(module_daemons, mixed, mixed_pcap):
    dm = module_daemons(CONF, mixed_pcap, name="client")
    dm.wait_replay_done(len(mixed))
    return dm


@pytest.fixture
def c(d):
    with pktaccel.Client(d.sock, timeout=30) as cl:
        yield cl


def test_client_has_a_method_per_rpc_of_the_daemon(c):
    for name in c.call("rpc_get_methods"):
        assert callable(getattr(pktaccel.Client, py_name(name), None)), name


def test_client_methods_take_the_documented_params_as_keywords():
    doc = load_openrpc()
    assert doc is not None, "pktaccel/openrpc.json missing from the package"
    for m in doc["methods"]:
        sig = inspect.signature(getattr(pktaccel.Client, py_name(m["name"])))
        kw = {n for n, p in sig.parameters.items()
              if p.kind == inspect.Parameter.KEYWORD_ONLY}
        assert kw == {p["name"] for p in m["params"]}, m["name"]


def test_client_calls_with_keywords_and_raises_rpc_error(c):
    assert c.stats_get()["rx_packets"] > 0
    assert c.acl_rule_add(id=77, priority=5, src="192.0.2.0/24",
                          action="drop") == {"id": 77}
    assert 77 in [r["id"] for r in c.acl_rule_list()]
    assert c.acl_rule_delete(id=77) is True
    with pytest.raises(pktaccel.RpcError) as e:
        c.acl_rule_delete(id=77)
    assert e.value.code == -32001, e.value.resp
    assert "77" in e.value.message
    with pytest.raises(pktaccel.RpcError) as e:
        c.acl_rule_delete(id="x")
    assert e.value.code == -32602
    assert e.value.message.startswith("params.id"), e.value.message
    # any method by name, params as a dict
    assert c.call("acl_rule_list") == c.acl_rule_list()
    with pytest.raises(pktaccel.RpcError) as e:
        c.call("no_such_method", {})
    assert e.value.code == -32601


def test_client_method_with_a_dot_is_underscored(c):
    assert c.rpc_discover()["openrpc"].startswith("1.2.")


def test_client_finds_a_method_the_package_does_not_know(c):
    # what Python does for an attribute the class lacks (a method of a
    # newer daemon): looked up in the daemon's rpc_get_methods
    assert c.__getattr__("neigh_list")() == c.neigh_list()
    with pytest.raises(AttributeError):
        c.__getattr__("no_such_method")


def test_pip_installs_the_package_offline_into_a_venv(tmp_path, d):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv",
                    "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    py = str(venv / "bin" / "python")
    build = tmp_path / "src"
    # pip builds in place: build a copy, so the tree stays clean
    subprocess.run(["cp", "-rL", PYLIB, str(build)], check=True)
    r = subprocess.run([py, "-m", "pip", "install", "--no-index",
                        "--no-build-isolation", str(build)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    script = textwrap.dedent("""
        import json, sys, pktaccel
        assert "site-packages" in pktaccel.__file__, pktaccel.__file__
        c = pktaccel.Client(sys.argv[1])
        out = {"rx": c.stats_get()["rx_packets"],
               "methods": sorted(c.rpc_get_methods())}
        try:
            c.acl_rule_delete(id=5)
        except pktaccel.RpcError as e:
            out["code"], out["message"] = e.code, e.message
        print(json.dumps(out))
    """)
    r = subprocess.run([py, "-c", script, d.sock], capture_output=True,
                       text=True, timeout=60, cwd=str(tmp_path),
                       env={"PATH": os.environ.get("PATH", "/usr/bin")})
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["rx"] > 0
    assert "rpc.discover" in out["methods"]
    assert out["code"] == -32001 and "5" in out["message"]


def test_docs_client_md_example_runs(d):
    with open(os.path.join(pautil.REPO, "docs", "client.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks
    code = blocks[0].replace('"/run/pktaccel/pktaccel.sock"', repr(d.sock))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/client.md", "exec"), {})
    assert "-32001 no rule with id 5" in out.getvalue(), out.getvalue()


def test_method_help_shows_the_params_and_their_types():
    doc = pktaccel.Client.acl_rule_delete.__doc__
    assert "delete the ACL rule" in doc and "id: integer" in doc, doc
