#!/usr/bin/env bash
# --relay-io writev against --relay-io uring in one build (issue 37), in
# interleaved pairs of perf/relay/pair.sh runs (writev first, then uring,
# PAIRS times), each line with the load average it was taken at; then, per
# mode, the median of the relay loop's CPU per delivery, of the process's,
# and of p99. The machine's other work moves both modes of a pair alike;
# compare within pairs.
#   perf/relay/io_pairs.sh BUILD_DIR SUBSCRIBERS SECONDS PAIRS [filters]
# Loopback only; bounded by PAIRS x 2 x (SECONDS + 10) s.
set -euo pipefail
B=$1; N=$2; S=$3; P=$4; F=${5:-}
here="$(dirname "$0")"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq "$P"); do
  for io in writev uring; do
    line=$(SERVER_ARGS="--relay-io $io" bash "$here/pair.sh" "$B" "$N" "$S" $F 2>/dev/null)
    echo "pair $i $io load $(cut -d' ' -f1 /proc/loadavg): $line" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
for l in open(sys.argv[1]):
    m = re.search(r" (writev|uring) load ([\d.]+):.*writes/delivery ([\d.]+) us/delivery: process ([\d.]+) relay loop ([\d.]+) ksoftirqd/0 ([\d.]+); p50 ([\d.]+) p99 ([\d.]+)", l)
    if m:
        rows.setdefault(m.group(1), []).append([float(x) for x in m.groups()[1:]])
for io, r in rows.items():
    med = [statistics.median(c) for c in zip(*r)]
    print(f"{io}: median of {len(r)}: load {med[0]:.2f} writes/delivery {med[1]:.3f} us/delivery process {med[2]:.2f} "
          f"relay loop {med[3]:.2f} ksoftirqd/0 {med[4]:.2f}; p50 {med[5]} p99 {med[6]} ms")
if len(rows) == 2:
    for name, i in (("process", 2), ("relay loop", 3), ("process + ksoftirqd/0", None)):
        v = lambda r: r[2] + r[4] if i is None else r[i]
        ratios = [v(u) / v(w) for w, u in zip(rows["writev"], rows["uring"]) if v(w) > 0]
        print(f"{name} us/delivery, uring/writev per pair: " + " ".join(f"{x:.3f}" for x in ratios) +
              f"; median {statistics.median(ratios):.3f}")
PY
