#!/usr/bin/env bash
# Where a relay loop's time goes at one point of the latency sweep (issue
# 37): perf/relay/pair.sh's shape (server on core 0, simulator at 1,000
# records/s, oddsload on core 1) with `perf record -g` of the server over
# the measured span, the relay loop's samples sorted by what they are paid
# per (perf/profile/stages.py --set relay): per subscriber, per filter
# bucket, per loop turn. Wants a frame-pointer build (perf/profile/run.sh
# makes build-fp). Loopback only; bounded as pair.sh is.
#   perf/relay/profile.sh FP_BUILD_DIR SUBSCRIBERS SECONDS [filters]
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || { echo "needs linux-perf (Debian)" >&2; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
echo "commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T UTC')"
line=$(PROFILE=$d/perf.data bash perf/relay/pair.sh "$@")
echo "$line"
deliveries=$(grep -o 'deliveries [0-9]*' <<<"$line" | cut -d' ' -f2)
perf report -i $d/perf.data --no-children --sort comm -q -g none 2>/dev/null | head -4
perf script -i $d/perf.data 2>/dev/null |
  python3 perf/profile/stages.py "$deliveries" --set relay --comm 'relay-' --unit delivery --units deliveries \
    --title "### The relay loop (threads relay-N), $2 subscribers${4:+, $4}"
