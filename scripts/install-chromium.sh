#!/usr/bin/env bash
# Installs Debian's chromium when it is missing, for the inspector's browser tests
# (__test__/inspector.test.ts drives it through playwright-core, which downloads no browser of
# its own). Needs root and apt-get; elsewhere install chromium yourself or set
# RABOSH_CHROMIUM to a Chromium or Chrome executable.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: chromium is missing and this is not a root Debian system;" \
    "install chromium or set RABOSH_CHROMIUM" >&2
  exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core
