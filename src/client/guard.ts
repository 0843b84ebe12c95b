/**
 * The client's end of the wire: a Transport wrapper that keeps the client's
 * in-flight registry, the mirror of the server's {@link GuardedTransport}.
 *
 * Outbound (we asked the server): every request is registered when it is
 * sent. A `notifications/cancelled` leaves only for an entry that is still
 * pending and is not `initialize`; the entry then waits in
 * `cancellationRequested` for a bounded time, and a response that arrives
 * meanwhile is accepted here and discarded instead of reaching the SDK (which
 * would report "unknown message ID").
 *
 * Inbound (the server asked us: sampling, elicitation, roots): every request
 * gets an entry with its own AbortController. A server cancellation is only
 * ever looked up among these inbound entries, so it cannot touch one of our
 * own requests that happens to share the id; once it wins, our answer to
 * that request is never sent.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULTS } from '../defaults.js';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import { InboundLedger, type InboundRequest } from '../wire/inbound-ledger.js';
import { OutboundLedger, type OutboundRequest } from '../wire/outbound-ledger.js';
import { asError, cancelledRequestId, cancelReason, isNotification, isRequest, isResponse } from '../wire/jsonrpc.js';
import { TransportWrapper } from '../wire/transport-wrapper.js';

export { InboundRequest, type InboundState } from '../wire/inbound-ledger.js';

/** Default for {@link ClientGuardOptions.cancelledTtlMs}. */
export const DEFAULT_CANCELLED_TTL_MS = DEFAULTS.cancelledTtlMs;

/** Counters kept at the client's end of the wire. */
export interface ClientCancelStats {
  /** `notifications/cancelled` sent for our own requests that were still pending. */
  cancelsSent: number;
  /** Cancellations not sent because the request had already been answered (or was never ours). */
  staleCancelsSuppressed: number;
  /** Cancellations of `initialize` not sent: a client must not cancel it. */
  initializeCancelsSuppressed: number;
  /** Responses that arrived after we had requested cancellation: accepted on the wire, never used. */
  lateResponsesIgnored: number;
  /** Progress notifications for requests we had cancelled, discarded. */
  lateProgressIgnored: number;
  /** Server requests (sampling, elicitation, roots) that the server cancelled while we worked on them. */
  serverCancelsApplied: number;
  /** Server cancellations naming no request of the server's that we still work on (unknown, answered, or one of our own ids). */
  serverCancelsIgnored: number;
  /** Our answers to server requests the server had cancelled: not sent. */
  responsesDropped: number;
}

/** A fresh set of zeroed counters. */
export function emptyClientStats(): ClientCancelStats {
  return {
    cancelsSent: 0,
    staleCancelsSuppressed: 0,
    initializeCancelsSuppressed: 0,
    lateResponsesIgnored: 0,
    lateProgressIgnored: 0,
    serverCancelsApplied: 0,
    serverCancelsIgnored: 0,
    responsesDropped: 0,
  };
}

/** Options for {@link ClientGuard}. */
export interface ClientGuardOptions {
  /**
   * How long an outbound entry whose cancellation we requested (and an
   * inbound one the server cancelled) is kept to recognise a late message
   * for it. After that it is dropped, so memory stays flat however many
   * requests are cancelled. Default 30 s.
   */
  readonly cancelledTtlMs?: number;
  /** The registry to record entries in. Default: a registry of this guard's own. */
  readonly registry?: InFlightRegistry;
  /** This connection's session key in the registry. Default: a fresh `client-<n>`. */
  readonly session?: string;
  /** Counters to add to (shared across reconnections). Default: fresh ones. */
  readonly stats?: ClientCancelStats;
}

let nextSession = 1;

/**
 * Wraps a client transport (stdio, Streamable HTTP, in-memory) to keep the
 * client's in-flight registry at the wire. Works under a plain SDK `Client`
 * too: stale cancellations and errors for late responses go away, whatever
 * code path caused them. {@link CancelAwareClient} builds on it.
 */
export class ClientGuard extends TransportWrapper {
  readonly registry: InFlightRegistry;
  readonly session: string;
  readonly stats: ClientCancelStats;
  /** Our requests to the server. */
  private readonly outboundLedger: OutboundLedger;
  /** The server's requests to us. */
  private readonly inboundLedger: InboundLedger;
  private capture: ((id: RequestId) => void) | undefined;

  constructor(
    inner: Transport,
    options: ClientGuardOptions = {},
  ) {
    super(inner);
    this.registry = options.registry ?? new InFlightRegistry();
    this.session = options.session ?? `client-${nextSession++}`;
    this.stats = options.stats ?? emptyClientStats();
    const ttlMs = options.cancelledTtlMs ?? DEFAULT_CANCELLED_TTL_MS;
    const stats = this.stats;
    this.inboundLedger = new InboundLedger({ registry: this.registry, session: this.session, ttlMs });
    this.outboundLedger = new OutboundLedger({
      registry: this.registry,
      session: this.session,
      ttlMs,
      counters: {
        cancelSent: () => stats.cancelsSent++,
        cancelSuppressed: (why) => (why === 'initialize' ? stats.initializeCancelsSuppressed++ : stats.staleCancelsSuppressed++),
        lateResponse: () => stats.lateResponsesIgnored++,
      },
      toPeer: (message) => this.inner.send(message),
      // The SDK still waits for this id: settle it here; the real response (if any) is absorbed in receive().
      toLocal: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(asError(error)),
    });
  }

  protected innerClosed(): void {
    this.release('connection closed');
  }

  /** Our request with this id, if it is pending or waiting out its TTL after cancellation. */
  outbound(id: RequestId): OutboundRequest | undefined {
    return this.outboundLedger.get(id);
  }

  /** The server's request with this id, while we work on it. */
  inbound(id: RequestId): InboundRequest | undefined {
    return this.inboundLedger.get(id);
  }

  /**
   * Runs `send` (which must send exactly one request synchronously, as the
   * SDK's `request()` does) and reports the id that request got.
   */
  captureRequestId<T>(send: () => T): { result: T; id: RequestId | undefined } {
    let id: RequestId | undefined;
    const previous = this.capture;
    this.capture = (sent) => (id ??= sent);
    try {
      return { result: send(), id };
    } finally {
      this.capture = previous;
    }
  }

  /**
   * Cancels one of our requests towards the server: only if its entry is
   * still pending and it is not `initialize`. Sends `notifications/cancelled`
   * with the original id and the reason, marks the entry
   * `cancellationRequested`, and settles the SDK's own waiter for it with a
   * local error so nothing leaks. True if the notification was sent.
   */
  cancel(id: RequestId, reason?: string): boolean {
    return this.outboundLedger.sendCancel(id, reason);
  }

  /** Outbound entries in each state, for stats. */
  counts(): { pending: number; cancelling: number } {
    return this.outboundLedger.counts();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isRequest(message)) {
      this.capture?.(message.id);
      return this.outboundLedger.send(message, undefined, () => this.inner.send(message, options));
    } else if (isNotification(message) && message.method === 'notifications/cancelled') {
      // The SDK's own cancellation (its signal or timeout): the same check as ours.
      if (!this.outboundLedger.gateCancel(message)) return;
    } else if (isResponse(message) && !this.inboundLedger.leaving(message.id as RequestId | undefined)) {
      this.stats.responsesDropped++;
      return;
    }
    return this.inner.send(message, options);
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (isResponse(message)) {
      // Completion may have won the race before our notice arrived: accept, do not use.
      if (this.outboundLedger.absorbResponse(message.id as RequestId)) return;
    } else if (isRequest(message)) {
      this.inboundLedger.arrived(message.id, message.method);
    } else if (isNotification(message) && message.method === 'notifications/cancelled') {
      // Only the server's own requests can be cancelled by the server: inbound entries only.
      if (!this.inboundLedger.onPeerCancel(cancelledRequestId(message), cancelReason(message))) {
        this.stats.serverCancelsIgnored++;
        return;
      }
      this.stats.serverCancelsApplied++;
    } else if (isNotification(message) && message.method === 'notifications/progress') {
      if (this.outboundLedger.cancelledProgress((message.params as { progressToken?: unknown } | undefined)?.progressToken)) {
        this.stats.lateProgressIgnored++;
        return;
      }
    }
    this.onmessage?.(message, extra);
  }

  /** The connection closed: nothing more can arrive or leave; stop what the server asked of us. */
  private release(reason: string): void {
    this.inboundLedger.close(reason);
    this.outboundLedger.close();
  }
}
