/** The options of a front end's queue backend (queue-backend.ts) and their default bounds. */
import type { ClusterKey } from './cluster-key.js';
import type { SentinelSource } from './sentinel-config.js';

/**
 * How long a job may stay on a host whose liveness key is gone before the
 * front end answers it with an error. A host's key outlives it by
 * `HOST_LIVENESS_TTL_MS` (8 s); BullMQ's stalled check hands a crashed
 * host's job to another host 5–7.5 s after the crash, before the key is even
 * gone. So a call on a crashed host, with no other host, is answered with an
 * error 12–14 s after the crash.
 */
export const LOST_HOST_TIMEOUT_MS = 4000;
/** How long the front end waits with no live worker host before it fails its queued calls (and refuses new ones). */
export const NO_HOST_TIMEOUT_MS = 5000;
/** How long queuing a call, or Redis's answer to a cancel, may take before the front end decides alone. */
export const REDIS_TIMEOUT_MS = 2000;

/** Options for `QueueBackend.create`. */
export interface QueueBackendOptions {
  /** e.g. `redis://127.0.0.1:6379`, or `rediss://...` for TLS. Never shown: messages carry it with its credentials redacted. */
  readonly redisUrl: string;
  /** PEM CA certificate(s) the `rediss://` server's certificate must chain to (host name checked too). */
  readonly redisCaFile?: string;
  /** Reach the primary through Redis Sentinel (the URL then gives only its credentials and database; see sentinel-config.ts). */
  readonly redisSentinel?: Omit<SentinelSource, 'env'>;
  /** @default 'mcp-cancel-pool' */
  readonly queue?: string;
  /** Tool modules, the same as the worker hosts load (metadata and argument validation only). */
  readonly toolModules?: readonly (string | URL)[];
  /** @default true */
  readonly builtins?: boolean;
  /**
   * Calls of this front end allowed to wait for a worker host; beyond it a
   * call fails at once with "server busy".
   * @default 256
   */
  readonly queueLimit?: number;
  /** @default {@link LOST_HOST_TIMEOUT_MS} */
  readonly lostHostTimeoutMs?: number;
  /** @default {@link NO_HOST_TIMEOUT_MS} */
  readonly noHostTimeoutMs?: number;
  /** Signs this front end's jobs, and refuses what hosts send unless it verifies (see cluster-key.ts). */
  readonly clusterKey?: ClusterKey;
  /** @default {@link REDIS_TIMEOUT_MS} */
  readonly submitTimeoutMs?: number;
  /** Where the front end says what happens to Redis and the hosts (one line each; never a secret). @default stderr */
  readonly log?: (message: string) => void;
}
