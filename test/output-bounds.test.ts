/**
 * Issue 56: bounded memory for answers nobody reads, per stream and in
 * total, on both transports (src/transport/output-budget.ts). Real server
 * processes; the stalled clients are raw sockets that send a request and
 * never read, as in the report. Memory is asserted with generous bounds,
 * and otherwise what the server decided: streams closed, calls cancelled,
 * bytes held. Before: a stalled stream was held for good, and stdio kept
 * every answer.
 */
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { initializeBody, messagesIn, post } from './http-helpers.js';
import { LineServer } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';

const BIG = fileURLToPath(new URL('../dist-dev/test/fixtures/big-output-tools.js', import.meta.url));
const MiB = 1024 * 1024;
const BOUNDS = ['--max-unread-output-bytes', String(16 * MiB), '--unread-timeout-ms', '3000'];

let servers: HttpServerProcess[] = [];
let sockets: Socket[] = [];
let lines: LineServer[] = [];
afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets = [];
  for (const s of lines) s.kill();
  lines = [];
  for (const s of servers) await s.stop();
  servers = [];
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function server(args: string[]): Promise<HttpServerProcess> {
  const s = await startHttpServer(['--threads', '2', '--tools', BIG, ...BOUNDS, ...args]);
  servers.push(s);
  return s;
}

/** A raw socket that sends one POST and never reads: what it is sent stays in the server. */
function stalled(url: URL, body: unknown, headers: Record<string, string>): Socket {
  const text = JSON.stringify(body);
  const s = connect(Number(url.port), '127.0.0.1');
  s.on('error', () => undefined);
  const head = Object.entries({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  s.write(
    `POST ${url.pathname} HTTP/1.1\r\nhost: 127.0.0.1:${url.port}\r\n${head}content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  s.pause();
  sockets.push(s);
  return s;
}

/** `executor://stats` over a 2026 POST of its own (read by a reader). */
async function stats(
  url: URL,
): Promise<Record<'completed' | 'cancelled' | 'running' | 'outputStreamsClosed' | 'unreadOutputBytes', number>> {
  const body = modernRequest(`stats-${Math.random()}`, 'resources/read', { uri: 'executor://stats' });
  const r = await post(url, body, modernHeaders(body));
  return JSON.parse((messagesIn(r.text)[0]!.result as { contents: { text: string }[] }).contents[0]!.text) as Awaited<
    ReturnType<typeof stats>
  >;
}

const bigCall = (id: string | number, args: Record<string, unknown>, meta: Record<string, unknown> = {}) =>
  modernRequest(id, 'tools/call', {
    name: 'big_text',
    arguments: args,
    ...(Object.keys(meta).length > 0 && { _meta: meta }),
  });

describe('over HTTP', () => {
  it('100 stalled 2026 clients of ~1 MB, twice: every call answered, the bytes held stay within the total bound and go to none once they go, RSS levels off; a reader gets 3 MB', async () => {
    const s = await server([]);
    const pid = s.child.pid!;
    await stats(s.url);
    const start = rssMb(pid);
    let peak = start;
    let completed = 0;
    /** One wave: 100 stalled clients and a reader; returns RSS's peak once they are gone. */
    const wave = async (w: number): Promise<number> => {
      peak = rssMb(pid);
      const body = (i: number) => bigCall(`w${w}-${i}`, { bytes: 1_000_000 });
      for (let i = 0; i < 100; i++) stalled(s.url, body(i), modernHeaders(body(i)));
      // A client that reads, meanwhile: more than the per-stream bound (1 MiB), all of it.
      const reader = bigCall(`reader-${w}`, { bytes: 3 * MiB });
      const read = await post(s.url, reader, modernHeaders(reader));
      expect((messagesIn(read.text)[0]!.result as { content: { text: string }[] }).content[0]!.text).toHaveLength(
        3 * MiB,
      );
      completed += 101;
      let st: Awaited<ReturnType<typeof stats>>;
      await until(
        async () => {
          peak = Math.max(peak, rssMb(pid));
          return (st = await stats(s.url)).completed >= completed;
        },
        120_000,
        `wave ${w}: all 101 calls completed`,
      );
      // Sampled over 4 s while the stalled clients hold their answers: the bound must hold throughout, not once.
      for (let i = 0; i < 8; i++) {
        await sleep(500);
        peak = Math.max(peak, rssMb(pid));
        st = await stats(s.url);
        expect(st.unreadOutputBytes).toBeLessThanOrEqual(16 * MiB + MiB);
      }
      expect(peak - start).toBeLessThan(600); // levels off: 100 answers of 1 MB, generously
      for (const sock of sockets) sock.destroy();
      sockets = [];
      // Gone: the server holds none of their bytes (what it decides)...
      await until(async () => (await stats(s.url)).unreadOutputBytes === 0, 30_000, `wave ${w}: no bytes held`);
      return peak;
    };
    // What a wave leaves in RSS once it is gone is the allocator's and the worker threads' collections', not ours to
    // assert: on Node 26, 160-196 MB at start, 258-342 MB for 25 s after a wave, then 194-295 MB; a second wave
    // peaked 77 MB above the first once in CI, under load. What the server holds of them is asserted: nothing.
    const first = await wave(1);
    const second = await wave(2);
    console.log(`RSS: start ${start.toFixed(0)} MB, peaks ${first.toFixed(0)} and ${second.toFixed(0)} MB`);
    expect(second - start).toBeLessThan(600);
  }, 480_000);

  it('a 2026 call whose progress nobody reads: its stream is closed past the unread timeout, the call cancelled through the compare-exchange', async () => {
    const s = await server([]);
    const before = await stats(s.url);
    const body = bigCall('p', { bytes: 1, ms: 120_000, progressBytes: 256 * 1024 }, { progressToken: 'p' });
    const sock = stalled(s.url, body, modernHeaders(body));
    const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
    await until(
      async () => (await stats(s.url)).outputStreamsClosed === before.outputStreamsClosed + 1,
      60_000,
      'the stalled stream closed',
    );
    sock.resume(); // what the kernel still holds is read, then the server's close
    await closed;
    await until(
      async () => {
        const st = await stats(s.url);
        return st.cancelled === before.cancelled + 1 && st.running === 0;
      },
      30_000,
      'the call cancelled, its work stopped',
    );
  }, 120_000);

  it("a 2025 session's GET stream that nobody reads is closed; the session goes on", async () => {
    const s = await server([]);
    const opened = await post(s.url, initializeBody('open'));
    const sid = opened.headers['mcp-session-id'] as string;
    const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await post(s.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    // The GET stream, never read; a task's progress goes there (its POST was answered with the task).
    const get = connect(Number(s.url.port), '127.0.0.1');
    get.on('error', () => undefined);
    sockets.push(get);
    get.write(
      `GET ${s.url.pathname} HTTP/1.1\r\nhost: 127.0.0.1:${s.url.port}\r\naccept: text/event-stream\r\nmcp-session-id: ${sid}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n`,
    );
    get.pause();
    const getClosed = new Promise<void>((resolve) => get.once('close', () => resolve()));
    await sleep(300);
    const before = await stats(s.url);
    const created = await post(
      s.url,
      {
        jsonrpc: '2.0',
        id: 't',
        method: 'tools/call',
        params: {
          name: 'big_text',
          arguments: { bytes: 1, ms: 60_000, progressBytes: 256 * 1024 },
          task: { ttl: 60_000 },
          _meta: { progressToken: 'tp' },
        },
      },
      session,
    );
    expect(messagesIn(created.text)[0]!.result).toMatchObject({ task: { status: 'working' } });
    await until(
      async () => (await stats(s.url)).outputStreamsClosed === before.outputStreamsClosed + 1,
      60_000,
      'the GET stream closed',
    );
    get.resume();
    await getClosed;
    // The session itself is not gone: it still answers.
    const listed = await post(s.url, { jsonrpc: '2.0', id: 'l', method: 'tasks/list' }, session);
    expect(messagesIn(listed.text)[0]!.result).toMatchObject({
      tasks: [expect.objectContaining({ status: 'working' })],
    });
  }, 120_000);
});

describe('over stdio', () => {
  it('20 calls of 4 MB written at once, stdout never read: the connection is closed past the total bound, its calls cancelled, exit 0 with one line', async () => {
    const s = new LineServer(['--threads', '2', '--spare-threads', '0', '--tools', BIG, ...BOUNDS]);
    lines.push(s);
    await s.initialize();
    const start = s.rssMb();
    s.stopReading();
    for (let i = 0; i < 20; i++) s.send(bigCall(i, { bytes: 4 * MiB, ms: 50 * i }));
    let peak = start;
    const exited = s.exited;
    let code: number | null | undefined;
    void exited.then((c) => (code = c));
    while (code === undefined) {
      try {
        peak = Math.max(peak, s.rssMb());
      } catch {
        break; // gone between the check and the read
      }
      await sleep(100);
    }
    expect(await exited).toBe(0);
    expect(s.stderr).toMatch(
      /shutting down \(output not read: all streams together held more than 16777216 bytes of unread output, this one unread\)/,
    );
    expect(peak - start).toBeLessThan(500); // 20 × 4 MB, generously: it stopped well short of holding them all
  }, 120_000);

  it('no request is read while output beyond the bound is unread; once read again, every one is answered', async () => {
    const s = new LineServer(['--threads', '2', '--spare-threads', '0', '--tools', BIG, '--health-port', '0']);
    lines.push(s);
    await s.initialize();
    await s.until(() => /health and metrics on (http:\/\/\S+)\/healthz/.test(s.stderr), 30_000, 'the health line');
    const metrics = /health and metrics on (http:\/\/\S+)\/healthz/.exec(s.stderr)![1]! + '/metrics';
    const spins = async () =>
      Number(
        /^mcp_cancel_pool_calls_total\{[^}]*tool="spin"[^}]*outcome="completed"[^}]*\} (\d+)/m.exec(
          await (await fetch(metrics)).text(),
        )?.[1] ?? 0,
      );
    s.stopReading();
    s.send(bigCall('big', { bytes: 8 * MiB }));
    await sleep(1500); // the answer is written and backs up
    // Five more in one write: none of them may be taken in while the answer above is unread.
    s.child.stdin.write(
      Array.from(
        { length: 5 },
        (_, i) =>
          JSON.stringify({
            jsonrpc: '2.0',
            id: `after-${i}`,
            method: 'tools/call',
            params: { name: 'spin', arguments: { ms: 1 } },
          }) + '\n',
      ).join(''),
    );
    await sleep(1500);
    expect(await spins()).toBe(0);
    s.resumeReading();
    for (let i = 0; i < 5; i++) expect((await s.answer(`after-${i}`, 60_000)).result).toBeDefined();
    expect(await spins()).toBe(5);
  }, 120_000);
});
