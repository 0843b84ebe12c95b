/**
 * A cancel-aware MCP client for any MCP server (this one or another), built
 * on the SDK `Client` and a {@link ClientGuard} at its wire.
 *
 * What it adds to the plain SDK client:
 * - Aborting a call (signal or timeout) sends `notifications/cancelled` once,
 *   with the original request id and the reason, and only while the request
 *   is still pending; a signal aborted after the response never sends a stale
 *   cancellation. The caller is rejected at once with a {@link CallAbortedError}.
 * - A response that arrives after cancellation was requested is accepted and
 *   discarded, without an "unknown message ID" error; cancelled entries are
 *   dropped after a bounded time.
 * - `initialize` is never cancelled: an aborted {@link CancelAwareClient.connect}
 *   closes the connection instead.
 * - Handlers for the server's sampling, elicitation and roots requests get an
 *   AbortSignal that fires when the server cancels that request (whatever its
 *   id, 0 included), and their answer is then never sent.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC, type RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  CallToolResultSchema,
  TaskStatusNotificationSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type ClientRequest,
  type Implementation,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import { CallAbortedError } from '../errors.js';
import { ClientGuard, emptyClientStats } from './guard.js';
import { callToolAsTask, type ClientTask, type TaskCallOptions, type TaskClientCounters, type TaskHandle } from './task-handle.js';
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

/** The longest delay a Node timer accepts; the SDK's own timeout is pushed out to it, ours applies instead. */
const MAX_TIMER_MS = 2_147_483_647;

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
  private readonly taskCounters: TaskClientCounters = { taskCancelsSent: 0, staleTaskCancelsSuppressed: 0 };
  /** Tasks not yet known to be terminal, by id, for `notifications/tasks/status`. */
  private readonly tasks = new Map<string, ClientTask>();
  private readonly ttlMs: number | undefined;
  private guard: ClientGuard | undefined;

  constructor(info: Implementation, options: CancelAwareClientOptions = {}) {
    const { cancelledTtlMs, ...sdkOptions } = options;
    this.sdk = new Client(info, sdkOptions);
    this.ttlMs = cancelledTtlMs;
    this.sdk.setNotificationHandler(TaskStatusNotificationSchema, (notification) => this.tasks.get(notification.params.taskId)?.observe(notification.params));
  }

  /**
   * Connects and performs the `initialize` handshake. The handshake is never
   * cancelled on the wire: if `signal` aborts or `timeout` passes first, the
   * connection is closed and this rejects with a {@link CallAbortedError}.
   */
  async connect(transport: Transport, options: ConnectOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) throw new CallAbortedError('AbortError', signal.reason, undefined, false);
    const guard = new ClientGuard(transport, { registry: this.registry, stats: this.counters, ...(this.ttlMs !== undefined && { cancelledTtlMs: this.ttlMs }) });
    this.guard = guard;
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
      const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
      const timer = Number.isFinite(timeout) ? setTimeout(() => giveUp('TimeoutError', `initialize did not complete within ${timeout} ms`), timeout) : undefined;
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
  }

  /**
   * Calls a tool. If `signal` aborts or `timeout` passes while the request is
   * pending, `notifications/cancelled` is sent once (original id, reason) and
   * this rejects at once with a {@link CallAbortedError}. If the response had
   * already arrived, nothing is sent. A response that still comes is
   * discarded without error.
   */
  callTool(params: CallToolRequest['params'], options: CallOptions = {}): Promise<CallToolResult> {
    return this.cancellable((sdkOptions) => this.sdk.callTool(params, CallToolResultSchema, sdkOptions) as Promise<CallToolResult>, options);
  }

  /**
   * Calls a tool as an MCP task (the server must declare
   * `tasks.requests.tools.call` and the tool `execution.taskSupport`
   * `optional` or `required`). Resolves with the task's handle as soon as the
   * server created it. Aborting `signal` sends `tasks/cancel` once, and only
   * while the task is not known to be terminal; never `notifications/cancelled`.
   * An already aborted signal rejects at once and sends nothing.
   */
  callToolAsTask(params: CallToolRequest['params'], options: TaskCallOptions = {}): Promise<TaskHandle> {
    return callToolAsTask({ sdk: this.sdk, guard: this.guard, counters: this.taskCounters, tasks: this.tasks }, params, options);
  }

  /** Any request, with the same cancellation behaviour as {@link CancelAwareClient.callTool}. */
  request<T extends AnySchema>(request: ClientRequest, resultSchema: T, options: CallOptions = {}): Promise<SchemaOutput<T>> {
    return this.cancellable((sdkOptions) => this.sdk.request(request, resultSchema, sdkOptions), options);
  }

  /**
   * Answers the server's `sampling/createMessage` requests and declares the
   * `sampling` capability. Call before {@link CancelAwareClient.connect}.
   */
  onSampling(handler: SamplingHandler): this {
    this.sdk.registerCapabilities({ sampling: {} });
    this.sdk.setRequestHandler(CreateMessageRequestSchema, (request, extra) => handler(request.params, this.contextFor(extra.requestId, extra.signal)));
    return this;
  }

  /**
   * Answers the server's `elicitation/create` requests (form mode) and
   * declares the `elicitation` capability. Call before {@link CancelAwareClient.connect}.
   */
  onElicitation(handler: ElicitationHandler): this {
    this.sdk.registerCapabilities({ elicitation: {} });
    this.sdk.setRequestHandler(ElicitRequestSchema, (request, extra) => handler(request.params, this.contextFor(extra.requestId, extra.signal)));
    return this;
  }

  /** Answers the server's `roots/list` requests and declares the `roots` capability. Call before {@link CancelAwareClient.connect}. */
  onRoots(handler: RootsHandler): this {
    this.sdk.registerCapabilities({ roots: {} });
    this.sdk.setRequestHandler(ListRootsRequestSchema, (_request, extra) => handler(this.contextFor(extra.requestId, extra.signal)));
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

  private contextFor(requestId: RequestId, sdkSignal: AbortSignal): ServerRequestContext {
    // Our guard's signal, not the SDK's: the SDK ignores a cancellation naming request id 0.
    return { requestId, signal: this.guard?.inbound(requestId)?.signal ?? sdkSignal };
  }

  /** Sends through the SDK without its signal or timeout, and implements both here. */
  private cancellable<T>(send: (sdkOptions: RequestOptions) => Promise<T>, options: CallOptions): Promise<T> {
    const guard = this.guard;
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new CallAbortedError('AbortError', signal.reason, undefined, false));
    const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let id: RequestId | undefined;
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        if (Number.isFinite(timeout)) timer = setTimeout(() => stop('TimeoutError', `timed out after ${timeout} ms`), timeout);
      };
      const settle = () => {
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort); // a later abort must not reach this finished call
      };
      const stop = (kind: 'AbortError' | 'TimeoutError', reason: unknown) => {
        if (done) return;
        settle();
        const cancelSent = id !== undefined && guard !== undefined && guard.cancel(id, reasonText(reason));
        reject(new CallAbortedError(kind, reason, id, cancelSent));
      };
      const onAbort = () => stop('AbortError', signal?.reason);
      const onprogress = options.onprogress;
      const sdkOptions: RequestOptions = {
        timeout: MAX_TIMER_MS,
        ...(onprogress && {
          onprogress: (p: Progress) => {
            if (done) return;
            if (options.resetTimeoutOnProgress) arm();
            onprogress(p);
          },
        }),
      };
      // The SDK sends the request synchronously inside the call, so the guard sees which id it got.
      const sent = guard ? guard.captureRequestId(() => send(sdkOptions)) : { result: send(sdkOptions), id: undefined };
      id = sent.id;
      sent.result.then(
        (value) => {
          if (done) return;
          settle();
          resolve(value);
        },
        (error: unknown) => {
          if (done) return;
          settle();
          reject(error);
        },
      );
      if (done) return;
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  }
}

function reasonText(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : String(reason);
}
