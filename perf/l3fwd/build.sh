#!/bin/sh
# Build DPDK's l3fwd example (the peer of perf/bench_acl.py) against the
# installed libdpdk, outside the source tree: the example's own Makefile
# (pkg-config libdpdk) on a copy under build/peers/ (ignored by git).
# The example code is never committed here.
#
# Usage: perf/l3fwd/build.sh [OUTDIR]     (default: build/peers)
# Prints the path of the binary on its last line.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-"$ROOT/build/peers"}
SRC=/usr/share/dpdk/examples

if [ ! -f "$SRC/l3fwd/main.c" ]; then
	echo "installing dpdk-doc (DPDK example sources)" >&2
	apt-get install -y dpdk-doc >&2
fi
pkg-config --exists libdpdk || { echo "libdpdk not found (apt-get install libdpdk-dev)" >&2; exit 1; }

mkdir -p "$OUT/examples"
# The Makefile includes ../common, so copy both side by side.
rm -rf "$OUT/examples/l3fwd" "$OUT/examples/common"
cp -r "$SRC/l3fwd" "$SRC/common" "$OUT/examples/"
# l3fwd 22.11 requests RX checksum offload unconditionally and net_pcap
# offers none, so rte_eth_dev_configure() fails with -EINVAL. The ACL path
# never reads the checksum flags (rfc1812_process only decrements the TTL),
# so the first change to the copy is to request no RX offload.
sed -i 's/\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,/.offloads = 0, \/* pktaccel perf: net_pcap has no RX offloads *\//' \
	"$OUT/examples/l3fwd/main.c"
grep -q 'pktaccel perf: net_pcap has no RX offloads' "$OUT/examples/l3fwd/main.c" || {
	echo "could not adapt l3fwd's RX offload request (source changed?)" >&2; exit 1; }
# The pool holds at least 8192 mbufs, else what the RX ring needs, and
# that is at most 65535 descriptors: infinite_rx preloads one mbuf per
# stored frame, so a file of more frames (perf/run.py's 1M flows) needs a
# bigger floor. The second change: the floor may come from the
# environment (PA_L3FWD_MBUFS), 8192 when unset.
sed -i 's/^\t(unsigned)8192)$/\t(unsigned)(getenv("PA_L3FWD_MBUFS") ? atoi(getenv("PA_L3FWD_MBUFS")) : 8192)) \/* pktaccel perf: PA_L3FWD_MBUFS *\//' \
	"$OUT/examples/l3fwd/main.c"
grep -q 'pktaccel perf: PA_L3FWD_MBUFS' "$OUT/examples/l3fwd/main.c" || {
	echo "could not adapt l3fwd's mbuf pool floor (source changed?)" >&2; exit 1; }
make -s -C "$OUT/examples/l3fwd" shared >&2
BIN="$OUT/examples/l3fwd/build/l3fwd"
test -x "$BIN"
echo "$BIN"
