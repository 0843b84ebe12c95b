/**
 * One tools/call at a front end whose job runs on a worker host. The call
 * settles exactly once: with the outcome the host published when it won
 * running → responding, or as cancelled when the front end's cancel won in
 * Redis, or with an error when its host is lost or Redis fails it.
 */
import type { CallHandle, CancelResult, JobOutcome, StartOptions } from '../backend/backend.js';
import { describeIssues } from '../issues.js';
import type { InFlightEntry, RequestId } from '../wire/registry.js';
import type { JobStateName } from '../state/job-state.js';
import type { RemoteContext } from './queue-backend.js';
import { parseFrontMessage, type FrontMessage, type RemoteJobData } from './messages.js';

let sequence = 0;

export class RemoteCall implements CallHandle, InFlightEntry {
  readonly direction = 'inbound' as const;
  /** Settles with the outcome (never rejects). */
  readonly done: Promise<JobOutcome>;
  private settle!: (outcome: JobOutcome) => void;
  private phase: 'reserved' | 'submitting' | 'queued' | 'settled' = 'reserved';
  private finalState: JobStateName = 'queued';
  private jobId: string | undefined;
  private options: StartOptions | undefined;
  /** Set when the client cancelled: Redis decides; no more reports are handed on. */
  private cancelWanted = false;
  private cancelling = false;
  /** When the job's host was first seen gone. */
  private hostlessSince: number | undefined;
  private reportedThisTurn = false;

  constructor(
    private readonly ctx: RemoteContext,
    readonly session: string,
    readonly id: RequestId,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  get state(): JobStateName {
    return this.phase === 'settled' ? this.finalState : this.phase === 'reserved' ? 'queued' : 'running';
  }

  stop(reason?: string): boolean {
    const r = this.cancel(reason);
    return r === 'cancelled-queued' || r === 'cancelled-running';
  }

  start(options: StartOptions): Promise<JobOutcome> {
    if (this.phase !== 'reserved') return this.done;
    this.options = options;
    const tool = this.ctx.tools.get(options.tool);
    if (!tool) return this.fail('unknown_tool', `unknown tool '${options.tool}'`);
    const parsed = tool.input.safeParse(options.args ?? {});
    if (!parsed.success) return this.fail('invalid_arguments', `invalid arguments for tool '${tool.name}': ${describeIssues(parsed.error)}`);
    if (!this.ctx.connected()) return this.fail('rejected', `Redis at ${this.ctx.redisUrl} is unreachable: the call was not queued; try again when it is back`);
    this.phase = 'submitting';
    this.jobId = `${this.ctx.frontId}-${++sequence}`;
    this.ctx.byJob.set(this.jobId, this);
    void this.submit({
      front: this.ctx.frontId,
      tool: tool.name,
      args: parsed.data,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      progress: options.onProgress !== undefined,
      ...(options.onLog && { logLevel: options.logLevel ?? 'debug' }),
      liveLogs: options.liveLogs ?? false,
    });
    return this.done;
  }

  abandon(): void {
    if (this.phase === 'reserved') this.fail('rejected', 'request rejected before it started');
  }

  cancel(_reason?: string): CancelResult {
    if (this.phase === 'reserved') {
      this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false }, 'cancelled');
      return 'cancelled-queued';
    }
    if (this.phase === 'settled' || this.cancelWanted) {
      this.ctx.counters.lateCancelsIgnored++;
      return 'too-late';
    }
    this.cancelWanted = true; // from now on nothing of this call reaches the client unless Redis says completion won
    if (this.phase === 'queued') void this.cancelInRedis();
    // Redis decides; until its answer the call is held (no reports). 'too-late' would be known only then.
    return 'cancelled-running';
  }

  /**
   * A cancel whose answer is Redis's decision, not the front end's hope: for
   * a caller that must tell "cancelled" from "completion won" before it
   * answers (tasks/cancel). Waits until the call settles.
   */
  async cancelDecided(reason?: string): Promise<CancelResult> {
    const first = this.cancel(reason);
    if (first !== 'cancelled-running') return first;
    const outcome = await this.done;
    if (outcome.kind !== 'cancelled') return 'too-late';
    return outcome.from === 'queued' ? 'cancelled-queued' : 'cancelled-running';
  }

  private async submit(data: RemoteJobData): Promise<void> {
    const jobId = this.jobId!;
    try {
      await withTimeout(
        (async () => {
          await this.ctx.states.create(jobId, this.ctx.frontId);
          await this.ctx.queue.add(data.tool, data, { jobId, removeOnComplete: true, removeOnFail: true });
        })(),
        this.ctx.submitTimeoutMs,
      );
    } catch (error) {
      void this.ctx.states.remove(jobId).catch(() => undefined);
      if (this.phase === 'submitting') this.fail('rejected', `Redis at ${this.ctx.redisUrl} failed while queuing the call: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (this.phase !== 'submitting') return;
    this.phase = 'queued';
    if (this.cancelWanted) void this.cancelInRedis();
  }

  /** The front end's side of the race: queued|running → cancelled in one Lua step. */
  private async cancelInRedis(): Promise<void> {
    if (this.cancelling || this.phase !== 'queued') return;
    this.cancelling = true;
    try {
      const found = await this.ctx.states.cancel(this.jobId!);
      if (found === 'queued') {
        void this.ctx.queue.remove(this.jobId!).catch(() => undefined); // taken meanwhile: the host's take finds it cancelled
        this.finish({ kind: 'cancelled', from: 'queued', hardKilled: false }, 'cancelled');
      } else if (found === 'running' || found === 'cancelled' || found === 'unknown') {
        this.finish({ kind: 'cancelled', from: 'running', hardKilled: false }, 'cancelled');
      } else {
        // Completion (or the host-lost failure) won: its outcome is on its way or already here; the late cancel changes nothing.
        this.ctx.counters.lateCancelsIgnored++;
      }
    } catch {
      /* Redis away: the sweep retries */
    } finally {
      this.cancelling = false;
    }
  }

  /** A message from the host on this front end's channel. */
  receive(message: FrontMessage): void {
    if (this.phase === 'settled') return;
    if (message.t === 'o') {
      // Published only after the host won running → responding: this is the answer, whatever the client sent since.
      if (this.cancelWanted) this.ctx.counters.lateCancelsIgnored++;
      this.cancelWanted = false;
      // The SDK client drops a progress notification read in the same chunk as the response (typescript-sdk#2580).
      if (this.reportedThisTurn) setImmediate(() => this.answer(message.o));
      else this.answer(message.o);
      return;
    }
    this.ctx.counters.reportsReceived++;
    if (this.cancelWanted || !this.options) {
      this.ctx.counters.reportsDiscarded++;
      return;
    }
    if (!this.reportedThisTurn) {
      this.reportedThisTurn = true;
      setImmediate(() => (this.reportedThisTurn = false));
    }
    if (message.t === 'p') this.options.onProgress?.(message.r);
    else this.options.onLog?.(message.e);
  }

  /** The sweep: an outcome whose message was lost, a cancel to retry, a host that is gone. */
  async check(lostHostTimeoutMs: number): Promise<void> {
    if (this.phase !== 'queued') return;
    if (this.cancelWanted) return this.cancelInRedis();
    const probe = await this.ctx.states.probe(this.jobId!);
    if (this.phase !== 'queued') return;
    switch (probe.state) {
      case 'responding': {
        const message = parseFrontMessage(probe.message);
        if (message) this.receive(message);
        return;
      }
      case 'gone':
        return void this.fail('crash', 'the job\'s state in Redis is gone (was Redis restarted or flushed?); the call may or may not have run');
      case 'failed':
        return void this.fail('crash', 'the worker host running this call was lost and no other host took it over');
      case 'cancelled':
        return void this.fail('crash', 'the call was cancelled by the worker hosts because this front end lost its Redis connection');
      case 'hostless': {
        this.hostlessSince ??= Date.now();
        if (Date.now() - this.hostlessSince < lostHostTimeoutMs) return;
        if (await this.ctx.states.failIfLost(this.jobId!, probe.host)) {
          this.fail('crash', `worker host ${probe.host} stopped (crashed?) while running this call, and no other host took it over within ${Math.round(lostHostTimeoutMs / 1000)} s`);
        }
        return;
      }
      default:
        this.hostlessSince = undefined;
    }
  }

  private answer(outcome: JobOutcome): void {
    this.finish(outcome, outcome.kind === 'timedOut' ? 'timedOut' : 'completed');
  }

  private fail(code: 'unknown_tool' | 'invalid_arguments' | 'rejected' | 'crash', message: string): Promise<JobOutcome> {
    return this.finish({ kind: 'failed', code, message }, 'completed');
  }

  private finish(outcome: JobOutcome, finalState: JobStateName): Promise<JobOutcome> {
    if (this.phase === 'settled') return this.done;
    const jobId = this.jobId;
    this.phase = 'settled';
    this.finalState = finalState;
    const c = this.ctx.counters;
    if (outcome.kind === 'completed') c.completed++;
    else if (outcome.kind === 'failed') c.failed++;
    else if (outcome.kind === 'timedOut') c.timedOut++;
    else c.cancelled++;
    if (jobId !== undefined) {
      this.ctx.byJob.delete(jobId);
      // Every script treats a missing state like a lost race ('gone'), so a decided job's state can go at once.
      void this.ctx.states.remove(jobId).catch(() => undefined);
    }
    this.ctx.settled(this);
    this.settle(outcome);
    return this.done;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });
}
