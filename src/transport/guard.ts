/**
 * The response guard: a Transport wrapper that sits where messages enter and
 * leave the process. Inbound, it keeps every request id in flight (refusing
 * a second request with an id still in flight), registers every `tools/call`
 * before the SDK dispatches it and decides `notifications/cancelled` through
 * the executor's state machine; outbound, it drops any response for a
 * request whose cancellation won, whatever code path produced it.
 *
 * It also keeps the server's outbound side of the registry: every request the
 * server sends to the client (sampling, elicitation, roots from a tool) is an
 * outbound entry linked to the tool call that caused it. A cancellation for
 * it leaves only while it is pending; a late answer to a cancelled one is
 * absorbed here instead of reaching the SDK as an "unknown message ID".
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { asError, cancelledNotification, cancelledRequestId, isNotification, isRequest, isResponse, TransportWrapper } from './wrapper.js';
import type { CallBackend, CallHandle } from '../backend/backend.js';
import { DuplicateRequestError } from '../errors.js';
import { callParamsProblem } from '../server/call-params.js';
import { OutboundLedger } from '../registry/outbound.js';
import { InFlightRegistry, type RequestId } from '../registry/registry.js';

/** Counted at the wire, shared by every connection of a server (start from {@link newWireStats}). */
export interface WireStats {
  /** Responses produced for a cancelled request and stopped here. */
  responsesDropped: number;
  /** Progress notifications stopped because their request had ended. */
  progressDropped: number;
  /** Log notifications (`notifications/message`) of a tool call stopped because the call had ended. */
  lateLogsDropped: number;
  /** Requests to the client (sampling, elicitation, roots) cancelled towards it. */
  clientRequestsCancelled: number;
  /** Client answers that arrived after we cancelled their request: accepted, never used. */
  lateClientResponsesIgnored: number;
  /** Cancellations of requests the client had already answered (or already cancelled): not sent. */
  staleClientCancelsSuppressed: number;
}

/** All wire counters at zero. */
export function newWireStats(): WireStats {
  return { responsesDropped: 0, progressDropped: 0, lateLogsDropped: 0, clientRequestsCancelled: 0, lateClientResponsesIgnored: 0, staleClientCancelsSuppressed: 0 };
}

/** Options for {@link GuardedTransport}. */
export interface GuardOptions {
  /**
   * How long a request to the client that we cancelled stays in the registry
   * (state `cancellationRequested`) to absorb a late answer. Default 30 s.
   */
  readonly cancelledTtlMs?: number;
}

/** Marks an inbound request other than a tool call in {@link GuardedTransport}'s in-flight map. */
const NOT_A_JOB = null;

export class GuardedTransport extends TransportWrapper {
  /**
   * Every inbound request of this connection, from arrival until its response
   * left (or was dropped): a tool call's job, or {@link NOT_A_JOB}. Only a
   * request whose id is absent here reaches the SDK, which keys its own
   * bookkeeping (abort controllers, HTTP streams) by id alone.
   */
  private readonly requests = new Map<RequestId, CallHandle | typeof NOT_A_JOB>();
  /**
   * Runs once the handler of a cancelled call has settled. Streamable HTTP
   * uses it to end that POST's response stream, which would otherwise wait
   * forever for a response that must never come.
   */
  afterCancelled?: (id: RequestId) => void;
  /** Runs once a response to an inbound request has been handed to the inner transport. */
  afterAnswered?: (id: RequestId) => void;

  /** The server's requests to the client (sampling, elicitation, roots), each linked to its tool call. */
  readonly clientRequests: OutboundLedger;
  private closed = false;

  constructor(
    inner: Transport,
    /** The registry's session key for this connection. */
    readonly session: string,
    private readonly backend: CallBackend,
    private readonly wire: WireStats,
    options: GuardOptions = {},
  ) {
    super(inner);
    this.clientRequests = new OutboundLedger({
      // Its own registry: the backend keeps inbound calls only, and may live in another process.
      registry: new InFlightRegistry(),
      session,
      ttlMs: options.cancelledTtlMs ?? 30_000,
      counters: {
        cancelSent: () => wire.clientRequestsCancelled++,
        cancelSuppressed: () => wire.staleClientCancelsSuppressed++,
        lateResponse: () => wire.lateClientResponsesIgnored++,
      },
      // A stop the SDK does not know about (e.g. the executor closing): tell the client, and settle the SDK's wait.
      sendCancel: (id, reason) => {
        if (!this.closed) void this.inner.send(cancelledNotification(id, reason)).catch((error: unknown) => this.onerror?.(asError(error)));
        this.onmessage?.({ jsonrpc: '2.0', id, error: { code: ErrorCode.RequestTimeout, message: `request cancelled: ${reason ?? 'no reason given'}` } });
      },
    });
  }

  protected innerClosed(): void {
    this.closed = true; // the cascade below has no one left to tell
    this.backend.cancelSession(this.session, 'transport closed');
    this.clientRequests.close();
  }

  /**
   * Ends this connection's work without closing it: cancels its tool calls
   * and, towards the client, its pending requests (settling the SDK's wait
   * for each with an error).
   */
  cancelAll(reason: string): void {
    this.backend.cancelSession(this.session, reason);
    for (const entry of this.clientRequests.entries()) entry.stop(reason);
  }

  /** The job reserved for an inbound tool call, for the request handler. */
  jobFor(id: RequestId): CallHandle | undefined {
    return this.requests.get(id) ?? undefined;
  }

  /** Whether a request of this connection with this id has not been answered (or dropped) yet. */
  isInFlight(id: RequestId): boolean {
    return this.requests.has(id);
  }

  /** Called when the tool-call handler has settled; the SDK has sent (or suppressed) its response by the next macrotask. */
  settled(id: RequestId): void {
    const job = this.requests.get(id);
    if (!job) return;
    setImmediate(() => {
      if (this.requests.get(id) !== job) return;
      this.requests.delete(id);
      if (job.state === 'cancelled') this.afterCancelled?.(id);
    });
  }

  /**
   * Cancels one of this connection's inbound requests (a notification, a
   * dropped HTTP stream). If it loses, the SDK never hears of it and the
   * normal response goes out. If it wins, the SDK is told when the call's
   * handler ends ({@link handlerCancelled}), not now: the next queued call is
   * being handed the freed slot at this moment, and the SDK's own cancel
   * handling would only delay it. Until then the guard drops anything sent
   * for the call.
   */
  cancel(id: RequestId, reason?: string): boolean {
    const r = this.backend.cancel(this.session, id, reason);
    return r === 'cancelled-queued' || r === 'cancelled-running';
  }

  /**
   * The tool-call handler of a cancelled call is about to end: tell the SDK,
   * so it sends nothing for it. The SDK's cancel handler runs a microtask
   * ahead of the handler's rejection, so it is aborted before it would answer.
   */
  handlerCancelled(id: RequestId): void {
    this.onmessage?.(cancelledNotification(id, 'request cancelled'));
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    // An answer to one of our requests to the client that we had cancelled: accepted, never used.
    if (isResponse(message) && this.clientRequests.absorbResponse(message.id as RequestId)) return;
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      // Never answered, never forwarded as is: only a winning cancellation reaches the SDK.
      const id = cancelledRequestId(message);
      const reason = (message.params as { reason?: unknown } | undefined)?.reason;
      if (id !== undefined) this.cancel(id, typeof reason === 'string' ? reason : undefined);
      return;
    }
    if (isRequest(message)) {
      if (this.requests.has(message.id)) return this.refuseDuplicate(message.id);
      if (message.method !== 'tools/call') this.requests.set(message.id, NOT_A_JOB);
      else if (!this.admitCall(message.id, message.params)) return;
    }
    this.onmessage?.(message, extra);
  }

  /**
   * A second request with the id of one still in flight. JSON-RPC gives no
   * better way to answer it than with that same id, which a client that
   * reused the id may match to its first request; but the first one's entry,
   * response and cancellation stay exactly as they were, and the SDK (which
   * would overwrite its own state for the id) never sees the second.
   */
  private refuseDuplicate(id: RequestId): void {
    // Straight to the inner transport: afterAnswered would settle the first request's HTTP stream.
    const refusal: JSONRPCErrorResponse = {
      jsonrpc: '2.0',
      id,
      error: { code: ErrorCode.InvalidRequest, message: new DuplicateRequestError(this.session, id).message },
    };
    void this.inner.send(refusal).catch((e: unknown) => this.onerror?.(asError(e)));
  }

  /** Registers a tool call, or answers it with an error; true if it may go on to the SDK. */
  private admitCall(id: RequestId, params: unknown): boolean {
    const problem = callParamsProblem(params);
    if (problem !== undefined) {
      void this.answer({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: problem } }).catch((e: unknown) => this.onerror?.(asError(e)));
      return false;
    }
    try {
      this.requests.set(id, this.backend.reserve(this.session, id));
      return true;
    } catch (error) {
      // The executor's registry still holds the id (a cancelled call whose worker has not returned yet), or it is closing.
      const duplicate = error instanceof DuplicateRequestError;
      void this.answer({
        jsonrpc: '2.0',
        id,
        error: { code: duplicate ? ErrorCode.InvalidRequest : ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) },
      }).catch((e: unknown) => this.onerror?.(asError(e)));
      return false;
    }
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isRequest(message)) {
      // A request to the client, linked to the tool call it was sent for.
      const entry = this.clientRequests.record(message, options?.relatedRequestId);
      try {
        return await this.inner.send(message, options);
      } catch (error) {
        if (entry) this.clientRequests.forget(entry); // never left: nothing to wait for
        throw error;
      }
    }
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      // The server only ever cancels its own requests to the client: outbound entries only, and only while pending.
      const id = cancelledRequestId(message);
      if (id === undefined || !this.clientRequests.mayCancel(id) || this.closed) return;
      return this.inner.send(message, options);
    }
    if (isResponse(message)) {
      const id = message.id as RequestId;
      const job = this.requests.get(id);
      this.requests.delete(id);
      if (job) {
        if (job.state === 'cancelled') {
          this.wire.responsesDropped++;
          // The SDK answered anyway: it ignores cancels of falsy ids (0, ""), so handlerCancelled could not stop it.
          // This took the entry settled() would have seen: run the hook here, or the POST's stream never ends.
          this.afterCancelled?.(id);
          return;
        }
        job.abandon(); // a response before the job started (e.g. the SDK rejected the params): release its reservation
      }
      return this.answer('error' in message ? withPlainMessage(message) : message, options);
    } else if (isNotification(message) && options?.relatedRequestId !== undefined && (message.method === 'notifications/progress' || message.method === 'notifications/message')) {
      // A call's reports may go out while it runs, and after it claimed its response (reports sent before it); never after.
      const job = this.requests.get(options.relatedRequestId);
      const state = job?.state;
      if (job && state !== 'running' && state !== 'responding') {
        if (message.method === 'notifications/progress') this.wire.progressDropped++;
        else this.wire.lateLogsDropped++;
        return;
      }
    }
    return this.inner.send(message, options);
  }

  private async answer(message: JSONRPCResultResponse | JSONRPCErrorResponse, options?: TransportSendOptions): Promise<void> {
    if (!this.afterAnswered) return this.inner.send(message, options);
    try {
      await this.inner.send(message, options);
    } finally {
      this.afterAnswered(message.id as RequestId);
    }
  }
}

/**
 * The SDK puts an McpError's `message` on the wire, and that message already
 * starts with "MCP error <code>: "; the client's SDK adds the same prefix
 * again when it rebuilds the error. Sent without it, the error reads once.
 */
function withPlainMessage(response: JSONRPCErrorResponse): JSONRPCErrorResponse {
  const prefix = `MCP error ${response.error.code}: `;
  if (typeof response.error.message !== 'string' || !response.error.message.startsWith(prefix)) return response;
  return { ...response, error: { ...response.error, message: response.error.message.slice(prefix.length) } };
}
