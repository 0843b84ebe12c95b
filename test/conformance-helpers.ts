/**
 * Running the MCP conformance suite's CLI from the tests, on the test's own Node
 * (the suite calls `fs.globSync`, which every supported line has).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import type { HttpServerProcess } from './helpers.js';

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

/** Runs a suite CLI (`dist/index.js` of the package) on the test's Node; a hang is killed and reported, not waited for. */
export async function runSuite(cli: string, args: string[], boundMs = 120_000): Promise<Run> {
  const node = process.execPath;
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

/** The suite package `name` (an npm alias works): its version and its CLI. */
export function suitePackage(name: string): { version: string; cli: string } {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve(`${name}/package.json`);
  return { version: (require(pkg) as { version: string }).version, cli: join(dirname(pkg), 'dist/index.js') };
}

/** A scenario that tests a feature the server does not have: why, and the failure the suite must report for it. */
export interface NotApplicable {
  readonly why: string;
  readonly evidence: RegExp;
}

/** What a test file classified and what its one full run produced (read once its `beforeAll` has run). */
export interface Classified {
  /** The protocol revision the run is for, as docs/guarantees.md names its totals. */
  revision: '2025-11-25' | '2026-07-28';
  version: string;
  pinned: string;
  /** The scenarios the suite's `list` prints for this run's options. */
  listed: () => Promise<string[]>;
  applicable: readonly string[];
  notApplicable: Record<string, NotApplicable>;
  /** How a not-applicable scenario must come out: no check passing at all, or simply not a pass (2026: some checks pass). */
  notApplicableMeans: 'no check passes' | 'not a pass';
  run: () => { results: Map<string, Check[]>; allRun: Run; server: HttpServerProcess };
}

/**
 * The tests every conformance file has, inside its `describe`: the pinned version, every listed scenario
 * classified exactly once and run once, each applicable one passes, each not-applicable one fails for its
 * stated reason, and the server is still up.
 */
export function classifiedScenarioTests(c: Classified): void {
  it('is the pinned version, and every scenario it lists is classified exactly once', async () => {
    expect(c.version).toBe(c.pinned);
    const listed = await c.listed();
    const classified = [...c.applicable, ...Object.keys(c.notApplicable)];
    expect(new Set(classified).size).toBe(classified.length);
    expect([...listed].sort()).toEqual([...classified].sort());
    // The full run produced one result for each of them.
    const { results, allRun } = c.run();
    expect([...results.keys()].sort(), allRun.out).toEqual([...classified].sort());
  });

  it.each(c.applicable)('%s passes', (name) => {
    const checks = c.run().results.get(name);
    expect(verdict(checks), `${name}:\n${JSON.stringify(checks, null, 1)}`).toBe('pass');
  });

  it.each(Object.keys(c.notApplicable))('%s does not apply, and fails for that reason', (name) => {
    const checks = c.run().results.get(name) ?? [];
    expect(checks.length).toBeGreaterThan(0);
    if (c.notApplicableMeans === 'no check passes') expect(checks.filter((k) => k.status === 'SUCCESS')).toEqual([]);
    else expect(verdict(checks)).not.toBe('pass');
    expect(reported(checks), c.notApplicable[name]!.why).toMatch(c.notApplicable[name]!.evidence);
  });

  it("docs/guarantees.md quotes this run's totals: checks passed and failed as the suite counts them, scenarios passing", () => {
    const { results } = c.run();
    const checks = [...results.values()].flat();
    const passed = checks.filter((k) => k.status === 'SUCCESS').length;
    const failed = checks.filter((k) => k.status === 'FAILURE').length;
    const passing = [...results.values()].filter((k) => verdict(k) === 'pass').length;
    const page = readFileSync(new URL('../docs/guarantees.md', import.meta.url), 'utf8');
    const quoted = new RegExp(
      `\\*\\*${c.revision}:\\s+(\\d+)\\s+passed,\\s+(\\d+)\\s+failed\\*\\*\\s+\\((\\d+)\\s+of\\s+(\\d+)\\s+scenarios\\s+pass`,
    ).exec(page);
    expect(
      quoted?.slice(1).map(Number),
      'the sentence "Checks as the suite counts them" of docs/guarantees.md',
    ).toEqual([passed, failed, passing, results.size]);
    // 2026: how many of the tasks extension's scenarios pass, "N of the M `tasks-*`".
    const tasks = [...results.keys()].filter((name) => name.startsWith('tasks-'));
    if (tasks.length > 0) {
      const tasksPassing = tasks.filter((name) => verdict(results.get(name)) === 'pass').length;
      expect(page).toMatch(
        new RegExp(`${c.revision}:[^;]*?${tasksPassing}\\s+of\\s+the\\s+${tasks.length}\\s+\`tasks-\\*\``),
      );
    }
  });

  it('leaves the server running', () => {
    const { server } = c.run();
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).not.toMatch(/uncaught|unhandled/i);
  });
}
