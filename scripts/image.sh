#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the OCI image localhost/pktaccel:<version>: a Debian 12 root file
# system made from Debian's archive with mmdebstrap (nothing is pulled from
# a registry: there is no base image), the package of scripts/package.sh
# installed in it by apt (dependencies resolved from the archive), imported
# with podman with the daemon as entrypoint. The LAST line of stdout is the
# image's name.
#
#   podman run --rm -v "$PWD:/data" localhost/pktaccel:<version> \
#       --replay /data/in.pcap --replay-out /data/out.pcap -c /etc/pktaccel/pktaccel.json
#
# The root file system is kept as build/image/rootfs-<version>-<sha>.tar
# (<sha>: of the .deb); it is made again only when the package changes.
# Downloaded Debian packages are kept in $PKTACCEL_DEPLOY_CACHE (default
# build/deploy-cache/apt) for the next build.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/image.sh [--help] [--rootfs-only] [--deb FILE]

  --rootfs-only   make the root file system tarball only (no podman); its
                  path is the last line
  --deb FILE      install this package instead of building one with
                  scripts/package.sh

Environment: PKTACCEL_DEBIAN_MIRROR (default http://deb.debian.org/debian),
PKTACCEL_DEBIAN_SECURITY (default http://deb.debian.org/debian-security),
PKTACCEL_DEPLOY_CACHE (where downloaded packages are kept).
EOF
}

ROOTFS_ONLY=0
DEB=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	--rootfs-only) ROOTFS_ONLY=1 ;;
	--deb) [ $# -ge 2 ] || { echo "image.sh: --deb needs a file" >&2; exit 1; }
		DEB=$(realpath "$2"); shift ;;
	*) echo "image.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
	esac
	shift
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/build/image
CACHE=${PKTACCEL_DEPLOY_CACHE:-$REPO/build/deploy-cache}/apt
MIRROR=${PKTACCEL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${PKTACCEL_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}

for tool in mmdebstrap sha256sum; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "image.sh: $tool not found (run scripts/deps-deploy.sh as root)" >&2
		exit 1
	fi
done
if [ "$ROOTFS_ONLY" -eq 0 ] && ! command -v podman >/dev/null 2>&1; then
	echo "image.sh: podman not found (run scripts/deps-deploy.sh as root)" >&2
	exit 1
fi

if [ -z "$DEB" ]; then
	DEB=$("$REPO/scripts/package.sh" | tail -n 1)
fi
[ -f "$DEB" ] || { echo "image.sh: no package $DEB" >&2; exit 1; }
VERSION=$(dpkg-deb -f "$DEB" Version)
SHA=$(sha256sum "$DEB" | cut -c1-12)
mkdir -p "$OUT" "$CACHE"
ROOTFS=$OUT/rootfs-$VERSION-$SHA.tar

if [ ! -f "$ROOTFS" ]; then
	rm -f "$OUT"/rootfs-*.tar
	# --variant=apt: the essential set and apt, then the package and what
	# it depends on; no Recommends, but the PMDs of the shipped NIC
	# profiles. The hooks keep the downloaded packages for the next build
	# and leave no apt lists or cache in the image. file-mirror-automount
	# makes the .deb visible to dpkg inside the chroot.
	# shellcheck disable=SC2016 # "$1" is the hooks' argument
	mmdebstrap --variant=apt --mode=root --format=tar \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$DEB" \
		--include=librte-net-i40e23,librte-net-ice23,librte-net-ixgbe23,librte-net-mlx5-23,librte-net-virtio23,curl,ca-certificates \
		--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
		--skip=download/empty --skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $CACHE /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $CACHE" \
		--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages "$1"/var/lib/apt/lists/*_InRelease' \
		--customize-hook='chroot "$1" pktaccel --version' \
		bookworm "$ROOTFS.tmp" \
		"deb $MIRROR bookworm main" \
		"deb $MIRROR bookworm-updates main" \
		"deb $SECURITY bookworm-security main" >&2
	mv "$ROOTFS.tmp" "$ROOTFS"
fi

if [ "$ROOTFS_ONLY" -eq 1 ]; then
	echo "$ROOTFS"
	exit 0
fi

IMAGE=localhost/pktaccel:$VERSION
podman import \
	--change 'ENTRYPOINT ["/usr/bin/pktaccel"]' \
	--change 'CMD ["--help"]' \
	--change 'WORKDIR /' \
	--change "LABEL org.opencontainers.image.title=pktaccel org.opencontainers.image.version=$VERSION" \
	--message "pktaccel $VERSION on Debian 12 (mmdebstrap)" \
	"$ROOTFS" "$IMAGE" >&2
echo "$IMAGE"
