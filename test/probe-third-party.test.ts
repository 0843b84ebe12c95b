/**
 * The probe against servers nobody here wrote, installed as exact
 * devDependencies: @modelcontextprotocol/server-everything and a server built
 * with fastmcp (test/fixtures/fastmcp-server.ts), over stdio and Streamable
 * HTTP; and ours over HTTP. What each asserts is what PROBE.md reports.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLEAN_SAMPLES, CLI, startHttpServer } from './helpers.js';
import { freePort } from '../bench/lib/free-port.js';

const EVERYTHING = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const FASTMCP = fileURLToPath(new URL('../dist-dev/test/fixtures/fastmcp-server.js', import.meta.url));
const FAST = ['--samples', '2', '--cancel-after-ms', '300', '--settle-ms', '700', '--quiet-ms', '150', '--storm', '6'];

function probe(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'probe', '--no-progress', ...args], { timeout: 200_000 }, (error, stdout) => {
      const code = error ? (error as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : null, stdout });
    });
  });
}
/** Each rule's verdict in a probe's text report, in order: `PASS cancel.no-answer`, … */
const verdicts = (report: string) =>
  [...report.matchAll(/^ {2}(PASS|FAIL|WARN|skip|INCONCLUSIVE) +(\S+)/gm)].map((m) => `${m[1]} ${m[2]}`);
/** The "Real output" docs/probe.md shows for server-everything. */
const DOC_REPORT = /Real output \(server-everything[^]*?```text\n([^]*?)```/.exec(
  readFileSync(new URL('../docs/probe.md', import.meta.url), 'utf8'),
)![1]!;
const outcome = (stdout: string, rule: string) =>
  new RegExp(`^\\s+(PASS|FAIL|WARN|skip|INCONCLUSIVE)\\s+${rule.replace('.', '\\.')}\\s`, 'm').exec(stdout)?.[1];

/** Each case starts several processes; on a loaded 2-core machine one node start takes seconds. */
const SLOW = 240_000;

describe('probe, third-party servers', () => {
  it(
    'server-everything 2026.8.31: no answer after a cancel, but progress goes on after it: the work went on (FAIL, whatever the CPU), exit 1',
    async () => {
      const r = await probe([
        '--stdio',
        `${process.execPath} ${EVERYTHING} stdio`,
        '--tool',
        'trigger-long-running-operation',
        '--args',
        '{"duration":10,"steps":100}',
        '--quick-tool',
        'echo',
        '--quick-args',
        '{"message":"hi"}',
        ...FAST,
      ]);
      expect(outcome(r.stdout, 'cancel.no-answer')).toBe('PASS');
      // A 2025-11-25 server: 2026-07-28 is not offered (its SDK 1.32 answers server/discover with an error).
      expect(r.stdout).toMatch(/note\s+not offered: 2026-07-28: server\/discover/);
      expect(outcome(r.stdout, 'cancel.no-further-messages')).toBe('WARN');
      expect(r.stdout).toMatch(
        /2 of 2 cancelled calls sent progress after the server had read the cancel and answered 2 marker/,
      );
      // Its tool sleeps between steps: CPU cannot see the work, the progress it keeps sending does.
      expect(r.stdout).toMatch(
        /FAIL\s+cancel\.work-stops\s+The work went on after the cancel: the server sent progress for 2 of 2 cancelled calls after it had read the cancel .*"method":"notifications\/progress"/,
      );
      expect(r.code).toBe(1);
      // docs/probe.md's "Real output" of this server (a run with the default samples): the same verdicts, rule by rule.
      expect(verdicts(DOC_REPORT)).toEqual(verdicts(r.stdout));
      expect(verdicts(DOC_REPORT)).toContain('FAIL cancel.work-stops');
    },
    SLOW,
  );

  it(
    'fastmcp 4.20.16, a tool that honours its signal: clean; one that ignores it: "the work went on", exit 1',
    async () => {
      const good = await probe([
        '--stdio',
        `${process.execPath} ${FASTMCP}`,
        '--tool',
        'spin',
        '--args',
        '{"ms":5000}',
        '--quick-tool',
        'quick',
        ...FAST,
        ...CLEAN_SAMPLES,
      ]);
      expect(good.stdout).not.toMatch(/FAIL/);
      expect(good.code).toBe(0);
      const bad = await probe([
        '--stdio',
        `${process.execPath} ${FASTMCP}`,
        '--tool',
        'spin_ignoring',
        '--args',
        '{"ms":5000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(bad.stdout).toMatch(
        /FAIL\s+cancel\.work-stops\s+The work went on after the cancel: (the server kept using CPU|a thread of the server kept computing)/,
      );
      expect(outcome(bad.stdout, 'cancel.no-answer')).toBe('PASS');
      expect(bad.code).toBe(1);
    },
    SLOW,
  );

  it(
    'fastmcp over Streamable HTTP: an explicit cancel stops the work; a dropped response stream does not (warning)',
    async () => {
      const port = await freePort();
      const child = spawn(process.execPath, [FASTMCP, '--http', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
      try {
        await new Promise<void>((resolve, reject) => {
          let text = '';
          child.stderr.on('data', (d: Buffer) => {
            text += d.toString();
            if (text.includes('listening on')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`fastmcp exited ${code}: ${text}`)));
        });
        const r = await probe([
          '--url',
          `http://127.0.0.1:${port}/mcp`,
          '--pid',
          String(child.pid),
          '--tool',
          'spin',
          '--args',
          '{"ms":5000}',
          '--quick-tool',
          'quick',
          ...FAST,
          ...CLEAN_SAMPLES,
        ]);
        expect(outcome(r.stdout, 'cancel.work-stops')).toBe('PASS');
        expect(outcome(r.stdout, 'http.cancel-own-post')).toBe('PASS');
        expect(r.stdout).toMatch(/WARN\s+http\.dropped-stream\s+work went on after the drop/);
      } finally {
        child.kill('SIGKILL');
      }
    },
    SLOW,
  );

  it(
    'ours over Streamable HTTP: clean, the dropped stream included',
    async () => {
      const server = await startHttpServer(['--threads', '1']);
      try {
        const r = await probe([
          '--url',
          server.url.href,
          '--pid',
          String(server.child.pid),
          '--tool',
          'spin',
          '--args',
          '{"ms":5000}',
          '--quick-tool',
          'spin',
          '--quick-args',
          '{"ms":3}',
          '--era',
          '2025',
          ...FAST,
          ...CLEAN_SAMPLES,
        ]);
        // With the marker chain, a report that crossed the cancel is no longer mistaken for one sent after it.
        expect(r.stdout).not.toMatch(/FAIL|ERROR/);
        for (const rule of [
          'cancel.no-answer',
          'cancel.work-stops',
          'cancel.no-further-messages',
          'race.no-answer-after-cancel',
          'http.cancel-own-post',
          'http.dropped-stream',
          'ping.after',
        ])
          expect(outcome(r.stdout, rule), rule).toBe('PASS');
        expect(r.code).toBe(0);
      } finally {
        await server.stop();
      }
    },
    SLOW,
  );
});
