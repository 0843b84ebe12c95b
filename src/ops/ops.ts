/**
 * Operating a process: its metrics and readiness, put together for a front
 * end (`serve`) or a worker host (`worker`) from what each already keeps.
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { BackendStats } from '../backend/backend.js';
import { describeRedisError, type RedisConfig } from '../remote/config/redis-config.js';
import type { WireStats } from '../server/guard.js';
import type { TaskStats } from '../tasks/runner.js';
import { healthHandler, type HealthHandler, type Readiness } from './health.js';
import { subscribeJobMetrics } from './job-metrics.js';
import { Metrics, type Snapshot } from './metrics.js';

/** A Redis connection used only to answer `/readyz` and count live worker hosts. */
export class RedisProbe {
  private readonly redis: Redis;
  /** The last connection error, redacted; cleared once connected. */
  private lastError: string | undefined;
  constructor(
    private readonly config: RedisConfig,
    private readonly queue: string,
  ) {
    // Fail fast while Redis is away (the answer is "not ready"), reconnect on its own.
    // ioredis (CommonJS) loads only when a probe is made: a local pool's start-up does not pay for it.
    const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(config.url, {
      ...config.options,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (n) => Math.min(n * 200, 2000),
    });
    this.redis.on('error', (error: Error) => (this.lastError = describeRedisError(config, error)));
    this.redis.on('ready', () => (this.lastError = undefined));
    void this.redis.connect().catch(() => undefined);
  }

  /** Why Redis is not connected, for `/readyz` (no secret in it). */
  notConnected(): string {
    return `Redis is not connected: ${this.config.display}${this.lastError ? ` (${this.lastError})` : ''}; calls are refused until it is back`;
  }

  /** Whether Redis answers now. */
  async connected(): Promise<boolean> {
    return this.redis.status === 'ready' && (await this.redis.ping().catch(() => '')) === 'PONG';
  }

  /** Worker hosts whose liveness key exists (`mcp:<queue>:host:*`). */
  async liveHosts(): Promise<number> {
    let n = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `mcp:${this.queue}:host:*`, 'COUNT', 1000);
      cursor = next;
      n += keys.length;
    } while (cursor !== '0');
    return n;
  }

  close(): void {
    this.redis.disconnect();
  }
}

/** What {@link frontEndOps} reads, each at scrape time. */
export interface FrontEndSources {
  /** The backend's counters (calls running, queued, cancelled, …). */
  stats(): BackendStats;
  /** The task runner's counters. */
  taskStats(): TaskStats;
  readonly wire: WireStats;
  /** Live sessions now; stdio has one. Absent where they are not known (a pool embedded in another server). */
  sessions?(): number;
  readonly tools: ReadonlySet<string>;
  /** With `--redis`: the probe for readiness and worker hosts. */
  readonly redis?: RedisProbe;
  /** False once shutting down. */
  accepting(): boolean;
  /** With `--auth-issuer`: whether the authorization server has been reached (tokens can be verified). */
  readonly authorization?: {
    /** Ready once the authorization server has been reached; else why not. */
    readiness(): { ready: true } | { ready: false; why: string };
  };
}

/** A process's metrics and health handler. */
export interface Ops {
  readonly metrics: Metrics;
  /** The `/healthz`, `/readyz`, `/metrics` handler; with a token, those need it too. */
  handler(authToken?: string): HealthHandler;
  /** Stops listening to job events and closes the Redis probe's connection, if any. */
  close(): void;
}

/** How a front end is served, for {@link frontEndOps}. */
export interface FrontEndOpsOptions {
  /** The pool is in this process (no `--redis`): its job events can feed the timing histograms. */
  readonly local: boolean;
  /**
   * Something can read `/metrics` (HTTP, or stdio with `--health-port`). When nothing can, the metrics that cost the
   * process something of their own (job events on every call, the process metrics' timers) are not collected.
   */
  readonly scrapeable: boolean;
}

/** Metrics and readiness of a front end. */
export function frontEndOps(sources: FrontEndSources, { local, scrapeable }: FrontEndOpsOptions): Ops {
  const metrics = new Metrics(
    'front',
    async (): Promise<Snapshot> => {
      const s = sources.stats();
      const t = sources.taskStats();
      const hosts =
        sources.redis && (await sources.redis.connected())
          ? await sources.redis.liveHosts().catch(() => undefined)
          : undefined;
      return {
        running: s.running,
        queued: s.queued,
        ...(local && {
          threads: s.threads,
          hardStops: s.hardKilled,
          childrenStarted: s.childrenStarted,
          childrenKilled: s.childrenKilled,
          childrenAlive: s.childrenAlive,
        }),
        tasksWorking: t.tasksWorking,
        tasksFinished: t.tasksStored - t.tasksWorking,
        tasksEvicted: t.tasksEvicted,
        ...(sources.sessions && { sessions: sources.sessions() }),
        ...(hosts !== undefined && { workerHosts: hosts }),
        lateCancelsIgnored: s.lateCancelsIgnored,
        unknownCancelsIgnored: s.unknownCancelsIgnored,
        responsesDropped: sources.wire.responsesDropped,
      };
    },
    { processMetrics: scrapeable },
  );
  const unsubscribe =
    local && scrapeable
      ? subscribeJobMetrics(metrics, { tools: sources.tools, countCalls: true, countCancels: false })
      : () => undefined;
  const readiness: Readiness = async () => {
    if (!sources.accepting()) return { ready: false, why: 'shutting down' };
    const issuer = sources.authorization?.readiness();
    if (issuer && !issuer.ready) return issuer;
    if (!sources.redis) return { ready: true }; // the pool was warmed up before serving began
    if (!(await sources.redis.connected())) return { ready: false, why: sources.redis.notConnected() };
    if ((await sources.redis.liveHosts()) === 0) return { ready: false, why: 'no worker host is alive on the queue' };
    return { ready: true };
  };
  return opsOf(metrics, readiness, unsubscribe, sources.redis);
}

/** What {@link workerHostOps} reads from a running worker host. */
export interface WorkerHostSources {
  /** The host executor's counters. */
  stats(): {
    running: number;
    queued: number;
    threads: number;
    hardKilled: number;
    childrenStarted: number;
    childrenKilled: number;
    childrenAlive: number;
    lateCancelsIgnored: number;
    unknownCancelsIgnored: number;
  };
  /** Responses the host produced but lost to a cancel decided in Redis. */
  dropped(): number;
  readonly tools: ReadonlySet<string>;
  readonly redis: RedisProbe;
  /** False once draining or shutting down. */
  accepting(): boolean;
}

/** Metrics and readiness of a worker host; calls are counted from its executor's job events. */
export function workerHostOps(sources: WorkerHostSources): Ops {
  const metrics = new Metrics('worker', () => {
    const s = sources.stats();
    return {
      running: s.running,
      queued: s.queued,
      threads: s.threads,
      hardStops: s.hardKilled,
      childrenStarted: s.childrenStarted,
      childrenKilled: s.childrenKilled,
      childrenAlive: s.childrenAlive,
      lateCancelsIgnored: s.lateCancelsIgnored,
      unknownCancelsIgnored: s.unknownCancelsIgnored,
      responsesDropped: sources.dropped(),
    };
  });
  const unsubscribe = subscribeJobMetrics(metrics, { tools: sources.tools, countCalls: true, countCancels: true });
  const readiness: Readiness = async () => {
    if (!sources.accepting()) return { ready: false, why: 'shutting down' };
    if (!(await sources.redis.connected())) return { ready: false, why: sources.redis.notConnected() };
    return { ready: true };
  };
  return opsOf(metrics, readiness, unsubscribe, sources.redis);
}

/** The {@link Ops} of a role: its metrics, its health handler, and what to release on close. */
function opsOf(metrics: Metrics, readiness: Readiness, unsubscribe: () => void, redis: RedisProbe | undefined): Ops {
  return {
    metrics,
    handler: (authToken) => healthHandler({ metrics, readiness, ...(authToken !== undefined && { authToken }) }),
    close() {
      unsubscribe();
      redis?.close();
    },
  };
}
