#!/usr/bin/env bash
# What the odds history costs (issue 39's goals), measured on a capture of N
# simulator records (default 1,000,000; seed=1, 2,000 events, 1,000/s):
#  1. the live path: `oddsrelay --feed replay:FILE,speed=max --exit-after-replay`
#     with the history on (the default) against `--history off`, PAIRS
#     interleaved pairs (default 3), wall time each; the ratio is off / on
#     (goal: at least 0.95).
#  2. its bytes: one replay held open, /v1/status's `history` read once the
#     recorder has applied every record: bytes / points, every overhead
#     included (goal: at most 8), and the bytes of the `market` and `remove`
#     records as the journal writes them (their JSON lines) over the
#     history's bytes (goal: at least 4).
#  3. the history thread's own cost: build/perf/bench_history on the same
#     capture (the store alone: ns a record, its bytes beside the
#     allocator's count, and where they are; perf/PROFILE.md "After (s18)").
# The load average is printed with the figures: taken above 1 they are not
# results (2 cores: the replay alone keeps both busy).
#   perf/history/run.sh [build-dir] [records] [pairs]
source "$(dirname "$0")/setup.sh"

# 1. Interleaved pairs: off, then on.
replay() {  # replay LOG [ARGS...]: prints the seconds it took
  local log=$1 t0 t1 rc=0
  shift
  t0=$(date +%s.%N)
  "$build/oddsrelay" --feed "replay:$dir/feed.jsonl,speed=max" --exit-after-replay --progress 0 \
    --listen "127.0.0.1:$(free_port)" "$@" >"$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  [ "$rc" = 0 ] || die "exit status $rc from the replay $*"$'\n'"$(tail -5 "$log")"
  grep -q "stopped; state seq=$records " "$log" || die "the replay $* did not apply $records records: $(tail -3 "$log")"
  python3 -c "print(round($t1-$t0, 3))"
}
offs=() ons=()
for i in $(seq "$pairs"); do
  offs+=("$(replay "$dir/off.log" --history off)")
  ons+=("$(replay "$dir/on.log")")
done
pairs_report "replay with --history off" "replay with the history  " "; goal >= 0.95x"

# 2. Its bytes, from /v1/status once the recorder has caught up.
port=$(free_port)
"$build/oddsrelay" --feed "replay:$dir/feed.jsonl,speed=max" --progress 0 --listen "127.0.0.1:$port" \
  --keys "$dir/keys.json" >"$dir/held.log" 2>&1 &
pid=$!
python3 - "$port" "$records" "$dir/feed.jsonl" "$key" <<'PY'
import json, sys, time, urllib.request
port, records, feed, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
deadline = time.time() + 600
while True:
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/status", headers={"X-API-Key": key})
        st = json.load(urllib.request.urlopen(req, timeout=5))
        h = st.get("history")
        if st["seq"] >= records and h and h["seq"] >= records:
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("perf/history: FAILED: the history did not reach seq %d" % records)
    time.sleep(0.5)
json_bytes = 0
with open(feed, "rb") as f:
    for line in f:
        if b'"op":"market"' in line or b'"op":"remove"' in line:
            json_bytes += len(line)
pts, b = h["points"], h["bytes"]
print(f"history of {records:,} records: {pts:,} points in {b:,} bytes, {b / pts:.2f} bytes a point all told "
      f"(goal <= 8); their records as JSON lines {json_bytes:,} bytes, {json_bytes / b:.1f}x the history (goal >= 4x); "
      f"{h['events']:,} events")
PY

# 3. The store alone.
"$build/perf/bench_history" "$dir/feed.jsonl" || die "bench_history"
