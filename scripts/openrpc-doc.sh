#!/usr/bin/env bash
# Write docs/openrpc.json: the OpenRPC document the built daemon returns
# from rpc.discover (a replay of tests/data/sample.pcap kept serving with
# --stay, asked through pktaccelctl, then shut down). The document comes
# from the decoders' field tables; run this after changing a method or a
# table (tests/integration/test_openrpc.py fails until then). The LAST
# line printed is the file written.
#   scripts/openrpc-doc.sh [OUT]     (default docs/openrpc.json)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PKTACCEL_BUILD_DIR:-$root/build}
out=${1:-$root/docs/openrpc.json}
tmp=$(mktemp -d -t pa-openrpc.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

"$build/app/pktaccel" --replay "$root/tests/data/sample.pcap" \
	--replay-out "$tmp/out.pcap" -c "$root/docs/examples/default.json" \
	-s "$tmp/rpc.sock" --stay >"$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
	[ -S "$tmp/rpc.sock" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/daemon.log" >&2; exit 1; }
	sleep 0.1
done
"$build/app/pktaccelctl" -s "$tmp/rpc.sock" -j rpc.discover >"$tmp/doc.json"
"$build/app/pktaccelctl" -s "$tmp/rpc.sock" shutdown >/dev/null
wait "$pid"
pid=
/usr/bin/python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")' "$tmp/doc.json" "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
