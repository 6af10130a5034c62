#!/usr/bin/env bash
# Reserve and mount huge pages for pktaccel: a checked, idempotent wrapper
# around dpdk-hugepages.py (package dpdk). See docs/operations.md.
set -euo pipefail

PROG=$(basename "$0")
HUGEPAGES_PY=${DPDK_HUGEPAGES:-/usr/bin/dpdk-hugepages.py}
SYSFS=${PKTACCEL_SYSFS:-/sys}	# test hook: a fake sysfs tree

usage() {
	cat <<EOF
Usage: $PROG [options]

Reserve huge pages for pktaccel (DPDK) and mount hugetlbfs. Wraps
$HUGEPAGES_PY; changes only what differs from the request, so running it
twice is harmless.

Amount (one of; per NUMA node, like dpdk-hugepages.py):
  -n, --pages N       N pages on each NUMA node (or on --node only)
  -m, --memory SIZE   SIZE of memory on each node: 512M, 2G, ... (a whole
                      number of pages)
Options:
  -s, --size 2M|1G    page size (default 2M); 1G pages are best reserved at
                      boot (kernel command line), see docs/operations.md
      --node N        reserve on NUMA node N only (repeatable); default:
                      every node
  -d, --mount DIR     hugetlbfs mount point (default /dev/hugepages for 2M,
                      /dev/hugepages1G for 1G); give "-" to skip mounting
      --group GROUP   owner group of the mount (for a non-root daemon)
      --clear         release the pages of this size (on --node or every
                      node) and unmount DIR
      --show          print the current reservation and mounts, change nothing
      --dry-run       print the commands that would run, change nothing
  -h, --help          this help

Examples:
  $PROG --pages 1024                  # 2 GiB of 2M pages on each node
  $PROG --size 1G --memory 4G --node 0
  $PROG --dry-run --memory 1G
  $PROG --clear
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
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

# "2M" -> 2048 (kB); "512M" "2G" "1024K" "4096" (bytes) -> kB. Empty on error.
size_kb() {
	local s=${1^^} n unit
	if [[ ! "$s" =~ ^([0-9]{1,12})([KMG]?)B?$ ]]; then
		return 0
	fi
	n=$((10#${BASH_REMATCH[1]}))
	unit=${BASH_REMATCH[2]}
	case "$unit" in
	"") [ $((n % 1024)) -eq 0 ] && echo $((n / 1024)) ;;
	K) echo "$n" ;;
	M) echo $((n * 1024)) ;;
	G) echo $((n * 1024 * 1024)) ;;
	esac
	return 0
}

PAGES=""
MEMORY=""
SIZE=2M
NODES=()
MOUNT=""
GROUP=""
CLEAR=0
SHOW=0
DRY_RUN=0

while [ $# -gt 0 ]; do
	case "$1" in
	-n | --pages) [ $# -ge 2 ] || die "$1 needs an argument"; PAGES=$2; shift 2 ;;
	--pages=*) PAGES=${1#*=}; shift ;;
	-m | --memory) [ $# -ge 2 ] || die "$1 needs an argument"; MEMORY=$2; shift 2 ;;
	--memory=*) MEMORY=${1#*=}; shift ;;
	-s | --size) [ $# -ge 2 ] || die "$1 needs an argument"; SIZE=$2; shift 2 ;;
	--size=*) SIZE=${1#*=}; shift ;;
	--node) [ $# -ge 2 ] || die "$1 needs an argument"; NODES+=("$2"); shift 2 ;;
	--node=*) NODES+=("${1#*=}"); shift ;;
	-d | --mount) [ $# -ge 2 ] || die "$1 needs an argument"; MOUNT=$2; shift 2 ;;
	--mount=*) MOUNT=${1#*=}; shift ;;
	--group) [ $# -ge 2 ] || die "$1 needs an argument"; GROUP=$2; shift 2 ;;
	--group=*) GROUP=${1#*=}; shift ;;
	--clear) CLEAR=1; shift ;;
	--show) SHOW=1; shift ;;
	--dry-run) DRY_RUN=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

[ -x "$HUGEPAGES_PY" ] || die "$HUGEPAGES_PY not found: install the Debian package 'dpdk' (scripts/deps.sh)"

if [ "$SHOW" -eq 1 ]; then
	if [ -n "$PAGES$MEMORY" ] || [ "$CLEAR" -eq 1 ]; then
		die "--show changes nothing: give it alone"
	fi
	run "$HUGEPAGES_PY" --show
	exit 0
fi

# Page size: one the kernel offers.
case "${SIZE^^}" in
2M | 2048K) SIZE=2M; PAGE_KB=2048 ;;
1G | 1024M | 1048576K) SIZE=1G; PAGE_KB=1048576 ;;
*) die "--size: '$SIZE' is not a huge page size (2M or 1G)" ;;
esac
if [ ! -d "$SYSFS/kernel/mm/hugepages/hugepages-${PAGE_KB}kB" ]; then
	offered=""
	for d in "$SYSFS"/kernel/mm/hugepages/hugepages-*kB; do
		[ -d "$d" ] || continue
		kb=${d##*hugepages-}
		kb=${kb%kB}
		if [ $((kb % 1048576)) -eq 0 ]; then kb="$((kb / 1048576))G";
		elif [ $((kb % 1024)) -eq 0 ]; then kb="$((kb / 1024))M"; else kb="${kb}K"; fi
		offered="${offered:+$offered }$kb"
	done
	die "--size $SIZE: this kernel/CPU offers no $SIZE pages (available: ${offered:-none})"
fi

if [ "$CLEAR" -eq 1 ]; then
	[ -z "$PAGES$MEMORY" ] || die "--clear takes no --pages/--memory"
	WANT=0
else
	[ -n "$PAGES" ] || [ -n "$MEMORY" ] ||
		die "say how much: --pages N or --memory SIZE (see --help)"
	[ -z "$PAGES" ] || [ -z "$MEMORY" ] ||
		die "--pages and --memory are mutually exclusive"
	if [ -n "$PAGES" ]; then
		[[ "$PAGES" =~ ^[0-9]{1,9}$ ]] ||
			die "--pages: '$PAGES' is not a number of pages"
		WANT=$((10#$PAGES))
	else
		kb=$(size_kb "$MEMORY")
		[ -n "$kb" ] || die "--memory: '$MEMORY' is not a size (e.g. 512M, 2G)"
		[ $((kb % PAGE_KB)) -eq 0 ] ||
			die "--memory: $MEMORY is not a whole number of $SIZE pages"
		WANT=$((kb / PAGE_KB))
	fi
	[ "$WANT" -gt 0 ] || die "0 pages asked for: use --clear to release pages"
fi

# NUMA nodes: those asked for, which must exist, else every node.
if [ -d "$SYSFS/devices/system/node/node0" ]; then
	ALL_NODES=()
	for d in "$SYSFS"/devices/system/node/node[0-9]*; do
		ALL_NODES+=("${d##*/node}")
	done
	[ ${#NODES[@]} -gt 0 ] || NODES=("${ALL_NODES[@]}")
	uniq_nodes=()
	for n in "${NODES[@]}"; do
		[[ "$n" =~ ^[0-9]{1,4}$ ]] || die "--node: '$n' is not a node number"
		n=$((10#$n))
		[[ " ${uniq_nodes[*]} " == *" $n "* ]] || uniq_nodes+=("$n")
		[ -d "$SYSFS/devices/system/node/node$n" ] ||
			die "--node: no NUMA node $n (nodes: ${ALL_NODES[*]})"
	done
	NODES=("${uniq_nodes[@]}")
	node_file() { echo "$SYSFS/devices/system/node/node$1/hugepages/hugepages-${PAGE_KB}kB/nr_hugepages"; }
else
	[ ${#NODES[@]} -eq 0 ] || die "--node: this machine has no NUMA nodes"
	NODES=("")
	node_file() { echo "$SYSFS/kernel/mm/hugepages/hugepages-${PAGE_KB}kB/nr_hugepages"; }
fi

if [ -z "$MOUNT" ]; then
	if [ "$SIZE" = 2M ]; then MOUNT=/dev/hugepages; else MOUNT=/dev/hugepages1G; fi
fi
if [ "$MOUNT" != "-" ]; then
	case "$MOUNT" in
	/*) ;;
	*) die "--mount: '$MOUNT' is not an absolute path" ;;
	esac
fi
if [ -n "$GROUP" ] && ! getent group "$GROUP" >/dev/null; then
	die "--group: no group '$GROUP'"
fi

if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
	die "must run as root to reserve pages (try --dry-run)"
fi

# Reserve (or release) on each node whose count differs.
reserve() {
	local n f have got args why
	for n in "${NODES[@]}"; do
		f=$(node_file "$n")
		[ -r "$f" ] || die "cannot read $f"
		have=$(cat "$f")
		[ "$have" -eq "$WANT" ] && continue
		args=(-p "$SIZE" -r "$((WANT * PAGE_KB))K")
		[ -n "$n" ] && args+=(-n "$n")
		# its own failure message is not enough: check, and say why
		run "$HUGEPAGES_PY" "${args[@]}" || true
		[ "$DRY_RUN" -eq 0 ] || continue
		got=$(cat "$f")
		[ "$got" -ne "$WANT" ] || continue
		if [ "$WANT" -lt "$have" ]; then
			why="pages in use: a running DPDK process, or files left under a hugetlbfs mount"
		else
			why="not enough free contiguous memory: free some, or reserve at boot"
			# the kernel keeps what it found: give it back
			args=(-p "$SIZE" -r "$((have * PAGE_KB))K")
			[ -n "$n" ] && args+=(-n "$n")
			"$HUGEPAGES_PY" "${args[@]}" || true
		fi
		die "node ${n:-0}: $got $SIZE pages instead of $WANT ($why)"
	done
}

# Mount: hugetlbfs at MOUNT with this page size (or unmount on --clear).
mounted_size=""
mounted=0
if [ "$MOUNT" != "-" ]; then
	while read -r _ dir fstype opts _; do
		[ "$dir" = "$MOUNT" ] || continue
		[ "$fstype" = hugetlbfs ] || die "$MOUNT is mounted, but not as hugetlbfs ($fstype)"
		mounted=1
		mounted_size=$(echo "$opts" | tr ',' '\n' | sed -n 's/^pagesize=//p')
	done </proc/mounts
fi
# Release: unmount first, which frees the pages held by files a stopped
# DPDK process left there (they are kept for secondary processes).
if [ "$CLEAR" -eq 1 ]; then
	if [ "$mounted" -eq 1 ]; then
		run "$HUGEPAGES_PY" -u -d "$MOUNT"
		if [ "$DRY_RUN" -eq 0 ] &&
			awk -v d="$MOUNT" '$2 == d && $3 == "hugetlbfs" {ok = 1} END {exit !ok}' /proc/mounts; then
			die "cannot unmount $MOUNT: in use (is pktaccel or another DPDK process running?)"
		fi
	fi
	reserve
	exit 0
fi
reserve
if [ "$MOUNT" != "-" ]; then
	if [ "$mounted" -eq 1 ]; then
		[ -z "$mounted_size" ] || [ "$(size_kb "$mounted_size")" = "$PAGE_KB" ] ||
			die "$MOUNT is hugetlbfs with pagesize=$mounted_size, not $SIZE: give another --mount"
	else
		[ -d "$MOUNT" ] || run mkdir -p "$MOUNT"
		args=(-p "$SIZE" -m -d "$MOUNT")
		[ -n "$GROUP" ] && args+=(-G "$(getent group "$GROUP" | cut -d: -f3)")
		run "$HUGEPAGES_PY" "${args[@]}"
		# dpdk-hugepages.py does not report a failed mount
		if [ "$DRY_RUN" -eq 0 ] &&
			! awk -v d="$MOUNT" '$2 == d && $3 == "hugetlbfs" {ok = 1} END {exit !ok}' /proc/mounts; then
			die "mounting hugetlbfs on $MOUNT failed"
		fi
	fi
fi
exit 0
