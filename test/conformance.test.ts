/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, a pinned
 * devDependency) against the real server
 * subprocess over Streamable HTTP, serving the suite's test tools from
 * test/fixtures/conformance-tools.ts. Every scenario the suite knows is either
 * expected to pass or listed below as not applicable with the reason; a suite
 * upgrade that adds a scenario fails the listing test until it is classified.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifiedScenarioTests,
  listedScenarios,
  resultsIn,
  runSuite,
  suitePackage,
  verdict,
  type Check,
  type NotApplicable,
  type Run,
} from './conformance-helpers.js';
import { startHttpServer, type HttpServerProcess } from './helpers.js';

const { version: SUITE_VERSION, cli: SUITE_CLI } = suitePackage('@modelcontextprotocol/conformance');
const suite = (args: string[], boundMs?: number): Promise<Run> => runSuite(SUITE_CLI, args, boundMs);
const CONFORMANCE_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/conformance-tools.js', import.meta.url));

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
  'dns-rebinding-protection',
] as const;

/**
 * Scenarios that test features this server does not have, with the reason, and
 * the failure the suite must report for that reason (so a crash or a hang is not
 * mistaken for "not applicable", and a scenario that starts passing is moved up).
 */
const NOT_APPLICABLE: Record<string, NotApplicable> = {
  'completion-complete': {
    why: 'no prompts or resource templates, so nothing to complete (no completions capability)',
    evidence: /-32601|Method not found/,
  },
  'prompts-list': { why: 'the server has no prompts (no prompts capability)', evidence: /-32601|Method not found/ },
  'prompts-get-simple': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-with-args': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-embedded-resource': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'prompts-get-with-image': { why: 'the server has no prompts', evidence: /-32601|Method not found/ },
  'resources-read-text': {
    why: 'needs test://static-text; the resource list is fixed (executor://stats) and tool modules cannot add resources',
    evidence: /unknown resource test:\/\/static-text/,
  },
  'resources-read-binary': {
    why: 'needs test://static-binary; the resource list is fixed (executor://stats)',
    evidence: /unknown resource test:\/\/static-binary/,
  },
  'resources-templates-read': {
    why: 'needs the template test://template/{id}/data; the server has no resource templates',
    evidence: /unknown resource test:\/\/template\/123\/data/,
  },
  'resources-subscribe': {
    why: 'no resource subscriptions: the only resource is a counter snapshot read on demand (no subscribe capability)',
    evidence: /-32601|Method not found/,
  },
  'resources-unsubscribe': { why: 'no resource subscriptions', evidence: /-32601|Method not found/ },
  'server-sse-polling': {
    why: 'needs resumable SSE (event ids, Last-Event-ID replay, a test_reconnection tool that closes the stream mid-call); the server keeps no event store, and a POST stream the client drops cancels the calls in it',
    evidence: /did not send priming event/,
  },
};

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
}, 300_000);

afterAll(async () => {
  await server?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe(`MCP conformance suite ${SUITE_VERSION} over Streamable HTTP`, () => {
  classifiedScenarioTests({
    revision: '2025-11-25',
    version: SUITE_VERSION,
    pinned: '0.1.16',
    listed: async () => {
      const listing = await suite(['list', '--server'], 30_000);
      expect(listing.code).toBe(0);
      return listedScenarios(listing.out);
    },
    applicable: APPLICABLE,
    notApplicable: NOT_APPLICABLE,
    notApplicableMeans: 'no check passes',
    run: () => ({ results, allRun, server }),
  });

  it('tools-call-with-progress passes every time, not by luck (the last report used to lose the race with the result)', async () => {
    const runs = 8;
    const verdicts: string[] = [];
    for (let i = 0; i < runs; i++) {
      const dir = await mkdtemp(join(outDir, 'progress-'));
      const run = await suite(
        ['server', '--url', server.url.href, '--scenario', 'tools-call-with-progress', '-o', dir],
        60_000,
      );
      const checks = (await resultsIn(dir)).get('tools-call-with-progress');
      verdicts.push(`${run.code} ${verdict(checks)}`);
    }
    expect(verdicts).toEqual(Array(runs).fill('0 pass'));
  }, 120_000);
});
