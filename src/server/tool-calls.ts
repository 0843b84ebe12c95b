/**
 * The one owner of a connection's tool-call lifecycle, each request one
 * {@link ToolCall} (./tool-call.ts: its kind decided once, its phase one table):
 *
 * ```
 * arrive (admit: kind decided, job reserved before the SDK sees it) → handle (by kind: start, begin in a window,
 *   serve a round, or answer as a task) → leave (response sent, or dropped if cancelled) → settle (forgotten)
 * ```
 *
 * The guard asks it what to do with each message at the wire; the SDK's
 * `tools/call` handler calls {@link ToolCalls.handle}. A cancel goes to the
 * call, which reaches the job its request leads to; the SDK never hears of
 * it. The SDK contract it relies on is written down here, once:
 * - a handler that rejects is answered with an error within the microtasks
 *   in which it rejected: a cancelled call's handler rejects on purpose
 *   ({@link isCancelledCall}), and the guard drops that error uncounted, the
 *   designed end of a cancelled call, not a response that slipped through;
 * - the SDK sends a handler's response within the macrotask in which the
 *   handler settled, so one `setImmediate` later the call can be forgotten
 *   ({@link ToolCalls.settleAfterHandler}).
 */
import {
  ProtocolErrorCode as ErrorCode,
  type CallToolRequest,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, JobOutcome } from '../backend/backend.js';
import { executionOf, mayBecomeTask, taskSupportError } from '../tasks/task-support.js';
import { callAsTask, modernTask } from '../tasks/handlers.js';
import type { InputWaits } from '../asks/input-waits.js';
import type { TaskRunner } from '../tasks/runner.js';
import { capabilitiesOf, isModernParams } from '../asks/retry.js';
import { DuplicateRequestError } from '../errors.js';
import type { RequestId } from '../wire/registry.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import { describeIssues } from '../issues.js';
import { CallToolRequestParamsSchema } from '@modelcontextprotocol/core';
import { DEFAULTS } from '../defaults.js';
import { startOptions } from './call-options.js';
import type {
  Admission,
  CallServer,
  ConnectionCalls,
  LifecycleCounters,
  ToolCallHooks,
  ToolCallOptions,
} from './call-lifecycle.js';
import { CallRounds, type Resume, type RoundAnswer } from './call-rounds.js';
import { envelopeOf } from './request-envelope.js';
import { ToolCall, type CallEra, type CallKind } from './tool-call.js';
import { beginWindowed, type TaskWindow, type WindowAnswer } from './windowed-calls.js';
import { serverBusy, wireError } from './wire-errors.js';
import type { CancelSource } from '../state/cancel-source.js';

/** Raised for a cancelled call: the guard drops the SDK's answer to it (see the module comment). Never reaches the wire. */
class CancelledCall extends Error {}

/** Whether a handler's rejection is a cancelled call's (its request gets no answer at all). */
export function isCancelledCall(error: unknown): boolean {
  return error instanceof CancelledCall;
}

export class ToolCalls implements ConnectionCalls {
  /** Every inbound request of this connection, from arrival until its answer left (or was dropped). */
  private readonly requests = new Map<RequestId, Call>();
  /** The level the client set with `logging/setLevel` (one server per connection, so per session). */
  logLevel: LoggingLevel | undefined;
  /** Reads {@link logLevel} when a 2025 call logs: one function for every call of the connection. */
  private readonly sessionLogLevel = (): LoggingLevel | undefined => this.logLevel;
  /** Waiting for no request to be in flight ({@link ToolCalls.whenIdle}). */
  private idleWaiters: (() => void)[] = [];
  /** The server answering these calls, once connected ({@link serveWith}). */
  private server: CallServer | undefined;

  constructor(
    private readonly backend: CallBackend,
    /** The backend's session key for this connection. */
    readonly session: string,
    private readonly counters: LifecycleCounters,
    options: ToolCallOptions,
  ) {
    this.hooks = options.hooks ?? {};
    this.caller = options.caller ?? session;
    this.turn = options.turn;
    this.abortMeansCancel = options.abortMeansCancel ?? true;
    this.closeReason = options.closeReason ?? 'transport closed';
    this.closeSource = options.closeSource ?? 'session_close';
    this.rounds = new CallRounds(options.inputWaits, backend.tools, this.caller, options.turn);
    this.tasks = options.tasks;
  }

  /** The task runner given with the options, if any; else the connected server's. */
  private readonly tasks: TaskRunner | undefined;

  /** Who sends this connection's requests (a 2026 `requestState` is bound to it). */
  readonly caller: string;
  /** The lane of this connection's calls in the fair queue, when not the session's. */
  private readonly turn: string | undefined;
  private readonly hooks: ToolCallHooks;
  private readonly abortMeansCancel: boolean;
  private readonly closeReason: string;
  private readonly closeSource: CancelSource;
  /** 2026 calls that may ask the client, served in rounds. */
  private readonly rounds: CallRounds;

  /** The backend's parked 2026 calls (their counters are in `executor://stats`). */
  get inputWaits(): InputWaits {
    return this.rounds.waits;
  }

  serveWith(server: CallServer): void {
    this.server = server;
  }

  /** For request `id`'s server span: the first round's traceparent of the 2026 call it retries, if it is a retry. */
  firstRoundOf(id: RequestId): string | undefined | Promise<string | undefined> {
    const resume = this.requests.get(id)?.resume;
    return resume === undefined ? undefined : this.rounds.firstRoundOf(resume);
  }

  /** What request `id` was admitted as, while it is in flight. */
  kindOf(id: RequestId): CallKind | undefined {
    return this.requests.get(id)?.kind;
  }

  /** Whether a request of this connection with this id has not been answered (or dropped) yet. */
  isInFlight(id: RequestId): boolean {
    return this.requests.has(id);
  }

  /** A request arrived: its kind is decided, and a pooled call reserved, before the SDK dispatches it. */
  admit(id: RequestId, method: string, params: unknown): Admission {
    if (this.requests.has(id))
      return { kind: 'duplicate', message: new DuplicateRequestError(this.session, id).message };
    if (method !== 'tools/call')
      return this.enter(new ToolCall<Resume>(id, 'unpooled', isModernParams(params) ? 'modern' : 'legacy'));
    const problem = callParamsProblem(params);
    if (problem !== undefined) return { kind: 'refuse', code: ErrorCode.InvalidParams, message: problem };
    try {
      const call = this.decide(id, params as CallParams);
      return call instanceof ToolCall ? this.enter(call) : call;
    } catch (error) {
      // The backend still holds the id (a cancelled call whose worker has not returned yet), or it is closing.
      const code = error instanceof DuplicateRequestError ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
      return { kind: 'refuse', code, message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * The one decision of what a `tools/call` is, by era, the tool's task
   * support, the tasks extension and the task window; see {@link CallKind}.
   * In 2026 a `task` param is a 2025 client's hint, and ignored (SEP-2663):
   * the tool and the envelope decide.
   */
  private decide(id: RequestId, params: CallParams): Call | Extract<Admission, { kind: 'refuse' }> {
    const tool = this.backend.tools.get(params.name);
    if (!isModernParams(params)) {
      // A task-augmented call is answered at once with its task; the task's job is reserved under its task id.
      if (params.task !== undefined) return new ToolCall<Resume>(id, 'task', 'legacy');
      return this.plain(id, 'legacy', tool && taskSupportError(tool, false));
    }
    // A retry resumes its parked call, whatever else it declares.
    const retry = this.rounds.admitRetry(params);
    if (retry.kind === 'refuse') return retry;
    const declared = mayBecomeTask(params, this.backend.tools); // the extension declared, for a task tool
    const support = tool ? executionOf(tool).taskSupport : 'forbidden';
    const refusal = support === 'required' && !declared ? taskSupportError(tool!, false, 'modern') : undefined;
    if (retry.kind === 'rounds')
      return new ToolCall<Resume>(
        id,
        'rounds',
        'modern',
        { job: retry.job, ...(retry.resume && { resume: retry.resume }) },
        refusal,
      );
    const taskAfterMs = (this.tasks ?? this.server?.tasks)?.taskAfterMs ?? DEFAULTS.taskAfterMs;
    // required: a task at once; optional: a task only if it has not ended within --task-after-ms (0: at once).
    if (declared && (support === 'required' || taskAfterMs === 0)) return new ToolCall<Resume>(id, 'task', 'modern');
    if (this.rounds.byRounds(params.name))
      return new ToolCall<Resume>(id, 'rounds', 'modern', { job: this.rounds.reserve() }, refusal);
    // Its job is reserved under the id its task would have, when it begins.
    if (declared) return new ToolCall<Resume>(id, 'windowed', 'modern');
    return this.plain(id, 'modern', refusal);
  }

  private plain(id: RequestId, era: CallEra, refusal: Error | undefined): Call {
    return new ToolCall<Resume>(id, 'plain', era, { job: this.backend.reserve(this.session, id) }, refusal);
  }

  private enter(call: Call): Admission {
    this.requests.set(call.id, call);
    return { kind: 'forward' };
  }

  /**
   * Cancels request `id` (a notification, a dropped HTTP stream): delivered
   * to its call, which asks the backend to cancel the job its request leads
   * to. If it loses, the normal response goes out. If it wins, the handler
   * rejects on purpose, and until the call is forgotten anything sent for it
   * is dropped ({@link leaving}). The decision shows in the job's state (and
   * outcome); nothing here waits for it.
   */
  cancel(id: RequestId, reason: string | undefined, source: CancelSource): void {
    const call = this.requests.get(id);
    const job = call?.job;
    if (job) void this.backend.requestCancel(job.session, job.id, reason, source);
    // A windowed call's job does not exist until its handler begins it: the cancel is applied as it begins.
    else if (call?.keepEarlyCancel({ reason, source })) return;
    // A request that leads to no job (a task's, one not pooled, one gone): the backend counts it as unknown.
    else void this.backend.requestCancel(this.session, id, reason, source);
  }

  /** The SDK's `tools/call` handler: serves the call by the kind it was admitted as. */
  handle(request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult | Record<string, unknown>> {
    const id = ctx.mcpReq.id;
    const call = this.requests.get(id);
    if (!call || call.kind === 'unpooled') throw wireError(ErrorCode.InternalError, 'tool call was not registered');
    if (call.refusal) throw call.refusal; // the reserved job is released when this error leaves
    if (call.kind === 'task') return this.asTask(call, request, ctx);
    return this.run(call, request, ctx);
  }

  /** Answered at once with its task: 2025 owned by the session, 2026 by the caller. */
  private asTask(call: Call, request: CallToolRequest, ctx: ServerContext): Promise<Record<string, unknown>> {
    const server = this.server;
    if (!server) throw wireError(ErrorCode.InternalError, 'not connected');
    call.detach();
    const tools = this.backend.tools;
    if (call.era === 'legacy') return callAsTask(server.sdk, server.tasks, this.session, request, tools, 'legacy');
    return callAsTask(server.sdk, server.tasks, this.caller, request, tools, 'modern', capabilitiesOf(ctx));
  }

  /** A pooled call (plain, windowed or by rounds): runs its job and maps the outcome to a result or an error. */
  private async run(
    call: Call,
    request: CallToolRequest,
    ctx: ServerContext,
  ): Promise<CallToolResult | Record<string, unknown>> {
    const id = call.id;
    const envelope = envelopeOf(ctx);
    const modern = envelope !== undefined;
    // 2026: the level travels with the request, and a request without one gets no log notifications.
    const logLevel = modern ? () => envelope.logLevel : this.sessionLogLevel;
    const plain = startOptions(request, ctx, logLevel, modern);
    const options = this.turn === undefined ? plain : { ...plain, turn: this.turn };
    let job: CallHandle;
    let outcome: Promise<WindowAnswer | RoundAnswer>;
    let window: TaskWindow | undefined;
    if (call.kind === 'windowed') {
      window = this.windowOf(request);
      ({ job, outcome } = beginWindowed(call, window, options, (early) => this.cancel(id, early.reason, early.source)));
    } else {
      const reserved = call.job;
      if (!reserved) throw wireError(ErrorCode.InternalError, 'tool call was not registered');
      job = reserved;
      const resume = call.resume;
      call.begin(job);
      outcome =
        call.kind === 'rounds' ? this.rounds.serve(call, job, resume, request, ctx, logLevel) : job.start(options);
    }
    // The SDK aborts this signal when a 2026 HTTP exchange ends: a closed stream is a cancel. It also aborts after a
    // normal answer; only a call still queued or running is cancelled, so only a close that can win the CAS counts.
    const signal = this.abortMeansCancel ? ctx.mcpReq.signal : undefined;
    const onAbort = () => {
      if ((job.state === 'queued' || job.state === 'running') && this.requests.get(id) === call && call.job === job)
        this.cancel(id, 'client disconnected', 'closed_stream');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let cancelled = false;
    try {
      const settled = await outcome;
      if (settled.kind === 'input') return settled.answer;
      if (settled.kind === 'task') return window!.answer(settled.task);
      if (settled.kind !== 'cancelled') return resultOf(request.params.name, settled);
      cancelled = true;
      throw new CancelledCall();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.settleAfterHandler(call, cancelled);
    }
  }

  /** A windowed call's window: the shared task runner begins its job, owned by the caller. */
  private windowOf(request: CallToolRequest): TaskWindow {
    const tasks = this.server?.tasks;
    if (!tasks) throw wireError(ErrorCode.InternalError, 'not connected');
    const ttlMs = (request.params as { task?: { ttl?: number } }).task?.ttl;
    return {
      begin: (options, hooks) => tasks.begin(this.caller, options, ttlMs, hooks),
      answer: (task) => ({ resultType: 'task', ...modernTask(task) }),
    };
  }

  /**
   * A response is leaving for request `id`. False if it must be dropped (its
   * call was cancelled); either way the request is no longer in flight.
   */
  leaving(id: RequestId): boolean {
    const call = this.requests.get(id);
    if (!call) return true;
    this.forget(id);
    const was = call.leave();
    const job = was.phase === 'gone' || was.phase === 'detached' ? undefined : was.job;
    // A retry answered before its handler resumed the call (the SDK refused it): the call has no one to answer to.
    if (was.phase === 'reserved' && was.resume !== undefined && job)
      void this.backend.requestCancel(job.session, job.id, 'retry refused before it resumed the call', 'superseded');
    if (!job) return true;
    if (job.state === 'cancelled') {
      if (!(was.phase === 'settled' && was.silent)) this.counters.responsesDropped++;
      // The SDK answered before the call was forgotten: this took the call settle would have seen, so its hook runs
      // here, or the POST's stream never ends.
      this.hooks.cancelled?.(id);
      return false;
    }
    // A response before the call started (e.g. the SDK rejected the params): release its reservation.
    // (A windowed call's job was begun by the task runner; nothing to release.)
    if (call.kind !== 'windowed') job.abandon();
    return true;
  }

  /** Whether a progress or log notification of call `id` may go out: while it runs, and after it claimed its response (reports go first); never after. */
  mayReport(id: RequestId, kind: 'progress' | 'log'): boolean {
    const state = this.requests.get(id)?.job?.state;
    if (state === undefined || state === 'running' || state === 'responding') return true;
    if (kind === 'progress') this.counters.progressDropped++;
    else this.counters.lateLogsDropped++;
    return false;
  }

  /**
   * The transport closed: every call of the session is cancelled. Returns how
   * many pooled calls were still unanswered (none of them will be).
   */
  closed(): number {
    const unanswered = this.callsInFlight();
    this.backend.cancelSession(this.session, this.closeReason, this.closeSource);
    // Jobs reserved under other keys (a call by rounds under the input waits, a windowed one under its task's id).
    for (const call of this.requests.values()) {
      const job = call.job;
      if (job && job.session !== this.session && (job.state === 'queued' || job.state === 'running'))
        void this.backend.requestCancel(job.session, job.id, this.closeReason, this.closeSource);
    }
    // Parked ones too, where the connection is the caller (stdio): no retry can come.
    if (this.caller === this.session) this.inputWaits.cancelOwner(this.caller, this.closeReason, this.closeSource);
    return unanswered;
  }

  /** Pooled calls not answered yet (a task-augmented call was answered with its task). */
  callsInFlight(): number {
    let n = 0;
    for (const call of this.requests.values()) if (call.job) n++;
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
  private settleAfterHandler(call: Call, silent: boolean): void {
    // A request that leads to no job any more (a task, a parked round) is forgotten as its answer leaves.
    if (!call.settle(silent)) return;
    // One immediate per turn for every call that settled in it, not one per call.
    if (this.settling.push(call) === 1) setImmediate(this.settle);
  }

  /** Handlers that settled in the last turn, forgotten together in the next. */
  private settling: Call[] = [];

  private readonly settle = (): void => {
    const settled = this.settling;
    this.settling = [];
    for (const call of settled) {
      if (this.requests.get(call.id) !== call) continue;
      this.forget(call.id);
      const was = call.leave();
      if (was.phase === 'settled' && was.job.state === 'cancelled') this.hooks.cancelled?.(call.id);
    }
  };
}

/** A request of this connection: a retry's parked call is a {@link Resume}. */
type Call = ToolCall<Resume>;

/** `tools/call` params once {@link callParamsProblem} passed them. */
type CallParams = Record<string, unknown> & { readonly name: string; readonly task?: unknown };

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
