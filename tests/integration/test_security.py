# SPDX-License-Identifier: BSD-3-Clause
"""Access to the RPC socket (issue 5, item 5; docs/security.md): created
0660 in a 0750 directory, owned by root or by the group rpc.group names,
so that members of an operator group can use pktaccelctl without root."""

import os
import stat

import pautil
from pautil import Daemon, replay_daemon_args, write_json


def start(tmp_path, conf):
    sock_dir = str(tmp_path / "run")          # does not exist yet
    sock = os.path.join(sock_dir, "pa.sock")
    path = write_json(str(tmp_path / "c.json"), conf)
    d = Daemon(replay_daemon_args(pautil.SAMPLE, str(tmp_path / "o.pcap"),
                                  path, sock), sock, str(tmp_path))
    d.wait_ready()
    return d, sock, sock_dir


def test_socket_0660_in_a_0750_directory_owned_by_root(tmp_path):
    d, sock, sock_dir = start(tmp_path, {"pipeline": {"mode": "rtc"}})
    try:
        st, dst = os.stat(sock), os.stat(sock_dir)
        assert stat.S_ISSOCK(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o660
        assert stat.S_IMODE(dst.st_mode) == 0o750
        assert st.st_gid == os.getgid()
    finally:
        assert d.stop() == 0, d.describe()


def test_socket_and_directory_given_to_the_configured_group(tmp_path):
    d, sock, sock_dir = start(tmp_path, {"pipeline": {"mode": "rtc"},
                                         "rpc": {"group": "daemon"}})
    try:
        assert os.stat(sock).st_gid == 1        # Debian's daemon group
        assert os.stat(sock_dir).st_gid == 1
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o660
        assert d.call("config_get")["rpc"]["group"] == "daemon"
    finally:
        assert d.stop() == 0, d.describe()


def test_unknown_group_is_refused_before_start(tmp_path):
    path = write_json(str(tmp_path / "c.json"),
                      {"rpc": {"group": "no-such-group-pa"}})
    r = pautil.run([pautil.DAEMON, "--replay", pautil.SAMPLE, "-c", path])
    assert r.rc == 1
    assert "$.rpc.group: no group 'no-such-group-pa'" in r.stderr
