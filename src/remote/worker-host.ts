/**
 * A worker host: a BullMQ Worker whose processor hands each job to the local
 * Executor (Piscina pool, stages, checkpoints, state word, grace, hard stop).
 * A job's result leaves only if the local state word's CAS and the Redis CAS
 * (running → responding) were both won.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { JobOutcome } from '../backend/backend.js';
import type { LogEntry, ProgressReport } from '../backend/backend.js';
import { Executor } from '../executor/executor.js';
import type { ExecutorOptions } from '../executor/options.js';
import { JobStates } from './job-states.js';
import { Liveness, LIVENESS_REFRESH_MS } from './liveness.js';
import { DEFAULT_QUEUE, type FrontMessage, type RemoteJobData } from './messages.js';

/** BullMQ's lock on an active job; a host that stops renewing it (SIGKILL) loses the job to the stalled check. */
export const LOCK_DURATION_MS = 5000;
/** How often each host looks for jobs whose lock expired and puts them back in the queue (BullMQ's default is 30 s). */
export const STALLED_INTERVAL_MS = 2500;

/** Options for {@link WorkerHost.start}. */
export interface WorkerHostOptions {
  /** e.g. `redis://127.0.0.1:6379`. */
  readonly redisUrl: string;
  /** @default 'mcp-cancel-pool' */
  readonly queue?: string;
  /** The local pool; its `threads` is also the host's BullMQ concurrency. */
  readonly executor?: ExecutorOptions;
  /** @default `<hostname>-<pid>-<random>` */
  readonly hostId?: string;
  /** @default {@link LOCK_DURATION_MS} */
  readonly lockDurationMs?: number;
  /** @default {@link STALLED_INTERVAL_MS} */
  readonly stalledIntervalMs?: number;
}

/** This host's counters. */
export interface WorkerHostStats {
  /** Outcomes that left (both CASes won). */
  answered: number;
  /** Outcomes dropped because the Redis CAS was lost (the front end's cancel won first). */
  dropped: number;
  /** Jobs that were cancelled, orphaned or gone when this host took them: never run. */
  skipped: number;
  /** Cancels relayed to the local executor that won there. */
  cancelsRelayed: number;
  /** Jobs cancelled because their front end's liveness key expired. */
  orphansCancelled: number;
  /** Cancelled jobs whose work has stopped here (counted, and published in the liveness key, the moment it stops). */
  stopped: number;
}

interface Running {
  readonly localId: string;
  readonly token: string;
  readonly front: string;
  /** The local cancel won: the processor returns without waiting for the thread. */
  readonly cancelWon: () => void;
}

const SESSION = 'remote';

export class WorkerHost {
  readonly stats: WorkerHostStats = { answered: 0, dropped: 0, skipped: 0, cancelsRelayed: 0, orphansCancelled: 0, stopped: 0 };
  private readonly running = new Map<string, Running>();
  private sweeper: NodeJS.Timeout | undefined;
  private worker!: Worker<RemoteJobData>;

  private constructor(
    readonly hostId: string,
    readonly executor: Executor,
    private readonly cmd: Redis,
    private readonly sub: Redis,
    private readonly states: JobStates,
    private readonly liveness: Liveness,
  ) {}

  /** Starts the pool, the liveness key, the cancel relay and the BullMQ worker. */
  static async start(options: WorkerHostOptions): Promise<WorkerHost> {
    const queue = options.queue ?? DEFAULT_QUEUE;
    const hostId = options.hostId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const executor = await Executor.create(options.executor);
    const cmd = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    const sub = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    for (const c of [cmd, sub]) c.on('error', (e: Error) => warn(`redis: ${e.message}`));
    const states = new JobStates(cmd, queue);
    let host!: WorkerHost;
    // The liveness key carries the host's counters, so anyone can read them (tests, operators: GET mcp:<queue>:host:<id>).
    const liveness = new Liveness(cmd, states.keys.host(hostId), undefined, undefined, () => JSON.stringify({ pid: process.pid, toolPriority: executor.toolPriority.priority, active: host.active, ...host.stats, ...executor.stats() }));
    host = new WorkerHost(hostId, executor, cmd, sub, states, liveness);
    await liveness.start();
    sub.on('message', (_channel: string, message: string) => host.relayCancel(message));
    await sub.subscribe(states.keys.cancelChannel);
    host.worker = new Worker<RemoteJobData>(queue, (job, token) => host.process(job, token), {
      connection: { url: options.redisUrl, maxRetriesPerRequest: null },
      concurrency: executor.threads,
      lockDuration: options.lockDurationMs ?? LOCK_DURATION_MS,
      stalledInterval: options.stalledIntervalMs ?? STALLED_INTERVAL_MS,
      // One retry after a host crash; a second stall fails the job (the front end then answers with an error).
      maxStalledCount: 1,
    });
    host.worker.on('error', (e: Error) => warn(`worker: ${e.message}`));
    await host.worker.waitUntilReady();
    host.sweeper = setInterval(() => void host.cancelOrphans(), LIVENESS_REFRESH_MS);
    host.sweeper.unref();
    return host;
  }

  /** Jobs this host is running now. */
  get active(): number {
    return this.running.size;
  }

  private async process(job: BullJob<RemoteJobData>, token: string | undefined): Promise<void> {
    const jobId = job.id!;
    const data = job.data;
    const lock = token ?? '';
    const took = await this.states.take(jobId, data.front, this.hostId, lock);
    if (took !== 'running' && took !== 'retaken') {
      this.stats.skipped++; // cancelled while queued, its front end gone, or finished elsewhere: it never runs here
      this.publishStats();
      return;
    }
    const localId = `${jobId} ${lock}`;
    const local = this.executor.reserve(SESSION, localId);
    // A cancel that wins here frees this BullMQ slot at once: the next job starts on the standby thread while
    // this one winds down to its next checkpoint, as on one host (see ExecutorOptions.spareThreads).
    let cancelWon!: () => void;
    const stoppedHere = new Promise<'stopped'>((resolve) => (cancelWon = () => resolve('stopped')));
    this.running.set(jobId, { localId, token: lock, front: data.front, cancelWon });
    this.publishStats();
    const outcome: Promise<JobOutcome> = this.executor.tools.has(data.tool)
      ? local.start({
          tool: data.tool,
          args: data.args,
          ...(data.timeoutMs !== undefined && { timeoutMs: data.timeoutMs }),
          ...(data.progress && { onProgress: (r: ProgressReport) => this.report(jobId, data.front, lock, { j: jobId, t: 'p', r }) }),
          ...(data.logLevel !== undefined && { onLog: (e: LogEntry) => this.report(jobId, data.front, lock, { j: jobId, t: 'l', e }), logLevel: data.logLevel }),
          liveLogs: data.liveLogs,
          onClientRequest: () => Promise.reject(new Error('requests to the client (sampling, elicitation, roots) are not relayed from worker hosts')),
        })
      : (local.abandon(), Promise.resolve({ kind: 'failed', code: 'crash', message: `tool '${data.tool}' is not loaded on worker host ${this.hostId} (start it with the same --tools as the front end)` }));
    void outcome.then((o) => {
      if (o.kind !== 'cancelled') return;
      // Its work has stopped (the worker thread is back, or was replaced): say so at once.
      this.stats.stopped++;
      this.publishStats();
    });
    const first = await Promise.race([outcome, stoppedHere]);
    this.running.delete(jobId);
    // The Redis cancel (or the orphan check) won: nothing leaves.
    if (first === 'stopped' || first.kind === 'cancelled') return;
    const message: FrontMessage = { j: jobId, t: 'o', o: first, h: this.hostId };
    if (await this.states.respond(jobId, data.front, lock, JSON.stringify(message))) this.stats.answered++;
    else this.stats.dropped++; // the local CAS won, the Redis one was lost: the front end's cancel came first
    this.publishStats();
  }

  /** The counters in the liveness key are rewritten as jobs start and end, so readers see them current. */
  private publishStats(): void {
    void this.liveness.refresh().catch(() => undefined);
  }

  private report(jobId: string, front: string, token: string, message: FrontMessage): void {
    void this.states.report(jobId, front, token, JSON.stringify(message)).catch(() => undefined);
  }

  /** `<jobId>` (the front end's cancel won in Redis) or `<jobId> <token>` (a stale attempt was taken over). */
  private relayCancel(message: string): void {
    const [jobId, token] = message.split(' ');
    const entry = this.running.get(jobId!);
    if (!entry || (token !== undefined && token !== entry.token)) return;
    const r = this.executor.cancel(SESSION, entry.localId, 'cancelled at the front end');
    if (r === 'cancelled-running' || r === 'cancelled-queued') {
      this.stats.cancelsRelayed++;
      entry.cancelWon();
    }
  }

  /** A front end that died cannot cancel: its jobs are cancelled once its liveness key has expired. */
  private async cancelOrphans(): Promise<void> {
    for (const [jobId, entry] of [...this.running]) {
      try {
        if (await this.states.cancelIfOrphan(jobId, entry.front, entry.token)) {
          this.stats.orphansCancelled++;
          const r = this.executor.cancel(SESSION, entry.localId, 'front end gone');
          if (r === 'cancelled-running' || r === 'cancelled-queued') entry.cancelWon();
        }
      } catch {
        return; // Redis away: try again at the next sweep
      }
    }
  }

  /**
   * Stops taking jobs and closes everything. By default the running jobs finish and answer first;
   * `force` cancels them (their front ends then answer with an error once this host's liveness key is gone).
   */
  async close(force = false): Promise<void> {
    clearInterval(this.sweeper);
    const closing = this.worker.close(force);
    if (force) await this.executor.close();
    await closing.catch(() => undefined);
    await this.executor.close();
    await this.liveness.stop();
    this.sub.disconnect();
    this.cmd.disconnect();
  }
}

function warn(message: string): void {
  process.stderr.write(`[mcp-cancel-pool worker] ${message}\n`);
}
