/**
 * Who may reach the Streamable HTTP endpoint: the Host names it answers to
 * (DNS-rebinding protection), and the operator's bearer token. The MCP
 * authorization spec makes the server an OAuth resource server; with a token
 * the operator hands out there is no authorization server to discover, so
 * what applies is the resource side: `Authorization: Bearer` on every
 * request, never in the query string, 401 with a `WWW-Authenticate`
 * challenge when it is missing or wrong.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { ServerResponse } from 'node:http';
import { AUTH_TOKEN_ENV } from '../../defaults.js';
import { HttpConfigError } from '../../errors.js';
import { errorResponse, SERVER_BUSY } from '../../server/wire-errors.js';
import { sendJson, type HttpStep } from './http-errors.js';

export { AUTH_TOKEN_ENV } from '../../defaults.js';
export { HttpConfigError } from '../../errors.js';
/** The realm named in `WWW-Authenticate` challenges. */
export const AUTH_REALM = 'mcp-cancel-pool';
/** Shorter tokens are refused at start: they could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

const LOCALHOST_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Whether binding `host` keeps the server reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** A Host-header hostname as `new URL()` spells it: lower case, IPv6 in brackets. */
function hostname(name: string): string {
  const h = name.toLowerCase();
  return isIPv6(h) ? `[${h}]` : h;
}

/**
 * The Host-header names the server answers to. `--allowed-host` names them
 * explicitly; without it, a loopback bind answers to the localhost names, a
 * wildcard bind (0.0.0.0, ::) to those and this machine's interface
 * addresses at start, and any other bind to the name or address it was given.
 * A name an attacker controls is never among them, whatever the bind.
 */
export function acceptedHostnames(host: string, allowedHosts: readonly string[] = []): string[] {
  if (allowedHosts.length > 0) return allowedHosts.map(hostname);
  const bare = host.replace(/^\[|\]$/g, '');
  if (isLoopback(bare)) return [...new Set([...LOCALHOST_NAMES, hostname(bare)])];
  if (bare === '0.0.0.0' || bare === '::' || bare === '') {
    const addresses = Object.values(networkInterfaces()).flatMap((list) =>
      (list ?? []).map((a) => hostname(a.address.replace(/%.*$/, ''))),
    );
    return [...new Set([...LOCALHOST_NAMES, ...addresses])];
  }
  return [hostname(bare)];
}

/** What {@link checkExposure} looks at. */
export interface ExposureOptions {
  readonly host: string;
  readonly authToken?: string | undefined;
  readonly allowUnauthenticated?: boolean | undefined;
}

/**
 * Refuses a non-loopback bind without a token unless the operator said so
 * explicitly: anyone who can reach the port could otherwise run tools, and
 * read files under the tools' root.
 */
export function checkExposure({ host, authToken, allowUnauthenticated }: ExposureOptions): void {
  if (authToken !== undefined) validateToken(authToken, 'the auth token');
  if (isLoopback(host) || authToken !== undefined || allowUnauthenticated) return;
  throw new HttpConfigError(
    `refusing to serve HTTP on ${host} without authentication: give a bearer token with --auth-token-file <path> or ${AUTH_TOKEN_ENV}, or pass --allow-unauthenticated`,
  );
}

/** The token from `file` (if given) or else from {@link AUTH_TOKEN_ENV} (empty = unset); surrounding whitespace is ignored. */
export function loadAuthToken(file: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new HttpConfigError(
        `cannot read --auth-token-file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
    return validateToken(text.trim(), `--auth-token-file ${file}`);
  }
  const fromEnv = env[AUTH_TOKEN_ENV]?.trim();
  return fromEnv ? validateToken(fromEnv, AUTH_TOKEN_ENV) : undefined; // set but empty counts as unset
}

function validateToken(token: string, source: string): string {
  // Visible ASCII only: anything else cannot travel in an Authorization header as one token.
  if (!/^[\x21-\x7e]*$/.test(token))
    throw new HttpConfigError(`${source}: the token must be one word of visible ASCII characters`);
  if (token.length < MIN_TOKEN_LENGTH)
    throw new HttpConfigError(
      `${source}: the token must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
    );
  return token;
}

/**
 * A request step requiring `Authorization: Bearer <token>` on every
 * request. The comparison hashes both sides to equal length first, so
 * neither the content nor the length of the token leaks through timing.
 */
export function bearerAuth(token: string): HttpStep {
  const expected = digest(token);
  return (req, res, next) => {
    const header = req.headers.authorization;
    if (!header || !/^bearer(\s|$)/i.test(header)) {
      // No credentials at all: a bare challenge, without an error code (RFC 6750 section 3.1).
      return deny(
        res,
        401,
        `Bearer realm="${AUTH_REALM}"`,
        'authorization required: send Authorization: Bearer <token>',
      );
    }
    const presented = /^bearer +(\S+) *$/i.exec(header)?.[1];
    if (presented === undefined) {
      return deny(
        res,
        400,
        `Bearer realm="${AUTH_REALM}", error="invalid_request"`,
        'malformed Authorization header: expected Bearer <token>',
      );
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      return deny(
        res,
        401,
        `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="the bearer token is not valid"`,
        'invalid bearer token',
      );
    }
    next();
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function deny(res: ServerResponse, status: number, challenge: string, message: string): void {
  sendJson(res, status, errorResponse(null, SERVER_BUSY, message), { 'www-authenticate': challenge });
}
