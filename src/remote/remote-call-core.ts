/**
 * A front end's remote call, its state and how it settles (remote-call.ts
 * drives it): one discriminated FrontState (call-states.ts), and the settle that
 * counts the outcome, aborts the job's open asks of the client, retires the
 * job's Redis state and lets the outcome go after the reports of its turn.
 */
import type { CallState, CancelResult, JobOutcome, StartOptions } from '../backend/backend.js';
import { countSettled, ReportTurn } from '../backend/calls.js';
import type { InFlightEntry, RequestId } from '../wire/registry.js';
import type { FrontAsks } from './front-asks.js';
import { parseFrontMessage, type FrontMessage } from './messages.js';
import type { RemoteContext } from './remote-context.js';
import type { FrontState, Submission } from './call-states.js';

export type { FrontState, Submission } from './call-states.js';

/** The state and settling of a remote call; the transitions are RemoteCall's. */
export abstract class RemoteCallCore implements InFlightEntry {
  abstract readonly direction: 'inbound';
  /** {@link InFlightEntry.stop} (RemoteCall's). */
  abstract stop(reason?: string): boolean;
  /** A message from the host on this front end's channel (RemoteCall's). */
  abstract receive(message: FrontMessage): void;
  /** Settles with the outcome (never rejects). */
  readonly done: Promise<JobOutcome>;
  private resolve!: (outcome: JobOutcome) => void;
  protected current: FrontState = { kind: 'reserved' };
  protected readonly turn = new ReportTurn();
  /** The job's asks of the client being answered here (front-asks.ts), from its first. */
  protected asks: FrontAsks | undefined;


  constructor(
    protected readonly ctx: RemoteContext,
    readonly session: string,
    readonly id: RequestId,
  ) {
    this.done = new Promise((resolve) => (this.resolve = resolve));
  }

  /** The discriminated state (for the backend's counts and the tests). */
  get phase(): FrontState {
    return this.current;
  }

  /** {@link CallHandle.state}. */
  get state(): CallState {
    const s = this.current;
    switch (s.kind) {
      case 'reserved':
      case 'submitting':
      case 'queued':
        return 'queued';
      case 'running':
        return 'running';
      case 'cancelling':
        return 'cancelling';
      case 'settled':
        return s.outcome.kind;
    }
  }

  /** The BullMQ job id, once started. */
  get jobId(): string | undefined {
    const s = this.current;
    return s.kind === 'reserved' || s.kind === 'settled' ? undefined : s.job.jobId;
  }

  /** The task whose job this is (StartOptions.taskId), once started. */
  get taskId(): string | undefined {
    const s = this.current;
    return s.kind === 'reserved' || s.kind === 'settled' ? undefined : s.job.options.taskId;
  }

  /**
   * The host's open asks the probe found that this call has not seen (their
   * message was missed: the subscriber was reconnecting): each is read from
   * the job's hash, verified as the channel's messages are, and taken as if
   * it had come now. One more round trip, only when there is such an ask.
   */
  protected async recoverAsks(jobId: string, open: readonly string[] | undefined): Promise<void> {
    const unseen = open?.filter((a) => !this.asks?.seen(a)) ?? [];
    if (unseen.length === 0) return;
    const texts = await this.ctx.states.openAsks(jobId, unseen);
    texts.forEach((text, i) => {
      const message = text === null ? undefined : parseFrontMessage(text, this.ctx.clusterKey);
      if (message?.t === 'q' && message.j === jobId && message.a === unseen[i] && this.jobId === jobId) this.receive(message);
    });
  }

  /** submitting → queued. */
  protected added(job: Submission): void {
    if (this.current.kind === 'submitting' && this.current.job === job) this.current = { kind: 'queued', job };
  }

  /** submitting → settled{failed}: no cancel was asked, so the error is owed. */
  protected submitFailed(job: Submission, why: string): void {
    if (this.current.kind !== 'submitting' || this.current.job !== job) return;
    this.settle({ kind: 'failed', code: 'rejected', message: `Redis at ${this.ctx.redisDisplay} failed while queuing the call: ${why}` });
  }

  /** The host won running → responding in Redis: this outcome is the answer, whatever the client sent since. */
  protected delivered(outcome: JobOutcome): void {
    const s = this.current;
    if (s.kind === 'settled' || s.kind === 'reserved') return;
    if (s.kind === 'cancelling') this.ctx.counters.lateCancelsIgnored++; // completion won the race in Redis
    this.settle(outcome);
  }

  /** queued|running → failed (Redis lost it, its host is gone); a call being cancelled ends cancelled instead. */
  protected fail(message: string): void {
    const s = this.current;
    if (s.kind === 'cancelling') this.settle({ kind: 'cancelled', from: s.from, hardKilled: false });
    else this.settle({ kind: 'failed', code: 'crash', message });
  }

  /**
   * The job moved to another front end (a 2026 retry adopted it there): this
   * call ends without a cancel and without retiring the job, and counts
   * nothing; no request of this front end waits for it (it was parked).
   */
  protected release(): void {
    const s = this.current;
    if (s.kind === 'settled' || s.kind === 'reserved') return;
    const outcome: JobOutcome = { kind: 'cancelled', from: 'running', hardKilled: false };
    this.current = { kind: 'settled', outcome };
    this.asks?.abortAll('the call moved to another front end');
    this.ctx.released(this, s.job.jobId);
    this.turn.then(() => this.resolve(outcome));
  }

  protected settle(outcome: JobOutcome): Promise<JobOutcome> {
    const s = this.current;
    if (s.kind === 'settled') return this.done;
    this.current = { kind: 'settled', outcome };
    this.asks?.abortAll('the call ended');
    countSettled(this.ctx.counters, outcome);
    const job = s.kind === 'reserved' ? undefined : s.job;
    this.ctx.settled(this, job?.jobId, job?.inRedis);
    // A report handed on in this turn must leave before the response (typescript-sdk#2580).
    this.turn.then(() => this.resolve(outcome));
    return this.done;
  }
}
