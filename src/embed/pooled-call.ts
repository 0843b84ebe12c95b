/**
 * One pooled tool call on an embedder's `McpServer`: what the tool's handler
 * does between the SDK calling it and it settling. The call is reserved under
 * a key the pool mints (the request's own id is unique only per connection,
 * and a 2026 HTTP request has no session), so two clients sending the same id
 * never meet. Every way the SDK tells a handler its request is over is a
 * cancel: the request's signal (a `notifications/cancelled`, over 2025 or
 * 2026 stdio; a closed 2026 HTTP exchange; the transport closing), and for a
 * 2025 HTTP POST the dropped response stream (as `serve` does). A signal
 * already aborted when the handler starts cancels the reservation, so no job
 * ever starts (should a cancel still come after the start, before the job's
 * first stage, the worker stops it before that stage).
 *
 * The call is one call object (src/server/tool-call.ts), as on `serve`: a
 * `plain` call, reserved, begun, settled and gone along the same table, and
 * every cancel is delivered to it, reaching the job it leads to.
 *
 * The SDK sends nothing for a request whose signal aborted, whatever its
 * handler returns; everything the adapter itself sends (progress, logs) is
 * gated by the job's state word, never by that signal: a report goes out only
 * while the job runs, or after it claimed its response.
 */
import { SdkError, SdkErrorCode, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, ClientRequestHandler, JobOutcome, StartOptions } from '../backend/backend.js';
import type { WireStats } from '../server/guard.js';
import type { RequestId } from '../wire/registry.js';
import { envelopeOf, type RequestEnvelope } from '../server/request-envelope.js';
import { clientRequester, logParams, sendProgress } from '../server/call-options.js';
import { resultOf } from '../server/tool-calls.js';
import { ToolCall } from '../server/tool-call.js';
import type { CancelSource } from '../state/cancel-source.js';

/** What every pooled call of one pool shares. */
export interface PoolSite {
  /** The pool's backend (instrumented: it notes who asked for each cancel). */
  readonly backend: CallBackend;
  /** Reports stopped by the gate are counted here (`executor://stats`). */
  readonly wire: WireStats;
  /** The fairness key of a request (see `ToolPoolOptions.fairnessKey`). */
  fairnessKey(ctx: ServerContext): string;
  /** A key no other call of this pool has. */
  mint(): RequestId;
  /** Refusals the pool's `tools/call` wrapper answers as JSON-RPC errors, by request signal (./wire-refusals.ts). */
  readonly refusals: WeakMap<AbortSignal, Error>;
}

/** What a cancelled call's handler resolves with: its signal has aborted, so the SDK never sends it. */
const NEVER_SENT: CallToolResult = Object.freeze({ content: [], isError: true });

/** The cancel reason of a signal the SDK aborted, in the words the metrics seam counts by (src/ops/instrument.ts). */
function cancelOf(reason: unknown, perRequestHttp: boolean): [reason: string, source: CancelSource] {
  if (reason instanceof SdkError && reason.code === SdkErrorCode.ConnectionClosed)
    return perRequestHttp ? ['client disconnected', 'closed_stream'] : ['transport closed', 'session_close'];
  // A `notifications/cancelled` gives its own reason, or none.
  return [typeof reason === 'string' && reason !== '' ? reason : 'cancelled by the client', 'notification'];
}

/** Runs `tool` with `args` on the pool for the request `ctx` belongs to; see the module comment. */
export async function pooledCall(
  site: PoolSite,
  tool: string,
  args: unknown,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const { backend } = site;
  const signal = ctx.mcpReq.signal;
  const envelope = envelopeOf(ctx);
  const session = site.fairnessKey(ctx);
  const key = site.mint();
  const job = backend.reserve(session, key);
  const call = new ToolCall(key, 'plain', envelope === undefined ? 'legacy' : 'modern', { job });
  // Only a call still queued or running is cancelled: a 2026 exchange also ends (and aborts) after a normal answer.
  const cancel = ([reason, source]: [string, CancelSource]) => {
    const to = call.job;
    if (to && (to.state === 'queued' || to.state === 'running'))
      void backend.requestCancel(to.session, to.id, reason, source);
  };
  const onAbort = () => cancel(cancelOf(signal.reason, envelope !== undefined && ctx.http !== undefined));
  // 2025 over HTTP: the POST that carried the call. Its client dropping the response stream is a cancel, as under serve.
  const dropped = envelope === undefined ? ctx.http?.req?.signal : undefined;
  const onDrop = () => cancel(['client disconnected', 'closed_stream']);
  signal.addEventListener('abort', onAbort, { once: true });
  dropped?.addEventListener('abort', onDrop, { once: true });
  try {
    // The SDK runs a cancel read with the call (one stdio chunk) before this handler: the signal is already aborted,
    // and an 'abort' listener added now would never fire. The reservation is cancelled, so no job starts.
    if (signal.aborted) onAbort();
    else if (dropped?.aborted) onDrop();
    call.begin(job);
    const outcome = await job.start(startOptions(site, job, tool, args, ctx, envelope));
    if (outcome.kind !== 'cancelled') return answer(site, tool, outcome, signal);
    // Cancelled by the client: its signal has aborted. Cancelled otherwise (the pool closed, the POST's stream dropped):
    // the handler settles only once the SDK will not send its answer (the client cancels, or the connection closes).
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return NEVER_SENT;
  } finally {
    signal.removeEventListener('abort', onAbort);
    dropped?.removeEventListener('abort', onDrop);
    // The SDK sends (or, its signal aborted, never sends) the answer as the handler settles: nothing leads to the job now.
    call.settle(false);
    call.leave();
  }
}

/** The result of an outcome that was not cancelled; a JSON-RPC error (a full queue) goes to the pool's `tools/call` wrapper. */
function answer(
  site: PoolSite,
  tool: string,
  outcome: Exclude<JobOutcome, { kind: 'cancelled' }>,
  signal: AbortSignal,
): CallToolResult {
  try {
    return resultOf(tool, outcome);
  } catch (error) {
    const refusal = error instanceof Error ? error : new Error(String(error));
    site.refusals.set(signal, refusal);
    // What the client gets if the wrapper could not be installed: the same message, as a tool error.
    return { isError: true, content: [{ type: 'text', text: refusal.message }] };
  }
}

/** The backend's start options: progress on the request's token, logs through the SDK's level rules, both gated. */
function startOptions(
  site: PoolSite,
  call: CallHandle,
  tool: string,
  args: unknown,
  ctx: ServerContext,
  envelope: RequestEnvelope | undefined,
): StartOptions {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  // 2026: the level travels with the request, and one without gets no logs. 2025: the SDK keeps the session's level.
  const logs = envelope === undefined || envelope.logLevel !== undefined;
  return {
    tool,
    args: args ?? {},
    ...(progressToken !== undefined && {
      onProgress: (report) => {
        if (mayReport(site.wire, call, 'progress')) sendProgress(ctx, progressToken, report);
      },
    }),
    ...(logs && {
      onLog: (entry) => {
        if (mayReport(site.wire, call, 'log'))
          void ctx.mcpReq.log(entry.level, logParams(tool, entry).data, tool).catch(() => undefined);
      },
      liveLogs: true,
    }),
    ...(envelope?.logLevel !== undefined && { logLevel: envelope.logLevel }),
    onClientRequest: envelope === undefined ? clientRequester(ctx) : NO_MRTR,
  };
}

/** Whether a report of `call` may go out now: while it runs, and after it claimed its response (reports go first). */
function mayReport(wire: WireStats, call: CallHandle, kind: 'progress' | 'log'): boolean {
  const state = call.state;
  if (state === 'running' || state === 'responding') return true;
  if (kind === 'progress') wire.progressDropped++;
  else wire.lateLogsDropped++;
  return false;
}

/** 2026 has no requests from server to client; its multi-round-trip answers need the SDK's handler, which a worker's stage cannot reach. */
const NO_MRTR: ClientRequestHandler = (method) =>
  Promise.reject(
    new Error(
      `ctx.requestClient('${method}') is not available to a 2026-07-28 request of a pooled tool on an embedded server (see docs/embedding.md); it works for 2025-11-25 requests`,
    ),
  );
