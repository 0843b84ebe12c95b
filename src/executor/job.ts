/**
 * One inbound tool call, from reservation until it leaves the registry:
 * reserve → start (validate, admit) → run (on a worker) → conclude. Its
 * state is the shared state word while it holds a slot, and its settled
 * outcome afterwards; nothing else shadows it.
 */
import type { BackendStats, CancelResult, JobOutcome, StartOptions } from '../backend/backend.js';
import type { Admittable } from '../admission/admission.js';
import { carrying } from '../admission/wait-list.js';
import type { PoolOutcome } from '../pool/pool.js';
import { NO_LOGS, isBareResult, type JobReports, type WorkerTask } from '../pool/protocol.js';
import type { InFlightEntry, RequestId } from '../wire/registry.js';
import type { ToolDefinition } from '../stages/tool.js';
import { JobState, packSlot, type JobStateName, type SlotRef, type StateSlab } from '../state/job-state.js';
import { checkStart, countSettled, type TableCall } from '../backend/calls.js';
import { severityOf } from '../stages/log-levels.js';
import { Escalation } from './escalation.js';
import { crashed, outcomeOf, settledState, stoppedWhileRunning } from './outcome.js';
import type { StandbyLoan } from './standby.js';
import { WorkerChannel, wantsPort } from './worker-channel.js';
import { JOB_EVENTS, type JobEvent } from './events.js';
import { beginJobTrace, type JobTraceHooks } from './job-tracing.js';
import type { CancelSource } from '../state/cancel-source.js';
import { logger } from '../log/logger.js';
import type { ChildGroups } from './children.js';
import type { GapClock } from '../state/gap-clock.js';
import type { CheckpointGaps, MeasuredGap } from './checkpoint-gaps.js';

/** The reason on a job's stop signal; a plain value, so aborting costs no DOMException. */
const STOPPED = 'job stopped';

/** The executor's counters a job moves: a subset of the stats it reports. */
export type JobCounters = Pick<
  BackendStats,
  | 'completed'
  | 'cancelled'
  | 'failed'
  | 'timedOut'
  | 'running'
  | 'stopping'
  | 'hardKilled'
  | 'lateCancelsIgnored'
  | 'logsDropped'
  | 'reportsReceived'
  | 'reportsDiscarded'
>;

/** What a job needs from its executor, and nothing more. */
export interface JobHost {
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly slab: StateSlab;
  /** The child process groups of every job (the main thread ends them on every stop). */
  readonly children: ChildGroups;
  readonly counters: JobCounters;
  readonly graceMs: number;
  /** The checkpoint-gap clock and record; absent when gaps are not measured. */
  readonly gaps: { readonly clock: GapClock; readonly record: CheckpointGaps } | undefined;
  /** Why admission refuses a job of lane `turn` now (its caller's share or the queue full), or undefined. */
  refusal(turn: string | undefined): string | undefined;
  /** Starts the job on a free thread now, or it waits; {@link Job.handOut} when it starts, never if dequeued first. */
  admit(job: Job): void;
  dequeue(job: Job): void;
  terminate(threadId: number): void;
  /** A running job was stopped: the standby policy may lend its slot until {@link StandbyLoan.end}. */
  stoppedOnThread(): StandbyLoan;
  /** The job settled: remove it from the registry. */
  settled(job: Job): void;
}

/**
 * One tool call on the local pool, from `reserve` to its outcome: `start` queues it, `outcome` settles once
 * (completed, cancelled, failed or timed out), and a cancel goes through the call's state word.
 */
export class Job implements InFlightEntry, TableCall, Admittable {
  readonly direction = 'inbound' as const;
  /** Settles when the job has ended and its worker is free (or replaced). */
  readonly outcome: Promise<JobOutcome>;
  private resolve!: (outcome: JobOutcome) => void;
  /** Set once, when the outcome settles. */
  private result: JobOutcome | undefined;
  private slot: SlotRef | undefined;
  /** Created only when someone needs to hear of the stop (a tool's requests to the client): most jobs never do. */
  private stopped: AbortController | undefined;
  /** Created only for a deadline or a stop: a zero-work call arms no timer. */
  private escalation: Escalation | undefined;
  private loan: StandbyLoan | undefined;
  /** What start() validated, kept for the moment admission starts the job. */
  private tool: ToolDefinition | undefined;
  private options: StartOptions | undefined;
  /** What goes to the worker, built at start (see {@link task}). */
  private workerTask: WorkerTask | undefined;
  /** Made when the job needs a port, or when its worker carried reports back. */
  private channel: WorkerChannel | undefined;
  /** Its spans, while an OpenTelemetry SDK is registered (./job-tracing.ts); undefined costs nothing. */
  private trace: JobTraceHooks | undefined;
  /** Who asked for the cancel that won (or `deadline`), for the job's events. */
  private stoppedBy: CancelSource | undefined;
  /** The worker thread died under the job (a hard stop, a crash, the pool closed): its children are orphans. */
  private workerDied = false;
  /** The worst checkpoint gap the worker measured, once it returned (not after a crash or hard stop). */
  private gap: MeasuredGap | undefined;

  constructor(
    private readonly host: JobHost,
    readonly session: string,
    readonly id: RequestId,
  ) {
    this.outcome = new Promise((resolve) => (this.resolve = resolve));
  }

  /** Its lane in the fair queue: {@link StartOptions.turn}, or the session. */
  get turn(): string {
    return this.options?.turn ?? this.session;
  }

  /** The shared word while the job holds a slot; its outcome's state once settled; `queued` while only reserved. */
  get state(): Exclude<JobStateName, 'free'> {
    if (this.result) return settledState(this.result);
    // A slot is released only after the result is set, so a held slot never reads `free`.
    return this.slot ? (this.host.slab.read(this.slot) as Exclude<JobStateName, 'free'>) : 'queued';
  }

  /** Fires when cancellation or the deadline wins (or the job settles); cascades to the job's requests to the client. */
  stopSignal(): AbortSignal {
    this.stopped ??= new AbortController();
    const state = this.state;
    if (this.result || state === 'cancelled' || state === 'timedOut') this.stopped.abort(STOPPED);
    return this.stopped.signal;
  }

  /** {@link InFlightEntry.stop}: a cancellation. */
  stop(reason?: string, source: CancelSource = 'notification'): boolean {
    const r = this.tryCancel(reason, source);
    return r === 'cancelled-queued' || r === 'cancelled-running';
  }

  /** {@link TableCall.requestCancel}: the local CAS decides at once. */
  requestCancel(reason: string | undefined, source: CancelSource): Promise<CancelResult> {
    return Promise.resolve(this.tryCancel(reason, source));
  }

  /** Queues the job. Never throws: a full queue or unknown tool settles the outcome as failed. */
  start(options: StartOptions): Promise<JobOutcome> {
    if (this.result || this.slot) return this.outcome;
    if (JOB_EVENTS.hasSubscribers)
      JOB_EVENTS.publish({ type: 'start', job: this, tool: options.tool } satisfies JobEvent);
    const host = this.host;
    const checked = checkStart(host.tools, options);
    if ('kind' in checked) return this.finish(checked);
    const refusal = host.refusal(options.turn);
    if (refusal !== undefined) return this.finish({ kind: 'failed', code: 'queue_full', message: refusal });
    this.slot = host.slab.allocate();
    this.tool = checked.tool;
    const trace = (this.trace = beginJobTrace(checked.tool.name));
    // Traced, its requests to the client are spans of their own and carry the trace to the client.
    if (trace && options.onClientRequest)
      options = { ...options, onClientRequest: trace.clientRequests(options.onClientRequest) };
    this.options = options;
    this.workerTask = this.buildTask(checked.tool, checked.args, options, this.slot);
    host.admit(this);
    return this.outcome;
  }

  /** {@link Waiting.priority}: the call's, while it waits. */
  get priority(): number {
    return this.options?.priority ?? 0;
  }

  /** {@link Waiting.waitId}: the slot's index, unique among the jobs holding one. */
  get waitId(): string {
    return String(this.slot!.index);
  }

  /** {@link Admittable.task}. */
  get task(): WorkerTask {
    return this.workerTask!;
  }

  /** Only what the worker needs (absent fields cost nothing to clone), and the job itself for Piscina's queue. */
  private buildTask(tool: ToolDefinition, args: unknown, options: StartOptions, slot: SlotRef): WorkerTask {
    const host = this.host;
    // The port goes in Piscina's transfer list when the task is handed to Piscina, so it exists from the start.
    if (wantsPort(tool, options)) this.channel = new WorkerChannel(tool, options, this, host.counters);
    const minLogSeverity = options.onLog ? (severityOf(options.logLevel ?? 'debug') ?? 0) : NO_LOGS;
    const port = this.channel?.port;
    const task: { -readonly [K in keyof WorkerTask]: WorkerTask[K] } = {
      tool: tool.name,
      args,
      slot: packSlot(slot, host.slab.capacity),
    };
    if (options.onProgress) task.progress = true;
    if (minLogSeverity !== 0) task.minLogSeverity = minLogSeverity;
    if (this.trace) task.trace = true;
    if (port) task.port = port.workerPort;
    // Piscina's queue and balancer find the job on its task.
    return carrying(task, this);
  }

  /**
   * Ends a reserved job that will never start, e.g. because the request was
   * answered with an error before it got here. Its outcome settles as failed.
   * False if it had already started or been cancelled.
   */
  abandon(message = 'request rejected before it started'): boolean {
    if (this.result || this.slot) return false;
    void this.finish({ kind: 'failed', code: 'rejected', message });
    return true;
  }

  /**
   * The cancellation's side of the race: a CAS on the word, decided now. `source` names who asked (for its span);
   * `reason` is for people.
   */
  tryCancel(reason?: string, source: CancelSource = 'notification'): CancelResult {
    const result = this.decideCancel(source);
    this.trace?.cancelDecided(source, result);
    const log = logger();
    if (log.debugOn) log.debug(`cancel: ${result}`, { request_id: String(this.id), cancel_source: source, reason });
    return result;
  }

  private decideCancel(source: CancelSource): CancelResult {
    const host = this.host;
    if (!this.result && !this.slot) {
      // Not yet started: single-threaded, no worker can race us.
      this.stoppedBy = source;
      void this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false });
      return 'cancelled-queued';
    }
    const won = !this.result && this.slot ? host.slab.tryCancel(this.slot) : undefined;
    if (!won) {
      host.counters.lateCancelsIgnored++;
      return 'too-late';
    }
    this.stoppedBy = source;
    this.stopped?.abort(STOPPED);
    if (won === 'queued') {
      host.dequeue(this); // it never reaches a worker
      this.channel?.port?.close();
      void this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false });
      return 'cancelled-queued';
    }
    this.stoppedWhileRunning('cancelled');
    return 'cancelled-running';
  }

  /**
   * {@link Waiting.handOut}: the job leaves the wait for a thread (Piscina's
   * balancer gave its task one, or admission is starting it on the standby).
   * A job cancelled while waiting was taken out of the wait list first, so the
   * move cannot lose; if it ever did, the worker would stop at its first check.
   */
  handOut(): void {
    const host = this.host;
    if (!host.slab.transition(this.slot!, JobState.queued, JobState.running)) return;
    host.counters.running++;
    this.trace?.running();
    if (JOB_EVENTS.hasSubscribers) JOB_EVENTS.publish({ type: 'running', job: this } satisfies JobEvent);
    const timeoutMs = this.options!.timeoutMs ?? this.tool!.timeoutMs;
    if (timeoutMs !== undefined && timeoutMs > 0) this.escalate().armDeadline(timeoutMs);
  }

  /** {@link PoolCallback.poolDone}: the worker returned (or died); admission already gave its thread to the next job. */
  poolDone(result: PoolOutcome): void {
    const host = this.host;
    const slot = this.slot!;
    const state = host.slab.read(slot);
    if (state === 'cancelled' || state === 'timedOut') host.counters.stopping--;
    else host.counters.running--;
    // Off the thread now, which may already run the next job: a grace timer firing later would terminate it
    // (seen: a fresh job 'worker exited with code: 1' while this one's reports drained).
    this.escalation?.clear();
    this.loan?.end();
    // A bare result carries nothing else; a crash has no reports.
    const tagged = isBareResult(result) ? undefined : result;
    const reports = tagged?.kind === 'crashed' ? undefined : tagged?.reports;
    const gaps = host.gaps;
    if (gaps && tagged?.kind !== 'crashed') {
      const { ms, stage } = gaps.clock.read(slot.index);
      this.gap = gaps.record.record(this.tool!, ms, stage);
      this.trace?.checkpointGap(this.gap);
    }
    this.trace?.workerBack(reports?.marks, host.slab.threadOf(slot));
    if (reports && !this.channel && carriesReports(reports))
      this.channel = new WorkerChannel(this.tool!, this.options!, this, host.counters);
    const channel = this.channel;
    if (!channel) {
      this.conclude(result, slot);
      return;
    }
    void channel.drain(reports, tagged?.kind === 'stopped').then(() => this.conclude(result, slot));
  }

  /** The deadline and grace timers, made on first need. */
  private escalate(): Escalation {
    if (this.escalation) return this.escalation;
    const host = this.host;
    const slot = this.slot!;
    return (this.escalation = new Escalation({
      onDeadline: () => {
        if (host.slab.transition(slot, JobState.running, JobState.timedOut)) {
          this.stoppedBy = 'deadline';
          this.trace?.cancelDecided('deadline', 'cancelled-running');
          this.stopped?.abort(STOPPED);
          this.stoppedWhileRunning('timedOut');
        }
      },
      onThread: () => host.slab.started(slot),
      hardStop: () => {
        this.trace?.hardStop(host.slab.threadOf(slot));
        host.terminate(host.slab.threadOf(slot));
      },
    }));
  }

  /** Turns what the pool reported into the outcome, trusting the state word for who won. */
  private conclude(result: PoolOutcome, slot: SlotRef): void {
    const slab = this.host.slab;
    const crash = !isBareResult(result) && result.kind === 'crashed' ? result : undefined;
    const hardKilled = this.escalation?.hardStopped === true && crash !== undefined;
    this.workerDied = crash !== undefined;
    // The worker died before claiming: claim the response on its behalf, unless a stop already won.
    if (crash && !hardKilled && slab.transition(slot, JobState.running, JobState.responding)) {
      void this.finish(crashed(crash.message));
      return;
    }
    void this.finish(
      outcomeOf(result, slab.read(slot), this.options!.timeoutMs ?? this.tool!.timeoutMs ?? 0, hardKilled),
    );
  }

  private finish(outcome: JobOutcome): Promise<JobOutcome> {
    if (this.result) return this.outcome;
    const { slab, counters } = this.host;
    this.result = outcome;
    this.escalation?.clear();
    this.loan?.end();
    if (this.slot) {
      // Before the slot is reused: what the call left running is ended, and its row is empty for the next job.
      this.host.children.release(this.slot.index, this.workerDied, this.trace?.childKilled);
      if (outcome.kind === 'completed') slab.transition(this.slot, JobState.responding, JobState.completed);
      else if (outcome.kind === 'failed') slab.transition(this.slot, JobState.responding, JobState.failed);
      slab.release(this.slot);
    }
    if (!stoppedWhileRunning(outcome)) countSettled(counters, outcome); // a stop that won while running was counted then
    if ((outcome.kind === 'cancelled' || outcome.kind === 'timedOut') && outcome.hardKilled) counters.hardKilled++;
    this.stopped?.abort(STOPPED); // releases the job's outbound requests, if any are still pending
    this.host.settled(this);
    this.trace?.settled(outcome);
    if (JOB_EVENTS.hasSubscribers)
      JOB_EVENTS.publish({
        type: 'settled',
        job: this,
        outcome,
        source: this.stoppedBy,
        ...(this.gap && { checkpointGap: this.gap }),
      } satisfies JobEvent);
    this.resolve(outcome);
    // A settled job can sit in old space until the next full GC; what it still pointed to would survive every
    // scavenge with it and be promoted too (trace-gc-nvp, 32 in flight: 6.2 → 5.2 KB promoted per call).
    this.tool = undefined;
    this.options = undefined;
    this.workerTask = undefined;
    this.channel = undefined;
    this.escalation = undefined;
    this.loan = undefined;
    return this.outcome;
  }

  /**
   * Cancel or deadline won while running: count it now (the stats must not
   * wait for the worker), let the standby policy lend the slot, and start the grace period.
   */
  private stoppedWhileRunning(kind: 'cancelled' | 'timedOut'): void {
    const counters = this.host.counters;
    counters[kind]++;
    counters.running--;
    counters.stopping++;
    if (JOB_EVENTS.hasSubscribers)
      JOB_EVENTS.publish({ type: 'stopped', job: this, kind, source: this.stoppedBy! } satisfies JobEvent);
    this.loan = this.host.stoppedOnThread();
    // After the CAS that stopped the call: a child whose pid lands in the row later is killed by its worker.
    this.host.children.stop(this.slot!.index, this.trace?.childKilled);
    this.escalate().armGrace(this.host.graceMs);
  }
}

/** Whether a worker's reports hold anything to deliver (a traced job's carry its stage timings even when they do not). */
function carriesReports(reports: JobReports): boolean {
  return reports.posted > 0 || reports.tail !== undefined || reports.logsDropped !== undefined;
}
