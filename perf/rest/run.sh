#!/usr/bin/env bash
# REST read throughput and latency, against nginx serving the same response
# bytes as a static file, with the same wrk settings, in the same run.
# oddsrelay runs on its simulator at 1,000 odds records/s meanwhile (its
# snapshots change under the readers). Loopback only; bounded in time.
# No ratio is printed unless the answers were right: the bodies nginx serves
# were 200 answers of oddsrelay holding what was asked for; just before
# timing, each URL is fetched once from both servers (status 200; nginx's
# bytes identical to the file; oddsrelay's the same ids, size within a
# quarter, the static catalog byte for byte); and each wrk run saw no
# non-2xx answer, no socket error and about the expected bytes per answer.
# /v1/odds is measured twice: plain, and with Accept-Encoding: gzip against
# nginx's own gzip (level 1, like oddsrelay's) of the same file.
# The history reads have no nginx equivalent: /v1/odds?ids=<the same 100
# ids>&at=<the moment the ids were read> is timed against the same URL
# without `at`, in the same run, both with one connection (goal p99 <=
# 20 ms); then perf/rest/history.sh times a whole-event history of 10,000
# points or more on an oddsrelay of its own (goal p99 <= 10 ms).
#   perf/rest/run.sh [build-dir] [seconds per run, default 10] [connections, default 32] [--http-threads, default 1]
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-10}
conns=${3:-32}
threads=${4:-1}
key=perf-key
die() { echo "perf/rest: FAILED: $*" >&2; exit 1; }
for tool in wrk nginx; do
  command -v $tool >/dev/null || { echo "installing $tool"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light >/dev/null 2>&1 || true; }
  # Not installable here: skipped (exit 77, perf/run.sh), not failed.
  command -v $tool >/dev/null || { echo "perf/rest: SKIPPED: $tool is not installed and cannot be installed here (Debian wrk, nginx-light)" >&2; exit 77; }
done
[ -x "$build/oddsrelay" ] || die "no $build/oddsrelay"
dir=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
nport=$(free_port)
while [ "$nport" = "$port" ]; do nport=$(free_port); done
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

printf '{"keys":[{"key":"perf-key","sandbox":true,"permissions":["live","prematch","odds","scores"]}]}' > "$dir/keys.json"
"$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed sim:events=2000,rate=1000 \
  --http-threads "$threads" --progress 0 2> "$dir/relay.log" &
relay_pid=$!
up=
for _ in $(seq 100); do
  kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay exited: $(tail -3 "$dir/relay.log")"
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/status")" = 200 ] && { up=1; break; }
  sleep 0.1
done
[ -n "$up" ] || die "oddsrelay does not answer /v1/status with 200: $(tail -3 "$dir/relay.log")"
# The simulator's opening state arrives just after start: wait for 100 live events.
n=0
for _ in $(seq 100); do
  ids=$(curl -s -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/live" |
        python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(",".join([k for s in d.values() for k in s][:100]))' ||
        true)
  n=$(echo "$ids" | tr ',' '\n' | grep -c . || true)
  [ "$n" -ge 100 ] && break
  sleep 0.1
done
[ "$n" -ge 100 ] || die "only $n live events"
# The moment the at= row asks for: every id above was live by then.
at_ms=$(date +%s%3N)
first=${ids%%,*}
declare -A url=([odds]="/v1/odds?ids=$ids" [event]="/v1/event?id=$first" [markets]="/v1/markets?lang=de" [live]="/v1/live")

# check_body NAME FILE: the answer holds what was asked for; prints its ids.
check_body() {
  python3 - "$1" "$2" "$ids" "$first" <<'PY'
import json, sys
name, path, ids, first = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
d = json.load(open(path))
assert d.get("success") is True, f"{name}: no success: {str(d)[:200]}"
if name == "odds":
    assert len(d["data"]) == len(ids), f"odds for {len(d['data'])} of {len(ids)} events"
    print(" ".join(sorted(d["data"])))
elif name == "event":
    assert d["data"], "empty event"
    print(json.dumps(sorted(d["data"]) if isinstance(d["data"], dict) else len(d["data"])))
elif name == "live":
    n = sum(len(v) for v in d["data"].values())
    assert n >= 100, f"only {n} live events"
    print("live")  # the list itself moves with the simulator; its shape does not
else:
    assert len(d["data"]) > 0, "no markets"
    print(len(d["data"]))
PY
}
mkdir -p "$dir/www"
for f in odds event markets live; do
  code=$(curl -s -o "$dir/www/$f.json" -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port${url[$f]}")
  [ "$code" = 200 ] || die "oddsrelay answered ${url[$f]%%\?*} with $code: $(head -c 200 "$dir/www/$f.json")"
  check_body "$f" "$dir/www/$f.json" > "$dir/$f.ids" || die "oddsrelay's ${url[$f]%%\?*} answer is wrong"
done
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  gzip on;  # only for requests that ask for it (the gzip runs)
  gzip_comp_level 1;
  gzip_min_length 1024;
  gzip_types application/json;
  server {
    listen 127.0.0.1:$nport;
    root $dir/www;
    default_type application/json;
  }
}
CONF
chmod -R a+rX "$dir"  # nginx's workers run unprivileged: they must read the files (else 403)
nginx -c "$dir/nginx.conf"
sleep 0.3
# Both servers must answer with the same bytes, or the comparison is void.
for f in odds event markets live; do
  code=$(curl -s -o "$dir/nginx.$f" -w '%{http_code}' "http://127.0.0.1:$nport/$f.json")
  [ "$code" = 200 ] && cmp -s "$dir/nginx.$f" "$dir/www/$f.json" || die "nginx does not serve $f.json: $code"
  code=$(curl -s -o "$dir/now.$f" -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port${url[$f]}")
  [ "$code" = 200 ] || die "oddsrelay answered ${url[$f]%%\?*} with $code just before timing"
  [ "$(check_body "$f" "$dir/now.$f")" = "$(cat "$dir/$f.ids")" ] || die "oddsrelay's ${url[$f]%%\?*} answer changed shape"
  a=$(wc -c < "$dir/now.$f") b=$(wc -c < "$dir/www/$f.json")
  [ $((4 * a)) -ge $((3 * b)) ] && [ $((4 * a)) -le $((5 * b)) ] || die "oddsrelay's $f answer is $a bytes, nginx's $b"
done
cmp -s "$dir/now.markets" "$dir/www/markets.json" || die "oddsrelay's /v1/markets differs from the copy nginx serves"
# The gzip answers: each must decode to the JSON of the plain one (nginx's
# byte for byte); their sizes are what the gzip runs expect per answer.
curl -s -o "$dir/odds.gz.relay" -H "Accept-Encoding: gzip" -H "X-API-Key: $key" "http://127.0.0.1:$port${url[odds]}"
curl -s -o "$dir/odds.gz.nginx" -H "Accept-Encoding: gzip" "http://127.0.0.1:$nport/odds.json"
gzip -dc < "$dir/odds.gz.nginx" | cmp -s - "$dir/www/odds.json" || die "nginx's gzip of odds.json does not decode to it"
[ "$(gzip -dc < "$dir/odds.gz.relay" > "$dir/odds.gz.plain" && check_body odds "$dir/odds.gz.plain")" = "$(cat "$dir/odds.ids")" ] ||
  die "oddsrelay's gzip /v1/odds answer does not decode to the ids asked"

echo "machine: $(nproc) cores; oddsrelay --http-threads $threads; nginx: 1 worker; wrk -t1 -c$conns -d${secs}s --timeout 10s, keep-alive"
echo "ids: $n live events; odds body $(wc -c < "$dir/www/odds.json") bytes (gzip: oddsrelay $(wc -c < "$dir/odds.gz.relay"), nginx $(wc -c < "$dir/odds.gz.nginx")), event body $(wc -c < "$dir/www/event.json") bytes, live body $(wc -c < "$dir/www/live.json") bytes"
# bench NAME FILE URL [header...]: wrk against URL, whose answers should be
# about FILE's size; fails unless every answer was 2xx and no socket erred.
# $bench_conns, if set, replaces the connection count.
bench() {
  local out rc=0 name=$1 file=$2 u=$3
  shift 3
  local hdrs=()
  for x in "$@"; do hdrs+=(-H "$x"); done
  set -- "$name" "$file" "$u"
  out=$(wrk -t1 -c"${bench_conns:-$conns}" -d"${secs}s" --timeout 10s --latency "${hdrs[@]}" "$3" 2>&1) || rc=$?
  echo "$out" > "$dir/$1.wrk"
  [ "$rc" = 0 ] || die "wrk exited $rc on $1: $out"
  python3 - "$1" "$dir/$1.wrk" "$(wc -c < "$2")" "$dir/$1.rps" <<'PY' || exit 1
import re, sys
name, path, size, rps_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = open(path).read()
def fail(why):
    sys.exit(f"perf/rest: FAILED: {name}: {why}\n{out}")
m = re.search(r"(\d+) requests in [\d.]+\w+, ([\d.]+)([KMGT]?B) read", out)
if not m:
    fail("no request count in wrk's output")
n, read = int(m.group(1)), float(m.group(2)) * {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}[m.group(3)]
if n == 0:
    fail("no request answered")
if re.search(r"Non-2xx or 3xx responses: (\d+)", out):
    fail("non-2xx answers")
s = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
if s and any(int(x) for x in s.groups()):
    fail("socket errors")
per = read / n  # body plus headers; wrk rounds the total to 2 decimals
if not (0.75 * size <= per <= 1.25 * size + 1024):
    fail(f"{per:.0f} bytes per answer, the body is {size}")
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
ms = lambda q: (lambda v, u: float(v) * {"us": 1e-3, "ms": 1, "s": 1e3}[u])(*re.search(rf"^\s+{q}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups())
p50, p99 = ms(50), ms(99)
print(f"{name:<22} {rps:12.2f} req/s   p50 {p50:.2f}ms   p99 {p99:.2f}ms")
open(rps_out, "w").write(str(rps))
open(rps_out[:-4] + ".p99", "w").write(str(p99))
PY
}
bench oddsrelay_odds "$dir/www/odds.json" "http://127.0.0.1:$port${url[odds]}" "X-API-Key: $key"
bench nginx_odds "$dir/www/odds.json" "http://127.0.0.1:$nport/odds.json"
bench oddsrelay_odds_gzip "$dir/odds.gz.relay" "http://127.0.0.1:$port${url[odds]}" "X-API-Key: $key" "Accept-Encoding: gzip"
bench nginx_odds_gzip "$dir/odds.gz.nginx" "http://127.0.0.1:$nport/odds.json" "Accept-Encoding: gzip"
bench oddsrelay_event "$dir/www/event.json" "http://127.0.0.1:$port${url[event]}" "X-API-Key: $key"
bench nginx_event "$dir/www/event.json" "http://127.0.0.1:$nport/event.json"
bench oddsrelay_markets "$dir/www/markets.json" "http://127.0.0.1:$port${url[markets]}" "X-API-Key: $key"
bench nginx_markets "$dir/www/markets.json" "http://127.0.0.1:$nport/markets.json"
bench oddsrelay_live "$dir/www/live.json" "http://127.0.0.1:$port${url[live]}" "X-API-Key: $key"
bench nginx_live "$dir/www/live.json" "http://127.0.0.1:$nport/live.json"
# The book at a moment, rebuilt from the odds history: the same 100 ids as
# of when they were read. A moment's answer never changes: two fetches are
# byte-equal, and hold the ids asked, none of them not found.
at_url="/v1/odds?ids=$ids&at=$at_ms"
for k in 1 2; do
  code=$(curl -s -o "$dir/at.$k" -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port$at_url")
  [ "$code" = 200 ] || die "oddsrelay answered /v1/odds?at= with $code: $(head -c 200 "$dir/at.$k")"
done
cmp -s "$dir/at.1" "$dir/at.2" || die "two answers of /v1/odds?at=$at_ms differ"
[ "$(check_body odds "$dir/at.1")" = "$(cat "$dir/odds.ids")" ] || die "/v1/odds?at= does not answer the ids asked"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["seq"] > 0 and not d.get("not_found"), str(d)[:200]' "$dir/at.1" ||
  die "/v1/odds?at= answered seq 0 or not_found"
back_ms=$(( $(date +%s%3N) - at_ms ))
bench_conns=1 bench oddsrelay_odds_at "$dir/at.1" "http://127.0.0.1:$port$at_url" "X-API-Key: $key"
bench_conns=1 bench oddsrelay_odds_1conn "$dir/www/odds.json" "http://127.0.0.1:$port${url[odds]}" "X-API-Key: $key"
kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay died during the runs: $(tail -3 "$dir/relay.log")"
python3 - "$dir" "$back_ms" <<'PY'
import sys
d = sys.argv[1]
r = lambda n: float(open(f"{d}/{n}.rps").read())
print(f"ratio /v1/odds  (oddsrelay / nginx): {r('oddsrelay_odds') / r('nginx_odds'):.2f}  (goal >= 0.8)")
print(f"ratio /v1/odds gzip (oddsrelay / nginx gzip): {r('oddsrelay_odds_gzip') / r('nginx_odds_gzip'):.2f}")
print(f"ratio /v1/live  (oddsrelay / nginx): {r('oddsrelay_live') / r('nginx_live'):.2f}")
print(f"ratio /v1/event (oddsrelay / nginx): {r('oddsrelay_event') / r('nginx_event'):.2f}")
print(f"ratio /v1/markets?lang=de (oddsrelay / nginx): {r('oddsrelay_markets') / r('nginx_markets'):.2f}")
p = lambda n: float(open(f"{d}/{n}.p99").read())
at, plain = p('oddsrelay_odds_at'), p('oddsrelay_odds_1conn')
print(f"/v1/odds?ids=<100>&at=<{int(sys.argv[2]) / 1000:.0f} s back>, one connection; no nginx equivalent, the baseline is /v1/odds?ids=<the same 100> in this run:")
print(f"  ratio p99 (at / live): {at / plain:.2f}   ratio req/s (at / live): {r('oddsrelay_odds_at') / r('oddsrelay_odds_1conn'):.2f}")
print(f"goal /v1/odds?ids=<100>&at= p99 <= 20 ms: {'met' if at <= 20 else 'NOT met'} ({at:.2f} ms)")
PY
# What the history held by then, every overhead included (docs/architecture.md
# "Odds history" states the index's part an event).
python3 - "$(curl -s -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/status")" <<'PY'
import json, sys
h = json.loads(sys.argv[1])["history"]
e, p, b = h["events"], h["points"], h["bytes"]
print(f"history held: {e} events, {p} points, {b} bytes: {b / max(e, 1):.0f} bytes an event, {b / max(p, 1):.1f} a point")
PY
# The whole-event history needs an oddsrelay of its own (perf/rest/history.sh):
# this one and nginx stop first, so that the two do not share the cores.
kill "$relay_pid" 2>/dev/null || true
relay_pid=
kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
rm -f "$dir/nginx.pid"
echo
bash perf/rest/history.sh "$build" "$secs" "$threads"
