/**
 * The project's probe (`mcp-cancel-pool probe`) on examples/embed/server.mjs:
 * every rule PASSes in both eras, over stdio and Streamable HTTP. Beside it,
 * the plain variant (examples/embed/plain-server.mjs: the SDK and Piscina
 * with the request's signal, the SDK's HTTP defaults) FAILs over 2025 HTTP,
 * as docs/embedding.md says: its `notifications/cancelled` POST reaches a
 * fresh server that never saw the call, so the work runs on and is answered.
 */
import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { EXAMPLE, PLAIN_EXAMPLE, startHttpExample, type HttpExample } from './embed-clients.js';

const FAST = ['--samples', '3', '--cancel-after-ms', '150', '--settle-ms', '600', '--quiet-ms', '150', '--storm', '8'];
const TOOLS = ['--tool', 'spin', '--args', '{"ms":5000}', '--quick-tool', 'spin', '--quick-args', '{"ms":0}'];
const SLOW = 300_000;

interface Report {
  result: string;
  servers: { era: string | null; verdicts: { rule: string; outcome: string; evidence: string }[] }[];
}

function probe(args: string[]): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, 'probe', '--no-progress', '--format', 'json', ...FAST, ...TOOLS, ...args],
      { timeout: SLOW - 10_000 },
      (_error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as Report);
        } catch {
          reject(new Error(`probe gave no report: ${stderr}`));
        }
      },
    );
  });
}

/** Every rule that did not pass, as `era rule: evidence`. */
const notPassed = (r: Report) =>
  r.servers.flatMap((s) =>
    s.verdicts.filter((v) => v.outcome !== 'pass').map((v) => `${s.era} ${v.rule} ${v.outcome}: ${v.evidence}`),
  );

let running: HttpExample[] = [];
afterEach(async () => {
  await Promise.all(running.map((h) => h.stop()));
  running = [];
});

describe('the probe on the embed example', () => {
  it(
    'stdio: every rule PASSes, in both eras',
    async () => {
      const report = await probe(['--stdio', `${process.execPath} ${EXAMPLE} --threads 1`]);
      expect(report.servers.map((s) => s.era)).toEqual(['2025', '2026']);
      expect(notPassed(report)).toEqual([]);
      expect(report.result).toBe('pass');
    },
    SLOW,
  );

  it(
    'HTTP: every rule PASSes, in both eras (the 2025 dropped stream and the 2026 closed stream included)',
    async () => {
      const http = await startHttpExample(['--threads', '1']);
      running.push(http);
      const report = await probe(['--url', http.url, '--pid', String(http.child.pid)]);
      expect(report.servers.map((s) => s.era)).toEqual(['2025', '2026']);
      expect(notPassed(report)).toEqual([]);
      const rules = report.servers.flatMap((s) => s.verdicts.map((v) => `${s.era} ${v.rule}`));
      expect(rules).toEqual(
        expect.arrayContaining([
          '2025 http.dropped-stream',
          '2026 http.closed-stream-cancels',
          '2026 http.post-cancel',
        ]),
      );
    },
    SLOW,
  );

  it(
    'the plain SDK + Piscina variant over HTTP: 2025 cancels are lost (answered anyway, the work runs on); 2026 passes',
    async () => {
      const http = await startHttpExample(['--threads', '1'], PLAIN_EXAMPLE);
      running.push(http);
      const report = await probe(['--url', http.url, '--pid', String(http.child.pid)]);
      const failed = report.servers.flatMap((s) =>
        s.verdicts.filter((v) => v.outcome === 'fail').map((v) => `${s.era} ${v.rule}`),
      );
      expect(failed).toEqual(expect.arrayContaining(['2025 cancel.no-answer', '2025 cancel.work-stops']));
      expect(failed.filter((f) => f.startsWith('2026'))).toEqual([]);
      // The SDK's handler takes a POSTed 2026 cancel with 202 and lets the call run on; the example refuses it.
      const post = report.servers.find((s) => s.era === '2026')?.verdicts.find((v) => v.rule === 'http.post-cancel');
      expect(post).toMatchObject({
        outcome: 'warn',
        evidence: expect.stringMatching(/^neither .*: the POST got HTTP 202/),
      });
      expect(report.result).toBe('fail');
    },
    SLOW,
  );
});
