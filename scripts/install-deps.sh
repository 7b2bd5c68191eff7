#!/usr/bin/env bash
# Installs what oddsrelay builds and tests with: Debian's packages (Chromium
# for the page tests among them), plus
# Node's ws from the npm registry for the second independent WebSocket
# client of the e2e tests. Idempotent: what is present is skipped;
# apt-get update runs first only when something is missing.
set -euo pipefail
pkgs=(g++ cmake make pkg-config curl libuv1-dev rapidjson-dev libxxhash-dev
      libconcurrentqueue-dev libgtest-dev libbenchmark-dev libssl-dev zlib1g-dev
      python3 python3-websockets libjemalloc-dev clang libclang-rt-14-dev chromium
      nats-server libnats-dev openssl nginx-light)
# Debian's nodejs and npm, unless a node and an npm are already installed.
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  # nginx is only run by tests/e2e/test_proxy.py, in the foreground on a free
  # loopback port with its own config. Its package would start the system
  # service on port 80 (and fail the install where that port is taken):
  # Debian's policy-rc.d keeps services from starting during the install,
  # and the service is disabled after it.
  nginx_new=""
  [[ " ${missing[*]} " == *" nginx-light "* ]] && nginx_new=1
  policy=""
  if [ -n "$nginx_new" ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod 755 /usr/sbin/policy-rc.d
    policy=1
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ -n "$policy" ]; then
    $SUDO rm -f /usr/sbin/policy-rc.d
    trap - EXIT
  fi
  if [ -n "$nginx_new" ]; then
    $SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
  fi
  echo "install-deps: done"
fi
# Node's ws, pinned by tests/e2e/node/package-lock.json.
node_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/node"
if [ ! -d "$node_dir/node_modules/ws" ]; then
  echo "install-deps: npm ci in tests/e2e/node"
  npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error >/dev/null
fi
