/**
 * The MCP server span of every request, per the semantic conventions
 * (./attributes.ts): `{mcp.method.name} {target}`, kind SERVER, parented on
 * the request's `_meta` trace context (SEP-414) and linked to the ambient
 * one, if any. The handler runs inside it, so whatever the call starts (its
 * job on the pool, a task, a job on another host) joins the trace. Also
 * records `mcp.server.operation.duration` when a MeterProvider is registered.
 *
 * A request that continues something traced before (a 2026 retry round of a
 * call, a `tasks/*` request naming a task) joins that trace ({@link JoinOf}):
 * without a `traceparent` of its own its span is parented on the earlier
 * span; with one that names another trace it keeps the client's parent and
 * gets a Link to the earlier span (docs/operations.md, "Rounds and tasks").
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type Link,
  type Meter,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { ServerContext } from '@modelcontextprotocol/server';
import { ATTR, DURATION_BUCKETS } from './attributes.js';
import { carrierOf, extractCarrier, type TraceCarrier } from './carrier.js';
import { liveMeter, liveTracer } from './tracer.js';
import { logger } from '../log/logger.js';

/** A request handler as the SDK stores it. */
type Handler<Q, R> = (request: Q, ctx: ServerContext) => Promise<R>;

/** What the span reads of a request. */
export interface RequestLike {
  readonly params?: { readonly [key: string]: unknown };
}

/** How a handler's rejection that means "cancelled, nothing is sent" is recognised (ToolCalls' CancelledCall). */
export type IsCancelled = (error: unknown) => boolean;

/** Why a server span joins an earlier one: `first_round` (a retry round of a 2026 call), `task` (a tasks/* request). */
export type JoinReason = 'first_round' | 'task';

/** The earlier span a request continues, and why. */
export interface Joined {
  readonly spanContext: SpanContext;
  readonly reason: JoinReason;
}

/**
 * The earlier span a request continues, if any: asked only while an SDK is
 * registered, before the request's span starts (a shared store may answer
 * asynchronously: the span then starts once it has).
 */
export type JoinOf = (request: RequestLike, ctx: ServerContext) => Joined | undefined | Promise<Joined | undefined>;

/** The link attribute that says why a span links an earlier one (the {@link JoinReason}). */
export const JOIN_LINK_ATTRIBUTE = 'mcp_cancel_pool.link.reason';

/**
 * Wraps a request handler. While no SDK is registered this costs one global
 * look-up per request and allocates nothing (the handler is called as is).
 */
export function tracedHandler<Q extends RequestLike, R>(
  method: string,
  handler: Handler<Q, R>,
  protocolVersion: () => string | undefined,
  isCancelled: IsCancelled,
  joinOf?: JoinOf,
): Handler<Q, R> {
  return (request, ctx) => {
    const tracer = liveTracer();
    const meter = liveMeter();
    if (tracer === undefined && meter === undefined && !logger().debugOn) return handler(request, ctx);
    // In a function of its own: a closure here would make V8 allocate this function's context on every call, traced or not.
    return joinedThenTraced(tracer, meter, method, handler, request, ctx, protocolVersion, isCancelled, joinOf);
  };
}

function joinedThenTraced<Q extends RequestLike, R>(
  tracer: Tracer | undefined,
  meter: Meter | undefined,
  method: string,
  handler: Handler<Q, R>,
  request: Q,
  ctx: ServerContext,
  protocolVersion: () => string | undefined,
  isCancelled: IsCancelled,
  joinOf: JoinOf | undefined,
): Promise<R> {
  const joined = tracer !== undefined && joinOf ? joinOf(request, ctx) : undefined;
  if (joined instanceof Promise) {
    // A lookup that fails leaves the span unjoined; it never fails the request.
    return joined
      .catch(() => undefined)
      .then((j) => traced(tracer, meter, method, handler, request, ctx, protocolVersion, isCancelled, j));
  }
  return traced(tracer, meter, method, handler, request, ctx, protocolVersion, isCancelled, joined);
}

/**
 * The span's parent and links. The client's `traceparent` wins when it sends
 * one; an earlier span of the same call or task is then linked if it is in
 * another trace, and is the parent when the client sends none (so every round
 * and every tasks/* request of one call is in one trace, whatever the client
 * does).
 */
export function parentAndLinks(
  ambient: Context,
  carrier: TraceCarrier | undefined,
  joined: Joined | undefined,
): { parent: Context; links: Link[] | undefined } {
  const links: Link[] = [];
  const clientParent = carrier ? extractCarrier(carrier, ambient) : undefined;
  const clientSpan = clientParent && trace.getSpanContext(extractCarrier(carrier, ROOT_CONTEXT));
  let parent: Context;
  if (clientSpan) {
    parent = clientParent!;
    if (joined && joined.spanContext.traceId !== clientSpan.traceId)
      links.push({ context: joined.spanContext, attributes: { [JOIN_LINK_ATTRIBUTE]: joined.reason } });
  } else if (joined) {
    parent = trace.setSpanContext(clientParent ?? ambient, joined.spanContext);
  } else {
    parent = clientParent ?? ambient;
  }
  // The ambient span (a transport's own, if any) is linked whenever it is not the parent.
  const ambientSpan = trace.getSpanContext(ambient);
  if (ambientSpan && trace.getSpanContext(parent)?.spanId !== ambientSpan.spanId) links.push({ context: ambientSpan });
  return { parent, links: links.length > 0 ? links : undefined };
}

function traced<Q extends RequestLike, R>(
  tracer: Tracer | undefined,
  meter: Meter | undefined,
  method: string,
  handler: Handler<Q, R>,
  request: Q,
  ctx: ServerContext,
  protocolVersion: () => string | undefined,
  isCancelled: IsCancelled,
  joined: Joined | undefined,
): Promise<R> {
  const params: { readonly [key: string]: unknown } = request.params ?? {};
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const attributes: Attributes = { [ATTR.mcpMethod]: method, [ATTR.networkTransport]: ctx.http ? 'tcp' : 'pipe' };
  if (ctx.http) attributes[ATTR.networkProtocol] = 'http';
  const id = ctx.mcpReq.id;
  if (id !== null && id !== undefined) attributes[ATTR.requestId] = String(id);
  const version = (envelope?.['io.modelcontextprotocol/protocolVersion'] as string | undefined) ?? protocolVersion();
  if (version !== undefined) attributes[ATTR.mcpProtocolVersion] = version;
  if (ctx.sessionId !== undefined) attributes[ATTR.mcpSessionId] = ctx.sessionId;
  let target: string | undefined;
  if (method === 'tools/call' && typeof params.name === 'string') {
    target = params.name;
    attributes[ATTR.toolName] = target;
    attributes[ATTR.operationName] = 'execute_tool';
  } else if (method === 'prompts/get' && typeof params.name === 'string') {
    target = params.name;
  } else if (method === 'resources/read' && typeof params.uri === 'string') {
    attributes[ATTR.mcpResourceUri] = params.uri;
  }
  const ambient = context.active();
  const { parent, links } = parentAndLinks(ambient, carrierOf(params._meta, envelope), joined);
  const span = tracer?.startSpan(
    target === undefined ? method : `${method} ${target}`,
    { kind: SpanKind.SERVER, attributes, ...(links && { links }) },
    parent,
  );
  const inSpan: Context = span ? trace.setSpan(parent, span) : parent;
  const started = performance.now();
  const done = (ended: Attributes, message?: string) => {
    if (span) {
      span.setAttributes(ended);
      if (ended[ATTR.errorType] !== undefined)
        span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined && { message }) });
      span.end();
    }
    const seconds = (performance.now() - started) / 1000;
    if (meter) durationOf(meter).record(seconds, metricAttributes(attributes, ended));
    const log = logger();
    if (log.debugOn) {
      const ids = span?.spanContext();
      const outcome = ended[ATTR.outcome] ?? (ended[ATTR.errorType] === undefined ? 'answered' : 'failed');
      log.debug(
        `${target === undefined ? method : `${method} ${target}`}: ${String(outcome)} in ${(seconds * 1000).toFixed(1)} ms`,
        {
          request_id: attributes[ATTR.requestId] as string | undefined,
          ...(ended[ATTR.errorType] !== undefined && { error_type: String(ended[ATTR.errorType]) }),
          ...(ids && { trace_id: ids.traceId, span_id: ids.spanId }),
        },
      );
    }
  };
  let pending: Promise<R>;
  try {
    pending = context.with(inSpan, () => handler(request, ctx));
  } catch (error) {
    pending = Promise.reject(error);
  }
  return pending.then(
    (result) => {
      done(resultAttributes(method, result));
      return result;
    },
    (error: unknown) => {
      if (isCancelled(error)) done({ [ATTR.outcome]: 'cancelled' });
      else {
        const code = (error as { code?: unknown } | null)?.code;
        const type =
          typeof code === 'number'
            ? String(code)
            : error instanceof Error && error.constructor.name !== 'Error'
              ? error.constructor.name
              : '_OTHER';
        done(
          {
            [ATTR.errorType]: type,
            ...(typeof code === 'number' && { [ATTR.rpcStatusCode]: String(code) }),
            [ATTR.outcome]: 'failed',
          },
          error instanceof Error ? error.message : String(error),
        );
      }
      throw error;
    },
  );
}

/** What a handler's result says about the call: a tool error, a task, a round of input_required. */
function resultAttributes(method: string, result: unknown): Attributes {
  if (result === null || typeof result !== 'object') return {};
  const r = result as { isError?: unknown; resultType?: unknown; task?: { taskId?: unknown }; taskId?: unknown };
  if (r.resultType === 'task' || (typeof r.task === 'object' && r.task !== null)) {
    const taskId = r.task?.taskId ?? r.taskId;
    return { [ATTR.outcome]: 'task', ...(typeof taskId === 'string' && { [ATTR.taskId]: taskId }) };
  }
  if (r.resultType === 'input_required') return { [ATTR.outcome]: 'input_required' };
  if (method !== 'tools/call') return {};
  return r.isError === true
    ? { [ATTR.errorType]: 'tool_error', [ATTR.outcome]: 'tool_error' }
    : { [ATTR.outcome]: 'completed' };
}

/** The metric's attributes: the conventions' low-cardinality ones only (no ids). */
function metricAttributes(start: Attributes, ended: Attributes): Attributes {
  const out: Attributes = {};
  for (const key of [
    ATTR.mcpMethod,
    ATTR.toolName,
    ATTR.operationName,
    ATTR.mcpProtocolVersion,
    ATTR.networkTransport,
    ATTR.networkProtocol,
  ])
    if (start[key] !== undefined) out[key] = start[key];
  if (ended[ATTR.errorType] !== undefined) out[ATTR.errorType] = ended[ATTR.errorType];
  if (ended[ATTR.rpcStatusCode] !== undefined) out[ATTR.rpcStatusCode] = ended[ATTR.rpcStatusCode];
  return out;
}

let histogram: { readonly meter: Meter; readonly duration: Histogram } | undefined;

function durationOf(meter: Meter): Histogram {
  if (histogram?.meter !== meter) {
    histogram = {
      meter,
      duration: meter.createHistogram('mcp.server.operation.duration', {
        unit: 's',
        description:
          'MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
    };
  }
  return histogram.duration;
}
