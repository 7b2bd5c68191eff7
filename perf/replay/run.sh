#!/usr/bin/env bash
# End-to-end replay throughput: a capture of N records (default 1,000,000)
# from the simulator, replayed by the real binary at speed=max (read, parse
# with RapidJSON, apply, publish), timed from start to exit. The baseline in
# the same run is `oddsfeed inspect` over the same file: read and parse only,
# no engine. Both plain and gzip files.
#   perf/replay/run.sh [build-dir] [records]
set -euo pipefail
build=${1:-build}
records=${2:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/oddsfeed" gen -o "$dir/feed.jsonl" --records "$records" --sim seed=1,events=2000,rate=1000 2>/dev/null
gzip -k -1 "$dir/feed.jsonl"
rate() { python3 -c "print(f'{$1/$2:,.0f}')"; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); python3 -c "print($t1-$t0)"; }
for f in feed.jsonl feed.jsonl.gz; do
  base=$(secs "$build/oddsfeed" inspect "$dir/$f")
  full=$(secs "$build/oddsrelay" --feed "replay:$dir/$f,speed=max" --exit-after-replay --progress 0 \
              --listen 127.0.0.1:$((20000 + RANDOM % 20000)))
  printf '%-14s replay %s rec/s (%.2f s)   baseline read+parse %s rec/s (%.2f s)   ratio %.2f\n' \
    "$f" "$(rate "$records" "$full")" "$full" "$(rate "$records" "$base")" "$base" \
    "$(python3 -c "print($base/$full)")"
done
