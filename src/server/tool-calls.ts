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
import { ProtocolErrorCode as ErrorCode, type CallToolRequest, type CallToolResult, type ServerContext, type Task } from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, JobOutcome, StartOptions } from '../backend/backend.js';
import type { WindowedCall, WindowHooks } from '../tasks/runner.js';
import { mayBecomeTask } from '../tasks/task-support.js';
import { InputCall } from '../mrtr/input-call.js';
import { inputWaitsOf } from '../mrtr/input-waits.js';
import { admitRetry, capabilitiesOf, isModernParams } from '../mrtr/retry.js';
import { DuplicateRequestError } from '../errors.js';
import type { RequestId } from '../wire/registry.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import { callParamsProblem } from './call-params.js';
import { startOptions } from './call-options.js';
import { envelopeOf } from './request-envelope.js';
import { serverBusy, wireError, SERVER_BUSY } from './wire-errors.js';
import { cancelledNotification } from '../wire/jsonrpc.js';

export { SERVER_BUSY };

/** What the transport needs to hear about a call's end. */
export interface ToolCallHooks {
  /** The handler of a cancelled call has settled: nothing will ever be sent for it (Streamable HTTP ends its stream). */
  readonly cancelled?: (id: RequestId) => void;
}

/** The wire counters the lifecycle moves. */
export interface LifecycleCounters {
  responsesDropped: number;
  progressDropped: number;
  lateLogsDropped: number;
}

/** The decision for an arriving request. */
export type Admission =
  | { readonly kind: 'forward' }
  /** Another request of this connection has that id in flight: refuse without touching the first. */
  | { readonly kind: 'duplicate'; readonly message: string }
  | { readonly kind: 'refuse'; readonly code: number; readonly message: string; readonly data?: unknown };

/**
 * How a call that may become a task runs (2026, a task tool, the tasks
 * extension declared): its job is begun by the task runner, which decides
 * once whether the call is answered directly or as a task (TaskRunner.begin).
 */
export interface TaskWindow {
  begin(options: StartOptions, hooks: WindowHooks): WindowedCall;
  /** The call's answer once it became this task. */
  answer(task: Task): Record<string, unknown>;
}

/** Marks an inbound request other than a tool call. */
const NOT_A_CALL = null;

/** Raised for a cancelled call; the SDK suppresses it (see the module comment). Never reaches the wire. */
class CancelledCall extends Error {}

export class ToolCalls {
  /**
   * Every inbound request of this connection, from arrival until its response
   * left (or was dropped): a tool call's handle, or {@link NOT_A_CALL}. Only a
   * request whose id is absent here reaches the SDK, which keys its own
   * bookkeeping (abort controllers, HTTP streams) by id alone.
   */
  private readonly requests = new Map<RequestId, CallHandle | typeof NOT_A_CALL>();
  /** Cancelled calls whose handler rejected on purpose: the SDK's answer to that rejection is dropped uncounted. */
  private readonly silenced = new Set<RequestId>();
  /** 2026 retries admitted at the door, until their handler resumes the parked call (src/mrtr). */
  private readonly resumes = new Map<RequestId, InputCall>();
  /** The level the client set with `logging/setLevel` (one server per connection, so per session). */
  logLevel: LoggingLevel | undefined;
  /** Waiting for no request to be in flight ({@link ToolCalls.whenIdle}). */
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly backend: CallBackend,
    /** The backend's session key for this connection. */
    readonly session: string,
    private readonly counters: LifecycleCounters,
    /** Hands a message to the SDK as if it came from the peer. */
    private readonly toSdk: (message: ReturnType<typeof cancelledNotification>) => void,
    private readonly hooks: ToolCallHooks = {},
    /** Who sends this connection's requests (a 2026 `requestState` is bound to it). */
    readonly caller: string = session,
  ) {}

  /** Whether a request of this connection with this id has not been answered (or dropped) yet. */
  isInFlight(id: RequestId): boolean {
    return this.requests.has(id);
  }

  /** A request arrived: a tool call is reserved before the SDK dispatches it. */
  admit(id: RequestId, method: string, params: unknown): Admission {
    if (this.requests.has(id)) return { kind: 'duplicate', message: new DuplicateRequestError(this.session, id).message };
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
        const modern = this.admitModern(id, params as Record<string, unknown>);
        if (modern) return modern;
      }
      if (mayBecomeTask(params, this.backend.tools)) {
        this.requests.set(id, NOT_A_CALL);
        this.awaitingBegin.set(id, false);
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
    if (call && (this.windowed.has(id) || call.session !== this.session)) void this.backend.requestCancel(call.session, call.id, reason);
    else if (this.awaitingBegin.has(id)) this.awaitingBegin.set(id, true); // its job does not exist yet: cancelled as it begins
    else void this.backend.requestCancel(this.session, id, reason);
  }

  /**
   * A 2026 call of a tool that may ask the client is reserved where its
   * parked job outlives this exchange; a retry is matched to its parked
   * call here, at the door. Undefined: an ordinary call.
   */
  private admitModern(id: RequestId, params: Record<string, unknown>): Admission | undefined {
    const waits = inputWaitsOf(this.backend);
    const retry = admitRetry(waits, params, this.caller);
    if (retry.kind === 'refuse') return { kind: 'refuse', code: ErrorCode.InvalidParams, message: retry.message, data: { reason: retry.reason } };
    if (retry.kind === 'resume') {
      this.requests.set(id, retry.input.call);
      this.resumes.set(id, retry.input);
      return { kind: 'forward' };
    }
    if (this.backend.tools.get(params.name as string)?.usesClient !== true) return undefined;
    this.requests.set(id, waits.reserve());
    return { kind: 'forward' };
  }

  /** Calls begun through a {@link TaskWindow} and not yet decided as tasks: their job's key is not the request's. */
  private readonly windowed = new Set<RequestId>();
  /** Calls admitted for a {@link TaskWindow} whose handler has not begun them yet; true once a cancel came for one. */
  private readonly awaitingBegin = new Map<RequestId, boolean>();

  /**
   * The SDK's `tools/call` handler: runs the reserved call and maps its
   * outcome to a result or an error. With a `window`, the call is begun by
   * the task runner instead, and answered with its task if it becomes one.
   */
  async handle(request: CallToolRequest, ctx: ServerContext, window?: TaskWindow): Promise<CallToolResult | Record<string, unknown>> {
    const id = ctx.mcpReq.id;
    const envelope = envelopeOf(ctx);
    const modern = envelope !== undefined;
    // 2026: the level travels with the request, and a request without one gets no log notifications.
    const logLevel = modern ? () => envelope.logLevel : () => this.logLevel;
    const options = startOptions(request, ctx, logLevel, modern);
    let call: CallHandle;
    let outcome: Promise<JobOutcome | { readonly kind: 'task'; readonly task: Task } | { readonly kind: 'input'; readonly answer: Record<string, unknown> }>;
    const reserved = this.requests.get(id);
    // A 2026 call of a tool that may ask the client (admitted at the door, src/mrtr) runs by rounds, never in a task window.
    const byRounds = modern && reserved != null && (this.resumes.has(id) || reserved.session !== this.session);
    if (window && !byRounds) {
      // From the moment it is a task, the request is answered: its reports and its cancels no longer reach the job.
      let asTask = false;
      const { onProgress, onLog } = options;
      const begun = window.begin(
        { ...options, ...(onProgress && { onProgress: (r) => asTask || onProgress(r) }), ...(onLog && { onLog: (e) => asTask || onLog(e) }) },
        {
          becomingTask: () => {
            asTask = true;
            this.windowed.delete(id);
            if (this.requests.get(id) === begun.job) this.requests.set(id, NOT_A_CALL);
          },
          stayingDirect: () => {
            asTask = false;
            if (this.requests.get(id) === NOT_A_CALL) this.requests.set(id, begun.job);
            this.windowed.add(id);
          },
        },
      );
      call = begun.job;
      this.requests.set(id, call);
      this.windowed.add(id);
      if (this.awaitingBegin.get(id) === true) this.onPeerCancel(id, 'cancelled before it began');
      this.awaitingBegin.delete(id);
      outcome = begun.decision.then((d) => (d.kind === 'task' ? d : d.outcome));
    } else {
      if (!reserved) throw wireError(ErrorCode.InternalError, 'tool call was not registered');
      call = reserved;
      outcome = byRounds ? this.serveRound(id, call, request, ctx, logLevel).then((r) => (r.kind === 'input' ? r : r.outcome)) : call.start(options);
    }
    // The SDK aborts this signal when a 2026 HTTP exchange ends: a closed stream is a cancel. It also aborts after a
    // normal answer; only a call still queued or running is cancelled, so only a close that can win the CAS counts.
    const { signal } = ctx.mcpReq;
    const onAbort = () => {
      if ((call.state === 'queued' || call.state === 'running') && this.requests.get(id) === call) this.onPeerCancel(id, 'client disconnected');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const settled = await outcome;
      if (settled.kind === 'input') return settled.answer as never;
      if (settled.kind === 'task') return window!.answer(settled.task);
      if (settled.kind !== 'cancelled') return resultOf(request.params.name, settled);
      this.silenced.add(id);
      this.toSdk(cancelledNotification(id, 'request cancelled'));
      throw new CancelledCall();
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.settleAfterHandler(id);
    }
  }

  /**
   * One round of a 2026 call that may ask the client (src/mrtr/input-call.ts):
   * a retry hands the job its answers and resumes it; the round ends with the
   * job's outcome, or with `input_required` once the job asks. Then this
   * request's id no longer leads to the call: the retry's id will.
   */
  private async serveRound(id: RequestId, call: CallHandle, request: CallToolRequest, ctx: ServerContext, logLevel: () => LoggingLevel | undefined) {
    const exchange = { request, ctx, capabilities: capabilitiesOf(ctx), logLevel };
    let input = this.resumes.get(id);
    if (input) {
      this.resumes.delete(id);
      // The SDK lifts the retry's answers out of the params into the context (the door checked them in the params).
      const lifted = (ctx.mcpReq as { inputResponses?: Record<string, Record<string, unknown>> }).inputResponses;
      input.answer(lifted ?? (request.params as { inputResponses?: Record<string, Record<string, unknown>> }).inputResponses ?? {});
    } else input = new InputCall(call, exchange);
    const round = await input.round(exchange);
    if (round.kind === 'outcome') return round;
    this.requests.set(id, NOT_A_CALL);
    const requestState = inputWaitsOf(this.backend).park(input, this.caller);
    return { kind: 'input' as const, answer: { resultType: 'input_required', inputRequests: round.inputRequests, requestState } };
  }
  /** A reserved call that will not run as a plain call (a 2026 call answered as a task): its reservation is freed. */
  release(id: RequestId): void {
    this.awaitingBegin.delete(id);
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
    this.awaitingBegin.delete(id); // answered before its handler began it (the SDK refused the params, say)
    if (!call) return true;
    // A retry answered before its handler resumed the call (the SDK refused it): the call has no one to answer to.
    if (this.resumes.delete(id)) void this.backend.requestCancel(call.session, call.id, 'retry refused before it resumed the call');
    if (call.state === 'cancelled') {
      this.windowed.delete(id);
      if (!this.silenced.delete(id)) this.counters.responsesDropped++;
      // The SDK answered anyway: it ignores cancels of falsy ids (0, ""), so the handler's cancel could not stop it.
      // This took the entry settleAfterHandler would have seen: run the hook here, or the POST's stream never ends.
      this.hooks.cancelled?.(id);
      return false;
    }
    // A response before the call started (e.g. the SDK rejected the params): release its reservation.
    // (A windowed call's job was started by the task runner; nothing to release.)
    if (!this.windowed.delete(id)) call.abandon();
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
    this.backend.cancelSession(this.session, 'transport closed');
    // 2026 calls that may ask the client are held elsewhere (src/mrtr): those of this connection go too.
    for (const call of this.requests.values()) {
      if (call && call.session !== this.session && (call.state === 'queued' || call.state === 'running')) void this.backend.requestCancel(call.session, call.id, 'transport closed');
    }
    // Parked ones too, where the connection is the caller (stdio): no retry can come.
    if (this.caller === this.session) inputWaitsOf(this.backend).cancelOwner(this.caller, 'transport closed');
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
      this.windowed.delete(id);
      if (call.state === 'cancelled') this.hooks.cancelled?.(id);
    }
  };
}

/** The answer a call's outcome owes (never called for a cancelled one). */
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
