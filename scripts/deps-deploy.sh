#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install (Debian 12, apt-get only) what the deployment artefacts and their
# slow tests need beyond scripts/deps.sh: mmdebstrap for root file systems
# from Debian's archive, podman and runc for the image, ansible and
# ansible-lint for the role. Idempotent, like deps.sh: installs only what
# is missing and prints nothing when everything is there.
set -euo pipefail

usage() {
	cat <<'USAGE'
Usage: scripts/deps-deploy.sh [--help]

Installs the Debian packages that scripts/image.sh, deploy/ansible and
scripts/test-deploy.sh need (after scripts/deps.sh).
USAGE
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
"") ;;
*) echo "deps-deploy.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
esac

PACKAGES=(
	mmdebstrap		# Debian 12 root file systems from the archive
	podman			# builds and runs the OCI image
	runc			# the OCI runtime podman uses here
	uidmap			# podman's user namespaces
	ansible			# deploy/ansible (and the containers.podman collection)
	ansible-lint
	curl			# the examples' GET /health
	iputils-ping		# test-deploy.sh pings a VIP of the image's live daemon
)

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	if [ "$status" != "installed" ]; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps-deploy.sh: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "deps-deploy.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
	"${missing[@]}" >&2
