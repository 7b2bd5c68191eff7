#!/usr/bin/env bash
# The tree is layered along the data path (docs/architecture.md): a lower
# layer never names a higher one. This test fails when a source file
# includes a header of a folder its layer may not see, and prints the line.
#
#   protocol/                      wire formats and the interface's vocabulary
#                                  (protocol/net: the sockets under both outputs)
#   engine/core, catalog,          the single writer, its snapshots, the
#     settlement, views            dictionary, settlement, the JSON views
#   engine/history                 the odds history, made from published
#                                  batches (REST reads it)
#   engine/storage                 the log on disk, and the odds history's
#                                  files beside it (it sees engine/history)
#   engine/sources                 the simulator and replay
#   engine/bus                     the cluster's log (input and output)
#   rest/, relay/                  the outputs: each sees the engine, never
#                                  the other output, the log or the bus
#     relay/webhooks/              the webhook output: beside the streams in
#                                  relay/, neither includes the other
#   tools/                         the binaries: may wire anything together
#   clients/                       the client libraries a desk links: on
#                                  protocol/ only, never the server
#
# Usage: layering_test.sh [REPO_ROOT]  (default: two levels up)
#        layering_test.sh --self-test  (shows that a forbidden include fails)
set -euo pipefail

if [ "${1:-}" = "--self-test" ]; then
  # Copy the tree's sources, add one forbidden include, and expect a failure:
  # a checker that passes everything would pass this too.
  here=$(cd "$(dirname "$0")" && pwd)
  root=$(cd "$here/../.." && pwd)
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  (cd "$root" && git ls-files -z -- protocol engine rest relay tools | xargs -0 cp --parents -t "$scratch")
  echo '#include "rest/router.h"' >> "$scratch/relay/hub.cc"
  if bash "$0" "$scratch" >/dev/null 2>&1; then
    echo "layering_test: FAIL: relay/hub.cc including rest/ was not caught" >&2
    exit 1
  fi
  sed -i '$d' "$scratch/relay/hub.cc"
  echo '#include "protocol/net/conn.h"' >> "$scratch/engine/core/engine.cc"
  if bash "$0" "$scratch" >/dev/null 2>&1; then
    echo "layering_test: FAIL: engine/core/engine.cc including protocol/net/ was not caught" >&2
    exit 1
  fi
  sed -i '$d' "$scratch/engine/core/engine.cc"
  echo '#include "relay/webhooks/webhooks.h"' >> "$scratch/relay/hub.cc"
  if bash "$0" "$scratch" >/dev/null 2>&1; then
    echo "layering_test: FAIL: relay/hub.cc including relay/webhooks/ was not caught" >&2
    exit 1
  fi
  echo "layering_test: self-test ok (relay/ -> rest/, engine/ -> protocol/net/ and relay/ -> relay/webhooks/ includes fail the check)"
  exit 0
fi

root=${1:-"$(cd "$(dirname "$0")/../.." && pwd)"}
cd "$root"

# allowed <folder> : the include prefixes a file under <folder> may name.
# The longest matching folder decides.
core="protocol/ engine/core/"
rules=(
  "protocol/:protocol/"
  "engine/core/:$core"
  "engine/catalog/:$core engine/catalog/"
  "engine/settlement/:$core engine/catalog/ engine/settlement/"
  "engine/views/:$core engine/catalog/ engine/settlement/ engine/views/"
  "engine/history/:$core engine/history/"
  "engine/storage/:$core engine/catalog/ engine/history/ engine/storage/"
  "engine/sources/:$core engine/catalog/ engine/storage/ engine/sources/"
  "engine/bus/:$core engine/catalog/ engine/storage/ engine/sources/ engine/bus/"
  "rest/:$core engine/catalog/ engine/settlement/ engine/views/ engine/history/ rest/"
  "relay/:$core engine/catalog/ engine/settlement/ engine/views/ relay/"
  "relay/webhooks/:$core engine/catalog/ engine/settlement/ engine/views/ relay/webhooks/"
  "tools/:protocol/ engine/ rest/ relay/ tools/"
  "clients/:protocol/ clients/"
)

allowed_for() {
  local file=$1 best="" best_len=0 r folder
  for r in "${rules[@]}"; do
    folder=${r%%:*}
    if [[ $file == "$folder"* ]] && ((${#folder} > best_len)); then
      best=${r#*:}; best_len=${#folder}
    fi
  done
  printf '%s' "$best"
}

bad=0 checked=0
while IFS= read -r -d '' file; do
  allowed=$(allowed_for "$file")
  if [ -z "$allowed" ]; then
    echo "layering_test: $file is in no layer; add its folder to the rules" >&2
    bad=1
    continue
  fi
  while IFS=: read -r line inc; do
    checked=$((checked + 1))
    ok=0
    for prefix in $allowed; do
      if [[ $inc == "$prefix"* ]]; then ok=1; break; fi
    done
    # protocol/net is the sockets under the outputs: the engine (and the
    # rest of protocol/) stays free of libuv.
    if [[ $inc == protocol/net/* && $file != protocol/net/* && $file != rest/* && $file != relay/* && $file != tools/* ]]; then
      ok=0
      allowed="$allowed (not protocol/net/: only the outputs and tools sit on sockets)"
    fi
    # relay/webhooks/ is a sibling of the stream code, not a part of it.
    if [[ $inc == relay/webhooks/* && $file != relay/webhooks/* && $file != tools/* ]]; then
      ok=0
      allowed="$allowed (not relay/webhooks/: a sibling output, only tools/ wires it)"
    fi
    # a header beside the file (same folder, no path) is always fine
    if [[ $inc != */* ]]; then ok=1; fi
    if [ $ok = 0 ]; then
      echo "layering_test: $file:$line includes \"$inc\"; its layer may include only: $allowed" >&2
      bad=1
    fi
  done < <(grep -noE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$file" |
           sed -E 's/^([0-9]+):.*"([^"]+)"/\1:\2/')
done < <(find protocol engine rest relay tools clients -type f \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z)

if [ $checked = 0 ]; then
  echo "layering_test: found no includes to check under $root" >&2
  exit 1
fi
[ $bad = 0 ] && echo "layering_test: $checked includes checked, every one within its layer"
exit $bad
