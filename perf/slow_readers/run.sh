#!/usr/bin/env bash
# Slow readers (issue 42): oddsrelay's RSS and a healthy client's latency
# while slow readers of one key pipeline GET /v1/markets (490 KB) and read
# it 32 bytes at a time, like slowhttptest -X -c 500 -r 200 -w 512 -y 1024
# -n 5 -z 32 -k 3 (the client is tests/e2e/slow_reader.py; slowhttptest is
# not needed). Then BIG connections of a key with the default
# http_connections: refused past it, the server alive. Loopback only;
# bounded in time. A figure taken at a load average over 1 is not a result.
#   perf/slow_readers/run.sh [build-dir] [connections, default 500] [seconds, default 30] [big, default 5000] [--goals]
# ODDSRELAY_ARGS: more server flags (e.g. --http-sndbuf 0, the kernel's autotuning).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
conns=${2:-500}
secs=${3:-30}
big=${4:-5000}
goals=${5:-}
die() { echo "perf/slow_readers: FAILED: $*" >&2; exit 1; }
[ -x "$build/oddsrelay" ] || die "no $build/oddsrelay"
[ "$(ulimit -n)" -ge $((big + 100)) ] || ulimit -n $((big + 100)) 2>/dev/null || die "ulimit -n $(ulimit -n): too few descriptors for $big connections"
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# slow-wide-key holds all the first run's connections (what they cost is
# the point); slow-key has the default http_connections (256).
cat > "$dir/keys.json" <<'KEYS'
{"keys":[{"key":"slow-wide-key","permissions":["odds"],"http_connections":100000},
         {"key":"slow-key","permissions":["odds"]},
         {"key":"healthy-key","permissions":["live","prematch","odds","scores"]}]}
KEYS
# shellcheck disable=SC2086
"$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --progress 0 ${ODDSRELAY_ARGS:-} 2> "$dir/relay.log" &
relay_pid=$!
for _ in $(seq 100); do
  kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay exited: $(tail -3 "$dir/relay.log")"
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'X-API-Key: healthy-key' "http://127.0.0.1:$port/v1/status")" = 200 ] && break
  sleep 0.1
done
size=$(curl -s -o /dev/null -w '%{size_download}' -H 'X-API-Key: slow-key' "http://127.0.0.1:$port/v1/markets")
echo "oddsrelay $(git rev-parse --short HEAD 2>/dev/null || echo ?) on 127.0.0.1:$port; GET /v1/markets: $size bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 perf/slow_readers/bench.py "$port" "$relay_pid" --conns "$conns" --seconds "$secs" --big "$big" ${goals:+--goals}
kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay died: $(tail -3 "$dir/relay.log")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
