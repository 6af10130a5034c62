#!/usr/bin/env bash
# The live lab: network namespaces and veth pairs on this machine only, a
# client behind a router, two appliance slots (pktaccel on net_af_packet),
# backends with the VIPs on their loopback for direct server return.
# --one-armed: appliance slots whose single routed port sits on the
# backends' bridge beside the router (the usual load-balancer set-up).
# --bgp: BIRD 2 in the router and in every appliance slot, the VIPs
# announced over BGP (+BFD) from what pktaccel keeps in kernel table 100,
# the router's ECMP routes made by BIRD (docs/scale-out.md).
# --fnat (one-armed): full NAT, backends with only an address and a
# default route to the router, an IPv6 front on IPv4 backends.
# See docs/lab.md for the diagram and how to run the appliance in it.
set -euo pipefail

PROG=$(basename "$0")
HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
STATE_ROOT=${PA_LAB_STATE:-/run/pktaccel-lab}
PY=/usr/bin/python3

usage() {
	cat <<EOF
Usage: $PROG up|down|status|route|env|bfd|birdc|bird-conf [options]

  up       build the lab (idempotent: a lab that is already complete is left
           as it is, a half-built one is taken down and built again)
  down     remove what "up" created, and nothing else
  status   print what exists; exit 0 when the lab is complete, 1 otherwise
  route A  without --bgp: send the VIPs from the router to appliance A
           ("1", "2", "3") or nowhere ("none"): one static route. With
           --bgp the routes come from BGP only and "route" is refused
  env      print the lab's addresses and names (KEY=VALUE lines)
  bfd on|off   --bgp labs: BFD on the BGP sessions (the default) or not
           (failure then detected by the BGP hold time, 3 s); rewrites
           the BIRD configurations and reloads every BIRD
  birdc WHERE [CMD...]  birdc of the lab's BIRD in WHERE ("rtr", "app1",
           ...), e.g. "birdc rtr show route"
  bird-conf WHERE  print the BIRD configuration that "up --bgp" writes for
           WHERE ("rtr", "app1", ...), with the topology, --apps and
           BFD given (or of the lab, when it is up)

Options:
  -n, --name NAME      lab name, 1-12 of [a-z0-9] (default: lab); the
                       namespaces are pa-NAME-cli, -rtr, -appK, -beK
  -b, --backends N     backends, 3..9 (default 3); up only
      --one-armed      up only: the one-armed topology (same as
                       "--topology one-armed"): appliance slots (app1, and
                       more with --apps) with a single routed port "arm"
                       each on the backends' bridge next to the router;
                       the other commands read the topology from the lab
      --topology T     up only: "two-armed" (the default) or "one-armed"
      --apps N         up only: appliance slots, app1..appN: two-armed 2..3
                       (default 2), one-armed 1..3 (default 1; slot K at
                       10.30.0.(1+K) on the bridge, port "arm")
      --bgp            up only: real BGP (BIRD 2, bird/birdc, must be
                       installed): BIRD in the router and in each
                       appliance slot, IPv6 on (dual stack: an IPv6 VIP
                       besides the IPv4 ones), the slots' configs get
                       kernel_if "k0" on the router-facing port and
                       "announce" {"table": 100, "drain_s": 2}; no static
                       route to the VIPs: BIRD installs them (ECMP)
      --no-bfd         up, bird-conf: BGP sessions without BFD
      --fnat           up only, with --one-armed: the full-NAT lab: the
                       backends have only their address and a default
                       route to the router (no VIP, no route through the
                       appliance, no tunnel, no IPv6); the client, the
                       router and the appliance slots get IPv6 (the
                       IPv6 VIP on the IPv4 backends); the slots' configs
                       get a pool (lb.fnat: 10.30.0.(100+K)) and fnat
                       services instead of dsr and nat
      --static-neigh   DEVELOPMENT ONLY: install static kernel neighbour
                       entries for the appliances' addresses (router and
                       backends), for an appliance that does not answer ARP
      --no-servers     do not start the backend servers (scripts/lab-backend.py)
  -h, --help           this help

Everything created is recorded under $STATE_ROOT/NAME/; "down" removes
only what is recorded there, and "up" refuses to reuse a namespace it did
not create. The appliance configurations of the slots are written
there too (app1.json .. appN.json), and with --bgp the BIRD configurations
(bird-rtr.conf, bird-appK.conf), control sockets and logs.
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

# ------------------------------------------------------------------ options
CMD=""
NAME=lab
NB=3
STATIC_NEIGH=0
SERVERS=1
ROUTE_ARG=""
TOPO=""
NB_SET=0
NAPPS=""
BGP=""
BFD=""
WHERE=""
BFD_ARG=""
BIRDC_ARGS=()
FNAT=""

while [ $# -gt 0 ]; do
	case "$1" in
	up | down | status | env)
		[ -z "$CMD" ] || die "one command at a time"
		CMD=$1
		;;
	route)
		[ -z "$CMD" ] || die "one command at a time"
		CMD=route
		[ $# -ge 2 ] || die "route needs an argument: 1, 2, 3 or none"
		ROUTE_ARG=$2
		shift
		;;
	bfd)
		[ -z "$CMD" ] || die "one command at a time"
		CMD=bfd
		[ $# -ge 2 ] || die "bfd needs an argument: on or off"
		BFD_ARG=$2
		shift
		;;
	bird-conf)
		[ -z "$CMD" ] || die "one command at a time"
		CMD=bird-conf
		[ $# -ge 2 ] || die "bird-conf needs an argument: rtr, app1, ..."
		WHERE=$2
		shift
		;;
	birdc)
		[ -z "$CMD" ] || die "one command at a time"
		CMD=birdc
		[ $# -ge 2 ] || die "birdc needs an argument: rtr, app1, ..."
		WHERE=$2
		shift
		# the rest is birdc's, but for the lab's own options
		while [ $# -gt 1 ]; do
			case "$2" in
			-n | --name)
				[ $# -ge 3 ] || die "$2 needs a value"
				NAME=$3
				shift 2
				;;
			*)
				BIRDC_ARGS+=("$2")
				shift
				;;
			esac
		done
		;;
	-n | --name)
		[ $# -ge 2 ] || die "$1 needs a value"
		NAME=$2
		shift
		;;
	-b | --backends)
		[ $# -ge 2 ] || die "$1 needs a value"
		NB=$2
		NB_SET=1
		shift
		;;
	--one-armed) TOPO=one-armed ;;
	--topology)
		[ $# -ge 2 ] || die "$1 needs a value"
		TOPO=$2
		shift
		;;
	--apps)
		[ $# -ge 2 ] || die "$1 needs a value"
		NAPPS=$2
		shift
		;;
	--bgp) BGP=1 ;;
	--fnat) FNAT=1 ;;
	--no-bfd) BFD=0 ;;
	--static-neigh) STATIC_NEIGH=1 ;;
	--no-servers) SERVERS=0 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown option or command '$1' (see --help)" ;;
	esac
	shift
done
[ -n "$CMD" ] || die "no command (see --help)"
[[ "$NAME" =~ ^[a-z0-9]{1,12}$ ]] || die "invalid name '$NAME' (1-12 of a-z 0-9)"

STATE="$STATE_ROOT/$NAME"
CREATED="$STATE/created"

# The commands other than up work on the lab as it was made: its topology
# and backend count come from its lab.env unless given.
if [ "$CMD" != up ] && [ -f "$STATE/lab.env" ]; then
	if [ -z "$TOPO" ]; then
		TOPO=$(sed -n 's/^TOPOLOGY=//p' "$STATE/lab.env")
	fi
	if [ "$NB_SET" -eq 0 ]; then
		NB=$(sed -n 's/^BACKENDS=//p' "$STATE/lab.env")
	fi
	[ -n "$NAPPS" ] || NAPPS=$(sed -n 's/^APPS=//p' "$STATE/lab.env")
	[ -n "$BGP" ] || BGP=$(sed -n 's/^BGP=//p' "$STATE/lab.env")
	[ -n "$BFD" ] || BFD=$(sed -n 's/^BFD=//p' "$STATE/lab.env")
	[ -n "$FNAT" ] || FNAT=$(sed -n 's/^FNAT=//p' "$STATE/lab.env")
fi
TOPO=${TOPO:-two-armed}
BGP=${BGP:-0}
BFD=${BFD:-1}
FNAT=${FNAT:-0}
[ "$FNAT" -eq 0 ] || [ "$TOPO" = one-armed ] ||
	die "--fnat needs the one-armed topology (--one-armed)"
# IPv6 in the lab: dual stack with BGP (IPv6 VIPs on IPv6 backends), and
# with --fnat everywhere but on the backends
V6=0
{ [ "$BGP" -eq 1 ] || [ "$FNAT" -eq 1 ]; } && V6=1
case "$TOPO" in
two-armed)
	NAPPS=${NAPPS:-2}
	[[ "$NAPPS" =~ ^[23]$ ]] || die "invalid --apps '$NAPPS' (two-armed: 2..3)"
	;;
one-armed)
	NAPPS=${NAPPS:-1}
	[[ "$NAPPS" =~ ^[123]$ ]] || die "invalid --apps '$NAPPS' (one-armed: 1..3)"
	;;
*) die "invalid topology '$TOPO' (two-armed or one-armed)" ;;
esac
[[ "$NB" =~ ^[3-9]$ ]] || die "invalid backend count '$NB' (3..9)"

# ------------------------------------------------------------------ topology
# Namespaces
NS_CLI="pa-$NAME-cli"
NS_RTR="pa-$NAME-rtr"
NS_APP=()
for _k in $(seq 1 "$NAPPS"); do NS_APP+=("pa-$NAME-app$_k"); done
APP_SLOTS=$(seq 1 "$NAPPS")

# Client
CLI_IF=c0
CLI_MAC=02:1a:00:00:00:02
CLI_ADDRS=(10.10.0.2 10.10.0.3 10.10.0.4)
CLI_NET=10.10.0.0/24
# Router
RTR_CLI_IF=r0
RTR_CLI_MAC=02:1a:00:00:00:01
RTR_CLI_ADDR=10.10.0.1
RTR_BR=br0
RTR_BR_MAC=02:1a:00:30:00:01
RTR_BR_ADDR=10.30.0.1
# One-armed: slot k's single routed port "arm" on the backends' bridge
# (bridge port rak), at the address lan has in the two-armed lab, its
# gateway the router's bridge address; the exception path's TAP is "k0"
# in the appliance's namespace (made by pktaccel)
APP_ARM_IF=arm
app_arm_mac() { echo "02:1a:0$1:02:00:02"; }
rtr_arm_if() { echo "ra$1"; }
rtr_arm_mac() { echo "02:1a:0$1:02:00:01"; }
APP_ARM_KIF=k0
# --bgp: the exception path's TAP of the router-facing port (wan, arm),
# the kernel table where pktaccel keeps its VIP host routes (announce),
# the ASes
APP_KIF=k0
ANNOUNCE_TABLE=100
DRAIN_S=2
AS_RTR=65000
AS_APP=65010
# Appliance slot k (1, 2): wan towards the router, lan towards the backends
APP_WAN_IF=wan
APP_LAN_IF=lan
app_wan_mac() { echo "02:1a:0$1:00:00:02"; }
app_lan_mac() { echo "02:1a:0$1:01:00:02"; }
rtr_wan_if() { echo "r$1"; }		# router side of slot k's wan link
rtr_wan_mac() { echo "02:1a:0$1:00:00:01"; }
rtr_wan_addr() { echo "10.20.$1.1"; }
app_wan_addr() { echo "10.20.$1.2"; }
rtr_lan_if() { echo "rb$1"; }		# bridge port of slot k's lan link
rtr_lan_mac() { echo "02:1a:0$1:01:00:01"; }
app_lan_addr() { echo "10.30.0.$((1 + $1))"; }
# Backend k (1..NB)
BE_IF=e0
be_ns() { echo "pa-$NAME-be$1"; }
be_mac() { echo "02:1a:00:30:00:1$1"; }
be_addr() { echo "10.30.0.$((10 + $1))"; }
rtr_be_if() { echo "rs$1"; }
rtr_be_mac() { echo "02:1a:00:31:00:1$1"; }
# IPv6 (--bgp only: dual stack)
CLI_ADDRS6=(fd00:10::2 fd00:10::3 fd00:10::4)
RTR_CLI_ADDR6=fd00:10::1
RTR_BR_ADDR6=fd00:30::1
rtr_wan_addr6() { echo "fd00:20:$1::1"; }
app_wan_addr6() { echo "fd00:20:$1::2"; }
app_lan_addr6() { echo "fd00:30::$((1 + $1))"; }
be_addr6() { echo "fd00:30::$((10 + $1))"; }
VIP6_NET=fd00:99::/64
VIP6_DSR=fd00:99::10
# Services (the VIPs live on the backends' loopback for dsr)
VIP_NET=10.99.0.0/24
VIP_DSR=10.99.0.10
VIP_NAT=10.99.0.11
VIP_IPIP=10.99.0.12
HTTP_PORT=80
NAT_BACKEND_PORT=8080
UDP_PORT=5353
RT_DSR=100		# backends' routing table for replies from a VIP
# --fnat: the full-NAT VIPs (IPv4, and IPv6 on the same IPv4 backends) and
# slot k's pool, on the backends' bridge (the appliance answers ARP for it)
VIP_FNAT=10.99.0.13
VIP6_FNAT=fd00:99::13
app_pool() { echo "10.30.0.$((100 + $1))"; }

# ------------------------------------------------------------------ helpers
q() {
	"$@" >/dev/null 2>&1
}

record() {
	echo "$*" >>"$CREATED"
}

recorded_netns() {
	[ -f "$CREATED" ] || return 0
	sed -n 's/^netns //p' "$CREATED"
}

recorded_pids() {
	[ -f "$CREATED" ] || return 0
	sed -n 's/^pid //p' "$CREATED"
}

netns_exists() {
	[ -e "/run/netns/$1" ]
}

all_ns() {
	local k
	echo "$NS_CLI"
	echo "$NS_RTR"
	for k in $APP_SLOTS; do echo "${NS_APP[$((k - 1))]}"; done
	for k in $(seq 1 "$NB"); do be_ns "$k"; done
}

# A server pid is ours if it still runs scripts/lab-backend.py for this
# lab, or BIRD on one of this lab's configurations.
pid_is_ours() {
	local pid=$1 cmd
	[ -r "/proc/$pid/cmdline" ] || return 1
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	[[ "$cmd" == *lab-backend.py*"--lab $NAME "* ]] ||
		[[ "$cmd" == *bird*"-c $STATE/bird-"* ]]
}

ns_sysctl() {
	local ns=$1
	shift
	ip netns exec "$ns" sysctl -qw "$@" >/dev/null
}

add_netns() {
	local ns=$1
	netns_exists "$ns" && die "network namespace $ns exists but was not created by this script (see '$PROG down --name $NAME' or remove it yourself)"
	ip netns add "$ns"
	record "netns $ns"
	ns_sysctl "$ns" net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
}

# veth NS_A:IF_A (MAC_A) <-> NS_B:IF_B (MAC_B), created inside the
# namespaces (never in the caller's), checksum and segmentation offloads
# off on both ends: the appliance relays the kernels' packets as they are.
add_veth() {
	local nsa=$1 ifa=$2 maca=$3 nsb=$4 ifb=$5 macb=$6 ns dev
	ip -n "$nsa" link add "$ifa" address "$maca" type veth \
		peer name "$ifb" address "$macb" netns "$nsb"
	for ns_dev in "$nsa:$ifa" "$nsb:$ifb"; do
		ns=${ns_dev%%:*}
		dev=${ns_dev#*:}
		ip netns exec "$ns" ethtool -K "$dev" rx off tx off >/dev/null 2>&1 ||
			die "ethtool -K $dev rx off tx off failed in $ns"
		q ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off || true
		ip -n "$ns" link set "$dev" up
	done
}

wait_tcp_listen() {
	local ns=$1 port=$2 tries
	for ((tries = 0; tries < 100; tries++)); do
		if ip netns exec "$ns" ss -Hltn "sport = :$port" 2>/dev/null | grep -q LISTEN; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# --bgp: up to three appliances share two CPUs with BIRD, the kernels and
# the servers: their idle workers sleep ("adaptive") instead of polling,
# so that BFD's packets are answered in time; and a worker kept off its
# CPU for a second by a busy host is not a stall that withdraws the
# appliance (stall_ms: 5 s instead of 1 s)
bgp_pipeline() {
	printf '"mode": "rtc", "idle": {"mode": "adaptive"}, "stall_ms": 5000'
}

# --bgp: an IPv6 VIP (dsr over the backends' IPv6 addresses) besides the
# IPv4 ones; nothing without --bgp.
bgp_services() {
	local b backends6=""
	[ "$BGP" -eq 1 ] || return 0
	for b in $(seq 1 "$NB"); do
		[ -n "$backends6" ] && backends6="$backends6,"
		backends6="$backends6
       {\"addr\": \"$(be_addr6 "$b")\", \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
	done
	cat <<EOF
,
   {"name": "web6-dsr", "vip": "$VIP6_DSR", "port": $HTTP_PORT, "proto": "tcp", "forward": "dsr",
    "backends": [$backends6]},
   {"name": "udp6-dsr", "vip": "$VIP6_DSR", "port": $UDP_PORT, "proto": "udp", "forward": "dsr",
    "backends": [$backends6]}
EOF
}

write_config() {
	local k=$1 f="$STATE/app$1.json" wan_next backends="" b nat_backends="" udp_backends=""
	local wan_addr lan_addr kif="" announce="" pipeline="\"mode\": \"rtc\""
	wan_addr="\"$(app_wan_addr "$k")/24\""
	lan_addr="\"$(app_lan_addr "$k")/24\""
	if [ "$STATIC_NEIGH" -eq 1 ]; then
		wan_next="\"gateway_mac\": \"$(rtr_wan_mac "$k")\""
	else
		wan_next="\"gateway\": \"$(rtr_wan_addr "$k")\""
	fi
	# --bgp: the exception path on wan (BGP, BFD to the router) and the
	# VIP host routes in table ANNOUNCE_TABLE, which BIRD announces
	if [ "$BGP" -eq 1 ]; then
		wan_addr="$wan_addr, \"$(app_wan_addr6 "$k")/64\""
		lan_addr="$lan_addr, \"$(app_lan_addr6 "$k")/64\""
		kif=",
   \"kernel_if\": \"$APP_KIF\""
		announce="
 \"announce\": {\"table\": $ANNOUNCE_TABLE, \"drain_s\": $DRAIN_S},"
		pipeline="$(bgp_pipeline)"
	fi
	for b in $(seq 1 "$NB"); do
		[ -n "$backends" ] && backends="$backends,"
		[ -n "$nat_backends" ] && nat_backends="$nat_backends,"
		[ -n "$udp_backends" ] && udp_backends="$udp_backends,"
		backends="$backends
       {\"addr\": \"$(be_addr "$b")\", \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
		nat_backends="$nat_backends
       {\"addr\": \"$(be_addr "$b")\", \"port\": $NAT_BACKEND_PORT, \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
		udp_backends="$udp_backends
       {\"addr\": \"$(be_addr "$b")\", \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
	done
	cat >"$f.tmp" <<EOF
{
 "ports": [
  {"name": "wan", "devargs": "net_af_packet0,iface=$APP_WAN_IF", "peer": "lan",
   "addr": [$wan_addr], $wan_next$kif},
  {"name": "lan", "devargs": "net_af_packet1,iface=$APP_LAN_IF", "peer": "wan",
   "addr": [$lan_addr]}
 ],
 "pipeline": {$pipeline},$announce
 "acl": {"default": "permit"},
 "lb": {
  "local_addr": "$(app_lan_addr "$k")",
  "flow_table": {"size": 65536, "tcp_fin_timeout": 2},
  "services": [
   {"name": "web-dsr", "vip": "$VIP_DSR", "port": $HTTP_PORT, "proto": "tcp", "forward": "dsr",
    "backends": [$backends]},
   {"name": "udp-dsr", "vip": "$VIP_DSR", "port": $UDP_PORT, "proto": "udp", "forward": "dsr",
    "backends": [$udp_backends]},
   {"name": "web-nat", "vip": "$VIP_NAT", "port": $HTTP_PORT, "proto": "tcp", "forward": "nat",
    "backends": [$nat_backends]},
   {"name": "udp-nat", "vip": "$VIP_NAT", "port": $UDP_PORT, "proto": "udp", "forward": "nat",
    "backends": [$udp_backends]},
   {"name": "web-ipip", "vip": "$VIP_IPIP", "port": $HTTP_PORT, "proto": "tcp", "forward": "ipip",
    "backends": [$backends]},
   {"name": "udp-ipip", "vip": "$VIP_IPIP", "port": $UDP_PORT, "proto": "udp", "forward": "ipip",
    "backends": [$udp_backends]}$(bgp_services)
  ]
 },
 "metrics": null
}
EOF
	mv "$f.tmp" "$f"
}

# One-armed: one routed port that is its own peer (no "peer": the default),
# its gateway the router on the same bridge, the kernel exception path on
# TAP k0; dsr and nat services. lb.local_addr is the port's own address
# (one address, shared: the kernel_if keeps serving it).
write_config_one_armed() {
	local k=$1 f="$STATE/app$1.json" next backends="" b nat_backends=""
	local addr announce="" pipeline="\"mode\": \"rtc\""
	addr="\"$(app_lan_addr "$k")/24\""
	if [ "$STATIC_NEIGH" -eq 1 ]; then
		next="\"gateway_mac\": \"$RTR_BR_MAC\""
	else
		next="\"gateway\": \"$RTR_BR_ADDR\""
	fi
	if [ "$BGP" -eq 1 ]; then
		addr="$addr, \"$(app_lan_addr6 "$k")/64\""
		announce="
 \"announce\": {\"table\": $ANNOUNCE_TABLE, \"drain_s\": $DRAIN_S},"
		pipeline="$(bgp_pipeline)"
	fi
	for b in $(seq 1 "$NB"); do
		[ -n "$backends" ] && backends="$backends,"
		[ -n "$nat_backends" ] && nat_backends="$nat_backends,"
		backends="$backends
       {\"addr\": \"$(be_addr "$b")\", \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
		nat_backends="$nat_backends
       {\"addr\": \"$(be_addr "$b")\", \"port\": $NAT_BACKEND_PORT, \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
	done
	cat >"$f.tmp" <<EOF
{
 "ports": [
  {"name": "$APP_ARM_IF", "devargs": "net_af_packet0,iface=$APP_ARM_IF",
   "addr": [$addr], $next, "kernel_if": "$APP_ARM_KIF"}
 ],
 "pipeline": {$pipeline},$announce
 "acl": {"default": "permit"},
 "lb": {
  "local_addr": "$(app_lan_addr "$k")",
  "flow_table": {"size": 65536, "tcp_fin_timeout": 2},
  "services": [
   {"name": "web-dsr", "vip": "$VIP_DSR", "port": $HTTP_PORT, "proto": "tcp", "forward": "dsr",
    "backends": [$backends]},
   {"name": "udp-dsr", "vip": "$VIP_DSR", "port": $UDP_PORT, "proto": "udp", "forward": "dsr",
    "backends": [$backends]},
   {"name": "web-nat", "vip": "$VIP_NAT", "port": $HTTP_PORT, "proto": "tcp", "forward": "nat",
    "backends": [$nat_backends]},
   {"name": "udp-nat", "vip": "$VIP_NAT", "port": $UDP_PORT, "proto": "udp", "forward": "nat",
    "backends": [$backends]}$(bgp_services)
  ]
 },
 "metrics": null
}
EOF
	mv "$f.tmp" "$f"
}

# --fnat (one-armed): the same port, now dual stack with a gateway of each
# family, a pool of its own on the bridge (lb.fnat) and full-NAT services
# only: TCP and UDP on the IPv4 VIP and on the IPv6 VIP, all to the IPv4
# backends' lab-backend.py (which answers with the address it sees).
write_config_fnat() {
	local k=$1 f="$STATE/app$1.json" next backends="" udp_backends="" b
	local announce="" pipeline="\"mode\": \"rtc\""
	if [ "$STATIC_NEIGH" -eq 1 ]; then
		next="\"gateway_mac\": \"$RTR_BR_MAC\""
	else
		next="\"gateway\": [\"$RTR_BR_ADDR\", \"$RTR_BR_ADDR6\"]"
	fi
	if [ "$BGP" -eq 1 ]; then
		announce="
 \"announce\": {\"table\": $ANNOUNCE_TABLE, \"drain_s\": $DRAIN_S},"
		pipeline="$(bgp_pipeline)"
	fi
	for b in $(seq 1 "$NB"); do
		[ -n "$backends" ] && backends="$backends,"
		[ -n "$udp_backends" ] && udp_backends="$udp_backends,"
		backends="$backends
       {\"addr\": \"$(be_addr "$b")\", \"port\": $NAT_BACKEND_PORT, \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
		udp_backends="$udp_backends
       {\"addr\": \"$(be_addr "$b")\", \"weight\": $b, \"mac\": \"$(be_mac "$b")\"}"
	done
	cat >"$f.tmp" <<EOF
{
 "ports": [
  {"name": "$APP_ARM_IF", "devargs": "net_af_packet0,iface=$APP_ARM_IF",
   "addr": ["$(app_lan_addr "$k")/24", "$(app_lan_addr6 "$k")/64"], $next,
   "kernel_if": "$APP_ARM_KIF"}
 ],
 "pipeline": {$pipeline},$announce
 "acl": {"default": "permit"},
 "lb": {
  "local_addr": "$(app_lan_addr "$k")",
  "fnat": {"addrs": ["$(app_pool "$k")"]},
  "flow_table": {"size": 65536, "tcp_fin_timeout": 2},
  "services": [
   {"name": "web-fnat", "vip": "$VIP_FNAT", "port": $HTTP_PORT, "proto": "tcp", "forward": "fnat",
    "backends": [$backends]},
   {"name": "udp-fnat", "vip": "$VIP_FNAT", "port": $UDP_PORT, "proto": "udp", "forward": "fnat",
    "backends": [$udp_backends]},
   {"name": "web6-fnat", "vip": "$VIP6_FNAT", "port": $HTTP_PORT, "proto": "tcp", "forward": "fnat",
    "backends": [$backends]},
   {"name": "udp6-fnat", "vip": "$VIP6_FNAT", "port": $UDP_PORT, "proto": "udp", "forward": "fnat",
    "backends": [$udp_backends]}
  ]
 },
 "metrics": null
}
EOF
	mv "$f.tmp" "$f"
}

write_env() {
	local f="$STATE/lab.env" k
	{
		echo "NAME=$NAME"
		echo "TOPOLOGY=$TOPO"
		echo "BACKENDS=$NB"
		echo "APPS=$NAPPS"
		echo "BGP=$BGP"
		echo "BFD=$BFD"
		echo "FNAT=$FNAT"
		echo "STATIC_NEIGH=$STATIC_NEIGH"
		echo "IPIP=$IPIP"
		echo "STATE=$STATE"
		echo "NS_CLI=$NS_CLI"
		echo "NS_RTR=$NS_RTR"
		echo "CLI_IF=$CLI_IF"
		echo "CLI_MAC=$CLI_MAC"
		echo "CLI_ADDRS=${CLI_ADDRS[*]}"
		echo "RTR_CLI_IF=$RTR_CLI_IF"
		echo "RTR_CLI_MAC=$RTR_CLI_MAC"
		echo "RTR_CLI_ADDR=$RTR_CLI_ADDR"
		echo "RTR_BR=$RTR_BR"
		echo "RTR_BR_ADDR=$RTR_BR_ADDR"
		echo "RTR_BR_MAC=$RTR_BR_MAC"
		if [ "$V6" -eq 1 ]; then
			echo "CLI_ADDRS6=${CLI_ADDRS6[*]}"
			echo "RTR_CLI_ADDR6=$RTR_CLI_ADDR6"
			echo "RTR_BR_ADDR6=$RTR_BR_ADDR6"
		fi
		if [ "$FNAT" -eq 1 ]; then
			echo "VIP_FNAT=$VIP_FNAT"
			echo "VIP6_FNAT=$VIP6_FNAT"
		fi
		if [ "$BGP" -eq 1 ]; then
			echo "VIP6_DSR=$VIP6_DSR"
			echo "ANNOUNCE_TABLE=$ANNOUNCE_TABLE"
			echo "AS_RTR=$AS_RTR"
			echo "AS_APP=$AS_APP"
			echo "BIRD_RTR_CONF=$STATE/bird-rtr.conf"
			echo "BIRD_RTR_SOCK=$STATE/bird-rtr.ctl"
		fi
		for k in $APP_SLOTS; do
			echo "NS_APP$k=${NS_APP[$((k - 1))]}"
			echo "APP${k}_CONFIG=$STATE/app$k.json"
			if [ "$TOPO" = one-armed ]; then
				echo "APP${k}_IF=$APP_ARM_IF"
				echo "APP${k}_MAC=$(app_arm_mac "$k")"
				echo "APP${k}_ADDR=$(app_lan_addr "$k")"
				echo "APP${k}_KERNEL_IF=$APP_ARM_KIF"
				echo "APP${k}_BRIDGE_PORT=$(rtr_arm_if "$k")"
				echo "APP${k}_GATEWAY=$RTR_BR_ADDR"
				echo "APP${k}_GATEWAY_MAC=$RTR_BR_MAC"
				if [ "$V6" -eq 1 ]; then
					echo "APP${k}_ADDR6=$(app_lan_addr6 "$k")"
					echo "APP${k}_GATEWAY6=$RTR_BR_ADDR6"
				fi
				[ "$FNAT" -eq 1 ] && echo "APP${k}_POOL=$(app_pool "$k")"
			else
				echo "APP${k}_WAN_IF=$APP_WAN_IF"
				echo "APP${k}_LAN_IF=$APP_LAN_IF"
				echo "APP${k}_WAN_MAC=$(app_wan_mac "$k")"
				echo "APP${k}_LAN_MAC=$(app_lan_mac "$k")"
				echo "APP${k}_WAN_ADDR=$(app_wan_addr "$k")"
				echo "APP${k}_LAN_ADDR=$(app_lan_addr "$k")"
				echo "APP${k}_GATEWAY=$(rtr_wan_addr "$k")"
				echo "APP${k}_GATEWAY_MAC=$(rtr_wan_mac "$k")"
				echo "APP${k}_RTR_IF=$(rtr_wan_if "$k")"
				if [ "$BGP" -eq 1 ]; then
					echo "APP${k}_KERNEL_IF=$APP_KIF"
					echo "APP${k}_WAN_ADDR6=$(app_wan_addr6 "$k")"
					echo "APP${k}_GATEWAY6=$(rtr_wan_addr6 "$k")"
				fi
			fi
			if [ "$BGP" -eq 1 ]; then
				echo "APP${k}_NEXTHOP=$(app_peer_addr "$k")"
				echo "APP${k}_NEXTHOP6=$(app_peer_addr6 "$k")"
				echo "APP${k}_BIRD_CONF=$STATE/bird-app$k.conf"
				echo "APP${k}_BIRD_SOCK=$STATE/bird-app$k.ctl"
			fi
		done
		for k in $(seq 1 "$NB"); do
			echo "BE${k}_NS=$(be_ns "$k")"
			echo "BE${k}_IF=$BE_IF"
			echo "BE${k}_ADDR=$(be_addr "$k")"
			echo "BE${k}_MAC=$(be_mac "$k")"
			echo "BE${k}_NAME=be$k"
			echo "BE${k}_WEIGHT=$k"
			[ "$BGP" -eq 1 ] && [ "$FNAT" -eq 0 ] && echo "BE${k}_ADDR6=$(be_addr6 "$k")"
		done
		echo "VIP_DSR=$VIP_DSR"
		echo "VIP_NAT=$VIP_NAT"
		echo "VIP_IPIP=$VIP_IPIP"
		echo "HTTP_PORT=$HTTP_PORT"
		echo "NAT_BACKEND_PORT=$NAT_BACKEND_PORT"
		echo "UDP_PORT=$UDP_PORT"
	} >"$f.tmp"
	mv "$f.tmp" "$f"
}

# Does this kernel have ipip tunnels? Probed in a scratch namespace of ours.
probe_ipip() {
	local ns="pa-$NAME-probe"
	netns_exists "$ns" && die "network namespace $ns exists but was not created by this script"
	ip netns add "$ns"
	if q ip -n "$ns" link add pa-ipip0 type ipip local 10.0.0.1 remote 10.0.0.2; then
		IPIP=1
	else
		IPIP=0
	fi
	ip netns del "$ns"
}

# The static route to the VIPs (labs without --bgp): to one appliance or
# none. (With --bgp, BIRD makes the router's routes, ECMP included.)
set_route() {
	local arg=$1 hops=()
	[ "$BGP" -eq 0 ] || die "route: lab '$NAME' runs BGP: the router's routes to the VIPs come from the appliances' announcements (health_set draining, or stop an appliance, to withdraw one)"
	case "$arg" in
	none)
		q ip -n "$NS_RTR" route del "$VIP_NET" || true
		q ip -n "$NS_RTR" -6 route del "$VIP6_NET" || true
		return 0
		;;
	[1-3])
		if [ "$arg" -gt "$NAPPS" ]; then
			[ "$NAPPS" -gt 1 ] || die "route: the $TOPO lab '$NAME' has one appliance: expected 1 or none, got '$arg'"
			die "route: lab '$NAME' has $NAPPS appliance slots: expected 1..$NAPPS or none, got '$arg'"
		fi
		if [ "$TOPO" = one-armed ]; then
			hops=(via "$(app_lan_addr "$arg")" dev "$RTR_BR")
		else
			hops=(via "$(app_wan_addr "$arg")" dev "$(rtr_wan_if "$arg")")
		fi
		;;
	*)
		if [ "$TOPO" = one-armed ] && [ "$NAPPS" -eq 1 ]; then
			die "route: the one-armed lab has one appliance: expected 1 or none, got '$arg'"
		fi
		die "route: expected 1..$NAPPS or none, got '$arg'"
		;;
	esac
	ip -n "$NS_RTR" route replace "$VIP_NET" "${hops[@]}"
	if [ "$FNAT" -eq 1 ]; then
		ip -n "$NS_RTR" -6 route replace "$VIP6_NET" \
			via "$(app_lan_addr6 "$arg")" dev "$RTR_BR"
	fi
	# forget the router's cached choices so that new flows take the new route
	q ip -n "$NS_RTR" route flush cache || true
}

# ------------------------------------------------------------------ BGP
# The address of appliance slot k that faces the router: its BGP session's
# local address, the next hop it announces (next hop self), the address
# pktaccel answers ARP / ND for on its DPDK port and gives to its TAP.
app_peer_addr() {
	if [ "$TOPO" = one-armed ]; then app_lan_addr "$1"; else app_wan_addr "$1"; fi
}
app_peer_addr6() {
	if [ "$TOPO" = one-armed ]; then app_lan_addr6 "$1"; else app_wan_addr6 "$1"; fi
}
rtr_peer_addr() {
	if [ "$TOPO" = one-armed ]; then echo "$RTR_BR_ADDR"; else rtr_wan_addr "$1"; fi
}
rtr_peer_addr6() {
	if [ "$TOPO" = one-armed ]; then echo "$RTR_BR_ADDR6"; else rtr_wan_addr6 "$1"; fi
}

# BGP timers and BFD, the same on both ends of every session. Hold time 3 s
# (BIRD's least), keepalive 1 s; BFD every 100 ms, down after 5 missed (3
# flaps now and then on a loaded 2-CPU machine).
bird_bgp_common() {
	cat <<EOF
	hold time 3;
	keepalive time 1;
	connect delay time 1;
	connect retry time 2;
	error wait time 1, 4;
	graceful restart off;	# a dead peer's routes go at once, none kept stale
EOF
	if [ "$BFD" -eq 1 ]; then
		printf '\tbfd on;\n'
	else
		printf '\tbfd off;\t# failure detected by the hold time only\n'
	fi
}

bird_bfd() {
	cat <<EOF
protocol bfd bfd1 {
	interface "$1" {
		min rx interval 100 ms;
		min tx interval 100 ms;
		multiplier 5;	# down after 0.5 s of silence
	};
}
EOF
}

# BIRD in appliance slot k: learns the VIP host routes pktaccel keeps in
# kernel table ANNOUNCE_TABLE (announce) and announces them to the router,
# next hop self (the port's address: the traffic goes to pktaccel).
bird_conf_app() {
	local k=$1
	cat <<EOF
# BIRD 2 in appliance slot $k (scripts/lab-netns.sh up --bgp)
log stderr all;
router id $(app_peer_addr "$k");

# the kernel_if comes and goes with pktaccel: BIRD may miss the new
# interface's first netlink messages, a scan every second finds it
protocol device {
	scan time 1;
}

# pktaccel's VIP host routes (/32, /128, dev $APP_KIF, proto 201) in kernel
# table $ANNOUNCE_TABLE: there while the appliance is ready and not draining;
# only those (krt_source 201) are taken
ipv4 table vip4;
ipv6 table vip6;

protocol kernel vips4 {
	kernel table $ANNOUNCE_TABLE;
	learn;			# routes BIRD did not make: pktaccel's
	scan time 2;		# netlink tells BIRD at once; this is a resync
	ipv4 { table vip4; import where krt_source = 201; export none; };
}

protocol kernel vips6 {
	kernel table $ANNOUNCE_TABLE;
	learn;
	scan time 2;
	ipv6 { table vip6; import where krt_source = 201; export none; };
}

$(bird_bfd "$APP_KIF")

protocol bgp rtr4 {
	local $(app_peer_addr "$k") as $AS_APP;
	neighbor $(rtr_peer_addr "$k") as $AS_RTR;
$(bird_bgp_common)
	ipv4 {
		table vip4;
		import none;
		export where net ~ [ $VIP_NET{32,32} ];
		next hop self;
	};
}

protocol bgp rtr6 {
	local $(app_peer_addr6 "$k") as $AS_APP;
	neighbor $(rtr_peer_addr6 "$k") as $AS_RTR;
$(bird_bgp_common)
	ipv6 {
		table vip6;
		import none;
		export where net ~ [ $VIP6_NET{128,128} ];
		next hop self;
	};
}
EOF
}

# BIRD in the router: a session per appliance and family, the VIP routes
# they announce merged into ECMP routes in the kernel's main table.
bird_conf_rtr() {
	local k ifs
	if [ "$TOPO" = one-armed ]; then ifs="$RTR_BR"; else ifs="r*"; fi
	cat <<EOF
# BIRD 2 in the router (scripts/lab-netns.sh up --bgp)
log stderr all;
router id $RTR_CLI_ADDR;

protocol device {
	scan time 10;
}

# the best BGP routes into the main table, equal ones from several
# appliances merged into one multipath route (hashed on the L4 5-tuple:
# fib_multipath_hash_policy=1)
protocol kernel kernel4 {
	merge paths yes limit 16;
	ipv4 { import none; export where source = RTS_BGP; };
}

protocol kernel kernel6 {
	merge paths yes limit 16;
	ipv6 { import none; export where source = RTS_BGP; };
}

$(bird_bfd "$ifs")

template bgp appliance {
	local as $AS_RTR;
$(bird_bgp_common)
}
EOF
	for k in $APP_SLOTS; do
		cat <<EOF

protocol bgp app${k}_4 from appliance {
	neighbor $(app_peer_addr "$k") as $AS_APP;
	ipv4 { import where net ~ [ $VIP_NET{32,32} ]; export none; };
}

protocol bgp app${k}_6 from appliance {
	neighbor $(app_peer_addr6 "$k") as $AS_APP;
	ipv6 { import where net ~ [ $VIP6_NET{128,128} ]; export none; };
}
EOF
	done
}

bird_conf() {
	case "$1" in
	rtr) bird_conf_rtr ;;
	app[1-3])
		[ "${1#app}" -le "$NAPPS" ] || die "bird-conf: no slot $1 (--apps $NAPPS)"
		bird_conf_app "${1#app}"
		;;
	*) die "expected rtr or app1..app$NAPPS, got '$1'" ;;
	esac
}

bird_ns() {
	case "$1" in
	rtr) echo "$NS_RTR" ;;
	*) echo "${NS_APP[$((${1#app} - 1))]}" ;;
	esac
}

write_bird_confs() {
	local w
	for w in rtr $(for k in $APP_SLOTS; do echo "app$k"; done); do
		bird_conf "$w" >"$STATE/bird-$w.conf.tmp"
		bird -p -c "$STATE/bird-$w.conf.tmp" ||
			die "BIRD refuses its configuration $STATE/bird-$w.conf.tmp"
		mv "$STATE/bird-$w.conf.tmp" "$STATE/bird-$w.conf"
	done
}

start_birds() {
	local w ns tries
	for w in rtr $(for k in $APP_SLOTS; do echo "app$k"; done); do
		ns=$(bird_ns "$w")
		# foreground (-f), our own process group; its log on stderr
		ip netns exec "$ns" setsid bird -f -c "$STATE/bird-$w.conf" \
			-s "$STATE/bird-$w.ctl" -P "$STATE/bird-$w.pid" \
			</dev/null >"$STATE/bird-$w.log" 2>&1 9>&- &
		record "pid $! bird-$w"
	done
	for w in rtr $(for k in $APP_SLOTS; do echo "app$k"; done); do
		for ((tries = 0; tries < 100; tries++)); do
			q birdc -s "$STATE/bird-$w.ctl" show status && break
			sleep 0.1
		done
		q birdc -s "$STATE/bird-$w.ctl" show status || {
			cat "$STATE/bird-$w.log" >&2
			die "BIRD in $(bird_ns "$w") does not answer"
		}
	done
}

# ------------------------------------------------------------------ checks
lab_complete() {
	local ns pid
	[ -f "$STATE/lab.env" ] || return 1
	grep -qx "TOPOLOGY=$TOPO" "$STATE/lab.env" || return 1
	for ns in $(all_ns); do
		netns_exists "$ns" || return 1
		grep -qx "netns $ns" "$CREATED" || return 1
	done
	for pid in $(recorded_pids | cut -d' ' -f1); do
		pid_is_ours "$pid" || return 1
	done
	return 0
}

# ------------------------------------------------------------------ down
do_down() {
	local ns pid _ tries left
	if [ ! -d "$STATE" ]; then
		return 0
	fi
	while read -r pid _; do
		[ -n "$pid" ] || continue
		if pid_is_ours "$pid"; then
			kill "$pid" 2>/dev/null || true
		fi
	done < <(recorded_pids)
	for ((tries = 0; tries < 30; tries++)); do
		left=0
		while read -r pid _; do
			[ -n "$pid" ] || continue
			pid_is_ours "$pid" && left=1
		done < <(recorded_pids)
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	while read -r pid _; do
		[ -n "$pid" ] || continue
		if pid_is_ours "$pid"; then
			kill -9 "$pid" 2>/dev/null || true
		fi
	done < <(recorded_pids)
	for ns in $(recorded_netns | tac); do
		if netns_exists "$ns"; then
			ip netns del "$ns" || echo "$PROG: could not delete $ns" >&2
		fi
	done
	rm -rf "$STATE"
}

# --bgp: dual stack. IPv6 stays off where the lab does not need it (the
# appliances' veths, which pktaccel owns, and the bridge ports); no
# duplicate address detection (nobody else has these addresses).
v6_on() {
	local ns=$1 dev
	shift
	for dev in "$@"; do
		ns_sysctl "$ns" "net.ipv6.conf.$dev.accept_dad=0" \
			"net.ipv6.conf.$dev.accept_ra=0" \
			"net.ipv6.conf.$dev.disable_ipv6=0"
	done
}

setup_ipv6() {
	local k ns a
	v6_on "$NS_CLI" lo "$CLI_IF"
	for a in "${CLI_ADDRS6[@]}"; do
		ip -n "$NS_CLI" addr add "$a/64" dev "$CLI_IF" nodad
	done
	ip -n "$NS_CLI" -6 route add default via "$RTR_CLI_ADDR6"
	v6_on "$NS_RTR" lo "$RTR_CLI_IF" "$RTR_BR"
	ip -n "$NS_RTR" addr add "$RTR_CLI_ADDR6/64" dev "$RTR_CLI_IF" nodad
	ip -n "$NS_RTR" addr add "$RTR_BR_ADDR6/64" dev "$RTR_BR" nodad
	if [ "$TOPO" = two-armed ]; then
		for k in $APP_SLOTS; do
			v6_on "$NS_RTR" "$(rtr_wan_if "$k")"
			ip -n "$NS_RTR" addr add "$(rtr_wan_addr6 "$k")/64" \
				dev "$(rtr_wan_if "$k")" nodad
		done
	fi
	# the appliances: the TAP pktaccel makes (kernel_if) gets IPv6 from
	# the namespace's defaults
	for k in $APP_SLOTS; do
		ns=${NS_APP[$((k - 1))]}
		v6_on "$ns" lo
		ns_sysctl "$ns" net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.default.accept_ra=0 \
			net.ipv6.conf.default.disable_ipv6=0
	done
	# the backends: own address on e0, the dsr VIP on lo, default route
	# to the router (dsr answers from the VIP go straight there); with
	# --fnat the backends stay IPv4 only
	for k in $([ "$FNAT" -eq 1 ] || seq 1 "$NB"); do
		ns=$(be_ns "$k")
		v6_on "$ns" lo "$BE_IF"
		ip -n "$ns" addr add "$(be_addr6 "$k")/64" dev "$BE_IF" nodad
		ip -n "$ns" addr add "$VIP6_DSR/128" dev lo nodad
		ip -n "$ns" -6 route add default via "$RTR_BR_ADDR6"
	done
}

# ------------------------------------------------------------------ up
do_up() {
	local k ns ifr

	if [ -f "$CREATED" ]; then
		# a previous lab of this name: keep it if it is complete (with
		# the same options), else start over
		if lab_complete && grep -qx "BACKENDS=$NB" "$STATE/lab.env" &&
			grep -qx "STATIC_NEIGH=$STATIC_NEIGH" "$STATE/lab.env" &&
			grep -qx "APPS=$NAPPS" "$STATE/lab.env" &&
			grep -qx "BGP=$BGP" "$STATE/lab.env" &&
			grep -qx "BFD=$BFD" "$STATE/lab.env" &&
			grep -qx "FNAT=$FNAT" "$STATE/lab.env" &&
			{ [ "$SERVERS" -eq 0 ] || [ -n "$(recorded_pids)" ]; }; then
			echo "$PROG: lab '$NAME' is already up ($STATE)"
			return 0
		fi
		do_down
	fi
	for ns in $(all_ns); do
		netns_exists "$ns" && die "network namespace $ns exists but was not created by this script; not touching it"
	done
	if [ "$BGP" -eq 1 ]; then
		if ! command -v bird >/dev/null 2>&1 || ! command -v birdc >/dev/null 2>&1; then
			die "--bgp needs BIRD 2 (bird, birdc: Debian package bird2, scripts/deps.sh)"
		fi
		[ -e /dev/net/tun ] || die "--bgp needs /dev/net/tun (the appliances' kernel_if)"
	fi
	mkdir -p "$STATE"
	: >"$CREATED"
	# any failure from here on (set -e, die) removes what was made
	UP_DONE=0
	trap 'if [ "$UP_DONE" -ne 1 ]; then echo "$PROG: up failed, removing what it made" >&2; do_down; fi' EXIT

	probe_ipip

	for ns in $(all_ns); do
		add_netns "$ns"
	done

	# router: forwarding, no reverse-path filter (dsr replies come from the
	# VIPs, which the router routes towards the appliances), ARP answered
	# only for the arriving interface's own addresses (the appliances pass
	# broadcasts from one side to the other), L4 hash for ECMP
	ns_sysctl "$NS_RTR" net.ipv4.ip_forward=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.default.arp_ignore=1 \
		net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.default.arp_announce=2 \
		net.ipv4.fib_multipath_hash_policy=1
	if [ "$V6" -eq 1 ]; then
		ns_sysctl "$NS_RTR" net.ipv6.conf.all.forwarding=1 \
			net.ipv6.fib_multipath_hash_policy=1
	fi

	# client <-> router
	add_veth "$NS_CLI" "$CLI_IF" "$CLI_MAC" "$NS_RTR" "$RTR_CLI_IF" "$RTR_CLI_MAC"
	for a in "${CLI_ADDRS[@]}"; do
		ip -n "$NS_CLI" addr add "$a/24" dev "$CLI_IF"
	done
	ip -n "$NS_CLI" route add default via "$RTR_CLI_ADDR"
	ip -n "$NS_RTR" addr add "$RTR_CLI_ADDR/24" dev "$RTR_CLI_IF"

	# the backends' LAN: a bridge in the router namespace, the router is
	# its gateway (10.30.0.1)
	ip -n "$NS_RTR" link add "$RTR_BR" address "$RTR_BR_MAC" type bridge \
		stp_state 0 forward_delay 0
	q ip netns exec "$NS_RTR" ethtool -K "$RTR_BR" tx off || true
	ip -n "$NS_RTR" addr add "$RTR_BR_ADDR/24" dev "$RTR_BR"
	ip -n "$NS_RTR" link set "$RTR_BR" up

	# one-armed: the appliance's only port on the bridge, beside the
	# router and the backends; no kernel address on it (pktaccel owns it
	# through AF_PACKET, the kernel gets the port's address on the TAP
	# that pktaccel makes). No sysctls: while it runs with a kernel_if,
	# pktaccel makes the veth's own stack ignore the port's frames
	# (arp_ignore, rp_filter, disable_ipv6; docs/lab.md)
	for k in $([ "$TOPO" = two-armed ] || echo "$APP_SLOTS"); do
		ns=${NS_APP[$((k - 1))]}
		add_veth "$ns" "$APP_ARM_IF" "$(app_arm_mac "$k")" \
			"$NS_RTR" "$(rtr_arm_if "$k")" "$(rtr_arm_mac "$k")"
		ip -n "$NS_RTR" link set "$(rtr_arm_if "$k")" master "$RTR_BR"
	done
	# appliance slots: wan to the router, lan to the bridge; no kernel
	# addresses there (pktaccel owns the interfaces through AF_PACKET)
	for k in $([ "$TOPO" = one-armed ] || echo "$APP_SLOTS"); do
		ns=${NS_APP[$((k - 1))]}
		add_veth "$ns" "$APP_WAN_IF" "$(app_wan_mac "$k")" \
			"$NS_RTR" "$(rtr_wan_if "$k")" "$(rtr_wan_mac "$k")"
		add_veth "$ns" "$APP_LAN_IF" "$(app_lan_mac "$k")" \
			"$NS_RTR" "$(rtr_lan_if "$k")" "$(rtr_lan_mac "$k")"
		ifr=$(rtr_wan_if "$k")
		ip -n "$NS_RTR" addr add "$(rtr_wan_addr "$k")/24" dev "$ifr"
		ip -n "$NS_RTR" link set "$(rtr_lan_if "$k")" master "$RTR_BR"
	done

	# backends
	for k in $(seq 1 "$NB"); do
		ns=$(be_ns "$k")
		ns_sysctl "$ns" net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 \
			net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.default.arp_ignore=1 \
			net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.default.arp_announce=2
		add_veth "$ns" "$BE_IF" "$(be_mac "$k")" \
			"$NS_RTR" "$(rtr_be_if "$k")" "$(rtr_be_mac "$k")"
		ns_sysctl "$ns" "net.ipv4.conf.$BE_IF.rp_filter=0" \
			"net.ipv4.conf.$BE_IF.arp_ignore=1" \
			"net.ipv4.conf.$BE_IF.arp_announce=2" \
			net.ipv4.conf.lo.rp_filter=0
		ip -n "$NS_RTR" link set "$(rtr_be_if "$k")" master "$RTR_BR"
		ip -n "$ns" addr add "$(be_addr "$k")/24" dev "$BE_IF"
		if [ "$FNAT" -eq 1 ]; then
			# full NAT: an address and a default route, nothing else
			ip -n "$ns" route add default via "$RTR_BR_ADDR"
			continue
		fi
		# the dsr VIP on the loopback: answered for, never announced
		ip -n "$ns" addr add "$VIP_DSR/32" dev lo
		# replies from a VIP (dsr) go straight to the router; replies
		# to the clients from the backend's own address (nat) go back
		# through appliance 1, which translates them
		ip -n "$ns" route add default via "$RTR_BR_ADDR"
		ip -n "$ns" route add "$CLI_NET" via "$(app_lan_addr 1)"
		ip -n "$ns" route add default via "$RTR_BR_ADDR" table "$RT_DSR"
		ip -n "$ns" rule add from "$VIP_NET" lookup "$RT_DSR" priority 100
		if [ "$IPIP" -eq 1 ]; then
			# decapsulate ipip: the fallback device tunl0 takes every
			# IPIP packet; the inner packet is to the VIP
			q ip -n "$ns" link add tunl0 type ipip || true
			ip -n "$ns" link set tunl0 up
			ns_sysctl "$ns" net.ipv4.conf.tunl0.rp_filter=0
			ip -n "$ns" addr add "$VIP_IPIP/32" dev lo
		fi
	done

	[ "$V6" -eq 1 ] && setup_ipv6

	# without BGP: the VIPs to appliance 1 to begin with (a static route;
	# with BGP the routes come from the appliances' announcements)
	[ "$BGP" -eq 1 ] || set_route 1

	if [ "$STATIC_NEIGH" -eq 1 ] && [ "$TOPO" = one-armed ]; then
		for k in $APP_SLOTS; do
			ip -n "$NS_RTR" neigh replace "$(app_lan_addr "$k")" \
				lladdr "$(app_arm_mac "$k")" dev "$RTR_BR" nud permanent
			[ "$V6" -eq 0 ] ||
				ip -n "$NS_RTR" neigh replace "$(app_lan_addr6 "$k")" \
					lladdr "$(app_arm_mac "$k")" dev "$RTR_BR" nud permanent
		done
		for k in $(seq 1 "$NB"); do
			ip -n "$(be_ns "$k")" neigh replace "$(app_lan_addr 1)" \
				lladdr "$(app_arm_mac 1)" dev "$BE_IF" nud permanent
			for a in $([ "$FNAT" -eq 0 ] || echo "$APP_SLOTS"); do
				ip -n "$(be_ns "$k")" neigh replace "$(app_pool "$a")" \
					lladdr "$(app_arm_mac "$a")" dev "$BE_IF" nud permanent
			done
		done
	elif [ "$STATIC_NEIGH" -eq 1 ]; then
		for k in $APP_SLOTS; do
			ip -n "$NS_RTR" neigh replace "$(app_wan_addr "$k")" \
				lladdr "$(app_wan_mac "$k")" dev "$(rtr_wan_if "$k")" nud permanent
		done
		for k in $(seq 1 "$NB"); do
			for a in $APP_SLOTS; do
				ip -n "$(be_ns "$k")" neigh replace "$(app_lan_addr "$a")" \
					lladdr "$(app_lan_mac "$a")" dev "$BE_IF" nud permanent
			done
		done
	fi

	for k in $APP_SLOTS; do
		if [ "$FNAT" -eq 1 ]; then
			write_config_fnat "$k"
		elif [ "$TOPO" = one-armed ]; then
			write_config_one_armed "$k"
		else
			write_config "$k"
		fi
	done
	write_env
	if [ "$BGP" -eq 1 ]; then
		write_bird_confs
		start_birds
	fi

	if [ "$SERVERS" -eq 1 ]; then
		for k in $(seq 1 "$NB"); do
			ns=$(be_ns "$k")
			local udp_args=(--udp "$(be_addr "$k"):$UDP_PORT")
			if [ "$FNAT" -eq 0 ]; then
				udp_args+=(--udp "$VIP_DSR:$UDP_PORT")
				[ "$IPIP" -eq 1 ] && udp_args+=(--udp "$VIP_IPIP:$UDP_PORT")
				[ "$BGP" -eq 1 ] && udp_args+=(--ipv6 --udp "[$(be_addr6 "$k")]:$UDP_PORT" --udp "[$VIP6_DSR]:$UDP_PORT")
			fi
			# (fd 9, the lock, is not passed on)
			ip netns exec "$ns" setsid "$PY" "$HERE/lab-backend.py" \
				--lab "$NAME" --name "be$k" \
				--tcp "$HTTP_PORT" --tcp "$NAT_BACKEND_PORT" "${udp_args[@]}" \
				</dev/null >"$STATE/be$k.log" 2>&1 9>&- &
			record "pid $! be$k"
		done
		for k in $(seq 1 "$NB"); do
			wait_tcp_listen "$(be_ns "$k")" "$NAT_BACKEND_PORT" ||
				{
					cat "$STATE/be$k.log" >&2
					false
				}
		done
	fi
	UP_DONE=1
	echo "$PROG: lab '$NAME' ($TOPO) is up: $(all_ns | tr '\n' ' ')(ipip tunnels: $([ "$IPIP" -eq 1 ] && echo yes || echo "no, this kernel has none"))"
}

# ------------------------------------------------------------------ status
do_status() {
	local ns ok=0
	if [ ! -f "$CREATED" ]; then
		echo "lab '$NAME': down"
		return 1
	fi
	for ns in $(recorded_netns); do
		if netns_exists "$ns"; then
			echo "netns $ns: present ($(ip -n "$ns" -br link | awk '$1 != "lo" {print $1}' | tr '\n' ' '))"
		else
			echo "netns $ns: MISSING"
		fi
	done
	while read -r pid what; do
		[ -n "$pid" ] || continue
		if pid_is_ours "$pid"; then
			echo "server $what: running (pid $pid)"
		else
			echo "server $what: NOT RUNNING (pid $pid)"
		fi
	done < <(recorded_pids)
	echo "topology: $TOPO, $NAPPS appliance slot(s)$([ "$BGP" -eq 1 ] && echo ", BGP (BFD $([ "$BFD" -eq 1 ] && echo on || echo off))")"
	if netns_exists "$NS_RTR"; then
		echo "route: $(ip -n "$NS_RTR" route show root "$VIP_NET" | tr '\n' ' ')"
		if [ "$BGP" -eq 1 ]; then
			echo "route6: $(ip -n "$NS_RTR" -6 route show root "$VIP6_NET" | tr '\n' ' ')"
			birdc -s "$STATE/bird-rtr.ctl" show protocols 2>/dev/null | sed -n 's/^\(app[0-9]_[46]\) .*/bgp &/p' || true
		fi
	fi
	lab_complete && ok=1
	if [ "$ok" -eq 1 ]; then
		echo "lab '$NAME': up, $TOPO ($STATE)"
		return 0
	fi
	echo "lab '$NAME': incomplete ('$PROG up --name $NAME' rebuilds it)"
	return 1
}

# BFD on or off on every session of a BGP lab: new configurations, and
# every BIRD reloads (the sessions restart)
do_bfd() {
	local w
	[ "$BGP" -eq 1 ] || die "bfd: lab '$NAME' has no BGP (up --bgp)"
	case "$BFD_ARG" in
	on) BFD=1 ;;
	off) BFD=0 ;;
	*) die "bfd: expected on or off, got '$BFD_ARG'" ;;
	esac
	write_bird_confs
	sed -i "s/^BFD=.*/BFD=$BFD/" "$STATE/lab.env"
	for w in rtr $(for k in $APP_SLOTS; do echo "app$k"; done); do
		birdc -s "$STATE/bird-$w.ctl" configure >/dev/null ||
			die "bfd: BIRD in $(bird_ns "$w") did not reload"
	done
}

if [ "$CMD" = bird-conf ]; then
	# pure: prints what up --bgp writes (no root needed)
	BGP=1
	bird_conf "$WHERE"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "must run as root (ip netns, veth)"
command -v ip >/dev/null 2>&1 || die "ip (iproute2) not found"
command -v ethtool >/dev/null 2>&1 || die "ethtool not found"
mkdir -p "$STATE_ROOT"

# one operation at a time (all labs: a lock file per name would outlive
# its lab)
exec 9>"$STATE_ROOT/lock"
flock -w 300 9 || die "$STATE_ROOT/lock is held by another $PROG"

case "$CMD" in
up) do_up ;;
down) do_down ;;
status) do_status ;;
route)
	lab_complete || die "lab '$NAME' is not up"
	set_route "$ROUTE_ARG"
	;;
env)
	[ -f "$STATE/lab.env" ] || die "lab '$NAME' is not up"
	cat "$STATE/lab.env"
	;;
bfd)
	lab_complete || die "lab '$NAME' is not up"
	do_bfd
	;;
birdc)
	[ "$BGP" -eq 1 ] || die "birdc: lab '$NAME' has no BGP (up --bgp)"
	bird_ns "$WHERE" >/dev/null
	[ -S "$STATE/bird-$WHERE.ctl" ] || die "birdc: no BIRD '$WHERE' in lab '$NAME'"
	exec 9>&-
	exec birdc -s "$STATE/bird-$WHERE.ctl" "${BIRDC_ARGS[@]}"
	;;
esac
