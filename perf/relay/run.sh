#!/usr/bin/env bash
# Push fan-out against two baselines in the same run: oddsrelay's /pt-ws
# versus uWebSockets (its Node binding, perf/relay/uws_server.js) and
# nginx + nchan (one worker), each fanning the same frames out to the same
# number of WebSocket subscribers, measured by the same load client
# (tools/oddsload). Loopback only; every run is bounded in time.
#
#   W1: 1,000 subscribers, simulator at 1,000 odds records/s
#       (oddsrelay with --relay-threads 1, again with every subscriber
#       offering permessage-deflate (oddsload --compress), and with 2
#       threads); compressed against uncompressed in the same run: wire
#       bytes and server CPU per delivered frame, as ratios (goals: at most
#       0.5x the bytes, at most 1.0x the CPU); and compressed against
#       uWebSockets with its shared compressor on (uWS.SHARED_COMPRESSOR,
#       every publish compressed), same frames: deliveries per server
#       CPU-second (goal at least 1.0x) and wire bytes per delivered frame;
#       and with verify=1 on every subscriber (oddsload --verify: each INFO
#       carries the state digest, docs/api.md) against without: server CPU
#       per delivered frame (goal at most 1.05x, issue 40)
#   W2: 10,000 subscribers, simulator at 50 records/s: RSS per connection
#   Shapes (issue 24), each against W1's uncompressed /pt-ws row of the same
#       run: 1,000 subscribers spread over 50 distinct events=/markets=
#       filters (server CPU per delivered frame, goal at most 1.2x the
#       unfiltered), W1 over /pt-sse (deliveries per CPU-second, goal at
#       least 0.8x), and conflate_ms=250 on a replayed feed at 1,000
#       records/s (the first subscriber's busiest channel at most 4 frames
#       a second; a Python client, perf/relay/stream_state.py, ends with
#       REST's state once the replay is done)
#   Sweep: subscribers at 10%, 20%, 30%, 40%, 50%, 70% and 100% of the W1
#       size (100, 200, 300, 400, 500, 700, 1,000), simulator at 1,000
#       records/s, server on one core, with and without compression: the
#       most subscribers served with p99 record->subscriber at or under
#       5 ms (a direction stops at its first point over 5 ms), and each
#       point's server CPU per delivered frame (oddsrelay's relay loops
#       beside it) with its ratio to uWebSockets' at the same point. Beside it, the same sweep against
#       uWebSockets (plain and shared compressor) fed without a forwarder:
#       perf/relay/capture.py records the frames of /pt-ws once, with their
#       arrival times, and perf/relay/uws_server.js --replay publishes them
#       itself at their recorded pace, stamping each INFO's `at` when it
#       publishes it, so both latencies count from their own publish. The
#       two run interleaved, oddsrelay then uWebSockets at each count, so
#       that a ratio is not the machine's drift between them. Under
#       10 s per run (perf/run.sh --quick): only 100%, each direction once
#       (every path runs; the quick figures are not results).
#
# With two cores or more, the server under test is pinned to core 0 and
# the load client to core 1 (taskset), for every server, and each server's
# CPU time is read from /proc/<pid>/stat over the measured span:
# deliveries per server CPU-second is the fair comparison on a small
# machine. For oddsrelay it is given twice: the whole process (simulator,
# engine and REST included) and the relay loops alone (threads relay-N).
#
# For the baselines, one extra oddsload subscriber on oddsrelay (pinned
# beside the load client, not the server) forwards every frame to the
# baseline's publisher (pipelined HTTP POSTs) and stamps INFO `at` with the
# moment it publishes, so a baseline's latency counts from its own input;
# ours counts from the group's arrival at the server (INFO arrived_us, in
# microseconds; the feed's `at` only where a replayed capture has none).
# oddsrelay's INFOs also carry its later stamps: its latency is printed per
# stage too.
# No ratio is printed with a run that is not sound: oddsload exited 0, every
# subscriber connected and none was closed early, frames were delivered
# (and, for a baseline, forwarded), and no subscriber saw a sequence gap or
# a frame out of order; oddsrelay must still be running after its run. An
# unsound run's row is still shown, marked, and the script exits 1.
#   perf/relay/run.sh [build-dir] [seconds per run, default 20] [W1 subs, default 1000] [W2 subs, default 10000]
# RELAY_SHAPES_ONLY=1: only issue 24's rows: W1's oddsrelay rows plain,
# compressed and verify=1 beside uWebSockets compressed, the shapes and the sweep
# (uWebSockets' included); no other baseline row, no W2.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build}
secs=${2:-20}
w1=${3:-1000}
w2=${4:-10000}
shapes_only=${RELAY_SHAPES_ONLY:-}
die() { echo "perf/relay: FAILED: $*" >&2; exit 1; }
[ -x "$build/oddsrelay" ] && [ -x "$build/oddsload" ] || die "no $build/oddsrelay or $build/oddsload"
# A baseline that cannot be installed here skips the benchmark (exit 77,
# perf/run.sh) with the reason, rather than failing it.
skip() { echo "perf/relay: SKIPPED: $*" >&2; exit 77; }
if ! command -v nginx >/dev/null || [ ! -f /usr/lib/nginx/modules/ngx_nchan_module.so ]; then
  echo "installing nginx and nchan"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light libnginx-mod-nchan >/dev/null 2>&1 ||
    skip "nginx with nchan (Debian nginx-light, libnginx-mod-nchan) cannot be installed here"
fi
# uWebSockets' Node binding, into a perf-local directory (node_modules is
# never committed). The newest uWebSockets.js builds need glibc 2.38; this
# one loads on Debian 12's.
uws_pkg=@trufflesuite/uws-js-unofficial
uws_ver=20.30.0-unofficial.0
uws_dir=$root/perf/relay/.uws
command -v node >/dev/null || skip "node is not installed (scripts/install-deps.sh installs Debian's nodejs)"
if ! NODE_PATH=$uws_dir/node_modules node -e "require('$uws_pkg')" 2>/dev/null; then
  echo "installing $uws_pkg@$uws_ver into $uws_dir"
  mkdir -p "$uws_dir"
  npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$uws_dir" "$uws_pkg@$uws_ver" >/dev/null ||
    skip "npm cannot install $uws_pkg@$uws_ver (no registry?)"
  NODE_PATH=$uws_dir/node_modules node -e "require('$uws_pkg')" || skip "$uws_pkg does not load on this machine"
fi
# The conflated row's checking client needs Python's websockets (Debian
# python3-websockets, as tests/e2e do).
pyws=
for py in python3 /usr/bin/python3; do "$py" -c 'import websockets' 2>/dev/null && { pyws=$py; break; }; done
[ -n "$pyws" ] || die "no python3 with websockets (scripts/install-deps.sh installs python3-websockets)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((w2 + 200)) ] || { echo "need more than $((w2 + 200)) open files (ulimit -n is $(ulimit -n))"; exit 1; }
if [ "$(nproc)" -ge 2 ]; then
  pin_server="taskset -c 0"; pin_client="taskset -c 1"; pinning="server on core 0, load client on core 1"
else
  pin_server=""; pin_client=""; pinning="one core: nothing pinned"
fi
tck=$(getconf CLK_TCK)
dir=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
nport=$(free_port)
uport=$(free_port)
relay_pid=
uws_pid=
checker_pid=
cleanup() {
  [ -n "$checker_pid" ] && kill "$checker_pid" 2>/dev/null || true
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  [ -n "$uws_pid" ] && kill "$uws_pid" 2>/dev/null || true
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

start_relay() {  # $1 = simulator rate, $2 = relay threads, $3 = pinning
  $3 "$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed "${feed:-sim:events=300,rate=$1}" \
    --progress 0 --relay-threads "$2" 2> "$dir/relay.log" &
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
  $pin_server nginx -c "$dir/nginx.conf" || die "nginx did not start"
  sleep 0.3
}
stop_nchan() {
  local pid; pid=$(cat "$dir/nginx.pid")
  kill "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$dir/nginx.pid"
}
nginx_worker() { pgrep -P "$(cat "$dir/nginx.pid")" | head -1; }
start_uws() {  # uws_server.js options (--compress, --replay CAPTURE)
  # The last run's log says "listening" too: gone before this one starts.
  rm -f "$dir/uws.log"
  NODE_PATH=$uws_dir/node_modules $pin_server node perf/relay/uws_server.js "$uport" "$@" 2> "$dir/uws.log" &
  uws_pid=$!
  for _ in $(seq 100); do
    grep -q listening "$dir/uws.log" 2>/dev/null && return
    kill -0 "$uws_pid" 2>/dev/null || die "uws_server exited: $(tail -3 "$dir/uws.log")"
    sleep 0.1
  done
  die "uws_server did not listen"
}
stop_uws() { kill "$uws_pid"; wait "$uws_pid" 2>/dev/null || true; uws_pid=; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# CPU ticks (user + system) of a process, or of its threads named relay-*.
cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
relay_ticks() {
  local t=0 task
  for task in /proc/"$1"/task/*; do
    grep -q '^relay-' "$task/comm" 2>/dev/null || continue
    t=$((t + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' "$task/stat")))
  done
  echo "$t"
}
now_s() { date +%s.%N; }

# Runs oddsload on the client core; samples the server's (pid $1) RSS and
# CPU once every subscriber is connected and its CPU again at the end;
# prints the JSON summary with "rss_kib", "cpu_s", "relay_cpu_s" and
# "wall_s" added.
measure() {
  local pid=$1; shift
  $pin_client "$build/oddsload" --json --progress 0 --duration "$secs" "$@" > "$dir/out.json" &
  local load=$!
  # Connecting takes about a second per 2,000 subscribers; then 3 s to
  # settle (1 s in a quick run of under 10 s, whose sizes are small).
  local settle=3
  [ "$secs" -ge 10 ] || settle=1
  local ramp=$(( ${conns:-1000} / 2000 + settle ))
  sleep "$ramp"
  local rss c0 r0 w0; rss=$(rss_kib "$pid"); c0=$(cpu_ticks "$pid"); r0=$(relay_ticks "$pid"); w0=$(now_s)
  local c1 r1 w1
  # The wait forks nothing but sleep: a python3 started every 0.2 s here
  # (about 20 ms of CPU each, on either core) was in the tail it measured,
  # p99 5.4 ms against 2.0 ms for the same 200 subscribers without it.
  # EPOCHREALTIME is bash's own clock (microseconds once its separator goes).
  local end_us=$(( ${EPOCHREALTIME//[!0-9]/} + (secs - ramp) * 1000000 - 500000 ))
  while kill -0 "$load" 2>/dev/null && (( ${EPOCHREALTIME//[!0-9]/} < end_us )); do sleep 0.2; done
  c1=$(cpu_ticks "$pid"); r1=$(relay_ticks "$pid"); w1=$(now_s)
  local rc=0
  wait "$load" || rc=$?
  [ "$rc" = 0 ] || die "oddsload exited $rc: $(cat "$dir/out.json")"
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); a=sys.argv
d["rss_kib"]=int(a[2]); d["cpu_s"]=(int(a[3])-int(a[4]))/int(a[8]); d["relay_cpu_s"]=(int(a[5])-int(a[6]))/int(a[8])
d["wall_s"]=float(a[7]); print(json.dumps(d))' "$dir/out.json" "$rss" "$c1" "$c0" "$r1" "$r0" "$(python3 -c "print($w1 - $w0)")" "$tck"
}

report() {  # $1 label, $2 subscribers, then name=json pairs in files: ours [ours2] uws nchan; rss before in the json
  python3 - "$@" <<'PY'
import json, sys
label, subs, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
runs = []
for f in files:
    name, path = f.split("=", 1)
    d = json.load(open(path))
    runs.append((name, d))
def unsound(name, d):
    bad = [f"{k}={d[k]}" for k in ("failed", "closed_early", "gaps", "out_of_order") if d[k] != 0]
    if d["connected"] != subs: bad.append(f"connected={d['connected']}/{subs}")
    if d["frames"] == 0 or d["frames_per_s"] <= 0: bad.append("no frames delivered")
    if d["latency_samples"] == 0: bad.append("no INFO timed (no latency)")
    if not name.startswith("oddsrelay") and d["forwarded"] == 0: bad.append("nothing forwarded")
    if "--compress" in name and d["compressed"] != d["connected"]:
        bad.append(f"compression negotiated on {d['compressed']}/{d['connected']}")
    return ", ".join(bad)
failed = {name: unsound(name, d) for name, d in runs if unsound(name, d)}
def per_cpu(d, relay_only=False):
    cpu = d["relay_cpu_s"] if relay_only else d["cpu_s"]
    return d["frames_per_s"] * d["wall_s"] / cpu if cpu > 0 else float("nan")
print(f"\n### {label}\n")
for name, why in failed.items():
    print(f"perf/relay: FAILED: {label}: {name}: {why}: its row is shown, no ratio with it", file=sys.stderr)
    print(f"**{name}: unsound run ({why}): no ratio printed with it**\n")
print("| server | subscribers | deliveries/s | MB/s | wire MB/s | server CPU % | deliveries per CPU-s | p50 ms | p99 ms | p99.9 ms | max ms | RSS KiB/conn | gaps / out of order |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, d in runs:
    per = (d["rss_kib"] - d["rss0_kib"]) * 1024 / max(d["connected"], 1)
    cpu = f"{100 * d['cpu_s'] / d['wall_s']:.0f}"
    pc = f"{per_cpu(d):,.0f}"
    if name.startswith("oddsrelay"):
        cpu += f" (loops {100 * d['relay_cpu_s'] / d['wall_s']:.0f})"
        pc += f" (loops {per_cpu(d, True):,.0f})"
    # A replayed feed's `at` is the capture's time, not now: no latency.
    lat = (" | ".join(f"{d[k]:.2f}" for k in ("p50_ms", "p99_ms", "p999_ms", "max_ms"))
           if "conflate" not in name else "(replay) | | |")
    print(f"| {name} | {d['connected']}/{subs} | {d['frames_per_s']:,.0f} | {d['bytes_per_s']/1e6:,.1f} | {d['wire_bytes_per_s']/1e6:,.1f} | {cpu} | {pc} | "
          f"{lat} | {per/1024:.1f} | {d['gaps']} / {d['out_of_order']} |")
print()
for name, d in runs:
    st = d.get("latency_us", {})
    if "record_engine" in st and "conflate" not in name:
        parts = [f"{k.replace('_', '->')} p50 {v['p50']} / p99 {v['p99']} / p99.9 {v['p999']} / max {v['max']}"
                 for k, v in st.items() if k != "total"]
        print(f"{name} latency stages, us: " + "; ".join(parts))
ours = dict(runs)
tag = label.split(":")[0]
# Compressed against compressed: uWebSockets' shared compressor.
zu = ours.get("uWebSockets --compress")
if zu and "uWebSockets --compress" not in failed and ours.get("oddsrelay --compress") and "oddsrelay --compress" not in failed:
    z = ours["oddsrelay --compress"]
    wire = lambda d: d["wire_bytes_per_s"] / d["frames_per_s"]
    print(f"{tag} oddsrelay --compress/uWebSockets --compress (shared compressor): deliveries per CPU-s "
          f"{per_cpu(z) / per_cpu(zu):.2f}x (relay loops alone {per_cpu(z, True) / per_cpu(zu):.2f}x; goal >= 1.0x), "
          f"wire bytes per delivered frame {wire(z):.0f} vs {wire(zu):.0f} ({wire(z) / wire(zu):.2f}x; wire/frame bytes "
          f"{z['wire_bytes_per_s'] / z['bytes_per_s']:.2f} vs {zu['wire_bytes_per_s'] / zu['bytes_per_s']:.2f}), "
          f"p99 {z['p99_ms']:.2f} ms vs {zu['p99_ms']:.2f} ms")
for base in ("uWebSockets", "nginx+nchan"):
    if base not in ours: continue
    b = ours[base]
    if base in failed: continue
    for name, d in runs:
        if not name.startswith("oddsrelay") or name in failed: continue
        print(f"{tag} {name}/{base}: deliveries per CPU-s {per_cpu(d) / per_cpu(b):.2f}x "
              f"(relay loops alone {per_cpu(d, True) / per_cpu(b):.2f}x), deliveries/s {d['frames_per_s'] / b['frames_per_s']:.2f}x, "
              f"p99 {d['p99_ms']:.2f} ms vs {b['p99_ms']:.2f} ms")
# verify=1: the state digest on every INFO against the same W1 without it.
v, p = ours.get("oddsrelay --verify"), ours.get("oddsrelay")
if v and p and "oddsrelay --verify" not in failed and "oddsrelay" not in failed:
    print(f"{tag} verify=1/without: server CPU per delivered frame {per_cpu(p) / per_cpu(v):.2f}x "
          f"(relay loops alone {per_cpu(p, True) / per_cpu(v, True):.2f}x; goal <= 1.05x), "
          f"p99 {v['p99_ms']:.2f} ms vs {p['p99_ms']:.2f} ms")
# permessage-deflate: the compressed row against the uncompressed one.
z, p = ours.get("oddsrelay --compress"), ours.get("oddsrelay")
if z and p and "oddsrelay --compress" not in failed and "oddsrelay" not in failed:
    wire = lambda d: d["wire_bytes_per_s"] / d["frames_per_s"]
    print(f"{tag} compressed/uncompressed ({z['compressed']}/{z['connected']} negotiated): wire bytes per delivered frame "
          f"{wire(z) / wire(p):.2f}x (goal <= 0.5x), server CPU per delivered frame {per_cpu(p) / per_cpu(z):.2f}x "
          f"(relay loops alone {per_cpu(p, True) / per_cpu(z, True):.2f}x; goal <= 1.0x)")
# Issue 24's shapes against the uncompressed /pt-ws row of the same run.
ok = lambda n: n in ours and n not in failed and "oddsrelay" not in failed and p
if ok("oddsrelay 50 filters"):
    f = ours["oddsrelay 50 filters"]
    print(f"{tag} 50 filters/unfiltered: server CPU per delivered frame {per_cpu(p) / per_cpu(f):.2f}x "
          f"(relay loops alone {per_cpu(p, True) / per_cpu(f, True):.2f}x; goal <= 1.2x); "
          f"deliveries/s {f['frames_per_s']:,.0f} vs {p['frames_per_s']:,.0f}")
if ok("oddsrelay --sse"):
    e = ours["oddsrelay --sse"]
    print(f"{tag} /pt-sse over /pt-ws: deliveries per CPU-s {per_cpu(e) / per_cpu(p):.2f}x "
          f"(relay loops alone {per_cpu(e, True) / per_cpu(p, True):.2f}x; goal >= 0.8x)")
c = ours.get("oddsrelay --conflate-ms 250")
if c and "oddsrelay --conflate-ms 250" not in failed:
    fs = c["first_subscriber"]
    # One frame per channel per 250 ms over the span, plus the one at its start.
    frames, bound = fs["busiest_channel_frames_per_s"] * c["seconds"], 4 * c["seconds"] + 1
    print(f"{tag} conflate_ms=250: the first subscriber's busiest channel {fs['busiest_channel_frames_per_s']:.2f} "
          f"frames/s (goal <= 4), INFOs {fs['infos_per_s']:.2f}/s; deliveries/s {c['frames_per_s'] / p['frames_per_s']:.2f}x "
          f"the unconflated stream's" if p else "")
    if frames > bound + 0.05:
        print(f"perf/relay: FAILED: {label}: conflate_ms=250 sent {frames:.0f} frames on one channel in "
              f"{c['seconds']:.1f} s", file=sys.stderr)
        failed["conflate"] = "too many frames on a channel"
sys.exit(1 if failed else 0)
PY
}

# The latency sweep's table and its answer: the most subscribers with p99 <= 5 ms, per direction.
sweep_report() {  # name=json files
  python3 - "$@" <<'PY'
import json, sys
rows, best, bad = [], {}, []
for f in sys.argv[1:]:
    name, path = f.split("=", 1)
    mode, n = name.split()
    d = json.load(open(path))
    n = int(n)
    why = [f"{k}={d[k]}" for k in ("failed", "closed_early", "gaps", "out_of_order") if d[k] != 0]
    if d["connected"] != n: why.append(f"connected={d['connected']}/{n}")
    if d["frames"] == 0: why.append("no frames delivered")
    if d["latency_samples"] == 0: why.append("no INFO timed (no latency)")
    if mode.endswith("compress") and d["compressed"] != d["connected"]:
        why.append(f"compression negotiated on {d['compressed']}/{d['connected']}")
    if d.get("replay_ended"): why.append(f"the capture ran out before the run did ({d['replay_ended']})")
    if why: bad.append(f"{name}: {', '.join(why)}")
    rows.append((mode, n, d, why))
    if not why and d["p99_ms"] <= 5.0: best[mode] = max(best.get(mode, 0), n)
# The points ran interleaved (oddsrelay, then uWebSockets, at each count);
# the table lists each stream's points together.
order = ("plain", "compress", "uws-plain", "uws-compress")
rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else len(order), r[1]))
print("\n### Latency sweep: simulator at 1000 records/s, server on one core (--relay-threads 1); "
      "uws-*: uWebSockets publishing a capture of the same frames itself\n")
# The stages say where a p99 goes: the engine, the relay's encoding, or the
# sockets and the client (relay->subscriber).
# CPU per delivered frame, in microseconds: the whole server, and for
# oddsrelay its relay loops alone (threads relay-N).
def us_per_frame(d, key="cpu_s"):
    frames = d["frames_per_s"] * d["wall_s"]
    return 1e6 * d[key] / frames if frames > 0 and key in d else float("nan")
print("| stream | subscribers | deliveries/s | server CPU % | CPU us/frame (loops) | p50 ms | p99 ms | p99.9 ms | p99 ms record->engine / engine->relay / relay->subscriber | sound |")
print("|---|---|---|---|---|---|---|---|---|---|")
for mode, n, d, why in rows:
    st = d.get("latency_us", {})
    stages = " / ".join(f"{st[k]['p99'] / 1000:.2f}" for k in ("record_engine", "engine_relay", "relay_subscriber") if k in st)
    per = f"{us_per_frame(d):.2f}" + (f" ({us_per_frame(d, 'relay_cpu_s'):.2f})" if not mode.startswith("uws-") else "")
    print(f"| {mode} | {d['connected']}/{n} | {d['frames_per_s']:,.0f} | {100 * d['cpu_s'] / d['wall_s']:.0f} | {per} | "
          f"{d['p50_ms']:.2f} | {d['p99_ms']:.2f} | {d['p999_ms']:.2f} | {stages} | {'yes' if not why else ', '.join(why)} |")
print()
# Each point both servers reached: oddsrelay's CPU per frame over
# uWebSockets' (the goal below saturation: loops at most 0.8x, process 1.0x).
by = {(m, n): d for m, n, d, why in rows if not why}
for (mode, n), d in by.items():
    u = by.get(("uws-" + mode, n))
    if mode.startswith("uws-") or not u or not us_per_frame(u) > 0:
        continue
    print(f"CPU per frame, {mode} at {n}: oddsrelay {us_per_frame(d) / us_per_frame(u):.2f}x uWebSockets' "
          f"(loops {us_per_frame(d, 'relay_cpu_s') / us_per_frame(u):.2f}x)")
modes = list(dict.fromkeys(m for m, *_ in rows))
for mode in (m for m in modes if not m.startswith("uws-")):
    beside = f"; uWebSockets (uws-{mode}): {best.get('uws-' + mode, 0)}" if "uws-" + mode in modes else ""
    print(f"Sweep {mode}: the most subscribers served with p99 <= 5 ms: {best.get(mode, 0)} (goal 1000 per core){beside}")
for b in bad:
    print(f"perf/relay: FAILED: sweep {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# 50 distinct filters for --filter-file (perf/relay/make_filters.py).
make_filters() {
  python3 perf/relay/make_filters.py "$port" perf-key > "$dir/filters.txt" || die "cannot make 50 distinct filters"
}
start_checker() {
  $pin_client "$pyws" perf/relay/stream_state.py "$port" perf-key conflate_ms=250 $((secs + 60)) > "$dir/checker.json" &
  checker_pid=$!
}
wait_checker() {
  local rc=0
  wait "$checker_pid" || rc=$?
  checker_pid=
  echo "  conflate_ms=250 client against REST: $(cat "$dir/checker.json")" >&2
  [ "$rc" = 0 ] || die "a conflate_ms=250 client's state is not REST's: $(cat "$dir/checker.json")"
}

add_rss0() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["rss0_kib"]=int(sys.argv[2]); print(json.dumps(d))' "$1" "$2"; }

run_ours() {  # $1 name, $2 rate, $3 threads, $4 out file, then oddsload options
  start_relay "$2" "$3" "$pin_server"
  ${prepare:-true}
  local rss0; rss0=$(rss_kib "$relay_pid")
  echo "  $1: $conns subscribers, $secs s" >&2
  add_rss0 "$(measure "$relay_pid" --url http://127.0.0.1:$port --key perf-key --connections "$conns" "${@:5}")" \
    "$rss0" > "$4"
  ${finish:-true}
  stop_relay
}
run_baseline() {  # $1 name, $2 rate, $3 out file, then oddsload options (--compress: uWebSockets' too)
  # The feeding oddsrelay runs beside the load client, off the server's core.
  start_relay "$2" 1 "$pin_client"
  local pid sub uws=
  case $1 in uWebSockets*) uws=1 ;; esac
  if [ -n "$uws" ]; then start_uws "${@:4}"; pid=$uws_pid; sub=127.0.0.1:$uport/sub
  else start_nchan; pid=$(nginx_worker); sub=127.0.0.1:$nport/sub; fi
  local rss0; rss0=$(rss_kib "$pid")
  echo "  $1: $conns subscribers, $secs s" >&2
  local pub=${sub%/sub}/pub
  add_rss0 "$(measure "$pid" --connect 127.0.0.1:$port --key perf-key --connections "$conns" \
              --forward "$pub" --subscribe "$sub" "${@:4}")" "$rss0" > "$3"
  if [ -n "$uws" ]; then stop_uws; else stop_nchan; fi
  stop_relay
}
# The sweep's uWebSockets feed: frames of /pt-ws at 1,000 records/s with
# their arrival times, long enough to outlast a run started after it.
capture_frames() {
  start_relay 1000 1 "$pin_server"
  echo "  capturing $((secs + 3)) s of /pt-ws frames for uWebSockets' replay" >&2
  $pin_client "$pyws" perf/relay/capture.py "$port" perf-key $((secs + 3)) "$dir/capture.txt" > "$dir/capture.json" ||
    die "capturing the frames failed: $(cat "$dir/capture.json")"
  echo "  capture: $(cat "$dir/capture.json")" >&2
  stop_relay
}
# uWebSockets publishing the capture itself ($2 = uws_server.js and oddsload
# options: --compress or none); "replay_ended" in the JSON if the capture ran
# out before the load client was done (the run is then unsound).
run_uws_replay() {  # $1 out file
  start_uws --replay "$dir/capture.txt" "${@:2}"
  echo "  uWebSockets replaying: $conns subscribers, $secs s" >&2
  measure "$uws_pid" --connect "127.0.0.1:$uport" --connections "$conns" --subscribe "127.0.0.1:$uport/sub" "${@:2}" \
    > "$dir/replay.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["replay_ended"]=sys.argv[2]; print(json.dumps(d))' \
    "$dir/replay.json" "$(grep -o 'replayed.*' "$dir/uws.log" || true)" > "$1"
  stop_uws
}

echo "## Relay fan-out, $(date -u +%F), $(nproc) cores ($pinning); $secs s per run"
conns=$w1
echo "W1: $w1 subscribers, sim 1000 records/s" >&2
run_ours "oddsrelay" 1000 1 "$dir/w1_ours.json"
status=0
run_ours "oddsrelay --compress" 1000 1 "$dir/w1_ours_z.json" --compress
run_ours "oddsrelay --verify" 1000 1 "$dir/w1_ours_v.json" --verify
w1_rows=("oddsrelay=$dir/w1_ours.json" "oddsrelay --compress=$dir/w1_ours_z.json" "oddsrelay --verify=$dir/w1_ours_v.json")
if [ -z "$shapes_only" ]; then
  run_ours "oddsrelay --relay-threads 2" 1000 2 "$dir/w1_ours2.json"
  run_baseline uWebSockets 1000 "$dir/w1_uws.json"
  run_baseline nginx+nchan 1000 "$dir/w1_nchan.json"
  w1_rows+=("oddsrelay --relay-threads 2=$dir/w1_ours2.json" "uWebSockets=$dir/w1_uws.json" "nginx+nchan=$dir/w1_nchan.json")
fi
run_baseline "uWebSockets --compress" 1000 "$dir/w1_uws_z.json" --compress
w1_rows+=("uWebSockets --compress=$dir/w1_uws_z.json")
report "W1: $w1 subscribers, sim 1000 records/s" "$w1" "${w1_rows[@]}" || status=1
echo "Shapes: $w1 subscribers, 1000 records/s" >&2
prepare=make_filters run_ours "oddsrelay 50 filters" 1000 1 "$dir/s_filters.json" --filter-file "$dir/filters.txt"
run_ours "oddsrelay --sse" 1000 1 "$dir/s_sse.json" --sse
# conflate_ms on a replay that ends just after the load does, so the state
# REST serves stops moving and the checking client can compare.
"$build/oddsfeed" gen -o "$dir/conflate.jsonl" --records $(( (secs + 2) * 1000 )) --sim seed=7,events=300,rate=1000 \
  > /dev/null 2>&1 || die "oddsfeed gen failed"
feed="replay:$dir/conflate.jsonl,speed=1" prepare=start_checker finish=wait_checker \
  run_ours "oddsrelay --conflate-ms 250" 1000 1 "$dir/s_conflate.json" --conflate-ms 250
report "Shapes: $w1 subscribers, 1000 records/s" "$w1" "oddsrelay=$dir/w1_ours.json" \
  "oddsrelay 50 filters=$dir/s_filters.json" "oddsrelay --sse=$dir/s_sse.json" \
  "oddsrelay --conflate-ms 250=$dir/s_conflate.json" || status=1
echo "Sweep: subscribers at 1000 records/s, server on one core" >&2
if [ "$secs" -lt 10 ]; then points=$w1; else
  points="$((w1 / 10)) $((w1 / 5)) $((w1 * 3 / 10)) $((w1 * 2 / 5)) $((w1 / 2)) $((w1 * 7 / 10)) $w1"; fi
sweep=()
capture_frames
# p99 of a sweep point's file, and whether it is over the threshold.
over_5ms() { python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["p99_ms"] > 5.0 else 1)' "$1"; }
# Each point runs oddsrelay and then uWebSockets at the same count, so that
# both meet the machine in the same state: over the minutes a sweep takes,
# this VM drifts by more than the gap between the two servers. Each side
# stops at its first point over 5 ms.
for direction in plain compress; do
  opts=()
  [ "$direction" = compress ] && opts=(--compress)
  ours=1 theirs=1
  for n in $points; do
    conns=$n
    if [ -n "$ours" ]; then
      run_ours "sweep $direction" 1000 1 "$dir/sweep_${direction}_$n.json" "${opts[@]}"
      sweep+=("$direction $n=$dir/sweep_${direction}_$n.json")
      over_5ms "$dir/sweep_${direction}_$n.json" && ours=
    fi
    if [ -n "$theirs" ]; then
      run_uws_replay "$dir/sweep_uws-${direction}_$n.json" "${opts[@]}"
      sweep+=("uws-$direction $n=$dir/sweep_uws-${direction}_$n.json")
      over_5ms "$dir/sweep_uws-${direction}_$n.json" && theirs=
    fi
    [ -n "$ours$theirs" ] || break
  done
done
sweep_report "${sweep[@]}" || status=1
[ -z "$shapes_only" ] || exit "$status"
conns=$w2
echo "W2: $w2 subscribers, sim 50 records/s" >&2
run_ours "oddsrelay" 50 1 "$dir/w2_ours.json"
run_baseline uWebSockets 50 "$dir/w2_uws.json"
run_baseline nginx+nchan 50 "$dir/w2_nchan.json"
report "W2: $w2 subscribers, sim 50 records/s" "$w2" "oddsrelay=$dir/w2_ours.json" "uWebSockets=$dir/w2_uws.json" \
  "nginx+nchan=$dir/w2_nchan.json" || status=1
[ "$status" = 0 ] || echo "perf/relay: FAILED: some runs were unsound (above); their ratios are not printed" >&2
exit "$status"
