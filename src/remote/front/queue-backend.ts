/**
 * The queue backend: a front end's {@link CallBackend} that puts each call on
 * a BullMQ queue for worker hosts. The Redis state CAS decides each race; the
 * front end answers only for a job whose Redis state is `responding` (the
 * host publishes the outcome in that same atomic step). Each call's life is
 * its {@link RemoteCall}'s state; the counts are derived from those.
 */
import { logger } from '../../log/logger.js';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { BackendStats, CallBackend, StartOptions } from '../../backend/backend.js';
import { CallTable } from '../../backend/calls.js';
import { RedisAuthError, RedisUnreachableError } from '../../errors.js';
import type { RequestId } from '../../wire/registry.js';
import type { ToolDefinition } from '../../stages/tool.js';
import { JobStates } from '../lua/job-states.js';
import { Liveness, FRONT_LIVENESS_TTL_MS, LIVENESS_REFRESH_MS } from '../liveness.js';
import { signed } from '../config/cluster-key.js';
import { DEFAULT_QUEUE, parseFrontMessage, safeListener } from '../messages.js';
import { RedisWatch } from '../config/redis-watch.js';
import { RemoteCall } from './remote-call.js';
import { countedAs } from '../lua/call-states.js';
import { RedisParking } from './parking.js';
import type { SharedParking } from '../../asks/shared-parking.js';
import type { Refusal, RemoteContext } from './remote-context.js';
import type { ClusterKey } from '../config/cluster-key.js';
import type { SentinelSource } from '../config/sentinel-config.js';
import { redisConfig, type RedisConfig } from '../config/redis-config.js';
import { BUILTIN_TOOLS, loadTools } from '../../executor/options.js';
import { RedisTaskStore, type RedisTaskStoreOptions } from '../tasks/task-store.js';
import { RedisTaskInputs } from '../tasks/task-input-store.js';

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
  /**
   * Calls of one caller (StartOptions.turn) allowed to wait, checked first;
   * beyond it a call fails at once with "per-caller queue share reached".
   * @default half of queueLimit, rounded up
   */
  readonly queueLimitPerCaller?: number;
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

/** Queued calls are re-read in Redis every this many sweeps (running ones every sweep). */
const QUEUED_PROBE_EVERY = 5;
/** Cap on Redis states still to retire after Redis was away (each is a few bytes). */
const RETIRE_BACKLOG = 100_000;
/** How long after a call settles its job's state is retired in Redis (retireSoon). */
const RETIRE_DELAY_MS = 5;

export class QueueBackend extends CallTable<RemoteCall> implements CallBackend {
  private readonly counters = {
    completed: 0,
    cancelled: 0,
    failed: 0,
    timedOut: 0,
    hardKilled: 0,
    lateCancelsIgnored: 0,
    unknownCancelsIgnored: 0,
    logsDropped: 0,
    reportsReceived: 0,
    reportsDiscarded: 0,
  };
  protected readonly unknownCancels = this.counters;
  private readonly context: RemoteContext;
  private readonly byJob = new Map<string, RemoteCall>();
  /**
   * Cancelled calls whose host is still stopping them, until it says so (the
   * `stopping` gauge, then `hardKilled`). Kept while that host is alive: a
   * hard stop comes after the host's grace, which the front end does not know.
   */
  private readonly stoppingJobs = new Map<string, { readonly host: string | undefined; until: number }>();
  private readonly retireLater = new Set<string>();
  /** Settled calls' jobs whose state {@link retireSoon} retires at its timer. */
  private readonly retireDue: string[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  private sweeps = 0;
  private probeAll = false;
  private noHostSince: number | undefined;
  private noHostReported = false;

  private constructor(
    readonly tools: ReadonlyMap<string, ToolDefinition>,
    readonly frontId: string,
    readonly redis: RedisConfig,
    readonly queueName: string,
    private readonly cmd: Redis,
    private readonly sub: Redis,
    private readonly queue: Queue,
    private readonly liveness: Liveness,
    private readonly states: JobStates,
    private readonly watch: RedisWatch,
    private readonly options: QueueBackendOptions,
  ) {
    super();
    const queueLimit = options.queueLimit ?? 256;
    const perCaller = options.queueLimitPerCaller ?? Math.ceil(queueLimit / 2);
    this.context = {
      frontId,
      redisDisplay: redis.display,
      queueName,
      states,
      tools,
      counters: this.counters,
      redisTimeoutMs: options.submitTimeoutMs ?? REDIS_TIMEOUT_MS,
      clusterKey: options.clusterKey,
      refusal: (o) => this.refusal(o, queueLimit, perCaller),
      enqueue: async (jobId, data) =>
        void (await queue.add(data.tool, data, { jobId, removeOnComplete: true, removeOnFail: true })),
      dequeue: (jobId) => void queue.remove(jobId).catch(() => undefined),
      reply: (jobId, a, reply) =>
        void states
          .reply(
            jobId,
            frontId,
            a,
            JSON.stringify(signed(options.clusterKey, 'reply', jobId, { j: jobId, a, ...reply })),
          )
          .catch(() => undefined),
      submitted: (jobId, call) => this.byJob.set(jobId, call as RemoteCall),
      stopping: (jobId, host) => this.stoppingJobs.set(jobId, { host, until: Date.now() + this.lostHostTimeoutMs }),
      released: (call, jobId) => {
        this.registry.remove(call);
        this.byJob.delete(jobId);
      },
      settled: (call, jobId, inRedis) => {
        this.registry.remove(call);
        if (jobId === undefined || inRedis === undefined) return;
        this.byJob.delete(jobId);
        void inRedis.then(() => this.retireSoon(jobId));
      },
    };
  }

  private get lostHostTimeoutMs(): number {
    return this.options.lostHostTimeoutMs ?? LOST_HOST_TIMEOUT_MS;
  }

  /**
   * Checks the URL (throws {@link RedisConfigError}), loads the tool metadata
   * and connects; does not wait for Redis (see {@link QueueBackend.ready}).
   */
  static async create(options: QueueBackendOptions): Promise<QueueBackend> {
    const redis = redisConfig({
      url: options.redisUrl,
      ...(options.redisCaFile !== undefined && { caFile: options.redisCaFile }),
      ...(options.redisSentinel && { sentinel: options.redisSentinel }),
    });
    const tools = await loadToolCatalog(options.toolModules ?? [], options.builtins ?? true);
    const name = options.queue ?? DEFAULT_QUEUE;
    const frontId = randomBytes(6).toString('hex');
    // Fail fast while Redis is away instead of queueing commands for later; reconnect on its own.
    const retry = { retryStrategy: (times: number) => Math.min(times * 100, 1000) };
    const cmd = new Redis(redis.url, {
      ...redis.options,
      ...retry,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectionName: `mcp-front-${frontId}-cmd`,
    });
    const sub = new Redis(redis.url, {
      ...redis.options,
      ...retry,
      maxRetriesPerRequest: null,
      connectionName: `mcp-front-${frontId}-sub`,
    });
    const log = options.log ?? ((m: string) => logger().warn(m));
    const watch = new RedisWatch(redis, 'calls fail until it is back', log);
    watch.follow(cmd);
    sub.on('error', () => undefined); // the command connection's watch reports Redis's state
    const queue = new Queue(name, { connection: { url: redis.url, ...redis.options, ...retry } });
    queue.on('error', () => undefined);
    const states = new JobStates(cmd, name);
    const liveness = new Liveness(cmd, states.keys.front(frontId), FRONT_LIVENESS_TTL_MS, LIVENESS_REFRESH_MS);
    const backend = new QueueBackend(tools, frontId, redis, name, cmd, sub, queue, liveness, states, watch, {
      ...options,
      log,
    });
    sub.on(
      'message',
      safeListener('front end', log, (_channel, text) => backend.onMessage(text)),
    );
    void sub.subscribe(states.keys.frontChannel(frontId)).catch(() => undefined); // ioredis resubscribes after a reconnect
    let first = true;
    const onReady = () => {
      // Once, and on every reconnect a refresh now (Redis may have restarted) and a look at every call's state.
      if (first) void liveness.start().catch(() => undefined);
      else void liveness.refresh().catch(() => undefined);
      if (!first) backend.probeAll = true;
      first = false;
    };
    cmd.on('ready', onReady);
    sub.on('ready', () => (backend.probeAll = true)); // messages sent while it was away are lost: look
    backend.sweeper = setInterval(() => backend.sweep(), LIVENESS_REFRESH_MS);
    backend.sweeper.unref();
    return backend;
  }

  /**
   * Waits until Redis is reachable and the front end's liveness key exists.
   * Throws {@link RedisAuthError} at once if Redis refused the credentials,
   * {@link RedisUnreachableError} after `timeoutMs`, or with `failFast` as
   * soon as a connection attempt failed (a refused port answers in
   * milliseconds: `serve` then serves at once, and reconnects meanwhile).
   */
  async ready(timeoutMs = 10_000, { failFast = false }: { readonly failFast?: boolean } = {}): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (this.watch.authFailed) throw new RedisAuthError(this.watch.describe());
      if (this.cmd.status === 'ready' && (await this.cmd.exists(this.liveness.key).catch(() => 0)) === 1) break;
      if (Date.now() > end || (failFast && this.watch.lastError !== undefined))
        throw new RedisUnreachableError(this.watch.describe());
      await new Promise((r) => setTimeout(r, 50));
    }
    await this.queue.waitUntilReady();
  }

  /** A task store in this queue's Redis, shared with every front end of the queue (task-store.ts). */
  taskStore(options: RedisTaskStoreOptions): RedisTaskStore {
    return new RedisTaskStore(this.cmd, this.states, this.frontId, this.options.clusterKey, options, () =>
      this.watch.describe(),
    );
  }

  /** 2026 tasks' questions to the client in this queue's Redis, shared with every front end of the queue (task-input-store.ts). */
  taskInputs(): RedisTaskInputs {
    return new RedisTaskInputs(this.cmd, this.states, this.options.clusterKey);
  }

  /** The requestState key every front end of the cluster derives from the cluster key, if there is one. */
  requestStateKey(): Buffer | undefined {
    return this.options.clusterKey?.derive('mcp-cancel-pool requestState');
  }

  /** Parked 2026 calls shared with every front end of the queue (parking.ts): hand it to the InputWaits. */
  parking(): SharedParking {
    return new RedisParking(
      this.states,
      this.frontId,
      this.options.clusterKey,
      (h) => this.registry.get('inbound', h.session, h.id) as RemoteCall | undefined,
    );
  }

  protected newCall(session: string, id: RequestId): RemoteCall {
    return new RemoteCall(this.context, session, id);
  }

  stats(): BackendStats {
    let running = 0;
    let queued = 0;
    for (const call of this.calls()) {
      const counted = countedAs(call.phase);
      if (counted === 'running') running++;
      else if (counted === 'queued') queued++;
    }
    return {
      ...this.counters,
      running,
      queued,
      stopping: this.stoppingJobs.size,
      inFlight: this.registry.size,
      threads: 0,
      childrenStarted: 0,
      childrenKilled: 0,
      childrenAlive: 0,
      childrenZombies: 0,
      childrenSync: 0,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    // A task's job is left running: its task, in Redis, outlives this front end (docs/many-hosts.md "Many hosts"). One whose
    // task was never stored (an undecided task window) is cancelled by its host's check once our liveness key is gone.
    const calls = this.calls().filter((c) => c.taskId === undefined);
    await Promise.race([
      Promise.all(calls.map((c) => c.requestCancel('front end closing', 'shutdown'))),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    this.retireNow(); // before the connection goes, not at a timer after it
    await Promise.race([this.liveness.stop(), new Promise((r) => setTimeout(r, 1000))]);
    await Promise.race([this.queue.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
    this.sub.disconnect();
    this.cmd.disconnect();
  }

  /** {@link CallBackend.queuedOf}: calls of lane `turn` not yet on a worker host. */
  queuedOf(turn: string): number {
    let n = 0;
    for (const call of this.calls()) {
      const k = call.phase.kind;
      if ((k === 'submitting' || k === 'queued') && call.lane === turn) n++;
    }
    return n;
  }

  /** Why a new call cannot be queued now. */
  private refusal(options: StartOptions, queueLimit: number, perCaller: number): Refusal | undefined {
    if (this.cmd.status !== 'ready') {
      return {
        code: 'rejected',
        message: this.watch.authFailed
          ? `${this.watch.describe()}: the call was not queued`
          : `Redis at ${this.redis.display} is unreachable: the call was not queued; try again when it is back`,
      };
    }
    if (this.noHostReported) return { code: 'rejected', message: this.noHostMessage() };
    let waiting = 0;
    let mine = 0;
    for (const call of this.calls()) {
      const k = call.phase.kind;
      if (k !== 'submitting' && k !== 'queued') continue;
      waiting++;
      if (options.turn !== undefined && call.lane === options.turn) mine++;
    }
    // The caller's share first, so one caller cannot fill the queue.
    if (options.turn !== undefined && mine >= perCaller)
      return {
        code: 'queue_full',
        message: `server busy: per-caller queue share reached: this caller has ${mine} calls waiting for a worker host (--queue-limit-per-caller ${perCaller}); wait for one to finish`,
      };
    if (waiting >= queueLimit)
      return {
        code: 'queue_full',
        message: `server busy: total queue limit reached: ${waiting} calls already waiting for a worker host (--queue-limit ${queueLimit}); try again later`,
      };
    return undefined;
  }

  private noHostMessage(): string {
    const s = Math.round((this.options.noHostTimeoutMs ?? NO_HOST_TIMEOUT_MS) / 1000);
    return `no worker host is serving queue '${this.queueName}' on Redis ${this.redis.display} (none alive for ${s} s): the call was not run; start \`mcp-cancel-pool worker\` hosts on this queue`;
  }

  private onMessage(text: string): void {
    const message = parseFrontMessage(text, this.options.clusterKey);
    if (!message) return;
    if (message.t === 's') {
      if (this.stoppingJobs.delete(message.j) && message.k) this.counters.hardKilled++;
      return;
    }
    this.byJob.get(message.j)?.receive(message);
  }

  /**
   * Retires the job's state {@link RETIRE_DELAY_MS} from now, with the others
   * due then. A settled call's answer goes to the client first; and a
   * cancelled call's retire (a write that wakes Redis, on a 2-core machine
   * ~0.1-0.2 ms of this thread and Redis's) no longer lands while its host
   * frees the slot and takes the next job. The state is terminal by now
   * (answered, cancelled), or queued|running only for a call that failed
   * here: its job is then cancelled in Redis that much later.
   */
  private retireSoon(jobId: string): void {
    if (this.retireDue.push(jobId) > 1) return;
    setTimeout(() => this.retireNow(), RETIRE_DELAY_MS).unref();
  }

  private retireNow(): void {
    for (const jobId of this.retireDue.splice(0)) this.retire(jobId);
  }

  private retire(jobId: string): void {
    this.states.retire(jobId).then(
      () => this.retireLater.delete(jobId),
      () => {
        if (this.retireLater.size < RETIRE_BACKLOG) this.retireLater.add(jobId);
      },
    );
  }

  /** Once a second: live hosts, outcomes whose message was lost, states that are gone, hosts that are gone. */
  private sweep(): void {
    const now = Date.now();
    if (this.cmd.status !== 'ready') return;
    for (const [jobId, entry] of this.stoppingJobs) if (entry.until < now) this.stillStopping(jobId, entry);
    const all = this.probeAll || ++this.sweeps % QUEUED_PROBE_EVERY === 0;
    this.probeAll = false;
    for (const call of this.byJob.values()) {
      if (all || call.phase.kind === 'running') void call.check(this.lostHostTimeoutMs).catch(() => undefined);
    }
    for (const jobId of [...this.retireLater].slice(0, 1000)) this.retire(jobId);
    void this.states.liveHosts().then(
      (n) => this.hosts(n),
      () => undefined,
    );
  }

  /** A stop not yet reported: wait on while its host lives, else give up on hearing of it. */
  private stillStopping(jobId: string, entry: { readonly host: string | undefined; until: number }): void {
    if (entry.host === undefined) return void this.stoppingJobs.delete(jobId);
    entry.until = Number.POSITIVE_INFINITY; // one look at a time
    this.states.hostAlive(entry.host).then(
      (alive) => {
        if (alive) entry.until = Date.now() + this.lostHostTimeoutMs;
        else this.stoppingJobs.delete(jobId);
      },
      () => (entry.until = 0),
    );
  }

  private hosts(alive: number): void {
    const log = this.options.log!;
    if (alive > 0) {
      if (this.noHostReported) log(`worker host(s) on queue '${this.queueName}' again: ${alive} alive`);
      this.noHostSince = undefined;
      this.noHostReported = false;
      return;
    }
    this.noHostSince ??= Date.now();
    if (Date.now() - this.noHostSince < (this.options.noHostTimeoutMs ?? NO_HOST_TIMEOUT_MS)) return;
    const message = this.noHostMessage();
    if (!this.noHostReported)
      log(message.replace(': the call was not run', ': waiting calls fail, new ones are refused'));
    this.noHostReported = true;
    for (const call of this.byJob.values()) void call.noHost(message).catch(() => undefined);
  }
}

/** Loads tools by name from the built-ins (unless `builtins` is false) and `modules` (paths or file URLs). */
function loadToolCatalog(modules: readonly (string | URL)[], builtins = true): Promise<Map<string, ToolDefinition>> {
  return loadTools([
    ...(builtins ? [BUILTIN_TOOLS] : []),
    ...modules.map((m) => (m instanceof URL ? m.href : m.startsWith('file:') ? m : pathToFileURL(m).href)),
  ]);
}
