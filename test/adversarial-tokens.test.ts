/**
 * Issue 64, defect 6: tokens as mainstream authorization servers write them. oidc-provider writes `typ: at+jwt`;
 * a second issuer (a small real one: discovery document, JWKS and ES256 tokens made with jose, served on 127.0.0.1)
 * writes `typ: JWT` as Keycloak, Entra ID and Auth0 do. Both are accepted by default, other explicit types are
 * refused, `--auth-require-at-jwt` narrows to RFC 9068's, every refusal logs its reason with the token's unverified
 * claims (never the token), and a JWKS endpoint that fails is "issuer unavailable" (503), fetched under a cooldown.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTools2026, startAuthServer, type AuthServer } from './auth-helpers.js';
import { MCP_SCOPE, startIssuer, type TestIssuer } from './oidc-helpers.js';

/** How the second issuer's JWKS endpoint answers. */
type JwksMode = 'ok' | '500' | 'bad-json' | 'hang';

interface JoseIssuer {
  readonly issuer: string;
  jwksMode: JwksMode;
  /** JWKS requests served so far. */
  jwksFetches: number;
  mint(audience: string, header?: Record<string, unknown>, claims?: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

async function startJoseIssuer(): Promise<JoseIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'jose-1', alg: 'ES256', use: 'sig' };
  let origin = '';
  const state = { jwksMode: 'ok' as JwksMode, jwksFetches: 0 };
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }));
    }
    if (req.url === '/jwks') {
      state.jwksFetches++;
      if (state.jwksMode === '500') return void res.writeHead(500).end('down');
      if (state.jwksMode === 'hang') return; // never answers: the server's fetch times out
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(state.jwksMode === 'bad-json' ? '{"keys": [' : JSON.stringify({ keys: [jwk] }));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer: origin,
    get jwksMode() {
      return state.jwksMode;
    },
    set jwksMode(m: JwksMode) {
      state.jwksMode = m;
    },
    get jwksFetches() {
      return state.jwksFetches;
    },
    set jwksFetches(n: number) {
      state.jwksFetches = n;
    },
    mint: (audience, header = {}, claims = {}) =>
      new SignJWT({ scope: MCP_SCOPE, client_id: 'jose-client', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'jose-1', typ: 'JWT', ...header })
        .setIssuer(origin)
        .setAudience(audience)
        .setSubject('jose-user')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The server's warn lines about refused tokens. */
const refusals = (server: AuthServer) =>
  server
    .stderr()
    .split('\n')
    .filter((l) => l.includes('refused a token'));

describe('a second issuer that writes typ: JWT (issue 64)', () => {
  let idp: JoseIssuer;
  let server: AuthServer;
  beforeAll(async () => {
    idp = await startJoseIssuer();
    server = await startAuthServer(idp.issuer);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await idp?.stop();
  });

  it('its typ: JWT token is accepted by default, and so are application/at+jwt and no typ', async () => {
    expect((await listTools2026(server.url, await idp.mint(server.url.href))).status).toBe(200);
    expect(
      (await listTools2026(server.url, await idp.mint(server.url.href, { typ: 'application/at+jwt' }))).status,
    ).toBe(200);
    expect((await listTools2026(server.url, await idp.mint(server.url.href, { typ: undefined }))).status).toBe(200);
  });

  it('another explicit type is refused, and the refusal logs one warn line with the unverified claims, never the token', async () => {
    for (const typ of ['id_token+jwt', 'logout+jwt', 'dpop+jwt']) {
      const token = await idp.mint(server.url.href, { typ, kid: `jose-1\n[mcp-cancel-pool] FORGED` });
      const before = refusals(server).length;
      const r = await listTools2026(server.url, token);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/invalid_token.*not an access token/);
      await expect.poll(() => refusals(server).length).toBe(before + 1);
      const line = refusals(server).at(-1)!;
      expect(line).toContain('not an access token');
      expect(line).toContain(`unverified_typ=${typ}`);
      expect(line).toContain(`unverified_iss=${idp.issuer}`);
      expect(line).toContain(`unverified_aud=${server.url.href}`);
      expect(line).toContain('unverified_client_id=jose-client');
      expect(line).toContain('unverified_kid="jose-1\\n[mcp-cancel-pool] FORGED"');
      expect(server.stderr()).not.toContain(token);
      expect(server.stderr()).not.toContain(token.split('.')[2]);
    }
    expect(server.stderr()).not.toMatch(/^\[mcp-cancel-pool\] FORGED/m);
  });

  it('a token for another audience is refused and logged with its reason', async () => {
    const r = await listTools2026(server.url, await idp.mint('http://127.0.0.1:1/other'));
    expect(r.status).toBe(401);
    await expect.poll(() => refusals(server).some((l) => /not issued for this resource/.test(l))).toBe(true);
  });

  it('refusal lines are rate-limited: a loop of bad tokens writes at most 10 a minute', async () => {
    const before = refusals(server).length;
    const bad = await idp.mint(server.url.href, { typ: 'id_token+jwt' });
    for (let i = 0; i < 40; i++) expect((await listTools2026(server.url, bad)).status).toBe(401);
    expect(refusals(server).length - before).toBeLessThanOrEqual(10);
  });

  it('a JWKS endpoint answering 500 or a body that is not a key set or no answer (a timeout): 503 with Retry-After, never "invalid token", and unknown kids share one cooldown', async () => {
    // Each failure mode against an issuer and a server of its own, at once (each waits out the cooldown of the
    // fetch its server made at start before its first refetch).
    await Promise.all(
      (['500', 'bad-json', 'hang'] as const).map(async (mode) => {
        const issuer = await startJoseIssuer();
        const rs = await startAuthServer(issuer.issuer);
        try {
          const unknownKid = (i: number | string) =>
            issuer.mint(rs.url.href, { kid: `unknown-${i}` }).then((t) => listTools2026(rs.url, t));
          expect((await listTools2026(rs.url, await issuer.mint(rs.url.href))).status).toBe(200);
          issuer.jwksMode = mode;
          issuer.jwksFetches = 0;
          // Within the cooldown of the last fetch, an unknown kid is simply a key the issuer does not publish (401);
          // past it, the set is fetched again, fails, and the answer is the issuer's: 503.
          let polls = 0;
          await expect
            .poll(async () => (await unknownKid(`poll-${polls++}`)).status, { timeout: 30_000, interval: 250 })
            .toBe(503);
          expect(issuer.jwksFetches).toBe(1);
          const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => unknownKid(i)));
          for (const a of answers) {
            expect(a.status).toBe(503);
            expect(a.headers.get('retry-after')).toMatch(/^\d+$/);
            expect(a.text).toMatch(/temporarily_unavailable/);
            expect(a.text).not.toMatch(/invalid_token|not a valid JWT/);
          }
          // A failed fetch counts against the cooldown (doubled after a failure): 300 tokens, no new fetch.
          expect(issuer.jwksFetches).toBe(1);
          // The key held still verifies while the endpoint is down.
          expect((await listTools2026(rs.url, await issuer.mint(rs.url.href))).status).toBe(200);
        } finally {
          await rs.stop();
          await issuer.stop();
        }
      }),
    );
  }, 90_000);
});

describe('oidc-provider (typ at+jwt) and --auth-require-at-jwt (issue 64)', () => {
  let op: TestIssuer;
  let jose: JoseIssuer;
  let strictOp: AuthServer;
  let strictJose: AuthServer;
  let lenientOp: AuthServer;
  beforeAll(async () => {
    op = await startIssuer();
    jose = await startJoseIssuer();
    [strictOp, strictJose, lenientOp] = await Promise.all([
      startAuthServer(op.issuer, ['--auth-require-at-jwt']),
      startAuthServer(jose.issuer, ['--auth-require-at-jwt']),
      startAuthServer(op.issuer),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([strictOp?.stop(), strictJose?.stop(), lenientOp?.stop()]);
    await Promise.all([op?.stop(), jose?.stop()]);
  });

  it("oidc-provider's at+jwt token is accepted by default and under --auth-require-at-jwt", async () => {
    expect((await listTools2026(lenientOp.url, await op.token('alice', lenientOp.url.href))).status).toBe(200);
    expect((await listTools2026(strictOp.url, await op.token('alice', strictOp.url.href))).status).toBe(200);
  });

  it('--auth-require-at-jwt refuses typ JWT, saying which flag asks for at+jwt', async () => {
    const r = await listTools2026(strictJose.url, await jose.mint(strictJose.url.href));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/at\+jwt/);
    await expect.poll(() => refusals(strictJose).some((l) => /--auth-require-at-jwt/.test(l))).toBe(true);
    expect((await listTools2026(strictJose.url, await jose.mint(strictJose.url.href, { typ: 'at+jwt' }))).status).toBe(
      200,
    );
  });
});
