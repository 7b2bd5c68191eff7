#!/usr/bin/env bash
# The C++ client's apply path against the pace the server sends (issue 40,
# "Fast client"): perf/relay/capture.py records one unfiltered /pt-ws
# stream of a W1-like server (simulator, 300 events, 1,000 records/s: every
# W1 subscriber gets this stream) for SECONDS, with each frame's send time;
# `oddsclient replay` then applies the frames as fast as it can on one core
# (taskset -c 0), REPEAT times over, and the row is the ratio of the
# captured span to the replay's time. Goal: at least 20x.
#   perf/client/run.sh [build-dir] [seconds captured, default 20] [repeat, default 20]
# Prints the replay's JSON line and one summary line; exit 1 if the replay
# resynced (a gap, a bad frame) or the capture failed. The ratio is printed,
# not asserted (a loaded machine is slow, not wrong).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-20}
repeat=${3:-20}
die() { echo "perf/client: FAILED: $*" >&2; exit 1; }
[ -x "$build/oddsrelay" ] && [ -x "$build/oddsclient" ] || die "no $build/oddsrelay or $build/oddsclient"
pyws=
for py in python3 /usr/bin/python3; do "$py" -c 'import websockets' 2>/dev/null && { pyws=$py; break; }; done
[ -n "$pyws" ] || die "no python3 with websockets (scripts/install-deps.sh installs python3-websockets)"
if [ "$(nproc)" -ge 2 ]; then pin_server="taskset -c 1"; pin_client="taskset -c 0"; else pin_server=""; pin_client=""; fi
dir=$(mktemp -d)
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
port=$("$pyws" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '{"keys":[{"key":"perf-key","sandbox":true,"ws_connections":100,"permissions":["live","prematch","odds"]}]}' > "$dir/keys.json"
$pin_server "$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed "sim:events=300,rate=1000" \
  --progress 0 2> "$dir/relay.log" &
relay_pid=$!
for _ in $(seq 100); do
  kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay exited: $(tail -3 "$dir/relay.log")"
  curl -sf -o /dev/null -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/status" && break
  sleep 0.1
done
echo "perf/client: capturing $secs s of one /pt-ws stream (sim events=300, rate=1000)" >&2
"$pyws" perf/relay/capture.py "$port" perf-key "$secs" "$dir/capture.txt" > "$dir/capture.json" ||
  die "capture: $(cat "$dir/capture.json")"
kill "$relay_pid"
wait "$relay_pid" 2>/dev/null || true
relay_pid=
echo "perf/client: capture $(cat "$dir/capture.json")" >&2
load=$(cut -d' ' -f1-3 /proc/loadavg)
$pin_client "$build/oddsclient" replay "$dir/capture.txt" --repeat "$repeat" > "$dir/replay.json" ||
  die "the replay resynced or failed: $(cat "$dir/replay.json")"
cat "$dir/replay.json"
"$pyws" - "$dir/replay.json" "$load" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
per = r["frames"] / r["groups"] if r["groups"] else 0
print(f"perf/client: oddsclient replay {r['frames_per_s']:.0f} frames/s, {r['records_per_s']:.0f} records/s, "
      f"{r['speedup']:.1f}x the pace the server sent ({r['captured_seconds']:.1f} s captured, {per:.1f} frames "
      f"a group), one core; goal 20x: {'met' if r['speedup'] >= 20 else 'NOT met'}; load before: {sys.argv[2]}")
PY
