/**
 * The one owner of a connection's tool-call lifecycle:
 *
 * ```
 * arrive (admit: reserve before the SDK sees it) → handle (start, stream reports, map the outcome)
 *   → leave (response sent, or dropped if cancelled) → settle (entry forgotten, HTTP stream ended)
 * ```
 *
 * The guard asks it what to do with each message at the wire; the SDK's
 * `tools/call` handler calls {@link ToolCalls.handle}. The SDK contract it
 * relies on is written down here, once:
 * - the SDK's own cancel handler, fed a `notifications/cancelled` just
 *   before the handler rejects, may abort the request ahead of the
 *   rejection, so the SDK sends nothing; on 2.x the stdio entry queues that
 *   notification behind its own pump, and the SDK answers the rejection with
 *   an error instead, which the guard drops without counting it: it is the
 *   designed end of a cancelled call, not a response that slipped through
 *   ({@link ToolCalls.handle});
 * - the SDK sends (or suppresses) a handler's response within the
 *   macrotask in which the handler settled, so one `setImmediate` later the
 *   entry can be forgotten ({@link ToolCalls.settleAfterHandler}).
 */
import {
  ProtocolErrorCode as ErrorCode,
  type CallToolRequest,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, JobOutcome } from '../backend/backend.js';
import { mayBecomeTask } from '../tasks/task-support.js';
import type { InputWaits } from '../asks/input-waits.js';
import { isModernParams } from '../asks/retry.js';
import { DuplicateRequestError } from '../errors.js';
import type { RequestId } from '../wire/registry.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import { cancelledNotification } from '../wire/jsonrpc.js';
import { describeIssues } from '../issues.js';
import { CallToolRequestParamsSchema } from '@modelcontextprotocol/core';
import { startOptions } from './call-options.js';
import {
  NOT_A_CALL,
  type Admission,
  type CallTable,
  type LifecycleCounters,
  type ToolCallHooks,
  type ToolCallOptions,
} from './call-lifecycle.js';
import { CallRounds, type RoundAnswer } from './call-rounds.js';
import { envelopeOf } from './request-envelope.js';
import { WindowedCalls, type TaskWindow, type WindowAnswer } from './windowed-calls.js';
import { serverBusy, wireError } from './wire-errors.js';

/** Raised for a cancelled call; the SDK suppresses it (see the module comment). Never reaches the wire. */
class CancelledCall extends Error {}

/** Whether a handler's rejection is a cancelled call's (its request gets no answer at all). */
export function isCancelledCall(error: unknown): boolean {
  return error instanceof CancelledCall;
}

export class ToolCalls {
  /** Every inbound request of this connection (see {@link CallTable}). */
  private readonly requests: CallTable = new Map();
  /** Cancelled calls whose handler rejected on purpose: the SDK's answer to that rejection is dropped uncounted. */
  private readonly silenced = new Set<RequestId>();
  /** The level the client set with `logging/setLevel` (one server per connection, so per session). */
  logLevel: LoggingLevel | undefined;
  /** Reads {@link logLevel} when a 2025 call logs: one function for every call of the connection. */
  private readonly sessionLogLevel = (): LoggingLevel | undefined => this.logLevel;
  /** Waiting for no request to be in flight ({@link ToolCalls.whenIdle}). */
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly backend: CallBackend,
    /** The backend's session key for this connection. */
    readonly session: string,
    private readonly counters: LifecycleCounters,
    /** Hands a message to the SDK as if it came from the peer. */
    private readonly toSdk: (message: ReturnType<typeof cancelledNotification>) => void,
    options: ToolCallOptions,
  ) {
    this.hooks = options.hooks ?? {};
    this.caller = options.caller ?? session;
    this.turn = options.turn;
    this.abortMeansCancel = options.abortMeansCancel ?? true;
    this.closeReason = options.closeReason ?? 'transport closed';
    this.rounds = new CallRounds(options.inputWaits, backend.tools, this.requests, this.caller, options.turn);
    this.windows = new WindowedCalls(this.requests, (id, reason) => this.onPeerCancel(id, reason));
  }

  /** Who sends this connection's requests (a 2026 `requestState` is bound to it). */
  readonly caller: string;
  /** The lane of this connection's calls in the fair queue, when not the session's. */
  private readonly turn: string | undefined;
  private readonly hooks: ToolCallHooks;
  private readonly abortMeansCancel: boolean;
  private readonly closeReason: string;
  /** 2026 calls that may ask the client, served in rounds (src/mrtr). */
  private readonly rounds: CallRounds;
  /** 2026 calls that may become tasks (--task-after-ms). */
  private readonly windows: WindowedCalls;

  /** The backend's parked 2026 calls (their counters are in `executor://stats`). */
  get inputWaits(): InputWaits {
    return this.rounds.waits;
  }

  /** For request `id`'s server span: the first round's traceparent of the 2026 call it retries, if it is a retry. */
  firstRoundOf(id: RequestId): string | undefined | Promise<string | undefined> {
    return this.rounds.firstRoundOf(id);
  }

  /** Whether a request of this connection with this id has not been answered (or dropped) yet. */
  isInFlight(id: RequestId): boolean {
    return this.requests.has(id);
  }

  /** A request arrived: a tool call is reserved before the SDK dispatches it. */
  admit(id: RequestId, method: string, params: unknown): Admission {
    if (this.requests.has(id))
      return { kind: 'duplicate', message: new DuplicateRequestError(this.session, id).message };
    if (method !== 'tools/call') {
      this.requests.set(id, NOT_A_CALL);
      return { kind: 'forward' };
    }
    const problem = callParamsProblem(params);
    if (problem !== undefined) return { kind: 'refuse', code: ErrorCode.InvalidParams, message: problem };
    // A task-augmented call is answered at once with its task; the task's job is reserved under its task id (src/tasks).
    // So is a 2026 call that may become a task: its job is reserved under the id its task would have, when it begins.
    // In 2026 a `task` param is a 2025 client's hint, and ignored (SEP-2663): the tool and the envelope decide.
    if ((params as { task?: unknown }).task !== undefined && !isModernParams(params)) {
      this.requests.set(id, NOT_A_CALL);
      return { kind: 'forward' };
    }
    try {
      if (isModernParams(params)) {
        const modern = this.rounds.admit(id, params as Record<string, unknown>);
        if (modern) return modern;
      }
      if (mayBecomeTask(params, this.backend.tools)) {
        this.windows.admit(id);
        return { kind: 'forward' };
      }
      this.requests.set(id, this.backend.reserve(this.session, id));
      return { kind: 'forward' };
    } catch (error) {
      // The backend still holds the id (a cancelled call whose worker has not returned yet), or it is closing.
      const code = error instanceof DuplicateRequestError ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
      return { kind: 'refuse', code, message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Cancels one of this connection's calls (a notification, a dropped HTTP
   * stream). If it loses, the SDK never hears of it and the normal response
   * goes out. If it wins, the SDK is told when the handler ends, not now: the
   * next queued call is being handed the freed slot at this moment, and the
   * SDK's own cancel handling would only delay it. Until then anything sent
   * for the call is dropped ({@link leaving}).
   */
  onPeerCancel(id: RequestId, reason?: string): void {
    // The decision shows in the call's state (and outcome); nothing here waits for it.
    // A call in its task window is reserved under its future task id, and a 2026 call that may ask the client under
    // the input waits' session: each is cancelled under its own key.
    const call = this.requests.get(id);
    if (call && (this.windows.has(id) || call.session !== this.session))
      void this.backend.requestCancel(call.session, call.id, reason);
    else if (this.windows.cancelBeforeBegin(id))
      return; // its job does not exist yet: cancelled as it begins
    else void this.backend.requestCancel(this.session, id, reason);
  }

  /**
   * The SDK's `tools/call` handler: runs the reserved call and maps its
   * outcome to a result or an error. With a `window`, the call is begun by
   * the task runner instead, and answered with its task if it becomes one.
   */
  async handle(
    request: CallToolRequest,
    ctx: ServerContext,
    window?: TaskWindow,
  ): Promise<CallToolResult | Record<string, unknown>> {
    const id = ctx.mcpReq.id;
    const envelope = envelopeOf(ctx);
    const modern = envelope !== undefined;
    // 2026: the level travels with the request, and a request without one gets no log notifications.
    const logLevel = modern ? () => envelope.logLevel : this.sessionLogLevel;
    const plain = startOptions(request, ctx, logLevel, modern);
    const options = this.turn === undefined ? plain : { ...plain, turn: this.turn };
    let call: CallHandle;
    let outcome: Promise<WindowAnswer | RoundAnswer>;
    const reserved = this.requests.get(id);
    // A 2026 call of a tool that may ask the client (admitted at the door, src/mrtr) runs by rounds, never in a task window.
    const byRounds = modern && reserved != null && this.rounds.runsByRounds(id, reserved, this.session);
    if (window && !byRounds) ({ call, outcome } = this.windows.begin(id, window, options));
    else {
      if (!reserved) throw wireError(ErrorCode.InternalError, 'tool call was not registered');
      call = reserved;
      outcome = byRounds ? this.rounds.serve(id, call, request, ctx, logLevel) : call.start(options);
    }
    // The SDK aborts this signal when a 2026 HTTP exchange ends: a closed stream is a cancel. It also aborts after a
    // normal answer; only a call still queued or running is cancelled, so only a close that can win the CAS counts.
    const signal = this.abortMeansCancel ? ctx.mcpReq.signal : undefined;
    const onAbort = () => {
      if ((call.state === 'queued' || call.state === 'running') && this.requests.get(id) === call)
        this.onPeerCancel(id, 'client disconnected');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const settled = await outcome;
      if (settled.kind === 'input') return settled.answer;
      if (settled.kind === 'task') return window!.answer(settled.task);
      if (settled.kind !== 'cancelled') return resultOf(request.params.name, settled);
      this.silenced.add(id);
      this.toSdk(cancelledNotification(id, 'request cancelled'));
      throw new CancelledCall();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.settleAfterHandler(id);
    }
  }

  /** A reserved call that will not run as a plain call (a 2026 call answered as a task): its reservation is freed. */
  release(id: RequestId): void {
    this.windows.forgetBegin(id);
    const call = this.requests.get(id);
    if (!call) return;
    call.abandon();
    this.requests.set(id, NOT_A_CALL);
  }

  /**
   * A response is leaving for request `id`. False if it must be dropped (its
   * call was cancelled); either way the request is no longer in flight.
   */
  leaving(id: RequestId): boolean {
    const call = this.requests.get(id);
    this.forget(id);
    this.windows.forgetBegin(id); // answered before its handler began it (the SDK refused the params, say)
    if (!call) return true;
    // A retry answered before its handler resumed the call (the SDK refused it): the call has no one to answer to.
    if (this.rounds.dropResume(id))
      void this.backend.requestCancel(call.session, call.id, 'retry refused before it resumed the call');
    if (call.state === 'cancelled') {
      this.windows.forget(id);
      if (!this.silenced.delete(id)) this.counters.responsesDropped++;
      // The SDK answered anyway: it ignores cancels of falsy ids (0, ""), so the handler's cancel could not stop it.
      // This took the entry settleAfterHandler would have seen: run the hook here, or the POST's stream never ends.
      this.hooks.cancelled?.(id);
      return false;
    }
    // A response before the call started (e.g. the SDK rejected the params): release its reservation.
    // (A windowed call's job was started by the task runner; nothing to release.)
    if (!this.windows.forget(id)) call.abandon();
    return true;
  }

  /** Whether a progress or log notification of call `id` may go out: while it runs, and after it claimed its response (reports go first); never after. */
  mayReport(id: RequestId, kind: 'progress' | 'log'): boolean {
    const call = this.requests.get(id);
    const state = call?.state;
    if (!call || state === 'running' || state === 'responding') return true;
    if (kind === 'progress') this.counters.progressDropped++;
    else this.counters.lateLogsDropped++;
    return false;
  }

  /**
   * The transport closed: every call of the session is cancelled. Returns how
   * many plain tool calls were still unanswered (none of them will be).
   */
  closed(): number {
    const unanswered = this.callsInFlight();
    this.backend.cancelSession(this.session, this.closeReason);
    // 2026 calls that may ask the client are held elsewhere (src/mrtr): those of this connection go too.
    for (const call of this.requests.values()) {
      if (call && call.session !== this.session && (call.state === 'queued' || call.state === 'running'))
        void this.backend.requestCancel(call.session, call.id, this.closeReason);
    }
    // Parked ones too, where the connection is the caller (stdio): no retry can come.
    if (this.caller === this.session) this.inputWaits.cancelOwner(this.caller, this.closeReason);
    return unanswered;
  }

  /** Plain tool calls not answered yet (a task-augmented call was answered with its task). */
  callsInFlight(): number {
    let n = 0;
    for (const call of this.requests.values()) if (call !== NOT_A_CALL) n++;
    return n;
  }

  /** Resolves once no request of this connection waits for its answer (at once if none does). */
  whenIdle(): Promise<void> {
    if (this.requests.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private forget(id: RequestId): void {
    if (!this.requests.delete(id) || this.requests.size > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The handler settled; the SDK has sent (or suppressed) its response by the next macrotask. */
  private settleAfterHandler(id: RequestId): void {
    const call = this.requests.get(id);
    if (!call) return;
    // One immediate per turn for every call that settled in it, not one per call.
    if (this.settling.push({ id, call }) === 1) setImmediate(this.settle);
  }

  /** Handlers that settled in the last turn, forgotten together in the next. */
  private settling: { readonly id: RequestId; readonly call: CallHandle }[] = [];

  private readonly settle = (): void => {
    const settled = this.settling;
    this.settling = [];
    for (const { id, call } of settled) {
      this.silenced.delete(id);
      if (this.requests.get(id) !== call) continue;
      this.forget(id);
      this.windows.forget(id);
      if (call.state === 'cancelled') this.hooks.cancelled?.(id);
    }
  };
}

/** The answer a plain tool call's outcome owes on the wire: a result, a tool error, or a JSON-RPC error (never called for a cancelled one). */
export function resultOf(tool: string, outcome: Exclude<JobOutcome, { kind: 'cancelled' }>): CallToolResult {
  switch (outcome.kind) {
    case 'completed':
      return outcome.result;
    case 'timedOut':
      return errorResult(`tool '${tool}' timed out after ${outcome.timeoutMs} ms and was stopped`);
    case 'failed':
      if (outcome.code === 'unknown_tool') throw wireError(ErrorCode.InvalidParams, outcome.message);
      if (outcome.code === 'queue_full') throw serverBusy(outcome.message);
      return errorResult(outcome.message);
  }
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

// ---- tools/call params checked at the door ----------------------------------
// The SDK validates them inside its request handler wrapper, where a failure becomes -32603 with zod's JSON dump as
// the message; checked first here, it is -32602 in words.

/** Why these params would fail the SDK's `tools/call` schema, or undefined if they pass. */
function callParamsProblem(params: unknown): string | undefined {
  if (plainlyValid(params)) return undefined; // the common case costs no schema parse
  const parsed = CallToolRequestParamsSchema.safeParse(params);
  return parsed.success ? undefined : `invalid tools/call params: ${describeIssues(parsed.error)}`;
}

/**
 * The schema's checks on what a client controls, by hand: `name` a string,
 * `arguments` absent or an object, `task` absent or an object with a
 * numeric `ttl`. `_meta` was checked with the envelope by the transport.
 * A false here only sends the params to the real schema.
 */
function plainlyValid(params: unknown): boolean {
  if (!isObject(params)) return false;
  const { name, arguments: args, task } = params as { name?: unknown; arguments?: unknown; task?: unknown };
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return false;
  if (task === undefined) return true;
  return (
    isObject(task) &&
    ((task as { ttl?: unknown }).ttl === undefined || typeof (task as { ttl?: unknown }).ttl === 'number')
  );
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
