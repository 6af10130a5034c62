# SPDX-License-Identifier: BSD-3-Clause
"""The perf tooling (perf/run.py, perf/charts.py), cheaply: --compare on
two small synthetic results prints each figure's change (absolute, %,
better or worse), the charts come out as real PNGs from a sample result,
and the cheapest scenario runs end to end with a tiny window."""

import json
import os
import re
import subprocess
import threading
import time

import pytest

from pautil import DAEMON, REPO

PY = "/usr/bin/python3"
RUN = os.path.join(REPO, "perf", "run.py")
CHARTS = os.path.join(REPO, "perf", "charts.py")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _fig(value, unit, better, runs=None):
    return {"value": value, "unit": unit, "better": better,
            "runs": runs if runs is not None else [value]}


def _result(figures, **extra):
    res = {"date": "2026-12-02T00:00:00", "git": "test",
           "machine": {"cpus": 2, "cpu_model": "test"},
           "config": {"pairs": 3, "seconds": 5, "flows": 10000,
                      "big_flows": 1000000, "rules": 1000},
           "figures": figures}
    res.update(extra)
    return res


def _write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return str(path)


def _line(out, figure):
    lines = [x for x in out.splitlines() if x.split()[:1] == [figure]]
    assert len(lines) == 1, "no single line for %s in:\n%s" % (figure, out)
    return lines[0]


def test_compare_prints_each_change_absolute_and_percent(tmp_path):
    old = _result({
        "passthrough.ratio": _fig(0.70, "x", "higher"),
        "acl1k.pktaccel_cycles_per_packet": _fig(200.0, "cycles/packet",
                                                 "lower"),
        "acl_lb.pktaccel_mpps": _fig(8.0, "Mpps", "higher"),
        "modes.nat_vs_ipip": _fig(0.95, "x", "higher"),
        "latency.p99_ns": _fig(1800, "ns", "lower"),
    })
    new = _result({
        "passthrough.ratio": _fig(0.77, "x", "higher"),
        "acl1k.pktaccel_cycles_per_packet": _fig(180.0, "cycles/packet",
                                                 "lower"),
        "acl_lb.pktaccel_mpps": _fig(6.0, "Mpps", "higher"),
        "modes.nat_vs_ipip": _fig(0.95, "x", "higher"),
        "pipeline.ratio": _fig(1.2, "x", "higher"),
    })
    new["config"]["seconds"] = 2
    # the old one from before run.py said which memory: --no-huge
    new["config"]["memory"] = "2M huge pages"
    r = subprocess.run([PY, RUN, "--compare", _write(tmp_path / "o.json", old),
                        "--new", _write(tmp_path / "n.json", new)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    ln = _line(out, "passthrough.ratio")
    assert "0.7" in ln and "0.77" in ln and "+0.07" in ln, ln
    assert "(+10.0%)" in ln and ln.endswith("better"), ln
    ln = _line(out, "acl1k.pktaccel_cycles_per_packet")
    # fewer cycles is better
    assert "-20 cycles/packet (-10.0%) better" in ln, ln
    ln = _line(out, "acl_lb.pktaccel_mpps")
    assert "-2 Mpps (-25.0%) worse" in ln, ln
    ln = _line(out, "modes.nat_vs_ipip")
    assert "+0 x (+0.0%)" in ln and "better" not in ln and \
        "worse" not in ln, ln
    assert "only in the new result" in _line(out, "pipeline.ratio")
    assert "only in the old result" in _line(out, "latency.p99_ns")
    # results taken with other settings are compared, and said to be
    assert "(not the same settings: memory --no-huge -> 2M huge pages, " \
        "seconds 5 -> 2)" in out, out


def test_compare_of_a_missing_file_fails_with_its_name(tmp_path):
    new = _write(tmp_path / "n.json", _result({}))
    r = subprocess.run([PY, RUN, "--compare", str(tmp_path / "nope.json"),
                        "--new", new], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0
    assert "nope.json" in r.stderr, r.stderr


def _sample_run():
    f = {}
    for scen, pa, peer, pk in (
            ("passthrough", 20.0, 28.0, "testpmd"),
            ("acl1k", 15.0, 14.0, "l3fwd"),
            ("acl_lb", 8.0, 13.0, "l3fwd")):
        f["%s.pktaccel_mpps" % scen] = _fig(pa, "Mpps", "higher",
                                            [pa * 0.9, pa, pa * 1.1])
        f["%s.%s_mpps" % (scen, pk)] = _fig(peer, "Mpps", "higher")
        f["%s.pktaccel_cycles_per_packet" % scen] = _fig(
            2100 / pa, "cycles/packet", "lower")
        f["%s.%s_cycles_per_packet" % (scen, pk)] = _fig(
            2100 / peer, "cycles/packet", "lower")
    f["flows1m.pktaccel_mpps"] = _fig(6.0, "Mpps", "higher")
    f["flows1m.pktaccel_cycles_per_packet"] = _fig(350.0, "cycles/packet",
                                                   "lower")
    for m in ("nat", "dsr", "ipip6", "ipip"):
        f["modes.%s_mpps" % m] = _fig(7.5, "Mpps", "higher")
        f["modes.%s_cycles_per_packet" % m] = _fig(280.0, "cycles/packet",
                                                   "lower")
    f["pipeline.pipeline_tx_mpps"] = _fig(9.0, "Mpps", "higher")
    f["pipeline.rtc_tx_mpps"] = _fig(7.6, "Mpps", "higher")
    for p, v in (("p50", 1200), ("p90", 1500), ("p99", 1800),
                 ("p999", 50000)):
        f["latency.%s_ns" % p] = _fig(v, "ns", "lower")
    return _result(f)


def _sample_fleet():
    return {"date": "2026-12-01", "cpus": 2,
            "failover": {"bfd": {"bfd": True, "seconds": [0.51, 0.52, 0.5],
                                 "median": 0.51},
                         "hold_time": {"bfd": False,
                                       "seconds": [2.2, 2.9, 2.5],
                                       "median": 2.5}},
            "drain": {"runs": [{"withdrawn_s": 0.05}, {"withdrawn_s": 0.1}]},
            "load": [{"appliances": n, "cps": 1800.0 / n, "rps": 3600.0,
                      "cps_runs": [1700.0 / n, 1800.0 / n, 1900.0 / n],
                      "rps_runs": [3500.0, 3600.0, 3700.0]}
                     for n in (1, 2, 3)]}


def test_charts_draws_valid_pngs_from_sample_results(tmp_path):
    run = _write(tmp_path / "run.json", _sample_run())
    fleet = _write(tmp_path / "fleet.json", _sample_fleet())
    out = tmp_path / "img"
    empty = tmp_path / "results"
    empty.mkdir()
    r = subprocess.run([PY, CHARTS, "--results", str(empty), "--out",
                        str(out), "--run", run, "--fleet", fleet],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    names = sorted(os.listdir(out))
    assert names == ["fleet-cps.png", "fleet-failover.png", "perf-cycles.png",
                     "perf-latency.png", "perf-mpps.png"], names
    for n in names:
        with open(out / n, "rb") as f:
            data = f.read()
        assert data[:8] == PNG_SIGNATURE, n
        # a drawn chart, not an empty canvas; small enough for the docs
        assert 5000 < len(data) < 100 * 1024, (n, len(data))


def _charts_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("pa_charts", CHARTS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("what", ["mpps", "cycles"])
def test_charts_1m_bar_beside_l3fwd_on_the_1m_traffic(what):
    """The 1M-flow bar's peer is l3fwd-acl on the same 1M-flow traffic
    where the run measured it, else (older runs) the 10k-flow run's,
    labelled so."""
    ch = _charts_module()
    unit = "_mpps" if what == "mpps" else "_cycles_per_packet"
    figs = {"acl_lb.pktaccel" + unit: _fig(17.0, "x", "higher"),
            "acl_lb.l3fwd" + unit: _fig(26.0, "x", "higher"),
            "flows1m.pktaccel" + unit: _fig(6.0, "x", "higher")}
    old = {r[0]: r for r in ch.scenario_rows(_result(dict(figs)), what)}
    figs["flows1m.l3fwd" + unit] = _fig(11.0, "x", "higher")
    new = {r[0]: r for r in ch.scenario_rows(_result(figs), what)}
    big, small = "ACL+LB\n1M flows", "ACL+LB\n10k flows"
    assert new[big][1:] == ("flows1m.pktaccel" + unit,
                            "flows1m.l3fwd" + unit, "l3fwd-acl")
    assert old[big][1:] == ("flows1m.pktaccel" + unit,
                            "acl_lb.l3fwd" + unit, "l3fwd-acl (10k flows)")
    assert new[small][2] == old[small][2] == "acl_lb.l3fwd" + unit


def test_charts_with_no_results_says_so(tmp_path):
    empty = tmp_path / "results"
    empty.mkdir()
    r = subprocess.run([PY, CHARTS, "--results", str(empty), "--out",
                        str(tmp_path / "img")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    assert "nothing to draw" in r.stderr, r.stderr


def test_run_only_latency_end_to_end_writes_table_and_json(tmp_path):
    """The cheapest scenario (two daemons, no peer, no rules) with a
    0.5 s window: about 5 s on a quiet 2-CPU machine."""
    base = str(tmp_path / "res")
    t0 = time.time()
    r = subprocess.run([PY, RUN, "--no-huge", "--only", "latency",
                        "--pairs", "1", "--rules", "0", "--seconds", "0.5",
                        "--warmup", "0.2", "--no-wake", "--daemon", DAEMON,
                        "--tag", "pa-test-perf-%d" % os.getpid(),
                        "--out", base], capture_output=True, text=True,
                       timeout=120)
    took = time.time() - t0
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    with open(base + ".json") as f:
        res = json.load(f)
    assert res["failures"] == []
    assert res["config"]["memory"] == "--no-huge" and \
        res["config"]["memory_why"] == "--no-huge asked for", res["config"]
    assert [x["member"] for x in res["runs"]] == ["pa_lat_on", "pa_lat_off"]
    fig = res["figures"]
    p50, p99 = fig["latency.p50_ns"]["value"], fig["latency.p99_ns"]["value"]
    assert 0 < p50 <= p99, fig
    assert fig["latency.on_cycles_per_packet"]["value"] > 0, fig
    with open(base + ".md") as f:
        md = f.read()
    assert "| latency at full load" in md and "p99.9" in md, md
    assert "| latency at full load" in r.stdout
    print("took %.1f s" % took)


NR_2M = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"


def _huge_in_use():
    with open("/proc/meminfo") as f:
        m = f.read()
    total = int(re.search(r"HugePages_Total:\s+(\d+)", m).group(1))
    free = int(re.search(r"HugePages_Free:\s+(\d+)", m).group(1))
    return total - free


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(NR_2M),
                    reason="needs root and 2 MB huge pages")
def test_run_default_runs_on_huge_pages_and_releases_them(tmp_path):
    """By default (--memory auto), as root with none reserved, the
    scenario's daemons run on 2 MB pages that run.py reserved (seen in use
    while it runs), the result says so, and no page or mount is left
    after."""
    with open(NR_2M) as f:
        if int(f.read()) != 0:
            pytest.skip("2 MB pages already reserved here: not touching them")
    base = str(tmp_path / "res")
    tag = "pa-test-huge-%d" % os.getpid()
    used, done = [0], threading.Event()

    def watch():
        while not done.wait(0.05):
            used[0] = max(used[0], _huge_in_use())
    t = threading.Thread(target=watch)
    t.start()
    try:
        r = subprocess.run([PY, RUN, "--only", "latency",
                            "--pairs", "1", "--rules", "0", "--seconds",
                            "0.3", "--warmup", "0.2", "--no-wake",
                            "--daemon", DAEMON, "--tag", tag, "--out", base],
                           capture_output=True, text=True, timeout=180)
    finally:
        done.set()
        t.join()
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    with open(base + ".json") as f:
        res = json.load(f)
    assert res["failures"] == [] and \
        res["config"]["memory"] == "2M huge pages" and \
        res["config"]["memory_why"] is None, res["config"]
    with open(base + ".md") as f:
        assert ", 2M huge pages, " in f.readline()
    assert used[0] > 0, "no huge page was in use during the run"
    with open(NR_2M) as f:
        assert int(f.read()) == 0, "run.py left huge pages reserved"
    with open("/proc/mounts") as f:
        assert tag + "-huge" not in f.read()


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(NR_2M),
                    reason="needs root and 2 MB huge pages")
def test_run_default_falls_back_to_no_huge_and_says_why(tmp_path):
    """Pages someone else reserved are not run.py's to use or release:
    by default it runs on --no-huge memory and says why (on stdout, in
    the JSON and on the table's first line); --huge refuses to start.
    Their reservation is left as it was."""
    with open(NR_2M) as f:
        if int(f.read()) != 0:
            pytest.skip("2 MB pages already reserved here: not touching them")
    base = str(tmp_path / "res")
    tag = "pa-test-nohuge-%d" % os.getpid()
    cmd = [PY, RUN, "--only", "latency", "--pairs", "1", "--rules", "0",
           "--seconds", "0.3", "--warmup", "0.2", "--no-wake", "--daemon",
           DAEMON, "--tag", tag, "--out", base]
    with open(NR_2M, "w") as f:
        f.write("1")
    try:
        with open(NR_2M) as f:
            if int(f.read()) != 1:
                pytest.skip("could not reserve one 2 MB page")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        refused = subprocess.run(cmd[:2] + ["--huge"] + cmd[2:],
                                 capture_output=True, text=True, timeout=60)
        with open(NR_2M) as f:
            left = int(f.read())
    finally:
        with open(NR_2M, "w") as f:
            f.write("0")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "run.py: on --no-huge memory: 1 huge pages are reserved " \
        "already" in r.stdout, r.stdout[-2000:]
    with open(base + ".json") as f:
        res = json.load(f)
    assert res["failures"] == [] and res["config"]["memory"] == "--no-huge"
    assert "reserved already" in res["config"]["memory_why"], res["config"]
    with open(base + ".md") as f:
        assert ", --no-huge (1 huge pages are reserved already" in \
            f.readline()
    assert refused.returncode != 0 and "run.py: --huge: 1 huge pages are " \
        "reserved already" in refused.stderr, refused.stderr
    assert left == 1, "run.py changed someone else's reservation"


RING_HOP = os.path.join(os.path.dirname(os.path.dirname(DAEMON)), "perf",
                        "bench_ring_hop")


def test_ring_hop_bench_splits_the_hop_and_writes_json(tmp_path):
    """perf/ring_hop/bench_ring_hop (run.py's "measured alone" ring hop):
    every variant moves packets between its two lcores and times each
    part; the JSON carries what run.py reads. No figure is judged."""
    out = str(tmp_path / "hop.json")
    r = subprocess.run([RING_HOP, "--seconds", "0.1", "--rounds", "2",
                        "--variant", "ring,lines,ahead,local", "--json", out,
                        "--file-prefix", "pa-test-ring-hop-%d" % os.getpid()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "per hop, cycles/packet: ring operation" in r.stdout, r.stdout
    with open(out) as f:
        j = json.load(f)
    assert j["burst"] == 32 and j["ring"] == 1024 and j["tsc_hz"] > 0, j
    assert sorted(j["variants"]) == ["ahead", "lines", "local", "ring"], j
    for name, v in j["variants"].items():
        assert v["mpps"] > 0, (name, v)
        assert v["ring_per_hop"] > 0 and v["stage_deq"] > 0, (name, v)
        # only the pointers cross in "ring": no line is touched
        if name != "ring":
            assert v["stage_touch"] > 0 and v["tx_touch"] > 0, (name, v)


def test_ring_hop_bench_refuses_bad_arguments():
    for bad in (["--burst", "0"], ["--burst", "x"], ["--ring", "16"],
                ["--variant", "none"], ["--cpus", "0,0"],
                ["--rounds", "0"], ["--seconds", "-1"]):
        r = subprocess.run([RING_HOP] + bad, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (bad, r.stdout, r.stderr)
        assert "usage:" in r.stderr, (bad, r.stderr)


def _run_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("pa_perf_run", RUN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_flows1m_splits_the_growth_into_source_and_lb():
    """flows1m's figures from one pair's runs: the whole growth 1M over
    10k, the same traffics without the service (traffic source, parse,
    ACL), and the LB's own share as the difference of the two."""
    run = _run_module()

    class Ctx:
        tsc_hz = 2e9
    runs = {"pa_lb_big": {"mpps": 5.0, "cpu_cycles_per_packet": 300.0},
            "pa_lb": {"mpps": 12.0, "cpu_cycles_per_packet": 150.0},
            "l3fwd_lb": {"mpps": 25.0, "cpu_s_per_packet": 40e-9},
            "pa_nolb_big": {"mpps": 8.0, "cpu_cycles_per_packet": 180.0},
            "pa_nolb": {"mpps": 20.0, "cpu_cycles_per_packet": 90.0}}
    f = run.pair_figures(Ctx(), "flows1m", runs)
    # no 1M peer run: against the 10k one
    assert f["cycles_vs_10k"] == 2.0 and f["ratio"] == 0.2, f
    assert f["l3fwd_cycles_vs_10k"] is None, f
    # the peer on the same 1M traffic, when it ran: the ratio is against
    # it, and its own growth is beside ours
    runs["l3fwd_lb_big"] = {"mpps": 10.0, "cpu_s_per_packet": 100e-9}
    f = run.pair_figures(Ctx(), "flows1m", runs)
    assert f["ratio"] == 0.5 and f["l3fwd_mpps"] == 10.0, f
    assert abs(f["ratio_cpu"] - 200.0 / 300.0) < 1e-9, f
    assert abs(f["l3fwd_cycles_vs_10k"] - 2.5) < 1e-9, f
    # ... and a failed one falls back to the 10k peer
    runs["l3fwd_lb_big"] = {"error": "boom"}
    f = run.pair_figures(Ctx(), "flows1m", runs)
    assert f["ratio"] == 0.2 and f["l3fwd_cycles_vs_10k"] is None, f
    assert f["nolb_cycles_per_packet"] == 180.0 and \
        f["nolb_10k_cycles_per_packet"] == 90.0 and \
        f["nolb_cycles_vs_10k"] == 2.0, f
    assert f["lb_cycles_per_packet"] == 120.0 and \
        f["lb_10k_cycles_per_packet"] == 60.0 and \
        f["lb_cycles_vs_10k"] == 2.0, f
    assert run.figure_info("flows1m.lb_cycles_vs_10k") == ("x", "lower")
    # a failed run leaves its figures out, not wrong
    runs["pa_nolb"] = {"error": "boom"}
    f = run.pair_figures(Ctx(), "flows1m", runs)
    assert f["lb_10k_cycles_per_packet"] is None and \
        f["lb_cycles_vs_10k"] is None and f["cycles_vs_10k"] == 2.0, f


def test_daemon_b_takes_b_over_a_within_each_pair_and_tables_it():
    """--daemon-b: each pktaccel run gets a B twin beside it (before it on
    odd pairs) made on daemon B; B's figures come from the same code over
    the same peer runs, the peers' own left out; B over A is taken within
    each pair, then the median and the pairs' range, in a table of its own
    after the usual one, which stays as it was."""
    run = _run_module()
    members = run.with_b(["pa_pass", "testpmd_io", "pa_lb", "l3fwd_lb"])
    assert members == ["pa_pass", "pa_pass:b", "testpmd_io", "pa_lb",
                       "pa_lb:b", "l3fwd_lb"], members

    class Ctx:
        tsc_hz = 2e9
        daemon_b = "/b/pktaccel"
    # a B twin runs its member on daemon B, and A's is back after
    a_daemon = run.ba.DAEMON
    run.MEMBERS["pa_which"] = lambda ctx: (run.ba.DAEMON, run.bench.DAEMON)
    assert run.run_member(Ctx(), "pa_which:b") == ("/b/pktaccel",) * 2
    assert run.run_member(Ctx(), "pa_which") == (a_daemon, run.bench.DAEMON)
    assert run.ba.DAEMON == a_daemon

    def pa(mpps, cyc):
        return {"mpps": mpps, "cpu_cycles_per_packet": cyc}
    pairs = [
        # B 10% faster and 10% cheaper; acl_lb the same on both
        {"pa_pass": pa(20.0, 100.0), "pa_pass:b": pa(22.0, 90.0),
         "testpmd_io": {"mpps": 25.0, "cpu_s_per_packet": 40e-9},
         "pa_lb": pa(8.0, 250.0), "pa_lb:b": pa(8.0, 250.0),
         "l3fwd_lb": {"mpps": 12.0, "cpu_s_per_packet": 50e-9}},
        # a slower phase for both: B 5% faster, 10% cheaper; B's acl_lb
        # run failed
        {"pa_pass": pa(18.0, 110.0), "pa_pass:b": pa(18.9, 99.0),
         "testpmd_io": {"mpps": 24.0, "cpu_s_per_packet": 40e-9},
         "pa_lb": pa(7.0, 260.0), "pa_lb:b": {"error": "boom"},
         "l3fwd_lb": {"mpps": 11.0, "cpu_s_per_packet": 50e-9}},
    ]
    per_pair = {"passthrough": [], "acl_lb": []}
    per_pair_b = {"passthrough": [], "acl_lb": []}
    for runs in pairs:
        for s in per_pair:
            per_pair[s].append(run.pair_figures(Ctx(), s, runs))
            per_pair_b[s].append(run.b_pair_figures(Ctx(), s, runs,
                                                    per_pair[s][-1]))
    b = run.summarize_b(per_pair_b)
    assert not [k for k in b if "testpmd" in k or "l3fwd" in k], list(b)
    f = b["passthrough.pktaccel_mpps"]
    assert f["runs"] == [22.0, 18.9] and f["unit"] == "Mpps", f
    assert f["b_over_a"]["runs"] == pytest.approx([1.1, 1.05]), f
    # B's ratio against the very same testpmd run
    assert b["passthrough.ratio"]["runs"] == pytest.approx([22 / 25,
                                                           18.9 / 24])
    assert b["passthrough.ratio_cpu"]["b_over_a"]["value"] == \
        pytest.approx(100 / 90)
    assert b["acl_lb.pktaccel_mpps"]["b_over_a"]["runs"] == [1.0, None]

    res = _result(run.summarize(per_pair), b=b, daemons={
        "a": {"path": "/a/pktaccel", "git": "v1-3-gabc", "mtime": "T1",
              "size": 1, "sha256": "aa"},
        "b": {"path": "/b/pktaccel", "git": None, "mtime": "T2",
              "size": 2, "sha256": "bb"}})
    text = run.table(res)
    plain = run.table({k: v for k, v in res.items() if k != "b"})
    assert text.startswith(plain) and "B over A" not in plain, text
    ab = text[len(plain):]
    assert "- A: /a/pktaccel (git v1-3-gabc, built T1, 1 bytes, sha256 " \
        "aa)" in ab and "- B: /b/pktaccel (built T2, " in ab, ab
    assert "< 1 is B cheaper for cycles/packet" in ab, ab
    assert "| passthrough.pktaccel_mpps | Mpps | 19.00 | 20.45 | " \
        "1.075 (1.050–1.100) | > 1 |" in ab, ab
    assert "| passthrough.pktaccel_cycles_per_packet | cycles/packet | " \
        "105 | 94.5 | 0.900 (0.900–0.900) | < 1 |" in ab, ab
    # the failed B run: one pair's B over A, no range
    assert "| acl_lb.pktaccel_mpps | Mpps | 7.50 | 8.00 | 1.000 | > 1 |" \
        in ab, ab
    assert "(old was run with --daemon-b: these are its A figures" in \
        run.compare(res, _result({}))


def test_results_name_binaries_relative_to_the_repository(tmp_path):
    """A result identifies a binary without a directory of the machine
    that ran it: a file in the repository by its path from the
    repository's root, one outside it by '.../' and its last three
    components; the hash still tells builds apart."""
    run = _run_module()
    inside = run.daemon_info(RUN)
    assert inside["path"] == os.path.join("perf", "run.py"), inside
    exe = tmp_path / "elsewhere" / "build" / "app" / "pktaccel"
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"\x7fELF not really")
    outside = run.daemon_info(str(exe))
    assert outside["path"] == ".../build/app/pktaccel", outside
    assert str(tmp_path) not in json.dumps(outside), outside
    assert outside["sha256"] != inside["sha256"]
    assert run.ba.shown_path(None) is None
    # a relative argument is taken from the current directory, as the
    # benchmarks' --daemon is
    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        assert run.ba.shown_path("build/app/pktaccel") == \
            os.path.join("build", "app", "pktaccel")
    finally:
        os.chdir(cwd)


PROXY_V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def _fnat_member_replay(tmp_path, run, ctx, m):
    """Member m's traffic replayed once through its own service and pool
    (no ACL): the summary and the frames sent."""
    import pautil
    from pautil import RTC1, check_summary, read_pcap
    t, svc, extra = run.fnat_member(ctx, m)
    lb = {"local_addr": "192.0.2.254", "services": [svc]}
    lb.update(extra)
    out = str(tmp_path / (m + "-out.pcap"))
    res = pautil.replay(t["pcap"], out, {"pipeline": RTC1, "lb": lb},
                        timeout=pautil.REPLAY_TIMEOUT)
    return t, svc, extra, check_summary(res, t["n"], {}), read_pcap(out)


def test_modes_fnat_members_build_configs_and_traffic_that_take_their_path(
        tmp_path):
    """run.py's full NAT members without the benchmark: each one's
    service, pool and traffic, replayed once, are balanced whole (no
    drop, every frame from a pool address); the pool holds far more
    ports than the flows; the TCP traffic is client -> VIP connections
    that each open with a SYN, so the PROXY member's frames carry the v2
    header (its state started) and the same traffic without PROXY none;
    and the modes figures take fnat against ipip (goal >= 0.9) and the
    PROXY member against the same TCP traffic without it."""
    scapy = pytest.importorskip("scapy.all")
    run = _run_module()

    class Args:
        flows, rules = 40, 10

    class Ctx:
        traffic = run.Traffic(str(tmp_path), Args())
        tsc_hz = 1e9

    ctx = Ctx()
    pool = set(run.FNAT_POOL["addrs"])
    for m in ("pa_fnat", "pa_fnat_tcp", "pa_fnat_proxy"):
        assert m in run.MEMBERS and m in run.SCENARIOS["modes"], m
        t, svc, extra, s, frames = _fnat_member_replay(tmp_path, run, ctx, m)
        assert svc["forward"] == "fnat", svc
        lo, hi = (int(x) for x in extra["fnat"]["ports"].split("-"))
        assert len(extra["fnat"]["addrs"]) * (hi - lo + 1) >= 100 * Args.flows
        assert s["tx_packets"] == t["n"] and len(frames) == t["n"], (m, s)
        pkts = [scapy.Ether(f) for f in frames]
        assert all(p[scapy.IP].src in pool for p in pkts), m
        if m == "pa_fnat":
            assert t["n"] == Args.flows
            continue
        assert svc["proto"] == "tcp" and t["n"] == Args.flows * (
            2 + run.FNAT_TCP_DATA), (svc, t["n"])
        # the huge pages run.py reserves hold its preloaded frames
        assert run.max_frames(Args(), ["modes"]) >= t["n"]
        first = [scapy.Ether(f) for f in _frames(t["pcap"])[:Args.flows]]
        assert all(p[scapy.TCP].flags == "S" for p in first), m
        with_hdr = [p for p in pkts
                    if bytes(p[scapy.TCP].payload).startswith(PROXY_V2_SIG)]
        if m == "pa_fnat_tcp":
            assert svc.get("proxy_protocol") is None and not with_hdr
        else:
            assert svc["proxy_protocol"] == "v2" and with_hdr, m

    runs = {"pa_lb": {"mpps": 2.0, "cpu_cycles_per_packet": 500.0},
            "pa_fnat": {"mpps": 1.9, "cpu_cycles_per_packet": 520.0},
            "pa_fnat_tcp": {"mpps": 1.8, "cpu_cycles_per_packet": 550.0},
            "pa_fnat_proxy": {"mpps": 1.5, "cpu_cycles_per_packet": 660.0}}
    f = run.pair_figures(ctx, "modes", runs)
    assert abs(f["fnat_vs_ipip"] - 0.95) < 1e-9, f
    assert abs(f["fnat_vs_ipip_cpu"] - 500.0 / 520.0) < 1e-9, f
    assert abs(f["proxy_vs_fnat_tcp"] - 1.5 / 1.8) < 1e-9, f
    assert f["proxy_cost_cycles_per_packet"] == 110.0, f
    assert run.GOALS["modes.fnat_vs_ipip"] == ">= 0.9"
    assert run.figure_info("modes.proxy_vs_fnat_tcp") == ("x", "higher")
    text = run.table(_result(run.summarize({"modes": [f]})))
    fnat = [x for x in text.splitlines() if "LB fnat (full NAT" in x]
    assert len(fnat) == 1 and "0.95" in fnat[0] and ">= 0.9" in fnat[0], text
    assert "fnat, same TCP traffic" in text, text


def _frames(path):
    from pautil import read_pcap
    return read_pcap(path)
