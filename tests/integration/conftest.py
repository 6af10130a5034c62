# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the pktaccel integration tests.

Run with /usr/bin/python3 -m pytest tests/integration (scripts/test.sh does).
The daemon and console are taken from $PKTACCEL_BUILD_DIR (default build/);
everything is skipped, with the reason, when they are not built.
"""

import contextlib
import os
import signal

import pytest

import pautil
from pautil import (CTL, DAEMON, Daemon, replay_daemon_args, unique,
                    write_json, write_pcap)

MIXED_SEED = 4242
MIXED_COUNT = 300


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs_ctl: needs build/app/pktaccelctl as well")


def pytest_collection_modifyitems(config, items):
    if not os.access(DAEMON, os.X_OK):
        skip = pytest.mark.skip(reason="%s is not built (meson setup build "
                                "&& ninja -C build)" % DAEMON)
        for it in items:
            it.add_marker(skip)
        return
    if not os.access(CTL, os.X_OK):
        skip = pytest.mark.skip(reason="%s is not built" % CTL)
        for it in items:
            if it.get_closest_marker("needs_ctl"):
                it.add_marker(skip)


@pytest.fixture(scope="session")
def repo_root():
    return pautil.REPO


@pytest.fixture(scope="session")
def daemon_path():
    return DAEMON


@pytest.fixture(scope="session")
def ctl_path():
    return CTL


@pytest.fixture(scope="session")
def mixed():
    """Mixed traffic (list of gen_sample.Pkt), malformed frames included."""
    return pautil.gen_sample.build_mixed(MIXED_SEED, MIXED_COUNT)


@pytest.fixture(scope="session")
def mixed_pcap(mixed, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("mixed") / "mixed.pcap")
    write_pcap(path, [p.data for p in mixed])
    return path


@contextlib.contextmanager
def daemons(workdir):
    """Yield start(config, in_pcap, ...) -> Daemon; every daemon still
    running at the end is stopped with SIGTERM and must exit 0."""
    started = []

    def start(config, in_pcap, extra=(), sock=None, wait=True, name=None):
        sock = sock or unique("sock", ".sock")
        name = name or "daemon%d" % len(started)
        conf = os.path.join(str(workdir), name + ".json")
        if isinstance(config, dict):
            write_json(conf, config)
        else:
            conf = config
        out = os.path.join(str(workdir), name + "-out.pcap")
        d = Daemon(replay_daemon_args(in_pcap, out, conf, sock, extra), sock,
                   str(workdir), name)
        d.out_pcap = out
        d.conf_path = conf
        started.append(d)
        if wait:
            d.wait_ready()
        return d

    try:
        yield start
    finally:
        errors = []
        for d in started:
            if d.rc is not None or d.proc.returncode is not None:
                continue
            try:
                rc = d.stop(signal.SIGTERM)
            except AssertionError as e:
                errors.append(str(e))
                continue
            if rc != 0:
                errors.append("daemon exited %s after SIGTERM\n%s"
                              % (rc, d.describe()))
        for d in started:
            for p in (d.sock, d.sock + ".lock"):
                if os.path.exists(p) and d.proc.returncode is not None:
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
        assert not errors, "\n".join(errors)


@pytest.fixture
def daemon_factory(tmp_path):
    """Function-scoped: start daemons in replay --stay mode."""
    with daemons(tmp_path) as start:
        yield start


@pytest.fixture(scope="module")
def module_daemons(tmp_path_factory):
    """Module-scoped variant (for read-only RPC and console tests)."""
    with daemons(tmp_path_factory.mktemp("daemons")) as start:
        yield start


@pytest.fixture
def run_replay(tmp_path):
    """run_replay(in_pcap, config, drops=False, **kw) -> pautil.Result with
    .rc, .stdout, .stderr and .summary (the last stdout line, parsed); the
    output pcap path is in .out_pcap (drops in .drops_pcap)."""
    n = [0]

    def go(in_pcap, config, drops=False, **kw):
        n[0] += 1
        out = str(tmp_path / ("replay%d-out.pcap" % n[0]))
        dr = str(tmp_path / ("replay%d-drops.pcap" % n[0])) if drops else None
        res = pautil.replay(in_pcap, out, config, drops=dr, **kw)
        res.out_pcap = out
        res.drops_pcap = dr
        return res
    return go
