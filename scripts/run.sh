#!/usr/bin/env bash
# README command 1: install what is missing, build, and run oddsrelay on its
# embedded simulator feed. Extra arguments go to oddsrelay (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build build -j"$(nproc)" --target oddsrelay oddsfeed
exec ./build/oddsrelay "$@"
