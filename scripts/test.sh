#!/usr/bin/env bash
# README command 2 (and what .ci/run calls): install what is missing, build,
# and run every test: the Release build, every benchmark at a small size
# (perf/run.sh --quick), then the whole suite again under ASan+UBSan, then
# the concurrency tests under TSan, then the fuzz targets for a bounded
# time. Exits non-zero on any failure.
#
# The ASan build compiles in the background at idle priority (SCHED_IDLE,
# idle I/O) beside the Release build, taking the CPU its serial LTO links
# leave; it is stopped while any test or benchmark runs. A compiler beside
# the tests, even at idle priority, slowed what they wait on: nginx, a
# benchmark's baseline, answered nothing for a 1 s run, and a journal's
# writes stalled an ASan replay (its disk writes are not idle).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
bash scripts/install-deps.sh
t_all=$(date +%s)
stage() { echo "== $* (at $(( $(date +%s) - t_all )) s)"; }

# idle CMD...: CMD at the lowest CPU and I/O priority this machine allows.
idle() {
  local pre=(nice -n 19)
  chrt -i 0 true 2>/dev/null && pre=(chrt -i 0 "${pre[@]}")
  ionice -c 3 true 2>/dev/null && pre=(ionice -c 3 "${pre[@]}")
  "${pre[@]}" "$@"
}
bg_pid=
bg_log=
trap '[ -z "$bg_pid" ] || { kill -- -"$bg_pid"; kill -CONT -- -"$bg_pid"; } 2>/dev/null || true' EXIT
# background_build PRESET: configure, then build in the background.
background_build() {
  local preset=$1; shift
  cmake --preset "$preset" >/dev/null
  bg_log=$(mktemp)
  # Its own process group, so the trap stops the compilers too.
  set -m
  idle cmake --build "build-$preset" -j"$jobs" "$@" < /dev/null > "$bg_log" 2>&1 &
  bg_pid=$!
  set +m
}
# join_build NAME: wait for the background build; its output either way.
join_build() {
  local rc=0
  wait "$bg_pid" || rc=$?
  bg_pid=
  cat "$bg_log"
  rm -f "$bg_log"
  [ "$rc" = 0 ] || { echo "$1 build FAILED (exit $rc)"; exit "$rc"; }
}

stage "release build"
cmake --preset release >/dev/null
background_build asan
cmake --build build -j"$jobs"
kill -STOP -- -"$bg_pid" 2>/dev/null || true  # (unless it is done already)
ctest --test-dir build --output-on-failure -j"$jobs"

stage "benchmarks, small: every one runs and checks its answers (no timing asserted)"
bash perf/run.sh --quick build
kill -CONT -- -"$bg_pid" 2>/dev/null || true

stage "ASan+UBSan build (begun in the background)"
join_build ASan+UBSan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

stage "TSan: concurrent snapshot readers and the reclaimer; the loop wake; the history recorder beside its readers and its first step; the journal's log and compactor threads; the relay (engine, REST and relay threads) end to end, with one and two relay loops; two REST loops"
cmake --preset tsan >/dev/null
cmake --build build-tsan -j"$jobs" --target concurrency_tests oddsrelay oddsfeed
# The unit tests beside the end-to-end runs: each alone left a core idle.
tsan_units=$(mktemp)
TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/concurrency_tests \
  --gtest_filter='SnapshotConcurrency.*:Reclaimer.*:Pipeline.*:HistoryRecorder.*:Compaction.*:RateLimiterThreads.*:HttpServer.*:LoopWake.*' \
  > "$tsan_units" 2>&1 &
tsan_pid=$!
for threads in 1 2; do  # one relay loop, then two sharing every frame
  TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$PWD/tests/tsan.supp /usr/bin/python3 tests/e2e/test_relay.py \
    --build-dir build-tsan --fixtures tests/fixtures --server-arg=--relay-threads=$threads
done
TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$PWD/tests/tsan.supp /usr/bin/python3 tests/e2e/test_rest_threads.py \
  --build-dir build-tsan --fixtures tests/fixtures
rc=0
wait "$tsan_pid" || rc=$?
cat "$tsan_units"
rm -f "$tsan_units"
[ "$rc" = 0 ] || { echo "TSan concurrency_tests FAILED (exit $rc)"; exit "$rc"; }
# Three targets side by side on the machine's cores: 45 s each is about the
# 30 CPU-seconds each had when they ran one after another.
stage "fuzz: HTTP requests, feed lines, WebSocket frames and the JSON entry points (bounded parse, REST bodies, /ws messages, bus messages), 45 s, side by side"
bash tests/fuzz/run.sh 45 build/fuzz-smoke  # the suite's fuzz_targets_link built them
stage "all tests passed"
