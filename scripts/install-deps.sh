#!/usr/bin/env bash
# Installs what oddsrelay builds and tests with, from Debian's packages only.
# Idempotent: packages already present are skipped; apt-get update runs first
# only when something is missing.
set -euo pipefail
pkgs=(g++ cmake make pkg-config curl libuv1-dev rapidjson-dev libxxhash-dev
      libconcurrentqueue-dev libgtest-dev libbenchmark-dev libssl-dev zlib1g-dev
      python3 libjemalloc-dev clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
