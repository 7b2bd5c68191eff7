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
# nats-server from Debian (scripts/install-deps.sh installs it); where it
# cannot be installed the benchmark is skipped (exit 77, perf/run.sh).
if ! command -v nats-server >/dev/null && [ ! -x /usr/sbin/nats-server ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing nats-server"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null 2>&1 || true
  fi
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] ||
    { echo "perf/bus: SKIPPED: nats-server is not installed and cannot be installed here (Debian package nats-server)" >&2; exit 77; }
fi
exec /usr/bin/python3 perf/bus/bus_bench.py "${1:-build}" "${2:-500000}" "${3:-20}" "${4:-60}"
