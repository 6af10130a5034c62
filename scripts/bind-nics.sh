#!/usr/bin/env bash
# Bind NICs to a DPDK-capable driver (vfio-pci, uio_pci_generic) and give
# them back to their kernel driver: a checked, idempotent wrapper around
# dpdk-devbind.py (package dpdk). See docs/operations.md.
set -euo pipefail

PROG=$(basename "$0")
DEVBIND=${DPDK_DEVBIND:-/usr/bin/dpdk-devbind.py}
SYSFS=${PKTACCEL_SYSFS:-/sys}		# test hook: a fake sysfs tree
STATE=${PKTACCEL_BIND_STATE:-/var/lib/pktaccel/bind-nics.state}

usage() {
	cat <<EOF
Usage: $PROG [options] DEVICE...
       $PROG --restore DEVICE...
       $PROG --status

Bind network devices to a userspace I/O driver for pktaccel (DPDK), or give
them back to their kernel driver. DEVICE is a PCI address (0000:3b:00.0 or
3b:00.0) or a kernel interface name (ens1f0). Wraps $DEVBIND.

Options:
  -d, --driver DRV        vfio-pci (default; needs an IOMMU or --noiommu) or
                          uio_pci_generic
      --noiommu           vfio-pci without an IOMMU (vfio's unsafe no-IOMMU
                          mode: VMs without a virtual IOMMU); no DMA isolation
  -u, --unbind, --restore give the devices back to the kernel driver they had
                          when this script bound them (recorded in $STATE)
      --kernel-driver DRV with --restore: the kernel driver to use when none
                          was recorded (lspci -k shows it as "Kernel modules")
  -f, --force             bind even an interface that is up or carries the
                          default route (this can cut the server off the
                          network)
  -s, --status            show the network devices and their drivers
      --dry-run           check everything, print the commands that would
                          run, change nothing
  -h, --help              this help

NVIDIA/Mellanox mlx5 NICs are bifurcated: the mlx5 PMD drives them while they
stay bound to mlx5_core, so they are left alone (use the mlx5 profile).
Interfaces that are up or carry the default route are refused without
--force: take them down first (ip link set IFACE down).

Examples:
  $PROG 0000:3b:00.0 0000:3b:00.1
  $PROG --dry-run --driver uio_pci_generic ens5
  $PROG --restore 0000:3b:00.0
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

note() {
	echo "$PROG: $*" >&2
}

# Print a command, then run it unless --dry-run.
run() {
	local q
	q=$(printf '%q ' "$@")
	echo "${q% }"
	if [ "$DRY_RUN" -eq 0 ]; then
		"$@"
	fi
}

DRIVER=vfio-pci
KDRIVER=""
RESTORE=0
FORCE=0
NOIOMMU=0
STATUS=0
DRY_RUN=0
DEVICES=()
CURRENT=()

while [ $# -gt 0 ]; do
	case "$1" in
	-d | --driver) [ $# -ge 2 ] || die "$1 needs an argument"; DRIVER=$2; shift 2 ;;
	--driver=*) DRIVER=${1#*=}; shift ;;
	--kernel-driver) [ $# -ge 2 ] || die "$1 needs an argument"; KDRIVER=$2; shift 2 ;;
	--kernel-driver=*) KDRIVER=${1#*=}; shift ;;
	-u | --unbind | --restore) RESTORE=1; shift ;;
	-f | --force) FORCE=1; shift ;;
	--noiommu) NOIOMMU=1; shift ;;
	-s | --status) STATUS=1; shift ;;
	--dry-run) DRY_RUN=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; DEVICES+=("$@"); break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) DEVICES+=("$1"); shift ;;
	esac
done

[ -x "$DEVBIND" ] || die "$DEVBIND not found: install the Debian package 'dpdk' (scripts/deps.sh)"

if [ "$STATUS" -eq 1 ]; then
	[ ${#DEVICES[@]} -eq 0 ] || die "--status takes no DEVICE"
	run "$DEVBIND" --status-dev net
	exit 0
fi

[ ${#DEVICES[@]} -gt 0 ] || die "no DEVICE given (PCI address or interface name; see --help)"
case "$DRIVER" in
vfio-pci | uio_pci_generic) ;;
igb_uio) die "--driver igb_uio: out-of-tree and not in Debian; use vfio-pci (or uio_pci_generic)" ;;
*) die "--driver: '$DRIVER' is not a userspace I/O driver (vfio-pci or uio_pci_generic)" ;;
esac
if [ -n "$KDRIVER" ]; then
	[ "$RESTORE" -eq 1 ] || die "--kernel-driver goes with --restore"
	[[ "$KDRIVER" =~ ^[A-Za-z0-9_.-]+$ ]] || die "--kernel-driver: bad driver name '$KDRIVER'"
fi

# A device's PCI address from "0000:3b:00.0", "3b:00.0" or an interface name.
resolve() {
	local d=$1 addr link
	if [[ "$d" =~ ^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-1][0-9a-fA-F]\.[0-7]$ ]]; then
		addr=${d,,}
		[ -n "${BASH_REMATCH[1]}" ] || addr="0000:$addr"
		[ -e "$SYSFS/bus/pci/devices/$addr" ] || die "$d: no such PCI device"
	elif [[ "$d" =~ ^[A-Za-z0-9_.:-]{1,15}$ ]] && [ -e "$SYSFS/class/net/$d" ]; then
		# the PCI function is the device or above it (virtio: .../0000:00:03.0/virtio2)
		link=$(readlink -f "$SYSFS/class/net/$d/device" 2>/dev/null || true)
		addr=""
		while [ -n "$link" ] && [ "$link" != / ] && [ "$link" != . ]; do
			if [[ "${link##*/}" =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]] &&
				[ -e "$SYSFS/bus/pci/devices/${link##*/}" ]; then
				addr=${link##*/}
				break
			fi
			link=${link%/*}
		done
		[ -n "$addr" ] ||
			die "$d: not a PCI network device (virtual interface?): use it with net_af_packet instead"
	else
		die "$d: neither a PCI address (DDDD:BB:DD.F) nor a network interface"
	fi
	echo "$addr"
}

driver_of() {
	local l
	l=$(readlink "$SYSFS/bus/pci/devices/$1/driver" 2>/dev/null || true)
	echo "${l##*/}"
}

ifaces_of() {
	local n
	for n in "$SYSFS/bus/pci/devices/$1"/net/* "$SYSFS/bus/pci/devices/$1"/virtio*/net/*; do
		[ -e "$n" ] && echo "${n##*/}"
	done
	return 0
}

# Interfaces with a default route (IPv4 or IPv6), one per line.
default_route_ifaces() {
	{ ip -o route show default 2>/dev/null || true
	  ip -o -6 route show default 2>/dev/null || true; } |
		awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}'
}

state_get() {
	[ -r "$STATE" ] || return 0
	awk -v a="$1" '$1 == a {d = $2} END {if (d != "") print d}' "$STATE"
}

state_set() {
	local tmp
	[ "$DRY_RUN" -eq 0 ] || return 0
	mkdir -p "$(dirname "$STATE")"
	tmp=$(mktemp "$STATE.XXXXXX")
	if [ -r "$STATE" ]; then
		awk -v a="$1" '$1 != a' "$STATE" >"$tmp"
	fi
	[ -z "$2" ] || echo "$1 $2" >>"$tmp"
	mv -f "$tmp" "$STATE"
}

if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
	die "must run as root to bind devices (try --dry-run)"
fi

# ---------------------------------------------------------------- restore
if [ "$RESTORE" -eq 1 ]; then
	for d in "${DEVICES[@]}"; do
		addr=$(resolve "$d")
		cur=$(driver_of "$addr")
		if [ "$cur" = mlx5_core ]; then
			note "$addr: mlx5 (bifurcated) is always on mlx5_core: nothing to restore"
			continue
		fi
		kd=$(state_get "$addr")
		[ -n "$kd" ] || kd=$KDRIVER
		case "$cur" in
		"" | vfio-pci | uio_pci_generic | igb_uio) ;;
		*)
			# on a kernel driver already (ours, or the one given)
			if [ -z "$kd" ] || [ "$cur" = "$kd" ]; then
				note "$addr: already on kernel driver $cur"
				state_set "$addr" ""
				continue
			fi
			;;
		esac
		[ -n "$kd" ] || die "$addr: no kernel driver recorded in $STATE: give --kernel-driver DRV (lspci -k -s $addr)"
		run "$DEVBIND" --bind="$kd" "$addr"
		if [ "$DRY_RUN" -eq 0 ]; then
			[ "$(driver_of "$addr")" = "$kd" ] ||
				die "$addr: still on '$(driver_of "$addr")' after binding to $kd"
			state_set "$addr" ""
		fi
	done
	exit 0
fi

# ---------------------------------------------------------------- bind
# Every check first, so that nothing changes unless every device can go.
ADDRS=()
defroute=$(default_route_ifaces)
for d in "${DEVICES[@]}"; do
	addr=$(resolve "$d")
	[[ " ${ADDRS[*]} " != *" $addr "* ]] || continue
	cur=$(driver_of "$addr")
	vendor=$(cat "$SYSFS/bus/pci/devices/$addr/vendor" 2>/dev/null || true)
	if [ "$cur" = mlx5_core ] || { [ "$vendor" = 0x15b3 ] && [ -z "$cur" ]; }; then
		note "$addr: mlx5 is bifurcated: it stays on mlx5_core and the mlx5 PMD uses it as is; nothing to bind (profile \"mlx5\", \"pci\": \"$addr\")"
		continue
	fi
	if [ "$cur" = "$DRIVER" ]; then
		note "$addr: already bound to $DRIVER"
		continue
	fi
	for i in $(ifaces_of "$addr"); do
		if grep -qxF "$i" <<<"$defroute"; then
			[ "$FORCE" -eq 1 ] ||
				die "$addr ($i) carries the default route: binding it cuts this server off the network (use another NIC, or --force)"
			note "$addr ($i) carries the default route: binding anyway (--force)"
		fi
		flags=$(cat "$SYSFS/class/net/$i/flags" 2>/dev/null || echo 0)
		if [ $((flags & 1)) -eq 1 ]; then
			[ "$FORCE" -eq 1 ] ||
				die "$addr ($i) is up: take it down first (ip link set $i down), or use --force"
			note "$addr ($i) is up: binding anyway (--force)"
		fi
	done
	ADDRS+=("$addr")
	CURRENT+=("$cur")
done
if [ ${#ADDRS[@]} -eq 0 ]; then
	exit 0
fi

# The driver: loaded, and for vfio-pci an IOMMU (or its unsafe no-IOMMU mode).
if [ "$DRIVER" = vfio-pci ]; then
	groups=$(find "$SYSFS/kernel/iommu_groups" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)
	noiommu_file="$SYSFS/module/vfio/parameters/enable_unsafe_noiommu_mode"
	if [ -z "$groups" ]; then
		if [ "$NOIOMMU" -eq 0 ]; then
			die "no IOMMU: vfio-pci needs one (intel_iommu=on iommu=pt or amd_iommu=on on the kernel command line); in a VM without a virtual IOMMU use --noiommu or --driver uio_pci_generic"
		fi
		if [ -e "$noiommu_file" ]; then
			[ "$(cat "$noiommu_file")" = Y ] ||
				run sh -c "echo 1 > $noiommu_file"
		else
			run modprobe vfio enable_unsafe_noiommu_mode=1
		fi
	fi
fi
if [ ! -d "$SYSFS/bus/pci/drivers/$DRIVER" ]; then
	run modprobe "$DRIVER"
fi

args=(--bind="$DRIVER")
[ "$FORCE" -eq 0 ] || args+=(--force)
run "$DEVBIND" "${args[@]}" "${ADDRS[@]}"

for k in "${!ADDRS[@]}"; do
	addr=${ADDRS[$k]}
	kd=${CURRENT[$k]}
	if [ "$DRY_RUN" -eq 1 ]; then
		continue
	fi
	now=$(driver_of "$addr")
	[ "$now" = "$DRIVER" ] ||
		die "$addr: on '${now:-no driver}' after binding to $DRIVER (see dmesg)"
	# remember the kernel driver for --restore, not a userspace one
	case "$kd" in
	"" | vfio-pci | uio_pci_generic | igb_uio) ;;
	*) state_set "$addr" "$kd" ;;
	esac
done
exit 0
