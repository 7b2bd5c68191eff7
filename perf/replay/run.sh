#!/usr/bin/env bash
# End-to-end replay throughput: a capture of N records (default 1,000,000)
# from the simulator, replayed by the real binary at speed=max (read, parse
# with RapidJSON, apply, publish), timed from start to exit. The baseline in
# the same run is `oddsfeed inspect` over the same file: read and parse only,
# no engine. Both plain and gzip files.
# No rate is printed unless every timed command exited 0 and did the whole
# job: inspect counted N records and nothing malformed, the replay applied
# N records, skipped none, and ended in the state digest `oddsfeed digest`
# computes from the same file (a replay that fails at once is not fast).
#   perf/replay/run.sh [build-dir] [records]
set -euo pipefail
shopt -s inherit_errexit
build=${1:-build}
records=${2:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
die() { echo "perf/replay: FAILED: $*" >&2; exit 1; }

"$build/oddsfeed" gen -o "$dir/feed.jsonl" --records "$records" --sim seed=1,events=2000,rate=1000 2>"$dir/gen.log" ||
  die "oddsfeed gen: $(tail -3 "$dir/gen.log")"
gzip -k -1 "$dir/feed.jsonl"
"$build/oddsfeed" digest "$dir/feed.jsonl" > "$dir/digest.txt" 2>&1 || die "oddsfeed digest: $(tail -3 "$dir/digest.txt")"
want_digest=$(sed -n 's/.*digest=\([0-9a-f]\{16\}\).*/\1/p' "$dir/digest.txt")
[ -n "$want_digest" ] || die "no digest from oddsfeed digest: $(cat "$dir/digest.txt")"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rate() { python3 -c "print(f'{$1/$2:,.0f}')"; }
# timed LOG CMD...: runs CMD with its output in LOG; prints the seconds it
# took, or fails the script with the command's status and last lines.
timed() {
  local log=$1 t0 t1 rc=0
  shift
  t0=$(date +%s.%N)
  "$@" >"$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  [ "$rc" = 0 ] || die "exit status $rc from: $*"$'\n'"$(tail -5 "$log")"
  python3 -c "print($t1-$t0)"
}
field() { sed -n "s/$2/\\1/p" "$1" | tail -1; }  # the last capture of regex $2 in file $1

for f in feed.jsonl feed.jsonl.gz; do
  base=$(timed "$dir/inspect.log" "$build/oddsfeed" inspect "$dir/$f")
  [ "$(field "$dir/inspect.log" '^records: \([0-9]*\)$')" = "$records" ] &&
    [ "$(field "$dir/inspect.log" '^malformed: \([0-9]*\)$')" = 0 ] ||
    die "oddsfeed inspect $f did not read $records good records:"$'\n'"$(head -4 "$dir/inspect.log")"
  full=$(timed "$dir/replay.log" "$build/oddsrelay" --feed "replay:$dir/$f,speed=max" --exit-after-replay \
              --progress 0 --listen "127.0.0.1:$(free_port)")
  applied=$(field "$dir/replay.log" '^progress: applied=\([0-9]*\) .*')
  skipped=$(field "$dir/replay.log" '^progress: .* skipped=\([0-9]*\) .*')
  malformed=$(field "$dir/replay.log" '^progress: .* malformed=\([0-9]*\) .*')
  # The line goes on after the digest (` epoch=...`): the 16 hex digits are
  # taken wherever the line ends.
  digest=$(field "$dir/replay.log" '.*stopped; state seq=[0-9]* digest=\([0-9a-f]\{16\}\)\( .*\)\{0,1\}$')
  [ "$applied/$skipped/$malformed" = "$records/0/0" ] ||
    die "replay of $f applied '$applied' of $records records (skipped '$skipped', malformed '$malformed'):"$'\n'"$(tail -5 "$dir/replay.log")"
  [ "$digest" = "$want_digest" ] || die "replay of $f ended in state digest '$digest', oddsfeed digest says $want_digest"
  printf '%-14s replay %s rec/s (%.2f s)   baseline read+parse %s rec/s (%.2f s)   ratio %.2f\n' \
    "$f" "$(rate "$records" "$full")" "$full" "$(rate "$records" "$base")" "$base" \
    "$(python3 -c "print($base/$full)")"
done
