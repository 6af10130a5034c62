#!/usr/bin/env bash
# The main job on the embedded default: install what is missing, build, and
# replay tests/data/sample.pcap through docs/examples/default.json. The
# replay summary (JSON) is the last line of stdout. Exits with the daemon's
# status.
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

bash scripts/deps.sh

if [ ! -f build/build.ninja ]; then
	meson setup build >&2
fi
ninja -C build >&2

out="${OUT:-/tmp/pktaccel-sample-out.pcap}"
set +e
build/app/pktaccel --replay tests/data/sample.pcap --replay-out "$out" \
	-c docs/examples/default.json
rc=$?
set -e
exit "$rc"
