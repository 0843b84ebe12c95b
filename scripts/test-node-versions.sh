#!/usr/bin/env bash
# The wire tests of the server, the client and the probe on other supported Node lines (from the npm registry's
# `node` package), after the whole suite ran on 26 and 22 (.ci/run). Each version's servers are spawned with that
# version too: the tests start them with process.execPath.
# Usage: bash scripts/test-node-versions.sh [version ...]   (default: 24); run after `npm test` built dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
# One file per side and era, chosen to fit CI's time: the server over 2025 stdio and 2026 HTTP, the client in
# both eras, the probe in both eras.
FILES=(test/stdio.test.ts test/era2026-http.test.ts test/client-2026.test.ts test/probe-eras.test.ts)
for v in "${@:-24}"; do
  for version in $v; do
    node_bin=$(npx -y "node@$version" -p process.execPath)
    echo "== Node $("$node_bin" --version): ${FILES[*]}"
    "$node_bin" node_modules/vitest/vitest.mjs run "${FILES[@]}" \
      --reporter=default --reporter=json --outputFile.json="test-results-node$version.json"
  done
done
