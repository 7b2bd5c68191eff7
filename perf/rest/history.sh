#!/usr/bin/env bash
# The whole-event odds history read (GET /v1/odds/history?id=, no range)
# of an event with at least 10,000 points, timed with wrk while oddsrelay's
# simulator runs at 1,000 odds records/s: the goal is p99 <= 10 ms. Called
# by perf/rest/run.sh after its rows; loopback only; bounded in time.
#
# Such an event needs records concentrated on few fixtures, so this runs an
# oddsrelay of its own: 10 fixtures, a match minute of 30 ms (a match plays
# out in seconds), so that the records of most of a match go to the one or
# two fixtures live at the time. The event timed is one the simulator has
# removed: its history is whole and no longer grows (history stays after a
# `remove` until the retention horizon, 96 h), so every answer carries the
# same points and each one can be checked. The record sequence depends only
# on the simulator's options, so the same event reaches the same count in
# every run (about 12,000 points, some 15 s in).
#
# nginx has no equivalent of this answer: there is no baseline server, the
# figures stand against the goal, and the answer's size is printed.
# Checked before any figure is printed: 200, the event's id, the point
# count the same before and after the run (the event was frozen), every
# wrk answer about the same bytes, no socket error, and the feed moved at
# 800 records/s or more during the run (the simulator steps 1,000 times a
# second, an odds record a step when a fixture has markets to price, plus
# clock and score records; the rate is printed).
#   perf/rest/history.sh [build-dir] [seconds per run, default 10] [--http-threads, default 1] [minimum points, default 10000] [warm-up bound s, default 60]
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-10}
threads=${3:-1}
want=${4:-10000}
bound=${5:-60}
key=perf-key
die() { echo "perf/rest/history: FAILED: $*" >&2; exit 1; }
[ -x "$build/oddsrelay" ] || die "no $build/oddsrelay"
command -v wrk >/dev/null || { echo "perf/rest/history: SKIPPED: wrk is not installed" >&2; exit 77; }
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
printf '{"keys":[{"key":"perf-key","sandbox":true,"permissions":["live","prematch","odds","scores"]}]}' > "$dir/keys.json"
sim=sim:events=10,rate=1000,minute=30
"$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed "$sim" \
  --http-threads "$threads" --progress 0 2> "$dir/relay.log" &
relay_pid=$!

# Warm-up: poll the listings; an event listed once and no longer is removed,
# its history final: count its points once. Stop at the first with `want`
# points, or at the bound with the largest seen (its count is printed).
python3 - "$port" "$want" "$bound" "$dir/pick" <<'PY' || die "warm-up: $(tail -3 "$dir/relay.log")"
import json, sys, time, urllib.request
port, want, bound, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def get(p):
    r = urllib.request.Request(f"http://127.0.0.1:{port}{p}", headers={"X-API-Key": "perf-key"})
    return json.load(urllib.request.urlopen(r, timeout=10))
t0 = time.time()
while True:
    try:
        get("/v1/status")
        break
    except OSError:
        if time.time() - t0 > 10:
            sys.exit("oddsrelay does not answer /v1/status")
        time.sleep(0.1)
seen, counted = set(), {}
while time.time() - t0 < bound:
    listed = set()
    for path in ("/v1/live", "/v1/prematch"):
        listed |= {k for s in get(path)["data"].values() for k in s}
    seen |= listed
    for i in seen - listed - counted.keys():
        d = get(f"/v1/odds/history?id={i}")["data"]
        counted[i] = sum(len(o["points"]) for m in d.values() for l in m.values() for o in l.values())
    if counted and max(counted.values()) >= want:
        break
    time.sleep(0.25)
if not counted:
    sys.exit(f"no event was removed in {bound} s")
best = max(counted, key=counted.get)
open(out, "w").write(f"{best} {counted[best]} {time.time() - t0:.1f}\n")
PY
read -r id points warm < "$dir/pick"
url="/v1/odds/history?id=$id"

# count FILE: the answer is the event's, whole; prints its point count.
count() {
  python3 - "$1" "$id" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d.get("success") is True and d.get("id") == sys.argv[2], f"not the event's answer: {str(d)[:200]}"
assert d.get("interval") == "raw" and "held_from" not in d, "a cut or candled answer"
print(sum(len(o["points"]) for m in d["data"].values() for l in m.values() for o in l.values()))
PY
}
fetch() { curl -s -o "$1" -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port$url"; }
code=$(fetch "$dir/before.json")
[ "$code" = 200 ] || die "$url answered $code"
[ "$(count "$dir/before.json")" = "$points" ] || die "$url: $(count "$dir/before.json") points, the warm-up counted $points"
size=$(wc -c < "$dir/before.json")
seq0=$(curl -s -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
t0=$(date +%s%N)
out=$(wrk -t1 -c1 -d"${secs}s" --timeout 10s --latency -H "X-API-Key: $key" "http://127.0.0.1:$port$url" 2>&1) || die "wrk: $out"
t1=$(date +%s%N)
seq1=$(curl -s -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
code=$(fetch "$dir/after.json")
[ "$code" = 200 ] && [ "$(count "$dir/after.json")" = "$points" ] || die "$url: $code, $(count "$dir/after.json") points after the run, $points before"
kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay died during the run: $(tail -3 "$dir/relay.log")"
echo "history: oddsrelay --feed $sim --http-threads $threads; wrk -t1 -c1 -d${secs}s (one reader: p99 is an answer's own time, no queue of readers in front of it)"
python3 - "$out" "$size" "$points" "" "$id" "$warm" "$(( (seq1 - seq0) * 1000000000 / (t1 - t0) ))" <<'PY'
import re, sys
out, size, points, eid, warm, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[5], sys.argv[6], int(sys.argv[7])
def fail(why):
    sys.exit(f"perf/rest/history: FAILED: {why}\n{out}")
m = re.search(r"(\d+) requests in [\d.]+\w+, ([\d.]+)([KMGT]?B) read", out)
if not m or int(m.group(1)) == 0:
    fail("no request answered")
n, read = int(m.group(1)), float(m.group(2)) * {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}[m.group(3)]
if re.search(r"Non-2xx or 3xx responses", out):
    fail("non-2xx answers")
s = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
if s and any(int(x) for x in s.groups()):
    fail("socket errors")
if not (0.99 * size <= read / n <= 1.01 * size + 1024):  # the same points each time; seq digits and headers vary
    fail(f"{read / n:.0f} bytes per answer, the checked one is {size}")
# The simulator steps 1,000 times a second: an odds record a step (none
# while no fixture has markets to price), plus clock and score records.
if rate < 800:
    fail(f"the feed moved at {rate} records/s during the run: the simulator fell behind")
ms = lambda q: (lambda v, u: float(v) * {"us": 1e-3, "ms": 1, "s": 1e3}[u])(*re.search(rf"^\s+{q}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups())
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
p50, p99 = ms(50), ms(99)
print(f"event {eid}: {points} points (removed, whole; found after {warm} s), answer {size} bytes; feed {rate} records/s during the run (all kinds; rate=1000)")
print(f"{'oddsrelay_history':<22} {rps:12.2f} req/s   p50 {p50:.2f}ms   p99 {p99:.2f}ms")
if points < 10000:
    print(f"goal /v1/odds/history whole event (>= 10,000 points) p99 <= 10 ms: NOT MEASURED (the event timed has {points} points)")
else:
    print(f"goal /v1/odds/history whole event (>= 10,000 points) p99 <= 10 ms: {'met' if p99 <= 10 else 'NOT met'} ({p99:.2f} ms; no baseline server has this answer)")
PY
