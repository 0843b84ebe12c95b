/**
 * The HTTP endpoint as an OAuth 2.1 resource server, as the MCP authorization
 * spec (2025-11-25 and 2026-07-28 alike) asks, built on the SDK's helpers
 * (`verifyBearerToken` with `expectedResource`, `bearerAuthChallengeResponse`,
 * `buildOAuthProtectedResourceMetadata`, `getOAuthProtectedResourceMetadataUrl`,
 * `requireScopes`); the token verifier is ours ({@link AccessTokenVerifier}).
 *
 * - Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource`
 *   and its path-suffixed form for the resource's path (`…/mcp`), no token needed.
 * - Every other request needs `Authorization: Bearer <access token>`: none → 401
 *   with `WWW-Authenticate: Bearer resource_metadata="…"` (and `scope`); a token
 *   that does not verify → 401 `invalid_token`; short of the scopes every
 *   request needs → 403 `insufficient_scope`.
 * - A `tools/call` of a tool that declares scopes, by a token without them →
 *   403 `insufficient_scope` naming every scope the call needs.
 * - The caller is (`iss`, `sub`, client id): it owns the 2025 sessions it
 *   opens and the 2026 tasks and parked calls it creates, and it is the key
 *   of fairness and of the per-caller task limit.
 *
 * Framework-neutral: it reads Node's `IncomingMessage` and writes to a
 * `ServerResponse`, so any router can mount {@link Authorization.gate}.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  bearerAuthChallengeResponse,
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  requireScopes,
  verifyBearerToken,
  type AuthInfo,
  type OAuthMetadata,
  type OAuthProtectedResourceMetadata,
  type ScopeChallengeHandler,
} from '@modelcontextprotocol/server';
import type { ToolDefinition } from '../../stages/tool.js';
import { HttpConfigError, isLoopback } from './access.js';
import { isScopeToken, type AuthorizationConfig } from './authorization-config.js';
import { IssuerDiscovery, IssuerUnavailableError } from './issuer-discovery.js';
import { RefusalLog } from './refusal-log.js';
import { logger } from '../../log/logger.js';
import { AccessTokenVerifier, type TokenSubject } from './token-verifier.js';

/** An HTTP answer: status, headers and body, for any framework to send. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The outcome of {@link Authorization.authorize}: the verified caller, or the answer that refuses the request. */
export type Authorized = { readonly caller: string; readonly authInfo: AuthInfo } | { readonly refused: HttpAnswer };

/** The well-known path prefix of RFC 9728. */
const PRM_PATH = '/.well-known/oauth-protected-resource';

/** A request as the gate sees it; `auth` is where the SDK's Node adapter looks for the verified token. */
export type AuthorizedRequest = IncomingMessage & { auth?: AuthInfo };

/** The resource server; see the module comment. */
export class Authorization {
  /** Where clients find this server's Protected Resource Metadata (advertised in every challenge). */
  readonly metadataUrl: string;
  readonly #discovery: IssuerDiscovery;
  readonly #verifier: AccessTokenVerifier;
  readonly #document: OAuthProtectedResourceMetadata & { bearer_methods_supported: string[] };
  readonly #paths: ReadonlySet<string>;
  readonly #toolScopes = new Map<string, { scopes: readonly string[]; check: ScopeChallengeHandler }>();
  readonly #refusals = new RefusalLog((message, fields) => logger().warn(message, fields));

  /**
   * @param tools the tools served, whose declared scopes are listed in the metadata and checked on each call
   * @param log one line to the operator (discovery failures and recoveries; never a token or a secret)
   */
  constructor(
    readonly config: AuthorizationConfig,
    tools: ReadonlyMap<string, ToolDefinition>,
    log: (line: string) => void = () => undefined,
  ) {
    const resource = new URL(config.resource);
    for (const tool of tools.values()) {
      const scopes = tool.scopes ?? [];
      const bad = scopes.find((s) => !isScopeToken(s));
      if (bad !== undefined)
        throw new HttpConfigError(
          `tool ${tool.name}: scope ${JSON.stringify(bad)} is not an OAuth scope (visible ASCII, no spaces, quotes or backslashes)`,
        );
      const all = [...new Set([...config.requiredScopes, ...scopes])];
      if (scopes.length > 0)
        this.#toolScopes.set(tool.name, { scopes: all, check: requireScopes(...(all as [string, ...string[]])) });
    }
    this.metadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
    const scopesSupported = [
      ...new Set([...config.requiredScopes, ...[...tools.values()].flatMap((t) => t.scopes ?? [])]),
    ];
    let built: OAuthProtectedResourceMetadata;
    try {
      built = buildOAuthProtectedResourceMetadata({
        // Only the issuer is read from it: the document names the authorization server, clients discover the rest.
        oauthMetadata: { issuer: config.issuer } as OAuthMetadata,
        resourceServerUrl: resource,
        ...(scopesSupported.length > 0 && { scopesSupported }),
        resourceName: 'mcp-cancel-pool',
        dangerouslyAllowInsecureIssuerUrl: isLoopback(new URL(config.issuer).hostname),
      });
    } catch (error) {
      throw new HttpConfigError(`--auth-issuer ${config.issuer}: ${(error as Error).message}`);
    }
    // The resource exactly as configured (URL.href would add a slash to a bare origin), and how tokens travel.
    this.#document = { ...stripUndefined(built), resource: config.resource, bearer_methods_supported: ['header'] };
    const suffixed = new URL(this.metadataUrl).pathname;
    this.#paths = new Set([PRM_PATH, suffixed, `${PRM_PATH}/mcp`]);
    this.#discovery = new IssuerDiscovery(config.issuer, {
      onFailure: (why) => log(`authorization: ${why}; retrying (not ready until it answers)`),
      onRecovered: () => log(`authorization: reached ${config.issuer}; ready`),
    });
    this.#verifier = new AccessTokenVerifier(config, this.#discovery);
  }

  /** Starts issuer discovery; resolves after the first attempt (a failure is retried in the background, not thrown). */
  start(): Promise<void> {
    return this.#discovery.start();
  }

  /** For `/readyz`: whether tokens can be verified now, and if not, why. */
  readiness(): { ready: true } | { ready: false; why: string } {
    return this.#discovery.readiness();
  }

  /** Stops discovery retries. */
  close(): void {
    this.#discovery.close();
  }

  /** The Protected Resource Metadata answer for `method path`, or undefined if it is not one of the metadata paths. */
  metadata(method: string, path: string): HttpAnswer | undefined {
    if (!this.#paths.has(path.replace(/(.)\/$/, '$1'))) return undefined;
    const cors = { 'access-control-allow-origin': '*' };
    if (method === 'OPTIONS')
      return {
        status: 204,
        headers: {
          ...cors,
          'access-control-allow-methods': 'GET, HEAD, OPTIONS',
          'access-control-allow-headers': 'mcp-protocol-version',
        },
        body: '',
      };
    if (method !== 'GET' && method !== 'HEAD')
      return {
        status: 405,
        headers: { ...cors, allow: 'GET, HEAD, OPTIONS', 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'method_not_allowed' }),
      };
    return {
      status: 200,
      headers: { ...cors, 'content-type': 'application/json', 'cache-control': 'max-age=300' },
      body: method === 'HEAD' ? '' : JSON.stringify(this.#document),
    };
  }

  /** Whether a verified token is an operator's: it carries `--auth-operator-scope` (none configured: nobody is). */
  isOperator(authInfo: AuthInfo | undefined): boolean {
    const scope = this.config.operatorScope;
    return scope !== undefined && authInfo !== undefined && authInfo.scopes.includes(scope);
  }

  /** Verifies the request's bearer token; see the module comment for the refusals. */
  async authorize(authorization: string | undefined): Promise<Authorized> {
    const options = { requiredScopes: [...this.config.requiredScopes], resourceMetadataUrl: this.metadataUrl };
    if (authorization === undefined || !/^bearer(\s|$)/i.test(authorization)) {
      // No credentials at all: a challenge without an error code (RFC 6750 section 3.1), naming where to start.
      const scope = this.config.requiredScopes.length > 0 ? `, scope="${this.config.requiredScopes.join(' ')}"` : '';
      return {
        refused: {
          status: 401,
          headers: {
            'www-authenticate': `Bearer resource_metadata="${this.metadataUrl}"${scope}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            error: 'invalid_request',
            error_description: 'authorization required: send Authorization: Bearer <access token>',
          }),
        },
      };
    }
    const token = /^bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (token === undefined) {
      return {
        refused: {
          status: 400,
          headers: {
            'www-authenticate': `Bearer error="invalid_request", resource_metadata="${this.metadataUrl}"`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            error: 'invalid_request',
            error_description: 'malformed Authorization header: expected Bearer <token>',
          }),
        },
      };
    }
    try {
      const authInfo = await verifyBearerToken(`Bearer ${token}`, {
        ...options,
        verifier: this.#verifier,
        expectedResource: new URL(this.config.resource),
      });
      return { caller: callerOf(authInfo)!, authInfo };
    } catch (error) {
      if (error instanceof IssuerUnavailableError) {
        return {
          refused: {
            status: 503,
            headers: { 'retry-after': '5', 'content-type': 'application/json' },
            body: JSON.stringify({
              error: 'temporarily_unavailable',
              error_description: `tokens cannot be verified now: ${error.why}`,
            }),
          },
        };
      }
      const refusal =
        error instanceof OAuthError ? error : new OAuthError(OAuthErrorCode.InvalidToken, 'the token is not valid');
      this.#refusals.refused(refusal.message, token);
      return { refused: await answerOf(bearerAuthChallengeResponse(refusal, options)) };
    }
  }

  /**
   * The 403 for a body whose `tools/call` names a tool that needs scopes the
   * token lacks (every scope that call needs, in one challenge), or undefined.
   */
  async scopeChallenge(body: unknown, authInfo: AuthInfo | undefined): Promise<HttpAnswer | undefined> {
    if (!authInfo || this.#toolScopes.size === 0) return undefined;
    for (const message of Array.isArray(body) ? body : [body]) {
      const m = message as { method?: unknown; id?: unknown; params?: { name?: unknown } } | null;
      if (m?.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
      const needs = this.#toolScopes.get(m.params.name);
      const challenge = needs && (await needs.check({ request: m as never, authInfo }));
      if (!challenge) continue;
      const error = new OAuthError(
        OAuthErrorCode.InsufficientScope,
        `the tool ${m.params.name} needs the scope ${needs.scopes.join(' ')}`,
      );
      return answerOf(
        bearerAuthChallengeResponse(error, {
          requiredScopes: [...challenge.scopes],
          resourceMetadataUrl: this.metadataUrl,
        }),
      );
    }
    return undefined;
  }

  /**
   * Middleware for any Node router with `next`: answers the metadata paths,
   * refuses requests without a valid token, and leaves the verified token on
   * `req.auth` (where the SDK's Node adapter and {@link requestCaller} find it).
   */
  readonly gate = (req: AuthorizedRequest, res: ServerResponse, next: (error?: unknown) => void): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    const doc = this.metadata(req.method ?? 'GET', path);
    if (doc) return send(res, doc);
    this.authorize(req.headers.authorization).then((result) => {
      if ('refused' in result) return send(res, result.refused);
      req.auth = result.authInfo;
      next();
    }, next);
  };
}

/** The caller a verified token names: a stable id of (`iss`, `sub`, client id); undefined without a token from {@link Authorization}. */
export function callerOf(authInfo: AuthInfo | undefined): string | undefined {
  const subject = authInfo?.extra?.subject as TokenSubject | undefined;
  if (!authInfo || !subject) return undefined;
  // Hashed: a fixed-length key with no separator a crafted sub could imitate, and no personal data in keys and logs.
  return `oauth:${createHash('sha256')
    .update(JSON.stringify([subject.iss, subject.sub, authInfo.clientId]))
    .digest('hex')
    .slice(0, 32)}`;
}

/** The caller of a request the gate let through, or `fallback` (no OAuth: every client is that one caller). */
export function requestCaller(req: IncomingMessage, fallback: string): string {
  return callerOf((req as AuthorizedRequest).auth) ?? fallback;
}

/** Writes `answer` to `res`. */
export function send(res: ServerResponse, answer: HttpAnswer): void {
  res.writeHead(answer.status, { 'cache-control': 'no-store', ...answer.headers });
  res.end(answer.body);
}

async function answerOf(response: Response): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  return { status: response.status, headers, body: await response.text() };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
