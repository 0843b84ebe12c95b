/**
 * The conformance suite's 0.2.0 prerelease (devDependency `conformance-next`,
 * @modelcontextprotocol/conformance 0.2.0-alpha.12) with
 * `--requirements 2026-07-28` against the real server subprocess over
 * Streamable HTTP: every scenario the 2026-07-28 revision requires, plus the
 * ones it runs unscored (the SEP-2663 tasks extension, `tasks-*`, and pending
 * ones). Tools: conformance-tools.ts, conformance-task-tools.ts and
 * conformance-stateless-tools.ts. Every
 * scenario is expected to pass or listed as not applicable with the reason
 * and the failure the suite must report for it; a suite upgrade that adds a
 * scenario fails the listing test until it is classified.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import {
  classifiedScenarioTests,
  resultsIn,
  runSuite,
  suitePackage,
  type Check,
  type Run,
} from './conformance-helpers.js';
import { startHttpServer, type HttpServerProcess } from './helpers.js';
import { NOT_APPLICABLE_2026 } from './conformance-2026-classes.js';

const { version: SUITE_VERSION, cli: SUITE_CLI } = suitePackage('conformance-next');
const REVISION = '2026-07-28';
const fixture = (name: string) => fileURLToPath(new URL(`../dist-dev/test/fixtures/${name}.js`, import.meta.url));
const suite = (args: string[], boundMs?: number): Promise<Run> => runSuite(SUITE_CLI, args, boundMs);

/** Scenarios this server must pass. */
const APPLICABLE = [
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'server-sse-multiple-streams',
  'resources-list',
  'dns-rebinding-protection',
  'input-required-result-unsupported-methods',
  'input-required-result-validate-input',
  'http-header-validation',
  'json-schema-2020-12',
  'sep-2164-resource-not-found',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-required-task-error',
  'tasks-mrtr-input',
  'server-stateless',
] as const;

/** The server scenarios `list --server --requirements` prints: the required ones and the server ones it runs unscored. */
function serverScenarios(out: string): string[] {
  const required = /Server scenarios[^\n]*\n((?:\s+- \S+\n)+)/.exec(out)?.[1] ?? '';
  const unscored = [...out.matchAll(/^\s+- (\S+) \[server\]$/gm)].map((m) => m[1]!);
  return [...[...required.matchAll(/- (\S+)/g)].map((m) => m[1]!), ...unscored];
}

let server: HttpServerProcess;
let outDir: string;
let results: Map<string, Check[]>;
let allRun: Run;

beforeAll(async () => {
  // --task-after-ms 0: a call of an optional task tool from a client with the extension is always a task, so which
  // scenario sees a task does not depend on timing (the suite's 1 s slow_compute would race the default 1 s window).
  server = await startHttpServer([
    '--task-after-ms',
    '0',
    '--tools',
    fixture('conformance-tools'),
    '--tools',
    fixture('conformance-task-tools'),
    '--tools',
    fixture('conformance-stateless-tools'),
  ]);
  outDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-2026-'));
  allRun = await suite(['server', '--url', server.url.href, '--requirements', REVISION, '-o', outDir], 150_000);
  results = await resultsIn(outDir);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe(`MCP conformance suite ${SUITE_VERSION}, requirements ${REVISION} and the tasks extension, over Streamable HTTP`, () => {
  classifiedScenarioTests({
    revision: '2026-07-28',
    version: SUITE_VERSION,
    pinned: '0.2.0-alpha.12',
    listed: async () => {
      const listing = await suite(['list', '--server', '--requirements', REVISION], 30_000);
      expect(listing.code).toBe(0);
      const listed = serverScenarios(listing.out);
      expect(listed).toContain('tasks-lifecycle');
      return listed;
    },
    applicable: APPLICABLE,
    notApplicable: NOT_APPLICABLE_2026,
    notApplicableMeans: 'not a pass',
    run: () => ({ results, allRun, server }),
  });
});
