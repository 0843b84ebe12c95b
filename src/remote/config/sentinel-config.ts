/**
 * Redis Sentinel: which sentinels to ask for the primary of which master
 * group, and with which password. ioredis does the rest on every connection
 * built from these options: it asks a sentinel for the primary, checks the
 * node it reached is one (ROLE), and on a failover (the connection drops, or a
 * write is answered READONLY) asks again and reconnects.
 */
import { readFileSync } from 'node:fs';
import { RedisConfigError } from '../../errors.js';

/** The environment variable the sentinels' password may come from (keeps it out of argv, hence out of `ps`). */
export const SENTINEL_PASSWORD_ENV = 'MCP_CANCEL_POOL_REDIS_SENTINEL_PASSWORD';
/** Sentinel's usual port, for an entry that names none. */
export const DEFAULT_SENTINEL_PORT = 26379;
/** The master group name Sentinel's own examples use. */
export const DEFAULT_SENTINEL_NAME = 'mymaster';

/** Where the Sentinel settings come from (flags, files, the environment). */
export interface SentinelSource {
  /** `host:port[,host:port…]` (`[v6]:port` for IPv6; the port defaults to 26379). */
  readonly sentinels: string;
  /** @default {@link DEFAULT_SENTINEL_NAME} */
  readonly name?: string;
  /** A file whose first line is the sentinels' password (their `requirepass`); else {@link SENTINEL_PASSWORD_ENV}. */
  readonly passwordFile?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The ioredis options of Sentinel mode. */
export interface SentinelOptions {
  readonly sentinels: { host: string; port: number }[];
  readonly name: string;
  readonly sentinelPassword?: string;
}

/** Checked Sentinel settings: the ioredis options, a display form without secrets, and the secret to redact. */
export interface SentinelConfig {
  readonly options: SentinelOptions;
  /** e.g. `mymaster via Sentinel 127.0.0.1:26379,127.0.0.1:26380`. */
  readonly display: string;
  readonly secret: string | undefined;
}

/** Reads and checks Sentinel settings; throws {@link RedisConfigError} (one line, no secrets). */
export function sentinelConfig(source: SentinelSource): SentinelConfig {
  const sentinels = source.sentinels
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseAddress);
  if (sentinels.length === 0)
    throw new RedisConfigError('--redis-sentinels: no sentinel given (expected host:port[,host:port...])');
  const name = source.name ?? DEFAULT_SENTINEL_NAME;
  if (!/^[\w.\-:]+$/.test(name))
    throw new RedisConfigError(`--redis-sentinel-name: not a master group name: ${JSON.stringify(name)}`);
  let password: string | undefined;
  if (source.passwordFile !== undefined) {
    try {
      password = readFileSync(source.passwordFile, 'utf8').split(/\r?\n/)[0]!.trim();
    } catch (error) {
      throw new RedisConfigError(
        `cannot read the Sentinel password file ${source.passwordFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  } else {
    password = (source.env ?? process.env)[SENTINEL_PASSWORD_ENV];
  }
  if (password === '') password = undefined;
  return {
    // Not ioredis's failoverDetector: its +switch-master disconnect, landing while a connection is being
    // re-established, ends that connection for good (status 'end'; seen in the failover test). A demoted
    // primary closes its clients itself, and a READONLY reply reconnects (redis-config.ts).
    options: { sentinels, name, ...(password !== undefined && { sentinelPassword: password }) },
    display: `${name} via Sentinel ${sentinels.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)).join(',')}`,
    secret: password,
  };
}

function parseAddress(entry: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(entry);
  const port = m?.[3] === undefined ? DEFAULT_SENTINEL_PORT : Number(m[3]);
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RedisConfigError(
      `--redis-sentinels: not a host:port: ${JSON.stringify(entry.replace(/^[^@]*@/, '***@'))} (expected host:port[,host:port...])`,
    );
  }
  return { host: m[1] ?? m[2]!, port };
}
