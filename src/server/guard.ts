/**
 * The response guard: a Transport wrapper that sits where messages enter and
 * leave the process, a filter only: what each message means for a tool call
 * is decided by the connection's {@link ToolCalls}. Inbound, a second request
 * with an id still in flight is refused, every `tools/call` is reserved
 * before the SDK dispatches it, and `notifications/cancelled` goes to the
 * call it names (never to the SDK); outbound, a response
 * for a request whose cancellation won is dropped, whatever code path
 * produced it, and so are a finished call's late reports.
 *
 * It also keeps the server's outbound side of the registry: every request the
 * server sends to the client (sampling, elicitation, roots from a tool) is an
 * outbound entry linked to the tool call that caused it. A cancellation for
 * it leaves only while it is pending; a late answer to a cancelled one is
 * absorbed here instead of reaching the SDK as an "unknown message ID".
 */
import {
  ProtocolErrorCode as ErrorCode,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
  UnsupportedProtocolVersionError,
} from '@modelcontextprotocol/server';
import { MODERN_VERSIONS, unsupportedClaim } from './request-envelope.js';
import { asError, cancelledRequestId, cancelReason, isNotification, isRequest, isResponse } from '../wire/jsonrpc.js';
import { TransportWrapper } from '../wire/transport-wrapper.js';
import type { CallBackend } from '../backend/backend.js';
import { DEFAULTS } from '../defaults.js';
import { ToolCalls } from './tool-calls.js';
import type { ConnectionCalls, ToolCallHooks } from './call-lifecycle.js';
import { InputWaits } from '../asks/input-waits.js';
import { OutboundLedger } from '../wire/outbound-ledger.js';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import type { CancelSource } from '../state/cancel-source.js';
import type { TaskRunner } from '../tasks/runner.js';

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
  /** Response streams (HTTP responses, a stdio connection) closed because their peer did not read what they held (transport/output-budget.ts). */
  outputStreamsClosed: number;
  /** Gauge: output written to every response stream that its peer has not taken yet, in bytes, at the budget's last look. */
  unreadOutputBytes: number;
}

/** All wire counters at zero. */
export function newWireStats(): WireStats {
  return {
    responsesDropped: 0,
    progressDropped: 0,
    lateLogsDropped: 0,
    clientRequestsCancelled: 0,
    lateClientResponsesIgnored: 0,
    staleClientCancelsSuppressed: 0,
    outputStreamsClosed: 0,
    unreadOutputBytes: 0,
  };
}

/** Options for {@link GuardedTransport}. */
export interface GuardOptions {
  /**
   * How long a request to the client that we cancelled stays in the ledger
   * (state `cancellationRequested`) to absorb a late answer.
   * @default 30000
   */
  readonly cancelledTtlMs?: number;
  /** Told when a cancelled call's handler has settled (Streamable HTTP ends that POST's stream). */
  readonly hooks?: ToolCallHooks;
  /** Runs once a response to an inbound request has been handed to the inner transport. */
  readonly afterAnswered?: (id: RequestId) => void;
  /**
   * Who sends this connection's requests: a 2026 `requestState` is bound to it (the bearer token's principal over HTTP).
   * @default the session
   */
  readonly caller?: string;
  /** The lane of this connection's calls in the fair queue (the authorized caller over HTTP). @default the session */
  readonly turn?: string;
  /**
   * The backend's parked 2026 calls (src/asks/input-waits.ts): pass the one every guard of the backend shares.
   * @default a registry of this guard's own (fits a single connection)
   */
  readonly inputWaits?: InputWaits;
  /**
   * The task runner the server on this guard uses (its window decides, as a request arrives, whether a 2026 call may
   * become a task). Pass it where a request may arrive before the server is connected (stdio's entry makes its server
   * on the first message). @default the connected server's
   */
  readonly tasks?: TaskRunner;
  /** Whether the SDK aborting a request's signal may mean the client left (see ToolCalls): false for stdio. @default true */
  readonly abortMeansCancel?: boolean;
  /** The cancel reason for the calls a close leaves (see ToolCallOptions). @default 'transport closed' */
  readonly closeReason?: string;
  /** Their cancel source (see ToolCallOptions). @default 'session_close' */
  readonly closeSource?: CancelSource;
}

/**
 * The server's wire filter, under every transport a server is connected to: it registers each request in flight,
 * turns a cancel into the call's compare-exchange, and drops anything sent for a request that was cancelled.
 */
export class GuardedTransport extends TransportWrapper {
  /** This connection's requests, each one call object from arrival to settle: the table the server and transports use too. */
  readonly calls: ConnectionCalls;
  /** The ledger behind {@link clientRequests}, made on first use: most exchanges never ask the client anything. */
  #clientRequests: OutboundLedger | undefined;
  private readonly wire: WireStats;
  private readonly cancelledTtlMs: number;
  private readonly afterAnswered: ((id: RequestId) => void) | undefined;
  /** The inner transport closed: the cancellations its close cascades into have no one to go to. */
  private closed = false;
  /** Told once the inner transport closed, after its calls were cancelled (the session's 2025 tasks go with it). */
  onOwnerClosed: (() => void) | undefined;
  /** Once the inner transport closed: the plain tool calls it left unanswered (cancelled by the close). */
  unansweredAtClose = 0;

  constructor(
    inner: Transport,
    /** The backend's session key for this connection. */
    readonly session: string,
    private readonly backend: CallBackend,
    wire: WireStats,
    options: GuardOptions = {},
  ) {
    super(inner);
    this.afterAnswered = options.afterAnswered;
    this.calls = new ToolCalls(backend, session, wire, {
      ...(options.hooks && { hooks: options.hooks }),
      ...(options.caller !== undefined && { caller: options.caller }),
      ...(options.turn !== undefined && { turn: options.turn }),
      ...(options.tasks && { tasks: options.tasks }),
      ...(options.abortMeansCancel !== undefined && { abortMeansCancel: options.abortMeansCancel }),
      ...(options.closeReason !== undefined && { closeReason: options.closeReason }),
      ...(options.closeSource !== undefined && { closeSource: options.closeSource }),
      inputWaits: options.inputWaits ?? new InputWaits(backend),
    });
    this.wire = wire;
    this.cancelledTtlMs = options.cancelledTtlMs ?? DEFAULTS.cancelledTtlMs;
  }

  /** The server's requests to the client (sampling, elicitation, roots), each linked to its tool call. */
  get clientRequests(): OutboundLedger {
    return (this.#clientRequests ??= this.newClientRequests());
  }

  private newClientRequests(): OutboundLedger {
    const wire = this.wire;
    return new OutboundLedger({
      // Its own registry: the backend keeps inbound calls only, and may live in another process.
      registry: new InFlightRegistry(),
      session: this.session,
      ttlMs: this.cancelledTtlMs,
      counters: {
        cancelSent: () => wire.clientRequestsCancelled++,
        cancelSuppressed: () => wire.staleClientCancelsSuppressed++,
        lateResponse: () => wire.lateClientResponsesIgnored++,
      },
      // A stop the SDK does not know about (cancelAll): tell the client, and settle the SDK's wait.
      toPeer: (message) => this.inner.send(message),
      toLocal: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(asError(error)),
    });
  }

  protected innerClosed(): void {
    this.closed = true; // the cascade below has no one left to tell
    this.unansweredAtClose = this.calls.closed();
    this.#clientRequests?.close();
    this.onOwnerClosed?.();
  }

  /** The 2.x SDK hands its version list to the transport it connects (a 2025 HTTP session checks the header against it). */
  setSupportedProtocolVersions(versions: string[]): void {
    (this.inner as { setSupportedProtocolVersions?: (v: string[]) => void }).setSupportedProtocolVersions?.(versions);
  }

  /** A transport that opens one exchange per request (2026 HTTP) says so; the SDK reads it through us. */
  get hasPerRequestStream(): boolean | undefined {
    return (this.inner as { hasPerRequestStream?: boolean }).hasPerRequestStream;
  }

  /**
   * Ends this connection's work without closing it: cancels its tool calls
   * and, towards the client, its pending requests (settling the SDK's wait
   * for each with an error).
   */
  cancelAll(reason: string, source: CancelSource = 'session_close'): void {
    this.backend.cancelSession(this.session, reason, source);
    if (this.#clientRequests) for (const entry of this.#clientRequests.entries()) entry.stop(reason);
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    // An answer to one of our requests to the client that we had cancelled: accepted, never used.
    if (isResponse(message) && this.#clientRequests?.absorbResponse(message.id as RequestId)) return;
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      // Never answered, never forwarded: the cancel goes to the call, and the SDK never hears of it.
      const id = cancelledRequestId(message);
      if (id !== undefined) this.calls.cancel(id, cancelReason(message), 'notification');
      return;
    }
    if (isRequest(message)) {
      const claimed = unsupportedClaim(message.params);
      if (claimed !== undefined) {
        // 2026-07-28: a revision we do not serve is refused with the ones we do, whatever the request.
        const refusal = new UnsupportedProtocolVersionError({ supported: [...MODERN_VERSIONS], requested: claimed });
        void this.inner
          .send({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: refusal.code, message: refusal.message, data: refusal.data },
          } as never)
          .catch((e: unknown) => this.onerror?.(asError(e)));
        return;
      }
      const admission = this.calls.admit(message.id, message.method, message.params);
      if (admission.kind === 'duplicate') return this.refuseDuplicate(message.id, admission.message);
      if (admission.kind === 'refuse') {
        const error = {
          code: admission.code,
          message: admission.message,
          ...(admission.data !== undefined && { data: admission.data }),
        };
        void this.answer({ jsonrpc: '2.0', id: message.id, error }).catch((e: unknown) => this.onerror?.(asError(e)));
        return;
      }
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
  private refuseDuplicate(id: RequestId, message: string): void {
    // Straight to the inner transport: afterAnswered would settle the first request's HTTP stream.
    const refusal: JSONRPCErrorResponse = { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message } };
    void this.inner.send(refusal).catch((e: unknown) => this.onerror?.(asError(e)));
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isRequest(message)) {
      // A request to the client, linked to the tool call it was sent for.
      return this.clientRequests.send(message, options?.relatedRequestId, () => this.inner.send(message, options));
    }
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      // The server only ever cancels its own requests to the client: outbound entries only, and only while pending.
      if (!this.clientRequests.gateCancel(message) || this.closed) return; // gate first: it counts, as before the close
      return this.inner.send(message, options);
    }
    if (isResponse(message)) {
      if (!this.calls.leaving(message.id as RequestId)) return;
      return this.answer('error' in message ? withPlainMessage(message) : message, options);
    }
    if (
      isNotification(message) &&
      options?.relatedRequestId !== undefined &&
      (message.method === 'notifications/progress' || message.method === 'notifications/message')
    ) {
      if (
        !this.calls.mayReport(
          options.relatedRequestId,
          message.method === 'notifications/progress' ? 'progress' : 'log',
        )
      )
        return;
    }
    return this.inner.send(message, options);
  }

  /** Not async itself: without afterAnswered (stdio) a response costs no promise of its own. */
  private answer(message: JSONRPCResultResponse | JSONRPCErrorResponse, options?: TransportSendOptions): Promise<void> {
    if (!this.afterAnswered) {
      try {
        return this.inner.send(message, options);
      } catch (error) {
        return Promise.reject(asError(error)); // a throw still reaches the caller as a rejection, as from an async method
      }
    }
    return this.answerThen(this.afterAnswered, message, options);
  }

  private async answerThen(
    afterAnswered: (id: RequestId) => void,
    message: JSONRPCResultResponse | JSONRPCErrorResponse,
    options?: TransportSendOptions,
  ): Promise<void> {
    try {
      await this.inner.send(message, options);
    } finally {
      afterAnswered(message.id as RequestId);
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
