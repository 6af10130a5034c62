# SPDX-License-Identifier: BSD-3-Clause
"""config_save and config_validate (docs/rpc.md).

config_save writes the running configuration, RPC changes included, so that
a daemon started from the file runs the same tables: the round trip is
checked through config_get across a restart. The write is atomic (temporary
file, fsync, rename, fsync of the directory): a full file system or a daemon
killed in the middle of a save leaves the old file whole."""

import glob
import json
import os
import random
import signal
import stat
import subprocess
import time

import pytest

import pautil
from pautil import RTC2, l4_frame, write_pcap

LB = {"local_addr": "192.0.2.254", "local_addr6": "2001:db8::fe",
      "flow_table": {"size": 4096, "tcp_timeout": 120},
      "services": [
          {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
           "scheduler": "maglev", "forward": "ipip",
           "backends": [{"addr": "10.1.0.1"},
                        {"addr": "10.1.0.2", "weight": 3}]},
          {"name": "dns", "vip": "192.0.2.20", "port": 53, "proto": "udp",
           "scheduler": "rr", "forward": "nat",
           "backends": [{"addr": "10.2.0.1", "port": 5353}]}]}

CONF = {"pipeline": dict(RTC2, burst=16),
        "acl": {"default": "permit", "rules": [
            {"id": 1, "priority": 5, "src": "203.0.113.0/24", "dst": "any",
             "proto": "tcp", "dport": "22", "action": "drop"},
            {"id": 2, "priority": 1, "src": "any", "dst": "2001:db8::/32",
             "action": "permit"}]},
        "lb": LB,
        "rpc": {"idle_timeout": 120}}


@pytest.fixture(scope="module")
def traffic(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cs") / "in.pcap")
    write_pcap(path, [l4_frame("198.51.100.%d" % (1 + k), "192.0.2.10",
                               30000 + k, 80, idx=k) for k in range(20)])
    return path


def _apply_changes(d):
    """Many changes of every kind, some undone again."""
    for i in range(30):
        d.call("acl_rule_add", {
            "id": 100 + i, "priority": i % 7,
            "src": "10.%d.0.0/16" % i, "dst": "any", "proto": "udp",
            "dport": "%d-%d" % (1000 + i, 2000 + i),
            "action": ("drop", "permit")[i % 2]})
    for i in range(0, 30, 3):
        d.call("acl_rule_delete", {"id": 100 + i})
    d.call("acl_rule_add", {"id": 500, "priority": 9, "src": "any",
                            "dst": "192.0.2.0/24", "action": "mark",
                            "dscp": 46})
    d.call("lb_service_add", {
        "name": "web6", "vip": "2001:db8:10::10", "port": 443,
        "proto": "tcp", "forward": "dsr", "scheduler": "wrr",
        "backends": [{"addr": "2001:db8:1::1", "weight": 2,
                      "mac": "02:00:00:00:00:61"}]})
    d.call("lb_backend_add", {"service": "web", "addr": "10.1.0.3",
                              "weight": 5, "mac": "02:00:00:00:00:33"})
    d.call("lb_backend_set", {"service": "web", "addr": "10.1.0.1",
                              "state": "drain"})
    d.call("lb_backend_set", {"service": "web", "addr": "10.1.0.2",
                              "weight": 7})
    d.call("lb_backend_add", {"service": "dns", "addr": "10.2.0.2",
                              "port": 5353, "state": "down"})
    d.call("lb_backend_delete", {"service": "dns", "addr": "10.2.0.1"})
    d.call("lb_service_add", {
        "name": "tmp", "vip": "192.0.2.99", "port": 9, "proto": "udp",
        "backends": [{"addr": "10.9.0.1"}]})
    d.call("lb_service_delete", {"name": "tmp"})


@pytest.fixture(scope="module")
def shared(module_daemons, traffic):
    """One daemon for the calls that change nothing."""
    return module_daemons(CONF, traffic)


def _error(d, method, params):
    with d.client() as c:
        resp = c.call_raw(method, params)
    assert "error" in resp, resp
    return resp["error"]


def test_save_restart_reproduces_running_state(daemon_factory, traffic,
                                               tmp_path):
    d = daemon_factory(CONF, traffic)
    _apply_changes(d)
    running = d.call("config_get")
    assert running != CONF
    assert d.call("config_save") is True        # to the file it started from
    other = str(tmp_path / "other.json")
    assert d.call("config_save", {"path": other}) is True
    with open(d.conf_path) as f:
        saved = json.load(f)
    with open(other) as f:
        assert json.load(f) == saved
    assert saved == running
    assert not glob.glob(str(tmp_path / ".*.json.*")), "temporary file left"
    assert d.stop() == 0

    for path in (d.conf_path, other):
        d2 = daemon_factory(path, traffic)
        assert d2.call("config_get") == running
        rules = d2.call("acl_rule_list")
        assert sorted(r["id"] for r in rules) == sorted(
            r["id"] for r in running["acl"]["rules"])
        svcs = {s["name"]: s for s in d2.call("lb_service_list")}
        assert set(svcs) == {"web", "dns", "web6"}
        web = {b["addr"]: b for b in svcs["web"]["backends"]}
        assert web["10.1.0.1"]["state"] == "drain"
        assert web["10.1.0.2"]["weight"] == 7
        assert d2.stop() == 0


def test_save_keeps_mode_and_follows_symlink(daemon_factory, traffic,
                                             tmp_path):
    real_dir = tmp_path / "etc"
    real_dir.mkdir()
    real = str(real_dir / "pktaccel.json")
    pautil.write_json(real, CONF)
    os.chmod(real, 0o600)
    link = str(tmp_path / "current.json")
    os.symlink(real, link)
    d = daemon_factory(link, traffic)
    d.call("acl_rule_add", {"id": 77, "src": "any", "dst": "any",
                            "action": "drop", "proto": "icmp"})
    assert d.call("config_save") is True
    assert os.path.islink(link), "the link was replaced by a file"
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600
    with open(real) as f:
        assert 77 in [r["id"] for r in json.load(f)["acl"]["rules"]]
    fresh = str(tmp_path / "fresh.json")
    assert d.call("config_save", {"path": fresh}) is True
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o640


@pytest.mark.parametrize("params,needle", [
    ({"path": 5}, "params"),
    ({"path": ""}, "params.path: empty"),
    ({"file": "/tmp/x.json"}, "params"),
    ([1], "params"),
    ({"path": "/nonexistent-dir/x/y.json"}, "params.path"),
    ({"path": "/"}, "params.path"),
    ({"path": "x" * 5000}, "params.path"),
])
def test_save_bad_params(shared, params, needle):
    err = _error(shared, "config_save", params)
    assert err["code"] == -32602, err
    assert needle in err["message"], err


def test_save_to_a_directory_is_refused(shared, tmp_path):
    d = shared
    target = tmp_path / "adir"
    target.mkdir()
    err = _error(d, "config_save", {"path": str(target)})
    assert err["code"] == -32602 and "not a regular file" in err["message"]
    assert target.is_dir()


def test_save_without_config_file_needs_path(tmp_path, traffic):
    sock = pautil.unique("sock", ".sock")
    out = str(tmp_path / "out.pcap")
    d = pautil.Daemon([pautil.DAEMON, "--replay", traffic, "--replay-out",
                       out, "-s", sock, "--stay"], sock, str(tmp_path))
    try:
        d.wait_ready()
        err = _error(d, "config_save", None)
        assert err["code"] == -32602 and "params.path" in err["message"]
        path = str(tmp_path / "saved.json")
        assert d.call("config_save", {"path": path}) is True
        with open(path) as f:
            assert json.load(f) == d.call("config_get")
    finally:
        assert d.stop() == 0


@pytest.fixture
def small_fs(tmp_path):
    """A 1 MiB tmpfs: a full file system on demand."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                        str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs: %s" % r.stderr.decode().strip())
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_save_on_full_filesystem_keeps_old_file(daemon_factory, traffic,
                                                small_fs):
    conf = str(small_fs / "pktaccel.json")
    pautil.write_json(conf, CONF)
    with open(conf, "rb") as f:
        before = f.read()
    d = daemon_factory(conf, traffic)
    # Grow the running config past what is left on the file system.
    rules = [{"id": 1000 + i, "src": "10.%d.%d.0/24" % (i // 250, i % 250),
              "dst": "any", "action": "drop"} for i in range(3000)]
    d.call("acl_rules_replace", {"rules": rules})
    filler = str(small_fs / "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        err = _error(d, "config_save", None)
        assert err["code"] == -32603, err
        assert "No space left" in err["message"], err
        with open(conf, "rb") as f:
            assert f.read() == before, "the old file was changed"
        assert sorted(os.listdir(str(small_fs))) == \
            ["filler", "pktaccel.json"], "temporary file left behind"
    finally:
        os.unlink(filler)
    assert d.call("config_save") is True
    with open(conf) as f:
        assert len(json.load(f)["acl"]["rules"]) == 3000


def test_save_killed_midway_leaves_a_whole_file(tmp_path, traffic):
    """SIGKILL while saves of a ~1 MB config are in flight: the file is
    always the old one or the new one, whole."""
    rules = [{"id": 1 + i, "priority": i % 100,
              "src": "10.%d.%d.0/24" % (i // 250, i % 250),
              "dst": "192.0.2.0/24", "proto": "tcp",
              "dport": "%d" % (1 + i % 60000), "action": "drop"}
             for i in range(6000)]
    conf_doc = dict(CONF, acl={"default": "permit", "rules": rules})
    rng = random.Random(5)
    kills_mid = 0
    for attempt in range(4):
        conf = str(tmp_path / ("kill%d.json" % attempt))
        pautil.write_json(conf, conf_doc)
        with open(conf, "rb") as f:
            old = f.read()
        sock = pautil.unique("sock", ".sock")
        d = pautil.Daemon(pautil.replay_daemon_args(
            traffic, str(tmp_path / "o.pcap"), conf, sock), sock,
            str(tmp_path), "kill%d" % attempt)
        try:
            d.wait_ready(timeout=120)
            c = d.client()
            # 40 saves pipelined in one write
            reqs = b"".join(json.dumps(c.request("config_save", id=k))
                            .encode() + b"\n" for k in range(40))
            c.send_raw(reqs)
            c.recv(timeout=60)                  # the first save is done
            time.sleep(rng.uniform(0.0, 0.05))
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait(30)
            c.close()
        finally:
            d.kill()
        with open(conf, "rb") as f:
            data = f.read()
        doc = json.loads(data)          # never a torn file
        assert len(doc["acl"]["rules"]) == 6000
        if data != old:
            assert data.endswith(b"}\n")
        left = glob.glob(str(tmp_path / (".kill%d.json.*" % attempt)))
        kills_mid += bool(left)
        for p in left:                  # what a crash mid-save leaves
            os.unlink(p)
        os.unlink(sock) if os.path.exists(sock) else None
    # At least one kill should land inside a save (tmp file orphaned);
    # not asserted: it depends on timing, and the property above holds
    # either way.
    print("kills inside a save: %d of 4" % kills_mid)


VALID = {"pipeline": {"mode": "rtc", "lcores": {"worker": [1]}},
         "acl": {"default": "drop", "rules": [
             {"id": 1, "src": "10.0.0.0/8", "dst": "any", "action": "permit"}]}}


def test_validate_accepts_and_changes_nothing(shared):
    d = shared
    before = d.call("config_get")
    assert d.call("config_validate", VALID) is True
    assert d.call("config_validate", before) is True
    assert d.call("config_validate", {}) is True
    assert d.call("config_get") == before


@pytest.mark.parametrize("doc,path", [
    ({"acl": {"rules": [{"id": 1, "src": "10.0.0.300/8", "dst": "any",
                         "action": "permit"}]}}, "$.acl.rules[0].src"),
    ({"pipeline": {"mode": "fast"}}, "$.pipeline.mode"),
    ({"lb": {"services": [{"name": "a", "vip": "224.0.0.1", "port": 1,
                           "proto": "tcp", "backends": []}]}},
     "$.lb.services[0].vip"),
    ({"bogus": 1}, "bogus"),
    ({"metrics": {"listen": "nowhere"}}, "$.metrics.listen"),
])
def test_validate_names_the_json_path(shared, doc, path):
    err = _error(shared, "config_validate", doc)
    assert err["code"] == -32602, err
    assert path in err["message"], err


@pytest.mark.parametrize("params", [None, [], [VALID]])
def test_validate_needs_a_document(shared, params):
    err = _error(shared, "config_validate", params)
    assert err["code"] == -32602 and "params" in err["message"], err
