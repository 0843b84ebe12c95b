/**
 * One job's spans on the local pool, made on the main thread: the wait for a
 * slot (`pool.wait`), the run on its worker thread (`pool.run {tool}`, with
 * the thread id and one child span per stage, from the timings the worker
 * sent back with its outcome: workers run no OpenTelemetry SDK), and its
 * cancellation (`cancel`: who asked, which side won the compare-exchange,
 * from cancel to the work stopped, and whether the thread had to be
 * terminated). Requests the job makes of the client get CLIENT spans, and
 * their `_meta` the trace context. A job gets one only while an SDK is
 * registered (see {@link JobTrace.begin}).
 */
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { CancelResult, ClientRequestHandler, JobOutcome } from '../backend/backend.js';
import type { StageMarks } from '../pool/protocol.js';
import { ATTR } from './attributes.js';
import type { CancelSource } from '../state/cancel-source.js';
import { injectCarrier } from './carrier.js';
import { liveTracer } from './tracer.js';
import { traceJobsWith, type JobTraceHooks } from '../executor/job-tracing.js';

/** Wall-clock milliseconds with sub-millisecond precision, comparable with a worker thread's (see workers/runtime.ts). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** One job's spans (see the module comment); made by {@link JobTrace.begin} only while an SDK is registered. */
export class JobTrace implements JobTraceHooks {
  private readonly startedAt = epochMs();
  private run: Span | undefined;
  private runCtx: Context | undefined;
  private cancel: Span | undefined;
  private waitEnded = false;
  private cancelSeen = false;
  /** When the worker returned: the run's end (its outcome settles a little later, after its reports). */
  private backAt: number | undefined;

  private constructor(
    private readonly tracer: Tracer,
    /** The call's context (its server span), captured when the job started. */
    private readonly parent: Context,
    private readonly tool: string,
  ) {}

  /** A trace for a job starting now under the active context; undefined (and nothing allocated) while no SDK is registered. */
  static begin(tool: string): JobTrace | undefined {
    const tracer = liveTracer();
    return tracer === undefined ? undefined : new JobTrace(tracer, context.active(), tool);
  }

  /** The job left the wait for a slot and runs on a worker thread. */
  running(): void {
    const now = epochMs();
    this.endWait(now, undefined);
    this.run = this.tracer.startSpan(
      `pool.run ${this.tool}`,
      { kind: SpanKind.INTERNAL, startTime: now, attributes: { [ATTR.toolName]: this.tool } },
      this.parent,
    );
    this.runCtx = trace.setSpan(this.parent, this.run);
  }

  /** A cancel asked by `source` (or the deadline) was decided by the state word's compare-exchange. */
  cancelDecided(source: CancelSource, result: CancelResult): void {
    if (this.cancelSeen) return; // the first cancel is the one that decided; later ones find it settled
    this.cancelSeen = true;
    const won = result === 'cancelled-queued' || result === 'cancelled-running';
    this.cancel = this.tracer.startSpan(
      'cancel',
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.cancelSource]: source,
          [ATTR.cancelWinner]: won ? 'cancel' : 'completion',
          ...(won && { [ATTR.cancelFrom]: result === 'cancelled-queued' ? 'queued' : 'running' }),
        },
      },
      this.parent,
    );
    this.run?.addEvent('cancel', { [ATTR.cancelSource]: source, [ATTR.cancelWinner]: won ? 'cancel' : 'completion' });
    // Queued, or lost: nothing runs on for it. Running: it ends when the worker is back ({@link workerBack}).
    if (result !== 'cancelled-running') this.endCancel(undefined);
  }

  /** The main thread signalled one of the call's process groups: an event on the run span per kill. */
  readonly childKilled = (pid: number, signal: 'SIGTERM' | 'SIGKILL'): void => {
    this.run?.addEvent('child_kill', { [ATTR.childPid]: pid, [ATTR.childSignal]: signal });
  };

  /** The grace period expired: the worker thread running the stopped job is being terminated. */
  hardStop(threadId: number): void {
    this.run?.addEvent('hard_stop', { [ATTR.threadId]: threadId });
    this.cancel?.setAttribute(ATTR.hardStop, true);
  }

  /** The worker returned (or died): its stages become spans from the worker's own timings, and a winning cancel's span ends (the work has stopped). */
  workerBack(marks: StageMarks | undefined, threadId: number | undefined): void {
    const run = this.run;
    if (!run) return;
    const now = epochMs();
    const thread = marks?.thread ?? threadId;
    if (thread !== undefined) run.setAttribute(ATTR.threadId, thread);
    if (marks) {
      for (let i = 0; i < marks.stages.length; i++) {
        const end = i + 1 < marks.at.length ? marks.at[i + 1]! : marks.end;
        this.tracer
          .startSpan(
            `stage ${marks.stages[i]}`,
            { startTime: marks.at[i]!, attributes: { [ATTR.stage]: marks.stages[i]!, [ATTR.threadId]: marks.thread } },
            this.runCtx,
          )
          .end(end);
      }
      if (marks.stoppedAt !== undefined) run.addEvent('stop noticed', { [ATTR.stage]: marks.stoppedAt }, marks.end);
    }
    this.backAt = now;
    this.endCancel(now);
  }

  /** The worker's measure of the call's worst checkpoint gap, on the run span. */
  checkpointGap(gap: { readonly ms: number; readonly stage: string; readonly budgetMs: number }): void {
    this.run?.setAttributes({
      [ATTR.checkpointGapMs]: gap.ms,
      [ATTR.checkpointGapStage]: gap.stage,
      [ATTR.cancelWithinMs]: gap.budgetMs,
    });
  }

  /** The outcome settled: everything still open ends, and the run span says how. */
  settled(outcome: JobOutcome): void {
    const now = epochMs();
    const ended =
      outcome.kind === 'cancelled'
        ? { [ATTR.outcome]: 'cancelled', [ATTR.hardStop]: outcome.hardKilled }
        : outcome.kind === 'timedOut'
          ? { [ATTR.outcome]: 'timedOut', [ATTR.hardStop]: outcome.hardKilled }
          : { [ATTR.outcome]: outcome.kind };
    this.endWait(now, outcome);
    if (this.run) {
      this.run.setAttributes(ended);
      if (outcome.kind === 'failed') this.run.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
      this.run.end(this.backAt ?? now);
      this.run = undefined;
    }
    this.endCancel(now);
  }

  /** Wraps the job's requests to the client: each a CLIENT span under the run, its trace context in the request's `_meta`. */
  clientRequests(handler: ClientRequestHandler): ClientRequestHandler {
    return (method, params, signal, relayId) => {
      const parent = this.runCtx ?? this.parent;
      const span = this.tracer.startSpan(
        method,
        { kind: SpanKind.CLIENT, attributes: { [ATTR.mcpMethod]: method } },
        parent,
      );
      const carrier = injectCarrier(trace.setSpan(parent, span));
      const meta = (params._meta ?? {}) as Record<string, unknown>;
      const sent = carrier ? { ...params, _meta: { ...meta, ...carrier } } : params;
      return handler(method, sent, signal, relayId).then(
        (result) => {
          span.end();
          return result;
        },
        (error: unknown) => {
          span.setAttribute(
            ATTR.errorType,
            typeof (error as { code?: unknown })?.code === 'number'
              ? String((error as { code: number }).code)
              : '_OTHER',
          );
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: error instanceof Error ? error.message : String(error),
          });
          span.end();
          throw error;
        },
      );
    };
  }

  private endWait(now: number, outcome: JobOutcome | undefined): void {
    if (this.waitEnded) return;
    this.waitEnded = true;
    const wait = this.tracer.startSpan(
      'pool.wait',
      { startTime: this.startedAt, attributes: { [ATTR.toolName]: this.tool } },
      this.parent,
    );
    if (outcome) wait.setAttribute(ATTR.outcome, outcome.kind);
    wait.end(now);
  }

  private endCancel(at: number | undefined): void {
    this.cancel?.end(at);
    this.cancel = undefined;
  }
}

// The executor makes its jobs' spans through this (it imports nothing of otel/).
traceJobsWith((tool) => JobTrace.begin(tool));
