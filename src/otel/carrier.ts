/**
 * W3C trace context in a plain string map: an MCP request's `params._meta`
 * (SEP-414: `traceparent`, `tracestate`, `baggage`, un-prefixed) and the
 * signed job a front end hands a worker host. Whatever propagator the
 * application registered (src/otel/sdk.ts registers W3C trace context and
 * baggage) does the reading and writing.
 */
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import { liveTracer } from './tracer.js';

/** The `_meta` keys SEP-414 reserves. */
export const TRACE_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/** A carrier: at most the three reserved keys, each a string. */
export type TraceCarrier = Partial<Record<(typeof TRACE_KEYS)[number], string>>;

/** The trace keys of `meta` (a request's `_meta`, or a 2026 envelope), or undefined if it carries no `traceparent`. */
export function carrierOf(...metas: unknown[]): TraceCarrier | undefined {
  let carrier: TraceCarrier | undefined;
  for (const meta of metas) {
    if (meta === null || typeof meta !== 'object') continue;
    for (const key of TRACE_KEYS) {
      const value = (meta as Record<string, unknown>)[key];
      if (typeof value === 'string' && (carrier ??= {})[key] === undefined) carrier[key] = value;
    }
  }
  return carrier?.traceparent !== undefined ? carrier : undefined;
}

/** The remote parent (and baggage) a carrier names; ROOT_CONTEXT's when it names none valid. */
export function extractCarrier(carrier: TraceCarrier | undefined, base: Context = ROOT_CONTEXT): Context {
  return carrier ? propagation.extract(base, carrier) : base;
}

/** The carrier for `ctx` (the active context by default), or undefined when it holds no valid span. */
export function injectCarrier(ctx: Context = context.active()): TraceCarrier | undefined {
  if (!trace.getSpanContext(ctx)) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent !== undefined ? carrier : undefined;
}

/** Reads a carrier that came over the wire (from Redis): only string values of the reserved keys. */
export function parseCarrier(value: unknown): TraceCarrier | undefined {
  return carrierOf(value);
}

/** The active context's carrier while an SDK is registered (what a signed job carries to its host); undefined otherwise. */
export function activeCarrier(): TraceCarrier | undefined {
  if (liveTracer() === undefined) return undefined;
  // With OTEL_PROPAGATORS=none the propagator writes nothing; the job still carries its trace to its host.
  const traceparent = activeTraceparent();
  return injectCarrier() ?? (traceparent !== undefined ? { traceparent } : undefined);
}

/** The context a carrier of this server's own (a signed job) names: by the registered propagator, or read directly when it reads none. */
export function extractOwnCarrier(carrier: TraceCarrier | undefined): Context {
  const extracted = extractCarrier(carrier);
  if (trace.getSpanContext(extracted) !== undefined) return extracted;
  const spanContext = spanContextOf(carrier?.traceparent);
  return spanContext ? trace.setSpanContext(extracted, spanContext) : extracted;
}

/**
 * A span context as a W3C `traceparent` string, written here rather than by
 * the registered propagator: what this server keeps for itself (a parked
 * call's or a task's first span, in memory or in Redis) must survive
 * `OTEL_PROPAGATORS=none`, which only governs what crosses the wire to clients.
 */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0')}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a {@link traceparentOf} string names (remote: it may have been made by another process), or undefined. */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  const m = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return undefined;
  const spanContext: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** The active span's {@link traceparentOf} string while an SDK is registered (what a task or a parked call keeps); undefined otherwise. */
export function activeTraceparent(): string | undefined {
  if (liveTracer() === undefined) return undefined;
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? traceparentOf(spanContext) : undefined;
}
