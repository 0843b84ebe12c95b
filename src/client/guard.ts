/**
 * The client's end of the wire: a Transport wrapper that keeps the client's
 * in-flight registry, the mirror of the server's {@link GuardedTransport}.
 *
 * Outbound (we asked the server): every request is registered when it is
 * sent. A cancellation leaves only for an entry that is still pending and is
 * not `initialize`; the entry then waits in `cancellationRequested` for a
 * bounded time, and a response that arrives meanwhile is accepted here and
 * discarded instead of reaching the SDK (which would report "unknown
 * message ID"). How the cancellation travels follows the era and the
 * transport: `notifications/cancelled` (2025, and 2026 over stdio), or the
 * request's own response stream closed (2026 over Streamable HTTP, where
 * that is the cancellation signal).
 *
 * Inbound (the server asked us: sampling, elicitation, roots): every request
 * gets an entry with its own AbortController. A server cancellation is only
 * ever looked up among these inbound entries, so it cannot touch one of our
 * own requests that happens to share the id; once it wins, our answer to
 * that request is never sent.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { DEFAULTS } from '../defaults.js';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import { InboundLedger, type InboundRequest } from '../wire/inbound-ledger.js';
import { OutboundLedger, type OutboundRequest } from '../wire/outbound-ledger.js';
import { asError, cancelledRequestId, cancelReason, isNotification, isRequest, isResponse } from '../wire/jsonrpc.js';
import { OwnRequests, type WireEra } from './own-requests.js';
import { RequestTags, type RequestTag } from './request-tags.js';

export type { RequestTag } from './request-tags.js';

export type { WireEra } from './own-requests.js';

/** The counters a {@link ClientGuard} keeps at the client's end of the wire. */
export interface ClientCancelStats {
  /** Cancellations sent for our own requests that were still pending (`notifications/cancelled` or a closed stream). */
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

export { InboundRequest, type InboundState } from '../wire/inbound-ledger.js';

/** Default for {@link ClientGuardOptions.cancelledTtlMs}. */
export const DEFAULT_CANCELLED_TTL_MS = DEFAULTS.cancelledTtlMs;

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
export class ClientGuard implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly registry: InFlightRegistry;
  readonly session: string;
  readonly stats: ClientCancelStats;
  /** Requests of our own outside the SDK (tasks), with their own ids. */
  readonly own: OwnRequests;
  /** Our requests to the server. */
  private readonly outboundLedger: OutboundLedger;
  /** The server's requests to us. */
  private readonly inboundLedger: InboundLedger;
  private era: WireEra = { modern: false };
  /** Tags of the requests the SDK sends for our callers. */
  private readonly tags: RequestTags;
  /** 2026 HTTP: each pending request's stream, closed to cancel it. */
  private readonly streams = new Map<RequestId, AbortController>();

  constructor(
    readonly inner: Transport,
    options: ClientGuardOptions = {},
  ) {
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
        cancelSuppressed: (why) =>
          why === 'initialize' ? stats.initializeCancelsSuppressed++ : stats.staleCancelsSuppressed++,
        lateResponse: () => stats.lateResponsesIgnored++,
      },
      toPeer: (message) => this.cancelOnWire(message),
      // The SDK still waits for this id: settle it here; the real response (if any) is absorbed in receive().
      toLocal: (message) => this.deliver(message),
      onError: (error) => this.onerror?.(asError(error)),
    });
    this.own = new OwnRequests(
      (message) => this.send(message),
      () => this.era,
    );
    this.tags = new RequestTags(
      (id, reason) => this.sendCancel(id, reason),
      (message) => this.deliver(message),
    );
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** Whether each request has a response stream of its own (Streamable HTTP). */
  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** Tells the guard the negotiated era (after connect): it decides how cancellations travel and what they carry. */
  setEra(era: WireEra): void {
    this.era = era;
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.release('connection closed');
      this.onclose?.();
    };
    await this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
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
   * A tag for one request the SDK will send (its `_meta` goes into the
   * request's params): the guard learns the id the request got when it
   * leaves, however late that is (the SDK may await before sending). A tag
   * cancelled before its request left stops it leaving.
   */
  tag(): RequestTag {
    return this.tags.tag();
  }

  /**
   * Cancels one of our requests towards the server: only if its entry is
   * still pending and it is not `initialize`. Marks the entry
   * `cancellationRequested`, sends the era's cancellation (see the file
   * header), and settles the SDK's own waiter for it with a local error so
   * nothing leaks. True if the cancellation was sent.
   */
  sendCancel(id: RequestId, reason?: string): boolean {
    return this.outboundLedger.sendCancel(id, reason);
  }

  /** Outbound entries in each state, for stats. */
  counts(): { pending: number; cancelling: number } {
    return this.outboundLedger.counts();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isRequest(message)) {
      const request = this.tags.untag(message);
      if (request === 'dropped') return;
      let sendOptions = options;
      let stream: AbortController | undefined;
      if (this.era.modern && this.inner.hasPerRequestStream === true) {
        // Our own handle on the stream as well as the SDK's: closing it is how we cancel.
        stream = new AbortController();
        this.streams.set(request.id, stream);
        sendOptions = {
          ...options,
          requestSignal: options?.requestSignal
            ? AbortSignal.any([options.requestSignal, stream.signal])
            : stream.signal,
        };
      }
      try {
        return await this.outboundLedger.send(request, undefined, () => this.inner.send(request, sendOptions));
      } catch (error) {
        // A stream we closed on purpose is a cancellation, not a failure.
        if (stream?.signal.aborted) return;
        this.streams.delete(request.id);
        throw error;
      }
    } else if (isNotification(message) && message.method === 'notifications/cancelled') {
      // The SDK's own cancellation (its signal or timeout): the same check as ours.
      if (!this.outboundLedger.gateCancel(message)) return;
    } else if (isResponse(message) && !this.inboundLedger.leaving(message.id)) {
      this.stats.responsesDropped++;
      return;
    }
    return this.inner.send(message, options);
  }

  /** The ledger's cancellation of a pending request, on the wire of this era. */
  private cancelOnWire(message: JSONRPCMessage): Promise<void> {
    const id = cancelledRequestId(message)!;
    const stream = this.streams.get(id);
    if (stream) {
      this.streams.delete(id);
      stream.abort(cancelReason(message) ?? 'cancelled');
      return Promise.resolve();
    }
    if (!this.era.modern) return this.inner.send(message);
    const params = (message as { params: Record<string, unknown> }).params;
    return this.inner.send({ ...message, params: { ...params, _meta: { ...this.era.envelope } } });
  }

  private deliver(message: JSONRPCMessage): void {
    if (isResponse(message) && this.own.settle(message)) return;
    this.onmessage?.(message);
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (isResponse(message)) {
      this.streams.delete(message.id as RequestId);
      // Completion may have won the race before our notice arrived: accept, do not use.
      if (this.outboundLedger.absorbResponse(message.id as RequestId)) return;
      if (this.own.settle(message)) return;
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
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
      if (this.outboundLedger.cancelledProgress(token)) {
        this.stats.lateProgressIgnored++;
        return;
      }
      if (this.own.progress(token, message.params as Record<string, unknown>)) return;
    } else if (isNotification(message) && this.own.notification(message.method, message.params)) {
      return;
    }
    this.onmessage?.(message, extra);
  }

  /** The connection closed: nothing more can arrive or leave; stop what the server asked of us. */
  private release(reason: string): void {
    this.inboundLedger.close(reason);
    this.outboundLedger.close();
    this.own.close();
    this.streams.clear();
  }
}
