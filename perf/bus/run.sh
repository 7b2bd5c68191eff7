#!/usr/bin/env bash
# The bus's figures (perf/bus/bus_bench.py says what each one measures and
# against which direct path): records/s an edge follows through NATS
# JetStream versus a direct replay, and record-to-subscriber latency at
# 1,000 records/s through the bus (one server, then three with R3) versus
# direct, and a far edge behind a slow link: its latency and its catch-up
# after a cut. Needs Debian's nats-server.
#   perf/bus/run.sh [build-dir] [records] [latency-seconds] [cut-seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 perf/bus/bus_bench.py "${1:-build}" "${2:-500000}" "${3:-20}" "${4:-60}"
