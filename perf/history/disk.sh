#!/usr/bin/env bash
# What the odds history's files cost (issue 39, history on disk), on the
# capture perf/history/run.sh uses (N simulator records, default 1,000,000;
# seed=1, 2,000 events, 1,000/s):
#  1. `oddsrelay --feed replay:FILE,speed=max --exit-after-replay
#     --data-dir DIR` (a fresh DIR each run) with the history on (its files
#     written) against `--history off`, PAIRS interleaved pairs (default
#     3), wall time each; the ratio is off / on.
#  2. the files the last run with the history left: their bytes over the
#     points they hold (read from /v1/status after a restart on DIR, which
#     rebuilds the history from them; goal: at most 8 bytes a point), and
#     the journal's bytes for the same records (their JSON lines as the
#     journal writes them, checksum included) over the files' bytes.
# The load average is printed with the figures.
#   perf/history/disk.sh [build-dir] [records] [pairs]
source "$(dirname "$0")/setup.sh"

run() {  # run NAME [ARGS...]: a replay onto the fresh data dir $dir/NAME; prints its seconds
  local name=$1 t0 t1 rc=0
  shift
  rm -rf "${dir:?}/$name"
  t0=$(date +%s.%N)
  "$build/oddsrelay" --feed "replay:$dir/feed.jsonl,speed=max" --exit-after-replay --progress 0 \
    --listen "127.0.0.1:$(free_port)" --data-dir "$dir/$name" "$@" >"$dir/$name.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  [ "$rc" = 0 ] || die "exit status $rc from $name: $(tail -5 "$dir/$name.log")"
  grep -q "stopped; state seq=$records " "$dir/$name.log" || die "$name did not apply $records records"
  python3 -c "print(round($t1-$t0, 3))"
}
offs=() ons=()
for i in $(seq "$pairs"); do
  offs+=("$(run off --history off)")
  ons+=("$(run on)")
done
pairs_report "replay onto a data dir, --history off" "replay onto a data dir, history on   " ""

# The history rebuilt from the files on a restart: its points.
p=$(free_port)
"$build/oddsrelay" --feed none --progress 0 --listen "127.0.0.1:$p" --keys "$dir/keys.json" --data-dir "$dir/on" \
  --history-bytes 8000000000 >"$dir/restart.log" 2>&1 &
pid=$!
python3 - "$p" "$key" "$dir" <<'PY'
import glob, json, os, sys, time, urllib.request
port, key, d = sys.argv[1], sys.argv[2], sys.argv[3]
deadline = time.time() + 600
while True:
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/status", headers={"X-API-Key": key})
        h = json.load(urllib.request.urlopen(req, timeout=5)).get("history")
        if h and not h.get("loading"):  # the files are read back after ready
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("perf/history: FAILED: the restart did not answer")
    time.sleep(0.5)
log = open(os.path.join(d, "restart.log")).read()
assert "rebuilt" in log and h["held_from_seq"] == 0, log[-2000:]
files = glob.glob(os.path.join(d, "on", "history-*.bin"))
disk = sum(os.path.getsize(f) for f in files)
journal = 0  # the journal's line per market or remove record: its JSON and ,"xxh":"<16 hex>"
with open(os.path.join(d, "feed.jsonl"), "rb") as f:
    for line in f:
        if b'"op":"market"' in line or b'"op":"remove"' in line:
            journal += len(line) + 25
pts = h["points"]
print(f"history files: {len(files)}, {disk:,} bytes for {pts:,} points: {disk / pts:.2f} bytes a point (goal <= 8); "
      f"the journal's lines of the same market and remove records {journal:,} bytes, {journal / disk:.1f}x the files")
PY
