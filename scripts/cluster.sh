#!/usr/bin/env bash
# One command to see the cluster in its production shape (docs/deploy.md,
# docs/bus.md "A cluster of servers"): three nats-servers forming one
# JetStream cluster on loopback (a generated config each, routes between
# them), one ingest node on the simulator publishing the log with three
# replicas, and two edges following it, each told every server but a
# different one first; prints their URLs and stops everything on Ctrl-C.
#   bash scripts/cluster.sh [--build-dir DIR] [--base-port P] [--no-build]
# Ports: nats clients P, P+1, P+2 (default 4222..4224), their routes
# P+10.., monitoring P+20..; ingest 8080 (P-4222+8080), edges the next two.
# Logs go to a temporary directory, printed at start. Kill a server
# (kill -9, its pid is printed) and the edges go on through the others.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build nats_port=4222 http_port=8080 do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --base-port) nats_port="$2"; http_port=$(( $2 - 4222 + 8080 )); shift 2 ;;
    --no-build) do_build=0; shift ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ "$do_build" = 1 ]; then
  bash scripts/install-deps.sh
  cmake --preset release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target oddsrelay oddsfeed
fi
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$nats" ] || { echo "cluster.sh: nats-server is not installed (scripts/install-deps.sh)" >&2; exit 1; }

work=$(mktemp -d -t oddsrelay-cluster-XXXXXX)
pids=()
stop() {
  trap - INT TERM EXIT
  echo
  echo "cluster.sh: stopping"
  # Edges and ingest first (each prints its final digest), then the bus.
  for (( i=${#pids[@]}-1; i>=0; i-- )); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  grep -h "stopped; state" "$work"/*.log 2>/dev/null || true
  rm -rf "$work"
}
trap stop INT TERM EXIT

wait_line() {  # file pattern
  for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "cluster.sh: no '$2' in $1:" >&2; tail -5 "$1" >&2; exit 1
}

# One config per server. no_advertise: clients keep to the addresses they
# were given (a client behind a proxy or a load balancer would otherwise be
# told the members' own addresses and go around it).
client() { echo "127.0.0.1:$(( nats_port + $1 - 1 ))"; }
for n in 1 2 3; do
  routes=""
  for m in 1 2 3; do
    [ "$m" = "$n" ] || routes+="    nats-route://127.0.0.1:$(( nats_port + 9 + m ))"$'\n'
  done
  cat >"$work/n$n.conf" <<CONF
server_name: n$n
listen: $(client "$n")
http: 127.0.0.1:$(( nats_port + 19 + n ))
jetstream { store_dir: "$work/js$n" }
cluster {
  name: oddsrelay
  listen: 127.0.0.1:$(( nats_port + 9 + n ))
  no_advertise: true
  routes: [
$routes  ]
}
CONF
  "$nats" -c "$work/n$n.conf" >"$work/nats$n.log" 2>&1 &
  pids+=($!)
done
for n in 1 2 3; do wait_line "$work/nats$n.log" "Server is ready"; done

list() {  # the servers, $1 first
  local out="" n
  for n in "$1" $(( $1 % 3 + 1 )) $(( ($1 + 1) % 3 + 1 )); do out+="${out:+,}$(client "$n")"; done
  echo "nats://$out/ODDS"
}
# The ingest publishes with three replicas: any one server may go.
"$build/oddsrelay" --listen "127.0.0.1:$http_port" --feed sim --publish "$(list 1)" --publish-replicas 3 \
  --publish-snapshot-interval 10 >"$work/ingest.log" 2>&1 &
pids+=($!)
wait_line "$work/ingest.log" "serving http://"
for i in 1 2; do
  port=$(( http_port + i ))
  "$build/oddsrelay" --listen "127.0.0.1:$port" --feed "$(list $(( i + 1 )))" >"$work/edge$i.log" 2>&1 &
  pids+=($!)
  wait_line "$work/edge$i.log" "serving http://"
done

for n in 1 2 3; do echo "nats $n: nats://$(client "$n")  pid ${pids[$(( n - 1 ))]}  (config $work/n$n.conf)"; done
echo "ingest publishes to $(list 1) (R3); edge1 follows $(list 2), edge2 $(list 3)"
for f in ingest edge1 edge2; do
  printf '%-7s %s   key %s\n' "$f:" "$(grep -o 'http://[^ ]*/v1/status' "$work/$f.log" | head -1)" \
    "$(grep -o 'demo-[0-9a-f]*' "$work/$f.log" | head -1)"
done
echo "logs:   $work/{nats1,nats2,nats3,ingest,edge1,edge2}.log"
echo "Each edge answers like the ingest at the same seq; compare: curl -H 'X-API-Key: KEY' URL"
echo "Ctrl-C stops everything."
wait "${pids[3]}"
