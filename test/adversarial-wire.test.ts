/**
 * Issue 64, defect 4: what a client puts in the request line and headers never costs a 500 or a stack trace in the
 * log. An absolute-form target is served as RFC 9112 §3.2.2 asks (its host checked as the Host header is), and a
 * small deterministic fuzz of request lines and headers, each on a raw connection to the server as a real
 * subprocess, gets no 500 and leaves no stack on stderr.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeBody, listening, type Started } from './http-helpers.js';
import { until } from './helpers.js';
import { modernRequest } from './modern-helpers.js';
import { openSession, postAs } from './auth-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;

/** Sends `bytes` on a fresh connection and resolves with all the server wrote until it closed (or 10 s). */
function exchange(port: string, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // One answer is enough: the status line and headers, and a body of the declared length.
      const at = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, at));
      if (at >= 0 && length && text.length >= at + 4 + Number(length[1])) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.write(bytes);
  });
}

const status = (answer: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0);

/** A small seeded generator (mulberry32), so a failure names a case that can be run again. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('request line and headers (issue 64, defect 4)', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--log-format', 'json']);
  });
  afterAll(() => server.stop());

  const body = JSON.stringify(initializeBody());
  const postTo = (target: string, host: string) =>
    `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;

  it('an absolute-form target is served, its host checked as the Host header is: a foreign one gets the same 403', async () => {
    const here = `127.0.0.1:${server.url.port}`;
    const ours = await exchange(server.url.port, postTo(`http://${here}/mcp`, 'evil.example'));
    expect(status(ours)).toBe(200);
    expect(ours).toMatch(/mcp-session-id: /i);
    const foreignTarget = await exchange(server.url.port, postTo('http://evil.example/mcp', here));
    const foreignHost = await exchange(server.url.port, postTo('/mcp', 'evil.example'));
    expect(status(foreignTarget)).toBe(403);
    expect(status(foreignHost)).toBe(403);
    expect(foreignTarget.slice(foreignTarget.indexOf('\r\n\r\n'))).toBe(
      foreignHost.slice(foreignHost.indexOf('\r\n\r\n')),
    );
    for (const target of ['ftp://127.0.0.1/mcp', 'http://user:pw@127.0.0.1/mcp', 'mailto:x@y', '*'])
      expect(status(await exchange(server.url.port, postTo(target, here)))).toBe(400);
    expect(server.stderr()).not.toMatch(/\n\s+at /);
  });

  it('a POST whose Content-Type is not JSON gets 415 with a JSON-RPC error, not "no session"', async () => {
    const here = `127.0.0.1:${server.url.port}`;
    for (const type of ['Content-Type: text/plain\r\n', 'Content-Type: application/x-www-form-urlencoded\r\n', '']) {
      const answer = await exchange(
        server.url.port,
        `POST /mcp HTTP/1.1\r\nHost: ${here}\r\n${type}Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      expect(status(answer)).toBe(415);
      const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
        error: { code: number; message: string };
      };
      expect(json.error.code).toBe(-32600);
      expect(json.error.message).toMatch(/unsupported content type .*application\/json/);
    }
  });

  it('a fuzz of 300 request lines and header sets gets no 500, and the log holds no stack and only JSON lines', async () => {
    const next = random(64);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const here = `127.0.0.1:${server.url.port}`;
    const junk = () =>
      Array.from({ length: 1 + Math.floor(next() * 40) }, () =>
        String.fromCharCode(pick([0x20 + Math.floor(next() * 95), 0x80 + Math.floor(next() * 128), 0x09])),
      ).join('');
    const methods = ['POST', 'GET', 'DELETE', 'PUT', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE', 'post', 'P0ST', 'MKCOL'];
    const targets = () => [
      '/mcp',
      '/mcp/',
      '/MCP',
      '/mcp?x=1',
      `http://${here}/mcp`,
      `HTTP://${here}/mcp`,
      `https://${here}/mcp`,
      'http://evil.example/mcp',
      `http://${here}:99999/mcp`,
      'http://[::1/mcp',
      'http:/mcp',
      '//evil.example/mcp',
      '/%zz',
      '/mcp%00',
      '/healthz',
      '/readyz',
      '/metrics',
      `http://${here}/readyz`,
      `/${'a'.repeat(8000)}`,
      `/mcp/${junk()}`,
      '*',
      here,
      'javascript:alert(1)',
    ];
    const headerSets = () => [
      `Host: ${here}`,
      'Host: evil.example',
      `Host: ${here}\r\nHost: ${here}`,
      'Host: ',
      `Host: ${junk()}`,
      `Host: ${here}\r\nContent-Type: ${pick(['application/json', 'text/plain', junk(), 'application/json; charset=utf-7', ''])}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nContent-Encoding: ${pick(['gzip', 'br', 'deflate', 'zstd', junk(), 'gzip, gzip'])}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nMcp-Session-Id: ${junk()}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nMcp-Protocol-Version: ${junk()}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nAccept: ${junk()}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nAuthorization: ${pick(['Bearer', 'Bearer ' + junk(), junk()])}`,
      `Host: ${here}\r\nOrigin: ${pick(['null', 'http://evil.example', junk()])}`,
      `Host: ${here}\r\nContent-Type: application/json\r\nTraceparent: ${junk()}`,
    ];
    const bodies = () => ['', body, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', junk(), '[]', '{}', 'null'];
    let cases = 0;
    for (let i = 0; i < 300; i++) {
      const payload = pick(bodies());
      const request = `${pick(methods)} ${pick(targets())} HTTP/1.1\r\n${pick(headerSets())}\r\nContent-Length: ${Buffer.byteLength(payload, 'latin1')}\r\nConnection: close\r\n\r\n${payload}`;
      const answer = await exchange(server.url.port, Buffer.from(request, 'latin1'));
      expect(status(answer), `case ${i}: ${JSON.stringify(request.slice(0, 300))} → ${answer.slice(0, 200)}`).not.toBe(
        500,
      );
      cases++;
    }
    expect(cases).toBe(300);
    const log = server.stderr();
    expect(log).not.toMatch(/\n\s+at /);
    // Every line after the start-up is one JSON object (--log-format json), whatever the client sent.
    for (const line of log.split('\n').filter((l) => l !== ''))
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  }, 180_000);
});

describe('log lines a client cannot forge, through the server (issue 64, defect 3)', () => {
  // What a client controls reaches the log in each request's debug line: the tool name and the request id. (A 2026
  // call's name must match its Mcp-Name header, which cannot hold a newline: the name is forged over 2025.)
  const FORGED = '\n[mcp-cancel-pool] FORGED: admin token accepted \x1b[31mred\x1b[0m';

  for (const format of ['text', 'json'] as const) {
    it(`--log-format ${format}: a tool name and ids with a newline and ANSI escapes write escaped lines only`, async () => {
      const server = await listening(['--threads', '1', '--log-level', 'debug', '--log-format', format]);
      try {
        const modern = modernRequest(`m${FORGED}`, 'tools/call', { name: 'spin', arguments: { ms: 1 } });
        await postAs(server.url, undefined, modern);
        const sid = await openSession(server.url, undefined);
        await postAs(
          server.url,
          undefined,
          { jsonrpc: '2.0', id: `l${FORGED}`, method: 'tools/call', params: { name: `spin${FORGED}`, arguments: {} } },
          { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        );
        // Each request's debug line is written once its answer is: wait for both, not for a time.
        const calls = () =>
          server
            .stderr()
            .split('\n')
            .filter((l) => l.includes('tools/call'));
        await until(() => calls().length >= 2, 30_000, 'the debug lines of both calls');
        const stderr = server.stderr();
        expect(stderr).not.toMatch(/^\[mcp-cancel-pool\] FORGED/m);
        expect(stderr).not.toMatch(/^\{?"?FORGED/m);
        expect(stderr).not.toContain('\x1b');
        for (const line of calls()) {
          expect(line).toContain('FORGED');
          if (format === 'text') expect(line).toContain('\\n[mcp-cancel-pool] FORGED: admin token accepted \\x1b[31m');
          else expect(JSON.stringify(JSON.parse(line))).toContain('\\n[mcp-cancel-pool] FORGED');
        }
      } finally {
        await server.stop();
      }
    });
  }
});
