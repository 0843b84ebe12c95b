/**
 * A worker host: a BullMQ Worker whose processor hands each job to the local
 * Executor (Piscina pool, stages, checkpoints, state word, grace, hard stop).
 * A job's result leaves only if the local state word's CAS and the Redis CAS
 * (running → responding) were both won. Each job's life here is a
 * {@link HostJob}; the host re-reads its running jobs' Redis states once a
 * second, so a stop it was not told of (a lost message, lost state) still
 * reaches them.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { JobOutcome, LogEntry, ProgressReport } from '../../backend/backend.js';
import { RedisAuthError } from '../../errors.js';
import { DEFAULTS } from '../../defaults.js';
import { Executor } from '../../executor/executor.js';
import type { Job } from '../../executor/job.js';
import { signed, verified, type ClusterKey } from '../config/cluster-key.js';
import { HostAsks } from './host-asks.js';
import { HostJob } from './host-job.js';
import { JobStates } from '../lua/job-states.js';
import { HOST_LIVENESS_TTL_MS, Liveness, LIVENESS_REFRESH_MS } from '../liveness.js';
import { DEFAULT_QUEUE, safeListener, type FrontMessage, type RemoteJobData } from '../messages.js';
import { redisConfig, type RedisConfig } from '../config/redis-config.js';
import { RedisWatch } from '../config/redis-watch.js';
import type { SentinelSource } from '../config/sentinel-config.js';
import type { ExecutorOptions } from '../../executor/options.js';
import { JobStatus } from '../lua/call-states.js';
import { logger } from '../../log/logger.js';
import { HostJobSpan } from '../../otel/host-span.js';

/** BullMQ's lock on an active job; a host that stops renewing it (SIGKILL) loses the job to the stalled check. */
export const LOCK_DURATION_MS = 5000;
/** How often each host looks for jobs whose lock expired and puts them back in the queue (BullMQ's default is 30 s). */
export const STALLED_INTERVAL_MS = 2500;
/** How late the counters in a host's liveness key may be (publishStats): a job shorter than this costs one write of them, not two. */
const STATS_COALESCE_MS = 5;
/** How long a SIGTERM'd host lets its running jobs finish before it stops them and exits. */
export const DRAIN_TIMEOUT_MS = DEFAULTS.hostDrainTimeoutMs;

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

const SESSION = 'remote';

export class WorkerHost {
  readonly stats: WorkerHostStats = {
    answered: 0,
    dropped: 0,
    skipped: 0,
    cancelsRelayed: 0,
    orphansCancelled: 0,
    stateLost: 0,
    stopped: 0,
    refused: 0,
  };
  private readonly jobs = new Map<string, HostJob>();
  private sweeper: NodeJS.Timeout | undefined;
  private worker!: Worker<RemoteJobData>;
  /** The stages' asks of the client, relayed to their front ends (host-asks.ts). */
  private readonly asks: HostAsks;

  private constructor(
    readonly hostId: string,
    readonly executor: Executor,
    readonly redis: RedisConfig,
    private readonly cmd: Redis,
    private readonly sub: Redis,
    private readonly states: JobStates,
    private readonly liveness: Liveness,
    private readonly key: ClusterKey | undefined,
    private readonly log: (message: string) => void,
  ) {
    this.asks = new HostAsks(
      states,
      key,
      (m) => this.sign(m),
      (jobId) => {
        if (this.asks.stats.repliesRefused % 1000 === 1)
          this.log(
            `refused a reply to an ask of job ${jobId}: it does not verify against this host's cluster key (forged, or front ends and hosts use different --cluster-key-file); ${this.asks.stats.repliesRefused} refused so far`,
          );
      },
    );
  }

  /**
   * Checks the URL (throws {@link RedisConfigError}), starts the pool, waits
   * for Redis (logging while it is unreachable; throws {@link RedisAuthError}
   * if it refuses the credentials), then the liveness key, the cancel relay
   * and the BullMQ worker.
   */
  static async start(options: WorkerHostOptions): Promise<WorkerHost> {
    const redis = redisConfig({
      url: options.redisUrl,
      ...(options.redisCaFile !== undefined && { caFile: options.redisCaFile }),
      ...(options.redisSentinel && { sentinel: options.redisSentinel }),
    });
    const queue = options.queue ?? DEFAULT_QUEUE;
    const hostId = options.hostId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const log = options.log ?? warn;
    const retry = { retryStrategy: (times: number) => Math.min(times * 200, 2000) };
    const cmd = new Redis(redis.url, {
      ...redis.options,
      ...retry,
      maxRetriesPerRequest: null,
      connectionName: `mcp-host-${hostId}-cmd`,
    });
    const sub = new Redis(redis.url, {
      ...redis.options,
      ...retry,
      maxRetriesPerRequest: null,
      connectionName: `mcp-host-${hostId}-sub`,
    });
    const watch = new RedisWatch(redis, 'waiting for it (jobs cannot be taken or answered meanwhile)', log);
    watch.follow(cmd);
    sub.on('error', () => undefined);
    try {
      while (cmd.status !== 'ready') {
        if (watch.authFailed) throw new RedisAuthError(watch.describe());
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (error) {
      cmd.disconnect();
      sub.disconnect();
      throw error;
    }
    const executor = await Executor.create(options.executor);
    const states = new JobStates(cmd, queue);
    // eslint-disable-next-line prefer-const -- assigned below, after the liveness object that reads it is built
    let host!: WorkerHost;
    // The liveness key carries the host's counters, so anyone can read them (tests, operators: GET mcp:<queue>:host:<id>).
    const liveness = new Liveness(
      cmd,
      states.keys.host(hostId),
      HOST_LIVENESS_TTL_MS,
      LIVENESS_REFRESH_MS,
      () =>
        JSON.stringify({
          pid: process.pid,
          toolPriority: executor.toolPriority.priority,
          active: host.active,
          ...host.stats,
          ...host.asks.stats,
          ...executor.stats(),
        }),
      () => states.hostBeat(hostId, HOST_LIVENESS_TTL_MS),
    );
    host = new WorkerHost(hostId, executor, redis, cmd, sub, states, liveness, options.clusterKey, log);
    await liveness.start();
    cmd.on('ready', () => void liveness.refresh().catch(() => undefined)); // at once after a Redis restart
    sub.on(
      'message',
      safeListener('worker host', log, (channel, message) =>
        channel === states.keys.replyChannel ? host.asks.onReply(message) : host.onCancelMessage(message),
      ),
    );
    await sub.subscribe(states.keys.cancelChannel, states.keys.replyChannel);
    host.worker = new Worker<RemoteJobData>(queue, (job, token) => host.process(job, token), {
      connection: { url: redis.url, ...redis.options, maxRetriesPerRequest: null },
      concurrency: executor.threads,
      lockDuration: options.lockDurationMs ?? LOCK_DURATION_MS,
      stalledInterval: options.stalledIntervalMs ?? STALLED_INTERVAL_MS,
      // One retry after a host crash; a second stall fails the job (the front end then answers with an error).
      maxStalledCount: 1,
    });
    host.worker.on('error', () => undefined); // the command connection's watch reports Redis's state
    await host.worker.waitUntilReady();
    host.sweeper = setInterval(() => void host.checkJobs(), LIVENESS_REFRESH_MS);
    host.sweeper.unref();
    return host;
  }

  /** Jobs this host is running now. */
  get active(): number {
    let n = 0;
    for (const j of this.jobs.values()) if (j.state.kind === 'running') n++;
    return n;
  }

  private async process(bull: BullJob<RemoteJobData>, token: string | undefined): Promise<void> {
    const jobId = bull.id!;
    const raw: unknown = bull.data;
    const data =
      raw !== null && typeof raw === 'object' ? verified(this.key, 'job', jobId, raw as RemoteJobData) : undefined;
    if (!data) return this.refuse(jobId, (raw as { tool?: unknown } | null)?.tool);
    const job = new HostJob(jobId, token ?? '', data.front);
    // Registered before the take: a cancel published while the take is in flight is kept, not dropped.
    this.jobs.set(jobId, job);
    try {
      const took = await this.states.take(jobId, data.front, this.hostId, job.token);
      // Signed, but no state: a job re-added under its own id after it ended (its state retired), by someone who
      // read it from the queue. A stalled job handed on after its state was retired is not one (BullMQ counted the stall).
      if (took === 'gone' && bull.stalledCounter === 0) {
        job.skipped();
        this.jobs.delete(jobId);
        return this.refuse(
          jobId,
          data.tool,
          'it is signed, but its state in Redis is gone: re-added after it ended (a replay), or cancelled as this host took it',
        );
      }
      if (took !== JobStatus.running && took !== 'retaken') job.skipped(); // cancelled while queued, its front end gone, or finished elsewhere
      if (!job.taken()) {
        this.stats.skipped++;
        this.publishStats();
        return;
      }
      this.run(job, data);
      await job.released;
    } finally {
      if (this.jobs.get(jobId) === job && job.state.kind !== 'stopping') this.jobs.delete(jobId);
      if (!this.jobs.has(jobId)) this.asks.ended(jobId);
    }
  }

  private run(job: HostJob, data: RemoteJobData): void {
    const { jobId, token } = job;
    const local: Job = this.executor.reserve(SESSION, `${jobId} ${token}`);
    job.running({
      get state() {
        return local.state;
      },
      outcome: local.outcome,
      tryCancel: (why) => {
        const r = local.tryCancel(why);
        return r === 'cancelled-queued' || r === 'cancelled-running';
      },
    });
    const span = HostJobSpan.begin(data.tc, data.tool, jobId, this.hostId);
    if (this.executor.tools.has(data.tool)) {
      const start = () =>
        local.start({
          tool: data.tool,
          args: data.args,
          ...(data.timeoutMs !== undefined && { timeoutMs: data.timeoutMs }),
          ...(data.progress && { onProgress: (r: ProgressReport) => this.report(job, { j: jobId, t: 'p', r }) }),
          ...(data.logLevel !== undefined && {
            onLog: (e: LogEntry) => this.report(job, { j: jobId, t: 'l', e }),
            logLevel: data.logLevel,
          }),
          liveLogs: data.liveLogs,
          onClientRequest: this.asks.handler(job),
        });
      void (span ? span.within(start) : start());
    } else {
      local.abandon();
    }
    this.publishStats(); // after the job is on its thread: the counters' write is not on its way there
    const outcome: Promise<JobOutcome> = this.executor.tools.has(data.tool)
      ? local.outcome
      : Promise.resolve({
          kind: 'failed',
          code: 'crash',
          message: `tool '${data.tool}' is not loaded on worker host ${this.hostId} (start it with the same --tools as the front end)`,
        });
    void outcome.then(async (o) => {
      if (o.kind === 'cancelled') {
        // Its work has stopped (the worker thread is back, or was replaced): say so at once, to the front end too.
        job.stopped();
        if (this.jobs.get(jobId) === job) this.jobs.delete(jobId);
        this.asks.ended(jobId);
        this.stats.stopped++;
        // The counters (read the moment a stop is counted) and the front end's word in one write: this runs while
        // the host fetches and takes its next job, on the same connection.
        const pipe = this.cmd.pipeline();
        void this.liveness.writeValue(pipe);
        pipe.publish(this.states.keys.frontChannel(job.front), this.sign({ j: jobId, t: 's', k: o.hardKilled }));
        void pipe.exec().catch(() => undefined);
        span?.end(o);
        return;
      }
      if (job.state.kind !== 'running') return void span?.end(o);
      const won = await this.states
        .respond(jobId, job.front, token, this.sign({ j: jobId, t: 'o', o, h: this.hostId }))
        .catch(() => false);
      span?.end(o, won);
      job.responded(won);
      if (won) this.stats.answered++;
      else this.stats.dropped++; // the local CAS won, the Redis one was lost: the front end's cancel came first (or the state is gone)
      this.publishStats();
    });
  }

  /** A write of the counters is due (its timer is set). */
  private statsDue = false;

  /**
   * The counters in the liveness key are rewritten as jobs start and end, so
   * readers see them current within {@link STATS_COALESCE_MS}: one write for
   * a job that starts and ends inside it, none of them between a take and
   * the job's start or between its outcome and the respond, and without the
   * live-hosts beat, which its timer keeps. On this 2-core VM each command
   * written costs the main thread 0.1-0.2 ms (the syscall wakes Redis), and a
   * cancelled job's next job waited behind three of them per job event before.
   * A stop is written at once (in the stopped job's pipeline, run()).
   */
  private publishStats(): void {
    if (this.statsDue) return;
    this.statsDue = true;
    setTimeout(() => {
      this.statsDue = false;
      void this.liveness.writeValue().catch(() => undefined);
    }, STATS_COALESCE_MS).unref();
  }

  private report(job: HostJob, message: FrontMessage): void {
    void this.states.report(job.jobId, job.front, job.token, this.sign(message)).catch(() => undefined);
  }

  private sign(message: FrontMessage): string {
    return JSON.stringify(signed(this.key, 'message', message.j, message));
  }

  /** A job not signed with this cluster's key, or replayed: never run; its call (if a front end of ours made it) fails there. */
  private async refuse(
    jobId: string,
    tool: unknown,
    why = "its data does not verify against this host's cluster key (forged, or front ends and hosts use different --cluster-key-file)",
  ): Promise<void> {
    if (this.stats.refused++ % 1000 === 0)
      this.log(
        `refused job ${jobId} (tool ${JSON.stringify(String(tool)).slice(0, 80)}): ${why}; ${this.stats.refused} refused so far`,
      );
    this.publishStats();
    await this.states.refuse(jobId).catch(() => undefined);
  }

  /** `<jobId>` (the front end's cancel won in Redis), `<jobId> <token>` (a stale attempt was taken over), or `<jobId> > <front>` (moved). */
  private onCancelMessage(message: string): void {
    const [jobId, token, front] = message.split(' ');
    const job = this.jobs.get(jobId!);
    if (job && token === '>' && front) return void (job.front = front); // only where its stop is reported: Redis routes the rest
    if (!job || (token !== undefined && token !== job.token)) return;
    if (job.stop('cancelled at the front end')) this.stats.cancelsRelayed++;
  }

  /** Once a second: each running job's Redis state, so a missed cancel, a dead front end or a lost state still stops it. */
  private async checkJobs(): Promise<void> {
    if (this.cmd.status !== 'ready') return;
    for (const job of [...this.jobs.values()]) {
      if (job.state.kind !== 'running') continue;
      let found;
      try {
        found = await this.states.check(job.jobId, job.front, job.token);
      } catch {
        return; // Redis away: try again at the next sweep
      }
      if (found === JobStatus.running) void this.asks.recover(job.jobId).catch(() => undefined);
      if (found === JobStatus.running || found === JobStatus.responding) continue;
      if (!job.stop(`its Redis state is ${found}`)) continue;
      if (found === 'orphan') this.stats.orphansCancelled++;
      else if (found === 'gone') this.stats.stateLost++;
      else this.stats.cancelsRelayed++;
    }
  }

  /** Jobs this host is running or taking now. */
  get jobsHeld(): number {
    return this.jobs.size;
  }

  /**
   * Stops taking jobs and closes everything. The running jobs may finish and
   * answer for `drainTimeoutMs`; then (or at once with `force`) they are
   * stopped here and handed back: BullMQ's stalled check gives each to
   * another host once its lock expires ({@link LOCK_DURATION_MS} +
   * {@link STALLED_INTERVAL_MS}), or, with none, its front end answers it with
   * an error after its lost-host bound. Returns how many were handed back.
   * Never waits on Redis past the deadline (a Redis that is down included).
   */
  async close(options: { force?: boolean; drainTimeoutMs?: number } = {}): Promise<number> {
    clearInterval(this.sweeper);
    const drain = options.force ? 0 : (options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS);
    const { hostId, worker, executor, liveness, states, cmd, sub } = this;
    return closeHost({ hostId, worker, executor, liveness, states, cmd, sub, jobs: [...this.jobs.values()] }, drain);
  }
}

function warn(message: string): void {
  logger().warn(message);
}

// ---- closing ---------------------------------------------------------------
// The host's way out (WorkerHost.close): it stops taking jobs, lets the running ones finish and answer for the drain,
// then stops the rest here and hands them back. Never waits on Redis past its deadlines (a Redis that is down included).

/** What a closing host holds. */
interface ClosingHost {
  readonly hostId: string;
  readonly worker: Worker;
  readonly executor: Executor;
  readonly liveness: Liveness;
  readonly states: JobStates;
  readonly cmd: Redis;
  readonly sub: Redis;
  /** Its jobs running or being taken now. */
  readonly jobs: readonly HostJob[];
}

/**
 * Closes `host` after a drain of `drainMs` (0: at once); returns how many
 * running jobs were handed back. A handed-back job is stopped here, but its
 * processor never returns, so BullMQ does not complete it: its lock expires
 * and the stalled check puts it back in the queue, where another host
 * retakes it (or, with none, its front end answers it with an error after
 * its lost-host bound).
 */
async function closeHost(host: ClosingHost, drainMs: number): Promise<number> {
  const closing = host.worker.close(false).catch(() => undefined); // takes no more jobs
  let handedBack = 0;
  // What the drain waits for is this host's jobs, not BullMQ (which waits for Redis, however long it is away).
  if (!(await within(Promise.all(host.jobs.map((j) => j.released)), drainMs))) {
    for (const job of host.jobs) {
      if (job.state.kind !== 'running') continue;
      handedBack++;
      job.state.local.tryCancel();
    }
  }
  if (!(await within(closing, 1000)))
    await within(
      host.worker.close(true).catch(() => undefined),
      1000,
    );
  await within(host.executor.close(), 5000);
  // With jobs handed back, the liveness key is left to expire (HOST_LIVENESS_TTL_MS), so their front ends
  // wait for the retake (within LOCK_DURATION_MS + STALLED_INTERVAL_MS) instead of failing them as lost.
  const leaving = handedBack > 0 ? host.liveness.pause() : host.liveness.stop();
  await within(Promise.all([leaving, host.states.hostGone(host.hostId).catch(() => undefined)]), 1000);
  host.sub.disconnect();
  host.cmd.disconnect();
  return handedBack;
}

/** True if `p` settled within `ms`. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}
