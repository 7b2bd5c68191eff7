#!/usr/bin/env bash
# Installs what oddsrelay builds and tests with: Debian's packages (Chromium
# for the page tests among them, Prometheus and promtool for the /metrics
# test, python3-jsonschema and python3-yaml for the OpenAPI checks of
# tests/e2e/openapi_check.py, python3-xxhash for the state digest of the
# Python client and the e2e tests, liburing-dev for the relay's io_uring
# writes, --relay-io uring, which the build leaves out without it), plus from the npm registry Node's ws (the
# second independent WebSocket client of the e2e tests) and swagger-parser
# (the OpenAPI validator of docs/openapi.yaml). Idempotent: what is present
# is skipped; apt-get update runs first only when something is missing.
set -euo pipefail
pkgs=(g++ cmake make pkg-config curl libuv1-dev rapidjson-dev libxxhash-dev
      libconcurrentqueue-dev libgtest-dev libbenchmark-dev libssl-dev zlib1g-dev
      python3 python3-websockets python3-xxhash python3-jsonschema python3-yaml libjemalloc-dev clang libclang-rt-14-dev chromium
      nats-server libnats-dev openssl prometheus nginx-light clang-format liburing-dev)
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
  # Packages with a service (prometheus, nats-server, nginx) start it on
  # install where the init system allows: the tests start their own on free
  # loopback ports (and nginx on port 80 could break a CI machine), so none
  # may bind a port here. Docker-style images already deny starts with a
  # policy-rc.d; elsewhere one is put in place for the install only
  # (invoke-rc.d and deb-systemd-invoke honour it).
  # The units stay installed and enabled, as the packages leave them.
  policy=/usr/sbin/policy-rc.d
  own_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    own_policy=1
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ -n "$own_policy" ]; then
    $SUDO rm -f "$policy"
    trap - EXIT
  fi
  echo "install-deps: done"
fi
for tool in /usr/bin/prometheus /usr/bin/promtool; do
  [ -x "$tool" ] || { echo "install-deps: $tool missing after installing prometheus" >&2; exit 1; }
done
# Node's ws and swagger-parser, pinned by tests/e2e/node/package-lock.json.
node_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/node"
if [ ! -d "$node_dir/node_modules/ws" ] || [ ! -d "$node_dir/node_modules/@apidevtools/swagger-parser" ]; then
  echo "install-deps: npm ci in tests/e2e/node"
  npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error >/dev/null
fi
