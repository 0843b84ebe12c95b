/** `serve --redis URL [--queue NAME]`: the front end puts each call on a shared queue instead of its local pool. */
import { resolve } from 'node:path';
import type { CallBackend } from '../backend/backend.js';
import { RedisAuthError, RedisConfigError, RedisUnreachableError } from '../errors.js';
import { Executor } from '../executor/executor.js';
import { ClusterKey } from '../remote/cluster-key.js';
import type { QueueBackend } from '../remote/queue-backend.js';
import { REDIS_URL_ENV, redisConfig, type RedisConfig } from '../remote/redis-config.js';
import { taskSettlement } from '../tasks/answer.js';
import { resolveLimits } from '../tasks/memory-store.js';
import type { TaskLimits, TaskStore } from '../tasks/store.js';
import type { SentinelSource } from '../remote/sentinel-config.js';
import { UsageError } from './usage-error.js';

/** The flags the backend choice reads. */
export interface BackendFlags {
  redis?: string;
  redisUrlFile?: string;
  redisCaFile?: string;
  redisSentinels?: string;
  redisSentinelName?: string;
  redisSentinelPasswordFile?: string;
  clusterKeyFile?: string;
  queue: string;
  queueLimit?: number;
  tools: string[];
  builtins: boolean;
}

/**
 * How long `serve` waits at most for Redis at start before it serves anyway
 * (calls then fail with a clear error until Redis is back). A connection
 * attempt that fails ends the wait at once: only a Redis that neither
 * answers nor refuses (a dropped SYN) costs the whole wait.
 */
export const REDIS_START_WAIT_MS = 10_000;

/** The flags that say where Redis is. */
export type RedisFlags = Pick<BackendFlags, 'redis' | 'redisUrlFile' | 'redisCaFile' | 'redisSentinels' | 'redisSentinelName' | 'redisSentinelPasswordFile'>;

/** The Sentinel settings the flags give, if `--redis-sentinels` (or its variable) is there. */
export function sentinelOf(flags: RedisFlags): Omit<SentinelSource, 'env'> | undefined {
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
export function redisUrlOf(flags: RedisFlags): string | undefined {
  return redisConfigOf(flags)?.url;
}

/** The checked Redis location the flags (or the environment) give, or undefined for none; a bad one is a usage error. */
export function redisConfigOf(flags: RedisFlags): RedisConfig | undefined {
  const sentinel = sentinelOf(flags);
  if (flags.redis === undefined && flags.redisUrlFile === undefined && !process.env[REDIS_URL_ENV] && sentinel === undefined) return undefined;
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

/**
 * The queue backend, or undefined without a Redis URL (the local pool stays
 * the default). Waits until Redis is reachable so the first calls can be
 * queued, or until a connection attempt fails (then serves at once and
 * reconnects meanwhile; at most {@link REDIS_START_WAIT_MS}); refuses
 * credentials Redis rejects.
 */
export async function openQueueBackend(flags: BackendFlags): Promise<QueueBackend | undefined> {
  const redisUrl = redisUrlOf(flags);
  if (redisUrl === undefined) return undefined;
  let clusterKey: ClusterKey | undefined;
  try {
    clusterKey = flags.clusterKeyFile === undefined ? undefined : ClusterKey.fromFile(flags.clusterKeyFile);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // BullMQ (and ioredis) load only for a front end on Redis: the local pool's start-up does not pay for them.
  const { QueueBackend } = await import('../remote/queue-backend.js');
  const backend = await QueueBackend.create({
    redisUrl,
    ...(sentinelOf(flags) && { redisSentinel: sentinelOf(flags)! }),
    ...(clusterKey && { clusterKey }),
    ...(flags.redisCaFile !== undefined && { redisCaFile: flags.redisCaFile }),
    queue: flags.queue,
    ...(flags.queueLimit !== undefined && { queueLimit: flags.queueLimit }),
    toolModules: flags.tools.map((m) => resolve(m)),
    builtins: flags.builtins,
  });
  try {
    await backend.ready(REDIS_START_WAIT_MS, { failFast: true });
  } catch (error) {
    if (error instanceof RedisAuthError) {
      await backend.close();
      throw new UsageError(error.message);
    }
    if (!(error instanceof RedisUnreachableError)) throw error;
    process.stderr.write(`[mcp-cancel-pool] ${error.message}: serving anyway; calls fail with a clear error until it is reachable (/readyz says not ready meanwhile)\n`);
  }
  return backend;
}

/** How the log line names where calls run (credentials redacted). */
export function describeBackend(backend: CallBackend, flags: BackendFlags): string {
  if (backend instanceof Executor) {
    const priority = backend.toolPriority.priority;
    return `${backend.threads} worker thread${backend.threads === 1 ? '' : 's'} (+${backend.spareThreads} standby${priority === 'normal' ? '' : `, priority ${priority}`})`;
  }
  const display = (backend as Partial<Pick<QueueBackend, 'redis'>>).redis?.display ?? 'Redis';
  return `calls queued on Redis ${display} (queue '${flags.queue}') for worker hosts`;
}

/**
 * The queue's task store in Redis, with the server's task limits (the
 * finished-task byte bound is the memory store's: in Redis each task goes
 * with its ttl, and Redis's own maxmemory bounds the rest).
 */
export function queueTaskStore(backend: QueueBackend, limits: TaskLimits): TaskStore {
  return backend.taskStore({ ...resolveLimits(limits), settlementOf: taskSettlement });
}
