# SPDX-License-Identifier: BSD-3-Clause
"""Lab replay mode (docs/lab.md): every packet processed exactly
once, well-formed ones forwarded byte-identical in per-flow order,
malformed ones dropped and counted, nothing leaked, outcome independent of
timing."""

import json
import os
import re
import subprocess

import pytest

import pautil
from pautil import (DAEMON, PIPE4, RTC1, RTC2, check_flow_order,
                    check_summary, match_output, read_pcap, replay,
                    write_pcap)

MODES = {
    "rtc1": RTC1,
    "rtc2": RTC2,
    "pipeline4": PIPE4,
    "pipeline-auto": {"mode": "pipeline"},
}


def _paths(tmp_path, name):
    return (str(tmp_path / (name + "-out.pcap")),
            str(tmp_path / (name + "-drops.pcap")))


def _check_mixed(pkts, res, out, drops):
    n_mal = sum(p.malformed for p in pkts)
    check_summary(res, len(pkts), {"malformed": n_mal})
    s = res.summary
    assert s["tx_packets"] == len(pkts) - n_mal
    out_idx = match_output(pkts, read_pcap(out), "output")
    want = [i for i, p in enumerate(pkts) if not p.malformed]
    missing = sorted(set(want) - set(out_idx))
    assert not missing, "well-formed packets not forwarded: %s" % [
        (i, pkts[i].kind) for i in missing[:20]]
    extra = sorted(set(out_idx) - set(want))
    assert not extra, "malformed packets forwarded: %s" % [
        (i, pkts[i].kind) for i in extra]
    check_flow_order(pkts, out_idx)
    drop_frames = read_pcap(drops)
    assert sorted(drop_frames) == sorted(p.data for p in pkts if p.malformed), \
        "drops pcap is not exactly the malformed frames: %d frames, " \
        "expected %d" % (len(drop_frames), n_mal)
    return out_idx


@pytest.mark.parametrize("mode", sorted(MODES))
def test_mixed_traffic_forwarded_identical_in_flow_order(mode, mixed,
                                                         mixed_pcap, tmp_path):
    out, drops = _paths(tmp_path, mode)
    res = replay(mixed_pcap, out, {"pipeline": MODES[mode]}, drops=drops)
    _check_mixed(mixed, res, out, drops)


def test_sample_pcap_through_all_stages_small_ring(tmp_path):
    """The committed sample in pipeline mode with small rings and bursts."""
    pkts = pautil.gen_sample.build_mixed()
    out, drops = _paths(tmp_path, "sample")
    conf = {"pipeline": dict(PIPE4, ring_size=64, burst=4)}
    res = replay(pautil.SAMPLE, out, conf, drops=drops)
    _check_mixed(pkts, res, out, drops)


def test_committed_sample_matches_generator(tmp_path):
    """tests/data/sample.pcap is what gen_sample.py writes (regenerate and
    commit it after changing the generator)."""
    regen = str(tmp_path / "sample.pcap")
    r = subprocess.run([pautil.PYTHON, os.path.join(pautil.DATA,
                                                    "gen_sample.py"),
                        "-o", regen], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    with open(regen, "rb") as a, open(pautil.SAMPLE, "rb") as b:
        assert a.read() == b.read(), "tests/data/sample.pcap is stale"
    assert os.path.getsize(pautil.SAMPLE) < 100 * 1024


@pytest.mark.parametrize("mode", ["rtc1", "pipeline4"])
def test_empty_pcap(mode, tmp_path):
    empty = str(tmp_path / "empty.pcap")
    write_pcap(empty, [])
    out, drops = _paths(tmp_path, "empty")
    res = replay(empty, out, {"pipeline": MODES[mode]}, drops=drops,
                 timeout=60)
    s = check_summary(res, 0, {})
    assert s["tx_packets"] == 0 and s["dropped_packets"] == 0
    assert read_pcap(out) == []


def test_large_replay_backpressure_no_ring_or_tx_drops(tmp_path):
    """20000 packets through 4 stage lcores (more than the CPUs) joined by
    64-slot rings, burst 8: replay waits instead of dropping."""
    pkts = pautil.gen_sample.build_bulk(20000, flows=97)
    inp = str(tmp_path / "bulk.pcap")
    write_pcap(inp, [p.data for p in pkts])
    out, drops = _paths(tmp_path, "bulk")
    conf = {"pipeline": dict(PIPE4, ring_size=64, burst=8)}
    res = replay(inp, out, conf, drops=drops, timeout=240)
    s = check_summary(res, len(pkts), {})
    assert s["tx_packets"] == len(pkts)
    idx = match_output(pkts, read_pcap(out))
    assert len(idx) == len(pkts)
    check_flow_order(pkts, idx)
    assert read_pcap(drops) == []


def test_deterministic_outcome(mixed, mixed_pcap, tmp_path):
    """Same input twice (two workers, small rings): same output packets,
    same drops, same per-flow sequences."""
    conf = {"pipeline": dict(RTC2, ring_size=64, burst=8)}
    runs = []
    for k in range(2):
        out, drops = _paths(tmp_path, "det%d" % k)
        res = replay(mixed_pcap, out, conf, drops=drops)
        check_summary(res, len(mixed))
        outs = read_pcap(out)
        per_flow = {}
        for i in match_output(mixed, outs):
            per_flow.setdefault(mixed[i].flow, []).append(i)
        runs.append((sorted(outs), sorted(read_pcap(drops)), per_flow,
                     res.summary["drops"]))
    assert runs[0][0] == runs[1][0], "different output packets"
    assert runs[0][1] == runs[1][1], "different dropped packets"
    assert runs[0][2] == runs[1][2], "different per-flow sequences"
    assert runs[0][3] == runs[1][3], "different drop counters"


def test_sample_with_default_config(tmp_path):
    """What scripts/run.sh runs: the sample through docs/examples/default.json.
    ACL and LB may act on the traffic; the malformed frames are dropped
    as malformed and the books balance."""
    pkts = pautil.gen_sample.build_mixed()
    out = str(tmp_path / "out.pcap")
    res = replay(pautil.SAMPLE, out, pautil.DEFAULT_CONF)
    s = check_summary(res, len(pkts))
    assert s["drops"]["malformed"] == sum(p.malformed for p in pkts)
    assert s["drops"]["ring_full"] == 0 and s["drops"]["tx_full"] == 0
    assert len(read_pcap(out)) == s["tx_packets"]


@pytest.mark.skipif(os.path.realpath(pautil.BUILD) !=
                    os.path.realpath(os.path.join(pautil.REPO, "build")),
                    reason="scripts/run.sh builds build/, not %s" % pautil.BUILD)
def test_run_sh_prints_summary(tmp_path):
    out = str(tmp_path / "run-out.pcap")
    env = dict(os.environ, OUT=out)
    r = subprocess.run(["bash", os.path.join(pautil.REPO, "scripts", "run.sh")],
                       cwd="/", env=env, capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    res = pautil.Result(["scripts/run.sh"], r.returncode,
                        r.stdout.decode("utf-8", "replace"),
                        r.stderr.decode("utf-8", "replace"))
    check_summary(res, pautil.gen_sample.SAMPLE_COUNT)
    assert len(read_pcap(out)) == res.summary["tx_packets"]


def test_replay_missing_input_fails(run_replay, tmp_path):
    res = run_replay(str(tmp_path / "nope.pcap"), {"pipeline": RTC1},
                     timeout=60)
    assert res.rc not in (0, None), res
    assert res.stderr.strip(), "no reason on stderr: %r" % res


def test_side_by_side_replays(mixed, mixed_pcap, tmp_path):
    """Two replays at once (no shared runtime directory between them)."""
    procs = []
    for k in range(2):
        out, drops = _paths(tmp_path, "par%d" % k)
        conf = str(tmp_path / ("par%d.json" % k))
        pautil.write_json(conf, {"pipeline": RTC1})
        p = subprocess.Popen([DAEMON, "--replay", mixed_pcap, "--replay-out",
                              out, "--replay-drops", drops, "-c", conf],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        procs.append((p, out, drops))
    for p, out, drops in procs:
        try:
            o, e = p.communicate(timeout=pautil.REPLAY_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
        res = pautil.Result(p.args, p.returncode, o.decode("utf-8", "replace"),
                            e.decode("utf-8", "replace"))
        _check_mixed(mixed, res, out, drops)


# --------------------------------------------------------------------------
# the summary for people (a table before the JSON line)

def _table_rows(text):
    """The table's "  name  N" rows: {name: N}."""
    rows = {}
    for ln in text.splitlines():
        m = re.match(r"^ {2,4}(\w[\w ]*?)\s+(\d+)(\s|$)", ln)
        if m:
            rows[m.group(1)] = int(m.group(2))
    return rows


def _check_table(text, s):
    assert "replay summary: %d packets in " % s["rx_packets"] in text, text
    rows = _table_rows(text)
    for k in ("rx_packets", "tx_packets", "dropped_packets", "mbufs_in_use"):
        assert rows.get(k) == s[k], (k, rows, s)
    for reason, n in s["drops"].items():
        if n:
            assert rows.get(reason) == n, (reason, rows)
        else:
            assert reason not in rows, (reason, text)
    if "lb" in s:
        assert rows.get("lb balanced") == s["lb"]["balanced"], rows


def test_replay_summary_table_on_stderr(tmp_path):
    """The table goes to stderr; stdout (not a terminal) keeps only the
    JSON line, still the last."""
    out = str(tmp_path / "t-out.pcap")
    res = replay(pautil.SAMPLE, out, pautil.DEFAULT_CONF)
    s = check_summary(res, pautil.gen_sample.SAMPLE_COUNT)
    _check_table(res.stderr, s)
    assert "replay summary" not in res.stdout, res


def test_replay_summary_table_on_a_terminal_stdout(tmp_path):
    """stdout a terminal (stderr not): the table on stdout too, before
    the JSON line, which stays the last line."""
    import pty
    out = str(tmp_path / "tty-out.pcap")
    master, slave = pty.openpty()
    p = subprocess.Popen([DAEMON, "--replay", pautil.SAMPLE, "--replay-out",
                          out, "-c", pautil.DEFAULT_CONF], stdout=slave,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:           # EIO: the child closed the terminal
                break
            if not b:
                break
            chunks.append(b)
        err = p.stderr.read().decode("utf-8", "replace")
        assert p.wait(timeout=pautil.REPLAY_TIMEOUT) == 0, err
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    s = json.loads(lines[-1])
    assert s["rx_packets"] == pautil.gen_sample.SAMPLE_COUNT, text
    assert "replay summary" in text.split(lines[-1])[0], text
    _check_table(text, s)
    _check_table(err, s)
