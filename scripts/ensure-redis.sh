#!/usr/bin/env bash
# `npm test` runs this first: the multi-host tests start their own redis-server (a free port, a temp dir), the
# Sentinel failover test its sentinels (redis-sentinel), the metrics test its own Prometheus, the rediss:// test its own CA (openssl). Missing: installed from the Debian package when we may (root, apt-get);
# otherwise a loud failure with the install line. Never a skip.
set -euo pipefail
updated=
for cmd in redis-server redis-sentinel prometheus openssl; do
  if command -v "$cmd" >/dev/null 2>&1; then continue; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[pretest] $cmd is missing; installing the Debian package for the tests" >&2
    [ -n "$updated" ] || { apt-get update; updated=1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$cmd"
    command -v "$cmd" >/dev/null 2>&1 && continue
  fi
  echo "[pretest] $cmd is not installed; the tests need it. Install it with:" >&2
  echo "    sudo apt-get update && sudo apt-get install -y $cmd" >&2
  exit 1
done
