#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz/ (clang, ASan + UBSan) and run
# them for a while each.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS (default 60) is each target's -max_total_time; TARGETs default
# to all of them (fuzz_pkt fuzz_config fuzz_rpc fuzz_rule fuzz_metrics fuzz_neigh). The build dir
# (build-fuzz, or $FUZZ_BUILD_DIR) is set up on first use with
#   CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false \
#       -Db_sanitize=address,undefined -Db_lundef=false
# Each target fuzzes a working corpus, build-fuzz/corpus/<target>, which
# starts as a copy of the checked-in seeds (tests/fuzz/corpus/<target>,
# never written to) and keeps what earlier runs found. FUZZ_FRESH=1
# fuzzes build-fuzz/corpus-fresh/<target> instead, made again from the
# seeds alone each run (scripts/test.sh does: a corpus that keeps growing
# makes the start of each run longer, fuzz_rpc's above all).
# The JSON targets use the dictionary tests/fuzz/json.dict. Crash, leak
# and timeout inputs go to build-fuzz/crashes/<target>/; the full
# libFuzzer log to build-fuzz/fuzz-logs/<target>.log.
#
# Output: one line per target with executions, exec/s, cov and ft
# (libFuzzer's final stats, -print_final_stats=1), and for a failing
# target the end of its log and the crash file path ("crash file: PATH").
# Last line: "fuzz: N passed, N failed". Exit status non-zero when any
# target failed (a crash, a leak, a timeout or a build error).
#
# Reproduce a crash:  build-fuzz/tests/fuzz/<target> CRASH_FILE
# Extra libFuzzer options: FUZZ_ARGS="-jobs=2 -workers=2" scripts/fuzz.sh
set -uo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." || exit 1

ALL_TARGETS=(fuzz_pkt fuzz_config fuzz_rpc fuzz_rule fuzz_metrics fuzz_neigh fuzz_lb_icmp)
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}

secs=60
if [ $# -gt 0 ]; then
	if ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -eq 0 ]; then
		echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: ${ALL_TARGETS[*]})" >&2
		exit 2
	fi
	secs=$1
	shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
	if [ ! -d "tests/fuzz/corpus/$t" ] || [ ! -f "tests/fuzz/$t.c" ]; then
		echo "fuzz.sh: unknown target '$t' (targets: ${ALL_TARGETS[*]})" >&2
		exit 2
	fi
done

# ---------------------------------------------------------------- build
if [ ! -f "$BUILD/build.ninja" ]; then
	echo "fuzz.sh: setting up $BUILD (clang, -Dfuzz=true)"
	if ! CC=clang meson setup "$BUILD" -Dfuzz=true -Dtests=false \
			-Db_sanitize=address,undefined -Db_lundef=false \
			>"${TMPDIR:-/tmp}/fuzz-setup.$$.log" 2>&1; then
		tail -n 30 "${TMPDIR:-/tmp}/fuzz-setup.$$.log"
		rm -f "${TMPDIR:-/tmp}/fuzz-setup.$$.log"
		echo "fuzz.sh: meson setup of $BUILD failed"
		echo "fuzz: 0 passed, ${#targets[@]} failed"
		exit 1
	fi
	rm -f "${TMPDIR:-/tmp}/fuzz-setup.$$.log"
fi
ninja_targets=()
for t in "${targets[@]}"; do
	ninja_targets+=("tests/fuzz/$t")
done
if ! ninja -C "$BUILD" "${ninja_targets[@]}" >"$BUILD/fuzz-build.log" 2>&1; then
	grep -E 'error|FAILED' "$BUILD/fuzz-build.log" | head -n 30
	echo "fuzz.sh: build failed (full log: $BUILD/fuzz-build.log)"
	echo "fuzz: 0 passed, ${#targets[@]} failed"
	exit 1
fi

# Runtime directories the EAL of a crashed target left behind (empty).
clean_runtime_dirs() {
	local d

	for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk" /tmp/dpdk; do
		[ -d "$d" ] || continue
		find "$d" -mindepth 1 -maxdepth 1 -type d -name 'fuzz_*_[0-9]*' \
			-empty -delete 2>/dev/null
	done
}

# ---------------------------------------------------------------- run
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

passed=0
failed=0
mkdir -p "$BUILD/fuzz-logs"
for t in "${targets[@]}"; do
	corpus="$BUILD/corpus/$t"
	crashes="$BUILD/crashes/$t"
	log="$BUILD/fuzz-logs/$t.log"
	if [ "${FUZZ_FRESH:-0}" = 1 ]; then
		corpus="$BUILD/corpus-fresh/$t"
		rm -rf "$corpus"
	fi
	mkdir -p "$corpus" "$crashes"
	# seeds in, without replacing what earlier runs found
	cp -n "tests/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
	dict=()
	case "$t" in
	fuzz_pkt | fuzz_metrics | fuzz_neigh) ;;
	*) dict=(-dict=tests/fuzz/json.dict) ;;
	esac
	echo "fuzz: $t for ${secs}s (corpus $corpus)"
	# shellcheck disable=SC2086
	timeout -k 10 $((secs + 120)) "$BUILD/tests/fuzz/$t" \
		-max_total_time="$secs" -rss_limit_mb=4096 -timeout=30 \
		-print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" \
		${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1 </dev/null
	rc=$?
	clean_runtime_dirs
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -E '^#[0-9]+' "$log" | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -n 1)
	corp=$(grep -E '^#[0-9]+' "$log" | grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' | tail -n 1)
	summary="${execs:-?} execs, ${rate:-?} exec/s, ${cov:-cov: ? ft: ?}, ${corp:-corp: ?}"
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "fuzz: $t: ok: $summary"
	else
		failed=$((failed + 1))
		echo "fuzz: $t: FAILED (exit $rc): $summary"
		grep -vE '^#[0-9]+ +(NEW|REDUCE|pulse|RELOAD)' "$log" | tail -n 60 | sed 's/^/    /'
		artifact=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -n 1)
		if [ -n "$artifact" ]; then
			echo "fuzz: $t: crash file: $artifact"
			echo "fuzz: $t: reproduce: $BUILD/tests/fuzz/$t $artifact"
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "fuzz: $t: did not finish within $((secs + 120)) s (hang at start or in exit?)"
		fi
		echo "fuzz: $t: full log: $log"
	fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
