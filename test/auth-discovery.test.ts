/**
 * Issue 54: finding the issuer's keys as a client would (RFC 8414, then
 * OpenID Connect Discovery, for an issuer with a path as Keycloak's realms
 * have), and refusing a metadata document that names another issuer. In
 * process, against small real HTTP servers on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair } from 'jose';
import { IssuerDiscovery, metadataUrls } from '../dist/src/transport/http/issuer-discovery.js';

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
});

/** Serves `routes` (path → JSON) on 127.0.0.1; anything else 404. Returns its origin. */
async function serve(routes: (origin: string) => Record<string, unknown>): Promise<string> {
  let table: Record<string, unknown> = {};
  const server = createServer((req, res) => {
    const body = table[req.url ?? ''];
    res
      .writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' })
      .end(body === undefined ? '{}' : JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  table = routes(origin);
  return origin;
}

describe('issuer discovery', () => {
  it('the metadata URLs a client tries, in order: RFC 8414 path-inserted, then OpenID path-inserted and path-appended', () => {
    expect(metadataUrls('https://kc.example.com/realms/mcp').map((u) => u.href)).toEqual([
      'https://kc.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://kc.example.com/.well-known/openid-configuration/realms/mcp',
      'https://kc.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://tenant.auth0.com/').map((u) => u.href)).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('an issuer with a path (Keycloak style) is found at its path-appended OpenID document, and its keys are fetched: ready', async () => {
    const { publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const origin = await serve((o) => ({
      '/realms/mcp/.well-known/openid-configuration': { issuer: `${o}/realms/mcp`, jwks_uri: `${o}/realms/mcp/certs` },
      '/realms/mcp/certs': { keys: [jwk] },
    }));
    const discovery = new IssuerDiscovery(`${origin}/realms/mcp`);
    await discovery.start();
    discovery.close();
    expect(discovery.readiness()).toEqual({ ready: true });
    expect(discovery.metadata().jwks_uri).toBe(`${origin}/realms/mcp/certs`);
    expect(
      discovery
        .keys()
        .jwks()
        ?.keys.map((k) => k.kid),
    ).toEqual(['k1']);
  });

  it('a document naming another issuer is refused (its keys would verify tokens of that issuer): not ready, and why', async () => {
    const failures: string[] = [];
    const origin = await serve((o) => ({
      '/.well-known/oauth-authorization-server': { issuer: `${o}/elsewhere`, jwks_uri: `${o}/jwks` },
    }));
    const discovery = new IssuerDiscovery(origin, { onFailure: (why) => failures.push(why) });
    await discovery.start();
    discovery.close();
    const readiness = discovery.readiness();
    expect(readiness.ready).toBe(false);
    expect(readiness.ready === false && readiness.why).toMatch(/names the issuer ".*\/elsewhere", not ".*"/);
    expect(failures).toHaveLength(1);
    expect(() => discovery.keys()).toThrow(/not reachable/);
  });

  it('a jwks_uri that cannot be fetched keeps it not ready, naming the key set', async () => {
    const origin = await serve((o) => ({
      '/.well-known/openid-configuration': { issuer: o, jwks_uri: `${o}/missing-jwks` },
    }));
    const discovery = new IssuerDiscovery(origin);
    await discovery.start();
    discovery.close();
    const readiness = discovery.readiness();
    expect(readiness.ready === false && readiness.why).toMatch(/cannot fetch the issuer's keys from .*\/missing-jwks/);
  });
});
