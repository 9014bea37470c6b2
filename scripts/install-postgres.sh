#!/usr/bin/env bash
# Installs Debian's PostgreSQL binaries and PgBouncer when they are missing, for the backend's
# tests: no cluster is created and no service started (scripts/with-postgres.mjs runs a throwaway
# server of its own, scripts/pgbouncer.mjs a throwaway PgBouncer).
# Needs apt-get and root (or sudo without a password, as on CI's Linux runners); on other systems
# install them yourself or set RABOSH_PG_URL.
set -euo pipefail
if { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; } &&
  { [ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1; }; then
  exit 0
fi
if [ "$(id -u)" != 0 ] && command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  exec sudo -n bash "$0"
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-postgres: PostgreSQL binaries or PgBouncer are missing and this is not a root" \
    "Debian system; install them, or set RABOSH_PG_URL" >&2
  exit 1
fi
mkdir -p /etc/postgresql-common
echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf
had_policy=0
[ -e /usr/sbin/policy-rc.d ] && had_policy=1
if [ "$had_policy" = 0 ]; then
  # Refuses service starts during the install (the distro would start its own cluster).
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql pgbouncer
[ "$had_policy" = 1 ] || rm -f /usr/sbin/policy-rc.d
