#!/usr/bin/env bash
# The peer dependencies at the newest versions their ranges allow (CI tests the lockfile's): a copy of this checkout,
# its lockfile's install, then every peer upgraded within its range (package.json peerDependencies), the build, and
# the wire tests of the server, the client, the HTTP path and the many-hosts front end against them.
# Usage: bash scripts/test-newest-peers.sh [vitest file ...]   (needs the npm registry; redis-server for the last file)
set -euo pipefail
cd "$(dirname "$0")/.."
# First, every `npm install <name>@<spec>` line the docs give: versions the registry has (a peer's within its range).
node scripts/check-doc-installs.mjs
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(test/stdio.test.ts test/http.test.ts test/era2026-http.test.ts test/client.test.ts test/lazy-imports.test.ts test/remote-http.test.ts)
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && mkdir -p "$copy/$(dirname "$f")" && cp "$f" "$copy/$f"
done
cd "$copy"
npm ci --no-audit --no-fund
# name@range for every peer, e.g. @modelcontextprotocol/server@^2.4.0: npm takes the newest version in each range.
mapfile -t peers < <(node -p 'Object.entries(require("./package.json").peerDependencies).map(([n, r]) => `${n}@${r}`).join("\n")')
npm install --no-save --no-audit --no-fund "${peers[@]}"
npm ls --depth=0 "${peers[@]%@*}" 2>/dev/null | sed 's/^/[newest-peers] /' || true
npm run build
npx tsc -p tsconfig.test.json
npx vitest run "${files[@]}"
