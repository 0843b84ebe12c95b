/**
 * Issue 12, defect 5: bearer-token auth and Host validation over real HTTP
 * against the server subprocess. Servers may bind 0.0.0.0; traffic goes to
 * 127.0.0.1 only.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, initializeBody, listening, messagesIn, post, spawnHttp, type Started } from './http-helpers.js';

const TOKEN = 'test-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-'));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, `${TOKEN}\n`);

type Listening = Extract<Started, { kind: 'listening' }>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('bearer token from --auth-token-file (loopback bind)', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--auth-token-file', tokenFile]);
  });
  afterAll(() => server.stop());

  it('no token: 401 with a bare Bearer challenge and a JSON-RPC error; no session is created', async () => {
    const r = await post(server.url, initializeBody());
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="mcp-cancel-pool"');
    expect(r.headers['mcp-session-id']).toBeUndefined();
    const [body] = messagesIn(r.text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(body!.error!.message).toMatch(/Authorization: Bearer/);
  });

  it('wrong token, a token of another length, another scheme, or the token in the query string: refused', async () => {
    for (const wrong of ['test-token-0123456789abcdeX', 'short', `${TOKEN}x`]) {
      const r = await post(server.url, initializeBody(), bearer(wrong));
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="mcp-cancel-pool", error="invalid_token"/);
      expect(messagesIn(r.text)[0]).toMatchObject({ error: { code: -32000, message: 'invalid bearer token' } });
    }
    const basic = await post(server.url, initializeBody(), {
      authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
    });
    expect(basic.status).toBe(401);
    const malformed = await post(server.url, initializeBody(), { authorization: `Bearer ${TOKEN} extra` });
    expect(malformed.status).toBe(400);
    expect(malformed.headers['www-authenticate']).toMatch(/error="invalid_request"/);
    const query = new URL(server.url);
    query.searchParams.set('access_token', TOKEN);
    expect((await post(query, initializeBody())).status).toBe(401);
  });

  it('the right token: an SDK client connects and calls a tool; every request of the session needs it', async () => {
    const { client, transport } = await httpClient(server.url, bearer(TOKEN));
    try {
      const result = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
      expect(result.isError).toBeFalsy();
      // The session id alone is not enough: the spec wants the token on every request.
      const sessionHeaders = { 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' };
      const noToken = await post(server.url, { jsonrpc: '2.0', id: 'list', method: 'tools/list' }, sessionHeaders);
      expect(noToken.status).toBe(401);
      const withToken = await post(
        server.url,
        { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
        { ...sessionHeaders, ...bearer(TOKEN) },
      );
      expect(withToken.status).toBe(200);
      expect(messagesIn(withToken.text)[0]).toHaveProperty('result.tools');
      const del = await fetch(server.url, { method: 'DELETE', headers: sessionHeaders });
      expect(del.status).toBe(401);
    } finally {
      await client.close();
    }
  });
});

describe('bearer token from MCP_CANCEL_POOL_AUTH_TOKEN, bound to 0.0.0.0', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--host', '0.0.0.0'], { MCP_CANCEL_POOL_AUTH_TOKEN: TOKEN });
  });
  afterAll(() => server.stop());

  it('starts without --allow-unauthenticated, and enforces the token', async () => {
    expect((await post(server.url, initializeBody())).status).toBe(401);
    expect((await post(server.url, initializeBody(), bearer('wrong-token-0123456789abc'))).status).toBe(401);
    const { client } = await httpClient(server.url, bearer(TOKEN));
    try {
      expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(server.stderr()).toMatch(/bearer token required/);
  });

  it('keeps the Host check on: Host evil.example is refused even with the right token', async () => {
    const evil = await post(server.url, initializeBody(), {
      ...bearer(TOKEN),
      host: `evil.example:${server.url.port}`,
    });
    expect(evil.status).toBe(403);
    expect(evil.headers['mcp-session-id']).toBeUndefined();
    const local = await post(server.url, initializeBody(), { ...bearer(TOKEN), host: `127.0.0.1:${server.url.port}` });
    expect(local.status).toBe(200);
  });
});

describe('non-loopback bind', () => {
  it('without a token and without --allow-unauthenticated: refuses to start, with one clear line', async () => {
    const started = await spawnHttp(['--threads', '1', '--host', '0.0.0.0'], { MCP_CANCEL_POOL_AUTH_TOKEN: '' });
    if (started.kind === 'listening') await started.stop();
    expect(started.kind).toBe('exited');
    if (started.kind !== 'exited') return;
    expect(started.code).not.toBe(0);
    const lines = started.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /refusing to serve HTTP on 0\.0\.0\.0 without authentication.*--auth-token-file.*--allow-unauthenticated/,
    );
  });

  it('a token that is too short, or an unreadable token file: refuses to start', async () => {
    const shortFile = join(dir, 'short');
    writeFileSync(shortFile, 'abc\n');
    const cases = [
      {
        args: ['--auth-token-file', shortFile],
        says: /--auth-token-file .*short: the token must be at least 16 characters/,
      },
      { args: ['--auth-token-file', join(dir, 'missing')], says: /cannot read --auth-token-file .*missing: ENOENT/ },
    ];
    for (const { args, says } of cases) {
      const started = await spawnHttp(['--threads', '1', ...args]);
      if (started.kind === 'listening') await started.stop();
      expect(started.kind).toBe('exited');
      if (started.kind !== 'exited') return;
      expect(started.code).not.toBe(0);
      expect(started.stderr.trim().split('\n')).toHaveLength(1);
      expect(started.stderr).toMatch(says);
    }
  });

  it('with --allow-unauthenticated: starts, warns, and still refuses a foreign Host', async () => {
    const server = await listening(['--threads', '1', '--host', '0.0.0.0', '--allow-unauthenticated'], {
      MCP_CANCEL_POOL_AUTH_TOKEN: '',
    });
    try {
      expect(server.stderr()).toMatch(/warning: HTTP on 0\.0\.0\.0 with no authentication/);
      const evil = await post(server.url, initializeBody(), { host: `evil.example:${server.url.port}` });
      expect(evil.status).toBe(403);
      expect(messagesIn(evil.text)[0]).toMatchObject({ error: { message: 'Invalid Host: evil.example' } });
      const local = await post(server.url, initializeBody(), { host: `127.0.0.1:${server.url.port}` });
      expect(local.status).toBe(200);
      expect(local.headers['mcp-session-id']).toBeTruthy();
    } finally {
      await server.stop();
    }
  });
});

describe('--allowed-host', () => {
  it('only the named hosts are accepted, on any bind', async () => {
    const server = await listening(['--threads', '1', '--allowed-host', 'mcp.example']);
    try {
      expect((await post(server.url, initializeBody(), { host: `evil.example:${server.url.port}` })).status).toBe(403);
      expect((await post(server.url, initializeBody(), { host: `mcp.example:${server.url.port}` })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
