#!/usr/bin/env bash
# `npm test` runs this first: the multi-host tests start their own redis-server (a free port, a temp dir).
# Missing: installed from the Debian package when we may (root, apt-get); otherwise a loud failure with the
# install line. Never a skip.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[pretest] redis-server is missing; installing the Debian package for the multi-host tests" >&2
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server
  command -v redis-server >/dev/null 2>&1 && exit 0
fi
echo "[pretest] redis-server is not installed; the multi-host tests need it. Install it with:" >&2
echo "    sudo apt-get update && sudo apt-get install -y redis-server" >&2
exit 1
