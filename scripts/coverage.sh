#!/usr/bin/env bash
# Line and branch coverage of lib/ and app/ by the unit and integration
# suites (gcov via meson's b_coverage, summarised by gcovr).
#
#   scripts/coverage.sh [PYTEST_ARGS...]
#
# Builds build-cov (or $COV_BUILD_DIR) with -Db_coverage=true, runs the
# check suites and the pytest suite against it (PYTEST_ARGS narrow the
# latter, e.g. -k replay), and prints gcovr's per-file line and branch
# tables; the HTML report goes to build-cov/coverage/index.html.
# Counts of a test that kills the daemon (SIGKILL) are lost with it;
# everything else is counted, the daemons' included (they exit normally).
# Timing thresholds of the hitless tests can fail under the instrumented
# build on a loaded machine; the coverage figures are still written.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
BUILD=${COV_BUILD_DIR:-build-cov}

scripts/deps.sh || exit 1
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" -Db_coverage=true || exit 1
fi
ninja -C "$BUILD" || exit 1
find "$BUILD" -name '*.gcda' -delete

meson test -C "$BUILD" --num-processes 1 --print-errorlogs
unit_rc=$?
PKTACCEL_BUILD_DIR="$PWD/$BUILD" /usr/bin/python3 -m pytest -q \
	-p no:cacheprovider tests/integration "$@"
int_rc=$?

echo "== lines"
gcovr -r . --filter 'lib/' --filter 'app/' "$BUILD"
echo "== branches"
gcovr -r . --filter 'lib/' --filter 'app/' -b "$BUILD"
mkdir -p "$BUILD/coverage"
gcovr -r . --filter 'lib/' --filter 'app/' --html-details \
	-o "$BUILD/coverage/index.html" "$BUILD"
echo "coverage: unit suites rc=$unit_rc, integration rc=$int_rc;" \
	"HTML in $BUILD/coverage/index.html"
