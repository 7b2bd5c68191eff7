# Sourced by perf/history/run.sh and disk.sh: their arguments
# ([build-dir] [records] [pairs]), a scratch dir removed on exit (with the
# server `pid` names, if any), an API key in $dir/keys.json, and the
# capture both measure: $records simulator records (seed=1, 2,000 events,
# 1,000/s) in $dir/feed.jsonl.
set -euo pipefail
shopt -s inherit_errexit
build=${1:-build}
records=${2:-1000000}
pairs=${3:-3}
dir=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
die() { echo "perf/history: FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

key=perf-history-key
printf '{"keys":[{"key":"%s","name":"perf","permissions":["live","prematch","odds","scores"],"rate_limit":100000000}]}\n' \
  "$key" > "$dir/keys.json"

"$build/oddsfeed" gen -o "$dir/feed.jsonl" --records "$records" --sim seed=1,events=2000,rate=1000 2>"$dir/gen.log" ||
  die "oddsfeed gen: $(tail -3 "$dir/gen.log")"

# pairs_report OFF_LABEL ON_LABEL GOAL: prints the load, then each run of
# the arrays `offs` and `ons` (seconds) and off/on per pair with the median.
pairs_report() {
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$1" "$2" "$3" "${offs[*]}" "${ons[*]}" <<'PY'
import statistics, sys
off_label, on_label, goal = sys.argv[1:4]
off = [float(x) for x in sys.argv[4].split()]
on = [float(x) for x in sys.argv[5].split()]
ratios = [a / b for a, b in zip(off, on)]
print(f"{off_label}: " + " / ".join(f"{x:.2f}" for x in off) + " s")
print(f"{on_label}: " + " / ".join(f"{x:.2f}" for x in on) + " s")
print(f"off/on per pair: {' '.join(f'{r:.2f}' for r in ratios)}  (median {statistics.median(ratios):.2f}x{goal})")
PY
}
