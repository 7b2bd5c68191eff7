#!/usr/bin/env bash
# Compressed-time soak (issue 17): does a relay look the same on day 30 as
# on day 3? The simulator generates a month of feed time with fast matches
# (well over 100,000 fixtures created, priced, ended, some corrected), piped
# straight into oddsrelay (a FIFO: a month of feed is gigabytes of JSON no
# one needs on disk), replayed at max speed with --data-dir and a horizon
# of a few days (the server's default). Every few seconds the server's RSS,
# the events it holds, the odds history's memory and files, and the data
# dir's size go into a CSV, drawn by gnuplot into a PNG. At
# the end the server is stopped and restarted on its data dir, which must
# come back to the same state digest and the same odds history. A
# benchmark, not a CI test.
#   perf/soak/run.sh [build-dir] [out-dir]
# Environment: SOAK_DAYS (30), SOAK_HORIZON (96h, the server's default), SOAK_SIM (the simulator
# options below), SOAK_EVERY (sampling interval, s; 0.1: several samples
# in every compaction cycle, so that the swing is measured whole),
# SOAK_SNAPSHOT_EVERY and SOAK_SNAPSHOT_JOURNAL (--snapshot-every and
# --snapshot-journal; the server's defaults when unset).
# Goals: after the first horizon, RSS, data-dir size and the odds history's
# memory and files flat (the last third of the run within +-10% of its own
# mean); restart-to-ready < 5 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-$here/out}
days=${SOAK_DAYS:-30}
horizon=${SOAK_HORIZON:-96h}
# 20 concurrent fixtures, 3 s a match minute (a soccer match lasts 4.5 min
# of feed time), a scoreboard every 30 s, 5% of finals corrected later, one
# odds record a second besides the lifecycle ones.
sim=${SOAK_SIM:-seed=3,events=20,rate=1,minute=3000,tick=30000,correct=50}
every=${SOAK_EVERY:-0.1}
# Compaction as configured by default: the journal a cycle adds is bounded
# by a share of the snapshot (--snapshot-journal), which is what keeps the
# data dir flat, whatever the feed's rate.
compaction=()
[ -n "${SOAK_SNAPSHOT_EVERY:-}" ] && compaction+=(--snapshot-every "$SOAK_SNAPSHOT_EVERY")
[ -n "${SOAK_SNAPSHOT_JOURNAL:-}" ] && compaction+=(--snapshot-journal "$SOAK_SNAPSHOT_JOURNAL")
start_ms=1767225600000
mkdir -p "$out"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "perf/soak: $*" >&2; exit 1; }

if ! command -v gnuplot >/dev/null; then
  echo "perf/soak: installing gnuplot-nox (for the chart)"
  # Without it the figures are still printed, only the chart is left out.
  if [ "$(id -u)" = 0 ]; then apt-get install -y -q gnuplot-nox >/dev/null 2>&1; else sudo -n apt-get install -y -q gnuplot-nox >/dev/null 2>&1; fi ||
    echo "perf/soak: gnuplot-nox cannot be installed here: no chart"
fi

key=soak-key
printf '{"keys":[{"key":"%s","name":"soak","permissions":["live","prematch","odds","scores"]}]}\n' "$key" > "$work/keys.json"
# A port free right now (a fixed or derived one could be another process's).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
data="$work/data"

echo "perf/soak: $days days of feed ($sim), horizon $horizon, compaction ${compaction[*]:-default}, build $build"
mkfifo "$work/feed"
"$build/oddsfeed" gen -o - --span "${days}d" --start "$start_ms" --sim "$sim" > "$work/feed" 2> "$out/gen.log" &
pids+=($!)
gen_pid=$!
t0=$(date +%s.%N)
"$build/oddsrelay" --listen "127.0.0.1:$port" --keys "$work/keys.json" --feed "replay:$work/feed,speed=max" \
  --data-dir "$data" --retain-ended "$horizon" "${compaction[@]}" --progress 10 2> "$out/server.log" &
pids+=($!)
server_pid=$!

# The sampler: until the replay is applied, every $every s.
python3 "$here/sample.py" --pid "$server_pid" --port "$port" --key "$key" --data-dir "$data" \
  --csv "$out/soak.csv" --start-ms "$start_ms" --every "$every" || die "sampling failed: $(tail -3 "$out/server.log")"
t1=$(date +%s.%N)
history_points() {  # PORT: the odds history's points once it has read its files back and caught up with the state (300 s at most)
  python3 - "$1" "$key" <<'PY'
import json, sys, time, urllib.request
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/status", headers={"X-API-Key": sys.argv[2]})
for _ in range(3000):
    st = json.load(urllib.request.urlopen(req, timeout=30))
    h = st.get("history") or {}
    if not h or (not h.get("loading") and h.get("seq", 0) >= st["seq"]):
        break
    time.sleep(0.1)
print(h.get("points", 0), h.get("bytes", 0))
PY
}
read -r points _ <<< "$(history_points "$port")"
wait "$gen_pid" || die "the generator failed: $(tail -3 "$out/gen.log")"
kill -TERM "$server_pid"
wait "$server_pid" || die "the server did not stop cleanly: $(tail -3 "$out/server.log")"
line=$(grep -o 'stopped; state seq=[0-9]* digest=[0-9a-f]*' "$out/server.log") || die "no final state line"
seq=${line#*seq=}; seq=${seq%% *}
digest=${line##*digest=}

# Starts oddsrelay with ARGS on a port free right now and waits for its
# first /v1/status answer: sets srv_pid, srv_port, srv_body and srv_t0 (when
# the server that answered was started). A free port can still be taken
# between the check and the listen (another process's ephemeral port): the
# server then exits at once and is started again on another one; a server
# that exits otherwise, or never answers, fails the run.
serve() {  # LOG ARGS...
  local log=$1 attempt
  shift
  for attempt in 1 2 3; do
    srv_port=$(free_port)
    srv_t0=$(date +%s.%N)
    "$build/oddsrelay" --listen "127.0.0.1:$srv_port" --keys "$work/keys.json" "$@" > /dev/null 2> "$log" &
    srv_pid=$!
    pids+=($srv_pid)
    for _ in $(seq 1 6000); do
      srv_body=$(curl -sf -H "X-API-Key: $key" "http://127.0.0.1:$srv_port/v1/status" 2>/dev/null) && return 0
      kill -0 "$srv_pid" 2>/dev/null || break
      sleep 0.01
    done
    kill -0 "$srv_pid" 2>/dev/null && die "never answered: $(tail -3 "$log")"
    grep -q "address already in use" "$log" || die "exited before it answered: $(tail -3 "$log")"
    echo "perf/soak: port $srv_port was taken meanwhile; starting again on another" >&2
  done
  die "no free port in three tries"
}

# Restart on the data dir: time to the first answer at the right seq.
serve "$out/restart.log" --feed none --data-dir "$data" --retain-ended "$horizon" --progress 0
ready=$(date +%s.%N)
t2=$srv_t0 port2=$srv_port restart_pid=$srv_pid
echo "$srv_body" | grep -q "\"seq\":$seq," || die "restart serves another seq: $srv_body"
held=$(curl -sf -H "X-API-Key: $key" "http://127.0.0.1:$port2/v1/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"]["held"])')
read -r points2 history_bytes2 <<< "$(history_points "$port2")"
history_ready=$(date +%s.%N)
kill -TERM "$restart_pid"
wait "$restart_pid" || die "restart did not stop cleanly"
grep -q "stopped; state seq=$seq digest=$digest" "$out/restart.log" ||
  die "restart came back to another state: $(grep stopped "$out/restart.log") vs seq=$seq digest=$digest"
dir_bytes=$(du -sb "$data" | cut -f1)
# Memory a retained event costs, without a replay's in-flight queues or
# the pages the allocator keeps after a burst (jemalloc purges freed pages
# only as it allocates: an idle server keeps them): a server loading the
# data dir against one with an empty dir, both with immediate purging.
rss_of() {  # DATA-DIR: RSS in KiB of a server serving DATA-DIR, once ready
  MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 serve "$out/measure.log" --feed none --data-dir "$1" \
    --retain-ended "$horizon" --progress 0
  sleep 1
  awk '/^VmRSS/{print $2}' "/proc/$srv_pid/status"
  kill -TERM "$srv_pid"
  wait "$srv_pid" || true
}
rss_restart=$(rss_of "$data")
rss_empty=$(rss_of "$work/empty")

# Kept as a script so that the figures can be drawn again from the CSV.
cat > "$out/report.sh" <<REPORT
python3 "$here/report.py" --csv "$out/soak.csv" --png "$out/soak.png" --horizon "$horizon" --days "$days" \\
  --t0 "$t0" --t1 "$t1" --t2 "$t2" --ready "$ready" --seq "$seq" --digest "$digest" --dir-bytes "$dir_bytes" \\
  --rss-restart-kb "$rss_restart" --rss-empty-kb "$rss_empty" --held "$held" \\
  --history-points "$points" --history-points-restart "$points2" --history-ready "$history_ready" \\
  --history-bytes-restart "$history_bytes2" \\
  --history-line "$(grep -o 'history: [0-9]* files.*' "$out/restart.log")" \\
  --restart-line "$(grep -o 'snapshot at seq.*ms' "$out/restart.log")"
REPORT
bash "$out/report.sh"
