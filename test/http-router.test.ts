/**
 * The Streamable HTTP endpoint on plain node:http (no framework): what it answers besides MCP itself. Every
 * refusal is one JSON-RPC error as JSON, never an HTML page; the body reader takes what a body parser took
 * (gzip, any case of the path, a trailing slash) and refuses what it cannot read.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeBody, listening, MCP_HEADERS, messagesIn, type Started } from './http-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;

/** One raw request; resolves with the whole response. */
function raw(
  url: URL,
  method: string,
  path: string,
  body?: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: url.port, path, method, headers: { ...MCP_HEADERS, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the HTTP endpoint on node:http', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1']);
  });
  afterAll(() => server.stop());

  it('answers an unknown path or method with a JSON-RPC error as JSON (404), not a page', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['PUT', '/mcp'],
      ['POST', '/mcp/extra'],
    ] as const) {
      const r = await raw(server.url, method, path, method === 'GET' ? undefined : '{}');
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.type).toMatch(/^application\/json/);
      expect(JSON.parse(r.text)).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/not found/) as unknown },
      });
    }
  });

  it('serves /MCP/ as /mcp, and reads a gzip body', async () => {
    const r = await raw(server.url, 'POST', '/MCP/', gzipSync(JSON.stringify(initializeBody('zipped'))), {
      'content-encoding': 'gzip',
    });
    expect(r.status).toBe(200);
    expect(messagesIn(r.text)[0]).toMatchObject({ id: 'zipped', result: { serverInfo: { name: 'mcp-cancel-pool' } } });
  });

  it('refuses an unknown content encoding (415), a bare JSON value (400, -32700) and a gzip bomb past the limit (413)', async () => {
    const encoding = await raw(server.url, 'POST', '/mcp', 'x', { 'content-encoding': 'zstd' });
    expect(encoding.status).toBe(415);
    expect(JSON.parse(encoding.text)).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/unsupported content encoding "zstd"/) as unknown },
    });
    const bare = await raw(server.url, 'POST', '/mcp', '"just a string"');
    expect(bare.status).toBe(400);
    expect(JSON.parse(bare.text)).toMatchObject({ error: { code: -32700 } });
    // 8 MiB of spaces inside a JSON string gzip to a few KB: the limit (4 MiB by default) counts the decoded bytes.
    const bomb = gzipSync(JSON.stringify({ ...initializeBody('bomb'), pad: ' '.repeat(8 * 1024 * 1024) }));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const big = await raw(server.url, 'POST', '/mcp', bomb, { 'content-encoding': 'gzip' });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toMatchObject({ error: { code: -32600 } });
    // And it keeps serving.
    expect((await raw(server.url, 'POST', '/mcp', JSON.stringify(initializeBody('after')))).status).toBe(200);
  });
});
