/**
 * The probe against this server in the 2026-07-28 era, over stdio and over
 * Streamable HTTP (CPU measured through --pid): every rule of the era,
 * the tasks extension's included (`--task-tool only_task`), is clean, and
 * the probe exits 0. The 2025 side is probe.test.ts and probe-tasks.test.ts.
 */
import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CLEAN_SAMPLES, CLI, startHttpServer, type HttpServerProcess } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const FAST = [
  '--era',
  '2026',
  '--samples',
  '2',
  '--cancel-after-ms',
  '150',
  '--settle-ms',
  '600',
  '--quiet-ms',
  '150',
  '--storm',
  '8',
  '--format',
  'json',
];
const CALLS = [
  '--tool',
  'spin',
  '--args',
  '{"ms":5000}',
  '--quick-tool',
  'spin',
  '--quick-args',
  '{"ms":3}',
  '--task-tool',
  'only_task',
  '--task-args',
  '{"ms":8000}',
];
const SLOW = 240_000;

interface Doc {
  result: string;
  servers: {
    era: string | null;
    error: string | null;
    verdicts: { rule: string; outcome: string; evidence: string }[];
  }[];
}
function probe(args: string[]): Promise<{ code: number | null; doc: Doc; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'probe', '--no-progress', ...args],
      { timeout: 200_000 },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : null, doc: JSON.parse(stdout) as Doc, stderr });
      },
    );
  });
}

let servers: HttpServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

function expectClean(doc: Doc, code: number | null): void {
  expect(doc.servers.map((s) => s.era)).toEqual(['2026']);
  const verdicts = doc.servers[0]!.verdicts;
  expect(verdicts.filter((v) => v.outcome === 'fail' || v.outcome === 'warn')).toEqual([]);
  const of = (rule: string) => verdicts.find((v) => v.rule === rule);
  expect(of('tasks.cancel')).toMatchObject({ outcome: 'pass', evidence: expect.stringMatching(/^acknowledged in /) });
  expect(of('tasks.ends-cancelled')).toMatchObject({
    outcome: 'pass',
    evidence: 'tasks/get right after: cancelled; 600 ms later: cancelled',
  });
  expect(of('tasks.work-stops')?.outcome).toBe('pass');
  for (const rule of [
    'cancel.no-answer',
    'cancel.no-further-messages',
    'cancel.work-stops',
    'race.no-answer-after-cancel',
  ])
    expect(of(rule)?.outcome, rule).toBe('pass');
  expect(code).toBe(0);
}

describe('probe, ours in 2026-07-28', () => {
  it(
    'over stdio: every rule clean, the tasks extension included; exit 0',
    async () => {
      const { code, doc } = await probe([
        '--stdio',
        `${process.execPath} ${CLI} serve --threads 1 --tools ${TASK_TOOLS}`,
        ...CALLS,
        ...FAST,
        ...CLEAN_SAMPLES,
      ]);
      expectClean(doc, code);
      expect(doc.servers[0]!.verdicts.map((v) => v.rule)).not.toContain('http.post-cancel');
    },
    SLOW,
  );

  it(
    'over HTTP: every rule clean (the closed stream is the cancel), the tasks extension included; exit 0',
    async () => {
      const server = await startHttpServer(['--threads', '1', '--tools', TASK_TOOLS]);
      servers.push(server);
      const { code, doc } = await probe([
        '--url',
        String(server.url),
        '--pid',
        String(server.child.pid),
        ...CALLS,
        ...FAST,
        ...CLEAN_SAMPLES,
      ]);
      expectClean(doc, code);
      expect(doc.servers[0]!.verdicts.find((v) => v.rule === 'http.closed-stream-cancels')?.outcome).toBe('pass');
      // Without authentication a POSTed 2026 cancel is refused with a JSON-RPC error, and the call it named runs on.
      const post = doc.servers[0]!.verdicts.find((v) => v.rule === 'http.post-cancel');
      expect(post?.outcome).toBe('pass');
      expect(post?.evidence).toMatch(
        /^refused: the POST got HTTP 400 with JSON-RPC error -32600 "a 2026-07-28 request is cancelled by closing its response stream; notifications\/cancelled by POST is honoured only .*"; the call ran on \(still in flight 600 ms later; the probe then closed its stream\)$/,
      );
      expect(doc.servers[0]!.verdicts.map((v) => v.rule).filter((r) => r === 'http.post-cancel')).toHaveLength(1);
    },
    SLOW,
  );
});

describe('probe, 2026 tasks rules against a broken fixture', () => {
  const BROKEN = new URL('../dist-dev/test/fixtures/broken-server.js', import.meta.url).pathname;
  const args = (mode: string) => [
    '--stdio',
    `${process.execPath} ${BROKEN} --era 2026 --mode ${mode}`,
    '--tool',
    'long',
    '--args',
    '{"ms":3000}',
    '--task-tool',
    'long',
    '--task-args',
    '{"ms":4000}',
    ...FAST,
  ];

  it(
    'a task whose tasks/cancel is acknowledged while the work burns on: tasks.work-stops WARN (the extension lets cancellation be cooperative), the others pass; correct mode: all pass',
    async () => {
      const bad = await probe(args('task-burns-after-cancel'));
      const of = (doc: Doc, rule: string) => doc.servers[0]!.verdicts.find((v) => v.rule === rule);
      expect(of(bad.doc, 'tasks.cancel')).toMatchObject({
        outcome: 'pass',
        evidence: expect.stringMatching(/^acknowledged in .* \(resultType complete\)$/),
      });
      expect(of(bad.doc, 'tasks.ends-cancelled')?.outcome).toBe('pass');
      expect(of(bad.doc, 'tasks.work-stops')).toMatchObject({
        outcome: 'warn',
        evidence: expect.stringMatching(/^The work went on after the cancel: /),
      });
      const good = await probe(args('correct'));
      for (const rule of ['tasks.cancel', 'tasks.ends-cancelled', 'tasks.work-stops'])
        expect(of(good.doc, rule)?.outcome, rule).toBe('pass');
      expect(good.code).toBe(0);
    },
    SLOW,
  );
});
