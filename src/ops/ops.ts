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

/** Every Redis read of the probe (a PING, a SCAN page) gives up after this: a stalled Redis is "not ready". */
export const PROBE_READ_TIMEOUT_MS = 1000;
/** The probe's view of Redis is refreshed this often, in the background. */
export const PROBE_REFRESH_MS = 1000;

/** What the probe last saw of Redis: connected (and how many worker hosts are alive), or why not. */
export type RedisView =
  | { readonly connected: true; readonly hosts: number | undefined }
  | { readonly connected: false; readonly why: string };

/**
 * A Redis connection used only to answer `/readyz` and count live worker hosts. `/readyz` and `/metrics` never wait
 * on Redis: they read {@link RedisProbe.view}, a cached view refreshed in the background (one refresh at a time,
 * every read bounded by {@link PROBE_READ_TIMEOUT_MS}), so a Redis that stalls (a SIGSTOP, a full pause) makes them
 * answer "not ready" and why at once, instead of hanging for the stall (issue 64: 15 s).
 */
export class RedisProbe {
  private readonly redis: Redis;
  /** The last connection error, redacted; cleared once connected. */
  private lastError: string | undefined;
  #view: RedisView = { connected: false, why: 'Redis has not been checked yet' };
  #checked = false;
  #refreshing: Promise<void> | undefined;
  #refreshStarted = 0;
  readonly #timer: NodeJS.Timeout;
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
      // A connected Redis that stops answering (paused, overloaded) fails each read rather than holding it.
      commandTimeout: PROBE_READ_TIMEOUT_MS,
      retryStrategy: (n) => Math.min(n * 200, 2000),
    });
    this.redis.on('error', (error: Error) => (this.lastError = describeRedisError(config, error)));
    this.redis.on('ready', () => {
      this.lastError = undefined;
      this.refresh();
    });
    void this.redis.connect().catch(() => undefined);
    this.#timer = setInterval(() => this.refresh(), PROBE_REFRESH_MS);
    this.#timer.unref();
  }

  /** What the probe last saw (never waits on Redis); a refresh that has not answered within the read bound says so. */
  view(): RedisView {
    if (this.#refreshing && Date.now() - this.#refreshStarted > PROBE_READ_TIMEOUT_MS * 2)
      return { connected: false, why: this.#stalled() };
    return this.#view;
  }

  /** The view, waiting at most for the read bound for the first check when none was made yet. */
  async current(): Promise<RedisView> {
    if (!this.#checked) {
      this.refresh();
      await Promise.race([this.#refreshing, new Promise((r) => setTimeout(r, PROBE_READ_TIMEOUT_MS).unref())]);
    }
    return this.view();
  }

  /** Starts a background refresh of the view, unless one is running. */
  refresh(): void {
    if (this.#refreshing) return;
    this.#refreshStarted = Date.now();
    this.#refreshing = this.#look()
      .then(
        (view) => void (this.#view = view),
        (error: Error) =>
          void (this.#view = {
            connected: false,
            why: /timed? ?out/i.test(error.message)
              ? this.#stalled()
              : `Redis read failed: ${this.config.display} (${error.message})`,
          }),
      )
      .finally(() => {
        this.#checked = true;
        this.#refreshing = undefined;
      });
  }

  #stalled(): string {
    return `Redis did not answer within ${PROBE_READ_TIMEOUT_MS} ms: ${this.config.display}; calls may wait until it does`;
  }

  async #look(): Promise<RedisView> {
    if (!(await this.connected())) return { connected: false, why: this.notConnected() };
    return { connected: true, hosts: await this.liveHosts() };
  }

  /** Why Redis is not connected, for `/readyz` (no secret in it). */
  notConnected(): string {
    return `Redis is not connected: ${this.config.display}${this.lastError ? ` (${this.lastError})` : ''}; calls are refused until it is back`;
  }

  /** Whether Redis answers now (within the read bound). */
  async connected(): Promise<boolean> {
    if (this.redis.status !== 'ready') return false;
    const pong = await this.redis.ping().catch((error: Error) => (/timed? ?out/i.test(error.message) ? 'stalled' : ''));
    if (pong === 'stalled') throw new Error('timed out');
    return pong === 'PONG';
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
    clearInterval(this.#timer);
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
      // The probe's cached view: a scrape never waits on Redis.
      const view = sources.redis?.view();
      const hosts = view?.connected ? view.hosts : undefined;
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
    const view = await sources.redis.current();
    if (!view.connected) return { ready: false, why: view.why };
    if (view.hosts === 0) return { ready: false, why: 'no worker host is alive on the queue' };
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
    const view = await sources.redis.current();
    return view.connected ? { ready: true } : { ready: false, why: view.why };
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
