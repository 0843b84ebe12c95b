/**
 * Running the MCP conformance suite's CLI from the tests. The suite (0.1.14 and
 * later, 0.2.0 prereleases) calls `fs.globSync`, which Node 20 lacks, so its CLI
 * runs on a Node 22 binary taken from the npm registry's `node` package (the one
 * network source CI has), resolved once per test run; the server under test
 * stays on the test's own Node.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { node22Path } from './node22.js';

export { node22Path };

/** One check a scenario reports in its checks.json. */
export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Exit code and combined output of one suite run. */
export interface Run {
  code: number | null;
  out: string;
}

/** Runs a suite CLI (`dist/index.js` of the package) on Node 22; a hang is killed and reported, not waited for. */
export async function runSuite(cli: string, args: string[], boundMs = 120_000): Promise<Run> {
  const node = await node22Path();
  return new Promise((resolve, reject) => {
    const child = spawn(node, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`conformance ${args.join(' ')} did not finish in ${boundMs} ms:\n${out}`));
    }, boundMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Scenario names the suite's `list` command prints (`  - name` or `  - name [versions]`), in order. */
export function listedScenarios(out: string): string[] {
  return [...out.matchAll(/^\s+- (\S+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1]!);
}

/** Reads the per-scenario checks.json files that `-o DIR` writes (`server-<scenario>-<timestamp>/`). */
export async function resultsIn(dir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for (const entry of await readdir(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    if (!m) continue;
    if (results.has(m[1]!)) throw new Error(`two results for ${m[1]}`);
    results.set(m[1]!, JSON.parse(await readFile(join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

/** A scenario passes when it checked something and nothing failed or warned. */
export function verdict(checks: Check[] | undefined): string {
  if (!checks) return 'no result';
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  if (bad.length) return bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`).join('; ');
  return checks.some((c) => c.status === 'SUCCESS') ? 'pass' : 'no successful check';
}

/** What a not-applicable scenario reports: its failures, warnings and skips, one per line. */
export function reported(checks: Check[]): string {
  return checks
    .filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')
    .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`)
    .join('\n');
}
