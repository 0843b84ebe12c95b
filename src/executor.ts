/**
 * The executor: in-flight registry → admission queue → worker pool, with the
 * shared state word deciding every race between completion and cancellation.
 */
import { availableParallelism } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import { describeIssues } from './issues.js';
import type { BackendStats, CallBackend, CallHandle, CancelResult, JobOutcome, StartOptions } from './backend/backend.js';
import { DuplicateRequestError, ExecutorClosedError } from './errors.js';
import { FairQueue, type FairQueueOptions } from './admission/fair-queue.js';
import { WorkerPool, type PoolOutcome } from './pool/pool.js';
import type { JobReports, ReportMessage } from './pool/protocol.js';
import { JobChannel } from './pool/job-channel.js';
import { severityOf, type LoggingLevel } from './stages/log-levels.js';
import { InFlightRegistry, type InFlightEntry, type RequestId } from './registry/registry.js';
import { JobState, StateSlab, type JobStateName, type SlotRef } from './state/job-state.js';
import { toolsOfModule, type ToolDefinition } from './stages/tool.js';

export type { ProgressReport, LogEntry, ClientRequestHandler, StartOptions, JobOutcome, CancelResult } from './backend/backend.js';
export { DuplicateRequestError } from './errors.js';
/** The local pool's counters: see {@link BackendStats}. */
export type ExecutorStats = BackendStats;

/** The built-in tools module, compiled next to the runtime. */
export const BUILTIN_TOOLS = new URL('../workers/tools/index.js', import.meta.url).href;

/** Options for {@link Executor.create}. */
export interface ExecutorOptions {
  /** Worker threads. Default: the machine's available parallelism. */
  readonly threads?: number;
  /**
   * Warm standby threads beyond `threads`. When a running job is cancelled (or
   * times out), its admission slot passes to the next queued job on a standby
   * thread, instead of after the stopped job reaches its next checkpoint (or
   * its grace period ends). The stopped job's remaining partial stage overlaps
   * the next job, so for that moment up to `threads + spareThreads` threads
   * are busy. The slot passes at once while a core is free for it, otherwise
   * after `handoffDelayMs`. 0 keeps strictly `threads` jobs on threads.
   * Default 1.
   */
  readonly spareThreads?: number;
  /**
   * Cores the workers may use: a stopped job hands its slot to the standby at
   * once only while fewer jobs than this are on threads. Default: the
   * machine's available parallelism.
   */
  readonly cores?: number;
  /**
   * When every core is busy, how long a stopped job may take to reach its next
   * checkpoint before its slot passes to the standby anyway. Waiting for a job
   * that is about to stop is cheaper than splitting the busy cores three ways
   * with its last partial stage. 0 hands the slot on at once. Default 2 ms.
   */
  readonly handoffDelayMs?: number;
  /** Jobs allowed to wait for a worker; one more fails at once with a queue-full error. Default 256. */
  readonly queueLimit?: number;
  /** How long a stopped job may ignore its checkpoints before its worker is terminated and replaced. Default 1000 ms. */
  readonly graceMs?: number;
  /** Tool modules (paths or file URLs), loaded on the main thread for metadata and in every worker for the stages. */
  readonly toolModules?: readonly (string | URL)[];
  /** Include the built-in tools. Default true. */
  readonly builtins?: boolean;
  /** Per-worker V8 heap limits (Piscina `resourceLimits`); a job that exceeds them fails alone. Buffers, ArrayBuffers and native memory are not counted. */
  readonly resourceLimits?: ResourceLimits;
  /** Settings every stage sees as `ctx.settings`; must be cloneable. The built-in file tools read `root`. */
  readonly toolSettings?: Readonly<Record<string, unknown>>;
  /**
   * Minimum gap between two progress reports of one job, enforced in the
   * worker (the latest report waits; the last one before the job returns is
   * always delivered, before its outcome). Also the refill period of each
   * job's log budget. Default 50 ms.
   */
  readonly progressIntervalMs?: number;
}

/** The reason on a job's stop signal; a plain value, so aborting costs no DOMException. */
const STOPPED = 'job stopped';

export class Executor implements CallBackend {
  /** Inbound jobs and outbound requests, keyed by direction, session and id. */
  readonly registry = new InFlightRegistry<InFlightEntry>();
  /** Tools by name. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  /** @internal */ readonly slab: StateSlab;
  /** @internal */ readonly pool: WorkerPool;
  /** @internal */ readonly admission: PQueue<FairQueue, FairQueueOptions>;
  /** @internal The admission queue's own instance, so a cancelled job can be taken out of it directly. */ readonly queue: FairQueue;
  /** @internal */ readonly counters = { completed: 0, cancelled: 0, failed: 0, timedOut: 0, running: 0, stopping: 0, hardKilled: 0, lateCancelsIgnored: 0, unknownCancelsIgnored: 0, logsDropped: 0, reportsReceived: 0, reportsDiscarded: 0 };
  /** @internal */ readonly graceMs: number;
  /** @internal */ readonly progressIntervalMs: number;
  readonly threads: number;
  readonly spareThreads: number;
  /** See {@link ExecutorOptions.cores}. */
  readonly cores: number;
  /** See {@link ExecutorOptions.handoffDelayMs}. */
  readonly handoffDelayMs: number;
  readonly queueLimit: number;
  /** Stopped jobs that have lent their slot on and whose worker has not returned yet; up to `spareThreads` of them run a standby. */
  private lentSlots = 0;
  private closed = false;

  private constructor(options: ExecutorOptions, tools: Map<string, ToolDefinition>, moduleUrls: string[]) {
    this.threads = options.threads ?? availableParallelism();
    this.spareThreads = options.spareThreads ?? 1;
    this.cores = options.cores ?? availableParallelism();
    this.handoffDelayMs = options.handoffDelayMs ?? 2;
    this.queueLimit = options.queueLimit ?? 256;
    this.graceMs = options.graceMs ?? 1000;
    this.progressIntervalMs = options.progressIntervalMs ?? 50;
    this.tools = tools;
    // Every job holding a slot is queued or running. Admission lets the queue overshoot its limit by at most
    // the threads that are about to free up (see Job.start), so this bounds them.
    this.slab = new StateSlab(this.queueLimit + 2 * (this.threads + this.spareThreads) + 1);
    this.pool = new WorkerPool({
      threads: this.threads + this.spareThreads,
      init: { stateBuffer: this.slab.buffer, toolModules: moduleUrls, settings: options.toolSettings ?? {}, progressIntervalMs: this.progressIntervalMs },
      ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
    });
    let queue: FairQueue | undefined;
    // p-queue builds its queue itself; this subclass hands the instance back.
    class OwnQueue extends FairQueue {
      constructor() {
        super();
        queue = this;
      }
    }
    this.admission = new PQueue<FairQueue, FairQueueOptions>({ concurrency: this.threads, queueClass: OwnQueue });
    this.queue = queue!;
  }

  /** Loads the tool modules and starts the pool. */
  static async create(options: ExecutorOptions = {}): Promise<Executor> {
    const urls = [
      ...(options.builtins === false ? [] : [BUILTIN_TOOLS]),
      ...(options.toolModules ?? []).map((m) => (m instanceof URL ? m.href : m.startsWith('file:') ? m : pathToFileURL(m).href)),
    ];
    const tools = new Map<string, ToolDefinition>();
    for (const url of urls) {
      for (const tool of toolsOfModule((await import(url)) as Record<string, unknown>, url)) {
        if (tools.has(tool.name)) throw new Error(`tool '${tool.name}' is defined twice (again in ${url})`);
        tools.set(tool.name, tool);
      }
    }
    const executor = new Executor(options, tools, urls);
    await executor.pool.warmup(executor.threads + executor.spareThreads);
    return executor;
  }

  /**
   * Registers an inbound request before anything expensive happens, so a
   * cancellation that arrives at once already finds it. Start it with
   * {@link Job.start}, or {@link Job.abandon} it if it will not run.
   */
  reserve(session: string, id: RequestId): Job {
    if (this.closed) throw new ExecutorClosedError();
    const job = new Job(this, session, id);
    if (!this.registry.add(job)) throw new DuplicateRequestError(session, id);
    return job;
  }

  /** Reserves and starts in one step. */
  submit(session: string, id: RequestId, options: StartOptions): Job {
    const job = this.reserve(session, id);
    job.start(options);
    return job;
  }

  /**
   * A peer's cancellation. Looks only at inbound requests of that session;
   * whatever it does not find or cannot stop is ignored, and nothing is ever
   * sent back for a cancellation.
   */
  cancel(session: string, id: RequestId, reason?: string): CancelResult {
    const entry = this.registry.get('inbound', session, id);
    if (!entry) {
      this.counters.unknownCancelsIgnored++;
      return 'unknown';
    }
    if (entry instanceof Job) return entry.cancel(reason);
    if (entry.stop(reason)) return 'cancelled-running';
    this.counters.lateCancelsIgnored++;
    return 'too-late';
  }

  /** Cancels every inbound request of a session (its transport closed). */
  cancelSession(session: string, reason = 'session closed'): number {
    let n = 0;
    for (const entry of waitingFirst(this.registry.inSession('inbound', session))) if (entry.stop(reason)) n++;
    for (const entry of this.registry.inSession('outbound', session)) entry.stop(reason);
    return n;
  }

  /** {@link CallBackend.callsInFlight}. */
  callsInFlight(session: string): number {
    return this.registry.inSession('inbound', session).length;
  }

  /**
   * @internal A running job was stopped (+1) or its worker has returned (-1):
   * admission may run that many extra jobs, at most `spareThreads`, so the
   * next job need not wait for the stopped one to reach a boundary.
   */
  lendSlot(delta: 1 | -1): void {
    this.lentSlots += delta;
    this.admission.concurrency = this.threads + Math.min(this.lentSlots, this.spareThreads);
  }

  /** A snapshot of the counters. */
  stats(): ExecutorStats {
    return {
      ...this.counters,
      queued: this.admission.size,
      inFlight: this.registry.size,
      threads: this.pool.threads,
    };
  }

  /** Cancels everything (each outcome settles as cancelled) and stops the workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.admission.pause();
    for (const entry of waitingFirst(this.registry.all())) entry.stop('executor closed');
    await this.pool.close();
  }
}

/**
 * Orders entries so jobs that have not reached a worker come first: stopping a
 * running job lends its slot on, and the next queued job must not start just
 * to be stopped a moment later.
 */
function waitingFirst<E extends InFlightEntry>(entries: E[]): E[] {
  const waiting = (e: E) => e instanceof Job && e.state === 'queued';
  return [...entries.filter(waiting), ...entries.filter((e) => !waiting(e))];
}

/** One inbound tool call, from reservation until it leaves the registry. */
export class Job implements InFlightEntry, CallHandle {
  readonly direction = 'inbound' as const;
  /** Settles when the job has ended and its worker is free (or replaced). */
  readonly outcome: Promise<JobOutcome>;
  private settle!: (outcome: JobOutcome) => void;
  private slot: SlotRef | undefined;
  private phase: 'reserved' | 'started' | 'settled' = 'reserved';
  private finalState: JobStateName = 'queued';
  /** Created only when someone needs to hear of the stop (a tool's requests to the client): most jobs never do. */
  private stopped: AbortController | undefined;
  private hardStopRequested = false;
  /** Whether this job, stopped while running, has lent its admission slot on (see {@link Executor.lendSlot}). */
  private lentSlot = false;
  /** Stopped while running: counted as cancelled or timed out at that moment, and as `stopping` until its worker returns. */
  private countedAtStop = false;
  /** A report was handed on in the current event-loop turn (cleared by an immediate). */
  private reportedThisTurn = false;
  private timers: NodeJS.Timeout[] = [];

  /** @internal */
  constructor(
    private readonly executor: Executor,
    readonly session: string,
    readonly id: RequestId,
  ) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  /** The job's state, read from the shared word while it holds a slot. */
  get state(): JobStateName {
    if (this.phase === 'settled' || !this.slot) return this.finalState;
    return this.executor.slab.read(this.slot);
  }

  /** Fires when cancellation or the deadline wins; used to cascade to the job's own outbound requests. */
  get stopSignal(): AbortSignal {
    this.stopped ??= new AbortController();
    if (this.phase === 'settled' || this.state === 'cancelled' || this.state === 'timedOut') this.stopped.abort(STOPPED);
    return this.stopped.signal;
  }

  /** {@link InFlightEntry.stop}: a cancellation. */
  stop(reason?: string): boolean {
    const r = this.cancel(reason);
    return r === 'cancelled-queued' || r === 'cancelled-running';
  }

  /** Queues the job. Never throws: a full queue or unknown tool settles the outcome as failed. */
  start(options: StartOptions): Promise<JobOutcome> {
    if (this.phase !== 'reserved') return this.outcome;
    this.phase = 'started';
    const ex = this.executor;
    const tool = ex.tools.get(options.tool);
    if (!tool) return this.finish({ kind: 'failed', code: 'unknown_tool', message: `unknown tool '${options.tool}'` }, 'completed');
    const parsed = tool.input.safeParse(options.args ?? {});
    if (!parsed.success) {
      return this.finish({ kind: 'failed', code: 'invalid_arguments', message: `invalid arguments for tool '${tool.name}': ${describeIssues(parsed.error)}` }, 'completed');
    }
    // A thread whose job just settled is free a microtask before p-queue starts the next one; count it as free.
    const freeThreads = ex.admission.concurrency - ex.counters.running - ex.counters.stopping;
    if (ex.admission.size - freeThreads >= ex.queueLimit) {
      return this.finish({ kind: 'failed', code: 'queue_full', message: `server busy: ${ex.admission.size} calls already waiting (queue limit ${ex.queueLimit}); try again later` }, 'completed');
    }
    this.slot = ex.slab.allocate();
    ex.admission
      .add(() => this.run(tool, parsed.data, options), { id: this.queueId(), session: this.session, priority: options.priority ?? 0 })
      .catch(() => undefined); // a queued cancel rejects p-queue's promise; the outcome was settled by cancel()
    return this.outcome;
  }

  /**
   * Ends a reserved job that will never start, e.g. because the request was
   * answered with an error before it got here. Its outcome settles as failed.
   * False if it had already started or been cancelled.
   */
  abandon(message = 'request rejected before it started'): boolean {
    if (this.phase !== 'reserved') return false;
    this.finish({ kind: 'failed', code: 'rejected', message }, 'completed');
    return true;
  }

  /** @internal The cancellation's side of the race. */
  cancel(_reason?: string): CancelResult {
    const ex = this.executor;
    if (this.phase === 'reserved') {
      // Not yet started: single-threaded, no worker can race us.
      this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false }, 'cancelled');
      return 'cancelled-queued';
    }
    const won = this.phase === 'started' && this.slot ? ex.slab.cancel(this.slot) : undefined;
    if (!won) {
      ex.counters.lateCancelsIgnored++;
      return 'too-late';
    }
    this.stopped?.abort(STOPPED);
    if (won === 'queued') {
      ex.queue.remove(this.queueId()); // it never reaches a worker
      this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false }, 'cancelled');
      return 'cancelled-queued';
    }
    this.stoppedWhileRunning('cancelled');
    return 'cancelled-running';
  }

  private async run(tool: ToolDefinition, args: unknown, options: StartOptions): Promise<void> {
    const ex = this.executor;
    const slot = this.slot!;
    if (!ex.slab.transition(slot, JobState.queued, JobState.running)) return; // cancelled while queued
    ex.counters.running++;
    const wantsProgress = options.onProgress !== undefined;
    const minLogSeverity = options.onLog ? (severityOf(options.logLevel ?? 'debug') ?? 0) : undefined;
    const channel = wantsProgress || tool.usesClient || (options.liveLogs && options.onLog) ? this.channel(options) : undefined;
    const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
    if (timeoutMs !== undefined && timeoutMs > 0) {
      this.timers.push(
        setTimeout(() => {
          if (ex.slab.transition(slot, JobState.running, JobState.timedOut)) {
            this.stopped?.abort(STOPPED);
            this.stoppedWhileRunning('timedOut');
          }
        }, timeoutMs),
      );
    }
    const result = await ex.pool.run({
      tool: tool.name,
      args,
      slot,
      wantsProgress,
      ...(channel && { port: channel.workerPort }),
      ...(minLogSeverity !== undefined && { minLogSeverity }),
    });
    if (this.countedAtStop) ex.counters.stopping--;
    else ex.counters.running--;
    if (this.lentSlot) ex.lendSlot(-1);
    if (result.kind !== 'crashed' && result.reports) await this.takeReports(result.reports, result.kind !== 'stopped' ? channel : undefined, options);
    // The SDK client (1.x, typescript-sdk#2580) drops a progress notification that it reads in the same chunk as the
    // response. Reports handed on in this turn leave in this turn's write (stdio); the response goes in the next.
    if (this.reportedThisTurn) await new Promise<void>((resolve) => setImmediate(resolve));
    channel?.close();
    this.conclude(result, timeoutMs ?? 0);
  }

  /** Turns what the pool reported into the outcome, trusting the state word for who won. */
  private conclude(result: PoolOutcome, timeoutMs: number): void {
    const ex = this.executor;
    const slot = this.slot!;
    const hardKilled = this.hardStopRequested && result.kind === 'crashed';
    if (result.kind === 'crashed' && !hardKilled) {
      // The worker died before claiming: claim the response on its behalf, unless a stop already won.
      if (ex.slab.transition(slot, JobState.running, JobState.responding)) {
        this.finish({ kind: 'failed', code: 'crash', message: `worker failed while running the tool: ${result.message}` }, 'completed');
        return;
      }
    }
    switch (ex.slab.read(slot)) {
      case 'responding':
        if (result.kind === 'result') this.finish({ kind: 'completed', result: result.result }, 'completed');
        else if (result.kind === 'error') this.finish({ kind: 'failed', code: 'stage', stage: result.stage, message: `stage '${result.stage}' failed: ${result.message}` }, 'completed');
        else this.finish({ kind: 'failed', code: 'crash', message: 'worker ended without a result' }, 'completed');
        return;
      case 'timedOut':
        this.finish({ kind: 'timedOut', timeoutMs, hardKilled }, 'timedOut');
        return;
      default:
        this.finish({ kind: 'cancelled', from: 'running', hardKilled }, 'cancelled');
    }
  }

  private finish(outcome: JobOutcome, finalState: JobStateName): Promise<JobOutcome> {
    const ex = this.executor;
    if (this.phase === 'settled') return this.outcome;
    this.phase = 'settled';
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    if (this.slot) {
      if (finalState === 'completed') ex.slab.transition(this.slot, JobState.responding, JobState.completed);
      ex.slab.release(this.slot);
    }
    this.finalState = finalState;
    if (outcome.kind === 'completed') ex.counters.completed++;
    else if (outcome.kind === 'failed') ex.counters.failed++;
    else if (this.countedAtStop) {
      /* counted when the stop won */
    } else if (outcome.kind === 'timedOut') ex.counters.timedOut++;
    else ex.counters.cancelled++;
    if ((outcome.kind === 'cancelled' || outcome.kind === 'timedOut') && outcome.hardKilled) ex.counters.hardKilled++;
    this.stopped?.abort(STOPPED); // releases the job's outbound requests, if any are still pending
    ex.registry.remove(this);
    this.settle(outcome);
    return this.outcome;
  }

  private queueId(): string {
    return String(this.slot!.index);
  }

  /**
   * Cancel or deadline won while running: count it now (the stats must not
   * wait for the worker), hand the slot on (now if a core is free), and start
   * the grace period.
   */
  private stoppedWhileRunning(kind: 'cancelled' | 'timedOut'): void {
    const ex = this.executor;
    this.countedAtStop = true;
    ex.counters[kind]++;
    ex.counters.running--;
    ex.counters.stopping++;
    // running + stopping includes this job: it still holds its core until it reaches a checkpoint.
    // The delayed hand-off cannot come after the worker returns: finish() clears it in that same turn.
    if (ex.handoffDelayMs === 0 || ex.counters.running + ex.counters.stopping < ex.cores) this.handSlotOn();
    else this.timers.push(setTimeout(() => this.handSlotOn(), ex.handoffDelayMs));
    this.armGrace();
  }

  private handSlotOn(): void {
    this.lentSlot = true;
    this.executor.lendSlot(1);
  }

  /** A stopped job gets `graceMs` to reach a boundary; then its worker is terminated and replaced. */
  private armGrace(): void {
    this.timers.push(
      setTimeout(() => {
        const slot = this.slot!;
        // Only a job that is on a thread can be stuck; one still waiting for a replacement thread will stop at its first check.
        if (!this.executor.slab.started(slot)) return this.armGrace();
        this.hardStopRequested = true;
        this.executor.pool.terminate(this.executor.slab.threadOf(slot));
      }, this.executor.graceMs),
    );
  }

  /** The job's port: reports and client requests from the worker. */
  private channel(options: StartOptions): JobChannel {
    const { onClientRequest } = options;
    return new JobChannel({
      report: (message) => this.report(message, options),
      ...(onClientRequest && { request: (method, params) => onClientRequest(method, params, this.stopSignal) }),
    });
  }

  /**
   * Before the outcome: the reports the worker posted (they may still be on
   * their way, on another channel than the outcome), then those it carried in
   * the outcome. Waits only if some are still on their way, and never for a
   * stopped job (no `channel`), whose reports are all discarded.
   */
  private async takeReports(reports: JobReports, channel: JobChannel | undefined, options: StartOptions): Promise<void> {
    this.executor.counters.logsDropped += reports.logsDropped ?? 0;
    const pending = channel?.caughtUp(reports.posted);
    if (pending) await pending;
    for (const message of reports.tail ?? []) this.report(message, options);
  }

  /** Hands a report on while the job may still answer (running, or its response claimed but not yet sent). */
  private report(message: ReportMessage, options: StartOptions): void {
    this.executor.counters.reportsReceived++;
    const state = this.state;
    if (state !== 'running' && state !== 'responding') {
      this.executor.counters.reportsDiscarded++;
      return;
    }
    if (!this.reportedThisTurn) {
      this.reportedThisTurn = true;
      setImmediate(() => (this.reportedThisTurn = false));
    }
    if (message.type === 'progress') {
      const { type: _type, ...report } = message;
      options.onProgress?.(report);
    } else {
      options.onLog?.(message.data === undefined ? { level: message.level, message: message.message } : { level: message.level, message: message.message, data: message.data });
    }
  }
}
