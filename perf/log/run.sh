#!/usr/bin/env bash
# The log's figures: a generated feed of N records (300 events) replayed at
# max speed into a --data-dir, then a restart from that dir with no feed.
# Reports the data dir's size against the feed file's (compaction keeps
# only two snapshots and the journal after the older one), and the time
# from launch to the first answer at the right seq (restart-to-ready),
# for two feed lengths: restart time must follow the state, not the number
# of records ever applied. Each run checks its answers: the seq it serves
# and the state digest after the restart equal the feed's own. The same
# feed is first replayed without a data dir, in the same run, so the
# journal's cost is a ratio (goal: the replay with a data dir at least
# 0.8x the one without): the median of three pairs.
#   perf/log/run.sh [build-dir] [records] [more-records]
set -euo pipefail
build=${1:-build}
sizes=("${2:-1000000}" "${3:-5000000}")
pairs=3
dir=$(mktemp -d)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$dir"' EXIT
key=perf-log-key
printf '{"keys":[{"key":"%s","name":"perf","permissions":["live","prematch","odds","scores"],"rate_limit":100000000}]}\n' \
  "$key" > "$dir/keys.json"
# A port free right now (a random one could be a client's ephemeral port).
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
die() { echo "perf/log: $*" >&2; exit 1; }
for n in "${sizes[@]}"; do
  feed="$dir/feed-$n.jsonl" data="$dir/data-$n"
  "$build/oddsfeed" gen -o "$feed" --records "$n" --sim seed=7,events=300,rate=1000 >/dev/null 2>&1
  want=$("$build/oddsfeed" digest "$feed" | sed -n 's/.*digest=\([0-9a-f]*\).*/\1/p')
  # One pair swings with the machine (rates move by up to 1.5x between runs
  # here), so the ratio is the median of $pairs pairs run back to back, each
  # without a data dir then with a fresh one; the last data dir stays for the
  # size and the restart below.
  stamps=()
  for _ in $(seq 1 "$pairs"); do
    rm -rf "$data"
    b0=$(date +%s.%N)
    "$build/oddsrelay" --listen "127.0.0.1:$(port)" --keys "$dir/keys.json" --feed "replay:$feed,speed=max" \
      --exit-after-replay --progress 0 2> "$dir/bare.log" || die "replay without a data dir failed: $(tail -3 "$dir/bare.log")"
    b1=$(date +%s.%N)
    grep -q "stopped; state seq=$n digest=$want" "$dir/bare.log" || die "bare replay ended at the wrong state: $(tail -1 "$dir/bare.log")"
    t0=$(date +%s.%N)
    "$build/oddsrelay" --listen "127.0.0.1:$(port)" --keys "$dir/keys.json" --feed "replay:$feed,speed=max" \
      --data-dir "$data" --exit-after-replay --progress 0 2> "$dir/replay.log" || die "replay failed: $(tail -3 "$dir/replay.log")"
    t1=$(date +%s.%N)
    grep -q "stopped; state seq=$n digest=$want" "$dir/replay.log" || die "replay ended at the wrong state: $(tail -1 "$dir/replay.log")"
    stamps+=("$b0" "$b1" "$t0" "$t1")
  done
  feed_bytes=$(stat -c %s "$feed")
  dir_bytes=$(du -sb "$data" | cut -f1)
  p=$(port)
  t2=$(date +%s.%N)
  "$build/oddsrelay" --listen "127.0.0.1:$p" --keys "$dir/keys.json" --feed none --data-dir "$data" --progress 0 \
    2> "$dir/restart.log" &
  pid=$!
  ready=""
  for _ in $(seq 1 6000); do
    if body=$(curl -sf -H "X-API-Key: $key" "http://127.0.0.1:$p/v1/status" 2>/dev/null); then
      echo "$body" | grep -q "\"seq\":$n," || die "restart serves the wrong seq: $body"
      ready=$(date +%s.%N)
      break
    fi
    sleep 0.01
  done
  [ -n "$ready" ] || die "restart never answered: $(tail -3 "$dir/restart.log")"
  kill -TERM "$pid"; wait "$pid" || die "restart did not stop cleanly"
  grep -q "stopped; state seq=$n digest=$want" "$dir/restart.log" || die "restart state differs: $(tail -1 "$dir/restart.log")"
  python3 - "$n" "$feed_bytes" "$dir_bytes" "$t2" "$ready" "$(grep -o 'snapshot at seq [0-9]*.*replayed' "$dir/restart.log")" \
    "${stamps[*]}" <<'PY'
import sys
n, fb, db = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t2, ready = map(float, sys.argv[4:6])
s = list(map(float, sys.argv[7].split()))  # per pair: start, end without; start, end with
bare = [b1 - b0 for b0, b1 in zip(s[0::4], s[1::4])]
logged = [t1 - t0 for t0, t1 in zip(s[2::4], s[3::4])]
pairs = ", ".join(f"{n / t:,.0f} vs {n / b:,.0f} = {b / t:.2f}x" for b, t in zip(bare, logged))
ratios = sorted(b / t for b, t in zip(bare, logged))
print(f"{n:>9,} records: replay with a data dir vs without, rec/s, {len(ratios)} pairs: {pairs}; "
      f"median {ratios[len(ratios) // 2]:.2f}x")
print(f"{'':>9}  data dir {db / 1e6:.1f} MB vs feed {fb / 1e6:.1f} MB "
      f"= {db / fb:.3f}; restart-to-ready {1000 * (ready - t2):.0f} ms ({sys.argv[6]})")
PY
  rm -rf "$data" "$feed"
done
