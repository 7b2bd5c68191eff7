#!/usr/bin/env bash
# Where each record's time goes: a Release build with frame pointers and
# line tables (same flags and LTO as the shipped build otherwise) profiled
# with `perf record -g` on the engine apply benchmark and on a speed=max
# replay of N simulator records; stages.py sorts each sample into a stage
# (parse, apply, line history, retention index, accounting, batch seal and
# publish, release of replaced versions) by the innermost frame that names
# one, inlined frames included (perf script --inline).
#   perf/profile/run.sh [fp-build-dir, default build-fp] [records, default 1000000]
# Needs Debian's linux-perf. Prints two Markdown tables (perf/PROFILE.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
fp=${1:-build-fp}
records=${2:-1000000}
command -v perf >/dev/null || { echo "installing linux-perf"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
if [ ! -x "$fp/oddsrelay" ] || [ ! -x "$fp/perf/bench_apply" ]; then
  cmake -S . -B "$fp" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=-fno-omit-frame-pointer -g" >/dev/null
  cmake --build "$fp" -j2 --target oddsrelay oddsfeed bench_apply >/dev/null
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=perf/profile
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T UTC')"
echo
# 1. bench_apply: 3 timed iterations of its 1,000,000 market records; the
# simulator that makes them and the copies made while paused are left out.
perf record -q -g -o "$dir/apply.data" "$fp/perf/bench_apply" --benchmark_filter='EngineApply.*batch:256/' > "$dir/apply.txt" 2>&1
grep EngineApply "$dir/apply.txt" || true
perf script --inline -i "$dir/apply.data" 2>/dev/null |
  python3 $here/stages.py 3000000 --only-under 'BM_EngineApply' \
    --not-under 'sim::|sim_market_records|vector<oddsrelay::feed::Record.*(operator=|vector\()|Record::Record' \
    --title "### bench_apply (\`$fp/perf/bench_apply --benchmark_filter='EngineApply.*batch:256/'\`), 3 x 1,000,000 market records, a batch every 256"
echo
# 2. A replay at speed=max (reader + parser thread, engine thread, outputs).
"$fp/oddsfeed" gen -o "$dir/feed.jsonl" --records "$records" --sim seed=1,events=2000,rate=1000 >/dev/null 2>&1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
perf record -q -g -o "$dir/replay.data" "$fp/oddsrelay" --feed "replay:$dir/feed.jsonl,speed=max" --exit-after-replay \
  --progress 0 --listen "127.0.0.1:$port" > "$dir/replay.txt" 2>&1
grep "stopped; state" "$dir/replay.txt"
perf script --inline -i "$dir/replay.data" 2>/dev/null |
  python3 $here/stages.py "$records" \
    --title "### replay (\`oddsrelay --feed replay:FILE,speed=max --exit-after-replay\`), $records simulator records, all threads"
