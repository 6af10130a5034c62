# SPDX-License-Identifier: BSD-3-Clause
"""pktaccel as a process: where the built binaries are
($PKTACCEL_BUILD_DIR, default build/), one replay run in the foreground,
and a daemon in the background (replay --stay or live mode) with its RPC
client."""

import json
import os
import signal
import subprocess
import time
import uuid

from .client import Client
from .rpc import wait_socket

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.environ.get("PKTACCEL_BUILD_DIR") or os.path.join(REPO, "build")
DAEMON = os.path.join(BUILD, "app", "pktaccel")
CTL = os.path.join(BUILD, "app", "pktaccelctl")
PYTHON = "/usr/bin/python3"
DEFAULT_CONF = os.path.join(REPO, "docs", "examples", "default.json")

# Timeouts (seconds). A replay of a few hundred packets takes about a
# second; these only keep a hung daemon from hanging the caller.
REPLAY_TIMEOUT = 90
START_TIMEOUT = 30
STOP_TIMEOUT = 30


def unique(prefix, suffix=""):
    """A short unique path under /tmp (AF_UNIX paths must stay < 108)."""
    return "/tmp/pa-%s-%d-%s%s" % (prefix, os.getpid(), uuid.uuid4().hex[:8],
                                   suffix)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def last_json_line(text):
    """Parse the last non-empty line of text as JSON (None if it is not)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


class Result:
    def __init__(self, args, rc, stdout, stderr):
        self.args = args
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.summary = last_json_line(stdout)

    def __repr__(self):
        return ("<rc=%r args=%r\n--- stdout (tail) ---\n%s\n--- stderr ---\n%s>"
                % (self.rc, self.args, self.stdout[-3000:],
                   self.stderr[-3000:]))


def run(args, timeout=REPLAY_TIMEOUT, **kw):
    """Run a command with a timeout; a command that hangs is killed and
    reported as rc None."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = None
        err += b"\n[test harness: killed after %ds]" % timeout
    return Result(args, rc, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"))


def replay(in_pcap, out_pcap, config, drops=None, extra=(),
           timeout=REPLAY_TIMEOUT, conf_path=None):
    """Run one replay. config: a dict (written to a temp file) or a path."""
    if isinstance(config, dict):
        conf_path = conf_path or unique("conf", ".json")
        write_json(conf_path, config)
    else:
        conf_path = config
    args = [DAEMON, "--replay", in_pcap, "--replay-out", out_pcap,
            "-c", conf_path]
    if drops:
        args += ["--replay-drops", drops]
    args += list(extra)
    try:
        return run(args, timeout=timeout)
    finally:
        if isinstance(config, dict):
            try:
                os.unlink(conf_path)
            except OSError:
                pass


# --------------------------------------------------------------------------
# A daemon running in the background

class Daemon:
    """pktaccel in the background (replay --stay, or live mode), output to
    files. stop() sends SIGTERM and returns the exit status."""

    def __init__(self, args, sock, workdir, name="daemon", prefix=(),
                 cwd=None):
        self.args = list(prefix) + list(args)
        self.sock = sock
        self.out_path = os.path.join(workdir, name + ".stdout")
        self.err_path = os.path.join(workdir, name + ".stderr")
        self.rc = None
        self._out = open(self.out_path, "wb")
        self._err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self._out,
                                     stderr=self._err,
                                     stdin=subprocess.DEVNULL, cwd=cwd)

    @property
    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    @property
    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def describe(self):
        return ("args=%r rc=%r\n--- stdout (tail) ---\n%s\n--- stderr ---\n%s"
                % (self.args, self.proc.poll(), self.stdout[-3000:],
                   self.stderr[-3000:]))

    def wait_ready(self, timeout=START_TIMEOUT):
        try:
            wait_socket(self.sock, self.proc, timeout)
        except AssertionError as e:
            raise AssertionError("%s\n%s" % (e, self.describe()))

    def client(self, timeout=10.0):
        """A pktaccel.Client on the daemon's socket (a method per RPC,
        and RpcClient's raw sends)."""
        return Client(self.sock, timeout)

    def call(self, method, params=None):
        with self.client() as c:
            return c.call(method, params)

    def alive(self):
        return self.proc.poll() is None

    def wait(self, timeout=STOP_TIMEOUT):
        """Wait for exit; kill and fail after timeout."""
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._close()
            raise AssertionError("daemon did not exit within %ds\n%s"
                                 % (timeout, self.describe()))
        self._close()
        return self.rc

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self):
        for f in (self._out, self._err):
            try:
                f.close()
            except OSError:
                pass

    def wait_replay_done(self, n, timeout=60):
        """Poll stats_get until all n packets of the replay have left the
        pipeline. Returns the last stats."""
        deadline = time.monotonic() + timeout
        st = None
        while time.monotonic() < deadline:
            st = self.call("stats_get")
            if st.get("rx_packets") == n and \
                    st.get("tx_packets", 0) + st.get("dropped_packets", 0) == n:
                return st
            time.sleep(0.05)
        raise AssertionError("replay of %d packets not done after %ds: %s\n%s"
                             % (n, timeout, st, self.describe()))


def replay_daemon_args(in_pcap, out_pcap, conf_path, sock, extra=()):
    return [DAEMON, "--replay", in_pcap, "--replay-out", out_pcap,
            "-c", conf_path, "-s", sock, "--stay"] + list(extra)
