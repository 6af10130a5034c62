#!/usr/bin/env bash
# Install (Debian 12, apt-get only) every package that building, testing and
# the lab need. Idempotent: asks dpkg which are missing and installs only
# those; prints nothing when everything is already there. --deploy adds
# what the deployment artefacts need (scripts/deps-deploy.sh calls it so).
set -euo pipefail

PACKAGES=(
	build-essential		# gcc, make, libc headers
	meson
	ninja-build
	pkg-config
	libdpdk-dev
	dpdk			# dpdk-testpmd and the PMDs
	dpdk-dev
	libnuma-dev
	libjansson-dev
	libpcap-dev
	check
	clang			# fuzz targets (tests/fuzz, scripts/fuzz.sh)
	libclang-rt-14-dev	# clang 14's libFuzzer and sanitizer runtimes
	libedit-dev
	libncurses-dev		# pktaccelctl top (ncurses)
	tmux			# the tests drive pktaccelctl top in a tmux pane
	libmicrohttpd-dev	# the Prometheus exporter's HTTP server (lib/metrics)
	prometheus		# promtool: the tests lint /metrics with it
	python3-scapy		# tests and lab tools (/usr/bin/python3)
	python3-pytest
	python3-matplotlib	# perf/charts.py (docs/img/), and its test
	iproute2		# ip netns / veth for the live tests
	ethtool			# checksum offload off on veths
	tcpdump
	tcpreplay		# the live lab's replay test (tests/integration/test_lab.py), perf/blocked_time.py
	curl			# the live lab by hand (docs/lab.md)
	dpkg-dev		# scripts/package.sh: dpkg-shlibdeps, dpkg-deb
	fakeroot		# scripts/package.sh: root-owned files in the packages
	lintian			# checks the packages (tests/integration/test_package.py)
	groff-base		# renders the man pages in their test
	procps
	gcovr			# scripts/coverage.sh
	shellcheck		# lints scripts/*.sh (tests/integration/test_deploy.py)
	bird2			# the BGP lab: BIRD 2 in the appliance and router namespaces
	nftables		# the full-NAT lab: packet loss injected in its namespaces
	python3-jsonschema	# validates docs/openrpc.json (tests/integration/test_openrpc.py)
	python3-setuptools	# builds the client package offline (pip install --no-build-isolation tools/pylib)
	python3-venv		# the client package's install test
	nginx-light		# PROXY protocol readers: tests/integration/test_lb_proxy_reader.py
	haproxy
)
# --deploy: also what the deployment artefacts and their slow tests need
# (scripts/image.sh, deploy/ansible, scripts/test-deploy.sh)
if [ "${1:-}" = "--deploy" ]; then
	PACKAGES+=(
		mmdebstrap	# Debian 12 root file systems from the archive
		podman		# builds and runs the OCI image
		runc		# the OCI runtime podman uses here
		uidmap		# podman's user namespaces
		ansible		# deploy/ansible (and the containers.podman collection)
		ansible-lint
		iputils-ping	# test-deploy.sh pings a VIP of the image's live daemon
	)
elif [ $# -gt 0 ]; then
	echo "deps.sh: unknown option '$1' (--deploy: also the deployment tools)" >&2
	exit 1
fi
# npm fetches the OpenRPC meta-schema (scripts/openrpc-meta.sh). Debian's
# nodejs and npm, unless a node with its own npm is already there (a
# NodeSource nodejs carries npm and conflicts with Debian's package).
if ! command -v npm >/dev/null 2>&1; then
	PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	if [ "$status" != "installed" ]; then
		missing+=("$p")
	fi
done

[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		SUDO=(sudo -n)
	else
		echo "deps.sh: missing packages (${missing[*]}); run as root (or with passwordless sudo) to install them" >&2
		exit 1
	fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: apt-get not found; this script supports Debian 12 only (missing: ${missing[*]})" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

# nginx and haproxy are there for the PROXY protocol tests (and the
# full-NAT lab), which run their own instances in temporary directories
# and network namespaces; their packages also enable and start a
# system-wide service (nginx on port 80): when this run installed them on
# a systemd host, that service is stopped and disabled again.
if [ -d /run/systemd/system ]; then
	for p in nginx-light haproxy; do
		case " ${missing[*]} " in
		*" $p "*)
			unit=${p%-light}
			"${SUDO[@]}" systemctl disable --now "$unit.service" >/dev/null 2>&1 || true
			;;
		esac
	done
fi
