/**
 * Issue 56: the nesting rule of stdio (past 128 levels: `-32600` with the
 * request's id) on every transport and era, and no HTTP error is ever an HTML
 * page, a stack or a path. Before, ~5,000 levels over HTTP got Express's HTML
 * page with `RangeError: Maximum call stack size exceeded` and a stack
 * through `toWebRequest` and serve.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeBody, listening, messagesIn, post, type Started } from './http-helpers.js';
import { LineServer } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;
const LEVELS = [129, 5_000, 200_000];

/** `k` nested arrays as JSON text. */
const arrays = (k: number) => '['.repeat(k) + ']'.repeat(k);
/** Marks where the deep value goes in a message built as an object; replaced in its JSON text (an object that deep cannot be stringified). */
const DEEP = '"@@DEEP@@"';
/** A message whose deepest point is `levels` deep: the value sits at depth 3 (message, params, arguments or capabilities). */
const deepText = (message: unknown, levels: number) => JSON.stringify(message).replace(DEEP, arrays(levels - 3));

const legacyCall = (id: string, levels: number) =>
  deepText(
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'spin', arguments: { x: '@@DEEP@@' } } },
    levels,
  );
const modernCall = (id: string, levels: number) =>
  deepText(modernRequest(id, 'tools/call', { name: 'spin', arguments: { x: '@@DEEP@@' } }), levels);
const legacyInit = (id: string, levels: number) =>
  deepText(
    { ...initializeBody(id), params: { ...initializeBody(id).params, capabilities: { x: '@@DEEP@@' } } },
    levels,
  );

/** Whether a response body shows anything of the server's insides. */
const leaks = (text: string) => /<html|<!DOCTYPE|RangeError|\bat [\w.<>]+ \(|\/src\/|\/dist\/|node_modules/i.test(text);

describe('nesting over HTTP', () => {
  let server: Listening;
  let sid: string;
  beforeAll(async () => {
    server = await listening(['--threads', '1']);
    const opened = await post(server.url, initializeBody('open'));
    sid = opened.headers['mcp-session-id'] as string;
    expect(sid).toBeTruthy();
  });
  afterAll(() => server.stop());

  /** POSTs a raw text body (the helpers' `post` stringifies). */
  const postText = async (text: string, headers: Record<string, string>) => {
    const r = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: text,
    });
    return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
  };
  const cases = {
    '2026, no session': (id: string, n: number) =>
      postText(modernCall(id, n), modernHeaders({ method: 'tools/call', params: { name: 'spin' } })),
    '2025 initialize, no session': (id: string, n: number) => postText(legacyInit(id, n), {}),
    '2025 in a session': (id: string, n: number) =>
      postText(legacyCall(id, n), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }),
  };

  for (const [name, send] of Object.entries(cases)) {
    it(`${name}: 128 levels pass the transport, ${LEVELS.join(', ')} get HTTP 400 with -32600 and the request's id`, async () => {
      // 128 levels are not refused for their depth (the tool then refuses its arguments, or initialize answers).
      const ok = await send('at-128', 128);
      expect(ok.text).not.toMatch(/nested deeper/);
      expect(ok.status).toBe(200);
      for (const n of LEVELS) {
        const r = await send(`at-${n}`, n);
        expect(r.status, `${n} levels`).toBe(400);
        expect(r.type).toMatch(/^application\/json/);
        expect(leaks(r.text)).toBe(false);
        expect(JSON.parse(r.text)).toEqual({
          jsonrpc: '2.0',
          id: `at-${n}`,
          error: { code: -32600, message: 'message nested deeper than 128 levels' },
        });
      }
    });
  }

  it('the server still serves after them, and the session is intact', async () => {
    const r = await post(
      server.url,
      { jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.status).toBe(200);
    expect(messagesIn(r.text)[0]).toMatchObject({ id: 'after', result: { structuredContent: { sliceCount: 1 } } });
  });

  it('other errors are JSON-RPC or a plain status, never HTML, a stack or a path', async () => {
    const answers = [
      await postText('{', {}),
      await postText('{}', { 'content-type': 'application/json; charset=latin9' }),
      await postText('{}', { 'content-encoding': 'gzip' }),
      await postText('{}', { 'content-encoding': 'foo' }),
      await postText(arrays(5_000), { 'content-type': 'text/plain' }),
    ];
    for (const a of answers) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.type).toMatch(/^application\/json/);
      expect(leaks(a.text)).toBe(false);
      expect(JSON.parse(a.text)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    }
    for (const [method, path] of [
      ['GET', '/elsewhere'],
      ['POST', '/elsewhere'],
      ['PUT', '/mcp'],
    ] as const) {
      const r = await fetch(new URL(path, server.url), {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method !== 'GET' && { body: '{}' }),
      });
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await r.text();
      expect(leaks(text)).toBe(false);
      expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    }
  });
});

describe('nesting over stdio', () => {
  it('both eras: 128 levels pass the transport, 129, 5,000 and 200,000 get -32600 with the request id', async () => {
    const s = new LineServer(['--threads', '1']);
    try {
      await s.initialize();
      for (const [era, build] of [
        ['2025', legacyCall],
        ['2026', modernCall],
      ] as const) {
        s.send(build(`${era}-128`, 128));
        expect(JSON.stringify(await s.answer(`${era}-128`, 30_000))).not.toMatch(/nested deeper/);
        for (const n of LEVELS) {
          s.send(build(`${era}-${n}`, n));
          expect(await s.answer(`${era}-${n}`, 30_000)).toEqual({
            jsonrpc: '2.0',
            id: `${era}-${n}`,
            error: { code: -32600, message: 'message nested deeper than 128 levels' },
          });
        }
      }
    } finally {
      s.kill();
    }
  });
});
