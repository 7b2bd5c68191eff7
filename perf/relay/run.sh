#!/usr/bin/env bash
# Push fan-out against a baseline in the same run: oddsrelay's /pt-ws versus
# nginx + nchan (one worker each side) fanning the same frames out to the
# same number of WebSocket subscribers, measured by the same load client
# (tools/oddsload). Loopback only; every run is bounded in time.
#
#   W1: 1,000 subscribers, simulator at 1,000 odds records/s
#   W2: 10,000 subscribers, simulator at 50 records/s: RSS per connection
#
# For nchan, one extra oddsload subscriber on oddsrelay forwards every frame
# to nchan's publisher (pipelined POSTs) and stamps INFO `at` with the moment
# it publishes, so nchan's latency counts from its own input; ours counts
# from the feed record's `at` (integer ms: up to 1 ms against us).
# No ratio is printed unless both runs are sound: oddsload exited 0, every
# subscriber connected and none was closed early, frames were delivered
# (and, for nchan, forwarded), and no subscriber saw a sequence gap or a
# frame out of order; oddsrelay must still be running after its run.
#   perf/relay/run.sh [build-dir] [seconds per run, default 60] [W1 subs, default 1000] [W2 subs, default 10000]
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-60}
w1=${3:-1000}
w2=${4:-10000}
die() { echo "perf/relay: FAILED: $*" >&2; exit 1; }
[ -x "$build/oddsrelay" ] && [ -x "$build/oddsload" ] || die "no $build/oddsrelay or $build/oddsload"
if ! command -v nginx >/dev/null || [ ! -f /usr/lib/nginx/modules/ngx_nchan_module.so ]; then
  echo "installing nginx and nchan"; apt-get install -y -qq nginx-light libnginx-mod-nchan >/dev/null
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((w2 + 200)) ] || { echo "need more than $((w2 + 200)) open files (ulimit -n is $(ulimit -n))"; exit 1; }
dir=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
nport=$(free_port)
while [ "$nport" = "$port" ]; do nport=$(free_port); done
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  [ -s "$dir/nginx.err" ] && { grep -v "shutdown() failed\|setrlimit" "$dir/nginx.err" | tail -8 || true; }
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

printf '{"keys":[{"key":"perf-key","sandbox":true,"ws_connections":100000,"permissions":["live","prematch","odds"]}]}' > "$dir/keys.json"
cat > "$dir/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_nchan_module.so;
worker_processes 1;
worker_rlimit_nofile 100000;
pid $dir/nginx.pid;
error_log $dir/nginx.err notice;
events { worker_connections 100000; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_buffer_size 1m;
  server {
    listen 127.0.0.1:$nport backlog=4096;
    location = /pub { nchan_publisher; nchan_channel_id relay; nchan_message_buffer_length 64; nchan_message_timeout 10s; }
    location = /sub { nchan_subscriber websocket; nchan_channel_id relay; nchan_subscriber_first_message newest; }
  }
}
CONF

start_relay() {  # $1 = simulator rate
  "$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed "sim:events=300,rate=$1" \
    --progress 0 2> "$dir/relay.log" &
  relay_pid=$!
  local up=
  for _ in $(seq 100); do
    kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay exited: $(tail -3 "$dir/relay.log")"
    curl -sf -o /dev/null -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/status" && { up=1; break; }
    sleep 0.1
  done
  [ -n "$up" ] || die "oddsrelay does not answer /v1/status: $(tail -3 "$dir/relay.log")"
  sleep 1
}
stop_relay() {
  kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay died during the run: $(tail -3 "$dir/relay.log")"
  kill "$relay_pid"; wait "$relay_pid" 2>/dev/null || true; relay_pid=
}
start_nchan() {
  nginx -c "$dir/nginx.conf" || die "nginx did not start"
  sleep 0.3
}
stop_nchan() {
  local pid; pid=$(cat "$dir/nginx.pid")
  kill "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$dir/nginx.pid"
}
nginx_worker() { pgrep -P "$(cat "$dir/nginx.pid")" | head -1; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

# Runs oddsload; samples the server's RSS (pid $1) once every subscriber is
# connected; prints the JSON summary with "rss_kib" added.
measure() {
  local pid=$1; shift
  "$build/oddsload" --json --progress 0 --duration "$secs" "$@" > "$dir/out.json" &
  local load=$!
  local ramp=$(( ${conns:-1000} / 2000 + 3 ))
  sleep "$ramp"
  local rss; rss=$(rss_kib "$pid")
  local rc=0
  wait "$load" || rc=$?
  [ "$rc" = 0 ] || die "oddsload exited $rc: $(cat "$dir/out.json")"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["rss_kib"]=int(sys.argv[2]); print(json.dumps(d))' "$dir/out.json" "$rss"
}

report() {  # $1 label, $2 ours json, $3 nchan json, $4 subscribers, $5/$6 idle rss before
  python3 - "$@" <<'PY'
import json, sys
label, ours, base, subs, rss0, nrss0 = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
def sound(name, d, forwarding=False):
    bad = [f"{k}={d[k]}" for k in ("failed", "closed_early", "gaps", "out_of_order") if d[k] != 0]
    if d["connected"] != subs: bad.append(f"connected={d['connected']}/{subs}")
    if d["frames"] == 0 or d["frames_per_s"] <= 0: bad.append("no frames delivered")
    if forwarding and d["forwarded"] == 0: bad.append("nothing forwarded to nchan")
    if bad:
        sys.exit(f"perf/relay: FAILED: {label}: {name}: {', '.join(bad)}: no ratio printed\n{json.dumps(d)}")
sound("oddsrelay", ours)
sound("nginx+nchan", base, forwarding=True)
def row(name, d, rss_before):
    per = (d["rss_kib"] - rss_before) * 1024 / max(d["connected"], 1)
    return (f"| {name} | {d['connected']}/{subs} | {d['frames_per_s']:,.0f} | {d['bytes_per_s']/1e6:,.1f} | "
            f"{d['p50_ms']:.2f} | {d['p99_ms']:.2f} | {d['p999_ms']:.2f} | {d['max_ms']:.2f} | {per/1024:.1f} | {d['gaps']} / {d['out_of_order']} |")
print(f"\n### {label}\n")
print("| server | subscribers | frames/s | MB/s | p50 ms | p99 ms | p99.9 ms | max ms | RSS KiB/conn | seq gaps / out of order |")
print("|---|---|---|---|---|---|---|---|---|---|")
print(row("oddsrelay", ours, rss0))
print(row("nginx+nchan", base, nrss0))
r_rate = ours["frames_per_s"] / max(base["frames_per_s"], 1)
r_p99 = ours["p99_ms"] / max(base["p99_ms"], 1e-9)
print(f"\nratios oddsrelay/nchan: deliveries/s {r_rate:.3g}x, p99 latency {r_p99:.3g}x (lower is better)")
PY
}

run_workload() {  # $1 label, $2 sim rate, $3 subscribers
  local label=$1 rate=$2; conns=$3
  start_relay "$rate"
  local rss0; rss0=$(rss_kib "$relay_pid")
  echo "$label: oddsrelay, $conns subscribers, $secs s" >&2
  local ours; ours=$(measure "$relay_pid" --connect 127.0.0.1:$port --key perf-key --connections "$conns")
  start_nchan
  local nrss0; nrss0=$(rss_kib "$(nginx_worker)")
  echo "$label: nginx+nchan, $conns subscribers, $secs s" >&2
  local base; base=$(measure "$(nginx_worker)" --connect 127.0.0.1:$port --key perf-key --connections "$conns" \
                     --forward 127.0.0.1:$nport/pub --subscribe 127.0.0.1:$nport/sub)
  stop_nchan
  stop_relay
  report "$label" "$ours" "$base" "$conns" "$rss0" "$nrss0"
}

echo "## Relay fan-out, $(date -u +%F), $(nproc) cores; $secs s per run"
run_workload "W1: $w1 subscribers, sim 1000 records/s" 1000 "$w1"
run_workload "W2: $w2 subscribers, sim 50 records/s" 50 "$w2"
