/**
 * A real authorization server for the authorization tests (issue 54):
 * oidc-provider 9 on 127.0.0.1, with resource indicators issuing JWT access
 * tokens (RS256, `typ: at+jwt`) for whatever resource the client names,
 * client credentials and introspection enabled. Restartable on the same port
 * with a new signing key (a key rotation the server must pick up).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type ClientLike } from 'oidc-provider';

/** The server's own scope, and the one `admin_spin` needs on top. */
export const MCP_SCOPE = 'mcp';
export const ADMIN_SCOPE = 'tools:admin';

/** The registered clients: `id` and `secret`, and whether its tokens are opaque. */
export const CLIENTS = {
  alice: { id: 'alice', secret: 'alice-secret-7f3a9c1e5b2d4f60', scope: `${MCP_SCOPE} ${ADMIN_SCOPE}` },
  bob: { id: 'bob', secret: 'bob-secret-0d9e8c7b6a5f4e3d', scope: `${MCP_SCOPE} ${ADMIN_SCOPE}` },
  limited: { id: 'limited', secret: 'limited-secret-a1b2c3d4e5f6a7b8', scope: MCP_SCOPE },
  opaque: { id: 'opaque', secret: 'opaque-secret-1122334455667788', scope: `${MCP_SCOPE} ${ADMIN_SCOPE}` },
  /** The MCP server itself, at the introspection endpoint. */
  rs: { id: 'mcp-server', secret: 'rs-secret-99aa88bb77cc66dd55ee', scope: '' },
} as const;

export type ClientName = keyof typeof CLIENTS;

/** A signing key: the private JWK (with kid and alg) the provider signs with. */
export async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

/** A running provider. */
export interface TestIssuer {
  /** The issuer identifier: http://127.0.0.1:<port> (no trailing slash). */
  readonly issuer: string;
  readonly port: number;
  /** The key it signs with now. */
  key: JWK;
  /** An access token by client credentials, for `resource`, with `scope` (default: the client's scopes). */
  token(client: ClientName, resource: string, scope?: string): Promise<string>;
  /** Stops and starts again on the same port; with `key`, signing with it instead (the old one is gone from its JWKS). */
  restart(key?: JWK): Promise<void>;
  stop(): Promise<void>;
}

function configuration(key: JWK): Record<string, unknown> {
  const client = (c: { id: string; secret: string; scope: string }, grants: string[]) => ({
    client_id: c.id,
    client_secret: c.secret,
    grant_types: grants,
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    ...(c.scope !== '' && { scope: c.scope }),
  });
  return {
    clients: [
      client(CLIENTS.alice, ['client_credentials']),
      client(CLIENTS.bob, ['client_credentials']),
      client(CLIENTS.limited, ['client_credentials']),
      client(CLIENTS.opaque, ['client_credentials']),
      client(CLIENTS.rs, []),
    ],
    jwks: { keys: [key] },
    scopes: [MCP_SCOPE, ADMIN_SCOPE],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string, client: ClientLike) => ({
          scope: `${MCP_SCOPE} ${ADMIN_SCOPE}`,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: client.clientId === CLIENTS.opaque.id ? 'opaque' : 'jwt',
        }),
      },
    },
  };
}

/** Starts the provider on 127.0.0.1:`port` (0: any free port). */
export async function startIssuer(port = 0, initialKey?: JWK): Promise<TestIssuer> {
  let key = initialKey ?? (await signingKey('key-1'));
  let server: Server;
  const listen = async (on: number, issuer: string | undefined): Promise<number> => {
    // The issuer must name the port, which is only known after listening: listen first, then mount the provider.
    // eslint-disable-next-line prefer-const -- assigned once the port is known, after the server that reads it
    let provider: Provider | undefined;
    server = createServer((req, res) => provider!.callback()(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(on, '127.0.0.1', () => resolve());
    });
    const bound = (server.address() as AddressInfo).port;
    provider = new Provider(issuer ?? `http://127.0.0.1:${bound}`, configuration(key));
    return bound;
  };
  const bound = await listen(port, undefined);
  const issuer = `http://127.0.0.1:${bound}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    issuer,
    port: bound,
    get key() {
      return key;
    },
    set key(k: JWK) {
      key = k;
    },
    async token(name, resource, scope) {
      const c = CLIENTS[name];
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource, scope: scope ?? c.scope });
      const ask = () =>
        fetch(`${issuer}/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body,
        });
      // After a restart the first request may go out on a kept-alive socket of the old listener: once more on a new one.
      const r = await ask().catch(ask);
      const json = (await r.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!json.access_token) throw new Error(`token for ${name}: ${json.error}: ${json.error_description}`);
      return json.access_token;
    },
    async restart(newKey) {
      await close();
      if (newKey) key = newKey;
      await listen(bound, issuer);
    },
    stop: close,
  };
}
