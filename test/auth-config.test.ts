/**
 * Issue 54: configuring OAuth. Mistakes end the start in one line (a secret
 * never in it); an authorization server that cannot be reached at start is
 * not a crash: the server listens, /readyz says why it is not ready, and once
 * the issuer answers it becomes ready and tokens work. Without OAuth, the
 * start-up line says that all HTTP clients are one caller.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, listTools2026, startAuthServer } from './auth-helpers.js';
import { spawnHttp } from './http-helpers.js';
import { startIssuer } from './oidc-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('configuration mistakes end the start in one line', () => {
  const SECRET = 'do-not-print-this-secret-0123456789';
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    [
      'an issuer without the resource',
      ['--auth-issuer', 'https://auth.example.com'],
      {},
      /--auth-issuer needs --auth-resource/,
    ],
    [
      'a resource without an issuer',
      ['--auth-resource', 'https://mcp.example.com/mcp'],
      {},
      /--auth-resource needs --auth-issuer/,
    ],
    [
      'an issuer that is not a URL',
      ['--auth-issuer', 'auth.example.com', '--auth-resource', 'https://mcp.example.com/mcp'],
      {},
      /--auth-issuer: "auth.example.com" is not an absolute URL/,
    ],
    [
      'a plain-http issuer off loopback',
      ['--auth-issuer', 'http://auth.example.com', '--auth-resource', 'https://mcp.example.com/mcp'],
      {},
      /--auth-issuer: http:\/\/auth.example.com must be https/,
    ],
    [
      'a resource with a fragment',
      ['--auth-issuer', 'https://auth.example.com', '--auth-resource', 'https://mcp.example.com/mcp#x'],
      {},
      /--auth-resource: .* must not have a fragment/,
    ],
    [
      'a scope with a quote',
      [
        '--auth-issuer',
        'https://auth.example.com',
        '--auth-resource',
        'https://mcp.example.com/mcp',
        '--auth-scopes',
        'mcp "x',
      ],
      {},
      /--auth-scopes: .* is not an OAuth scope/,
    ],
    [
      'an issuer and a shared token',
      ['--auth-issuer', 'https://auth.example.com', '--auth-resource', 'https://mcp.example.com/mcp'],
      { MCP_CANCEL_POOL_AUTH_TOKEN: 'a-shared-token-0123456789' },
      /exclude each other/,
    ],
    [
      'an introspection endpoint without credentials',
      [
        '--auth-issuer',
        'https://auth.example.com',
        '--auth-resource',
        'https://mcp.example.com/mcp',
        '--auth-introspection-endpoint',
        'https://auth.example.com/introspect',
      ],
      {},
      /needs --auth-client-credentials-file/,
    ],
    [
      'a credentials file that is not the JSON expected',
      [
        '--auth-issuer',
        'https://auth.example.com',
        '--auth-resource',
        'https://mcp.example.com/mcp',
        '--auth-client-credentials-file',
        file('bad.json', `client_id=x client_secret=${SECRET}`),
      ],
      {},
      /--auth-client-credentials-file .*: expected JSON/,
    ],
    [
      'a credentials file that does not exist',
      [
        '--auth-issuer',
        'https://auth.example.com',
        '--auth-resource',
        'https://mcp.example.com/mcp',
        '--auth-client-credentials-file',
        join(dir, 'missing.json'),
      ],
      {},
      /cannot read --auth-client-credentials-file .*ENOENT/,
    ],
    [
      'an operator scope without an issuer',
      ['--auth-operator-scope', 'mcp:operator'],
      {},
      /--auth-operator-scope needs --auth-issuer/,
    ],
    [
      'an operator scope that is two scopes',
      [
        '--auth-issuer',
        'https://auth.example.com',
        '--auth-resource',
        'https://mcp.example.com/mcp',
        '--auth-operator-scope',
        'mcp operator',
      ],
      {},
      /--auth-operator-scope: "mcp operator" is not one OAuth scope/,
    ],
    [
      'the same mistake from the environment',
      [],
      { MCP_CANCEL_POOL_AUTH_ISSUER: 'https://auth.example.com' },
      /--auth-issuer needs --auth-resource/,
    ],
  ];
  for (const [what, args, env, message] of cases) {
    it(what, async () => {
      const started = await spawnHttp(['--threads', '1', ...args], env);
      expect(started.kind).toBe('exited');
      if (started.kind !== 'exited') return started.stop();
      expect(started.code).toBe(1);
      const lines = started.stderr.trim().split('\n');
      expect(lines, started.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(started.stderr).not.toContain(SECRET);
    });
  }
});

describe('an authorization server that cannot be reached at start', () => {
  it('the server listens, /readyz says why it is not ready; once the issuer answers it is ready and tokens work', async () => {
    const port = await freePort();
    const server = await startAuthServer(`http://127.0.0.1:${port}`);
    try {
      const readyz = new URL('/readyz', server.url);
      const before = await fetch(readyz);
      expect(before.status).toBe(503);
      expect(await before.text()).toMatch(
        /not ready: authorization server http:\/\/127\.0\.0\.1:\d+ not reachable: .*ECONNREFUSED/,
      );
      expect(server.stderr()).toMatch(/authorization: authorization server .* not reachable/);
      // A token cannot be checked yet: 503, not a 401 the client would take as its token's fault.
      expect((await listTools2026(server.url, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).status).toBe(503);
      const idp = await startIssuer(port);
      try {
        let status = 0;
        for (
          const end = Date.now() + 60_000;
          Date.now() < end && status !== 200;
          await new Promise((r) => setTimeout(r, 200))
        )
          status = (await fetch(readyz)).status;
        expect(status).toBe(200);
        expect(server.stderr()).toMatch(/authorization: reached http:\/\/127\.0\.0\.1:\d+; ready/);
        expect((await listTools2026(server.url, await idp.token('alice', server.url.href))).status).toBe(200);
      } finally {
        await idp.stop();
      }
    } finally {
      await server.stop();
    }
  });
});

describe('without OAuth', () => {
  it('start-up says in one line that all HTTP clients are one caller', async () => {
    const started = await spawnHttp(['--threads', '1']);
    if (started.kind !== 'listening') throw new Error(started.stderr);
    try {
      expect(started.stderr()).toMatch(
        /HTTP: no authentication \(loopback only\); all HTTP clients are one caller \(.*--auth-issuer gives each client its own identity\)/,
      );
    } finally {
      await started.stop();
    }
  });
});
