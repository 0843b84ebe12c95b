/**
 * One tools/call at a front end whose job runs on a worker host. Its whole
 * life is one discriminated FrontState, whose states and transitions (with
 * their diagram) are declared in call-states.ts; every count is derived from
 * it, and each arrow there is one named method here.
 *
 * The one rule: only the host's outcome, published when it won running →
 * responding in Redis, can beat a cancel that was asked. Once a call is
 * `cancelling`, every other path (Redis stalls, restarts, lost state, lost
 * hosts) ends in `settled{cancelled}`, so nothing is sent by construction.
 */
import type { CallHandle, CallState, CancelResult, JobOutcome, StartOptions } from '../../backend/backend.js';
import { checkStart, countSettled, ReportTurn } from '../../backend/calls.js';
import type { InFlightEntry, RequestId } from '../../wire/registry.js';
import { signed } from '../config/cluster-key.js';
import { FrontAsks, type OpenAsk } from './front-asks.js';
import { parseFrontMessage, type FrontMessage, type RemoteJobData } from '../messages.js';
import { taskJobId } from '../keys.js';
import type { RemoteContext } from './remote-context.js';
import { callStateOf, JobStatus, type FrontState, type Submission } from '../lua/call-states.js';
import { FrontCallState } from './front-state.js';
import { logger } from '../../log/logger.js';
import { activeCarrier } from '../../otel/carrier.js';
import { callContext, traceDecidedCancel } from '../../otel/decided-cancel.js';
import type { Context } from '@opentelemetry/api';
import type { CancelSource } from '../../state/cancel-source.js';

export type { FrontState } from '../lua/call-states.js';

let sequence = 0;
/** How long a job's state must be seen without its BullMQ job before the call fails (two looks, not one). */
export const JOBLESS_GRACE_MS = 1000;

export class RemoteCall implements CallHandle, InFlightEntry {
  readonly direction = 'inbound' as const;
  /** Settles with the outcome (never rejects). */
  readonly done: Promise<JobOutcome>;
  private resolve!: (outcome: JobOutcome) => void;
  /** Its state, moved only along the front end's table (./front-state.ts). */
  private readonly fsm = new FrontCallState();
  private readonly turn = new ReportTurn();
  /** The job's asks of the client being answered here (front-asks.ts), from its first. */
  private asks: FrontAsks | undefined;

  constructor(
    private readonly ctx: RemoteContext,
    readonly session: string,
    readonly id: RequestId,
  ) {
    this.done = new Promise((resolve) => (this.resolve = resolve));
  }

  /** The discriminated state (for the backend's counts and the tests). */
  get phase(): FrontState {
    return this.fsm.state;
  }

  private get current(): FrontState {
    return this.fsm.state;
  }

  /** {@link CallHandle.state}. */
  get state(): CallState {
    return callStateOf(this.current);
  }

  /** The BullMQ job id, once started. */
  get jobId(): string | undefined {
    const s = this.current;
    return s.kind === 'reserved' || s.kind === 'settled' ? undefined : s.job.jobId;
  }

  /** Its lane (StartOptions.turn, the authorized caller over HTTP), once started. */
  get lane(): string | undefined {
    const s = this.current;
    return s.kind === 'reserved' || s.kind === 'settled' ? undefined : s.job.options.turn;
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
  private async recoverAsks(jobId: string, open: readonly string[] | undefined): Promise<void> {
    const unseen = open?.filter((a) => !this.asks?.seen(a)) ?? [];
    if (unseen.length === 0) return;
    const texts = await this.ctx.states.openAsks(jobId, unseen);
    texts.forEach((text, i) => {
      const message = text === null ? undefined : parseFrontMessage(text, this.ctx.clusterKey);
      if (message?.t === 'q' && message.j === jobId && message.a === unseen[i] && this.jobId === jobId)
        this.receive(message);
    });
  }

  /** submitting → queued. */
  private added(job: Submission): void {
    this.fsm.added(job);
  }

  /** submitting → settled{failed}: no cancel was asked, so the error is owed. */
  private submitFailed(job: Submission, why: string): void {
    if (this.current.kind !== 'submitting' || this.current.job !== job) return;
    void this.settle({
      kind: 'failed',
      code: 'rejected',
      message: `Redis at ${this.ctx.redisDisplay} failed while queuing the call: ${why}`,
    });
  }

  /** The host won running → responding in Redis: this outcome is the answer, whatever the client sent since. */
  private delivered(outcome: JobOutcome): void {
    const s = this.current;
    if (s.kind === 'settled' || s.kind === 'reserved') return;
    if (s.kind === 'cancelling') this.ctx.counters.lateCancelsIgnored++; // completion won the race in Redis
    void this.settle(outcome);
  }

  /** queued|running → failed (Redis lost it, its host is gone); a call being cancelled ends cancelled instead. */
  private fail(message: string): void {
    const s = this.current;
    if (s.kind === 'cancelling') void this.settle({ kind: 'cancelled', from: s.from, hardKilled: false });
    else void this.settle({ kind: 'failed', code: 'crash', message });
  }

  /**
   * The job moved to another front end (a 2026 retry adopted it there): this
   * call ends without a cancel and without retiring the job, and counts
   * nothing; no request of this front end waits for it (it was parked).
   */
  private release(): void {
    if (this.current.kind === 'reserved') return;
    const outcome: JobOutcome = { kind: 'cancelled', from: 'running', hardKilled: false };
    const s = this.fsm.settle(outcome);
    if (!s || s.kind === 'reserved') return;
    this.asks?.abortAll('the call moved to another front end');
    this.ctx.released(this, s.job.jobId);
    this.turn.then(() => this.resolve(outcome));
  }

  private settle(outcome: JobOutcome): Promise<JobOutcome> {
    const s = this.fsm.settle(outcome);
    if (!s) return this.done;
    this.asks?.abortAll('the call ended');
    countSettled(this.ctx.counters, outcome);
    const job = s.kind === 'reserved' ? undefined : s.job;
    this.ctx.settled(this, job?.jobId, job?.inRedis);
    // A report handed on in this turn must leave before the response (typescript-sdk#2580).
    this.turn.then(() => this.resolve(outcome));
    return this.done;
  }
  /** When the sweep first found the job's state waiting on a BullMQ job that is gone. */
  private joblessSince: number | undefined;
  /** Set by {@link adopt}: the job this reservation takes over. */
  private adoption: { readonly jobId: string; readonly asks: readonly OpenAsk[] } | undefined;
  /** The call's trace context while tracing, for its cancel's span (src/otel/decided-cancel.ts). */
  private traceCtx: Context | undefined;
  /** {@link InFlightEntry.stop}: asks for a cancel; true unless the call had already settled. */
  stop(reason?: string, source: CancelSource = 'notification'): boolean {
    if (this.current.kind === 'settled') return false;
    void this.requestCancel(reason, source);
    return true;
  }

  /**
   * Before start: this reservation takes over job `jobId`, parked by another
   * front end and now owned by this one in Redis (parking.ts), with the
   * host's open asks. False if the reservation was cancelled meanwhile (the
   * job, ours now and wanted by nobody, is stopped).
   */
  adopt(jobId: string, asks: readonly OpenAsk[]): boolean {
    if (this.current.kind !== 'reserved') {
      this.ctx.states.retire(jobId).catch(() => undefined);
      return false;
    }
    this.adoption = { jobId, asks };
    return true;
  }

  /** The job's asks of the client being answered here, in the order they came. */
  openAsks(): readonly OpenAsk[] {
    return this.asks?.list() ?? [];
  }

  /** reserved → submitting (or settled{failed} for a call that cannot be queued); an adopted job: reserved → running. */
  start(options: StartOptions): Promise<JobOutcome> {
    if (this.current.kind !== 'reserved') return this.done;
    this.traceCtx = callContext();
    if (this.adoption) return this.startAdopted(this.adoption, options);
    const checked = checkStart(this.ctx.tools, options);
    if ('kind' in checked) return this.settle(checked);
    const refusal = this.ctx.refusal(options);
    if (refusal) return this.settle({ kind: 'failed', ...refusal });
    // A task's job is named after its task: any front end that reads the task can find, and cancel, its job.
    const jobId = options.taskId === undefined ? `${this.ctx.frontId}-${++sequence}` : taskJobId(options.taskId);
    const data: RemoteJobData = signed(this.ctx.clusterKey, 'job', jobId, {
      front: this.ctx.frontId,
      tool: checked.tool.name,
      args: checked.args,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      progress: options.onProgress !== undefined,
      ...(options.onLog && { logLevel: options.logLevel ?? 'debug' }),
      liveLogs: options.liveLogs ?? false,
      ...traceField(),
    });
    const queuing = (async () => {
      await this.ctx.states.create(jobId, this.ctx.frontId, options.taskId);
      await this.ctx.enqueue(jobId, data);
    })();
    const job: Submission = {
      jobId,
      options,
      inRedis: queuing.then(
        () => true,
        () => false,
      ),
    };
    this.fsm.submit(job);
    this.ctx.submitted(jobId, this);
    const limit = this.ctx.redisTimeoutMs;
    const armed = performance.now();
    let rearmed = false;
    const expired = (): void => {
      // Fired late by half the limit or more: this process was paused or starved (SIGSTOP, a blocked loop), not
      // Redis slow, and the replies that came meanwhile are read only after the timers run. They get one fresh limit.
      if (!rearmed && performance.now() - armed >= limit * 1.5) {
        rearmed = true;
        timer = setTimeout(expired, limit);
        return;
      }
      this.submitFailed(job, `no answer within ${limit} ms`);
    };
    let timer = setTimeout(expired, limit);
    queuing.then(
      () => {
        clearTimeout(timer);
        this.added(job);
      },
      (error: unknown) => {
        clearTimeout(timer);
        this.submitFailed(job, error instanceof Error ? error.message : String(error));
      },
    );
    return this.done;
  }

  /** {@link CallHandle.abandon}: reserved → settled{failed}. */
  abandon(): void {
    if (this.current.kind === 'reserved')
      void this.settle({ kind: 'failed', code: 'rejected', message: 'request rejected before it started' });
  }

  /**
   * The client's cancel. Resolves with the decision: before the job is in
   * Redis the front end decides at once (cancelled: the job, if it lands, is
   * cancelled in Redis after); once it is, Redis decides (queued|running →
   * cancelled in one script), or, should Redis not answer in time, the front
   * end does: cancelled. Never rejects.
   */
  requestCancel(reason?: string, source: CancelSource = 'notification'): Promise<CancelResult> {
    const decision = this.decideCancel();
    const traced = this.traceCtx;
    this.traceCtx = undefined; // one decision, one span: a repeated cancel gets the same decision
    if (traced) traceDecidedCancel(traced, source, decision);
    const log = logger();
    if (log.debugOn) {
      const fields = { request_id: String(this.id), cancel_source: source, reason };
      void decision.then((result) => log.debug(`cancel: ${result}`, fields));
    }
    return decision;
  }

  private decideCancel(): Promise<CancelResult> {
    const s = this.current;
    switch (s.kind) {
      case 'reserved':
        void this.settle({ kind: 'cancelled', from: 'queued', hardKilled: false });
        return Promise.resolve('cancelled-queued');
      case 'submitting':
      case 'queued':
      case 'running': {
        const from = s.kind === 'running' ? 'running' : 'queued';
        const decision = s.kind === 'submitting' ? this.afterSubmit(s.job) : this.askRedis(s.job, from);
        this.fsm.cancelling(decision);
        this.asks?.abortAll('the call was cancelled'); // nothing more is asked of the client, whoever wins
        return decision;
      }
      case 'cancelling':
        return s.decision; // one cancel, one decision, counted once
      case 'settled':
        this.ctx.counters.lateCancelsIgnored++;
        return Promise.resolve('too-late');
    }
  }

  /** An adopted job runs on its host already: its open asks are handed to the call's handler as if they came now. */
  private startAdopted(
    adoption: { readonly jobId: string; readonly asks: readonly OpenAsk[] },
    options: StartOptions,
  ): Promise<JobOutcome> {
    const job: Submission = { jobId: adoption.jobId, options, inRedis: Promise.resolve(true) };
    this.fsm.adopted(job);
    this.ctx.submitted(job.jobId, this);
    for (const ask of adoption.asks) this.asksOf(job).ask(ask.a, ask.method, ask.params);
    return this.done;
  }

  /** A message from the host on this front end's channel. */
  receive(message: FrontMessage): void {
    const s = this.current;
    if (s.kind === 'reserved' || s.kind === 'settled') return;
    switch (message.t) {
      case 'o':
        return this.delivered(message.o);
      case 'r':
        this.fsm.taken(message.h);
        return;
      case 's':
        return;
      case 'x':
        return this.asksOf(s.job).withdraw(message.a); // kept even before its ask came: a probe's late read never asks it
      case 'm': {
        // Believed once Redis says so: then the job is another front end's, and this call lets go without a cancel.
        const jobId = s.job.jobId;
        return void this.ctx.states.owner(jobId).then(
          (owner) => owner !== undefined && owner !== this.ctx.frontId && this.release(),
          () => undefined,
        );
      }
      case 'q': {
        if (s.kind === 'cancelling') return; // being stopped: the host's stop rejects the ask there
        this.fsm.taken(); // an ask means a host runs the job (a running call stays as it is)
        return this.asksOf(s.job).ask(message.a, message.q.method, message.q.params);
      }
    }
    this.ctx.counters.reportsReceived++;
    if (s.kind === 'cancelling') {
      this.ctx.counters.reportsDiscarded++;
      return;
    }
    // A report means a host runs the job, whether or not its take message came first.
    this.fsm.taken();
    this.turn.mark();
    if (message.t === 'p') s.job.options.onProgress?.(message.r);
    else s.job.options.onLog?.(message.e);
  }

  /** The job's asks here, from the first message about one. */
  private asksOf(job: Submission): FrontAsks {
    return (this.asks ??= new FrontAsks(job.options.onClientRequest, (a, reply) =>
      this.ctx.reply(job.jobId, a, reply),
    ));
  }

  /**
   * The sweep's look at the job in Redis: an outcome whose message was lost,
   * a state that is gone, a host that is gone (`lostHostTimeoutMs`).
   */
  async check(lostHostTimeoutMs: number): Promise<void> {
    const s = this.current;
    if (s.kind !== 'queued' && s.kind !== 'running') return;
    const probe = await this.ctx.states.probe(s.job.jobId);
    const now = this.current;
    if (now.kind !== 'queued' && now.kind !== 'running') return;
    if (probe.state !== 'jobless') this.joblessSince = undefined;
    switch (probe.state) {
      case JobStatus.responding: {
        const message = parseFrontMessage(probe.message, this.ctx.clusterKey);
        if (message?.t === 'o') return void this.delivered(message.o);
        // A stranger's write, not the host's answer: dropped. The host's own respond still lands over it (RESPOND in
        // lua.ts); meanwhile the call waits on that host's liveness, as a running call does.
        const since = probe.hostAlive
          ? undefined
          : now.kind === 'running' && now.hostlessSince !== undefined
            ? now.hostlessSince
            : Date.now();
        this.fsm.seen(probe.host, since);
        if (since === undefined || Date.now() - since < lostHostTimeoutMs) return;
        return void this.fail(
          `worker host ${probe.host || '(none took it)'} is gone and the only outcome in Redis does not verify against this front end's cluster key (a write by someone without it, or the worker hosts use another --cluster-key-file); the call may or may not have run`,
        );
      }
      case 'gone':
        return void this.fail(
          "the job's state in Redis is gone (was Redis restarted without persistence, or flushed?); the call may or may not have run",
        );
      case JobStatus.failed:
        return void this.fail('the worker host running this call was lost and no other host took it over');
      case 'jobless': {
        // Seen again after a while, not once in passing: no host will ever take or answer it.
        this.joblessSince ??= Date.now();
        if (Date.now() - this.joblessSince < JOBLESS_GRACE_MS) return;
        if (await this.ctx.states.failIfJobless(now.job.jobId))
          this.fail(
            "the call's job is gone from the queue in Redis (a write lost when Redis failed over?); the call may or may not have run",
          );
        return;
      }
      case JobStatus.refused:
        return void this.fail(
          "a worker host refused this call: its job did not verify against the host's cluster key (front ends and worker hosts need the same --cluster-key-file); it was not run",
        );
      case JobStatus.cancelled:
        // A task's job: tasks/cancel through another front end won in Redis, and that front end settled the task.
        if (now.job.options.taskId !== undefined)
          return void this.settle({ kind: 'cancelled', from: now.kind, hardKilled: false });
        return void this.fail(
          `the worker hosts cancelled this call: this front end's liveness key in Redis expired (no refresh reached Redis for that long: Redis or this process stalled)`,
        );
      case 'hostless': {
        const since = now.kind === 'running' && now.hostlessSince !== undefined ? now.hostlessSince : Date.now();
        this.fsm.seen(probe.host, since);
        if (Date.now() - since < lostHostTimeoutMs) return this.recoverAsks(now.job.jobId, probe.asks);
        if (await this.ctx.states.failIfLost(now.job.jobId, probe.host)) {
          this.fail(
            `worker host ${probe.host} stopped (crashed?) while running this call, and no other host took it over within ${Math.round(lostHostTimeoutMs / 1000)} s`,
          );
        }
        return;
      }
      case JobStatus.running:
        this.fsm.seen(probe.host);
        return this.recoverAsks(now.job.jobId, probe.asks);
      case JobStatus.queued:
        return;
    }
  }

  /** No worker host has been alive for too long: queued → failed, if no host took it meanwhile (a CAS in Redis). */
  async noHost(message: string): Promise<void> {
    const s = this.current;
    if (s.kind !== 'queued') return;
    if (await this.ctx.states.failIfNoHost(s.job.jobId)) {
      this.ctx.dequeue(s.job.jobId);
      if (this.current.kind === 'queued') void this.settle({ kind: 'failed', code: 'rejected', message });
    }
  }

  /**
   * A cancel that came while the job was being queued: Redis decides once
   * the job is there; if queuing fails or takes too long, the front end
   * decides (cancelled), and a job that lands later is retired in Redis.
   */
  private async afterSubmit(job: Submission): Promise<CancelResult> {
    let timer: NodeJS.Timeout | undefined;
    const inRedis = await Promise.race([
      job.inRedis,
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.ctx.redisTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (inRedis) return this.askRedis(job, 'queued');
    const s = this.current;
    if (s.kind === 'settled') return s.outcome.kind === 'cancelled' ? 'cancelled-queued' : 'too-late';
    void this.settle({ kind: 'cancelled', from: 'queued', hardKilled: false });
    return 'cancelled-queued';
  }

  /** The cancel's round trip: Redis's decision, or the front end's if Redis does not answer in time. */
  private async askRedis(job: Submission, from: 'queued' | 'running'): Promise<CancelResult> {
    let timer: NodeJS.Timeout | undefined;
    const found = await Promise.race([
      this.ctx.states.requestCancel(job.jobId).catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), this.ctx.redisTimeoutMs))),
    ]);
    clearTimeout(timer);
    const s = this.current;
    if (s.kind === 'settled')
      return s.outcome.kind === 'cancelled'
        ? s.outcome.from === 'queued'
          ? 'cancelled-queued'
          : 'cancelled-running'
        : 'too-late';
    if (found?.found === JobStatus.responding) {
      const message = parseFrontMessage(found.message, this.ctx.clusterKey);
      if (message?.t === 'o') {
        this.delivered(message.o);
        return 'too-late';
      }
    }
    // Won in Redis, or Redis lost the job, or did not answer: nothing of this call is sent, ever.
    const wonFrom =
      found?.found === JobStatus.queued ? 'queued' : found?.found === JobStatus.running ? 'running' : from;
    if (wonFrom === 'queued') this.ctx.dequeue(job.jobId);
    else this.ctx.stopping(job.jobId, found?.found === JobStatus.running ? found.host : undefined);
    void this.settle({ kind: 'cancelled', from: wonFrom, hardKilled: false });
    return wonFrom === 'queued' ? 'cancelled-queued' : 'cancelled-running';
  }
}

/** The signed job's trace context, while tracing (signed with the rest: a host trusts it as much as the job). */
function traceField(): { tc?: Readonly<Record<string, string>> } {
  const tc = activeCarrier();
  return tc ? { tc } : {};
}
