# SPDX-License-Identifier: BSD-3-Clause
"""pktaccel.Client: the daemon's JSON-RPC API as Python methods.

    import pktaccel

    with pktaccel.Client("/run/pktaccel/pktaccel.sock") as c:
        c.stats_get()
        c.acl_rule_add(id=10, priority=100, src="10.0.0.0/8",
                       dport="53", proto="udp", action="drop")
        c.acl_rule_delete(id=10)
        c.call("lb_service_list")            # any method, params as a dict

A JSON-RPC error raises pktaccel.RpcError (.code, .message). Every method
of the API is a method of the class, taking the method's parameters as
keywords: they come from the API's OpenRPC description (the daemon's
`rpc.discover`, docs/openrpc.json, shipped in this package), so a method
of a newer daemon that this package does not know yet is found by asking
the daemon (rpc_get_methods) on first use. A method's name with a dot
("rpc.discover") becomes an underscore (c.rpc_discover()).
"""

import inspect
import json
import os

from .rpc import RpcClient

DEFAULT_SOCKET = "/run/pktaccel/pktaccel.sock"

_HERE = os.path.dirname(os.path.abspath(__file__))


def load_openrpc():
    """The OpenRPC document shipped with the package (a dict), or None."""
    try:
        with open(os.path.join(_HERE, "openrpc.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def py_name(method):
    """The Python name of an RPC method ("rpc.discover" -> "rpc_discover")."""
    return method.replace(".", "_")


def _describe(m):
    """Docstring of a method from its OpenRPC method object."""
    lines = [m.get("summary") or m.get("description") or m["name"], ""]
    for p in m.get("params", []):
        sch = p.get("schema", {})
        kind = sch.get("type", "")
        if isinstance(kind, list):
            kind = "|".join(kind)
        if "enum" in sch:
            kind = " | ".join(json.dumps(e) for e in sch["enum"])
        elif "minimum" in sch and "maximum" in sch:
            kind += " %d..%d" % (sch["minimum"], sch["maximum"])
        lines.append("%s%s: %s%s" % (p["name"],
                                     "" if p.get("required") else "?",
                                     kind,
                                     (" -- " + sch["description"])
                                     if sch.get("description") else ""))
    sch = (m.get("result") or {}).get("schema") or {}
    if sch:
        if lines[-1]:
            lines.append("")
        kind = sch.get("type", "")
        if "const" in sch:
            kind = json.dumps(sch["const"])
        if isinstance(kind, list):
            kind = "|".join(kind)
        lines.append("returns: %s%s" % (kind, (" -- " + sch["description"])
                                        if sch.get("description") else ""))
    return "\n".join(lines).rstrip()


def _make_method(name, params=(), required=(), doc=None):
    """A bound-able function calling RPC @name with its keywords."""

    def method(self, **params):
        return self.call(name, params if params else None)

    method.__name__ = py_name(name)
    method.__qualname__ = "Client." + py_name(name)
    method.__doc__ = doc or name
    sig = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    for p in params:
        if not p.isidentifier():
            continue
        sig.append(inspect.Parameter(
            p, inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if p in required else None))
    method.__signature__ = inspect.Signature(sig)
    return method


class Client(RpcClient):
    """A connection to the daemon's RPC socket with a method per RPC.

    Client(socket_path=DEFAULT_SOCKET, timeout=10.0): connects at once
    (OSError when the daemon is not there). c.call(method, params) sends
    any method with params (a dict, a list or None) and returns its
    result; c.<method>(**params) does the same with keywords. A
    JSON-RPC error raises pktaccel.RpcError with .code and .message.
    Also a context manager (closes the connection)."""

    _known = set()          # the RPC names the class has methods for

    def __init__(self, socket_path=DEFAULT_SOCKET, timeout=10.0,
                 compact=False):
        super().__init__(socket_path, timeout, compact)
        self._daemon_methods = None

    def methods(self):
        """The daemon's methods (rpc_get_methods)."""
        return self.call("rpc_get_methods")

    def discover(self):
        """The daemon's OpenRPC document (rpc.discover)."""
        return self.call("rpc.discover")

    def __getattr__(self, attr):
        # Only for names the class does not have: a method of a newer
        # daemon, found by asking it once.
        if attr.startswith("_"):
            raise AttributeError(attr)
        if self._daemon_methods is None:
            self._daemon_methods = {py_name(n): n for n in self.methods()}
        name = self._daemon_methods.get(attr)
        if name is None:
            raise AttributeError("the daemon has no method %r" % attr)
        return _make_method(name).__get__(self, type(self))


def _add_methods(cls, doc):
    for m in (doc or {}).get("methods", []):
        name = m["name"]
        params = [p["name"] for p in m.get("params", [])]
        required = [p["name"] for p in m.get("params", [])
                    if p.get("required")]
        setattr(cls, py_name(name),
                _make_method(name, params, required, _describe(m)))
        cls._known.add(name)


_add_methods(Client, load_openrpc())
