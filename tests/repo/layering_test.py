#!/usr/bin/env python3
"""The tree is layered along the data path (docs/architecture.md): a lower
layer never names a higher one. This test fails when a source file includes
a header of a folder its layer may not see, and prints the line.

  protocol/                      wire formats and the interface's vocabulary
                                 (protocol/net: the sockets under both outputs)
  engine/core, catalog,          the single writer, its snapshots, the
    settlement, views            dictionary, settlement, the JSON views
  engine/history                 the odds history, made from published
                                 batches (REST reads it)
  engine/storage                 the log on disk, and the odds history's
                                 files beside it (it sees engine/history)
  engine/sources                 the simulator and replay
  engine/bus                     the cluster's log (input and output)
  rest/, relay/                  the outputs: each sees the engine, never
                                 the other output, the log or the bus
    relay/webhooks/              the webhook output: beside the streams in
                                 relay/, neither includes the other
  tools/                         the binaries: may wire anything together
  clients/                       the client libraries a desk links: on
                                 protocol/ only, never the server

It reads each file once (it was a shell loop that forked per file, 13 s a
run and 39 s for the self-test, run again under ASan in CI).

Usage: layering_test.py [REPO_ROOT]  (default: two levels up)
       layering_test.py --self-test  (shows that a forbidden include fails)
"""
import os
import re
import sys

FOLDERS = ("protocol", "engine", "rest", "relay", "tools", "clients")
CORE = ["protocol/", "engine/core/"]
# folder: the include prefixes a file under it may name; the longest
# matching folder decides.
RULES = {
    "protocol/": ["protocol/"],
    "engine/core/": CORE,
    "engine/catalog/": CORE + ["engine/catalog/"],
    "engine/settlement/": CORE + ["engine/catalog/", "engine/settlement/"],
    "engine/views/": CORE + ["engine/catalog/", "engine/settlement/", "engine/views/"],
    "engine/history/": CORE + ["engine/history/"],
    "engine/storage/": CORE + ["engine/catalog/", "engine/history/", "engine/storage/"],
    "engine/sources/": CORE + ["engine/catalog/", "engine/storage/", "engine/sources/"],
    "engine/bus/": CORE + ["engine/catalog/", "engine/storage/", "engine/sources/", "engine/bus/"],
    "rest/": CORE + ["engine/catalog/", "engine/settlement/", "engine/views/", "engine/history/", "rest/"],
    "relay/": CORE + ["engine/catalog/", "engine/settlement/", "engine/views/", "relay/"],
    "relay/webhooks/": CORE + ["engine/catalog/", "engine/settlement/", "engine/views/", "relay/webhooks/"],
    "tools/": ["protocol/", "engine/", "rest/", "relay/", "tools/"],
    "clients/": ["protocol/", "clients/"],
}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)


def allowed_for(path):
    best = max((f for f in RULES if path.startswith(f)), key=len, default=None)
    return RULES[best] if best else None


def problem(path, inc, allowed):
    """Why `path` may not include `inc`, or None when it may."""
    if "/" not in inc:
        return None  # a header beside the file (same folder, no path)
    # protocol/net is the sockets under the outputs: the engine (and the
    # rest of protocol/) stays free of libuv.
    if inc.startswith("protocol/net/") and not path.startswith(("protocol/net/", "rest/", "relay/", "tools/")):
        return " ".join(allowed) + " (not protocol/net/: only the outputs and tools sit on sockets)"
    # relay/webhooks/ is a sibling of the stream code, not a part of it.
    if inc.startswith("relay/webhooks/") and not path.startswith(("relay/webhooks/", "tools/")):
        return " ".join(allowed) + " (not relay/webhooks/: a sibling output, only tools/ wires it)"
    return None if inc.startswith(tuple(allowed)) else " ".join(allowed)


def sources(root):
    for top in FOLDERS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".h", ".cc")):
                    yield os.path.relpath(os.path.join(d, n), root)


def check(root, added=None):
    """The layering errors of the tree at root, with `added` lines appended
    to the named files ({path: line}); and how many includes were checked."""
    errors, checked = [], 0
    for path in sorted(sources(root)):
        allowed = allowed_for(path)
        if allowed is None:
            errors.append(f"{path} is in no layer; add its folder to the rules")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if added and path in added:
            text += "\n" + added[path] + "\n"
        for m in INCLUDE.finditer(text):
            checked += 1
            why = problem(path, m.group(1), allowed)
            if why:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f'{path}:{line} includes "{m.group(1)}"; its layer may include only: {why}')
    return errors, checked


def self_test(root):
    # One forbidden include at a time: a checker that passes everything
    # would pass these too.
    cases = {
        "relay/hub.cc": '#include "rest/router.h"',
        "engine/core/engine.cc": '#include "protocol/net/conn.h"',
        "relay/pt_stream.cc": '#include "relay/webhooks/webhooks.h"',
    }
    for path, line in cases.items():
        errors, _ = check(root, {path: line})
        if not any(e.startswith(path + ":") and line.split('"')[1] in e for e in errors):
            print(f"layering_test: FAIL: {path} with {line} was not caught", file=sys.stderr)
            return 1
    print("layering_test: self-test ok (relay/ -> rest/, engine/ -> protocol/net/ and "
          "relay/ -> relay/webhooks/ includes fail the check)")
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if argv[1:2] == ["--self-test"]:
        return self_test(os.path.dirname(os.path.dirname(here)))
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(here))
    errors, checked = check(root)
    for e in errors:
        print("layering_test: " + e, file=sys.stderr)
    if checked == 0:
        print(f"layering_test: found no includes to check under {root}", file=sys.stderr)
        return 1
    if not errors:
        print(f"layering_test: {checked} includes checked, every one within its layer")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
