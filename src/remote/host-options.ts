/** The options and counters of a worker host (worker-host.ts). */
import type { ExecutorOptions } from '../executor/options.js';
import type { ClusterKey } from './cluster-key.js';
import type { SentinelSource } from './sentinel-config.js';

/** Options for `WorkerHost.start`. */
export interface WorkerHostOptions {
  /** e.g. `redis://127.0.0.1:6379`, or `rediss://...` for TLS. Messages carry it with its credentials redacted. */
  readonly redisUrl: string;
  /** PEM CA certificate(s) the `rediss://` server's certificate must chain to. */
  readonly redisCaFile?: string;
  /** Reach the primary through Redis Sentinel (the URL then gives only its credentials and database; see sentinel-config.ts). */
  readonly redisSentinel?: Omit<SentinelSource, 'env'>;
  /** @default 'mcp-cancel-pool' */
  readonly queue?: string;
  /** The local pool; its `threads` is also the host's BullMQ concurrency. */
  readonly executor?: ExecutorOptions;
  /** @default `<hostname>-<pid>-<random>` */
  readonly hostId?: string;
  /** @default LOCK_DURATION_MS (worker-host.ts) */
  readonly lockDurationMs?: number;
  /** @default STALLED_INTERVAL_MS (worker-host.ts) */
  readonly stalledIntervalMs?: number;
  /** Where the host says what happens to Redis (never a secret). @default stderr */
  readonly log?: (message: string) => void;
  /** Jobs must carry its MAC (else they are refused, never run), and this host signs what it sends front ends. */
  readonly clusterKey?: ClusterKey;
}

/** This host's counters. */
export interface WorkerHostStats {
  /** Outcomes that left (both CASes won). */
  answered: number;
  /** Outcomes dropped because the Redis CAS was lost (the front end's cancel won first). */
  dropped: number;
  /** Jobs that were cancelled, orphaned or gone when this host took them (or cancelled during the take): never run. */
  skipped: number;
  /** Cancels (messages or the check) that won on the local state word. */
  cancelsRelayed: number;
  /** Jobs cancelled because their front end's liveness key expired. */
  orphansCancelled: number;
  /** Jobs stopped because their Redis state was gone (Redis restarted without persistence, or flushed). */
  stateLost: number;
  /** Cancelled jobs whose work has stopped here (counted, and published in the liveness key, the moment it stops). */
  stopped: number;
  /** Jobs whose data did not verify against the cluster key: never run. */
  refused: number;
}
