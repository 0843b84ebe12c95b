/**
 * A worker host's span for one job (`host.job {tool}`, kind CONSUMER): a
 * child of the front end's call, whose trace context came inside the signed
 * job. The local run starts inside it, so the job's pool spans (wait, run,
 * stages, cancel) on this host join the same trace.
 */
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { JobOutcome } from '../backend/backend.js';
import { ATTR } from './attributes.js';
import { extractOwnCarrier, parseCarrier } from './carrier.js';
import { liveTracer } from './tracer.js';

/** One job's span on a worker host (see the module comment). */
export class HostJobSpan {
  private constructor(
    private readonly span: Span,
    private readonly ctx: Context,
  ) {}

  /** The span of a job taken now; undefined (nothing made) while no SDK is registered. */
  static begin(carrier: unknown, tool: string, jobId: string, hostId: string): HostJobSpan | undefined {
    const tracer = liveTracer();
    if (tracer === undefined) return undefined;
    const parent = extractOwnCarrier(parseCarrier(carrier));
    const span = tracer.startSpan(
      `host.job ${tool}`,
      { kind: SpanKind.CONSUMER, attributes: { [ATTR.toolName]: tool, [ATTR.jobId]: jobId, [ATTR.hostId]: hostId } },
      parent,
    );
    return new HostJobSpan(span, trace.setSpan(parent, span));
  }

  /** Runs `fn` (the local start) inside the span. */
  within<T>(fn: () => T): T {
    return context.with(this.ctx, fn);
  }

  /** The job is done here: its outcome, and for one that completed whether its answer won in Redis. */
  end(outcome: JobOutcome, answered?: boolean): void {
    this.span.setAttribute(ATTR.outcome, outcome.kind);
    if (outcome.kind === 'cancelled' || outcome.kind === 'timedOut')
      this.span.setAttribute(ATTR.hardStop, outcome.hardKilled);
    if (answered !== undefined) this.span.setAttribute('mcp_cancel_pool.answered', answered);
    if (outcome.kind === 'failed') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    this.span.end();
  }
}
