/**
 * Issue 64: what a hostile client sends costs no more than its answer. The server is a real subprocess; its CPU and
 * peak RSS are read from /proc while compressed-body bombs arrive at once; endless and slow-dripped bodies and
 * headers must end with a closed socket. (One file for the HTTP cases, so they stay fixed.)
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { constants, brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, listening, MCP_HEADERS, type Started } from './http-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;

/** User + system CPU seconds of process `pid` (all its threads), from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** A /proc/<pid>/status figure in bytes (VmRSS, VmHWM). */
function statusBytes(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

/** Resolves once the process's CPU time stops growing for three samples in a row (its work is done). */
async function settledCpu(pid: number): Promise<number> {
  let last = cpuSeconds(pid);
  let still = 0;
  while (still < 3) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuSeconds(pid);
    still = now - last < 0.02 ? still + 1 : 0;
    last = now;
  }
  return last;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A POST of raw bytes with a Content-Encoding; a connection the server resets after answering still resolves. */
function postBytes(url: URL, body: Buffer, encoding: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { ...MCP_HEADERS, 'content-encoding': encoding, 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens a raw connection to the server. */
function raw(url: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What a raw connection received, once the server closed it. */
function closed(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.on('error', () => undefined); // a reset after the answer is a close too
  return new Promise((resolve) => socket.once('close', () => resolve(text)));
}

const head = (url: URL, extra: string) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${url.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${extra}\r\n`;

describe('compressed-body bombs (issue 64, defect 1)', () => {
  let server: Listening;
  const zero = Buffer.alloc(256 * 1024 * 1024);
  const bombs: { encoding: string; body: Buffer }[] = [];
  beforeAll(async () => {
    server = await listening(['--threads', '1']);
    const gzip = gzipSync(zero, { level: 9 });
    const deflate = deflateSync(zero, { level: 9 });
    const br = brotliCompressSync(zero, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
    const wide = brotliCompressSync(zero, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 24 },
    });
    for (let i = 0; i < 10; i++)
      bombs.push(
        { encoding: 'gzip', body: gzip },
        { encoding: 'deflate', body: deflate },
        { encoding: 'br', body: br },
      );
    bombs.push({ encoding: 'br', body: wide }, { encoding: 'br', body: wide });
  }, 60_000);
  afterAll(() => server.stop());

  it('32 bombs of 256 MB each (gzip, deflate, brotli) at once cost at most 2 s of CPU and 150 MB of peak RSS above idle, and the server keeps serving', async () => {
    const cpuBefore = await settledCpu(server.pid);
    const rssBefore = statusBytes(server.pid, 'VmRSS');
    // RSS polled while the bombs arrive, and the kernel's high-water mark (VmHWM) after: the peak either way.
    let polled = rssBefore;
    const poll = setInterval(() => (polled = Math.max(polled, statusBytes(server.pid, 'VmRSS'))), 10);
    const answers = await Promise.all(bombs.map((b) => postBytes(server.url, b.body, b.encoding)));
    const cpu = (await settledCpu(server.pid)) - cpuBefore;
    clearInterval(poll);
    const peak = Math.max(polled, statusBytes(server.pid, 'VmHWM'));
    process.stderr.write(
      `bombs: server CPU ${cpu.toFixed(2)} s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MB (${(rssBefore / 2 ** 20).toFixed(0)} MB before)\n`,
    );
    // The bounds: all 32 cost at most 2 s of CPU and 150 MB of peak RSS (above the idle server's own, which
    // is already about 135 MB with one worker thread and its standby).
    expect(cpu).toBeLessThanOrEqual(2);
    expect(peak - rssBefore).toBeLessThanOrEqual(150 * 1024 * 1024);
    for (const a of answers) {
      // Refused: over the limit once decoded, a window wider than a 4 MiB body needs, or no decode slot free.
      expect([413, 503]).toContain(a.status);
      expect(a.headers.connection).toBe('close');
      if (a.status === 503) expect(a.headers['retry-after']).toBe('1');
    }
    expect(answers.filter((a) => a.status === 413).length).toBeGreaterThanOrEqual(8);
    for (const a of answers.slice(30))
      expect((JSON.parse(a.text) as { error: { message: string } }).error.message).toMatch(
        /brotli window|too many compressed/,
      );
    const { client } = await httpClient(server.url);
    try {
      expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 120_000);

  /** Sends an endless chunked body of `encoding`; `stopAtAnswer`: stops writing once an answer arrives (as clients do). */
  async function endless(encoding: string, stopAtAnswer: boolean): Promise<{ text: string; written: number }> {
    const socket = await raw(server.url);
    const done = closed(socket);
    let answered = false;
    socket.once('data', () => (answered = true));
    socket.write(head(server.url, `Transfer-Encoding: chunked\r\nContent-Encoding: ${encoding}\r\n`));
    const piece = encoding === 'gzip' ? gzipSync(Buffer.alloc(1024 * 1024)) : Buffer.alloc(64 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    let written = 0;
    let open = true;
    void done.then(() => (open = false));
    // Writes as fast as the server reads, until it closes the socket (or the test's own 256 MB bound).
    while (open && !(stopAtAnswer && answered) && written < 256 * 1024 * 1024) {
      written += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), done]);
      else await new Promise((r) => setImmediate(r));
    }
    return { text: await done, written };
  }

  it('an endless chunked body, plain or gzip, gets its 413 with Connection: close, and the server closes the socket', async () => {
    for (const encoding of ['identity', 'gzip']) {
      const { text, written } = await endless(encoding, true);
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).toMatch(/connection: close/i);
      expect(written).toBeLessThan(64 * 1024 * 1024);
    }
  }, 60_000);

  it('a client that never stops sending after the 413 is cut off: the server reads a bounded amount, then closes', async () => {
    for (const encoding of ['identity', 'gzip']) {
      const { written } = await endless(encoding, false);
      expect(written).toBeLessThan(64 * 1024 * 1024);
    }
  }, 60_000);
});

describe('bombs without the token (issue 64, defect 1: nothing decoded before authentication)', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1'], { MCP_CANCEL_POOL_AUTH_TOKEN: 'adversarial-token-0123456789' });
  });
  afterAll(() => server.stop());

  it('a compressed body without the bearer token gets 401 with Connection: close, and is never decoded', async () => {
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    const cpuBefore = await settledCpu(server.pid);
    const answers = await Promise.all(Array.from({ length: 16 }, () => postBytes(server.url, bomb, 'gzip')));
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.headers.connection).toBe('close');
    }
    const cpu = (await settledCpu(server.pid)) - cpuBefore;
    process.stderr.write(`unauthenticated bombs: server CPU ${cpu.toFixed(2)} s\n`);
    expect(cpu).toBeLessThanOrEqual(1);
  }, 120_000);
});

describe('slow drip (issue 64, defect 1)', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1']);
  });
  afterAll(() => server.stop());

  /** Writes `text` one byte per 200 ms until the server closes the socket: how many bytes went, and what came back. */
  async function drip(prefix: string, text: string): Promise<{ sent: number; answer: string }> {
    const socket = await raw(server.url);
    const done = closed(socket);
    socket.write(prefix);
    let open = true;
    void done.then(() => (open = false));
    let sent = 0;
    while (open && sent < text.length) {
      socket.write(text[sent++]!);
      // The drip's pace is the point (a byte per 200 ms); the socket's close ends the wait at once.
      await Promise.race([new Promise((r) => setTimeout(r, 200)), done]);
    }
    return { sent, answer: await done };
  }

  it('headers dripped one byte at a time are cut off (headersTimeout) long before they end', async () => {
    const { sent, answer } = await drip('POST /mcp HTTP/1.1\r\n', `X-Slow: ${'a'.repeat(600)}\r\n\r\n`);
    expect(sent).toBeLessThan(600);
    expect(answer).toMatch(/^(HTTP\/1\.1 408 |$)/);
  }, 60_000);

  it('a body dripped under the minimum rate gets 408 and a closed socket', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(400) } });
    const { sent, answer } = await drip(head(server.url, `Content-Length: ${body.length}\r\n`), body);
    expect(sent).toBeLessThan(body.length);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/request body too slow/);
  }, 60_000);
});
