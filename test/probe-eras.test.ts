/**
 * The probe in the 2026-07-28 era, and `--era auto` reporting each era a
 * server offers: deliberately broken 2026 fixtures (stdio: progress after the
 * cancel; HTTP: work and progress going on after the response stream closed)
 * must FAIL, their correct modes pass (and `http.post-cancel` tells a POSTed cancel ignored from one honoured); a server on the SDK 2.x `McpServer`
 * (third-party code, the SDK's defaults) is probed in both eras.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const BROKEN = fileURLToPath(new URL('../dist-dev/test/fixtures/broken-server.js', import.meta.url));
const BROKEN_HTTP = fileURLToPath(new URL('../dist-dev/test/fixtures/broken-http-2026.js', import.meta.url));
const SDK2 = fileURLToPath(new URL('../dist-dev/test/fixtures/sdk2-server.js', import.meta.url));
const FAST = ['--samples', '2', '--cancel-after-ms', '150', '--settle-ms', '600', '--quiet-ms', '150', '--storm', '8'];

function probe(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'probe', '--no-progress', ...args],
      { timeout: 200_000 },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

interface Verdicts {
  result: string;
  servers: {
    era: string | null;
    protocolVersion: string | null;
    error: string | null;
    verdicts: { rule: string; outcome: string; evidence: string }[];
  }[];
}
const probeJson = async (args: string[]) => {
  const r = await probe([...args, '--format', 'json']);
  return { code: r.code, doc: JSON.parse(r.stdout) as Verdicts };
};
const outcomeOf = (doc: Verdicts, era: string, rule: string) =>
  doc.servers.find((s) => s.era === era)?.verdicts.find((v) => v.rule === rule);

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** Starts an HTTP fixture and waits for its "listening on URL" line. */
async function httpFixture(args: string[]): Promise<{ url: string; pid: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited ${code}: ${text}`)));
  });
  return { url, pid: child.pid! };
}

/** Each case starts several processes; on a loaded 2-core machine one node start takes seconds. */
const SLOW = 240_000;

describe('probe, 2026-07-28', () => {
  it(
    'stdio: a server that keeps sending progress after notifications/cancelled FAILs "no further messages" (a MUST in 2026), exit 1; --era auto finds only 2026',
    async () => {
      const { code, doc } = await probeJson([
        '--stdio',
        `${process.execPath} ${BROKEN} --era 2026 --mode progress-after-cancel`,
        '--tool',
        'long',
        '--args',
        '{"ms":3000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(doc.servers.map((s) => s.era)).toEqual(['2026']);
      expect(doc.servers[0]!.protocolVersion).toBe('2026-07-28');
      const v = outcomeOf(doc, '2026', 'cancel.no-further-messages');
      expect(v?.outcome).toBe('fail');
      expect(v?.evidence).toMatch(
        /[12] of 2 cancelled calls sent progress after the server had read the cancel and answered 2 marker/,
      );
      expect(outcomeOf(doc, '2026', 'cancel.no-answer')?.outcome).toBe('pass');
      // Its work loop stopped, its reports did not: on the wire the progress is the only evidence, and it says the work went on.
      expect(outcomeOf(doc, '2026', 'cancel.work-stops')).toMatchObject({
        outcome: 'fail',
        evidence: expect.stringMatching(
          /^The work went on after the cancel: the server sent progress for [12] of 2 cancelled calls after it had read the cancel .*"method":"notifications\/progress"/,
        ),
      });
      expect(outcomeOf(doc, '2026', 'ping.while-running')?.evidence).toMatch(/× server\/discover/);
      expect(code).toBe(1);
    },
    SLOW,
  );

  it(
    'stdio: the same fixture without its defect passes, exit 0; asking for 2025 exits 2 (not offered)',
    async () => {
      const args = [
        '--stdio',
        `${process.execPath} ${BROKEN} --era 2026 --mode correct`,
        '--tool',
        'long',
        '--args',
        '{"ms":3000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ];
      const { code, doc } = await probeJson(args);
      expect(doc.servers[0]!.verdicts.filter((v) => v.outcome === 'fail')).toEqual([]);
      expect(code).toBe(0);
      const old = await probe([...args, '--era', '2025']);
      expect(old.stdout).toMatch(/ERROR\s+the probe could not finish: 2025-11-25: .*-32022/);
      expect(old.code).toBe(2);
    },
    SLOW,
  );

  it(
    'HTTP: a server that goes on working and sending progress after its response stream closed FAILs "closed stream is a cancel", exit 1; its correct mode passes',
    async () => {
      const bad = await httpFixture([BROKEN_HTTP, '--mode', 'progress-after-close']);
      const r = await probeJson([
        '--url',
        bad.url,
        '--pid',
        String(bad.pid),
        '--tool',
        'long',
        '--args',
        '{"ms":3000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(r.doc.servers.map((s) => s.era)).toEqual(['2026']);
      expect(outcomeOf(r.doc, '2026', 'http.closed-stream-cancels')?.outcome).toBe('fail');
      expect(outcomeOf(r.doc, '2026', 'http.closed-stream-cancels')?.evidence).toMatch(
        /The work went on after the cancel: (the server kept using CPU|a thread of the server kept computing)/,
      );
      // A POSTed cancel it takes with 202 and ignores: the client believes it cancelled (information, not a failure).
      expect(outcomeOf(r.doc, '2026', 'http.post-cancel')).toMatchObject({
        outcome: 'warn',
        evidence:
          'neither refused with an error nor honoured: the POST got HTTP 202 with no body; the call ran on (still in flight 600 ms later; the probe then closed its stream)',
      });
      expect(r.code).toBe(1);
      const good = await httpFixture([BROKEN_HTTP, '--mode', 'correct']);
      const g = await probeJson([
        '--url',
        good.url,
        '--pid',
        String(good.pid),
        '--tool',
        'long',
        '--args',
        '{"ms":3000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(outcomeOf(g.doc, '2026', 'http.closed-stream-cancels')?.outcome).toBe('pass');
      expect(outcomeOf(g.doc, '2026', 'http.post-cancel')).toMatchObject({
        outcome: 'pass',
        evidence:
          "honoured: the POST got HTTP 202 with no body; the server then closed the call's stream with no answer",
      });
      expect(g.code).toBe(0);
    },
    SLOW,
  );

  it(
    'SDK 2.4 McpServer over stdio (serveStdio, both eras): both reported, both clean',
    async () => {
      const { code, doc } = await probeJson([
        '--stdio',
        `${process.execPath} ${SDK2}`,
        '--tool',
        'spin',
        '--args',
        '{"ms":5000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(doc.servers.map((s) => s.era)).toEqual(['2025', '2026']);
      for (const s of doc.servers)
        expect(
          s.verdicts.filter((v) => v.outcome === 'fail'),
          s.era ?? '',
        ).toEqual([]);
      expect(outcomeOf(doc, '2026', 'cancel.no-further-messages')?.outcome).toBe('pass');
      expect(code).toBe(0);
    },
    SLOW,
  );

  it(
    "SDK 2.4 createMcpHandler with its default legacy mode over HTTP: 2026 closed stream cancels; a 2025 client's cancel never reaches the call (answered, work goes on)",
    async () => {
      const server = await httpFixture([SDK2, '--http', '0']);
      const { code, doc } = await probeJson([
        '--url',
        server.url,
        '--pid',
        String(server.pid),
        '--tool',
        'spin',
        '--args',
        '{"ms":3000}',
        '--quick-tool',
        'quick',
        ...FAST,
      ]);
      expect(doc.servers.map((s) => s.era)).toEqual(['2025', '2026']);
      expect(outcomeOf(doc, '2026', 'http.closed-stream-cancels')?.outcome).toBe('pass');
      expect(outcomeOf(doc, '2026', 'cancel.no-further-messages')?.outcome).toBe('pass');
      expect(outcomeOf(doc, '2025', 'cancel.work-stops')?.outcome).toBe('fail');
      expect(outcomeOf(doc, '2025', 'cancel.no-answer')?.outcome).toBe('fail');
      expect(code).toBe(1);
    },
    SLOW,
  );
});
