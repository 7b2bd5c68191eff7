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
# The targets and their sources. RapidJSON 1.1.0 (Debian 12) does
# `nullptr + n` on the first push onto an empty parse stack (internal/
# stack.h Reserve; fixed upstream after 1.1.0), which clang's
# pointer-overflow check flags on every parse: the targets that parse JSON
# (set "json") compile without that one check; the others ("all") keep all
# of UBSan. The JSON entry points (protocol/json_in.h) are fuzzed as the
# bounded parse itself, the REST body parsers, the /ws client message, and
# what an edge reads off the bus.
declare -A set_of srcs_of libs_of
add() {  # $1 target, $2 flag set, $3 libraries, then sources
  set_of[$1]=$2 libs_of[$1]=$3
  srcs_of[$1]="${*:4}"
}
add http_request all "" tests/fuzz/http_request_fuzz.cc protocol/http_request.cc
add feed_line json "-lxxhash" tests/fuzz/feed_line_fuzz.cc protocol/feed_reader.cc protocol/json_in.cc \
  protocol/feed_market_sax.cc protocol/feed_writer.cc protocol/event_json.cc protocol/event_id.cc
add ws_frame all "-lcrypto -lz" tests/fuzz/ws_frame_fuzz.cc protocol/ws_frame.cc protocol/ws_deflate.cc \
  protocol/http_request.cc
add json_in json "" tests/fuzz/json_in_fuzz.cc protocol/json_in.cc
add rest_body json "" tests/fuzz/rest_body_fuzz.cc rest/odds_body.cc rest/rdstn_request.cc protocol/json_in.cc \
  protocol/api/errors.cc
add ws_message json "" tests/fuzz/ws_message_fuzz.cc relay/ws_message.cc protocol/json_in.cc
add bus_message json "-lxxhash" tests/fuzz/bus_message_fuzz.cc protocol/bus_contract.cc protocol/json_in.cc \
  protocol/feed_reader.cc protocol/feed_market_sax.cc protocol/feed_writer.cc protocol/event_json.cc \
  protocol/event_id.cc
declare -A set_flags=([all]="" [json]="-fno-sanitize=pointer-overflow")
targets=(http_request feed_line ws_frame json_in rest_body ws_message bus_message)

# Built again only when a source, a header or a flag changed since the
# last build into $out: CI's last stage runs the binaries the suite's
# fuzz_targets_link built.
stamp=$( { echo "${flags[*]}"; declare -p set_of srcs_of libs_of set_flags
  find protocol rest relay tests/fuzz -name '*.h' -o -name '*.cc' | sort | xargs cat; } | sha1sum | cut -c1-40)
failed=0 built=1
for t in "${targets[@]}"; do [ -x "$out/${t}_fuzz" ] || built=; done
if [ -z "$built" ] || [ "$(cat "$out/targets.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -f "$out/targets.stamp"
  mkdir -p "$out/obj/all" "$out/obj/json"
  obj() { echo "$out/obj/$1/$(echo "$2" | tr / _).o"; }
  # Each source once per flag set (json_in.cc is in five targets, the feed
  # reader's files in two), as many compiles at a time as there are cores.
  declare -A compiled
  running=0
  for t in "${targets[@]}"; do
    for src in ${srcs_of[$t]}; do
      key="${set_of[$t]}:$src"
      [ -z "${compiled[$key]:-}" ] || continue
      compiled[$key]=1
      o=$(obj "${set_of[$t]}" "$src")
      # shellcheck disable=SC2086
      ( clang++ "${flags[@]}" ${set_flags[${set_of[$t]}]} -c "$src" -o "$o" > "$o.log" 2>&1 ||
          { cat "$o.log"; echo "fuzz: compiling $src FAILED"; exit 1; } ) &
      running=$((running + 1))
      if [ "$running" -ge "$(nproc)" ]; then wait -n || failed=1; running=$((running - 1)); fi
    done
  done
  while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
  [ "$failed" = 0 ] || exit 1
  for t in "${targets[@]}"; do
    objs=()
    for src in ${srcs_of[$t]}; do objs+=("$(obj "${set_of[$t]}" "$src")"); done
    # shellcheck disable=SC2086
    clang++ "${flags[@]}" "${objs[@]}" ${libs_of[$t]} -o "$out/${t}_fuzz" > "$out/$t.build.log" 2>&1 &
  done
  for job in $(jobs -p); do wait "$job" || failed=1; done
  if [ "$failed" != 0 ]; then
    cat "$out"/*.build.log
    echo "fuzz: linking FAILED"
    exit 1
  fi
  echo "$stamp" > "$out/targets.stamp"
fi
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
