#!/usr/bin/env bash
# Runs every benchmark of perf/ and prints the machine and each command, so
# the figures in a closing note can be reproduced:
#   perf/run.sh [--quick] [build-dir]
# A benchmark that fails (a broken run, an answer it could not verify, a
# missed goal) does not stop the others, but the script ends with the list
# of failures and exit status 1. A benchmark whose tool cannot be installed
# on this machine (exit status 77, with its reason) is listed as skipped.
#
# --quick runs each benchmark at a small size (seconds each, the whole run
# a few minutes on two cores) with the same checks of its answers (records
# applied, state digests equal, bodies right, no gaps), prints its figures
# and asserts no timing: figures from a quick run are not results, but a
# benchmark that breaks fails it. CI runs it after the tests. The soak
# (perf/soak/run.sh, a compressed month) runs only in --quick, as one day;
# a restart on the soak's data dir (perf/soak/restart.sh) runs in both.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
quick=
build=
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "perf/run.sh: unknown option $a (usage: perf/run.sh [--quick] [build-dir])" >&2; exit 2 ;;
    *) [ -z "$build" ] || { echo "perf/run.sh: one build dir only" >&2; exit 2; }; build=$a ;;
  esac
done
build=${build:-build}
mode=${quick:+quick}
mode=${mode:-full}
for b in oddsrelay oddsfeed oddsload oddsclient perf/bench_apply perf/bench_parse perf/bench_memory perf/bench_line_history perf/bench_log; do
  [ -x "$build/$b" ] || { echo "perf/run.sh: no $build/$b (build with: cmake --preset release && cmake --build build -j2)" >&2; exit 1; }
done
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)   load: $(cut -d' ' -f1-3 /proc/loadavg)   mode: $mode   date: $(date -u '+%F %T UTC')"
failed=()
skipped=()
t_all=$(date +%s)
run() {
  echo; echo "\$ $*"
  local rc=0 t0
  t0=$(date +%s)
  "$@" || rc=$?
  if [ "$rc" = 77 ]; then
    echo "perf/run.sh: SKIPPED (a tool it needs cannot be installed here): $*" >&2; skipped+=("$*")
  elif [ "$rc" != 0 ]; then
    echo "perf/run.sh: FAILED (exit status $rc): $*" >&2; failed+=("$*")
  fi
  [ -z "$quick" ] || echo "($(( $(date +%s) - t0 )) s)"
}
# gbench BINARY ARGS...: a Google Benchmark kernel. SkipWithError leaves the
# exit status 0: an errored run is a failure all the same.
gbench() {
  local out rc=0
  out=$(mktemp)
  "$@" 2>&1 | tee "$out" || rc=$?
  if [ "$rc" = 0 ] && grep -q "ERROR OCCURRED" "$out"; then rc=1; fi
  rm -f "$out"
  return "$rc"
}
if [ -n "$quick" ]; then
  export ODDSRELAY_BENCH_RECORDS=100000
  run gbench "$build/perf/bench_apply" --benchmark_format=console
  ODDSRELAY_BENCH_RECORDS=20000 run gbench "$build/perf/bench_parse" --benchmark_format=console --benchmark_min_time=0.05
  run "$build/perf/bench_memory" 1000 40 4 3
  run "$build/perf/bench_line_history" 1 300 200 4000 15
  ODDSRELAY_BENCH_RECORDS=50000 run gbench "$build/perf/bench_log" --benchmark_format=console
  unset ODDSRELAY_BENCH_RECORDS
  run bash perf/replay/run.sh "$build" 50000
  run bash perf/history/run.sh "$build" 50000 1
  run bash perf/log/run.sh "$build" 20000 40000
  run bash perf/rest/run.sh "$build" 1 8
  run bash perf/slow_readers/run.sh "$build" 50 4 400
  run bash perf/catalog/run.sh "$build" 1 4
  run bash perf/relay/run.sh "$build" 2 100 500
  run bash perf/bus/run.sh "$build" 20000 3 5
  run bash perf/client/run.sh "$build" 3 5
  soak_out=$(mktemp -d)
  SOAK_DAYS=1 SOAK_HORIZON=6h SOAK_EVERY=0.2 run bash perf/soak/run.sh "$build" "$soak_out"
  rm -rf "$soak_out"
  RESTART_DAYS=1 run bash perf/soak/restart.sh "$build" 1
else
  run gbench "$build/perf/bench_apply" --benchmark_format=console
  run gbench "$build/perf/bench_parse" --benchmark_format=console --benchmark_min_time=0.5
  run "$build/perf/bench_memory"
  run "$build/perf/bench_line_history"
  run gbench "$build/perf/bench_log" --benchmark_format=console
  run bash perf/replay/run.sh "$build"
  run bash perf/history/run.sh "$build"
  run bash perf/log/run.sh "$build"
  run bash perf/rest/run.sh "$build"
  run bash perf/slow_readers/run.sh "$build" 500 30 5000 --goals
  run bash perf/catalog/run.sh "$build"
  run bash perf/relay/run.sh "$build"
  run bash perf/bus/run.sh "$build"
  run bash perf/client/run.sh "$build"
  run bash perf/soak/restart.sh "$build"
fi
echo
echo "perf/run.sh: $mode run took $(( $(date +%s) - t_all )) s"
if [ ${#skipped[@]} -gt 0 ]; then
  echo "perf/run.sh: ${#skipped[@]} benchmark(s) skipped (reason above each):" >&2
  printf '  %s\n' "${skipped[@]}" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo >&2
  echo "perf/run.sh: ${#failed[@]} benchmark(s) failed; their figures are not results:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "perf/run.sh: every benchmark ran and checked its answers${skipped[*]:+ (but ${#skipped[@]} skipped)}"
