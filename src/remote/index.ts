/**
 * mcp-cancel-pool/remote: many hosts on one Redis. A front end's
 * {@link QueueBackend} (hand it to `serveStdio`/`serveHttp` instead of an
 * `Executor`) puts each call on a BullMQ queue; {@link WorkerHost}s take
 * them and run them on their local pools. The one-winner rule holds across
 * hosts: a Lua compare-and-set per transition (see docs/many-hosts.md "Many hosts").
 *
 * BullMQ and ioredis are optional peer dependencies: importing this entry
 * without them stops with one line naming the `npm install` to run
 * (src/peers.ts), so the values below are loaded after that check.
 *
 * @module mcp-cancel-pool/remote
 */
import { withPeers } from '../peers.js';

const remote = await withPeers('mcp-cancel-pool/remote', ['bullmq', 'ioredis'], () => import('./entry.js'));

/** A front end's backend: each call goes on a BullMQ queue for the worker hosts (docs/many-hosts.md "Many hosts"). */
export const QueueBackend: typeof remote.QueueBackend = remote.QueueBackend;
/** A front end's backend: each call goes on a BullMQ queue for the worker hosts (docs/many-hosts.md "Many hosts"). */
export type QueueBackend = import('./front/queue-backend.js').QueueBackend;
/** A worker host: takes calls off the queue and runs them on its local pool. */
export const WorkerHost: typeof remote.WorkerHost = remote.WorkerHost;
/** A worker host: takes calls off the queue and runs them on its local pool. */
export type WorkerHost = import('./host/worker-host.js').WorkerHost;
/** Tasks in Redis, shared by every front end of a queue. */
export const RedisTaskStore: typeof remote.RedisTaskStore = remote.RedisTaskStore;
/** Tasks in Redis, shared by every front end of a queue. */
export type RedisTaskStore = import('./tasks/task-store.js').RedisTaskStore;
/** The 2026 tasks' questions to the client, shared by the front ends through Redis. */
export const RedisTaskInputs: typeof remote.RedisTaskInputs = remote.RedisTaskInputs;
/** The 2026 tasks' questions to the client, shared by the front ends through Redis. */
export type RedisTaskInputs = import('./tasks/task-input-store.js').RedisTaskInputs;
/** How long a front end waits for the call of a host whose liveness key lapsed before it fails the call. */
export const LOST_HOST_TIMEOUT_MS: typeof remote.LOST_HOST_TIMEOUT_MS = remote.LOST_HOST_TIMEOUT_MS;
/** How long the front end waits with no live worker host before it fails its queued calls (and refuses new ones). */
export const NO_HOST_TIMEOUT_MS: typeof remote.NO_HOST_TIMEOUT_MS = remote.NO_HOST_TIMEOUT_MS;
/** How long queuing a call, or Redis's answer to a cancel, may take before the front end decides alone. */
export const REDIS_TIMEOUT_MS: typeof remote.REDIS_TIMEOUT_MS = remote.REDIS_TIMEOUT_MS;
/** BullMQ's lock on an active job; a host that stops renewing it (SIGKILL) loses the job to the stalled check. */
export const LOCK_DURATION_MS: typeof remote.LOCK_DURATION_MS = remote.LOCK_DURATION_MS;
/** How often each host looks for jobs whose lock expired and puts them back in the queue (BullMQ's default is 30 s). */
export const STALLED_INTERVAL_MS: typeof remote.STALLED_INTERVAL_MS = remote.STALLED_INTERVAL_MS;
/** How long a SIGTERM'd host lets its running jobs finish before it stops them and exits. */
export const DRAIN_TIMEOUT_MS: typeof remote.DRAIN_TIMEOUT_MS = remote.DRAIN_TIMEOUT_MS;

// What needs neither peer: loaded with the entry, directly.
export { ClusterKey } from './config/cluster-key.js';
export { FRONT_LIVENESS_TTL_MS, HOST_LIVENESS_TTL_MS, LIVENESS_REFRESH_MS } from './liveness.js';
export { DEFAULT_QUEUE } from './messages.js';
export { REDIS_URL_ENV, redactUrl } from './config/redis-config.js';

export type { QueueBackendOptions } from './front/queue-backend.js';
export type { WorkerHostOptions, WorkerHostStats } from './host/worker-host.js';
export type { RedisTaskStoreOptions, StoredAnswer, StoredTask, TaskSettlement } from './tasks/task-store.js';
export type { StoredClaim, StoredQuestion } from './tasks/task-input-store.js';
export { RedisConfigError, RedisAuthError, RedisUnreachableError } from '../errors.js';
