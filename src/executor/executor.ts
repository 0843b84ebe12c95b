/**
 * The local pool backend: in-flight registry → admission queue (fair between
 * sessions) → worker pool, with the shared state word deciding every race
 * between completion and cancellation. This facade wires the pieces; a job's
 * life is in job.ts, the hand-off to the standby in standby.ts.
 */
import type { BackendStats, CallBackend, CancelResult, StartOptions } from '../backend/backend.js';
import { Admission, type AdmissionPools } from '../admission/admission.js';
import { WaitList } from '../admission/wait-list.js';
import { WorkerPool } from '../pool/pool.js';
import type { AppliedToolPriority } from '../pool/protocol.js';
import { CallTable } from '../backend/calls.js';
import type { RequestId } from '../wire/registry.js';
import { StateSlab } from '../state/job-state.js';
import { GapClock } from '../state/gap-clock.js';
import { CheckpointGaps } from './checkpoint-gaps.js';
import type { ToolDefinition } from '../stages/tool.js';
import { Job, type JobCounters, type JobHost } from './job.js';
import { loadTools, resolveOptions, type ExecutorOptions, type ResolvedOptions } from './options.js';
import { Standby } from './standby.js';
import type { CancelSource } from '../state/cancel-source.js';
import { ChildGroups } from './children.js';

/** The local pool's counters: see {@link BackendStats}. */
export type ExecutorStats = BackendStats;

/** Test-only views of an executor's internals (see {@link inspectExecutor}). */
const internals = new WeakMap<Executor, { readonly slab: StateSlab }>();

/**
 * The registry (inbound jobs by session and id; outbound entries of other
 * kinds may be added, and are stopped with their session), reserve,
 * requestCancel and callsInFlight come from {@link CallTable}, as for the
 * queue backend.
 */
export class Executor extends CallTable<Job> implements CallBackend {
  /** Tools by name. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly #options: ResolvedOptions;
  readonly #slab: StateSlab;
  readonly #pool: WorkerPool;
  readonly #admission: Admission<Job>;
  readonly #standby: Standby;
  readonly #children: ChildGroups;
  readonly #counters = {
    completed: 0,
    cancelled: 0,
    failed: 0,
    timedOut: 0,
    running: 0,
    stopping: 0,
    hardKilled: 0,
    lateCancelsIgnored: 0,
    unknownCancelsIgnored: 0,
    logsDropped: 0,
    reportsReceived: 0,
    reportsDiscarded: 0,
  };
  protected readonly unknownCancels = this.#counters;
  readonly #host: JobHost;
  readonly #gaps: { readonly clock: GapClock; readonly record: CheckpointGaps } | undefined;
  #toolPriority: AppliedToolPriority = { priority: 'normal' };

  private constructor(options: ResolvedOptions, tools: Map<string, ToolDefinition>) {
    super();
    this.#options = options;
    this.tools = tools;
    const waitList = new WaitList<Job>();
    const counters = this.#counters;
    // The pool needs the slab, whose size the standby policy decides, which steers admission, which posts to the pool.
    const pools: AdmissionPools = {
      run: (task, done) => this.#pool.run(task, done),
      runOnStandby: (task, done) => this.#pool.runOnStandby(task, done),
    };
    this.#admission = new Admission(options.threads, waitList, pools, () => counters.running + counters.stopping);
    this.#standby = new Standby(options, this.#admission);
    this.#slab = new StateSlab(this.#standby.slabCapacity(options.queueLimit));
    internals.set(this, { slab: this.#slab });
    this.#children = new ChildGroups(this.#slab.capacity, options.graceMs);
    this.#gaps = options.checkpointGaps
      ? { clock: new GapClock(this.#slab.capacity), record: new CheckpointGaps() }
      : undefined;
    this.#pool = new WorkerPool({
      waitQueue: waitList,
      threads: options.threads,
      spareThreads: options.spareThreads,
      init: {
        stateBuffer: this.#slab.buffer,
        childBuffer: this.#children.cells.buffer,
        graceMs: options.graceMs,
        toolModules: [...options.toolModules],
        settings: options.toolSettings,
        progressIntervalMs: options.progressIntervalMs,
        toolPriority: options.toolPriority,
        ...(this.#gaps && { gapBuffer: this.#gaps.clock.buffer }),
      },
      ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
    });
    this.#host = this.#jobHost();
  }

  /** Checks the options, loads the tool modules and starts (and warms up) the pool. */
  static async create(options: ExecutorOptions = {}): Promise<Executor> {
    const resolved = resolveOptions(options);
    const executor = new Executor(resolved, await loadTools(resolved.toolModules));
    const reports = await executor.#pool.warmup();
    // Every thread runs the same code, so they agree; should they not, the first that differs is reported.
    const got = reports.find((r) => r.priority.priority !== resolved.toolPriority) ?? reports[0];
    if (got) executor.#toolPriority = got.priority;
    if (got?.priority.note)
      process.emitWarning(
        `toolPriority '${resolved.toolPriority}': tool threads got '${got.priority.priority}' (${got.priority.note})`,
        { code: 'MCP_CANCEL_POOL_TOOL_PRIORITY' },
      );
    return executor;
  }

  /**
   * How the worker threads are scheduled, as they reported at start: what
   * {@link ExecutorOptions.toolPriority} asked for, or the fallback they got.
   * Threads that replace hard-stopped ones run the same code but do not report.
   */
  get toolPriority(): AppliedToolPriority {
    return this.#toolPriority;
  }

  /** Worker threads that run jobs (see {@link ExecutorOptions.threads}). */
  get threads(): number {
    return this.#options.threads;
  }

  /** Standby threads (see {@link ExecutorOptions.spareThreads}). */
  get spareThreads(): number {
    return this.#options.spareThreads;
  }

  /**
   * {@link CallTable.reserve} makes a job with this, registered before
   * anything expensive happens, so a cancellation that arrives at once
   * already finds it. Start it with {@link Job.start}, or
   * {@link Job.abandon} it if it will not run.
   */
  protected newCall(session: string, id: RequestId): Job {
    return new Job(this.#host, session, id);
  }

  /** Reserves and starts in one step. */
  submit(session: string, id: RequestId, options: StartOptions): Job {
    const job = this.reserve(session, id);
    void job.start(options);
    return job;
  }

  /**
   * A peer's cancellation, decided now by the job's CAS (what
   * {@link CallTable.requestCancel} resolves with). Looks only at inbound
   * requests of that session; whatever it does not find or cannot stop is
   * ignored, and nothing is ever sent back for a cancellation.
   */
  tryCancel(session: string, id: RequestId): CancelResult {
    const entry = this.registry.get('inbound', session, id);
    if (!(entry instanceof Job)) {
      this.#counters.unknownCancelsIgnored++;
      return 'unknown';
    }
    return entry.tryCancel();
  }

  /** Cancels every request of a session (its transport closed); returns how many inbound jobs it stopped. */
  override cancelSession(session: string, reason = 'session closed', source: CancelSource = 'session_close'): number {
    let n = 0;
    for (const entry of this.#stopOrder(this.registry.inSession('inbound', session)))
      if (entry.stop(reason, source)) n++;
    for (const entry of this.registry.inSession('outbound', session)) entry.stop(reason, source);
    return n;
  }

  /** {@link CallBackend.queuedOf}: jobs of lane `turn` waiting for a thread. */
  queuedOf(turn: string): number {
    return this.#admission.waitingIn(turn);
  }

  /** A snapshot of the counters. */
  stats(): ExecutorStats {
    return {
      ...this.#counters,
      ...this.#children.counts(),
      queued: this.#admission.size,
      inFlight: this.registry.size,
      threads: this.#pool.threads,
      ...(this.#gaps && { checkpointGaps: this.#gaps.record.snapshot() }),
    };
  }

  /** Cancels everything (each outcome settles as cancelled) and stops the workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.#admission.close();
    for (const entry of this.#stopOrder(this.registry.all())) entry.stop('executor closed', 'shutdown');
    await this.#pool.close();
    // The workers are gone; their children are not, until this ends them.
    await this.#children.close();
    await this.#gaps?.clock.close();
  }

  #stopOrder<E>(entries: E[]): E[] {
    return this.#standby.stopOrder(entries, (e) => e instanceof Job && e.state === 'queued');
  }

  /** The narrow view a job gets of its executor. */
  #jobHost(): JobHost {
    const counters: JobCounters = this.#counters;
    const onThreads = () => counters.running + counters.stopping;
    return {
      tools: this.tools,
      slab: this.#slab,
      children: this.#children,
      counters,
      graceMs: this.#options.graceMs,
      gaps: this.#gaps,
      refusal: (turn) => {
        const { size } = this.#admission;
        const { queueLimit, queueLimitPerCaller } = this.#options;
        const waiting = size - this.#standby.freeThreads(onThreads());
        // Only a job that would wait counts against a limit; the caller's share first, so one caller cannot fill the queue.
        if (waiting < 0) return undefined;
        if (turn !== undefined) {
          const mine = this.#admission.waitingIn(turn);
          if (mine >= queueLimitPerCaller)
            return `server busy: per-caller queue share reached: this caller has ${mine} calls waiting (--queue-limit-per-caller ${queueLimitPerCaller}); wait for one to finish`;
        }
        if (waiting < queueLimit) return undefined;
        return `server busy: total queue limit reached: ${size} calls already waiting (--queue-limit ${queueLimit}); try again later`;
      },
      admit: (job) => this.#admission.admit(job),
      dequeue: (job) => this.#admission.remove(job),
      terminate: (threadId) => this.#pool.terminate(threadId),
      stoppedOnThread: () => this.#standby.stopped(onThreads()),
      settled: (job) => this.registry.remove(job),
    };
  }
}

/** Test-only: the executor's state slab, to check that no slot leaked. Not part of the package's entries. */
export function inspectExecutor(executor: Executor): { readonly slotsFree: number; readonly slotCapacity: number } {
  const slab = internals.get(executor)!.slab;
  return { slotsFree: slab.available, slotCapacity: slab.capacity };
}
