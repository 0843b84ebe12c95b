/** `serve --redis URL [--queue NAME]`: the front end puts each call on a shared queue instead of its local pool. */
import { logger } from '../log/logger.js';
import { resolve } from 'node:path';
import type { CallBackend } from '../backend/backend.js';
import { RedisAuthError, RedisUnreachableError } from '../errors.js';
import { Executor } from '../executor/executor.js';
import { ClusterKey } from '../remote/config/cluster-key.js';
import type { QueueBackend } from '../remote/front/queue-backend.js';
import { taskSettlement } from '../tasks/answer.js';
import { resolveLimits } from '../tasks/memory-store.js';
import type { TaskLimits, TaskStore } from '../tasks/store.js';
import { UsageError } from './usage-error.js';
import { redisUrlOf, sentinelOf, type RedisFlags } from './redis-flags.js';
import { withPeers } from '../peers.js';

/** The flags the backend choice reads. */
export interface BackendFlags extends RedisFlags {
  queueLimit?: number;
  queueLimitPerCaller?: number;
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
  const { QueueBackend } = await withPeers(
    'serve --redis',
    ['bullmq', 'ioredis'],
    () => import('../remote/front/queue-backend.js'),
  );
  const backend = await QueueBackend.create({
    redisUrl,
    ...(sentinelOf(flags) && { redisSentinel: sentinelOf(flags)! }),
    ...(clusterKey && { clusterKey }),
    ...(flags.redisCaFile !== undefined && { redisCaFile: flags.redisCaFile }),
    queue: flags.queue,
    ...(flags.queueLimit !== undefined && { queueLimit: flags.queueLimit }),
    ...(flags.queueLimitPerCaller !== undefined && { queueLimitPerCaller: flags.queueLimitPerCaller }),
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
    logger().warn(
      `${error.message}: serving anyway; calls fail with a clear error until it is reachable (/readyz says not ready meanwhile)`,
    );
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
