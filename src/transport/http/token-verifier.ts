/**
 * The token verifier the SDK's bearer-auth helpers call: a JWT access token
 * (RFC 9068) is checked here with jose against the issuer's published keys;
 * any other token goes to the introspection endpoint (RFC 7662) when one is
 * configured. Either way a token counts only if it was issued by our issuer,
 * for this server's canonical resource URI (RFC 8707: a token for another
 * resource is refused, never passed on), and is within its lifetime. Error
 * descriptions say what was wrong with the token, never the token.
 */
import { createHash } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import type { AuthorizationConfig } from './authorization-config.js';
import { IssuerUnavailableError, type IssuerDiscovery } from './issuer-discovery.js';

/** Signature algorithms accepted: asymmetric only (a symmetric key would be one the issuer shares with us, and `none` is no signature). */
export const ALLOWED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** What a verified token says about its holder, kept in `AuthInfo.extra`. */
export interface TokenSubject {
  /** The issuer. */
  readonly iss: string;
  /** The subject (the user, or for client credentials often the client itself); empty when the token names none. */
  readonly sub: string;
}

/** Positive introspection answers are reused this long at most (a revocation takes effect within it). */
const INTROSPECTION_CACHE_MS = 30_000;
const INTROSPECTION_CACHE_ENTRIES = 10_000;
const INTROSPECTION_TIMEOUT_MS = 5_000;

/** Verifies access tokens for one resource server; see the module comment. */
export class AccessTokenVerifier implements OAuthTokenVerifier {
  readonly #introspected = new Map<string, { info: AuthInfo; until: number }>();
  readonly #audiences: string[];

  constructor(
    private readonly config: AuthorizationConfig,
    private readonly issuer: IssuerDiscovery,
  ) {
    // The spec prefers the form without a trailing slash; a token minted for the other spelling names the same resource.
    const bare = config.resource.replace(/\/$/, '');
    this.#audiences = [...new Set([config.resource, bare, `${bare}/`])];
  }

  /** {@link OAuthTokenVerifier.verifyAccessToken}: the token's {@link AuthInfo}, or an {@link OAuthError} (or {@link IssuerUnavailableError}). */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    return looksLikeJwt(token) ? this.#verifyJwt(token) : this.#introspect(token);
  }

  async #verifyJwt(token: string): Promise<AuthInfo> {
    const refusedType = typeRefusal(decodeProtectedHeader(token).typ, this.config.jwtTypes);
    if (refusedType) throw new OAuthError(OAuthErrorCode.InvalidToken, refusedType);
    const keys = this.issuer.keys();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.getKey, {
        issuer: this.config.issuer,
        audience: this.#audiences,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: this.config.clockToleranceSec,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw jwtRefusal(error);
    }
    return this.#authInfo(token, {
      iss: this.config.issuer,
      sub: typeof payload.sub === 'string' ? payload.sub : '',
      clientId: stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp') ?? stringClaim(payload, 'cid') ?? '',
      scopes: scopesClaim(payload),
      exp: payload.exp!,
    });
  }

  async #introspect(token: string): Promise<AuthInfo> {
    const client = this.config.introspectionClient;
    const endpoint =
      this.config.introspectionEndpoint?.href ?? (client ? this.issuer.metadata().introspection_endpoint : undefined);
    if (!client || !endpoint)
      throw new OAuthError(
        OAuthErrorCode.InvalidToken,
        'the token is not a JWT access token, and no introspection is configured for opaque tokens',
      );
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.#introspected.get(key);
    if (cached && cached.until > Date.now()) return cached.info;
    this.#introspected.delete(key);

    let answer: Record<string, unknown>;
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
        redirect: 'error',
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new IssuerUnavailableError(`the introspection endpoint answered HTTP ${response.status}`);
      }
      answer = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof IssuerUnavailableError) throw error;
      throw new IssuerUnavailableError(
        `the introspection endpoint cannot be reached (${(error as Error).name === 'TimeoutError' ? 'timed out' : 'request failed'})`,
      );
    }
    const now = Date.now() / 1000;
    const skew = this.config.clockToleranceSec;
    if (answer.active !== true) throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token is not active');
    if (answer.iss !== undefined && answer.iss !== this.config.issuer)
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token was issued by another issuer');
    const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
    if (!audiences.some((a) => this.#audiences.includes(a as string)))
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token was not issued for this resource');
    if (typeof answer.exp !== 'number') throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token has no expiry');
    if (answer.exp + skew <= now) throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token has expired');
    if (typeof answer.nbf === 'number' && answer.nbf - skew > now)
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'the token is not valid yet');
    const info = this.#authInfo(token, {
      iss: this.config.issuer,
      sub: typeof answer.sub === 'string' ? answer.sub : '',
      clientId: typeof answer.client_id === 'string' ? answer.client_id : '',
      scopes: typeof answer.scope === 'string' ? answer.scope.split(' ').filter((s) => s !== '') : [],
      exp: answer.exp,
    });
    if (this.#introspected.size >= INTROSPECTION_CACHE_ENTRIES)
      this.#introspected.delete(this.#introspected.keys().next().value!);
    this.#introspected.set(key, { info, until: Math.min(Date.now() + INTROSPECTION_CACHE_MS, answer.exp * 1000) });
    return info;
  }

  #authInfo(token: string, t: { iss: string; sub: string; clientId: string; scopes: string[]; exp: number }): AuthInfo {
    const subject: TokenSubject = { iss: t.iss, sub: t.sub };
    // The SDK's helpers refuse a token past expiresAt exactly; the tolerance for skewed clocks is granted here.
    return {
      token,
      clientId: t.clientId,
      scopes: t.scopes,
      expiresAt: t.exp + this.config.clockToleranceSec,
      resource: new URL(this.config.resource),
      extra: { subject },
    };
  }
}

/**
 * Why a JWT's `typ` header is refused under `policy` (authorization-config.ts), or undefined. Media types compare
 * case-insensitively, with `application/` optional (RFC 7515 §4.1.9).
 */
export function typeRefusal(typ: unknown, policy: 'access' | 'at+jwt' | 'any'): string | undefined {
  if (policy === 'any') return undefined;
  const type = typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : undefined;
  if (policy === 'at+jwt')
    return type === 'at+jwt' ? undefined : 'the token is not a JWT access token (typ at+jwt, --auth-require-at-jwt)';
  if (typ === undefined || type === 'jwt' || type === 'at+jwt') return undefined;
  return 'the token is not an access token (its typ is neither JWT nor at+jwt)';
}

/** Three base64url segments whose first decodes to a JOSE header with an `alg`. */
function looksLikeJwt(token: string): boolean {
  if (!/^[\w-]+\.[\w-]+\.[\w-]*$/.test(token)) return false;
  try {
    return typeof decodeProtectedHeader(token).alg === 'string';
  } catch {
    return false;
  }
}

/** The refusal for a JWT that did not verify; an unreachable key set is the issuer's problem, not the token's. */
function jwtRefusal(error: unknown): Error {
  const invalid = (why: string) => new OAuthError(OAuthErrorCode.InvalidToken, why);
  if (error instanceof joseErrors.JWTExpired) return invalid('the token has expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return invalid('the token was not issued for this resource');
    if (error.claim === 'iss') return invalid('the token was issued by another issuer');
    if (error.claim === 'nbf') return invalid('the token is not valid yet');
    return invalid(`the token's ${error.claim} claim is not valid`);
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return invalid('the token is signed with a key the issuer does not publish');
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return invalid('the token signature does not verify');
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return invalid('the token is signed with an algorithm that is not accepted');
  if (error instanceof IssuerUnavailableError) return error;
  if (
    error instanceof joseErrors.JWKSTimeout ||
    error instanceof joseErrors.JWKSInvalid ||
    (error as Error)?.name === 'TypeError'
  ) {
    return new IssuerUnavailableError("the issuer's keys cannot be fetched");
  }
  if (error instanceof joseErrors.JOSEError) return invalid('the token is not a valid JWT');
  return invalid('the token is not valid');
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const v = payload[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `scope` (RFC 9068: space-separated) or `scp` (a list, as some issuers write it). */
function scopesClaim(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter((s) => s !== '');
  const scp = payload.scp;
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter((s) => s !== '');
  return [];
}

/** RFC 6749 section 2.3.1: client id and secret are form-encoded before the Basic encoding. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
