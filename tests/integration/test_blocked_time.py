# SPDX-License-Identifier: BSD-3-Clause
"""perf/blocked_time.py (effective blocked time of runtime changes), a
quick run: the baseline, an ACL rule add and a backend add at a low rate,
twice each. Its arithmetic (lost = sent - received - expected drops,
blocked time = lost / rate), its JSON and table formats, and 0 packets
lost for those changes: the count is exact (kernel counters of the veths
at both ends), so any loss is a finding, not noise. Needs root, `ip
netns` and tcpreplay."""

import json
import os
import re
import shutil
import subprocess

import pytest

from pautil import REPO

PY = "/usr/bin/python3"
TOOL = os.path.join(REPO, "perf", "blocked_time.py")
KINDS = ["none", "acl_rule_add", "lb_backend_add"]
RATE = 20000
SECONDS = 1.5


def _usable():
    if os.geteuid() != 0:
        return "needs root (network namespaces, AF_PACKET)"
    for tool in ("ip", "tcpreplay"):
        if shutil.which(tool) is None:
            return "%s not installed (scripts/deps.sh installs it)" % tool
    return None


@pytest.mark.skipif(_usable() is not None, reason=str(_usable()))
def test_blocked_time_quick_run_counts_exactly_and_loses_nothing(tmp_path):
    out = str(tmp_path / "blocked.json")
    build = os.environ.get("PKTACCEL_BUILD_DIR", os.path.join(REPO, "build"))
    tag = "bt%d" % (os.getpid() % 100000)
    r = subprocess.run(
        [PY, TOOL, "--rate", str(RATE), "--seconds", str(SECONDS),
         "--repeat", "2", "--kinds", ",".join(KINDS), "--tag", tag,
         "--build", build, "--out", out, "--json"],
        capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    text = r.stdout.decode()
    assert r.returncode == 0, text[-3000:] + r.stderr.decode()[-3000:]
    with open(out) as f:
        res = json.load(f)
    # the JSON line on stdout is the file's content
    assert json.loads(text.strip().splitlines()[-1]) == res
    assert res["rate_pps"] == RATE and res["repeat"] == 2
    assert [k["kind"] for k in res["kinds"]] == KINDS
    for k in res["kinds"]:
        assert len(k["runs"]) == 2, k
        for run in k["runs"]:
            # tcpreplay's exact count, as the kernel saw it leave
            assert run["sent"] == int(RATE * SECONDS), run
            assert run["lost"] == (run["sent"] - run["received"]
                                   - run["expected_drops"]), run
            assert run["blocked_s"] == run["lost"] / RATE, run
            assert run["lost"] == 0, (k["kind"], run)
            # the daemon's own view agrees: all it took, it sent
            assert run["daemon_rx"] == run["sent"], run
            assert run["daemon_tx"] == run["received"], run
        assert k["lost_total"] == sum(x["lost"] for x in k["runs"])
        assert k["blocked_s_max"] == max(x["blocked_s"] for x in k["runs"])
    # half the traffic is to the service: balanced, not merely forwarded
    base = res["kinds"][0]["runs"][0]
    assert base["lb_packets"] == base["sent"] // 2, base
    assert [x["result"] for x in res["kinds"][1]["runs"]] == [{"id": 501},
                                                             {"id": 502}]
    # the table: a header, a rule, one row per kind
    rows = [x for x in text.splitlines() if x.startswith("| ")]
    assert rows[0].startswith("| change | runs | sent (per run) | lost")
    for kind, row in zip(KINDS, rows[1:]):
        assert re.match(r"\| `%s` \| 2 \| %d \| 0, 0 \| 0\.000000 s \| "
                        r"[0-9.]+ \|$" % (kind, int(RATE * SECONDS)),
                        row), row
    assert len(rows) == 1 + len(KINDS)
