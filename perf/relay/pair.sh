#!/usr/bin/env bash
# One server, one load, one line: for comparing two builds of oddsrelay in
# interleaved pairs without the full perf/relay/run.sh (no baselines).
# The server on core 0 (--relay-threads 1, simulator at 1,000 records/s over
# 300 events), oddsload on core 1; over S seconds after a 3 s ramp: the
# relay's deliveries, its socket writes per delivery (relay.writes), the CPU
# per delivery of the whole process and of the relay loop, p50/p99, and the
# share of its core oddsload used (near 1.0: the load client, not the
# server, may be what the tail measures). Also core 0's ksoftirqd per
# delivery: network receive work the kernel defers there is no thread's
# of the process (an io_uring submission may move some; the machine's
# other loopback traffic lands there too, so it is an upper bound).
#   perf/relay/pair.sh BUILD_DIR SUBSCRIBERS SECONDS [filters]
# `filters`: 50 distinct events=/markets= filters, as run.sh's shape row.
# LOAD_CLIENT: an oddsload to use for both builds (default BUILD_DIR's).
# SERVER_ARGS: more flags for the server, to compare two settings of one
# build (e.g. SERVER_ARGS="--relay-io uring"); shown after BUILD_DIR.
# PROFILE=FILE: `perf record -g` of the server over the measured span into
# FILE (perf/relay/profile.sh sorts it); perf's own CPU is off both cores'
# figures only in part, so a profiled run's line is not a measurement.
# Loopback only; bounded by SECONDS + 4 s.
set -uo pipefail
B=$1; N=$2; S=$3; F=${4:-}
port=$((20000 + RANDOM % 10000)); d=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf $d' EXIT
printf '{"keys":[{"key":"perf-key","sandbox":true,"ws_connections":100000,"permissions":["live","prematch","odds"]}]}' > $d/keys.json
taskset -c 0 $B/oddsrelay --listen 127.0.0.1:$port --feed sim:events=300,rate=1000 --keys $d/keys.json --relay-threads 1 --progress 0 ${SERVER_ARGS:-} > $d/srv.log 2>&1 &
pid=$!; sleep 2
extra=()
if [ -n "$F" ]; then
python3 "$(dirname "$0")/make_filters.py" $port perf-key > $d/filters.txt || { echo "cannot make the filters" >&2; exit 1; }
extra=(--filter-file $d/filters.txt)
fi
ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' /proc/${1:-$pid}/stat; }
rticks() { local t=0; for k in /proc/$pid/task/*; do grep -q '^relay-' $k/comm && t=$((t + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' $k/stat))); done; echo $t; }
st() { curl -s -H "X-API-Key: perf-key" http://127.0.0.1:$port/v1/status; }
taskset -c 1 ${LOAD_CLIENT:-$B/oddsload} --url http://127.0.0.1:$port --key perf-key --connections $N --duration $((S+4)) "${extra[@]}" --json --progress 0 > $d/load.json 2>$d/load.err &
lp=$!; sleep 3
ks=$(pgrep -x ksoftirqd/0 | head -1); kticks() { [ -n "$ks" ] && ticks $ks || echo 0; }
st > $d/s0; t0=$(ticks); r0=$(rticks); l0=$(ticks $lp); k0=$(kticks)
[ -n "${PROFILE:-}" ] && { perf record -q -g -F 999 -p $pid -o "$PROFILE" -- sleep $S 2>/dev/null & pp=$!; }
sleep $S; t1=$(ticks); r1=$(rticks); l1=$(ticks $lp); k1=$(kticks); st > $d/s1
[ -n "${PROFILE:-}" ] && wait $pp
wait $lp; kill $pid; wait $pid 2>/dev/null; pid=
grep -h "relay writes:" $d/srv.log >&2  # the write path the server took, when it says
python3 - $d/s0 $d/s1 $d/load.json $t0 $t1 $r0 $r1 "$B${SERVER_ARGS:+ [$SERVER_ARGS]}" "$N" "${F:-plain}" $l0 $l1 $S $k0 $k1 <<'PY'
import json, sys
a, b, l = (json.load(open(p)) for p in sys.argv[1:4])
ra, rb = a["relay"], b["relay"]
dl = rb["deliveries"] - ra["deliveries"]; w = rb.get("writes", 0) - ra.get("writes", 0)
cpu = (int(sys.argv[5]) - int(sys.argv[4])) / 100; rc = (int(sys.argv[7]) - int(sys.argv[6])) / 100
ks = (int(sys.argv[15]) - int(sys.argv[14])) / 100
print(f"{sys.argv[8]} {sys.argv[10]} subs {l['connected']} gaps {l['gaps']} deliveries {dl} server CPU {cpu:.2f} s writes/delivery {w/max(dl,1):.3f} "
      f"us/delivery: process {cpu*1e6/max(dl,1):.2f} relay loop {rc*1e6/max(dl,1):.2f} ksoftirqd/0 {ks*1e6/max(dl,1):.2f}; p50 {l['p50_ms']} p99 {l['p99_ms']} ms; "
      f"oddsload {(int(sys.argv[12]) - int(sys.argv[11])) / 100 / float(sys.argv[13]):.2f} of a core")
PY
