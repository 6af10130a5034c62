#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The slow deployment tests (docs/deployment.md): the package installed by
# apt on a fresh Debian 12 root file system made from Debian's archive and
# a replay there; the OCI image built and a replay in it; a live daemon of
# the image on a veth with net_af_packet inside a network namespace,
# answering ping to its VIP; ansible-lint; the Ansible role run against a
# container with systemd (deploy/ansible/site.yml), a second run changing
# nothing, and the rolling restart (fleet-restart.yml). Root only; the
# last line is "N passed, N failed".
#
# Installs what it needs (scripts/deps.sh, scripts/deps-deploy.sh). Kept
# between runs in $PKTACCEL_DEPLOY_CACHE (default /var/cache/pktaccel-deploy):
# the downloaded Debian packages and the Ansible target's root file system.
set -uo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/test-deploy.sh [--help] [--keep]

Runs the deployment tests (package on a fresh root file system, image,
live daemon in the image, Ansible against a container); prints
"N passed, N failed" last. --keep leaves the containers and namespaces
for inspection.
EOF
}

KEEP=0
case "${1:-}" in
-h|--help) usage; exit 0 ;;
--keep) KEEP=1 ;;
"") ;;
*) echo "test-deploy.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "test-deploy.sh: needs root (podman, chroot, network namespaces)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PKTACCEL_DEPLOY_CACHE=${PKTACCEL_DEPLOY_CACHE:-/var/cache/pktaccel-deploy}
CACHE=$PKTACCEL_DEPLOY_CACHE
WORK=$(mktemp -d -t pa-deploy.XXXXXX)
chmod 0755 "$WORK"
T0=$(date +%s)
NAME=pa-deploy-$$		# containers and namespaces of this run

# This machine's podman needs runc with cgroupfs (hybrid cgroups) and
# explicit rlimits no higher than the shell's (setrlimit cannot raise
# them here); a usual host needs none of it.
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
ULIMITS=(--ulimit "nofile=$(ulimit -n):$(ulimit -n)" --ulimit nproc=4096:4096)

PASSED=0
FAILED=0
log() { echo "test-deploy: $*" >&2; }
pass() { PASSED=$((PASSED + 1)); log "PASS $1 ($(( $(date +%s) - T0 ))s)"; }
fail() { FAILED=$((FAILED + 1)); log "FAIL $1"; [ -f "$WORK/$1.log" ] && tail -n 40 "$WORK/$1.log" >&2; }
# run NAME CMD...: one test, its output in $WORK/NAME.log
run() {
	local name=$1
	shift
	if "$@" > "$WORK/$name.log" 2>&1; then pass "$name"; else fail "$name"; fi
}

cleanup() {
	[ "$KEEP" -eq 1 ] && { log "kept: $WORK, containers and namespaces $NAME-*"; return; }
	for c in "$NAME-live" "$NAME-target"; do
		"${PODMAN[@]}" rm -f -t 5 "$c" >/dev/null 2>&1 || true
	done
	for ns in "$NAME-app" "$NAME-cli"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	if mountpoint -q "$WORK/rootfs/proc" 2>/dev/null; then
		umount "$WORK/rootfs/dev" "$WORK/rootfs/sys" "$WORK/rootfs/proc" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

# ------------------------------------------------------------- set-up
if ! bash "$REPO/scripts/deps.sh" >&2 || ! bash "$REPO/scripts/deps-deploy.sh" >&2; then
	log "cannot install the dependencies"
	echo "0 passed, 1 failed"
	exit 1
fi
mkdir -p "$CACHE"
VERSION=$(sed -n "s/^\s*version: '\([^']*\)'.*/\1/p" "$REPO/meson.build" | head -n 1)

# summary_ok FILE: the last line of FILE is a replay summary that adds up
summary_ok() {
	tail -n 1 "$1" | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
assert s["rx_packets"] > 0, s
assert s["rx_packets"] == s["tx_packets"] + s["dropped_packets"], s
assert s["mbufs_in_use"] == 0, s
print(s["rx_packets"], s["tx_packets"], s["dropped_packets"])'
}

# ------------------------------------------------------------ package
DEB=
t_package() {
	DEB=$("$REPO/scripts/package.sh" | tail -n 1) &&
	[ "$(basename "$DEB")" = "pktaccel_${VERSION}_$(dpkg --print-architecture).deb" ] &&
	[ -f "$DEB" ]
}
run package_builds t_package
if [ -z "$DEB" ] || [ ! -f "$DEB" ]; then
	log "no package: nothing else can be tested"
	echo "$PASSED passed, $((FAILED + 1)) failed"
	exit 1
fi

# --------------------------------------- a fresh Debian 12 + the package
ROOTFS=
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
t_rootfs() {
	ROOTFS=$("$REPO/scripts/image.sh" --rootfs-only --deb "$DEB" | tail -n 1) &&
	[ -f "$ROOTFS" ] &&
	mkdir -p "$WORK/rootfs" && tar -C "$WORK/rootfs" -xf "$ROOTFS" &&
	chroot "$WORK/rootfs" dpkg-query -W -f='${Status} ${Version}\n' pktaccel |
		grep -qx "install ok installed $VERSION" &&
	[ -f "$WORK/rootfs/etc/pktaccel/pktaccel.json" ] &&
	[ -f "$WORK/rootfs/lib/systemd/system/pktaccel.service" ] &&
	[ -f "$WORK/rootfs/usr/share/man/man8/pktaccel.8.gz" ] &&
	chroot "$WORK/rootfs" pktaccel --check-config --replay x -c /etc/pktaccel/pktaccel.json
}
run rootfs_installs_the_package_with_its_dependencies t_rootfs

t_rootfs_replay() {
	local r=$WORK/rootfs
	mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
	mount --rbind /dev "$r/dev" || return 1
	cp "$REPO/tests/data/sample.pcap" "$r/tmp/in.pcap"
	chroot "$r" pktaccel --replay /tmp/in.pcap --replay-out /tmp/out.pcap \
		-c /etc/pktaccel/pktaccel.json > "$WORK/rootfs-replay.out"
	local rc=$?
	umount -R "$r/dev" "$r/sys"; umount "$r/proc"
	[ $rc -eq 0 ] && summary_ok "$WORK/rootfs-replay.out" > "$WORK/rootfs-replay.sum" &&
	[ -s "$r/tmp/out.pcap" ]
}
[ -n "$ROOTFS" ] && run rootfs_replays_the_sample t_rootfs_replay

# -------------------------------------------------------------- image
IMAGE=
t_image() {
	IMAGE=$("$REPO/scripts/image.sh" --deb "$DEB" | tail -n 1) &&
	[ "$IMAGE" = "localhost/pktaccel:$VERSION" ] &&
	"${PODMAN[@]}" image inspect --format '{{json .Config.Entrypoint}}' "$IMAGE" |
		grep -qx '\["/usr/bin/pktaccel"\]'
}
run image_builds_with_the_daemon_as_entrypoint t_image

t_image_replay() {
	mkdir -p "$WORK/data" && cp "$REPO/tests/data/sample.pcap" "$WORK/data/in.pcap" &&
	"${PODMAN[@]}" run --rm --network none "${ULIMITS[@]}" -v "$WORK/data:/data" \
		"$IMAGE" --replay /data/in.pcap --replay-out /data/out.pcap \
		-c /etc/pktaccel/pktaccel.json > "$WORK/image-replay.out" &&
	summary_ok "$WORK/image-replay.out" > "$WORK/image-replay.sum" &&
	[ -s "$WORK/data/out.pcap" ] &&
	{ [ ! -f "$WORK/rootfs-replay.sum" ] || cmp "$WORK/rootfs-replay.sum" "$WORK/image-replay.sum"; }
}
[ -n "$IMAGE" ] && run image_replays_the_sample t_image_replay

# A live daemon of the image in a network namespace: its port is a veth
# (net_af_packet) whose peer is a client in another namespace; the client
# pings the VIP through the appliance, the metrics listener says healthy,
# the console reaches it through the socket's volume, SIGTERM stops it.
t_image_live() {
	local app=$NAME-app cli=$NAME-cli
	ip netns add "$app" && ip netns add "$cli" &&
	ip link add pa-dep0 netns "$app" type veth peer name pa-dep1 netns "$cli" &&
	ip -n "$app" link set pa-dep0 up && ip -n "$app" link set lo up &&
	ip -n "$cli" addr add 198.51.100.1/24 dev pa-dep1 &&
	ip -n "$cli" link set pa-dep1 up &&
	ip -n "$cli" route add 192.0.2.10/32 via 198.51.100.5 || return 1
	mkdir -p "$WORK/live/etc" "$WORK/live/run"
	cat > "$WORK/live/etc/pktaccel.json" <<'EOF'
{
  "ports": [{"name": "wan0", "devargs": "net_af_packet0,iface=pa-dep0",
             "addr": ["198.51.100.5/24"], "gateway": "198.51.100.1"}],
  "pipeline": {"mode": "rtc"},
  "lb": {"local_addr": "198.51.100.5",
         "services": [{"name": "web", "vip": "192.0.2.10", "port": 80,
                       "proto": "tcp", "backends": [{"addr": "10.1.0.1"}]}]},
  "metrics": {"listen": "127.0.0.1:9469"}
}
EOF
	"${PODMAN[@]}" run -d --name "$NAME-live" "${ULIMITS[@]}" \
		--network "ns:/run/netns/$app" --cap-add NET_RAW,NET_ADMIN,IPC_LOCK \
		-v "$WORK/live/etc:/etc/pktaccel:ro" -v "$WORK/live/run:/run/pktaccel" \
		"$IMAGE" --no-huge -m 512 --no-pci -- -c /etc/pktaccel/pktaccel.json || return 1
	local _ ok=0
	for _ in $(seq 1 60); do
		if ip netns exec "$app" curl -sf -o /dev/null http://127.0.0.1:9469/health; then
			ok=1; break
		fi
		sleep 1
	done
	[ $ok -eq 1 ] || { "${PODMAN[@]}" logs "$NAME-live"; return 1; }
	ip netns exec "$cli" ping -c 3 -W 2 192.0.2.10 || return 1
	[ -x "$REPO/build/app/pktaccelctl" ] &&
		{ "$REPO/build/app/pktaccelctl" -s "$WORK/live/run/pktaccel.sock" -j stats_get |
		  /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["lb"]["icmp_echo_replies"] >= 3, s["lb"]' || return 1; }
	"${PODMAN[@]}" stop -t 30 "$NAME-live" &&
	[ "$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$NAME-live")" = 0 ]
}
[ -n "$IMAGE" ] && run image_runs_live_on_a_veth_in_a_namespace t_image_live

# ------------------------------------------------------------ Ansible
ANSIBLE=$REPO/deploy/ansible
t_lint() {
	(cd "$ANSIBLE" && ansible-lint --offline -q site.yml fleet-restart.yml roles/pktaccel)
}
run ansible_lint_is_clean t_lint

# The target: a Debian 12 container with systemd (and python3 for
# Ansible), made from the archive with mmdebstrap, kept in the cache. Its
# apt lists stay, as on an installed host (the role updates them when
# they are older than an hour).
TARGET_IMAGE=localhost/pktaccel-ansible-target:bookworm
t_target() {
	local tar=$CACHE/ansible-target.tar
	if [ ! -f "$tar" ]; then
		mkdir -p "$CACHE/apt"
		# shellcheck disable=SC2016 # "$1" is the hooks' argument
		mmdebstrap --variant=apt --mode=root --format=tar \
			--aptopt='APT::Install-Recommends "false"' \
			--include=systemd,systemd-sysv,dbus,python3,python3-apt,iproute2,ca-certificates \
			--skip=download/empty --skip=essential/unlink --skip=cleanup/apt/lists \
			--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
			--setup-hook="sync-in $CACHE/apt /var/cache/apt/archives/" \
			--customize-hook="sync-out /var/cache/apt/archives $CACHE/apt" \
			--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
			bookworm "$tar.tmp" \
			"deb ${PKTACCEL_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm main" \
			"deb ${PKTACCEL_DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm-updates main" \
			"deb ${PKTACCEL_DEBIAN_SECURITY:-http://deb.debian.org/debian-security} bookworm-security main" &&
		mv "$tar.tmp" "$tar" || return 1
	fi
	"${PODMAN[@]}" image exists "$TARGET_IMAGE" ||
		"${PODMAN[@]}" import --change 'CMD ["/lib/systemd/systemd"]' "$tar" "$TARGET_IMAGE" || return 1
	# the packages the role's apt downloads are kept for the next run
	mkdir -p "$CACHE/apt/partial"
	"${PODMAN[@]}" run -d --name "$NAME-target" --privileged --systemd=always \
		-v "$CACHE/apt:/var/cache/apt/archives" \
		"${ULIMITS[@]}" "$TARGET_IMAGE" /lib/systemd/systemd || return 1
	local _
	for _ in $(seq 1 60); do
		case $("${PODMAN[@]}" exec "$NAME-target" systemctl is-system-running 2>/dev/null) in
		running|degraded) return 0 ;;
		esac
		sleep 1
	done
	return 1
}
run ansible_target_container_boots t_target

cat > "$WORK/inventory.yml" <<EOF
---
pktaccel:
  children:
    pktaccel_lab:
      hosts:
        $NAME-target:
          ansible_connection: containers.podman.podman
          ansible_podman_extra_args: --runtime runc --cgroup-manager cgroupfs
          ansible_python_interpreter: /usr/bin/python3
          ansible_become: false    # root in the container already
EOF
# the lab group's variables of the example inventory, this run's package
cp -r "$ANSIBLE/inventory/group_vars" "$WORK/group_vars"
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_HOST_KEY_CHECKING=0
export ANSIBLE_ROLES_PATH=$ANSIBLE/roles
playbook() {	# playbook PLAYBOOK LOG
	ansible-playbook -i "$WORK/inventory.yml" -e "pktaccel_deb=$DEB" \
		"$ANSIBLE/$1" > "$2" 2>&1
	local rc=$?
	cat "$2"
	return $rc
}
recap() {	# recap LOG KEY: the value of KEY= in the play recap
	sed -n "s/^$NAME-target *:.* $2=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
t_site() {
	playbook site.yml "$WORK/site1.out" &&
	[ "$(recap "$WORK/site1.out" failed)" = 0 ] &&
	"${PODMAN[@]}" exec "$NAME-target" systemctl is-active pktaccel.service &&
	"${PODMAN[@]}" exec "$NAME-target" systemctl is-enabled pktaccel.service &&
	"${PODMAN[@]}" exec "$NAME-target" pktaccelctl -j health_get &&
	"${PODMAN[@]}" exec "$NAME-target" pktaccel --check-config -c /etc/pktaccel/pktaccel.json
}
run ansible_site_installs_configures_starts_and_waits_healthy t_site

t_site_again() {
	playbook site.yml "$WORK/site2.out" &&
	[ "$(recap "$WORK/site2.out" changed)" = 0 ] &&
	[ "$(recap "$WORK/site2.out" failed)" = 0 ]
}
run ansible_second_run_changes_nothing t_site_again

t_bad_config() {
	# a configuration the daemon refuses never replaces the running one
	local before after
	before=$("${PODMAN[@]}" exec "$NAME-target" md5sum /etc/pktaccel/pktaccel.json) &&
	! ansible-playbook -i "$WORK/inventory.yml" -e "pktaccel_deb=$DEB" \
		-e '{"pktaccel_config": {"ports": [{"name": "p0", "devargs": "net_null0"}], "pipeline": {"ring_size": 1000}}}' \
		"$ANSIBLE/site.yml" > "$WORK/bad.out" 2>&1 &&
	cat "$WORK/bad.out" && grep -q 'pipeline.ring_size' "$WORK/bad.out" &&
	after=$("${PODMAN[@]}" exec "$NAME-target" md5sum /etc/pktaccel/pktaccel.json) &&
	[ "$before" = "$after" ] &&
	"${PODMAN[@]}" exec "$NAME-target" systemctl is-active pktaccel.service
}
run ansible_refuses_a_bad_configuration_and_keeps_the_running_one t_bad_config

t_fleet() {
	local pid0 pid1
	pid0=$("${PODMAN[@]}" exec "$NAME-target" systemctl show -p MainPID --value pktaccel.service) &&
	playbook fleet-restart.yml "$WORK/fleet.out" &&
	[ "$(recap "$WORK/fleet.out" failed)" = 0 ] &&
	grep -q 'Drain (withdraw' "$WORK/fleet.out" &&
	pid1=$("${PODMAN[@]}" exec "$NAME-target" systemctl show -p MainPID --value pktaccel.service) &&
	[ "$pid0" != "$pid1" ] && [ "$pid1" != 0 ]
}
run ansible_fleet_restart_drains_restarts_and_undrains t_fleet

log "took $(( $(date +%s) - T0 ))s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
