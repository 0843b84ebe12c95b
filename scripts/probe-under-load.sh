#!/usr/bin/env bash
# The probe's stability proof: N runs against our own server (stdio and
# Streamable HTTP, the probe's default settings) while two CPU hogs compete for
# the cores, and the deliberately broken fixtures (2025 and 2026) under the
# same load: ours must never FAIL, each broken fixture must FAIL every time
# (the sleeping fixture without progress: INCONCLUSIVE, exit 3, every time).
# Runs from a snapshot of dist/ and dist-dev/, so a rebuild meanwhile changes nothing.
# Prints one line per run, a tally, and keeps every JSON report in $out.
# Usage: npm run build && bash scripts/probe-under-load.sh [runs] [outdir] [ours|broken|all] [stdio|http|all]
# (ours and broken can run as two processes side by side: more load, half the time).
# Ours is probed in both eras (--era 2025 and --era 2026), over stdio and over Streamable HTTP
# (`serve --transport http`, probed with --url and --pid); the 4th argument keeps one of them only.
set -u
runs=${1:-20}
cd "$(dirname "$0")/.."
out=${2:-$(mktemp -d)}
set_=${3:-all}
transports=${4:-all}
snap=node_modules/.cache/probe-under-load-$set_
rm -rf "$snap" && mkdir -p "$snap" && cp -r dist dist-dev package.json "$snap/"
cli=$snap/dist/src/cli/main.js
fix=$snap/dist-dev/test/fixtures
mkdir -p "$out"
hogs=()
server=
cleanup() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done; [ -n "$server" ] && kill "$server" 2>/dev/null; }
trap cleanup EXIT
[ "$set_" != broken ] && for _ in 1 2; do node -e 'for(;;){}' & hogs+=($!); done
echo "set $set_; load: ${#hogs[@]} CPU hogs of ours; $(nproc) cores; loadavg at start $(cut -d' ' -f1-3 /proc/loadavg); reports in $out"
verdict() { node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const f=d.servers.flatMap(s=>[...(s.error?["ERROR "+s.error.split("\n")[0]]:[]),...s.verdicts.filter(v=>v.outcome==="fail"||v.outcome==="inconclusive").map(v=>v.rule+(v.outcome==="fail"?"":" "+v.outcome))]);console.log(d.result.toUpperCase()+(f.length?" ("+f.join(", ")+")":""))' "$1" 2>/dev/null || echo "NO-JSON"; }
declare -A tally
record() { # name file exit-code
  local r; r=$(verdict "$2"); echo "run $i $1: exit $3 $r"; tally["$1 exit $3"]=$(( ${tally["$1 exit $3"]:-0} + 1 ))
}
start_http() { # command... ; sets server and url (the MCP endpoint's, not the health one our server prints first)
  rm -f "$out/http.err" # else the wait below can read the last server's URL before this one's redirect truncated the file
  "$@" 2>"$out/http.err" & server=$!
  url=
  for _ in $(seq 1 200); do url=$(grep -o 'listening on http://[^ ]*' "$out/http.err" 2>/dev/null | head -1 | cut -d' ' -f3); [ -n "$url" ] && break; sleep 0.1; done
}
stop_http() { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; server=; }
ours=(--tool spin --args '{"ms":5000}' --quick-tool spin --quick-args '{"ms":3}')
fast=(--samples 2 --cancel-after-ms 150 --settle-ms 600 --quiet-ms 150 --storm 8)
long=(--tool long --args '{"ms":3000}' --quick-tool quick)
for i in $(seq 1 "$runs"); do
  if [ "$set_" != broken ]; then
  for era in 2025 2026; do
  if [ "$transports" != http ]; then
    f="$out/$i-ours-stdio-$era.json"; node $cli probe --no-progress --format json --era $era --stdio "node $cli serve --threads 1" "${ours[@]}" >"$f"; record "ours-stdio-$era" "$f" $?
  fi
  [ "$transports" = stdio ] && continue
  # HTTP: the probe reads the server's CPU and threads through --pid; 2026 cancels by closing the stream, 2025 posts the notification.
  start_http node $cli serve --transport http --port 0 --threads 1
  f="$out/$i-ours-http-$era.json"; node $cli probe --no-progress --format json --era $era --url "$url" --pid "$server" "${ours[@]}" >"$f"; record "ours-http-$era" "$f" $?
  stop_http
  done
  fi
  [ "$set_" = ours ] && continue
  for mode in answers-cancelled burns-after-cancel replies-to-notifications quick-ignores-cancel; do
    qa='{}'; [ "$mode" = quick-ignores-cancel ] && qa='{"ms":30}'
    f="$out/$i-broken-$mode.json"; node $cli probe --no-progress --format json --era 2025 --stdio "node $fix/broken-server.js --mode $mode" "${long[@]}" --quick-args "$qa" "${fast[@]}" >"$f"; record "broken-2025-$mode" "$f" $?
  done
  f="$out/$i-broken-2026-stdio.json"; node $cli probe --no-progress --format json --era 2026 --stdio "node $fix/broken-server.js --era 2026 --mode progress-after-cancel" "${long[@]}" "${fast[@]}" >"$f"; record broken-2026-stdio-progress-after-cancel "$f" $?
  # A tool that only sleeps and ignores the cancel: its progress after the cancel FAILs work-stops; without progress it is INCONCLUSIVE (exit 3).
  for p in true false; do
    f="$out/$i-sleeping-progress-$p.json"; node $cli probe --no-progress --format json --era 2025 --stdio "node $fix/sleeping-server.js" --tool sleep --args "{\"ms\":5000,\"progress\":$p}" --quick-tool quick "${fast[@]}" >"$f"; record "sleeping-progress-$p" "$f" $?
  done
  start_http node $fix/broken-http-2026.js --mode progress-after-close
  f="$out/$i-broken-2026-http.json"; node $cli probe --no-progress --format json --era 2026 --url "$url" --pid "$server" "${long[@]}" "${fast[@]}" >"$f"; record broken-2026-http-progress-after-close "$f" $?
  stop_http
done
echo "tally (target exit code: runs), loadavg at end $(cut -d' ' -f1-3 /proc/loadavg):"
for k in "${!tally[@]}"; do echo "  $k: ${tally[$k]}"; done | sort
