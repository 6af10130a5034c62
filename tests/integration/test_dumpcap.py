# SPDX-License-Identifier: BSD-3-Clause
"""dpdk-dumpcap against the running daemon (docs/capture.md): the daemon
runs live on veth pairs in a private network namespace, with the shared
runtime directory (a unique --file-prefix, no --no-shconf) and hugepages,
and calls rte_pdump_init(); dpdk-dumpcap, a DPDK secondary process,
attaches to it and writes what port p0 receives to a pcap file, which
must hold exactly the frames sent.

A --no-huge primary cannot serve a secondary process (the EAL of
dpdk-dumpcap fails: "Cannot get hugepage information"), so the test
reserves 2 MB hugepages for its run (root: nr_hugepages, a private
hugetlbfs mount) and gives them back afterwards; it is skipped, with the
reason, where that cannot be done."""

import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

import pautil
from pautil import DAEMON, Daemon, unique, write_json
from test_capture import SENDER
from test_live_veth import netns  # noqa: F401  (fixture)

NR_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PAGES = 64              # 128 MB: the daemon takes about 50, dumpcap a few


def _meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _write_nr(n):
    with open(NR_HUGEPAGES, "w") as f:
        f.write("%d\n" % n)


@pytest.fixture
def hugepages(tmp_path):
    """A private hugetlbfs mount with PAGES more 2 MB pages in the pool;
    yields the mount point. Afterwards the mount goes and the pool shrinks
    by what was added (whatever else changed it meanwhile)."""
    if os.geteuid() != 0:
        pytest.skip("dumpcap test needs root (hugepages, ip netns)")
    if shutil.which("dpdk-dumpcap") is None:
        pytest.skip("dpdk-dumpcap not installed (package dpdk-dev)")
    if not os.path.exists(NR_HUGEPAGES):
        pytest.skip("no 2 MB hugepage pool (%s)" % NR_HUGEPAGES)
    with open(NR_HUGEPAGES) as f:
        before = int(f.read())
    free_before = _meminfo("HugePages_Free")
    try:
        _write_nr(before + PAGES)
    except OSError as e:
        pytest.skip("cannot reserve 2 MB hugepages: writing %s: %s"
                    % (NR_HUGEPAGES, e))
    mnt = tmp_path / "huge"
    mounted = False
    try:
        got = _meminfo("HugePages_Free") - free_before
        if got < PAGES:
            pytest.skip("could reserve only %d of %d 2 MB hugepages "
                        "(memory fragmented or short)" % (got, PAGES))
        mnt.mkdir()
        r = subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                            "nodev", str(mnt)], capture_output=True,
                           timeout=30)
        if r.returncode != 0:
            pytest.skip("cannot mount hugetlbfs: %s"
                        % r.stderr.decode().strip())
        mounted = True
        yield str(mnt)
    finally:
        if mounted:
            r = subprocess.run(["umount", str(mnt)], capture_output=True,
                               timeout=30)
            if r.returncode != 0:
                subprocess.run(["umount", "-l", str(mnt)], timeout=30)
        with open(NR_HUGEPAGES) as f:
            now = int(f.read())
        _write_nr(max(0, now - PAGES))


def _frames(n):
    out = []
    for k in range(n):
        if k % 4 == 0:      # dropped by the ACL: dumpcap sees it anyway
            out.append(pautil.l4_frame("10.9.0.%d" % (k + 1), "192.0.2.53",
                                       20000 + k, 53, "udp", idx=k))
        else:
            out.append(pautil.l4_frame("198.51.100.%d" % (k + 1),
                                       "192.0.2.80", 30000 + k, 80, "tcp",
                                       idx=k, payload_len=20 + k))
    return out


def test_dumpcap_captures_a_port_of_the_live_daemon(netns, hugepages,  # noqa: F811
                                                    tmp_path):
    prefix = "pa_dc_%d_%s" % (os.getpid(), uuid.uuid4().hex[:6])
    sock = unique("dumpcap", ".sock")
    conf = write_json(str(tmp_path / "dc.json"), {
        "ports": [
            {"name": "p0", "devargs": "net_af_packet0,iface=vA1",
             "peer": "p1"},
            {"name": "p1", "devargs": "net_af_packet1,iface=vA2",
             "peer": "p0"},
        ],
        "pipeline": {"mode": "rtc"},
        "acl": {"default": "permit", "rules": [
            {"id": 1, "src": "10.0.0.0/8", "dport": "53", "proto": "udp",
             "action": "drop"}]},
        "metrics": None,
    })
    d = Daemon([DAEMON, "--huge-dir", hugepages, "--file-prefix", prefix,
                "--no-pci", "-l", "0,1", "--", "-c", conf, "-s", sock],
               sock, str(tmp_path), "dumpcap-daemon",
               prefix=("ip", "netns", "exec", netns))
    dc = None
    dc_log = str(tmp_path / "dumpcap.log")
    out = str(tmp_path / "p0.pcap")
    frames = _frames(40)
    try:
        d.wait_ready(60)
        assert "dpdk-dumpcap cannot attach" not in d.stderr, d.describe()
        with open(dc_log, "wb") as log:
            dc = subprocess.Popen(
                ["ip", "netns", "exec", netns, "dpdk-dumpcap",
                 "--file-prefix=" + prefix, "-i", "net_af_packet0",
                 "-c", str(len(frames)), "-P", "-w", out],
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            with open(dc_log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            # "Capturing on" is on stdout (buffered); the counter line
            # on stderr comes once the capture is enabled
            if "Capturing on" in text or "Packets captured" in text:
                break
            assert dc.poll() is None, "dpdk-dumpcap exited %s:\n%s" % (
                dc.returncode, text)
            assert time.monotonic() < deadline, \
                "dpdk-dumpcap not capturing after 30 s:\n%s" % text
            time.sleep(0.1)
        path = str(tmp_path / "frames.json")
        with open(path, "w") as f:
            json.dump([fr.hex() for fr in frames], f)
        r = subprocess.run(["ip", "netns", "exec", netns, pautil.PYTHON,
                            SENDER, "vB1", path, "0.002"],
                           capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        try:
            rc = dc.wait(30)
        except subprocess.TimeoutExpired:
            with open(dc_log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            raise AssertionError("dpdk-dumpcap did not stop after %d "
                                 "packets:\n%s" % (len(frames), text))
        with open(dc_log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        assert rc == 0, "dpdk-dumpcap exited %s:\n%s" % (rc, text)
        got = pautil.read_pcap(out)       # nanosecond pcap
        missing = [i for i, fr in enumerate(frames) if fr not in got]
        assert not missing, "frames %s not captured; got %d records:\n%s" % (
            missing, len(got), text)
        assert got == frames, "captured frames out of order or altered"
        # and the daemon went on forwarding and dropping as usual
        st = d.call("stats_get")
        assert st["drops"]["acl"] == 10, st["drops"]
        assert st["ports"]["p1"]["tx_packets"] >= 30, st["ports"]
        # tcpdump reads it too
        res = pautil.run(["tcpdump", "-nn", "-r", out], timeout=30)
        assert res.rc == 0 and len(res.stdout.splitlines()) == len(frames), \
            res
    finally:
        if dc is not None and dc.poll() is None:
            dc.kill()
            dc.wait()
        rc = d.stop()
        shutil.rmtree(os.path.join("/var/run/dpdk", prefix),
                      ignore_errors=True)
    assert rc == 0, "daemon exited %s\n%s" % (rc, d.describe())
