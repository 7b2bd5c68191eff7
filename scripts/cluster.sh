#!/usr/bin/env bash
# One command to see the cluster (docs/architecture.md "Scale-out"): starts
# Debian's nats-server with JetStream, one ingest node on the simulator that
# publishes the log, and two edges that follow it, all on loopback; prints
# their URLs and stops everything on Ctrl-C.
#   bash scripts/cluster.sh [--build-dir DIR] [--base-port P] [--no-build]
# Ports: nats P (default 4222), ingest P+1 (8080 by default: see below),
# edges the next two. Logs go to a temporary directory, printed at start.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build nats_port=4222 http_port=8080 do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --base-port) nats_port="$2"; http_port=$(( $2 + 1 )); shift 2 ;;
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

url="nats://127.0.0.1:$nats_port/ODDS"
"$nats" -js -a 127.0.0.1 -p "$nats_port" -sd "$work/js" >"$work/nats.log" 2>&1 &
pids+=($!)
wait_line "$work/nats.log" "Server is ready"

"$build/oddsrelay" --listen "127.0.0.1:$http_port" --feed sim --publish "$url" \
  --publish-snapshot-interval 10 >"$work/ingest.log" 2>&1 &
pids+=($!)
wait_line "$work/ingest.log" "serving http://"
for i in 1 2; do
  port=$(( http_port + i ))
  "$build/oddsrelay" --listen "127.0.0.1:$port" --feed "$url" >"$work/edge$i.log" 2>&1 &
  pids+=($!)
  wait_line "$work/edge$i.log" "serving http://"
done

echo "bus:    $url  (nats-server -js, store in $work/js)"
for f in ingest edge1 edge2; do
  printf '%-7s %s   key %s\n' "$f:" "$(grep -o 'http://[^ ]*/v1/status' "$work/$f.log" | head -1)" \
    "$(grep -o 'demo-[0-9a-f]*' "$work/$f.log" | head -1)"
done
echo "logs:   $work/{nats,ingest,edge1,edge2}.log"
echo "Each edge answers like the ingest at the same seq; compare: curl -H 'X-API-Key: KEY' URL"
echo "Ctrl-C stops everything."
wait "${pids[0]}"
