#!/usr/bin/env bash
# What a restart on a data dir with the odds history costs before the node
# serves (issue 39; engine/storage/history_recovery.h). The soak's feed
# (perf/soak/run.sh: fast matches, a 96 h horizon) for RESTART_DAYS of feed
# time (default 6) is replayed at max speed onto a --data-dir; then the node
# is restarted on it PAIRS times (default 3) in interleaved pairs:
#   before: history-synced removed, so the history's files are read before
#           ready (what every restart did before the file existed);
#   after:  as the server leaves the dir, the files read after ready.
# Each restart prints the time from its start to the first /v1/status
# answer (ready) and to the history answering (`history.loading` false and
# its seq at the state's), polled every 20 ms. The goal: ready in under
# 5 s (the soak's), and the state served while the history is read.
#   perf/soak/restart.sh [build-dir] [pairs]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
pairs=${2:-3}
days=${RESTART_DAYS:-6}
sim=${SOAK_SIM:-seed=3,events=20,rate=1,minute=3000,tick=30000,correct=50}
work=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
die() { echo "perf/soak/restart: FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
key=restart-key
printf '{"keys":[{"key":"%s","name":"perf","permissions":["live","prematch","odds","scores"]}]}\n' "$key" \
  > "$work/keys.json"

echo "perf/soak/restart: $days days of feed ($sim) onto a data dir, build $build"
mkfifo "$work/feed"
"$build/oddsfeed" gen -o - --span "${days}d" --start 1767225600000 --sim "$sim" > "$work/feed" 2> "$work/gen.log" &
"$build/oddsrelay" --listen "127.0.0.1:$(free_port)" --keys "$work/keys.json" --feed "replay:$work/feed,speed=max" \
  --exit-after-replay --data-dir "$work/data" --retain-ended 96h --progress 0 2> "$work/fill.log" ||
  die "the replay: $(tail -3 "$work/fill.log")"
wait
grep -o 'stopped; state seq=[0-9]*' "$work/fill.log" || die "no final state line"
echo "data dir: $(du -sh "$work/data" | cut -f1), history files: $(cat "$work/data"/history-*.bin | wc -c) bytes"

# restart KIND: one restart; prints "ready_s history_s".
restart() {
  local kind=$1 port log="$work/restart-$1.log"
  [ "$kind" = before ] && rm -f "$work/data/history-synced"
  port=$(free_port)
  "$build/oddsrelay" --listen "127.0.0.1:$port" --keys "$work/keys.json" --feed none --data-dir "$work/data" \
    --retain-ended 96h --progress 0 2> "$log" &
  pid=$!
  python3 - "$port" "$key" "$pid" <<'PY' || die "$kind: $(tail -3 "$log")"
import json, os, sys, time, urllib.request
port, key, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.monotonic()
req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/status", headers={"X-API-Key": key})
ready = None
while time.monotonic() - t0 < 600:
    try:
        st = json.load(urllib.request.urlopen(req, timeout=30))
    except OSError:
        os.kill(pid, 0)  # gone: fails the run
        time.sleep(0.02)
        continue
    if ready is None:
        ready = time.monotonic() - t0
    h = st["history"]
    if not h.get("loading") and h["seq"] >= st["seq"]:
        print(f"{ready:.2f} {time.monotonic() - t0:.2f}")
        sys.exit(0)
    time.sleep(0.02)
sys.exit("no history within 600 s")
PY
  kill -TERM "$pid"
  wait "$pid" || die "$kind did not stop cleanly: $(tail -3 "$log")"
  pid=
  grep -q "history: .*rebuilt" "$log" || die "$kind did not rebuild the history: $(grep 'history:' "$log")"
}

before=() after=()
for i in $(seq "$pairs"); do
  before+=("$(restart before)")
  after+=("$(restart after)")
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
grep -o 'history: [0-9]* files.*' "$work/restart-after.log"
python3 - "${before[*]}" "${after[*]}" <<'PY'
import statistics, sys
def pairs(s):
    v = [float(x) for x in s.split()]
    return v[0::2], v[1::2]
b_ready, b_hist = pairs(sys.argv[1])
a_ready, a_hist = pairs(sys.argv[2])
f = lambda xs: " / ".join(f"{x:.2f}" for x in xs)
print(f"files read before ready: ready {f(b_ready)} s, history {f(b_hist)} s")
print(f"files read after ready:  ready {f(a_ready)} s, history {f(a_hist)} s")
print(f"ready, after / before: median {statistics.median(a / b for a, b in zip(a_ready, b_ready)):.2f}x "
      f"(goal: ready under 5 s: {'met' if max(a_ready) < 5 else 'NOT met'})")
PY
