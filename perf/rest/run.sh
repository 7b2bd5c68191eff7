#!/usr/bin/env bash
# REST read throughput and latency, against nginx serving the same response
# bytes as a static file, with the same wrk settings, in the same run.
# oddsrelay runs on its simulator at 1,000 odds records/s meanwhile (its
# snapshots change under the readers). Loopback only; bounded in time.
#   perf/rest/run.sh [build-dir] [seconds per run, default 10] [connections, default 32]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-10}
conns=${3:-32}
for tool in wrk nginx; do
  command -v $tool >/dev/null || { echo "installing $tool"; apt-get install -y -qq wrk nginx-light >/dev/null; }
done
dir=$(mktemp -d)
port=$((20000 + RANDOM % 10000))
nport=$((port + 1))
cleanup() { kill "$relay_pid" 2>/dev/null || true; [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

printf '{"keys":[{"key":"perf-key","sandbox":true,"permissions":["live","prematch","odds","scores"]}]}' > "$dir/keys.json"
"$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed sim:events=2000,rate=1000 \
  --progress 0 2> "$dir/relay.log" &
relay_pid=$!
for _ in $(seq 50); do curl -sf -o /dev/null -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/status" && break; sleep 0.1; done
# The simulator's opening state arrives just after start: wait for 100 live events.
for _ in $(seq 100); do
  ids=$(curl -s -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/live" |
        python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(",".join([k for s in d.values() for k in s][:100]))')
  [ "$(echo "$ids" | tr ',' '\n' | wc -l)" -ge 100 ] && break
  sleep 0.1
done
first=${ids%%,*}
mkdir -p "$dir/www"
curl -s -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/odds?ids=$ids" > "$dir/www/odds.json"
curl -s -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/event?id=$first" > "$dir/www/event.json"
curl -s -H 'X-API-Key: perf-key' "http://127.0.0.1:$port/v1/markets?lang=de" > "$dir/www/markets.json"
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
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
for f in odds event markets; do
  got=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$nport/$f.json")
  [ "$got" = "200 $(wc -c < "$dir/www/$f.json")" ] || { echo "nginx does not serve $f.json: $got"; exit 1; }
done

echo "machine: $(nproc) cores; oddsrelay REST loop: 1 thread; nginx: 1 worker; wrk -t1 -c$conns -d${secs}s, keep-alive"
echo "ids: $(echo "$ids" | tr ',' '\n' | wc -l) live events; odds body $(wc -c < "$dir/www/odds.json") bytes, event body $(wc -c < "$dir/www/event.json") bytes"
bench() {  # name url [header]
  local out
  out=$(wrk -t1 -c"$conns" -d"${secs}s" --latency ${3:+-H "$3"} "$2")
  local rps p99
  rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  p99=$(echo "$out" | awk '$1=="99%"{print $2}')
  printf '%-22s %12s req/s   p99 %s\n' "$1" "$rps" "$p99"
  echo "$rps" > "$dir/$1.rps"
}
bench oddsrelay_odds "http://127.0.0.1:$port/v1/odds?ids=$ids" "X-API-Key: perf-key"
bench nginx_odds "http://127.0.0.1:$nport/odds.json"
bench oddsrelay_event "http://127.0.0.1:$port/v1/event?id=$first" "X-API-Key: perf-key"
bench nginx_event "http://127.0.0.1:$nport/event.json"
bench oddsrelay_markets "http://127.0.0.1:$port/v1/markets?lang=de" "X-API-Key: perf-key"
bench nginx_markets "http://127.0.0.1:$nport/markets.json"
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
r = lambda n: float(open(f"{d}/{n}.rps").read())
print(f"ratio /v1/odds  (oddsrelay / nginx): {r('oddsrelay_odds') / r('nginx_odds'):.2f}  (goal >= 0.8)")
print(f"ratio /v1/event (oddsrelay / nginx): {r('oddsrelay_event') / r('nginx_event'):.2f}")
print(f"ratio /v1/markets?lang=de (oddsrelay / nginx): {r('oddsrelay_markets') / r('nginx_markets'):.2f}")
PY
