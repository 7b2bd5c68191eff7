#!/usr/bin/env bash
# What each of the server's threads costs at rest, the feed going: its
# fixed cost below any subscriber (issue 37's "whole process" figure is the
# relay loops plus this). oddsrelay on core 0 with the simulator at 1,000
# records/s over 300 events and no subscriber; after a 2 s start, over
# SECONDS: each thread's CPU in clock ticks (user + system, /proc's
# 10 ms units) and its voluntary context switches (a wake each, mostly).
# Builds are compared in interleaved runs: give several, each is run
# ROUNDS times in turn.
#   perf/profile/threads.sh [--rounds N] [--seconds S] BUILD_DIR... [-- server flags, e.g. --data-dir]
# With --data-dir among the server flags, a fresh directory is made for
# each run. Loopback only; each run is bounded by S + 3 s.
set -euo pipefail
rounds=2
secs=10
builds=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "perf/profile/threads.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || { echo "perf/profile/threads.sh: no build dir (see --help)" >&2; exit 2; }
for b in "${builds[@]}"; do
  [ -x "$b/oddsrelay" ] || { echo "perf/profile/threads.sh: no $b/oddsrelay" >&2; exit 1; }
done
dir=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
printf '{"keys":[{"key":"perf-key","sandbox":true,"permissions":["live","prematch","odds"]}]}' > "$dir/keys.json"

# thread name, ticks, voluntary switches; one line per thread, sorted.
snap() {
  local t
  for t in /proc/"$pid"/task/*; do
    echo "$(cat "$t/comm") $(awk '{sub(/^.*\) /, ""); print $12 + $13}' "$t/stat") $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")"
  done | sort
}

one() {  # $1 build dir: prints one line
  local args=() port
  for a in "${extra[@]}"; do
    if [ "$a" = --data-dir ]; then rm -rf "$dir/data"; args+=(--data-dir "$dir/data"); else args+=("$a"); fi
  done
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  taskset -c 0 "$1/oddsrelay" --listen "127.0.0.1:$port" --keys "$dir/keys.json" --progress 0 --relay-threads 1 \
    --feed sim:events=300,rate=1000 "${args[@]}" 2> "$dir/log" &
  pid=$!
  sleep 2
  kill -0 "$pid" 2>/dev/null || { echo "oddsrelay exited: $(tail -3 "$dir/log")" >&2; exit 1; }
  snap > "$dir/a"
  sleep "$secs"
  snap > "$dir/b"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  join "$dir/a" "$dir/b" | awk -v b="$1" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
    { t = $4 - $2; v = $5 - $3; all += t; if (t + v > 0) line = line sprintf(" %s %d/%d", $1, t, v) }
    END { printf "%s (load %s): total %d ticks;%s\n", b, load, all, line }'
}

echo "ticks/voluntary switches per thread over ${secs} s, simulator 1,000 records/s, no subscriber, core 0"
for _ in $(seq "$rounds"); do
  for b in "${builds[@]}"; do one "$b"; done
done
