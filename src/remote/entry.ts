/**
 * The values of `mcp-cancel-pool/remote`, loaded by src/remote/index.ts once its optional peers (bullmq, ioredis)
 * are known to be installed.
 *
 * mcp-cancel-pool/remote: many hosts on one Redis. A front end's
 * {@link QueueBackend} (hand it to `serveStdio`/`serveHttp` instead of an
 * `Executor`) puts each call on a BullMQ queue; {@link WorkerHost}s take
 * them and run them on their local pools. The one-winner rule holds across
 * hosts: a Lua compare-and-set per transition (see docs/many-hosts.md "Many hosts").
 */
export { QueueBackend, LOST_HOST_TIMEOUT_MS, NO_HOST_TIMEOUT_MS, REDIS_TIMEOUT_MS } from './front/queue-backend.js';
export type { QueueBackendOptions } from './front/queue-backend.js';
export { WorkerHost, LOCK_DURATION_MS, STALLED_INTERVAL_MS, DRAIN_TIMEOUT_MS } from './host/worker-host.js';
export type { WorkerHostOptions, WorkerHostStats } from './host/worker-host.js';
export { RedisTaskStore } from './tasks/task-store.js';
export type { RedisTaskStoreOptions, StoredAnswer, StoredTask, TaskSettlement } from './tasks/task-store.js';
export { RedisTaskInputs } from './tasks/task-input-store.js';
export type { StoredClaim, StoredQuestion } from './tasks/task-input-store.js';
export { RedisConfigError, RedisAuthError, RedisUnreachableError } from '../errors.js';
