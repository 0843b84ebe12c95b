/**
 * Where Redis is and how to reach it, checked once at start: the URL (from a
 * flag, a file or {@link REDIS_URL_ENV}), its credentials kept out of every
 * message ({@link RedisConfig.display}), and the TLS CA for `rediss://`.
 * Every connection of a front end or host is built from one of these.
 */
import { readFileSync } from 'node:fs';
import { RedisConfigError } from '../../errors.js';
import { sentinelConfig, type SentinelOptions, type SentinelSource } from './sentinel-config.js';

/** The environment variable a Redis URL may come from (keeps the password out of argv, hence out of `ps`). */
export const REDIS_URL_ENV = 'MCP_CANCEL_POOL_REDIS_URL';

/** A checked Redis location. */
export interface RedisConfig {
  /** The URL as given, credentials included: only ever handed to ioredis. */
  readonly url: string;
  /** The URL with its user name and password replaced by `***`: the only form that goes into messages. */
  readonly display: string;
  /**
   * ioredis options every connection gets (TLS with the CA file, when given;
   * with Sentinel, the sentinels and master group: the URL then gives only
   * the primary's credentials and database, its host is not used).
   */
  readonly options: { readonly tls?: { readonly ca: Buffer } } & Partial<SentinelOptions> & {
      readonly reconnectOnError?: (error: Error) => boolean;
    };
  /** Replaces the URL's secrets wherever they occur in `text` (an error message from a library, say). */
  redact(text: string): string;
}

/** Where a Redis URL may come from; the first one given wins, in this order. */
export interface RedisSource {
  readonly url?: string;
  /** A file whose first line is the URL. */
  readonly urlFile?: string;
  /** The CA certificate(s) (PEM) that sign the server's certificate, for `rediss://`. */
  readonly caFile?: string;
  /** Reach the primary through these sentinels (see sentinel-config.ts); a URL is then optional. */
  readonly sentinel?: Omit<SentinelSource, 'env'>;
  readonly env?: NodeJS.ProcessEnv;
}

/** The URL used with Sentinel when none is given: no credentials, database 0 (its host is never used). */
const SENTINEL_PLACEHOLDER_URL = 'redis://sentinel-primary';

/** Reads and checks a Redis location; throws {@link RedisConfigError} (one line, no secrets) for anything unusable. */
export function redisConfig(source: RedisSource): RedisConfig {
  let url = source.url;
  if (url === undefined && source.urlFile !== undefined) {
    try {
      url = readFileSync(source.urlFile, 'utf8').split(/\r?\n/)[0]!.trim();
    } catch (error) {
      throw new RedisConfigError(
        `cannot read the Redis URL file ${source.urlFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  }
  url ??= (source.env ?? process.env)[REDIS_URL_ENV];
  if ((url === undefined || url === '') && source.sentinel !== undefined) url = SENTINEL_PLACEHOLDER_URL;
  if (url === undefined || url === '')
    throw new RedisConfigError(`no Redis URL: give --redis <url>, --redis-url-file <path> or ${REDIS_URL_ENV}`);
  const display = redactUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisConfigError(
      `not a Redis URL: ${display} (expected redis://[user:password@]host[:port][/db] or rediss://...)`,
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisConfigError(`not a Redis URL: ${display} (the scheme must be redis:// or rediss://)`);
  }
  if (parsed.hostname === '') throw new RedisConfigError(`not a Redis URL: ${display} (no host)`);
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db))
    throw new RedisConfigError(`not a Redis URL: ${display} (the path must be a database number)`);
  const sentinel = source.sentinel && sentinelConfig({ ...source.sentinel, ...(source.env && { env: source.env }) });
  if (sentinel && parsed.protocol === 'rediss:')
    throw new RedisConfigError(
      `TLS (rediss://) through Sentinel is not supported: give a redis:// URL with --redis-sentinels (got ${display})`,
    );
  const options: RedisConfig['options'] = {
    ...(sentinel && {
      ...sentinel.options,
      // A primary demoted under a connection answers writes READONLY: reconnect, which asks the sentinels again.
      reconnectOnError: (error: Error) => error.message.startsWith('READONLY'),
    }),
  };
  if (source.caFile !== undefined) {
    if (parsed.protocol !== 'rediss:')
      throw new RedisConfigError(`--redis-ca-file needs a rediss:// URL (got ${display})`);
    let ca: Buffer;
    try {
      ca = readFileSync(source.caFile);
    } catch (error) {
      throw new RedisConfigError(
        `cannot read the Redis CA file ${source.caFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
    Object.assign(options, { tls: { ca } });
  }
  const secrets = [
    parsed.password,
    decodeURIComponent(parsed.password),
    parsed.username,
    decodeURIComponent(parsed.username),
    sentinel?.secret ?? '',
  ].filter((s) => s.length >= 3);
  return {
    url,
    display: sentinel ? sentinel.display : display,
    options,
    redact: (text) => {
      let out = text.split(url).join(display);
      for (const s of secrets) out = out.split(s).join('***');
      return out;
    },
  };
}

/** `redis://user:pw@host` → `redis://***:***@host`; anything unparsable loses whatever looks like credentials. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    return `${u.protocol}//${u.username !== '' ? '***' : ''}${u.password !== '' ? ':***' : ''}@${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Whether an error from Redis means the credentials were refused (not that Redis is away). */
export function isAuthFailure(error: unknown): boolean {
  const m = error instanceof Error ? error.message : String(error);
  return /WRONGPASS|NOAUTH|invalid password|invalid username-password|AUTH <password> called without any password/i.test(
    m,
  );
}

/** A one-line reason for a connection error, without secrets. */
export function describeRedisError(config: RedisConfig, error: unknown): string {
  const m = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
  // ioredis's Sentinel error wraps the cause: name it, not "unreachable", when the sentinels refused the password.
  const viaSentinels = /^All sentinels are unreachable\..*?Last error: (.*)$/s.exec(m);
  if (viaSentinels)
    return config.redact(
      isAuthFailure(viaSentinels[1])
        ? `the sentinels said: ${viaSentinels[1]}`
        : `no sentinel answered; the last said: ${viaSentinels[1]}`,
    );
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|altnames/i.test(m))
    return config.redact(
      `${m}: its TLS certificate was not accepted; give --redis-ca-file with the CA that signed it, and a host name the certificate names`,
    );
  return config.redact(m);
}
