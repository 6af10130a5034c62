#!/usr/bin/env bash
# Fetch the OpenRPC meta-schema that docs/openrpc.json is validated
# against: npm's @open-rpc/meta-schema and the JSON Schema meta-schema it
# references ($ref https://meta.json-schema.tools), @json-schema-tools/
# meta-schema, pinned, into a cache directory (default
# $PKTACCEL_BUILD_DIR/openrpc-meta, else build/openrpc-meta), as
#   openrpc.schema.json     the OpenRPC document's schema
#   jsonschema.schema.json  the schema of the JSON Schemas in it
# Fetched once; the LAST line printed is the directory.
#   scripts/openrpc-meta.sh [DIR]
set -euo pipefail

OPENRPC_META_VERSION=1.14.9
JSONSCHEMA_META_VERSION=1.8.0

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${PKTACCEL_BUILD_DIR:-$root/build}/openrpc-meta}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ ! -s "$dir/openrpc.schema.json" ] || [ ! -s "$dir/jsonschema.schema.json" ]; then
	command -v npm >/dev/null 2>&1 || {
		echo "openrpc-meta.sh: npm not found (scripts/deps.sh installs it)" >&2
		exit 1
	}
	npm install --prefix "$dir/npm" --no-audit --no-fund --silent \
		"@open-rpc/meta-schema@$OPENRPC_META_VERSION" \
		"@json-schema-tools/meta-schema@$JSONSCHEMA_META_VERSION" >&2
	mods="$dir/npm/node_modules"
	# the OpenRPC package ships its schema as a module: dump it as JSON
	node -e 'const m = require(process.argv[1]);
		process.stdout.write(JSON.stringify(m.default || m, null, 1));' \
		"$mods/@open-rpc/meta-schema" >"$dir/openrpc.schema.json.tmp"
	cp "$mods/@json-schema-tools/meta-schema/schema.json" \
		"$dir/jsonschema.schema.json.tmp"
	mv "$dir/jsonschema.schema.json.tmp" "$dir/jsonschema.schema.json"
	mv "$dir/openrpc.schema.json.tmp" "$dir/openrpc.schema.json"
fi
echo "$dir"
