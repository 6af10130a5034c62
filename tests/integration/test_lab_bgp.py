# SPDX-License-Identifier: BSD-3-Clause
"""The BGP lab (scripts/lab-netns.sh up --bgp, docs/scale-out.md): BIRD 2
in the router and in each appliance slot; each appliance announces its
VIPs (IPv4 and IPv6) from the host routes pktaccel keeps in kernel table
100 ("announce"), over BGP with BFD, through its own exception path
(kernel_if); the router's BIRD merges equal announcements into ECMP
routes. No static route to the VIPs anywhere.

- the BIRD configurations printed in docs/scale-out.md are the ones the
  script writes;
- two appliances announce: the router has a two-nexthop route to each
  VIP; traffic (IPv4 and IPv6) crosses both; health_set draining on one
  withdraws it from the router and keeps its flows going; kill -9 of one
  makes the router drop it (BFD, well before the BGP hold time); a
  restart brings it back; SIGTERM withdraws before the appliance stops;
- the same flows reach the same backends through either appliance, and
  behind the BGP ECMP route each connection crosses exactly one;
- a planned drain (withdraw, wait, stop) moves the open TCP connections
  and UDP flows of the drained appliance to the other with their
  backends: none breaks;
- the one-armed topology with two appliance slots: the same ECMP routes
  over the bridge.

Root, network namespaces and BIRD 2 needed; skipped with the reason
otherwise. Events, not timings, bound every wait (generous deadlines:
the CI machine has 2 CPUs)."""

import os
import re
import time

import pytest

import labutil
from labutil import Lab, sh

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(REPO, "docs", "scale-out.md")
STATIC_NEIGH = os.environ.get("PA_LAB_STATIC_NEIGH") == "1"


def usable():
    why = labutil.namespaces_usable()
    if why is None:
        why = labutil.bird_usable()
    return why


@pytest.fixture(scope="module")
def lab():
    why = usable()
    if why is not None:
        pytest.skip(why)
    labutil.reap_stale_labs()
    lb = Lab("b%d" % os.getpid(), STATIC_NEIGH, bgp=True)
    try:
        lb.up()
        yield lb
    finally:
        lb.down()


@pytest.fixture
def apps(lab, tmp_path):
    """apps(k) starts appliance k; every one still running is stopped at
    the end (exit status 0) and the router must then have no route to the
    VIPs (they were withdrawn)."""
    started = []

    def start(k):
        d = lab.start_app(k, tmp_path)
        started.append(d)
        return d

    yield start
    errors = []
    for d in started:
        if d.alive():
            rc = d.stop(timeout=60)
            if rc != 0:
                errors.append("appliance %d exited %s\n%s"
                              % (d.k, rc, d.describe()))
    lab.forget_sockets()
    assert not errors, "\n".join(errors)
    lab.wait_routes(lab.fleet_routes([]), timeout=60)


def failures(res, limit=10):
    bad = [c for c in res["conns"] if c["error"] is not None]
    return "%d of %d failed, e.g. %s" % (len(bad), len(res["conns"]),
                                        bad[:limit])


def flows_created(d):
    return d.call("stats_get")["lb"]["flows_created"]


def tracer(d):
    c = d.client(timeout=20)

    def trace(src, sport, dst, dport, proto="tcp"):
        params = {"src": src, "dst": dst, "sport": sport, "dport": dport,
                  "proto": proto, "in_port": "wan"}
        for _ in range(40):
            r = c.call_raw("trace_packet", params)
            if "error" not in r or r["error"]["code"] != -32002:
                break
            time.sleep(0.05)
        assert "error" not in r, "trace_packet %s: %s" % (params, r)
        return r["result"]
    trace.close = c.close
    return trace


def check_loss(pr, what):
    """As test_lab.check_loss: the change itself loses nothing; a loaded
    2-CPU machine may still cost a datagram here and there (bound 2%);
    each flow is answered by one backend."""
    bound = max(4, pr["sent"] // 50)
    assert pr["lost"] <= bound, "%s: %d of %d datagrams lost (bound %d): " \
        "%s" % (what, pr["lost"], pr["sent"], bound,
                [f for f in pr["flows"] if f["lost"]])
    for f in pr["flows"]:
        assert len(f["backends"]) <= 1, "%s: flow answered by several " \
            "backends: %s" % (what, f)


def rtr_protocols(lab):
    """{name: info} of the router's BGP sessions (birdc show protocols)."""
    out = {}
    for ln in lab.birdc("rtr", "show", "protocols").splitlines():
        m = re.match(r"(app\d_[46])\s+BGP\s+\S+\s+\S+\s+\S+\s+(.*)", ln)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


# ------------------------------------------------------------------ configs

def doc_blocks():
    """The fenced blocks of docs/scale-out.md, by their first line."""
    with open(DOC) as f:
        text = f.read()
    return {b.split("\n", 1)[0]: b for b in
            re.findall(r"```\n(.*?)```", text, re.S)}


@pytest.mark.parametrize("where", ["rtr", "app1"])
def test_bgp_doc_shows_the_bird_configs_the_lab_runs(where):
    """docs/scale-out.md prints the BIRD configurations of `up --bgp`
    (two-armed, two slots, BFD on) exactly as lab-netns.sh writes them,
    and BIRD accepts them."""
    r = sh([labutil.LAB_SH, "bird-conf", where, "--name", "docnolab"],
           check=True)
    conf = r.stdout.decode()
    first = conf.split("\n", 1)[0]
    blocks = doc_blocks()
    assert first in blocks, "docs/scale-out.md has no block starting " \
        "with %r" % first
    assert blocks[first] == conf, "docs/scale-out.md's %s block differs " \
        "from `scripts/lab-netns.sh bird-conf %s`" % (where, where)
    if labutil.bird_usable() is None:
        path = "/tmp/pa-bird-%s-%d.conf" % (where, os.getpid())
        with open(path, "w") as f:
            f.write(conf)
        try:
            r = sh(["bird", "-p", "-c", path])
            assert r.returncode == 0, r.stderr.decode()
        finally:
            os.unlink(path)


# ------------------------------------------------------------------ fleet

def test_bgp_announce_ecmp_drain_kill9_restart(lab, apps):
    """Two appliances announce every VIP (IPv4 and IPv6): two next hops
    at the router, traffic through both; draining one withdraws it and
    its open connections carry on through the other; undrain; kill -9 of
    one: the router drops it by BFD (the session goes down for BFD, not
    the hold time); a restart brings it back; SIGTERM withdraws."""
    d1 = apps(1)
    d2 = apps(2)
    both = lab.fleet_routes([1, 2])
    assert len(both) == 4 and any(":" in v for v in both), both
    lab.wait_routes(both, timeout=90)
    for k in (1, 2):
        assert lab.app_routes(k) == sorted(lab.vips()), lab.app_routes(k)
    # nothing static: every route to a VIP at the router is BIRD's
    r = sh(["ip", "-n", lab.ns("rtr"), "route", "show", "root",
            "10.99.0.0/16"], check=True)
    assert b"proto bird" in r.stdout and b"static" not in r.stdout, r.stdout

    v4, v6 = lab.env["VIP_DSR"], lab.env["VIP6_DSR"]
    srcs = lab.env["CLI_ADDRS"].split()
    srcs6 = lab.env["CLI_ADDRS6"].split()
    lab.wait_service(v4, timeout=60)
    lab.wait_service(v6, timeout=60)
    f0 = (flows_created(d1), flows_created(d2))
    res = lab.burst(v4, 120, concurrency=20, src=",".join(srcs))
    assert res["ok"] == 120, failures(res)
    res6 = lab.burst(v6, 60, concurrency=20, src=",".join(srcs6))
    assert res6["ok"] == 60, failures(res6)
    assert all(c["server_addr"].startswith(v6) for c in res6["conns"]), \
        res6["conns"][:3]
    f1 = (flows_created(d1), flows_created(d2))
    assert f1[0] > f0[0] and f1[1] > f0[1], "ECMP used one appliance: " \
        "flows created %s -> %s" % (f0, f1)

    # drain appliance 1: withdrawn, its open connections go on through 2
    held = lab.hold(v4, 20, src=",".join(srcs))
    try:
        first = {c["i"]: c["backend"] for c in held.conns}
        assert all(c["error"] is None for c in held.conns), held.conns
        lab.drain(d1)
        h = d1.call("health_get")
        assert h["draining"] is True and h["ready"] is True, h
        lab.wait_routes(lab.fleet_routes([2]), timeout=30)
        assert lab.app_routes(1) == [], lab.app_routes(1)
        rnd = held.round()
        bad = [c for c in rnd if c["error"] or c["backend"] != first[c["i"]]]
        assert not bad, "connections broke or changed backend when " \
            "appliance 1 drained: %s" % bad
        f2 = flows_created(d1)
        res = lab.burst(v4, 40, concurrency=20, src=",".join(srcs))
        assert res["ok"] == 40, failures(res)
        assert flows_created(d1) == f2, "a drained appliance got new flows"
        lab.drain(d1, False)
        lab.wait_routes(both, timeout=30)
        closed = held.close()
        assert all(c["error"] is None for c in closed), closed
    finally:
        held.kill()

    # kill -9 of appliance 2: BFD tells the router at once
    lab.wait_bfd([1, 2])
    t0 = time.monotonic()
    lab.kill9(d2)
    lab.wait_routes(lab.fleet_routes([1]), timeout=30)
    took = time.monotonic() - t0
    info = rtr_protocols(lab)
    if lab.bfd:
        assert "BFD session down" in info.get("app2_4", "") + \
            info.get("app2_6", ""), info
    res = lab.burst(v4, 30, concurrency=10, src=",".join(srcs))
    assert res["ok"] == 30, failures(res)
    print("kill -9 -> router dropped appliance 2 in %.2f s (%s)"
          % (took, info))

    # restart: announced again, BFD up again
    d2 = apps(2)
    lab.wait_routes(both, timeout=90)
    lab.wait_bfd([1, 2])

    # SIGTERM: withdrawn first (drain_s), then the appliance stops
    assert d2.stop(timeout=60) == 0, d2.describe()
    lab.wait_routes(lab.fleet_routes([1]), timeout=30)
    assert d1.stop(timeout=60) == 0, d1.describe()
    lab.wait_routes(lab.fleet_routes([]), timeout=30)


def test_bgp_fleet_agrees_on_backends(lab, apps):
    """The same connections (same 5-tuples) reach the same backends
    through either appliance (the other one drained); behind the BGP ECMP
    route each connection crosses exactly one appliance, and both would
    send it to the backend it reached."""
    d1 = apps(1)
    d2 = apps(2)
    lab.wait_routes(lab.fleet_routes([1, 2]), timeout=90)
    v = lab.env["VIP_DSR"]
    lab.wait_service(v, timeout=60)
    src = lab.env["CLI_ADDRS"].split()[0]
    n = 120
    base = 20000 + (os.getpid() % 24) * 500    # below the ephemeral ports
    runs = []
    for active, idle, k in ((d1, d2, 1), (d2, d1, 2)):
        lab.drain(idle)
        lab.drain(active, False)
        lab.wait_routes(lab.fleet_routes([k]), timeout=30)
        f0 = (flows_created(active), flows_created(idle))
        res = lab.burst(v, n, src=src, sport_base=base, concurrency=20)
        f1 = (flows_created(active), flows_created(idle))
        assert res["ok"] == n, failures(res)
        assert f1[0] - f0[0] == n and f1[1] == f0[1], \
            "through %d only: flows created %s -> %s" % (k, f0, f1)
        runs.append([c["backend"] for c in res["conns"]])
    diff = [(base + i, a, b) for i, (a, b) in enumerate(zip(*runs))
            if a != b]
    assert not diff, "%d of %d flows reached another backend through " \
        "appliance 2 than through appliance 1 (sport, 1, 2): %s" % (
            len(diff), n, diff[:10])

    lab.drain(d1, False)
    lab.wait_routes(lab.fleet_routes([1, 2]), timeout=30)
    f0 = (flows_created(d1), flows_created(d2))
    m = 300
    res = lab.burst(v, m, concurrency=30, src=",".join(
        lab.env["CLI_ADDRS"].split()), sport_base=base + 200)
    f1 = (flows_created(d1), flows_created(d2))
    assert res["ok"] == m, failures(res)
    share = (f1[0] - f0[0], f1[1] - f0[1])
    assert share[0] > 0 and share[1] > 0, "ECMP used one appliance: %s" \
        % (share,)
    assert share[0] + share[1] == m, "flows created on the two " \
        "appliances %s do not add up to the %d connections" % (share, m)
    t1, t2 = tracer(d1), tracer(d2)
    try:
        wrong = []
        for c in res["conns"][::3]:
            a = t1(c["src"], c["sport"], v, 80)["backend"]
            b = t2(c["src"], c["sport"], v, 80)["backend"]
            if not a == b == lab.by_name[c["backend"]]["addr"]:
                wrong.append((c["src"], c["sport"], c["backend"], a, b))
        assert not wrong, "appliances disagree or the connection went " \
            "elsewhere: %s" % wrong[:10]
    finally:
        t1.close()
        t2.close()


def test_bgp_planned_drain_moves_flows_keep_backends(lab, apps):
    """ECMP over two announcing appliances; appliance 1 drains
    (health_set), the router withdraws it, then it stops: its open TCP
    connections and UDP flows carry on through appliance 2 with the same
    backends; none breaks."""
    d1 = apps(1)
    d2 = apps(2)
    lab.wait_routes(lab.fleet_routes([1, 2]), timeout=90)
    v = lab.env["VIP_DSR"]
    lab.wait_service(v, timeout=60)
    held = lab.hold(v, 30, src=",".join(lab.env["CLI_ADDRS"].split()))
    probe = None
    try:
        assert all(c["error"] is None for c in held.conns), held.conns
        probe = lab.udp_probe(v, flows=16, rate=400)
        time.sleep(1.0)
        first = {c["i"]: c["backend"] for c in held.conns}
        t1 = tracer(d1)
        try:
            via1 = [c for c in held.conns
                    if t1(c["src"], c["sport"], v, 80)["existing_flow"]]
        finally:
            t1.close()
        assert 0 < len(via1) < len(held.conns), \
            "ECMP put %d of %d connections on appliance 1" % (
                len(via1), len(held.conns))
        f2 = flows_created(d2)

        lab.drain(d1)
        lab.wait_routes(lab.fleet_routes([2]), timeout=30)
        time.sleep(0.5)
        assert d1.stop(timeout=60) == 0, d1.describe()

        r = held.round()
        assert all(c["error"] is None and c["backend"] == first[c["i"]]
                   for c in r), "connections broke or changed backend " \
            "when appliance 1 drained and stopped: %s" % [
                c for c in r if c["error"] or c["backend"] != first[c["i"]]]
        assert flows_created(d2) - f2 >= len(via1), \
            "appliance 2 did not take over the moved flows"
        time.sleep(0.5)
        pr = probe.stop()
        probe = None
        for f in pr["flows"]:
            assert f["answered"] > 0, f
        check_loss(pr, "planned drain")
        closed = held.close()
        assert all(c["error"] is None for c in closed), closed
    finally:
        if probe is not None:
            probe.kill()
        held.kill()


# ------------------------------------------------------------------ one-armed

def test_bgp_one_armed_two_slots(tmp_path):
    """up --one-armed --apps 2 --bgp: two one-armed appliances on the
    bridge announce; the router's routes have both as next hops on br0
    (IPv4 and IPv6); dsr traffic of both families crosses them; draining
    one withdraws it."""
    why = usable()
    if why is not None:
        pytest.skip(why)
    labutil.reap_stale_labs()
    lab = Lab("q%d" % os.getpid(), STATIC_NEIGH, topology="one-armed",
              bgp=True, apps=2)
    try:
        lab.up()
        assert lab.n_apps == 2
        for k in (1, 2):
            cfg = lab.config(k)
            assert len(cfg["ports"]) == 1 and \
                cfg["ports"][0]["kernel_if"] == "k0", cfg["ports"]
            assert cfg["announce"]["table"] == 100, cfg
        d1 = lab.start_app(1, tmp_path)
        d2 = lab.start_app(2, tmp_path)
        lab.wait_routes(lab.fleet_routes([1, 2]), timeout=90)
        r = sh(["ip", "-n", lab.ns("rtr"), "route", "show", "exact",
                lab.env["VIP_DSR"] + "/32"], check=True)
        assert r.stdout.count(b"dev br0") == 2, r.stdout
        f0 = (flows_created(d1), flows_created(d2))
        for v, srcs in ((lab.env["VIP_DSR"], lab.env["CLI_ADDRS"]),
                        (lab.env["VIP6_DSR"], lab.env["CLI_ADDRS6"])):
            lab.wait_service(v, timeout=60)
            res = lab.burst(v, 80, concurrency=20,
                            src=",".join(srcs.split()))
            assert res["ok"] == 80, failures(res)
        f1 = (flows_created(d1), flows_created(d2))
        assert f1[0] > f0[0] and f1[1] > f0[1], (f0, f1)
        lab.drain(d2)
        lab.wait_routes(lab.fleet_routes([1]), timeout=30)
        for d in (d1, d2):
            assert d.stop(timeout=60) == 0, d.describe()
        lab.wait_routes(lab.fleet_routes([]), timeout=30)
    finally:
        lab.down()


def test_bgp_fnat_fleet_each_appliance_its_pool(tmp_path):
    """up --one-armed --apps 2 --bgp --fnat: two one-armed appliances
    announce the full-NAT VIPs (ECMP at the router) to backends that have
    only an address and a default route. Appliance 1's pool is its port's
    own address (shared with its kernel_if, where its BGP session runs);
    appliance 2's is an address of its own, for which announce keeps a
    host route that the router learns by BGP (next hop appliance 2 alone).
    Real TCP from the client crosses both: every backend sees each
    connection come from the pool of the appliance that carried it (as
    many from each pool as that appliance created flows), the replies to
    appliance 2's pool reach it through the router, and no BGP session
    goes down."""
    why = usable()
    if why is not None:
        pytest.skip(why)
    labutil.reap_stale_labs()
    lab = Lab("g%d" % os.getpid(), STATIC_NEIGH, topology="one-armed",
              bgp=True, apps=2, fnat=True)
    ds = []
    try:
        lab.up()
        e = lab.env
        vip = e["VIP_FNAT"]
        pools = {1: e["APP1_ADDR"], 2: "10.99.0.202"}

        def pool_of(k):
            def mutate(cfg):
                cfg["lb"]["fnat"] = {"addrs": [pools[k]]}
                if k == 1:
                    # shared: the kernel's ports (BGP's) kept out
                    cfg["lb"]["fnat"]["ports"] = "1024-32767"
            return mutate
        for k in (1, 2):
            try:
                ds.append(lab.start_app(k, tmp_path, pool_of(k)))
            except AssertionError:
                d = lab.daemons[-1]
                if not d.alive() and re.search(
                        r"fnat\S*: unknown key|invalid value 'fnat'",
                        d.stderr):
                    pytest.skip("this pktaccel has no full NAT yet (issue "
                                "33): %s" % d.stderr.strip()
                                .splitlines()[-1])
                raise
        d1, d2 = ds
        lab.wait_routes(lab.fleet_routes([1, 2]), timeout=90)
        # appliance 2's pool is announced (a host route in its table,
        # learnt by the router with appliance 2 as the only next hop);
        # appliance 1's, its port's own address, is not
        lab.wait_routes({pools[2]: {lab.nexthop(2, pools[2])}}, timeout=60)
        assert pools[2] + "/32" in lab.app_routes(2) or \
            pools[2] in lab.app_routes(2), lab.app_routes(2)
        assert not {pools[1], pools[1] + "/32"} & set(lab.app_routes(1)), \
            lab.app_routes(1)

        def sessions():
            return sorted(ln.split(None, 5) for ln in lab.birdc(
                "rtr", "show", "protocols").splitlines()
                if re.match(r"app\d_[46]\s+BGP", ln))
        s0 = sessions()
        assert len(s0) == 4 and all(s[-1].startswith("Established")
                                    for s in s0), s0

        lab.wait_service(vip, timeout=60)
        f0 = (flows_created(d1), flows_created(d2))
        n = 120
        res = lab.burst(vip, n, concurrency=20,
                        src=",".join(e["CLI_ADDRS"].split()))
        assert res["ok"] == n, failures(res)
        f1 = (flows_created(d1), flows_created(d2))
        seen = {}
        for c in res["conns"]:
            peer = c["peer"].rpartition(":")[0]
            assert peer in pools.values(), "a backend saw %s, no " \
                "appliance's pool: %s" % (peer, c)
            seen[peer] = seen.get(peer, 0) + 1
        created = {pools[k]: f1[k - 1] - f0[k - 1] for k in (1, 2)}
        # each appliance made (about) as many flows as its pool was seen:
        # a client may reuse the source port of a connection that
        # wait_service() closed a moment before, whose entry (in its
        # tcp_fin_timeout) the new SYN reopens without making a flow
        assert set(seen) == set(created) and all(
            0 <= seen[p] - created[p] <= 2 for p in seen), \
            "connections seen by the backends from each pool %s, flows " \
            "each appliance created %s" % (seen, created)
        assert len(seen) == 2, seen

        # the sessions did not flap (same state, same "since")
        assert sessions() == s0, (s0, sessions())
        for d in ds:
            assert d.stop(timeout=60) == 0, d.describe()
        lab.wait_routes(lab.fleet_routes([]), timeout=30)
        lab.wait_routes({pools[2]: set()}, timeout=30)
    finally:
        for d in ds:
            if d.alive():
                d.kill()
        lab.down()
