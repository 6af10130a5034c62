# SPDX-License-Identifier: BSD-3-Clause
"""The Debian packages (scripts/package.sh): the last line names the main
.deb, its version is meson.build's, its contents are where the units and
the docs say (binaries, units with /usr paths, conffiles, profiles,
scripts, man pages, docs), Depends come from the linked libraries plus
DPDK's plugins, lintian finds no error, the Python client is in
python3-pktaccel; and the man pages document exactly the options --help
lists. Installing the package on a fresh Debian 12 and the image are
scripts/test-deploy.sh's (slow: a root file system from the archive)."""

import os
import re
import shutil
import subprocess

import pytest

import pautil
from pautil import CTL, DAEMON, REPO

PACKAGE_SH = os.path.join(REPO, "scripts", "package.sh")
MAN = os.path.join(REPO, "docs", "man")


def sh(args, timeout=60, **kw):
    r = subprocess.run(args, capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def meson_version():
    with open(os.path.join(REPO, "meson.build")) as f:
        return re.search(r"version:\s*'([^']+)'", f.read()).group(1)


# ------------------------------------------------ man pages against --help

def help_options(args):
    rc, out, err = sh(args)
    assert rc == 0, (rc, out, err)
    opts = set()
    for m in re.finditer(r"^ {2,}(-{1,2}[a-zA-Z][\w-]*)(?:, (--[\w-]+))?",
                         out, re.M):
        opts.update(o for o in m.groups() if o)
    return opts, out


def man_options(page, section=None):
    with open(os.path.join(MAN, page)) as f:
        src = f.read()
    if section is not None:
        m = re.search(r"^\.SH %s\n(.*?)(?=^\.SH )" % section, src,
                      re.M | re.S)
        src = m.group(1)
    text = src.replace("\\-", "-")
    text = re.sub(r"\\f[BIRP]", "", text)
    # option tags: the .TP paragraphs' first lines
    tags = re.findall(r"^\.TP\n(.*)$", text, re.M)
    opts = set()
    for t in tags:
        opts.update(re.findall(r"(?<![\w-])(--[a-z][a-z-]+|-[a-zA-Z])\b", t))
    return opts, text


def test_pktaccel_man_page_documents_exactly_the_help_options():
    """Every option of `pktaccel --help` has its paragraph in pktaccel(8)
    and the page documents no option the daemon does not have."""
    helped, _ = help_options([DAEMON, "--help"])
    paged, _ = man_options("pktaccel.8", "OPTIONS")
    assert helped == paged, ("only in --help: %s; only in pktaccel.8: %s" %
                             (sorted(helped - paged), sorted(paged - helped)))


@pytest.mark.needs_ctl
def test_pktaccelctl_man_page_documents_exactly_the_help_options():
    helped, _ = help_options([CTL, "--help"])
    paged, _ = man_options("pktaccelctl.8", "OPTIONS")
    top_help, _ = help_options([CTL, "top", "-h"])
    top_paged, _ = man_options("pktaccelctl.8", "TOP")
    assert helped == paged, ("only in --help: %s; only in pktaccelctl.8: %s"
                             % (sorted(helped - paged),
                                sorted(paged - helped)))
    assert top_help == top_paged, (top_help, top_paged)


@pytest.mark.parametrize("page", ["pktaccel.8", "pktaccelctl.8"])
def test_man_page_renders_without_warnings(page):
    if shutil.which("groff") is None:
        pytest.skip("groff not installed")
    rc, out, err = sh(["groff", "-man", "-Tutf8", "-ww", "-z",
                       os.path.join(MAN, page)])
    assert rc == 0 and err == "", err


# ------------------------------------------------------------- the package

@pytest.mark.parametrize("script", ["package.sh", "image.sh",
                                    "test-deploy.sh", "deps-deploy.sh"])
def test_deploy_script_passes_shellcheck(script):
    path = os.path.join(REPO, "scripts", script)
    if not os.path.exists(path):
        pytest.skip("%s not in this tree" % script)
    assert os.access(path, os.X_OK), path
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (scripts/deps.sh)")
    rc, out, err = sh(["shellcheck", "-x", path])
    assert rc == 0, out + err
    rc, out, err = sh([path, "--help"])
    assert rc == 0 and "Usage:" in out, out + err

@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "fakeroot"):
        if shutil.which(tool) is None:
            pytest.skip("%s not installed (scripts/deps.sh)" % tool)
    rc, out, err = sh([PACKAGE_SH], timeout=1500)
    assert rc == 0, err[-3000:]
    main = out.strip().splitlines()[-1]
    root = tmp_path_factory.mktemp("deb")
    py = os.path.join(os.path.dirname(main), "python3-pktaccel_%s_all.deb"
                      % meson_version())
    for deb, sub in ((main, "main"), (py, "py")):
        rc, _, err = sh(["dpkg-deb", "-R", deb, str(root / sub)])
        assert rc == 0, err
    return {"main": main, "py": py, "root": str(root / "main"),
            "pyroot": str(root / "py")}


def field(deb, name):
    rc, out, err = sh(["dpkg-deb", "-f", deb, name])
    assert rc == 0, err
    return out.strip()


def test_last_line_is_the_main_deb_of_the_meson_version(debs):
    arch = sh(["dpkg", "--print-architecture"])[1].strip()
    assert os.path.basename(debs["main"]) == "pktaccel_%s_%s.deb" % (
        meson_version(), arch)
    assert os.path.dirname(debs["main"]) == os.path.join(REPO, "build",
                                                         "pkg")
    assert field(debs["main"], "Version") == meson_version()
    assert os.path.isfile(debs["py"])


def test_package_holds_binaries_units_conffiles_profiles_scripts_docs_man(
        debs):
    root = debs["root"]
    must = ["usr/bin/pktaccel", "usr/bin/pktaccelctl",
            "lib/systemd/system/pktaccel.service",
            "lib/systemd/system/pktaccel-prepare.service",
            "etc/pktaccel/pktaccel.json", "etc/default/pktaccel",
            "usr/share/pktaccel/scripts/setup-hugepages.sh",
            "usr/share/pktaccel/scripts/bind-nics.sh",
            "usr/share/man/man8/pktaccel.8.gz",
            "usr/share/man/man8/pktaccelctl.8.gz",
            "usr/share/doc/pktaccel/copyright",
            "usr/share/doc/pktaccel/changelog.gz",
            "usr/share/doc/pktaccel/operations.md",
            "usr/share/doc/pktaccel/configuration.md",
            "usr/share/doc/pktaccel/deployment.md"]
    for prof in os.listdir(os.path.join(REPO, "drivers-config")):
        must.append("usr/share/pktaccel/drivers-config/" + prof)
    missing = [p for p in must if not os.path.exists(os.path.join(root, p))]
    assert not missing, missing
    for exe in ("usr/bin/pktaccel", "usr/bin/pktaccelctl",
                "usr/share/pktaccel/scripts/setup-hugepages.sh"):
        assert os.access(os.path.join(root, exe), os.X_OK), exe
    with open(os.path.join(root, "DEBIAN", "conffiles")) as f:
        assert sorted(f.read().split()) == ["/etc/default/pktaccel",
                                            "/etc/pktaccel/pktaccel.json"]
    # no stray build paths
    assert not os.path.exists(os.path.join(root, "usr", "local"))


def test_units_run_the_packaged_paths(debs):
    for unit in ("pktaccel.service", "pktaccel-prepare.service"):
        with open(os.path.join(debs["root"], "lib/systemd/system", unit)) as f:
            text = f.read()
        code = [ln for ln in text.splitlines() if not ln.startswith("#")]
        assert not [ln for ln in code if "/usr/local" in ln], unit
    with open(os.path.join(debs["root"],
                           "lib/systemd/system/pktaccel.service")) as f:
        text = f.read()
    assert "ExecStart=/usr/bin/pktaccel " in text
    with open(os.path.join(debs["root"],
                           "lib/systemd/system/pktaccel-prepare.service")) as f:
        assert "/usr/share/pktaccel/scripts/setup-hugepages.sh" in f.read()


def test_conffile_is_the_embedded_default_and_valid(debs):
    conf = os.path.join(debs["root"], "etc/pktaccel/pktaccel.json")
    with open(conf) as f, open(pautil.DEFAULT_CONF) as g:
        assert f.read() == g.read()
    rc, out, err = sh([DAEMON, "--check-config", "--replay", "x.pcap",
                       "-c", conf])
    assert rc == 0, err


def test_packaged_binaries_run_and_find_the_packaged_profiles(debs):
    """The generic build runs here; its profile directory is the
    package's."""
    exe = os.path.join(debs["root"], "usr/bin/pktaccel")
    rc, out, err = sh([exe, "--version"])
    assert rc == 0 and meson_version() in out, (out, err)
    rc, out, err = sh(["strings", exe]) if shutil.which("strings") else (
        0, "/usr/share/pktaccel/drivers-config", "")
    assert "/usr/share/pktaccel/drivers-config" in out


def test_depends_come_from_the_linked_libraries_and_dpdk_plugins(debs):
    dep = field(debs["main"], "Depends")
    names = {d.strip().split()[0] for d in dep.split(",")}
    # from dpkg-shlibdeps: what the binaries link
    for lib in ("libc6", "libjansson4", "librte-eal23", "librte-ethdev23",
                "libpcap0.8", "libedit2"):
        assert lib in names, (lib, dep)
    # loaded by EAL as plugins: without them nothing starts
    for lib in ("librte-mempool-ring23", "librte-bus-vdev23",
                "librte-net-pcap23", "librte-net-af-packet23", "dpdk"):
        assert lib in names, (lib, dep)
    assert field(debs["py"], "Architecture") == "all"


def test_lintian_finds_no_error(debs):
    if shutil.which("lintian") is None:
        pytest.skip("lintian not installed (scripts/deps.sh)")
    rc, out, err = sh(["lintian", "--pedantic", "--no-tag-display-limit",
                       debs["main"], debs["py"]], timeout=600)
    tags = [ln for ln in out.splitlines() if re.match(r"^[EW]: ", ln)]
    assert not [t for t in tags if t.startswith("E: ")], out + err
    assert not tags, "lintian warnings:\n" + "\n".join(tags)


def test_python_client_is_the_tree_module_and_imports(debs):
    pkgdir = os.path.join(debs["pyroot"], "usr/lib/python3/dist-packages")
    mod = os.path.join(pkgdir, "pktaccel")
    tree = os.path.join(pautil.PYLIB, "pktaccel")
    if os.path.isdir(tree):
        files = [f for f in os.listdir(tree)
                 if os.path.isfile(os.path.join(tree, f))
                 and not f.endswith(".pyc")]
        assert sorted(files) == sorted(os.listdir(mod))
    rc, out, err = sh(["/usr/bin/python3", "-c",
                       "import pktaccel, sys; print(pktaccel.__file__)"],
                      env={"PYTHONPATH": pkgdir, "PATH": "/usr/bin:/bin"},
                      cwd="/")
    assert rc == 0 and out.startswith(mod), (out, err)
