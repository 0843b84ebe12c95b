/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, a pinned
 * devDependency, so nothing is fetched at test time) against the real server
 * subprocess over Streamable HTTP, serving the suite's test tools from
 * test/fixtures/conformance-tools.ts. Every scenario the suite knows is either
 * expected to pass or listed below as not applicable with the reason; a suite
 * upgrade that adds a scenario fails the listing test until it is classified.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServerProcess } from './helpers.js';

const require = createRequire(import.meta.url);
const SUITE_DIR = dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));
const SUITE_VERSION = (require('@modelcontextprotocol/conformance/package.json') as { version: string }).version;
const SUITE_CLI = join(SUITE_DIR, 'dist/index.js');
const CONFORMANCE_TOOLS = fileURLToPath(new URL('../dist/test/fixtures/conformance-tools.js', import.meta.url));

/** Scenarios this server must pass. */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-logging',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'json-schema-2020-12',
  'server-sse-multiple-streams',
  'resources-list',
] as const;

/**
 * Scenarios that test features this server does not have, with the reason, and
 * the failure the suite must report for that reason (so a crash or a hang is not
 * mistaken for "not applicable", and a scenario that starts passing is moved up).
 */
const NOT_APPLICABLE: Record<string, { why: string; evidence: RegExp }> = {
  'completion-complete': { why: 'no prompts or resource templates, so nothing to complete (no completions capability)', evidence: /-32601|Method not found/ },
  'prompts-list': { why: 'the server has no prompts (no prompts capability)', evidence: /-32601|Method not found/ },
  'prompts-get-simple': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-with-args': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-embedded-resource': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-with-image': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'resources-read-text': { why: 'needs test://static-text; the resource list is fixed (executor://stats) and tool modules cannot add resources', evidence: /unknown resource test:\/\/static-text/ },
  'resources-read-binary': { why: 'needs test://static-binary; the resource list is fixed (executor://stats)', evidence: /unknown resource test:\/\/static-binary/ },
  'resources-templates-read': { why: 'needs the template test://template/{id}/data; the server has no resource templates', evidence: /unknown resource test:\/\/template\/123\/data/ },
  'resources-subscribe': { why: 'no resource subscriptions: the only resource is a counter snapshot read on demand (no subscribe capability)', evidence: /-32601|Method not found/ },
  'resources-unsubscribe': { why: 'no resource subscriptions', evidence: /-32601|Method not found/ },
  'server-sse-polling': {
    why: 'needs resumable SSE (event ids, Last-Event-ID replay, a test_reconnection tool that closes the stream mid-call); the server keeps no event store, and a POST stream the client drops cancels the calls in it',
    evidence: /did not send priming event/,
  },
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';
  errorMessage?: string;
}

interface Run {
  code: number | null;
  out: string;
}

/** Runs the suite's CLI as a subprocess; a hang is killed and reported, not waited for. */
function suite(args: string[], boundMs = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUITE_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Reads the per-scenario checks.json files that `-o DIR` writes (`server-<scenario>-<timestamp>/`). */
async function resultsIn(dir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for (const entry of await readdir(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    if (!m) continue;
    expect(results.has(m[1]!), `two results for ${m[1]}`).toBe(false);
    results.set(m[1]!, JSON.parse(await readFile(join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

/** A scenario passes when it checked something and nothing failed or warned. */
function verdict(checks: Check[] | undefined): string {
  if (!checks) return 'no result';
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  if (bad.length) return bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`).join('; ');
  return checks.some((c) => c.status === 'SUCCESS') ? 'pass' : 'no successful check';
}

let server: HttpServerProcess;
let outDir: string;
let results: Map<string, Check[]>;
let allRun: Run;

beforeAll(async () => {
  server = await startHttpServer(['--tools', CONFORMANCE_TOOLS]);
  outDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  // One run of every scenario the suite has, so not-applicable ones are seen failing for the stated reason.
  allRun = await suite(['server', '--url', server.url.href, '--suite', 'all', '-o', outDir]);
  results = await resultsIn(outDir);
}, 150_000);

afterAll(async () => {
  await server?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe(`MCP conformance suite ${SUITE_VERSION} over Streamable HTTP`, () => {
  it('is the pinned version, and every scenario it lists is classified exactly once', async () => {
    expect(SUITE_VERSION).toBe('0.1.10');
    const listing = await suite(['list', '--server'], 30_000);
    expect(listing.code).toBe(0);
    const listed = [...listing.out.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]!);
    const classified = [...APPLICABLE, ...Object.keys(NOT_APPLICABLE)];
    expect(new Set(classified).size).toBe(classified.length);
    expect([...listed].sort()).toEqual([...classified].sort());
    // The full run produced one result for each of them.
    expect([...results.keys()].sort(), allRun.out).toEqual([...classified].sort());
  });

  it.each(APPLICABLE)('%s passes', (name) => {
    expect(verdict(results.get(name)), `${name}:\n${JSON.stringify(results.get(name), null, 1)}`).toBe('pass');
  });

  it.each(Object.keys(NOT_APPLICABLE))('%s does not apply, and fails for that reason', (name) => {
    const checks = results.get(name) ?? [];
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.filter((c) => c.status === 'SUCCESS')).toEqual([]);
    const reported = checks.map((c) => c.errorMessage ?? '').join('\n');
    expect(reported, NOT_APPLICABLE[name]!.why).toMatch(NOT_APPLICABLE[name]!.evidence);
  });

  it('tools-call-with-progress passes every time, not by luck (the last report used to lose the race with the result)', async () => {
    const runs = 8;
    const verdicts: string[] = [];
    for (let i = 0; i < runs; i++) {
      const dir = await mkdtemp(join(outDir, 'progress-'));
      const run = await suite(['server', '--url', server.url.href, '--scenario', 'tools-call-with-progress', '-o', dir], 60_000);
      const checks = (await resultsIn(dir)).get('tools-call-with-progress');
      verdicts.push(`${run.code} ${verdict(checks)}`);
    }
    expect(verdicts).toEqual(Array(runs).fill('0 pass'));
  }, 120_000);

  it('leaves the server running', () => {
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).not.toMatch(/uncaught|unhandled/i);
  });
});
