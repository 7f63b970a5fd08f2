#!/usr/bin/env bash
# Sets up a checkout on Debian/Ubuntu (a fresh machine included): installs, with apt-get, whichever of
# the system packages the demo and the tests need is missing — redis-server, python3-msgpack, mono-mcs,
# chromium, haproxy — then the npm dependencies (npm ci). Needs node and npm already; uses sudo when
# not root. `.ci/run` runs this same script. What "missing" means is scripts/preflight.mjs's check, the
# one `npm test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

mapfile -t missing < <(node scripts/preflight.mjs --packages)
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${missing[*]} (Debian package names); this script installs with apt-get only" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]} with apt-get"
  # The package lists may be absent (a fresh container) or stale: update once, only if the install
  # cannot find what it needs without it.
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
node scripts/preflight.mjs
npm ci --no-audit --no-fund
