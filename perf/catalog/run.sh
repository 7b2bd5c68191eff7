#!/usr/bin/env bash
# The catalog routes at the catalog's full size: /v1/markets (whole, per
# language, per sport with groups) and /v1/market-groups, served from their
# encodings made once per query, against /v1/sports (a small answer through
# the same routing, keys and rate limit) in the same run. Prints each
# answer's bytes (plain and gzip), req/s, p99, and req/s as a ratio to
# /v1/sports; also how long the first (cold) answer took against the
# second. oddsrelay runs with no feed, so only the catalog is measured.
# Loopback only; bounded in time.
#   perf/catalog/run.sh [build-dir] [seconds per run, default 10] [connections, default 8]
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-10}
conns=${3:-8}
key=perf-key
die() { echo "perf/catalog: FAILED: $*" >&2; exit 1; }
command -v wrk >/dev/null || { echo "installing wrk"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 || true; }
# Not installable here: skipped (exit 77, perf/run.sh), not failed.
command -v wrk >/dev/null || { echo "perf/catalog: SKIPPED: wrk is not installed and cannot be installed here (Debian wrk)" >&2; exit 77; }
[ -x "$build/oddsrelay" ] || die "no $build/oddsrelay"
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

printf '{"keys":[{"key":"perf-key","sandbox":true,"permissions":["live","prematch","odds","scores"]}]}' > "$dir/keys.json"
"$build/oddsrelay" --listen 127.0.0.1:$port --keys "$dir/keys.json" --feed none --progress 0 2> "$dir/relay.log" &
relay_pid=$!
up=
for _ in $(seq 100); do
  kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay exited: $(tail -3 "$dir/relay.log")"
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port/v1/status")" = 200 ] && { up=1; break; }
  sleep 0.1
done
[ -n "$up" ] || die "oddsrelay does not answer: $(tail -3 "$dir/relay.log")"
grep -o 'catalog [^ ]*: [0-9]* markets, [0-9]* sports' "$dir/relay.log" || die "no catalog line"

names=(sports markets markets_de markets_soccer_nested groups)
declare -A url=([sports]="/v1/sports" [markets]="/v1/markets" [markets_de]="/v1/markets?lang=de"
                [markets_soccer_nested]="/v1/markets?sport=1&nested=1" [groups]="/v1/market-groups")
echo "machine: $(nproc) cores; oddsrelay REST loop: 1 thread; wrk -t1 -c$conns -d${secs}s, keep-alive"
printf '%-24s %10s %10s %12s %12s\n' answer bytes gzip cold_ms warm_ms
for n in "${names[@]}"; do
  u="http://127.0.0.1:$port${url[$n]}"
  # First answer: the encoding is made; second: served from it.
  cold=$(curl -s -o "$dir/$n.json" -w '%{http_code} %{time_total}' -H "X-API-Key: $key" "$u")
  warm=$(curl -s -o /dev/null -w '%{time_total}' -H "X-API-Key: $key" "$u")
  [ "${cold%% *}" = 200 ] || die "$n answered ${cold%% *}"
  gz=$(curl -s -o "$dir/$n.gz" -w '%{size_download}' -H "X-API-Key: $key" -H 'Accept-Encoding: gzip' "$u")
  python3 - "$n" "$dir/$n.json" <<'PY' || exit 1
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
assert d.get("success") is True, f"{name}: {str(d)[:200]}"
if name == "markets":
    assert len(d["data"]["markets"]) == 4873 and len(d["data"]["outcomes"]) == 17227, "not the full catalog"
if name == "groups":
    assert len(d["data"]) == 25, f"{len(d['data'])} sports"
PY
  python3 -c "import sys; c, w = sys.argv[1].split()[1], sys.argv[2]; print(f'%-24s %10d %10s %12.2f %12.2f' % (sys.argv[3], int(sys.argv[4]), sys.argv[5], float(c) * 1e3, float(w) * 1e3))" \
    "$cold" "$warm" "$n" "$(wc -c < "$dir/$n.json")" "$gz"
  cp "$dir/$n.json" "$dir/$n.size"
done

# bench NAME [header]: wrk on the answer; fails on any non-2xx or socket
# error; keeps the best req/s of the runs so far.
bench() {
  local n=$1 out rc=0
  out=$(wrk -t1 -c"$conns" -d"${secs}s" --latency -H "X-API-Key: $key" ${2:+-H "$2"} \
        "http://127.0.0.1:$port${url[$n]}" 2>&1) || rc=$?
  [ "$rc" = 0 ] || die "wrk exited $rc on $n: $out"
  python3 - "$n${2:+ (gzip)}" "$dir/$n${2:+_gz}.rps" <<PY || exit 1
import re, sys
out = """$out"""
name, rps_out = sys.argv[1], sys.argv[2]
if re.search(r"Non-2xx or 3xx responses", out) or re.search(r"Socket errors", out):
    sys.exit(f"perf/catalog: FAILED: {name}: errors\n{out}")
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
tr = re.search(r"Transfer/sec:\s+(\S+)", out).group(1)
p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)
print(f"{name:<30} {rps:12.2f} req/s   {tr:>10}/s   p99 {p99}")
try:
    rps = max(rps, float(open(rps_out).read()))
except FileNotFoundError:
    pass
open(rps_out, "w").write(str(rps))
PY
}
# Two rounds, interleaved, so that a busy moment of the machine does not
# fall on one answer only; each answer's better round counts.
for round in 1 2; do
  echo "round $round"
  for n in "${names[@]}"; do bench "$n"; done
  bench markets "Accept-Encoding: gzip"
  bench markets_de "Accept-Encoding: gzip"
done
kill -0 "$relay_pid" 2>/dev/null || die "oddsrelay died during the runs: $(tail -3 "$dir/relay.log")"
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
r = lambda n: float(open(f"{d}/{n}.rps").read())
for n in ("markets", "markets_gz", "markets_de", "markets_de_gz", "markets_soccer_nested", "groups"):
    print(f"ratio {n} / sports (req/s): {r(n) / r('sports'):.3f}")
PY
