/**
 * Issue 54: the HTTP endpoint as an OAuth resource server, against a real
 * authorization server (oidc-provider on 127.0.0.1) and the server as a real
 * subprocess: Protected Resource Metadata, the 401 a client starts from, an
 * SDK 2.x client that finds its way to a token by itself in both eras, and
 * every kind of token that must be refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, importJWK, type JWK } from 'jose';
import {
  commandLine,
  credentialsFile,
  listTools2026,
  oauthClient,
  postAs,
  startAuthServer,
  type AuthServer,
} from './auth-helpers.js';
import { modernRequest } from './modern-helpers.js';
import { ADMIN_SCOPE, CLIENTS, MCP_SCOPE, signingKey, startIssuer, type TestIssuer } from './oidc-helpers.js';

let idp: TestIssuer;
let server: AuthServer;
const issued: string[] = [];

beforeAll(async () => {
  idp = await startIssuer();
  server = await startAuthServer(idp.issuer, [
    '--auth-scopes',
    MCP_SCOPE,
    '--auth-client-credentials-file',
    credentialsFile(),
  ]);
});
afterAll(async () => {
  await server?.stop();
  await idp?.stop();
});

/** A token from the issuer, remembered so the secrets test can look for it. */
async function token(...args: Parameters<TestIssuer['token']>): Promise<string> {
  const t = await idp.token(...args);
  issued.push(t);
  return t;
}

/** A JWT signed with `key`, as the issuer would mint it, with `claims` and `header` overriding. */
async function mint(
  key: JWK,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: idp.issuer,
    sub: CLIENTS.alice.id,
    aud: server.url.href,
    iat: now - 10,
    exp: now + 300,
    client_id: CLIENTS.alice.id,
    scope: MCP_SCOPE,
    ...claims,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid!, typ: 'at+jwt', ...header })
    .sign(await importJWK(key, 'RS256'));
}

describe('Protected Resource Metadata and the challenge', () => {
  it('is served at the well-known path and its /mcp form, without a token: resource, authorization server, scopes, bearer methods', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const r = await fetch(new URL(path, server.url));
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({
        resource: server.url.href,
        authorization_servers: [idp.issuer],
        scopes_supported: [MCP_SCOPE, ADMIN_SCOPE],
        resource_name: 'mcp-cancel-pool',
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('no token: 401 with WWW-Authenticate naming the metadata and the scope, in both eras; no session opens', async () => {
    const metadata = new URL('/.well-known/oauth-protected-resource/mcp', server.url).href;
    for (const body of [
      modernRequest('l', 'tools/list'),
      {
        jsonrpc: '2.0',
        id: 'i',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      },
    ]) {
      const r = await postAs(server.url, undefined, body);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}", scope="${MCP_SCOPE}"`);
      expect(r.headers.get('mcp-session-id')).toBeNull();
    }
    // A token in the query string is no token (the spec forbids it there).
    const t = await token('alice', server.url.href);
    const query = new URL(server.url);
    query.searchParams.set('access_token', t);
    expect((await listTools2026(query, undefined)).status).toBe(401);
    expect(
      (await postAs(server.url, undefined, modernRequest('l', 'tools/list'), { authorization: `Bearer ${t} more` }))
        .status,
    ).toBe(400);
  });
});

describe('an SDK 2.x client starts from the 401 and gets its own token (client credentials)', () => {
  for (const era of ['legacy', 'modern'] as const) {
    it(`${era === 'legacy' ? '2025-11-25' : '2026-07-28'}: connects, lists the tools and calls one`, async () => {
      const { client, close } = await oauthClient(server.url, idp.issuer, 'alice', era);
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toContain('admin_spin');
        const result = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
        expect(result.isError).toBeFalsy();
        expect(JSON.stringify(result.content)).toContain('spun');
      } finally {
        await close();
      }
    });
  }
});

describe('tokens that must be refused (401 invalid_token), next to one that must not', () => {
  it('a token from the issuer for this resource is accepted; an opaque one through introspection too', async () => {
    expect((await listTools2026(server.url, await token('alice', server.url.href))).status).toBe(200);
    expect((await listTools2026(server.url, await mint(idp.key))).status).toBe(200); // the minted control: only what each case changes is wrong
    const opaque = await token('opaque', server.url.href);
    expect(opaque.split('.')).toHaveLength(1);
    expect((await listTools2026(server.url, opaque)).status).toBe(200);
  });

  const refused = async (t: string, why: RegExp) => {
    const r = await listTools2026(server.url, t);
    expect(r.status).toBe(401);
    const challenge = r.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer error="invalid_token"/);
    expect(challenge).toMatch(why);
    expect(challenge).toContain('resource_metadata="');
    expect(r.text).not.toContain(t);
  };

  it('a token for another resource (JWT or opaque) is refused, never passed on', async () => {
    await refused(await token('alice', 'http://127.0.0.1:1/other-mcp'), /not issued for this resource/);
    await refused(await token('opaque', 'http://127.0.0.1:1/other-mcp'), /not issued for this resource/);
  });

  it('expired, not yet valid, another issuer, an id token typ, unknown key, symmetric or no signature: refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await mint(idp.key, { exp: now - 3600, iat: now - 7200 }), /expired/);
    await refused(await mint(idp.key, { nbf: now + 3600 }), /not valid yet/);
    await refused(await mint(idp.key, { iss: 'http://127.0.0.1:1' }), /another issuer/);
    await refused(await mint(idp.key, {}, { typ: 'id_token+jwt' }), /not an access token/);
    await refused(await mint(await signingKey('unknown-key')), /key the issuer does not publish/);
    const hs = await new SignJWT({ scope: MCP_SCOPE })
      .setProtectedHeader({ alg: 'HS256', kid: idp.key.kid!, typ: 'at+jwt' })
      .setIssuer(idp.issuer)
      .setAudience(server.url.href)
      .setSubject('x')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a shared secret of at least 32 bytes!!'));
    await refused(hs, /algorithm/);
    const [h, p] = (await mint(idp.key)).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`;
    await refused(none, /not/);
    await refused(`${h}.${p}.${Buffer.from('forged').toString('base64url')}`, /signature/);
  });

  it('a token short of the scopes every request needs: 403 insufficient_scope', async () => {
    const r = await listTools2026(server.url, await mint(idp.key, { scope: ADMIN_SCOPE }));
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toMatch(
      new RegExp(`^Bearer error="insufficient_scope".*scope="${MCP_SCOPE}"`),
    );
  });
});

describe('tool scopes', () => {
  it('a tool that declares a scope, called with a token without it: 403 insufficient_scope naming every scope the call needs, in both eras', async () => {
    const limited = await token('limited', server.url.href);
    const modern = await postAs(
      server.url,
      limited,
      modernRequest('c', 'tools/call', { name: 'admin_spin', arguments: { ms: 1 } }),
    );
    expect(modern.status).toBe(403);
    const challenge = modern.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer error="insufficient_scope"/);
    expect(challenge).toContain(`scope="${MCP_SCOPE} ${ADMIN_SCOPE}"`);
    expect(challenge).toContain(
      `resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', server.url).href}"`,
    );
    // Other tools are open to it.
    expect(
      (await postAs(server.url, limited, modernRequest('s', 'tools/call', { name: 'spin', arguments: { ms: 1 } })))
        .status,
    ).toBe(200);
    // 2025, inside a session.
    const { openSession, inSession } = await import('./auth-helpers.js');
    const sid = await openSession(server.url, limited);
    const legacy = await inSession(server.url, limited, sid, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'admin_spin', arguments: { ms: 1 } },
    });
    expect(legacy.status).toBe(403);
    expect(legacy.headers.get('www-authenticate')).toContain(`scope="${MCP_SCOPE} ${ADMIN_SCOPE}"`);
    // With the scope, the same call runs.
    const full = await token('alice', server.url.href);
    const ok = await postAs(
      server.url,
      full,
      modernRequest('c', 'tools/call', { name: 'admin_spin', arguments: { ms: 1 } }),
    );
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.messages)).toContain('admin_spin spun 1 ms');
  });

  it('an SDK 2.x client whose token lacks the scope steps up (asks the issuer again with the challenged scopes) and the call runs', async () => {
    const { client, close } = await oauthClient(server.url, idp.issuer, 'alice', 'modern', MCP_SCOPE);
    try {
      const result = await client.callTool({ name: 'admin_spin', arguments: { ms: 1 } });
      expect(JSON.stringify(result.content)).toContain('admin_spin spun 1 ms');
    } finally {
      await close();
    }
  });
});

describe('a rotated key', () => {
  it('the issuer restarts with a new signing key: its new tokens are accepted once the server fetches the new key set, tokens of the old key are refused', async () => {
    const before = await token('alice', server.url.href);
    expect((await listTools2026(server.url, before)).status).toBe(200);
    await idp.restart(await signingKey('key-2'));
    const after = await token('alice', server.url.href);
    // The server fetches the key set again for a key it does not know, at most every few seconds: ask until it has.
    let status = 0;
    for (
      const end = Date.now() + 30_000;
      Date.now() < end && status !== 200;
      await new Promise((r) => setTimeout(r, 250))
    )
      status = (await listTools2026(server.url, after)).status;
    expect(status).toBe(200);
    const old = await listTools2026(server.url, before);
    expect(old.status).toBe(401);
    expect(old.headers.get('www-authenticate')).toMatch(/key the issuer does not publish/);
  });
});

describe('secrets', () => {
  it('no client secret and no token appears in the server log or its command line', async () => {
    const stderr = server.stderr();
    const cmdline = commandLine(server.pid);
    expect(issued.length).toBeGreaterThan(3);
    for (const secret of [...Object.values(CLIENTS).map((c) => c.secret), ...issued]) {
      expect(stderr).not.toContain(secret);
      expect(cmdline).not.toContain(secret);
    }
    expect(stderr).toMatch(/OAuth access tokens required/);
  });
});
