#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the Debian packages of this tree in build/pkg/:
#   pktaccel_<version>_<arch>.deb     the daemon, the console, the systemd
#                                     units, /etc/pktaccel/pktaccel.json and
#                                     /etc/default/pktaccel (conffiles), the
#                                     NIC profiles, the host scripts, the
#                                     docs and the man pages
#   python3-pktaccel_<version>_all.deb  the Python client (module pktaccel)
# with Debian's own tools: `meson install` of a generic (-Dcpu=) build with
# prefix /usr into a staging tree, dpkg-shlibdeps for Depends, dpkg-deb.
# The version is meson.build's project version. The LAST line of stdout is
# the path of the main .deb. Needs: scripts/deps.sh (build tools) and
# dpkg-dev; `lintian build/pkg/*.deb` checks the result.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/package.sh [--help]

Builds build/pkg/pktaccel_<version>_<arch>.deb and
build/pkg/python3-pktaccel_<version>_all.deb from this tree; prints the
path of the first as its last line.
EOF
}

case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) echo "package.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
esac

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/build/pkg
BUILD=$OUT/build		# meson build dir of the packaged binaries
WORK=$OUT/work			# staging trees and dpkg-shlibdeps' cwd
MAINTAINER="pktaccel developers <pktaccel@example.org>"

for tool in meson ninja dpkg-deb dpkg-shlibdeps fakeroot; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "package.sh: $tool not found (run scripts/deps.sh as root)" >&2
		exit 1
	fi
done

mkdir -p "$OUT"
# A generic binary (-Dcpu=: DPDK's own -march), not one for this CPU; no
# tests or benchmarks.
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" "$REPO" --prefix=/usr --sysconfdir=/etc \
		-Dbuildtype=release -Dcpu= -Dtests=false -Dperf=false \
		-Dsystemd_unit_dir=/lib/systemd/system >&2
fi
nice ninja -C "$BUILD" >&2

VERSION=$(meson introspect --projectinfo "$BUILD" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
ARCH=$(dpkg --print-architecture)
STAMP=$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)
DATE=$(date -R -d "@$STAMP")
YEAR=$(date +%Y -d "@$STAMP")

rm -rf "$WORK"
mkdir -p "$WORK"
ROOT=$WORK/pktaccel
PYROOT=$WORK/python3-pktaccel

# ------------------------------------------------------------ pktaccel
DESTDIR=$ROOT meson install -C "$BUILD" --no-rebuild >&2
# meson installs nothing outside these; anything else is a mistake here
for d in "$ROOT"/*; do
	case "${d#"$ROOT"}" in
	/usr|/lib) ;;
	*) echo "package.sh: unexpected install path ${d#"$ROOT"}" >&2; exit 1 ;;
	esac
done
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
	"$ROOT/usr/bin/pktaccel" "$ROOT/usr/bin/pktaccelctl"
gzip -9n "$ROOT"/usr/share/man/man8/*.8

# conffiles: the embedded default configuration and the service settings
install -d -m 0755 "$ROOT/etc/pktaccel" "$ROOT/etc/default"
install -m 0644 "$REPO/docs/examples/default.json" "$ROOT/etc/pktaccel/pktaccel.json"
install -m 0644 "$REPO/scripts/systemd/pktaccel.env" "$ROOT/etc/default/pktaccel"

doc_files() {	# $1: staging root, $2: package name
	local doc=$1/usr/share/doc/$2
	install -d -m 0755 "$doc"
	write_copyright > "$doc/copyright"
	chmod 0644 "$doc/copyright"
	{
		echo "$2 ($VERSION) unstable; urgency=medium"
		echo
		echo "  * Package of the pktaccel tree at version $VERSION."
		echo
		echo " -- $MAINTAINER  $DATE"
	} | gzip -9n > "$doc/changelog.gz"
}

write_copyright() {
	cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pktaccel
Source: the pktaccel source tree

Files: *
Copyright: $YEAR the pktaccel developers
License: BSD-3-Clause

License: BSD-3-Clause
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are met:
 .
 1. Redistributions of source code must retain the above copyright notice,
    this list of conditions and the following disclaimer.
 2. Redistributions in binary form must reproduce the above copyright notice,
    this list of conditions and the following disclaimer in the documentation
    and/or other materials provided with the distribution.
 3. Neither the name of the copyright holder nor the names of its
    contributors may be used to endorse or promote products derived from this
    software without specific prior written permission.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
 AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
 ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
 LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
 SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
 INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
 CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
 ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 POSSIBILITY OF SUCH DAMAGE.
EOF
}

doc_files "$ROOT" pktaccel
find "$ROOT" -type d -exec chmod 0755 {} +
find "$ROOT/usr/share" "$ROOT/lib" "$ROOT/etc" -type f -exec chmod 0644 {} +
chmod 0755 "$ROOT"/usr/share/pktaccel/scripts/*.sh "$ROOT"/usr/bin/*

install -d -m 0755 "$ROOT/DEBIAN"
cat > "$ROOT/DEBIAN/conffiles" <<'EOF'
/etc/default/pktaccel
/etc/pktaccel/pktaccel.json
EOF

# Depends: the shared libraries the binaries link (dpkg-shlibdeps reads
# debian/control from its working directory), plus what DPDK loads as
# plugins (mempool handler, buses, the virtual devices of the lab and the
# image) and dpdk itself (dpdk-hugepages.py, dpdk-devbind.py for the host
# scripts).
mkdir -p "$WORK/debian"
cat > "$WORK/debian/control" <<EOF
Source: pktaccel
Maintainer: $MAINTAINER

Package: pktaccel
Architecture: any
EOF
SHLIBS=$(cd "$WORK" && dpkg-shlibdeps -O -e"pktaccel/usr/bin/pktaccel" \
	-e"pktaccel/usr/bin/pktaccelctl" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
if [ -z "$SHLIBS" ]; then
	echo "package.sh: dpkg-shlibdeps found no dependencies" >&2
	exit 1
fi
PLUGINS="librte-mempool-ring23, librte-bus-vdev23, librte-bus-pci23, librte-net-pcap23, librte-net-af-packet23, librte-net-null23, librte-net-ring23, librte-net-tap23"
SIZE=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)

cat > "$ROOT/DEBIAN/control" <<EOF
Package: pktaccel
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $SIZE
Depends: $SHLIBS, $PLUGINS, dpdk, iproute2
Recommends: librte-net-i40e23, librte-net-ice23, librte-net-ixgbe23, librte-net-mlx5-23, librte-net-virtio23
Suggests: python3-pktaccel, bird2 | frr
Section: net
Priority: optional
Description: DPDK packet accelerator: ACL filter and L4 load balancer
 pktaccel is a kernel-bypass appliance built on DPDK: an L3/L4 filter
 (ACL) in front of an L4 load balancer (Maglev, round robin, least
 connections; IPIP, NAT, full NAT and DSR forwarding), changed at run time
 without losing a packet through a JSON-RPC management socket and its
 console, pktaccelctl. Huge pages and NIC binding are prepared by
 pktaccel-prepare.service; VIP routes are announced through a kernel
 routing table for BIRD or FRR; metrics are served to Prometheus.
 .
 A lab replay mode runs pcap files through the pipeline without huge pages
 or NICs.
EOF

cat > "$ROOT/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# The units are installed, not enabled or started: the appliance needs a
# configuration with its ports first (/etc/pktaccel/pktaccel.json, then
# `systemctl enable --now pktaccel`). An upgrade restarts a running daemon
# (its flows are handed over through its --state file).
set -e
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] ||
   [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ]; then
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		if [ -n "$2" ]; then
			deb-systemd-invoke try-restart pktaccel.service >/dev/null || true
		fi
	fi
fi
exit 0
EOF
cat > "$ROOT/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop pktaccel.service pktaccel-prepare.service >/dev/null || true
fi
exit 0
EOF
cat > "$ROOT/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = "purge" ]; then
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		deb-systemd-helper purge pktaccel.service pktaccel-prepare.service >/dev/null || true
	fi
	rm -rf /var/lib/pktaccel
fi
exit 0
EOF
chmod 0755 "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/prerm" "$ROOT/DEBIAN/postrm"
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	LC_ALL=C sort -z | xargs -0 md5sum) > "$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums" "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/conffiles"

# ------------------------------------------------------ python3-pktaccel
# The client module as it is in the tree (tools/pylib/.../pktaccel),
# wherever its packaging puts it.
PYMOD=$(find "$REPO/tools/pylib" -path '*/pktaccel/__init__.py' \
	-not -path '*/build/*' | head -n 1)
if [ -z "$PYMOD" ]; then
	echo "package.sh: no pktaccel module under tools/pylib" >&2
	exit 1
fi
PYMOD=$(dirname "$PYMOD")
install -d -m 0755 "$PYROOT/usr/lib/python3/dist-packages/pktaccel"
# its modules and data files (e.g. a JSON document it serves, where a
# symbolic link may stand for it in the tree), no bytecode
find -L "$PYMOD" -maxdepth 1 -type f ! -name '*.pyc' -exec install -m 0644 {} \
	"$PYROOT/usr/lib/python3/dist-packages/pktaccel/" \;
doc_files "$PYROOT" python3-pktaccel
find "$PYROOT" -type d -exec chmod 0755 {} +
install -d -m 0755 "$PYROOT/DEBIAN"
PYSIZE=$(du -sk --exclude=DEBIAN "$PYROOT" | cut -f1)
cat > "$PYROOT/DEBIAN/control" <<EOF
Package: python3-pktaccel
Version: $VERSION
Architecture: all
Maintainer: $MAINTAINER
Installed-Size: $PYSIZE
Depends: python3:any
Suggests: pktaccel
Section: python
Priority: optional
Description: Python client of the pktaccel appliance's JSON-RPC socket
 The module pktaccel talks to the management socket of a pktaccel daemon
 (JSON-RPC 2.0 over a Unix socket): a client with a call per method, and
 the helpers that start a daemon for a lab. Standard library only.
EOF
cat > "$PYROOT/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = "configure" ] && command -v py3compile >/dev/null 2>&1; then
	py3compile -p python3-pktaccel
fi
exit 0
EOF
cat > "$PYROOT/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if command -v py3clean >/dev/null 2>&1; then
	py3clean -p python3-pktaccel
fi
exit 0
EOF
chmod 0755 "$PYROOT/DEBIAN/postinst" "$PYROOT/DEBIAN/prerm"
(cd "$PYROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	LC_ALL=C sort -z | xargs -0 md5sum) > "$PYROOT/DEBIAN/md5sums"
chmod 0644 "$PYROOT/DEBIAN/md5sums" "$PYROOT/DEBIAN/control"

DEB=$OUT/pktaccel_${VERSION}_${ARCH}.deb
PYDEB=$OUT/python3-pktaccel_${VERSION}_all.deb
rm -f "$OUT"/*.deb
fakeroot dpkg-deb --build -Zxz "$PYROOT" "$PYDEB" >&2
fakeroot dpkg-deb --build -Zxz "$ROOT" "$DEB" >&2
echo "$DEB"
