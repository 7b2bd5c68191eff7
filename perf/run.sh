#!/usr/bin/env bash
# Runs every benchmark of perf/ and prints the machine and each command, so
# the figures in a closing note can be reproduced:  perf/run.sh [build-dir]
# A benchmark that fails (a broken run, an answer it could not verify, a
# missed goal) does not stop the others, but the script ends with the list
# of failures and exit status 1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
failed=()
run() {
  echo; echo "\$ $*"
  local rc=0
  "$@" || rc=$?
  [ "$rc" = 0 ] || { echo "perf/run.sh: FAILED (exit status $rc): $*" >&2; failed+=("$*"); }
}
run "$build/perf/bench_apply" --benchmark_format=console
run "$build/perf/bench_parse" --benchmark_format=console --benchmark_min_time=0.5
run "$build/perf/bench_memory"
run "$build/perf/bench_line_history"
run bash perf/replay/run.sh "$build"
run bash perf/rest/run.sh "$build"
run bash perf/relay/run.sh "$build"
run bash perf/bus/run.sh "$build"
if [ ${#failed[@]} -gt 0 ]; then
  echo >&2
  echo "perf/run.sh: ${#failed[@]} benchmark(s) failed; their figures are not results:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
