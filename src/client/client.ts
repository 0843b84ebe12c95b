/**
 * A cancel-aware MCP client for any MCP server (this one or another), built
 * on the SDK `Client` and a {@link ClientGuard} at its wire.
 *
 * One client for both eras: it negotiates 2026-07-28 with a server that
 * speaks it and falls back to 2025-11-25 (`initialize`) otherwise (SDK
 * 2.x `versionNegotiation: { mode: 'auto' }`, the default here).
 *
 * What it adds to the plain SDK client:
 * - Aborting a call (signal or timeout) cancels it once, and only while the
 *   request is still pending: `notifications/cancelled` with the original id
 *   and the reason (2025, and 2026 over stdio), or the request's response
 *   stream closed (2026 over Streamable HTTP). A signal aborted after the
 *   response never sends a stale cancellation. The caller is rejected at
 *   once with a {@link CallAbortedError}.
 * - A response that arrives after cancellation was requested is accepted and
 *   discarded, without an "unknown message ID" error; cancelled entries are
 *   dropped after a bounded time.
 * - `initialize` is never cancelled: an aborted {@link CancelAwareClient.connect}
 *   closes the connection instead.
 * - Handlers for the server's sampling, elicitation and roots requests get an
 *   AbortSignal that fires when the server cancels that request (whatever its
 *   id, 0 included), and their answer is then never sent.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  ProtocolError,
  ProtocolErrorCode,
  PROTOCOL_VERSION_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type ProtocolEra,
  type StandardSchemaV1,
  type Transport,
} from '@modelcontextprotocol/client';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import { CallAbortedError } from '../errors.js';
import { ClientGuard, emptyClientStats } from './guard.js';
import { cancellable, MAX_TIMER_MS, tagged } from './cancellable.js';
import type { TaskCallOptions, TaskClientCounters, TaskHandle } from './task-handle.js';
import { TaskRoutes } from './task-routes.js';
import { callToolAsTask } from './task-call.js';
import type { InputDispatch } from './task-inputs.js';
import type {
  CallOptions,
  CancelAwareClientOptions,
  CancelAwareClientStats,
  ConnectOptions,
  ElicitationHandler,
  RootsHandler,
  SamplingHandler,
  ServerRequestContext,
} from './options.js';

export { CallAbortedError };

/**
 * An MCP client with a registry of its in-flight requests at its end of the
 * wire. Use {@link CancelAwareClient.callTool} and
 * {@link CancelAwareClient.request} for cancel-aware calls and
 * {@link CancelAwareClient.sdk} for everything else.
 *
 * @example
 * ```ts
 * const client = new CancelAwareClient({ name: 'my-app', version: '1.0.0' });
 * client.onElicitation(async (params, { signal }) => ({ action: 'accept', content: { name: await askUser(params.message, signal) } }));
 * await client.connect(new StdioClientTransport({ command: 'mcp-cancel-pool', args: ['serve'] }));
 * const stop = new AbortController();
 * setTimeout(() => stop.abort('user pressed Stop'), 1000);
 * await client.callTool({ name: 'count_primes', arguments: { limit: 5e9 } }, { signal: stop.signal });
 * // rejects with CallAbortedError after 1 s; the server got notifications/cancelled for that request
 * ```
 */
export class CancelAwareClient {
  /** The underlying SDK client, for anything not wrapped here (listTools, readResource, …). */
  readonly sdk: Client;
  /** Outbound (our requests) and inbound (the server's) entries of every connection of this client. */
  readonly registry = new InFlightRegistry();
  private readonly counters = emptyClientStats();
  private readonly taskCounters: TaskClientCounters = {
    taskCancelsSent: 0,
    staleTaskCancelsSuppressed: 0,
    taskUpdatesSent: 0,
  };
  /** Our handlers by the method they answer, for a 2026 task's `inputRequests` (which reach no SDK handler). */
  private readonly inputHandlers = new Map<
    string,
    (params: Record<string, unknown> | undefined, context: ServerRequestContext) => Promise<unknown>
  >();
  /** Tasks not yet known to be terminal, by id, for `notifications/tasks/status`. */
  private readonly tasks = new TaskRoutes();
  private readonly ttlMs: number | undefined;
  private readonly info: Implementation;
  /** What we declare, for the 2026 envelope of the requests we send past the SDK. */
  private capabilities: ClientCapabilities;
  private guard: ClientGuard | undefined;
  private readonly negotiation: CancelAwareClientOptions['versionNegotiation'];

  constructor(info: Implementation, options: CancelAwareClientOptions = {}) {
    const { cancelledTtlMs, versionNegotiation, ...sdkOptions } = options;
    // Both eras by default: 2026-07-28 where the server speaks it, 2025-11-25 otherwise.
    this.sdk = new Client(info, { ...sdkOptions, ...(versionNegotiation && { versionNegotiation }) });
    this.negotiation = versionNegotiation;
    this.info = info;
    this.capabilities = { ...(options.capabilities ?? {}) };
    this.ttlMs = cancelledTtlMs;
  }

  /** The era the connection negotiated: `'modern'` (2026-07-28), `'legacy'` (2025-11-25), or undefined before connect. */
  get era(): ProtocolEra | undefined {
    return this.sdk.getProtocolEra();
  }

  /**
   * Connects: negotiates the era (`server/discover`, falling back to
   * `initialize`, unless the options pinned one). The handshake is never
   * cancelled on the wire: if `signal` aborts or `timeout` passes first, the
   * connection is closed and this rejects with a {@link CallAbortedError}.
   */
  async connect(transport: Transport, options: ConnectOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) throw new CallAbortedError('AbortError', signal.reason, undefined, false);
    const guard = new ClientGuard(transport, {
      registry: this.registry,
      stats: this.counters,
      ...(this.ttlMs !== undefined && { cancelledTtlMs: this.ttlMs }),
    });
    guard.own.ontaskstatus = (params) => this.tasks.status(params);
    this.guard = guard;
    const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
    // Both eras by default: 2026-07-28 where the server speaks it, 2025-11-25 otherwise. The probe
    // gets connect's bound (the SDK would give it our MAX_TIMER_MS, and a silent server would hold connect forever).
    if (!this.negotiation)
      this.sdk.setVersionNegotiation({
        mode: 'auto',
        probe: { timeoutMs: Number.isFinite(timeout) ? timeout : MAX_TIMER_MS },
      });
    // No signal and no practical timeout for the SDK: it would answer either with notifications/cancelled for initialize.
    const connecting = this.sdk.connect(guard, { timeout: MAX_TIMER_MS });
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const settle = () => {
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (kind: 'AbortError' | 'TimeoutError', reason: unknown) => {
        if (done) return;
        settle();
        reject(new CallAbortedError(kind, reason, undefined, false));
        void this.sdk.close().catch(() => undefined);
      };
      const onAbort = () => giveUp('AbortError', signal?.reason);
      const timer = Number.isFinite(timeout)
        ? setTimeout(() => giveUp('TimeoutError', `initialize did not complete within ${timeout} ms`), timeout)
        : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      connecting.then(
        () => {
          if (done) return;
          settle();
          resolve();
        },
        (error: unknown) => {
          if (done) return;
          settle();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    const modern = this.sdk.getProtocolEra() === 'modern';
    guard.setEra({
      modern,
      ...(modern && {
        envelope: {
          [PROTOCOL_VERSION_META_KEY]: this.sdk.getNegotiatedProtocolVersion(),
          [CLIENT_INFO_META_KEY]: this.info,
          [CLIENT_CAPABILITIES_META_KEY]: this.capabilities,
        },
      }),
    });
  }

  /**
   * Calls a tool. If `signal` aborts or `timeout` passes while the request is
   * pending, the call is cancelled once, the way the era and transport say
   * (`notifications/cancelled` with the original id and the reason; on 2026
   * Streamable HTTP the request's response stream is closed), and this
   * rejects at once with a {@link CallAbortedError}. If the response had
   * already arrived, nothing is sent. A response that still comes is
   * discarded without error.
   */
  callTool(params: CallToolRequest['params'], options: CallOptions = {}): Promise<CallToolResult> {
    return cancellable(this.guard, (tag, sdkOptions) => this.sdk.callTool(tagged(params, tag), sdkOptions), options);
  }

  /**
   * Calls a tool as a task, in the way the server offers: the 2025-11-25
   * `tasks/*` methods (the server declares `tasks.requests.tools.call`) or
   * the 2026-07-28 extension `io.modelcontextprotocol/tasks` (declared in
   * this request's envelope). Resolves with the task's handle as soon as the
   * server created it (or answered at once: then the handle is already
   * completed). Aborting `signal` sends `tasks/cancel` once, and only while
   * the task is not known to be terminal; never `notifications/cancelled`.
   * An already aborted signal rejects at once and sends nothing. A 2026
   * task that goes `input_required` has its questions answered by the
   * handlers of {@link CancelAwareClient.onElicitation},
   * {@link CancelAwareClient.onSampling} and {@link CancelAwareClient.onRoots}
   * (sent back with `tasks/update`) as the handle follows it.
   */
  callToolAsTask(params: CallToolRequest['params'], options: TaskCallOptions = {}): Promise<TaskHandle> {
    if (!this.guard) return Promise.reject(new Error('Not connected'));
    const guard = this.guard;
    const client = {
      own: guard.own,
      modern: this.era === 'modern',
      counters: this.taskCounters,
      tasks: this.tasks,
      dispatch: this.dispatch,
    };
    return callToolAsTask(
      { ...client, sendCancel: (id: RequestId, reason?: string) => guard.sendCancel(id, reason) },
      params,
      options,
    );
  }

  /** Any request, with the same cancellation behaviour as {@link CancelAwareClient.callTool}. */
  request<T extends StandardSchemaV1>(
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: T,
    options: CallOptions = {},
  ): Promise<StandardSchemaV1.InferOutput<T>> {
    return cancellable(
      this.guard,
      (tag, sdkOptions) =>
        this.sdk.request(
          { method: request.method, params: tagged(request.params ?? {}, tag) },
          resultSchema,
          sdkOptions,
        ),
      options,
    );
  }

  /**
   * Answers the server's `sampling/createMessage` requests (2025) and a 2026
   * `input_required` round asking for sampling, and declares the `sampling`
   * capability. Call before {@link CancelAwareClient.connect}.
   */
  onSampling(handler: SamplingHandler): this {
    this.declare({ sampling: {} });
    this.inputHandlers.set('sampling/createMessage', async (params, context) =>
      handler(params as Parameters<SamplingHandler>[0], context),
    );
    this.sdk.setRequestHandler(
      'sampling/createMessage',
      (request, ctx) => handler(request.params, this.contextFor(ctx.mcpReq.id, ctx.mcpReq.signal)) as never,
    );
    return this;
  }

  /**
   * Answers the server's `elicitation/create` requests (form mode; 2025, or a
   * 2026 `input_required` round) and declares the `elicitation` capability.
   * Call before {@link CancelAwareClient.connect}.
   */
  onElicitation(handler: ElicitationHandler): this {
    this.declare({ elicitation: {} });
    this.inputHandlers.set('elicitation/create', async (params, context) =>
      handler(params as Parameters<ElicitationHandler>[0], context),
    );
    this.sdk.setRequestHandler('elicitation/create', (request, ctx) =>
      handler(request.params, this.contextFor(ctx.mcpReq.id, ctx.mcpReq.signal)),
    );
    return this;
  }

  /** Answers the server's `roots/list` requests and declares the `roots` capability. Call before {@link CancelAwareClient.connect}. */
  onRoots(handler: RootsHandler): this {
    this.declare({ roots: {} });
    this.inputHandlers.set('roots/list', async (_params, context) => handler(context));
    this.sdk.setRequestHandler('roots/list', (_request, ctx) =>
      handler(this.contextFor(ctx.mcpReq.id, ctx.mcpReq.signal)),
    );
    return this;
  }

  /** A snapshot of the counters (all connections of this client) and of the current connection's outbound entries. */
  stats(): CancelAwareClientStats {
    return { ...this.counters, ...this.taskCounters, ...(this.guard?.counts() ?? { pending: 0, cancelling: 0 }) };
  }

  /** Closes the connection; pending calls reject with the SDK's "Connection closed" error. */
  close(): Promise<void> {
    return this.sdk.close();
  }

  private declare(capabilities: ClientCapabilities): void {
    this.sdk.registerCapabilities(capabilities);
    this.capabilities = { ...this.capabilities, ...capabilities };
  }

  /** A 2026 task's input request to our handler for its method; its id is its `inputRequests` key. */
  private readonly dispatch: InputDispatch = async (key, method, params, signal) => {
    const handler = this.inputHandlers.get(method);
    if (!handler)
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `the task asks ${method}, and this client has no handler for it (register one with onElicitation, onSampling or onRoots before connect)`,
      );
    return (await handler(params, { requestId: key, signal })) as Record<string, unknown>;
  };

  private contextFor(requestId: RequestId, sdkSignal: AbortSignal): ServerRequestContext {
    // Our guard's signal, not the SDK's: the SDK ignores a cancellation naming request id 0. A 2026
    // input request has no wire id (its id is the inputRequests key): the SDK's signal is the call's abort.
    const inbound = this.guard?.inbound(requestId)?.signal;
    return { requestId, signal: inbound ? AbortSignal.any([inbound, sdkSignal]) : sdkSignal };
  }
}
