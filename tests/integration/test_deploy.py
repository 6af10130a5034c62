# SPDX-License-Identifier: BSD-3-Clause
"""Deployment: scripts/setup-hugepages.sh and scripts/bind-nics.sh (dry runs,
refusals, a real huge page reservation used by the daemon, binding against a
fake sysfs with a stand-in dpdk-devbind.py), the systemd units
(systemd-analyze verify, and the command line pktaccel.service runs, started
for real), `meson install`, and NIC profiles applied to and checked against
real devices (docs/operations.md, drivers-config/)."""

import glob
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import uuid

import pytest

import pautil
from pautil import BUILD, DAEMON, REPO, SAMPLE, Daemon, unique, write_json

SCRIPTS = os.path.join(REPO, "scripts")
HUGE = os.path.join(SCRIPTS, "setup-hugepages.sh")
BIND = os.path.join(SCRIPTS, "bind-nics.sh")
UNITS = os.path.join(SCRIPTS, "systemd")
PROFILES = os.path.join(REPO, "drivers-config")
HUGEPAGES_PY = "/usr/bin/dpdk-hugepages.py"
DEVBIND_PY = "/usr/bin/dpdk-devbind.py"
EAL_VDEV = ["--no-huge", "--no-shconf", "--no-pci", "-m", "512", "-l", "0,1"]

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def sh(args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(args, capture_output=True, timeout=timeout, env=e,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def lines(text):
    return [ln for ln in text.splitlines() if ln.strip()]


# --------------------------------------------------------------- shellcheck

@pytest.mark.parametrize("script", ["setup-hugepages.sh", "bind-nics.sh"])
def test_script_passes_shellcheck_and_has_help(script):
    path = os.path.join(SCRIPTS, script)
    assert os.access(path, os.X_OK), "%s is not executable" % path
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (scripts/deps.sh installs it)")
    rc, out, err = sh(["shellcheck", path])
    assert rc == 0, out + err
    rc, out, err = sh([path, "--help"])
    assert rc == 0 and "--dry-run" in out and "Usage:" in out, out + err
    rc, out, err = sh([path, "--no-such-option"])
    assert rc == 1 and "unknown" in err, (rc, out, err)


# ------------------------------------------------------ setup-hugepages.sh

def _nodes():
    return sorted(int(os.path.basename(p)[4:])
                  for p in glob.glob("/sys/devices/system/node/node[0-9]*"))


def _pages(node, kb=2048):
    if node is None:
        f = "/sys/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages" % kb
    else:
        f = ("/sys/devices/system/node/node%d/hugepages/hugepages-%dkB/"
             "nr_hugepages" % (node, kb))
    with open(f) as fh:
        return int(fh.read())


def _mounted(path):
    with open("/proc/mounts") as f:
        return any(ln.split()[1] == path and ln.split()[2] == "hugetlbfs"
                   for ln in f)


needs_2m = pytest.mark.skipif(
    not os.path.isdir("/sys/kernel/mm/hugepages/hugepages-2048kB")
    or not os.path.exists(HUGEPAGES_PY),
    reason="no 2M huge pages or no dpdk-hugepages.py")


@needs_2m
def test_hugepages_dry_run_prints_exactly_the_commands_and_changes_nothing(
        tmp_path):
    nodes = _nodes() or [None]
    before = {n: _pages(n) for n in nodes}
    mnt = str(tmp_path / "huge")
    want = max(before.values()) + 8
    rc, out, err = sh([HUGE, "--dry-run", "--pages", str(want), "--mount",
                       mnt])
    assert rc == 0, err
    expect = []
    for n in nodes:
        cmd = "%s -p 2M -r %dK" % (HUGEPAGES_PY, want * 2048)
        expect.append(cmd + (" -n %d" % n if n is not None else ""))
    expect += ["mkdir -p %s" % mnt, "%s -p 2M -m -d %s" % (HUGEPAGES_PY, mnt)]
    assert lines(out) == expect
    assert {n: _pages(n) for n in nodes} == before
    assert not os.path.exists(mnt) and not _mounted(mnt)
    # --memory is the same request in bytes; --node limits it to one node
    if nodes[0] is not None:
        rc, out2, err = sh([HUGE, "--dry-run", "--memory",
                            "%dM" % (want * 2), "--node", str(nodes[0]),
                            "--mount", mnt])
        assert rc == 0, err
        assert lines(out2) == [expect[0]] + expect[-2:]


@needs_2m
@pytest.mark.parametrize("args,msg", [
    (["--pages", "2", "--memory", "4M"], "mutually exclusive"),
    ([], "say how much"),
    (["--memory", "3M"], "not a whole number of 2M pages"),
    (["--memory", "lots"], "not a size"),
    (["--pages", "-1"], "not a number of pages"),
    (["--pages", "1", "--node", "999"], "no NUMA node 999"),
    (["--pages", "1", "--size", "3M"], "not a huge page size"),
    (["--pages", "1", "--mount", "relative/dir"], "not an absolute path"),
    (["--pages", "1", "--group", "no-such-group-pa"], "no group"),
    (["--clear", "--pages", "1"], "takes no --pages"),
])
def test_hugepages_refuses_bad_requests(args, msg):
    rc, out, err = sh([HUGE, "--dry-run"] + args)
    assert rc == 1 and msg in err and out == "", (rc, out, err)


@needs_2m
def test_hugepages_1g_refused_when_the_kernel_has_none():
    if os.path.isdir("/sys/kernel/mm/hugepages/hugepages-1048576kB"):
        pytest.skip("this machine offers 1G pages")
    rc, out, err = sh([HUGE, "--dry-run", "--size", "1G", "--pages", "1"])
    assert rc == 1 and "offers no 1G pages (available: 2M)" in err, err


@needs_2m
@root_only
def test_hugepages_reserved_mounted_used_by_the_daemon_then_released(
        tmp_path):
    node = (_nodes() or [None])[0]
    orig = _pages(node)
    if orig != 0:
        pytest.skip("2M pages already reserved here (%d): not touching them"
                    % orig)
    mnt = unique("huge")
    prefix = "pa-%s" % uuid.uuid4().hex[:8]
    pages = 128
    args = [HUGE, "--pages", str(pages), "--mount", mnt]
    if node is not None:
        args += ["--node", str(node)]
    sock = unique("huge", ".sock")
    conf = write_json(str(tmp_path / "huge.json"), {
        "ports": [{"name": "p0", "profile": "pcap",
                   "devargs": "net_pcap0,rx_pcap=%s,tx_pcap=%s"
                   % (SAMPLE, tmp_path / "out.pcap")}],
        "pipeline": {"mode": "rtc"}, "metrics": None})
    try:
        rc, out, err = sh(args)
        assert rc == 0, err
        assert _pages(node) == pages and _mounted(mnt)
        # idempotent: nothing left to do, nothing printed
        rc, out, err = sh(args)
        assert rc == 0 and out == "", (out, err)
        # the daemon runs on those pages (no --no-huge)
        d = Daemon([DAEMON, "--huge-dir", mnt, "--file-prefix",
                    prefix, "--no-pci", "-l", "0,1",
                    "--", "-c", conf, "-s", sock], sock, str(tmp_path),
                   "huge")
        try:
            d.wait_ready(60)
            st = d.wait_replay_done(400)
            assert st["ports"]["p0"]["driver"] == "net_pcap"
            with open("/proc/meminfo") as f:
                free = int(re.search(r"HugePages_Free:\s+(\d+)",
                                     f.read()).group(1))
            assert free < pages, "the daemon took no huge page"
            d.call("shutdown")
            assert d.wait() == 0, d.describe()
        finally:
            d.kill()
    finally:
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
        # --clear unmounts first: the daemon's page files go with the mount
        rc, out, err = sh([HUGE, "--clear", "--mount", mnt])
        cleared = _pages(node)
        if os.path.isdir(mnt) and not _mounted(mnt):
            os.rmdir(mnt)
    assert rc == 0, err
    assert cleared == 0 and not _mounted(mnt)


# ------------------------------------------------------------ bind-nics.sh

FAKE_DEVBIND = r"""#!/bin/sh
# stand-in for dpdk-devbind.py: records its arguments and moves the fake
# sysfs driver links the way the real one moves the real ones
echo "$*" >> "$PKTACCEL_SYSFS/devbind.log"
drv=""
for a in "$@"; do
	case "$a" in
	--bind=*) drv=${a#--bind=} ;;
	--force) ;;
	*) d="$PKTACCEL_SYSFS/bus/pci/devices/$a"
	   rm -f "$d/driver"
	   ln -s "$PKTACCEL_SYSFS/bus/pci/drivers/$drv" "$d/driver"
	   case "$drv" in vfio-pci|uio_pci_generic) rm -rf "$d/net" ;; esac ;;
	esac
done
"""


def _fake_dev(root, addr, vendor, driver, iface=None, up=False):
    d = os.path.join(root, "bus/pci/devices", addr)
    os.makedirs(d)
    with open(os.path.join(d, "vendor"), "w") as f:
        f.write(vendor + "\n")
    os.makedirs(os.path.join(root, "bus/pci/drivers", driver), exist_ok=True)
    os.symlink(os.path.join(root, "bus/pci/drivers", driver),
               os.path.join(d, "driver"))
    if iface:
        os.makedirs(os.path.join(d, "net", iface))
        c = os.path.join(root, "class/net", iface)
        os.makedirs(c)
        os.symlink(d, os.path.join(c, "device"))
        with open(os.path.join(c, "flags"), "w") as f:
            f.write("0x1003\n" if up else "0x1002\n")


@pytest.fixture
def fake_sysfs(tmp_path):
    """A sysfs with an ixgbe port (ens1f0, down), an up one (ens1f1), an
    mlx5 port, a device already on vfio-pci and a veth; an IOMMU."""
    root = str(tmp_path / "sys")
    _fake_dev(root, "0000:3b:00.0", "0x8086", "ixgbe", "ens1f0")
    _fake_dev(root, "0000:3b:00.1", "0x8086", "ixgbe", "ens1f1", up=True)
    _fake_dev(root, "0000:5e:00.0", "0x15b3", "mlx5_core", "ens2f0")
    _fake_dev(root, "0000:af:00.0", "0x8086", "vfio-pci")
    os.makedirs(os.path.join(root, "class/net/veth9"))
    os.makedirs(os.path.join(root, "kernel/iommu_groups/7"))
    devbind = str(tmp_path / "devbind")
    with open(devbind, "w") as f:
        f.write(FAKE_DEVBIND)
    os.chmod(devbind, 0o755)
    env = {"PKTACCEL_SYSFS": root, "DPDK_DEVBIND": devbind,
           "PKTACCEL_BIND_STATE": str(tmp_path / "state")}
    return root, devbind, env


def _driver(root, addr):
    return os.path.basename(os.readlink(
        os.path.join(root, "bus/pci/devices", addr, "driver")))


def _devbind_log(root):
    p = os.path.join(root, "devbind.log")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return lines(f.read())


def test_bind_dry_run_by_interface_name_prints_the_devbind_command(
        fake_sysfs):
    root, devbind, env = fake_sysfs
    rc, out, err = sh([BIND, "--dry-run", "ens1f0"], env)
    assert rc == 0, err
    assert lines(out) == ["%s --bind=vfio-pci 0000:3b:00.0" % devbind]
    assert _driver(root, "0000:3b:00.0") == "ixgbe"
    assert _devbind_log(root) == []
    # a driver that is not loaded is loaded first
    rc, out, err = sh([BIND, "--dry-run", "-d", "uio_pci_generic",
                       "3b:00.0"], env)
    assert rc == 0, err
    assert lines(out) == ["modprobe uio_pci_generic",
                          "%s --bind=uio_pci_generic 0000:3b:00.0" % devbind]


def test_bind_refuses_an_interface_that_is_up_unless_forced(fake_sysfs):
    root, devbind, env = fake_sysfs
    rc, out, err = sh([BIND, "--dry-run", "ens1f0", "ens1f1"], env)
    assert rc == 1 and out == ""
    assert "0000:3b:00.1 (ens1f1) is up" in err, err
    rc, out, err = sh([BIND, "--dry-run", "--force", "ens1f0", "ens1f1"], env)
    assert rc == 0, err
    assert lines(out) == [
        "%s --bind=vfio-pci --force 0000:3b:00.0 0000:3b:00.1" % devbind]


def test_bind_leaves_mlx5_and_bound_devices_alone(fake_sysfs):
    root, devbind, env = fake_sysfs
    rc, out, err = sh([BIND, "--dry-run", "0000:5e:00.0", "0000:af:00.0"],
                      env)
    assert rc == 0 and out == "", (out, err)
    assert "mlx5 is bifurcated" in err and "already bound to vfio-pci" in err
    rc, out, err = sh([BIND, "--dry-run", "ens2f0", "ens1f0"], env)
    assert rc == 0, err
    assert lines(out) == ["%s --bind=vfio-pci 0000:3b:00.0" % devbind]


@pytest.mark.parametrize("dev,msg", [
    ("veth9", "not a PCI network device"),
    ("0000:3b:00.7", "no such PCI device"),
    ("not/a/device", "neither a PCI address"),
])
def test_bind_refuses_what_is_not_a_pci_nic(fake_sysfs, dev, msg):
    root, devbind, env = fake_sysfs
    rc, out, err = sh([BIND, "--dry-run", dev], env)
    assert rc == 1 and msg in err and out == "", (rc, out, err)


def test_bind_without_iommu_needs_noiommu(fake_sysfs):
    root, devbind, env = fake_sysfs
    os.rmdir(os.path.join(root, "kernel/iommu_groups/7"))
    rc, out, err = sh([BIND, "--dry-run", "ens1f0"], env)
    assert rc == 1 and "no IOMMU" in err and out == "", err
    rc, out, err = sh([BIND, "--dry-run", "--noiommu", "ens1f0"], env)
    assert rc == 0, err
    assert lines(out) == ["modprobe vfio enable_unsafe_noiommu_mode=1",
                          "%s --bind=vfio-pci 0000:3b:00.0" % devbind]


@root_only
def test_bind_then_restore_records_the_kernel_driver_and_is_idempotent(
        fake_sysfs):
    root, devbind, env = fake_sysfs
    rc, out, err = sh([BIND, "ens1f0"], env)
    assert rc == 0, err
    assert _driver(root, "0000:3b:00.0") == "vfio-pci"
    with open(env["PKTACCEL_BIND_STATE"]) as f:
        assert lines(f.read()) == ["0000:3b:00.0 ixgbe"]
    rc, out, err = sh([BIND, "0000:3b:00.0"], env)      # again: nothing
    assert rc == 0 and "already bound" in err, err
    assert _devbind_log(root) == ["--bind=vfio-pci 0000:3b:00.0"]
    rc, out, err = sh([BIND, "--restore", "0000:3b:00.0"], env)
    assert rc == 0, err
    assert _driver(root, "0000:3b:00.0") == "ixgbe"
    assert _devbind_log(root)[-1] == "--bind=ixgbe 0000:3b:00.0"
    with open(env["PKTACCEL_BIND_STATE"]) as f:
        assert lines(f.read()) == []
    rc, out, err = sh([BIND, "--restore", "0000:3b:00.0"], env)
    assert rc == 0 and "already on kernel driver ixgbe" in err, err
    assert len(_devbind_log(root)) == 2
    # a device bound by other means has no record: the driver must be named
    rc, out, err = sh([BIND, "--restore", "0000:af:00.0"], env)
    assert rc == 1 and "--kernel-driver" in err, err
    rc, out, err = sh([BIND, "--dry-run", "--restore", "--kernel-driver",
                       "i40e", "0000:af:00.0"], env)
    assert rc == 0 and lines(out) == [
        "%s --bind=i40e 0000:af:00.0" % devbind], err


def _default_route_pci_iface():
    r = subprocess.run(["ip", "-o", "route", "show", "default"],
                       capture_output=True, text=True)
    m = re.search(r"\bdev (\S+)", r.stdout)
    if not m:
        return None, None
    iface = m.group(1)
    path = os.path.realpath("/sys/class/net/%s/device" % iface)
    while path != "/":
        if re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$",
                    os.path.basename(path)):
            return iface, os.path.basename(path)
        path = os.path.dirname(path)
    return iface, None


@pytest.mark.skipif(not os.path.exists(DEVBIND_PY),
                    reason="no dpdk-devbind.py")
def test_bind_refuses_the_real_default_route_nic():
    iface, addr = _default_route_pci_iface()
    if addr is None:
        pytest.skip("the default route is not on a PCI NIC here")
    rc, out, err = sh([BIND, "--dry-run", iface])
    assert rc == 1 and out == ""
    assert "(%s) carries the default route" % iface in err, err
    # forced, uio_pci_generic (no IOMMU needed): the plan only
    rc, out, err = sh([BIND, "--dry-run", "--force", "-d",
                       "uio_pci_generic", iface])
    assert rc == 0, err
    assert lines(out)[-1] == "%s --bind=uio_pci_generic --force %s" % (
        DEVBIND_PY, addr)
    # and the real status listing shows it, still on its kernel driver
    rc, out, err = sh([BIND, "--status"])
    assert rc == 0 and addr in out and "drv=" in out, out + err
    assert "drv=vfio-pci" not in [ln for ln in out.splitlines()
                                  if addr in ln][0]


# ----------------------------------------------------------------- systemd

def _render_units(dst):
    """The units with this build's paths, as meson install writes them."""
    os.makedirs(dst, exist_ok=True)
    for u in ("pktaccel.service", "pktaccel-prepare.service"):
        with open(os.path.join(UNITS, u)) as f:
            text = f.read()
        text = text.replace("/usr/local/bin/", os.path.dirname(DAEMON) + "/")
        text = text.replace("/usr/local/share/pktaccel/scripts/",
                            SCRIPTS + "/")
        with open(os.path.join(dst, u), "w") as f:
            f.write(text)
    return [os.path.join(dst, u)
            for u in ("pktaccel.service", "pktaccel-prepare.service")]


def _unit_settings(path):
    out = {}
    with open(path) as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith(("#", "[")):
                k, v = ln.split("=", 1)
                out.setdefault(k, []).append(v)
    return out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze not installed")
def test_systemd_units_verify_cleanly(tmp_path):
    units = _render_units(str(tmp_path / "units"))
    rc, out, err = sh(["systemd-analyze", "verify", "--man=no"] + units)
    assert rc == 0 and err.strip() == "", out + err
    s = _unit_settings(units[0])
    assert s["Restart"] == ["on-failure"]
    assert s["RuntimeDirectory"] == ["pktaccel"]
    assert s["RuntimeDirectoryMode"] == ["0750"]
    assert s["LimitMEMLOCK"] == ["infinity"]
    assert s["KillSignal"] == ["SIGTERM"]
    assert "-s /run/pktaccel/pktaccel.sock" in s["ExecStart"][0]
    # a broken unit does fail the check (the test can fail)
    bad = str(tmp_path / "units" / "pktaccel.service")
    with open(bad) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace("Restart=on-failure", "Restart=sometimes"))
    rc, out, err = sh(["systemd-analyze", "verify", "--man=no"] + units)
    assert rc != 0 or "restart specifier" in err, (rc, err)


def _env_file(path):
    """KEY=VALUE lines as systemd's EnvironmentFile reads them."""
    env = {}
    with open(path) as f:
        for ln in f:
            ln = ln.strip()
            if not ln or ln.startswith("#"):
                continue
            k, v = ln.split("=", 1)
            if len(v) >= 2 and v[0] == v[-1] == '"':
                v = v[1:-1]
            env[k] = v
    return env


def _exec_start(unit, env):
    """ExecStart as systemd expands it: $VAR splits, ${VAR} stays a word."""
    cmd = _unit_settings(unit)["ExecStart"][0]
    words = []
    for w in cmd.split():
        m = re.fullmatch(r"\$\{(\w+)\}", w)
        if m:
            words.append(env[m.group(1)])
        elif re.fullmatch(r"\$(\w+)", w):
            words += env[w[1:]].split()
        else:
            words.append(w)
    return words


@pytest.fixture
def veth_ns():
    if os.geteuid() != 0:
        pytest.skip("needs root (ip netns, AF_PACKET)")
    ns = "pa-dep-%s" % uuid.uuid4().hex[:6]
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True)
    if r.returncode != 0:
        pytest.skip("ip netns add failed: %s" % r.stderr.decode().strip())
    try:
        for cmd in (["link", "add", "dA", "type", "veth", "peer", "name",
                     "dB"], ["link", "set", "dA", "up"],
                    ["link", "set", "dB", "up"], ["link", "set", "lo", "up"]):
            r = subprocess.run(["ip", "-n", ns] + cmd, capture_output=True)
            assert r.returncode == 0, r.stderr.decode()
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_service_command_line_runs_the_daemon_with_the_af_packet_profile(
        tmp_path, veth_ns):
    """What pktaccel.service runs, with settings from an env file in the
    shape of pktaccel.env, starts the appliance on an af_packet port."""
    unit = _render_units(str(tmp_path / "units"))[0]
    sock = unique("svc", ".sock")
    conf = write_json(str(tmp_path / "pktaccel.json"), {
        "ports": [{"name": "wan0", "devargs": "net_af_packet0,iface=dA",
                   "profile": "af_packet", "addr": ["198.51.100.5/24"]}],
        "pipeline": {"mode": "rtc"}})
    env = _env_file(os.path.join(UNITS, "pktaccel.env"))
    assert set(env) >= {"PKTACCEL_CONFIG", "PKTACCEL_EAL_ARGS",
                        "PKTACCEL_ARGS", "PKTACCEL_HUGEPAGES",
                        "PKTACCEL_NICS"}
    env.update({"PKTACCEL_CONFIG": conf,
                "PKTACCEL_EAL_ARGS": " ".join(EAL_VDEV),
                "PKTACCEL_ARGS": "-s %s" % sock})   # the last -s wins
    args = _exec_start(unit, env)
    assert args[0] == DAEMON and args[args.index("--") + 1:][:2] == [
        "-c", conf]
    d = Daemon(args, sock, str(tmp_path), "svc",
               prefix=("ip", "netns", "exec", veth_ns))
    try:
        d.wait_ready(60)
        port = d.call("stats_get")["ports"]["wan0"]
        assert port["driver"] == "net_af_packet"
        assert (port["rx_queues"], port["rx_desc"]) == (1, 1024)
        got = d.call("config_get")["ports"][0]
        assert got["profile"] == "af_packet" and "rx_desc" not in got
        # systemd stops it with KillSignal=SIGTERM: a clean exit
        assert d.stop() == 0, d.describe()
    finally:
        d.kill()


# ------------------------------------------------------------ meson install

def test_meson_install_puts_profiles_scripts_units_and_docs_in_place(
        tmp_path):
    dest = str(tmp_path / "dest")
    rc, out, err = sh(["meson", "install", "-C", BUILD, "--no-rebuild",
                       "--quiet", "--destdir", dest], timeout=120)
    assert rc == 0, out + err
    rc, out, err = sh(["meson", "introspect", BUILD, "--buildoptions"])
    opts = {o["name"]: o["value"] for o in json.loads(out)}
    prefix = dest + opts["prefix"]
    share = os.path.join(prefix, opts["datadir"], "pktaccel")
    for name in os.listdir(PROFILES):
        with open(os.path.join(PROFILES, name)) as a, \
                open(os.path.join(share, "drivers-config", name)) as b:
            assert json.load(a) == json.load(b), name
    for s in ("setup-hugepages.sh", "bind-nics.sh"):
        mode = os.stat(os.path.join(share, "scripts", s)).st_mode
        assert mode & stat.S_IXUSR, s
    assert os.path.exists(os.path.join(share, "pktaccel.env"))
    assert os.path.exists(os.path.join(prefix, opts["datadir"], "doc",
                                       "pktaccel", "operations.md"))
    unitdir = opts["systemd_unit_dir"] or os.path.join(
        opts["prefix"], "lib", "systemd", "system")
    unit = _unit_settings(os.path.join(dest + unitdir, "pktaccel.service"))
    bindir = os.path.join(opts["prefix"], opts["bindir"])
    assert unit["ExecStart"][0].startswith(bindir + "/pktaccel ")
    assert os.access(os.path.join(dest + bindir, "pktaccel"), os.X_OK)
    prep = _unit_settings(os.path.join(dest + unitdir,
                                       "pktaccel-prepare.service"))
    assert prep["ExecStart"][0].split()[0] == os.path.join(
        opts["prefix"], opts["datadir"], "pktaccel", "scripts",
        "setup-hugepages.sh")


# -------------------------------------------------- profiles on real devices

def _start(tmp_path, ports, extra=(), name="prof", netns=None, ):
    """The daemon on virtual devices, in the background."""
    sock = unique(name, ".sock")
    conf = write_json(str(tmp_path / (name + ".json")), {
        "ports": ports, "pipeline": {"mode": "rtc"}, "metrics": None})
    return Daemon([DAEMON] + EAL_VDEV + ["--", "-c", conf, "-s", sock]
                  + list(extra), sock, str(tmp_path), name,
                  prefix=("ip", "netns", "exec", netns) if netns else ())


def _profile_dir(tmp_path, profiles):
    d = tmp_path / "profiles"
    d.mkdir()
    for name, doc in profiles.items():
        write_json(str(d / (name + ".json")), doc)
    return str(d)


def _pcap_port(tmp_path, name="p0", idx=0, **kw):
    port = {"name": name, "devargs": "net_pcap%d,rx_pcap=%s,tx_pcap=%s"
            % (idx, SAMPLE, tmp_path / ("%s.pcap" % name))}
    port.update(kw)
    return port


def test_profile_values_reach_the_device_and_port_keys_override_them(
        tmp_path):
    pdir = _profile_dir(tmp_path, {
        "lab_null": {"driver": "net_null", "rx_queues": 2, "tx_queues": 3,
                     "rx_desc": 512, "tx_desc": 256, "rss": False},
    })
    d = _start(tmp_path, [
        {"name": "a", "devargs": "net_null0", "profile": "lab_null"},
        {"name": "b", "devargs": "net_null1", "profile": "lab_null",
         "rx_queues": 1, "rx_desc": 2048},
    ], ["--drivers-config", pdir])
    try:
        d.wait_ready(60)
        ports = d.call("stats_get")["ports"]
        a, b = ports["a"], ports["b"]
        assert (a["rx_queues"], a["tx_queues"], a["rx_desc"],
                a["tx_desc"]) == (2, 3, 512, 256), a
        assert (b["rx_queues"], b["tx_queues"], b["rx_desc"],
                b["tx_desc"]) == (1, 3, 2048, 256), b
        assert d.stop() == 0, d.describe()
    finally:
        d.kill()


@pytest.mark.parametrize("case", [
    "wrong_driver", "rx_offload", "tx_offload", "fast_free"])
def test_profile_the_device_cannot_honour_stops_start_up(tmp_path, case):
    pdir = _profile_dir(tmp_path, {
        "pcap_cksum": {"driver": "net_pcap", "rx_offloads": ["ipv4_cksum"]},
        "pcap_segs": {"driver": "net_pcap", "tx_offloads": ["multi_segs"]},
        "pcap_ff": {"driver": "net_pcap", "tx_offloads": ["mbuf_fast_free"]},
    })
    shipped = ["--drivers-config", PROFILES]
    mine = ["--drivers-config", pdir]
    ports, extra, msg = {
        "wrong_driver": ([_pcap_port(tmp_path, profile="af_packet")], shipped,
                         "port p0: profile 'af_packet' is for driver "
                         "net_af_packet, but the device is driven by "
                         "net_pcap"),
        "rx_offload": ([_pcap_port(tmp_path, profile="pcap_cksum")], mine,
                       "port p0: driver net_pcap cannot do RX offload "
                       "'ipv4_cksum' (profile 'pcap_cksum')"),
        "tx_offload": ([_pcap_port(tmp_path, profile="pcap_segs")], mine,
                       "port p0: driver net_pcap cannot do TX offload "
                       "'multi_segs' (profile 'pcap_segs')"),
        "fast_free": ([_pcap_port(tmp_path, profile="pcap_ff"),
                       _pcap_port(tmp_path, "p1", 1)], mine,
                      "port p0: TX offload 'mbuf_fast_free' (profile "
                      "'pcap_ff') needs a single port"),
    }[case]
    d = _start(tmp_path, ports, extra, name=case)
    rc = d.wait(30)
    assert rc != 0, d.describe()
    assert msg in d.stderr, d.describe()


def test_profile_asking_rss_of_a_device_without_it_stops_start_up(
        tmp_path, veth_ns):
    pdir = _profile_dir(tmp_path, {
        "afp_rss": {"driver": "net_af_packet", "rss": True, "rx_queues": 2},
    })
    port = {"name": "w0", "devargs": "net_af_packet0,iface=dA,qpairs=2",
            "profile": "afp_rss", "addr": ["198.51.100.5/24"]}
    d = _start(tmp_path, [port], ["--drivers-config", pdir], name="rss",
               netns=veth_ns)
    assert d.wait(30) != 0
    assert ("port w0: 2 RX queues with RSS asked for by the profile, but "
            "driver net_af_packet has no RSS") in d.stderr, d.describe()
    # the same device with the shipped profile (rss false) runs 2 queues
    port.update(profile="af_packet", rx_queues=2)
    d = _start(tmp_path, [port], ["--drivers-config", PROFILES], name="afp2",
               netns=veth_ns)
    try:
        d.wait_ready(60)
        assert d.call("stats_get")["ports"]["w0"]["rx_queues"] == 2
        assert d.stop() == 0, d.describe()
    finally:
        d.kill()


def test_shipped_pcap_profile_starts_on_net_pcap(tmp_path):
    d = _start(tmp_path, [_pcap_port(tmp_path, profile="pcap")],
               ["--drivers-config", PROFILES])
    try:
        d.wait_ready(60)
        st = d.wait_replay_done(400)
        assert st["ports"]["p0"]["driver"] == "net_pcap"
        assert d.stop() == 0, d.describe()
    finally:
        d.kill()


def test_drivers_config_option_is_where_profiles_are_found(tmp_path):
    d = _start(tmp_path, [_pcap_port(tmp_path, profile="pcap")],
               ["--drivers-config", str(tmp_path / "nowhere")])
    assert d.wait(30) != 0
    assert ("$.ports[0].profile: unknown profile 'pcap' (%s/pcap.json"
            % (tmp_path / "nowhere")) in d.stderr, d.describe()
