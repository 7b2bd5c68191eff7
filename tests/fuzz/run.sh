#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for a
# bounded time over its committed seed corpus; new inputs go to a temp dir,
# a crashing input is kept in the output dir and fails the run. The builds,
# then the runs, go side by side: the whole stage takes one target's time
# (each target gets its share of the cores for that time).
#   tests/fuzz/run.sh [seconds per target, default 60] [output dir, default build-fuzz]
# ctest runs it for 1 s per target (fuzz_targets_link) so a target that no
# longer links fails the ordinary suite, not only the last stage of CI; that
# stage then runs the same binaries (scripts/test.sh passes its directory).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=${2:-build-fuzz}
mkdir -p "$out"
# -Wno-ambiguous-reversed-operator: RapidJSON 1.1's iterators under C++20.
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Wno-ambiguous-reversed-operator -I.)
# A target whose sources, headers and flags are those it was last built
# from is not built again: CI's last stage runs the binaries the suite's
# fuzz_targets_link built (a minute of clang on two cores).
sources_hash=$( { echo "${flags[*]}"; find protocol rest relay tests/fuzz -name '*.h' -o -name '*.cc' | sort |
  xargs cat; } | sha1sum | cut -c1-40)
build() {  # $1 = target, then clang++ arguments
  local t=$1; shift
  local stamp="$sources_hash $*"
  if [ -x "$out/${t}_fuzz" ] && [ "$(cat "$out/$t.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  rm -f "$out/$t.stamp"
  clang++ "${flags[@]}" "$@" -o "$out/${t}_fuzz" > "$out/$t.build.log" 2>&1 ||
    { cat "$out/$t.build.log"; echo "fuzz $t: build FAILED"; return 1; }
  echo "$stamp" > "$out/$t.stamp"
}
build http_request tests/fuzz/http_request_fuzz.cc protocol/http_request.cc &
# RapidJSON 1.1.0 (Debian 12) does `nullptr + n` on the first push onto an
# empty parse stack (internal/stack.h Reserve; fixed upstream after 1.1.0),
# which clang's pointer-overflow check flags on every parse. Everything else
# of UBSan stays on for this target.
build feed_line -fno-sanitize=pointer-overflow tests/fuzz/feed_line_fuzz.cc protocol/feed_reader.cc protocol/json_in.cc \
  protocol/feed_market_sax.cc protocol/feed_writer.cc protocol/event_json.cc protocol/event_id.cc -lxxhash &
build ws_frame tests/fuzz/ws_frame_fuzz.cc protocol/ws_frame.cc protocol/ws_deflate.cc protocol/http_request.cc \
  -lcrypto -lz &
# The JSON entry points (protocol/json_in.h): the bounded parse itself, the
# REST body parsers, the /ws client message, and what an edge reads off the bus.
build json_in -fno-sanitize=pointer-overflow tests/fuzz/json_in_fuzz.cc protocol/json_in.cc &
build rest_body -fno-sanitize=pointer-overflow tests/fuzz/rest_body_fuzz.cc rest/odds_body.cc rest/rdstn_request.cc \
  protocol/json_in.cc protocol/api/errors.cc &
build ws_message -fno-sanitize=pointer-overflow tests/fuzz/ws_message_fuzz.cc relay/ws_message.cc protocol/json_in.cc &
build bus_message -fno-sanitize=pointer-overflow tests/fuzz/bus_message_fuzz.cc protocol/bus_contract.cc \
  protocol/json_in.cc protocol/feed_reader.cc protocol/feed_market_sax.cc protocol/feed_writer.cc protocol/event_json.cc \
  protocol/event_id.cc -lxxhash &
failed=0
for job in $(jobs -p); do wait "$job" || failed=1; done
[ "$failed" = 0 ] || exit 1
targets=(http_request feed_line ws_frame json_in rest_body ws_message bus_message)
echo "== fuzz ${targets[*]}, ${secs}s each, side by side"
pids=()
works=()
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  works+=("$work")
  "$out/${t}_fuzz" -max_total_time="$secs" -max_len=20000 -print_final_stats=1 -artifact_prefix="$out/" \
    "$work" "tests/fuzz/corpus/$t" > "$out/$t.log" 2>&1 &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  rc=0
  wait "${pids[$i]}" || rc=$?
  rm -rf "${works[$i]}"
  echo "== fuzz $t"
  grep -E "^stat::(number_of_executed_units|new_units_added)|ERROR|SUMMARY" "$out/$t.log" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 30 "$out/$t.log"
    echo "fuzz $t FAILED (exit $rc); input kept in $out/"
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
echo "== fuzz: no crash"
