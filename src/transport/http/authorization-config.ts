/**
 * What the operator configures for OAuth authorization over HTTP (the MCP
 * authorization spec: this server is an OAuth 2.1 resource server): the
 * issuer whose tokens it accepts, its own canonical resource URI (the
 * audience those tokens must name, RFC 8707), the scopes every request needs,
 * and optionally an introspection endpoint (RFC 7662) with the client
 * credentials to call it, read from a file so they never appear in argv.
 * Every mistake is found here, at start, and said in one line.
 */
import { readFileSync } from 'node:fs';
import { HttpConfigError, isLoopback } from './access.js';

/** The OAuth resource-server settings, checked. */
export interface AuthorizationConfig {
  /** The authorization server's issuer identifier, exactly as its metadata and tokens spell it (compared as a string). */
  readonly issuer: string;
  /** This server's canonical resource URI as given: the `resource` of its metadata, the audience its tokens must name. */
  readonly resource: string;
  /** Scopes every request needs (each tool may add its own). */
  readonly requiredScopes: readonly string[];
  /** RFC 7662 endpoint for opaque tokens; by default the issuer's `introspection_endpoint`, when credentials are given. */
  readonly introspectionEndpoint?: URL;
  /** This server's own client credentials at the introspection endpoint (`client_secret_basic`). */
  readonly introspectionClient?: ClientCredentials;
  /**
   * Which JWT `typ` headers are accepted: `access` (the default) takes `JWT`, `at+jwt`, `application/at+jwt` or none,
   * as mainstream issuers write access tokens, and refuses any other explicit type (`id_token+jwt`, `logout+jwt`,
   * `dpop+jwt`, …); `at+jwt` only RFC 9068's (`--auth-require-at-jwt`); `any` every type (`--auth-any-jwt-type`).
   */
  readonly jwtTypes: 'access' | 'at+jwt' | 'any';
  /** Allowed clock difference for `exp`, `nbf` and `iat`, in seconds. */
  readonly clockToleranceSec: number;
  /** A token carrying this scope is an operator's: `executor://stats` shows it every caller's counts (`--auth-operator-scope`). */
  readonly operatorScope?: string;
}

/** A client id and secret (never logged, never in argv). */
export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The flags (and their `MCP_CANCEL_POOL_*` variables) {@link authorizationConfig} reads. */
export interface AuthorizationFlags {
  readonly authIssuer?: string | undefined;
  readonly authResource?: string | undefined;
  readonly authScopes?: string | undefined;
  readonly authIntrospectionEndpoint?: string | undefined;
  readonly authClientCredentialsFile?: string | undefined;
  readonly authAnyJwtType?: boolean | undefined;
  readonly authRequireAtJwt?: boolean | undefined;
  readonly authOperatorScope?: string | undefined;
}

/** Default tolerance for clocks that disagree a little (`exp`, `nbf`). */
export const CLOCK_TOLERANCE_SEC = 30;

/** RFC 6749 section 3.3 scope-token: visible ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The configuration the flags describe, or undefined when no issuer is given
 * (the other authorization flags then make no sense and are refused).
 * Throws {@link HttpConfigError} with a one-line message.
 */
export function authorizationConfig(flags: AuthorizationFlags): AuthorizationConfig | undefined {
  if (flags.authIssuer === undefined || flags.authIssuer.trim() === '') {
    const stray = (
      [
        'authResource',
        'authScopes',
        'authIntrospectionEndpoint',
        'authClientCredentialsFile',
        'authOperatorScope',
      ] as const
    ).find((k) => flags[k] !== undefined && flags[k] !== '');
    if (stray)
      throw new HttpConfigError(
        `--${kebab(stray)} needs --auth-issuer (the authorization server whose tokens are accepted)`,
      );
    return undefined;
  }
  const issuer = flags.authIssuer.trim();
  httpUrl(issuer, '--auth-issuer');
  if (flags.authResource === undefined || flags.authResource.trim() === '') {
    throw new HttpConfigError(
      '--auth-issuer needs --auth-resource: the canonical URI of this MCP server (e.g. https://mcp.example.com/mcp), the audience its tokens must name',
    );
  }
  const resource = flags.authResource.trim();
  httpUrl(resource, '--auth-resource');
  const requiredScopes = scopesOf(flags.authScopes ?? '');
  const introspectionEndpoint = flags.authIntrospectionEndpoint
    ? httpUrl(flags.authIntrospectionEndpoint.trim(), '--auth-introspection-endpoint')
    : undefined;
  const introspectionClient = flags.authClientCredentialsFile
    ? readClientCredentials(flags.authClientCredentialsFile)
    : undefined;
  const operatorScope = flags.authOperatorScope?.trim();
  if (operatorScope !== undefined && operatorScope !== '' && !SCOPE_TOKEN.test(operatorScope))
    throw new HttpConfigError(
      `--auth-operator-scope: ${JSON.stringify(operatorScope)} is not one OAuth scope (visible ASCII, no spaces, quotes or backslashes)`,
    );
  if (flags.authRequireAtJwt === true && flags.authAnyJwtType === true)
    throw new HttpConfigError('--auth-require-at-jwt and --auth-any-jwt-type contradict each other: give one');
  if (introspectionEndpoint && !introspectionClient) {
    throw new HttpConfigError(
      '--auth-introspection-endpoint needs --auth-client-credentials-file: the introspection endpoint wants this server to authenticate',
    );
  }
  return {
    issuer,
    resource,
    requiredScopes,
    ...(introspectionEndpoint && { introspectionEndpoint }),
    ...(introspectionClient && { introspectionClient }),
    jwtTypes: flags.authRequireAtJwt === true ? 'at+jwt' : flags.authAnyJwtType === true ? 'any' : 'access',
    clockToleranceSec: CLOCK_TOLERANCE_SEC,
    ...(operatorScope !== undefined && operatorScope !== '' && { operatorScope }),
  };
}

/** Scopes from a space- or comma-separated list. */
export function scopesOf(text: string): string[] {
  const scopes = text.split(/[\s,]+/).filter((s) => s !== '');
  for (const scope of scopes)
    if (!SCOPE_TOKEN.test(scope))
      throw new HttpConfigError(
        `--auth-scopes: ${JSON.stringify(scope)} is not an OAuth scope (visible ASCII, no quotes or backslashes)`,
      );
  return [...new Set(scopes)];
}

/** Whether `scope` may appear in a scope list (tools declaring scopes are checked with it at start). */
export function isScopeToken(scope: string): boolean {
  return SCOPE_TOKEN.test(scope);
}

/**
 * An absolute http(s) URL without fragment or query; plain http only for a
 * loopback host (tokens and metadata must not cross a network in clear).
 */
function httpUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HttpConfigError(
      `${flag}: ${JSON.stringify(text)} is not an absolute URL (e.g. https://auth.example.com/realms/mcp)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new HttpConfigError(`${flag}: ${text} must be an https URL`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname))
    throw new HttpConfigError(`${flag}: ${text} must be https (plain http only for a loopback host)`);
  if (url.hash || text.includes('#')) throw new HttpConfigError(`${flag}: ${text} must not have a fragment`);
  if (url.search) throw new HttpConfigError(`${flag}: ${text} must not have a query string`);
  if (url.username || url.password) throw new HttpConfigError(`${flag}: must not carry credentials in the URL`);
  return url;
}

/**
 * Client credentials from a file: JSON `{"client_id": …, "client_secret": …}`.
 * The messages name the file, never its content.
 */
export function readClientCredentials(file: string): ClientCredentials {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new HttpConfigError(
      `cannot read --auth-client-credentials-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpConfigError(
      `--auth-client-credentials-file ${file}: expected JSON {"client_id": "…", "client_secret": "…"}`,
    );
  }
  const p = parsed as { client_id?: unknown; client_secret?: unknown } | null;
  if (
    typeof p?.client_id !== 'string' ||
    p.client_id === '' ||
    typeof p.client_secret !== 'string' ||
    p.client_secret === ''
  ) {
    throw new HttpConfigError(
      `--auth-client-credentials-file ${file}: expected JSON {"client_id": "…", "client_secret": "…"}, both non-empty strings`,
    );
  }
  return { clientId: p.client_id, clientSecret: p.client_secret };
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
