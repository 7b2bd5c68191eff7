#!/usr/bin/env bash
# README command 2 (and what .ci/run calls): install what is missing, build,
# and run every test: the Release build, every benchmark at a small size
# (perf/run.sh --quick), then the whole suite again under ASan+UBSan, then
# the concurrency tests under TSan, then the fuzz targets for a bounded
# time. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
bash scripts/install-deps.sh

echo "== release build"
cmake --preset release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== benchmarks, small: every one runs and checks its answers (no timing asserted)"
bash perf/run.sh --quick build

echo "== ASan+UBSan build"
cmake --preset asan >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

echo "== TSan: concurrent snapshot readers and the reclaimer; the journal's log and compactor threads; the relay (engine, REST and relay threads) end to end, with one and two relay loops; two REST loops"
cmake --preset tsan >/dev/null
cmake --build build-tsan -j"$jobs" --target engine_tests rest_tests storage_tests oddsrelay oddsfeed
TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/engine_tests --gtest_filter='SnapshotConcurrency.*:Reclaimer.*:Pipeline.*'
TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/storage_tests --gtest_filter='Compaction.*'
TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/rest_tests --gtest_filter='RateLimiterThreads.*:HttpServer.*'
for threads in 1 2; do  # one relay loop, then two sharing every frame
  TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$PWD/tests/tsan.supp /usr/bin/python3 tests/e2e/test_relay.py \
    --build-dir build-tsan --fixtures tests/fixtures --server-arg=--relay-threads=$threads
done
TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$PWD/tests/tsan.supp /usr/bin/python3 tests/e2e/test_rest_threads.py \
  --build-dir build-tsan --fixtures tests/fixtures
echo "== fuzz: HTTP requests, feed lines, WebSocket frames, 30 s each"
bash tests/fuzz/run.sh 30
echo "== all tests passed"
