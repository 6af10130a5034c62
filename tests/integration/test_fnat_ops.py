# SPDX-License-Identifier: BSD-3-Clause
"""Full NAT as operators see it, against a replay that stays (--stay)
with a pool (lb.fnat) and metrics on: IPv4 TCP and UDP and IPv6 TCP
flows through fnat services, some of their replies, a packet to a pool
port that no flow holds and a fragment to an fnat service. With one lb
lcore and one pool address per family, ports are handed out in order,
so every value is known before the run:

- stats_get's lb.fnat (proxy_failed included) and the drop reasons;
- /metrics: the pktaccel_lb_fnat_* counters and gauges, per pool
  address ports in use and ports;
- trace_packet: a flow's pool address and port, a new flow's candidate
  addresses, a backend's reply mapped to its client, a reply to a port
  no flow holds (dropped), a fragment (dropped);
- pktaccelctl: the stats_get summary's fnat line, top's Fnat and Pool
  lines, the replay summary's table;
- lb_service_list: an fnat service's proxy_protocol, backend flows."""

import os
import re
import subprocess

import pytest

import pautil
from pautil import CTL, Daemon, unique, write_json
from test_fnat_replay import (DNS4, LO, POOL4, POOL6, RTC1, WEB4, WEB6,
                              client, reply)
from test_metrics import (documented_metrics, free_port, parse_exposition,
                          scrape, value)

scapy = pytest.importorskip("scapy.all")
from scapy.all import IP, TCP, Ether, Raw  # noqa: E402

pytestmark = pytest.mark.needs_ctl

APP = {"name": "app", "vip": "192.0.2.20", "port": 443, "proto": "tcp",
       "forward": "fnat", "proxy_protocol": "v2",
       "backends": [{"addr": "10.1.0.9", "port": 8443}]}

# (family, client, service, protocol): ports of each family in order
FLOWS = [(4, "203.0.113.1", WEB4, "tcp"), (4, "203.0.113.2", WEB4, "tcp"),
         (4, "203.0.113.3", WEB4, "tcp"), (4, "203.0.113.50", DNS4, "udp"),
         (4, "203.0.113.51", DNS4, "udp"),
         (6, "2001:db8:77::1", WEB6, "tcp"),
         (6, "2001:db8:77::2", WEB6, "tcp")]
REPLIED = (0, 1, 5, 6)          # the flows whose backend answers
UNMATCHED_PORT = LO + 500       # a pool port no flow holds


def flow_ports():
    """The pool address and port of each flow of FLOWS."""
    nxt, out = {4: LO, 6: LO}, []
    for fam, _, _, _ in FLOWS:
        out.append((POOL4 if fam == 4 else POOL6, nxt[fam]))
        nxt[fam] += 1
    return out


def frames():
    fr, ports = [], flow_ports()
    for k, (fam, src, svc, proto) in enumerate(FLOWS):
        fr.append(client(fam, src, svc["vip"], 40000 + k, svc["port"],
                         proto, payload=b"q" * 8))
    for k in REPLIED:
        fam, _, svc, proto = FLOWS[k]
        be = svc["backends"][0]
        pool, pport = ports[k]
        fr.append(reply(fam, be["addr"], pool, be.get("port", svc["port"]),
                        pport, proto, payload=b"r" * 8))
    # to a pool port no flow holds: dropped (fnat_unmatched)
    fr.append(reply(4, "10.1.0.7", POOL4, 8080, UNMATCHED_PORT, "tcp"))
    # a first fragment to an fnat service: dropped (fnat_fragment)
    fr.append(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe") /
              IP(src="203.0.113.9", dst=WEB4["vip"], flags="MF", frag=0) /
              TCP(sport=41000, dport=80, flags="S") / Raw(b"f" * 16))
    return fr


@pytest.fixture(scope="module")
def fnatd(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("fnatops"))
    pcap = os.path.join(work, "in.pcap")
    fr = frames()
    pautil.write_pcap(pcap, [bytes(f) for f in fr])
    port = free_port()
    sock = unique("fnatops", ".sock")
    conf = write_json(os.path.join(work, "conf.json"), {
        "pipeline": RTC1,
        "metrics": {"listen": "127.0.0.1:%d" % port},
        "lb": {"icmp_echo": False,
               "flow_table": {"tcp_timeout": 3600, "udp_timeout": 3600},
               "fnat": {"addrs": [POOL4, POOL6], "ports": "20000-20999"},
               "services": [WEB4, DNS4, WEB6, APP]}})
    d = Daemon(pautil.replay_daemon_args(pcap, os.path.join(work, "out.pcap"),
                                         conf, sock), sock, work, "replay")
    try:
        d.wait_ready()
        d.wait_replay_done(len(fr))
        d.port = port
        yield d
    finally:
        rc = d.stop()
        for p in (sock, sock + ".lock"):
            if os.path.exists(p):
                os.unlink(p)
    assert rc == 0, d.describe()


WANT_FNAT = {"flows": 7, "flows_created": 7, "no_port": 0, "table_full": 0,
             "fragments": 1, "replies": 4, "reply_unmatched": 1,
             "xlat_failed": 0, "proxy_failed": 0, "time_wait_skips": 0}
WANT_POOL = {POOL4: 5, POOL6: 2}


def test_stats_get_lb_fnat_counts_the_flows_and_the_pool(fnatd):
    st = fnatd.call("stats_get")
    f = st["lb"]["fnat"]
    assert {k: f[k] for k in WANT_FNAT} == WANT_FNAT, f
    assert f["pool"] == [{"addr": POOL4, "ports": 1000, "in_use": 5},
                         {"addr": POOL6, "ports": 1000, "in_use": 2}], f
    assert st["drops"]["fnat_unmatched"] == 1, st["drops"]
    assert st["drops"]["fnat_fragment"] == 1, st["drops"]


def test_metrics_show_the_fnat_counters_and_pool_use(fnatd):
    f = parse_exposition(scrape(fnatd.port))
    for key, n in WANT_FNAT.items():
        name = "pktaccel_lb_fnat_" + key if key == "flows" else \
            "pktaccel_lb_fnat_%s_total" % key
        assert value(f, name) == n, name
    for addr, used in WANT_POOL.items():
        assert value(f, "pktaccel_lb_fnat_pool_ports_in_use",
                     addr=addr) == used, addr
        assert value(f, "pktaccel_lb_fnat_pool_ports", addr=addr) == 1000
    fnat = set(n for n in f if n.startswith("pktaccel_lb_fnat_"))
    assert len(fnat) == len(WANT_FNAT) + 2, fnat
    assert fnat - documented_metrics() == set(), "not in docs/metrics.md"


def trace(d, src, dst, sport, dport, proto, **kw):
    p = {"src": src, "dst": dst, "sport": sport, "dport": dport,
         "proto": proto}
    p.update(kw)
    return d.call("trace_packet", p)


def test_trace_names_each_flows_pool_address_and_port(fnatd):
    for k, ((fam, src, svc, proto), (pool, pport)) in enumerate(
            zip(FLOWS, flow_ports())):
        t = trace(fnatd, src, svc["vip"], 40000 + k, svc["port"], proto)
        assert t["verdict"] == "forward" and t["existing_flow"], t
        assert t["service"] == svc["name"], t
        assert t["fnat"] == {"addr": pool, "port": pport, "held": True,
                             "addrs": [pool]}, t
        assert t["fnat_reply"] is None, t


def test_trace_of_a_new_flow_names_the_addresses_it_may_take(fnatd):
    t = trace(fnatd, "203.0.113.200", WEB4["vip"], 50000, 80, "tcp")
    assert not t["existing_flow"] and t["backend"] == "10.1.0.7", t
    assert t["fnat"] == {"addr": POOL4, "port": None, "held": False,
                         "addrs": [POOL4]}, t


def test_trace_maps_a_backends_reply_to_its_client(fnatd):
    ports = flow_ports()
    for k, (fam, src, svc, proto) in enumerate(FLOWS):
        be = svc["backends"][0]
        pool, pport = ports[k]
        t = trace(fnatd, be["addr"], pool, be.get("port", svc["port"]),
                  pport, proto)
        assert t["verdict"] == "forward" and t["service"] is None, t
        assert t["fnat"] is None, t
        assert t["fnat_reply"] == {
            "match": "flow", "service": svc["name"], "vip": svc["vip"],
            "vport": svc["port"], "client": src,
            "client_port": 40000 + k}, t
    # the same port from another backend port, and a port no flow holds
    for sport, dport in ((8081, ports[0][1]), (8080, UNMATCHED_PORT)):
        t = trace(fnatd, "10.1.0.7", POOL4, sport, dport, "tcp")
        assert t["verdict"] == "drop", t
        assert t["drop_reason"] == "fnat_unmatched", t
        assert t["fnat_reply"] == {"match": "unmatched", "service": None,
                                   "vip": None, "vport": None,
                                   "client": None, "client_port": None}, t


def test_trace_of_a_fragment_to_an_fnat_service_is_a_drop(fnatd):
    t = trace(fnatd, "203.0.113.9", WEB4["vip"], 41000, 80, "tcp",
              fragment=True)
    assert t["verdict"] == "drop" and t["drop_reason"] == "fnat_fragment", t
    assert t["backend"] is None and t["fnat"] is None, t


def test_lb_service_list_shows_proxy_protocol_and_fnat_flows(fnatd):
    svcs = {s["name"]: s for s in fnatd.call("lb_service_list")}
    assert svcs["app"]["forward"] == "fnat", svcs["app"]
    assert svcs["app"]["proxy_protocol"] == "v2", svcs["app"]
    assert "proxy_protocol" not in svcs["web4"], svcs["web4"]
    flows = {n: sum(b["flows"] for b in svcs[n]["backends"])
             for n in ("web4", "dns4", "web6", "app")}
    assert flows == {"web4": 3, "dns4": 2, "web6": 2, "app": 0}, flows


def ctl(*args, env=None):
    r = subprocess.run([CTL] + list(args), capture_output=True, timeout=60,
                       env=env, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_stats_summary_has_the_fnat_line(fnatd, tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    os.chmod(str(tmp_path), 0o700)
    rc, out, err = ctl("-s", fnatd.sock, "stats_get", env=env)
    assert rc == 0, err
    lines = [ln for ln in out.splitlines() if ln.startswith("fnat ")]
    assert lines == [
        "fnat      flows 7  created 7  replies 4  pool %s 5/1000 (0.5%%)"
        " %s 2/1000 (0.2%%)  dropped fragment 1, unmatched 1"
        % (POOL4, POOL6)], out


def test_top_shows_fnat_flows_and_pool_use(fnatd):
    rc, out, err = ctl("-s", fnatd.sock, "top", "-b", "-n", "2", "-d", "1")
    assert rc == 0, err
    screens = out.split("\n\n")
    assert len(screens) == 2, out
    for s in screens:
        fn = [ln for ln in s.splitlines() if ln.startswith("Fnat ")]
        pool = [ln for ln in s.splitlines() if ln.startswith("Pool ")]
        assert len(fn) == 1 and re.match(
            r"Fnat     7 flows  new/s \S+  replies/s \S+  dropped/s \S+$",
            fn[0]), s
        assert pool == ["Pool     %s 5/1000 0.5%%  %s 2/1000 0.2%%"
                        % (POOL4, POOL6)], s
    # the second screen has rates: nothing moves after the replay
    fn = [ln for ln in screens[1].splitlines() if ln.startswith("Fnat ")]
    assert fn == ["Fnat     7 flows  new/s 0  replies/s 0  dropped/s 0"], \
        screens[1]


def test_replay_summary_table_shows_the_pool(fnatd):
    err = fnatd.stderr
    assert re.search(r"  lb fnat flows +7  \(replies 4, active 7\)\n", err), \
        err
    assert re.search(r"    %s +5    0\.5%% of 1000 ports\n"
                     % re.escape(POOL4), err), err
    assert re.search(r"    %s +2    0\.2%% of 1000 ports\n"
                     % re.escape(POOL6), err), err
