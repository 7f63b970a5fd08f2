#!/usr/bin/env bash
# Sets up a checkout on Debian/Ubuntu (a fresh machine included): installs, with apt-get, whichever of
# the system packages the demo and the tests need is missing — redis-server, python3-msgpack, mono-mcs,
# chromium, haproxy, postgresql — then the npm dependencies (npm ci). A PostgreSQL that answers at
# ZLINK_POSTGRES_URL, or at the tests' default postgres://postgres@127.0.0.1:5432/test, is used as it is;
# otherwise this starts the local cluster and gives the tests their database. Needs node and npm
# already; uses sudo when not root. `.ci/run` runs this same script. What "missing" means is
# scripts/preflight.mjs's check, the one `npm test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Runs as the postgres user (Debian's clusters let it in over the local socket), from / so that psql
# can read its working directory.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else (cd / && sudo -u postgres "$@"); fi
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
# PostgreSQL did not let the tests in at the default URL: start Debian's cluster (a container has no
# systemd to start it) and give the tests a database test that postgres may use from 127.0.0.1
# without a password. A server ZLINK_POSTGRES_URL names is never touched.
if [[ " ${missing[*]} " == *" postgresql "* && -z "${ZLINK_POSTGRES_URL:-}" ]]; then
  for version in $(ls /etc/postgresql); do
    echo "setup: starting PostgreSQL $version (cluster main)"
    # Exits 2 when the cluster already runs.
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
  if [ "$(as_postgres psql -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'")" != 1 ]; then
    as_postgres createdb test
  fi
  hba="$(as_postgres psql -tAc 'SHOW hba_file')"
  trust='host test postgres 127.0.0.1/32 trust'
  if ! as_root grep -qxF "$trust" "$hba"; then
    echo "setup: letting postgres into database test from 127.0.0.1 without a password ($hba)"
    as_root sed -i "1i $trust" "$hba"
    as_postgres psql -qtAc 'SELECT pg_reload_conf()' >/dev/null
  fi
fi
node scripts/preflight.mjs
npm ci --no-audit --no-fund
