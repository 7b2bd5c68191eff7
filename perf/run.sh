#!/usr/bin/env bash
# Runs every benchmark of perf/ and prints the machine and each command, so
# the figures in a closing note can be reproduced:  perf/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { echo; echo "\$ $*"; "$@"; }
run "$build/perf/bench_apply" --benchmark_format=console
run "$build/perf/bench_parse" --benchmark_format=console --benchmark_min_time=0.5
run "$build/perf/bench_memory"
run bash perf/replay/run.sh "$build"
run bash perf/rest/run.sh "$build"
run bash perf/relay/run.sh "$build"
run bash perf/bus/run.sh "$build"
