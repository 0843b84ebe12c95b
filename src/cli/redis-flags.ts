/**
 * The Redis flags of every command that takes them (`serve --redis`,
 * `worker`), declared once and read once: where Redis is (a URL, its file or
 * variable, or Sentinels), its TLS CA, the queue and the cluster key.
 */
import type { Command } from 'commander';
import { RedisConfigError } from '../errors.js';
import { DEFAULT_QUEUE } from '../remote/messages.js';
import { REDIS_URL_ENV, redisConfig, type RedisConfig } from '../remote/config/redis-config.js';
import { SENTINEL_PASSWORD_ENV, type SentinelSource } from '../remote/config/sentinel-config.js';
import { UsageError } from './usage-error.js';

/** The flags {@link redisOptions} adds. */
export interface RedisFlags {
  redis?: string;
  redisUrlFile?: string;
  redisCaFile?: string;
  redisSentinels?: string;
  redisSentinelName?: string;
  redisSentinelPasswordFile?: string;
  clusterKeyFile?: string;
  queue: string;
}

/** What differs between the commands: the help of `--redis` and of `--queue`. */
export interface RedisFlagHelp {
  readonly redis: string;
  readonly queue: string;
}

/** Adds the Redis flags to `command`; returns it. */
export function redisOptions(command: Command, help: RedisFlagHelp): Command {
  return command
    .option('--redis <url>', help.redis)
    .option(
      '--redis-url-file <path>',
      `like --redis, the URL read from this file (keeps a password out of argv; or set ${REDIS_URL_ENV})`,
    )
    .option(
      '--redis-ca-file <path>',
      "with a rediss:// URL: the CA certificate(s) (PEM) the Redis server's certificate must chain to",
    )
    .option(
      '--redis-sentinels <host:port,...>',
      'reach Redis through these Redis Sentinels (host:port, comma-separated; port 26379 if none): every connection asks them for the primary and follows a failover; --redis (or its file or variable), if given, then supplies only the primary\'s password and database (see docs/many-hosts.md "Many hosts")',
    )
    .option(
      '--redis-sentinel-name <name>',
      'with --redis-sentinels: the master group name the sentinels monitor (default: mymaster)',
    )
    .option(
      '--redis-sentinel-password-file <path>',
      `with --redis-sentinels: a file whose first line is the sentinels' own password (their requirepass; or set ${SENTINEL_PASSWORD_ENV})`,
    )
    .option('--queue <name>', help.queue, DEFAULT_QUEUE)
    .option(
      '--cluster-key-file <path>',
      'a file holding a key (32+ bytes; openssl rand -hex 32) shared by every front end and worker host: jobs and host messages are signed with it, and refused unless they verify (see docs/many-hosts.md "Many hosts")',
    );
}

/** The flags that say where Redis is. */
export type RedisLocationFlags = Pick<
  RedisFlags,
  'redis' | 'redisUrlFile' | 'redisCaFile' | 'redisSentinels' | 'redisSentinelName' | 'redisSentinelPasswordFile'
>;

/** The Sentinel settings the flags give, if `--redis-sentinels` (or its variable) is there. */
export function sentinelOf(flags: RedisLocationFlags): Omit<SentinelSource, 'env'> | undefined {
  if (flags.redisSentinels === undefined) return undefined;
  return {
    sentinels: flags.redisSentinels,
    ...(flags.redisSentinelName !== undefined && { name: flags.redisSentinelName }),
    ...(flags.redisSentinelPasswordFile !== undefined && { passwordFile: flags.redisSentinelPasswordFile }),
  };
}

/**
 * The Redis URL of `serve` or `worker`: `--redis`, else `--redis-url-file`,
 * else {@link REDIS_URL_ENV}; undefined if none. A URL that cannot be used
 * is refused with one line (a {@link UsageError}) that names no secret.
 */
export function redisUrlOf(flags: RedisLocationFlags): string | undefined {
  return redisConfigOf(flags)?.url;
}

/** The checked Redis location the flags (or the environment) give, or undefined for none; a bad one is a usage error. */
export function redisConfigOf(flags: RedisLocationFlags): RedisConfig | undefined {
  const sentinel = sentinelOf(flags);
  if (
    flags.redis === undefined &&
    flags.redisUrlFile === undefined &&
    !process.env[REDIS_URL_ENV] &&
    sentinel === undefined
  )
    return undefined;
  try {
    return redisConfig({
      ...(flags.redis !== undefined && { url: flags.redis }),
      ...(flags.redisUrlFile !== undefined && { urlFile: flags.redisUrlFile }),
      ...(flags.redisCaFile !== undefined && { caFile: flags.redisCaFile }),
      ...(sentinel && { sentinel }),
    });
  } catch (error) {
    if (error instanceof RedisConfigError) throw new UsageError(error.message);
    throw error;
  }
}
