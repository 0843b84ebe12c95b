/**
 * Pools several runs of scenario 3 and the HTTP scenarios 8–10 (see
 * bench/lib/pooled-runs.ts) and prints the pooled targets as a Markdown table.
 *
 * Run: `node dist-dev/bench/pool-runs.js <run dir or results.json>...`, each a
 * `--out` directory of `node dist-dev/bench/main.js --only overhead` (or
 * `--only http-overhead,http-cancel,http-memory`, or of a full run).
 */
import { poolTable, readRun } from './lib/pooled-runs.js';

const paths = process.argv.slice(2);
if (paths.length === 0) {
  process.stderr.write('usage: node dist-dev/bench/pool-runs.js <run dir or results.json>...\n');
  process.exit(2);
}
try {
  process.stdout.write(poolTable(paths.map(readRun)) + '\n');
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
