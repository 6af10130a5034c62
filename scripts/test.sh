#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run the check unit
# suites and the pytest integration suite, count individual test cases.
#
# Last line of output, exactly: "N passed, N failed" (", N skipped" when
# some were skipped). Exit 0 only if nothing failed and at least one test
# ran.
#
# Environment:
#   SANITIZE=address,undefined   build into build-san with -Db_sanitize=...
#   PYTEST_ARGS="..."            extra arguments for pytest (e.g. -k rpc)
#   UNIT_TIMEOUT=300             seconds for each unit test binary
#   UNIT_JOBS=2                  unit test binaries run at once
#   INTEGRATION_TIMEOUT=1080     seconds for the whole pytest run (the live
#                                lab of test_lab.py takes 2-4 minutes)
set -uo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." || exit 1
ROOT=$(pwd)
PY=/usr/bin/python3

passed=0
failed=0
skipped=0

finish() {
	local line="$passed passed, $failed failed"
	[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
	echo
	echo "$line"
	if [ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ]; then
		exit 0
	fi
	exit 1
}

section() {
	echo
	echo "=== $* === (at ${SECONDS}s)"
}

# ---------------------------------------------------------------- deps
section "dependencies"
if ! bash scripts/deps.sh; then
	echo "test.sh: scripts/deps.sh failed"
	failed=$((failed + 1))
	finish
fi

# ---------------------------------------------------------------- build
BUILD=build
SETUP_ARGS=()
if [ -n "${SANITIZE:-}" ]; then
	BUILD=build-san
	# the benchmarks are not tested: not built with the sanitizers
	SETUP_ARGS=("-Db_sanitize=$SANITIZE" -Db_lundef=false -Dperf=false)
	# undefined behaviour fails the test that triggers it
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
section "build ($BUILD)"
if [ ! -f "$BUILD/build.ninja" ]; then
	if ! meson setup "$BUILD" "${SETUP_ARGS[@]}"; then
		echo "test.sh: meson setup failed"
		failed=$((failed + 1))
		finish
	fi
fi
if ! ninja -C "$BUILD"; then
	echo "test.sh: build failed"
	failed=$((failed + 1))
	finish
fi
export PKTACCEL_BUILD_DIR="$ROOT/$BUILD"

TMP=$(mktemp -d /tmp/pktaccel-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# ---------------------------------------------------------------- unit
# Each check binary prints "NN%: Checks: N, Failures: F, Errors: E" per
# suite runner (CK_VERBOSITY=normal). A binary that dies before printing
# its summary, or exits non-zero with no failure counted, counts as one
# failed test.
section "unit suites (check)"
meson introspect --tests "$BUILD" >"$TMP/tests.json" 2>/dev/null || echo '[]' >"$TMP/tests.json"
"$PY" - "$TMP/tests.json" >"$TMP/unit.list" <<'EOF'
import json, shlex, sys
for t in json.load(open(sys.argv[1])):
    suites = t.get("suite") or []
    if not any(s == "unit" or s.endswith(":unit") for s in suites):
        continue
    env = " ".join("%s=%s" % (k, shlex.quote(v))
                   for k, v in (t.get("env") or {}).items())
    print("\x1f".join([t["name"], t.get("workdir") or "", env,
                     " ".join(shlex.quote(c) for c in t["cmd"])]))
EOF
# The suites run UNIT_JOBS (2) at a time, each into its own log; their
# results are read back in order once all have ended.
run_unit() {
	local workdir=$1 env=$2 cmd=$3 log=$4
	(
		if [ -n "$workdir" ]; then cd "$workdir" || exit 1; fi
		eval "exec env CK_VERBOSITY=normal CK_DEFAULT_TIMEOUT=\${CK_DEFAULT_TIMEOUT:-60} $env \
			timeout -k 10 ${UNIT_TIMEOUT:-300} $cmd"
	) >"$log" 2>&1 </dev/null
	echo $? >"$log.rc"
}
n_unit=0
names=()
while IFS=$'\x1f' read -r name workdir env cmd; do
	[ -n "$name" ] || continue
	n_unit=$((n_unit + 1))
	names+=("$name")
	while [ "$(jobs -rp | wc -l)" -ge "${UNIT_JOBS:-2}" ]; do
		wait -n 2>/dev/null || true
	done
	run_unit "$workdir" "$env" "$cmd" "$TMP/unit-$n_unit.log" &
done <"$TMP/unit.list"
wait
for ((k = 1; k <= n_unit; k++)); do
	name=${names[$((k - 1))]}
	log="$TMP/unit-$k.log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	read -r c f e < <(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log" |
		awk '{c += $1; f += $2; e += $3} END {print c + 0, f + 0, e + 0}')
	bad=$((f + e))
	ok=$((c - bad))
	if [ "$c" -eq 0 ]; then
		if [ "$rc" -eq 0 ]; then ok=1; else bad=1; fi
	elif [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$bad" -gt 0 ]; then
		echo "unit $name: $ok passed, $bad failed (exit $rc)"
		grep -v ':[0-9]*:P:' "$log" | tail -n 40 | sed 's/^/    /'
	else
		echo "unit $name: $ok passed"
	fi
done
[ "$n_unit" -eq 0 ] && echo "(no unit suites registered)"

# ---------------------------------------------------------------- integration
section "integration (pytest)"
junit="$TMP/junit.xml"
# shellcheck disable=SC2086
timeout -k 15 "${INTEGRATION_TIMEOUT:-1080}" \
	"$PY" -m pytest tests/integration -p no:cacheprovider -rfEs --durations=25 \
	--junitxml="$junit" ${PYTEST_ARGS:-} </dev/null
rc=$?
if [ -s "$junit" ]; then
	read -r t f e s < <("$PY" - "$junit" <<'EOF'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tot = [0, 0, 0, 0]
for s in suites:
    for i, k in enumerate(("tests", "failures", "errors", "skipped")):
        tot[i] += int(s.get(k, 0))
print(*tot)
EOF
)
	ok=$((t - f - e - s))
	passed=$((passed + ok))
	failed=$((failed + f + e))
	skipped=$((skipped + s))
	echo "integration: $ok passed, $((f + e)) failed, $s skipped (pytest exit $rc)"
	# pytest: 0 ok, 1 failures, 5 nothing collected; anything else is trouble
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 5 ] && [ $((f + e)) -eq 0 ]; then
		failed=$((failed + 1))
	fi
else
	echo "integration: pytest produced no report (exit $rc)"
	failed=$((failed + 1))
fi

# ---------------------------------------------------------------- fuzz
# >>> fuzz section (tests/fuzz, scripts/fuzz.sh) >>>
# Each libFuzzer target runs FUZZ_SECONDS (default 20) and counts as one
# test: passed, or failed on a crash, leak, timeout or build error. Needs
# clang and its libFuzzer runtime (a trivial -fsanitize=fuzzer program must
# link); without them, or with FUZZ_SECONDS=0, the targets count as
# skipped. The clang build (build-fuzz) is made once per build dir.
section "fuzz (libFuzzer)"
fuzz_targets=(fuzz_pkt fuzz_config fuzz_rpc fuzz_rule fuzz_metrics fuzz_neigh fuzz_lb_icmp)
fuzz_secs=${FUZZ_SECONDS:-20}
fuzz_skip=""
if ! [[ "$fuzz_secs" =~ ^[0-9]+$ ]]; then
	fuzz_skip="FUZZ_SECONDS='$fuzz_secs' is not a number of seconds"
elif [ "$fuzz_secs" -eq 0 ]; then
	fuzz_skip="FUZZ_SECONDS=0"
elif ! command -v clang >/dev/null 2>&1; then
	fuzz_skip="clang not installed (scripts/deps.sh installs clang and libclang-rt-14-dev)"
else
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }' \
		>"$TMP/fuzz-probe.c"
	if ! clang -fsanitize=fuzzer,address,undefined "$TMP/fuzz-probe.c" \
			-o "$TMP/fuzz-probe" >"$TMP/fuzz-probe.log" 2>&1; then
		fuzz_skip="clang cannot link -fsanitize=fuzzer,address,undefined (libFuzzer runtime missing: libclang-rt-14-dev)"
	fi
fi
if [ -n "$fuzz_skip" ]; then
	echo "fuzz: ${#fuzz_targets[@]} targets skipped: $fuzz_skip"
	skipped=$((skipped + ${#fuzz_targets[@]}))
else
	# a hang is cut off: setup and build, then each target's time and exit
	# from the seeds each time: a bounded start, the same run every time
	FUZZ_FRESH=1 timeout -k 15 $((600 + (fuzz_secs + 60) * ${#fuzz_targets[@]})) \
		bash scripts/fuzz.sh "$fuzz_secs" "${fuzz_targets[@]}" \
		>"$TMP/fuzz.log" 2>&1 </dev/null
	rc=$?
	grep -v '^fuzz: [0-9]* passed, [0-9]* failed$' "$TMP/fuzz.log"
	for t in "${fuzz_targets[@]}"; do
		if grep -q "^fuzz: $t: ok:" "$TMP/fuzz.log"; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			grep -q "^fuzz: $t: " "$TMP/fuzz.log" ||
				echo "fuzz: $t: did not run (scripts/fuzz.sh exit $rc)"
		fi
	done
fi
# <<< fuzz section <<<

finish
