/**
 * W3C trace context in a plain string map: an MCP request's `params._meta`
 * (SEP-414: `traceparent`, `tracestate`, `baggage`, un-prefixed) and the
 * signed job a front end hands a worker host. Whatever propagator the
 * application registered (src/otel/sdk.ts registers W3C trace context and
 * baggage) does the reading and writing.
 */
import { context, propagation, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
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
  return liveTracer() === undefined ? undefined : injectCarrier();
}
