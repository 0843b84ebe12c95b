/**
 * The requests one end sent to its peer: the outbound half of the wire,
 * used by both guards (the server's requests to the client, the client's
 * requests to the server), so the sender's rules live in one place:
 * a request is recorded as it leaves and forgotten if sending fails;
 * a cancellation leaves only for a request that is still pending and is not
 * `initialize`; one we start ourselves also settles the local protocol
 * layer's wait; a response that arrives after it is accepted and discarded;
 * a cancelled entry is kept only for a bounded time.
 */
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/server';
import { cancelledLocally, cancelledNotification, cancelledRequestId } from './jsonrpc.js';
import type { InFlightEntry, InFlightRegistry, RequestId } from './registry.js';

/** State of a request we sent. */
export type OutboundState = 'pending' | 'cancellationRequested';

/** What the ledger reports to its owner's counters. */
export interface OutboundCounters {
  /** A cancellation left for a pending request. */
  cancelSent(): void;
  /** A cancellation was held back: the request was answered, already cancelled, unknown, or `initialize`. */
  cancelSuppressed(why: 'stale' | 'initialize'): void;
  /** A response arrived after we had requested cancellation. */
  lateResponse(): void;
}

/** A request this end sent, from send until its response (or, once cancelled, until its TTL ends). */
export class OutboundRequest implements InFlightEntry {
  readonly direction = 'outbound' as const;
  state: OutboundState = 'pending';
  /** Set once cancelled: drops the entry when its TTL ends. */
  timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ledger: OutboundLedger,
    readonly session: string,
    readonly id: RequestId,
    readonly method: string,
    /** The progress token the request carried, if any. */
    readonly progressToken: string | number | undefined,
    /** The peer's request this one was sent while handling (a tool call, for the server), if any. */
    readonly relatedRequestId: RequestId | undefined,
  ) {}

  /** Cancels towards the peer if still pending; see {@link OutboundLedger.sendCancel}. */
  stop(reason?: string): boolean {
    return this.ledger.sendCancel(this.id, reason);
  }
}

/** Options for {@link OutboundLedger}. */
export interface OutboundLedgerOptions {
  readonly registry: InFlightRegistry;
  readonly session: string;
  /** How long a cancelled entry waits for a late response before it is dropped. */
  readonly ttlMs: number;
  readonly counters: OutboundCounters;
  /** Sends a message to the peer (a cancellation the local protocol layer does not know about). */
  readonly toPeer: (message: JSONRPCMessage) => Promise<void>;
  /** Hands a message to the local protocol layer, as if from the peer (settles its wait for a request we cancelled). */
  readonly toLocal: (message: JSONRPCMessage) => void;
  /** A send to the peer failed. */
  readonly onError: (error: unknown) => void;
}

export class OutboundLedger {
  private readonly byProgressToken = new Map<string | number, OutboundRequest>();
  private closed = false;

  constructor(private readonly options: OutboundLedgerOptions) {}

  /**
   * Sends one of our requests with `send`, recorded first so its answer and
   * cancellation find it; forgotten again if it never left.
   */
  async send(
    message: JSONRPCRequest,
    relatedRequestId: RequestId | undefined,
    send: () => Promise<void>,
  ): Promise<void> {
    const entry = this.record(message, relatedRequestId);
    try {
      await send();
    } catch (error) {
      if (entry) this.forget(entry); // never left: nothing to wait for
      throw error;
    }
  }

  /**
   * The local protocol layer's own `notifications/cancelled` (its signal or
   * timeout): true if it may leave, by the same gate as ours.
   */
  gateCancel(message: JSONRPCMessage): boolean {
    const id = cancelledRequestId(message);
    return id !== undefined && this.mayCancel(id);
  }

  /** Records a request as it leaves. Undefined if a live entry already has its id. */
  record(message: JSONRPCRequest, relatedRequestId?: RequestId): OutboundRequest | undefined {
    const token = message.params?._meta?.progressToken;
    const entry = new OutboundRequest(this, this.options.session, message.id, message.method, token, relatedRequestId);
    if (!this.options.registry.add(entry)) return undefined;
    if (token !== undefined) this.byProgressToken.set(token, entry);
    return entry;
  }

  /** Our request with this id, while pending or waiting out its TTL after cancellation. */
  get(id: RequestId): OutboundRequest | undefined {
    const entry = this.options.registry.get('outbound', this.options.session, id);
    return entry instanceof OutboundRequest ? entry : undefined;
  }

  /**
   * The gate every cancellation passes, ours or the protocol layer's: true
   * (and the entry marked, its TTL armed) only for a pending request that is
   * not `initialize`, on an open connection.
   */
  mayCancel(id: RequestId): boolean {
    if (this.closed) return false;
    const entry = this.get(id);
    if (!entry || entry.state !== 'pending') {
      this.options.counters.cancelSuppressed('stale');
      return false;
    }
    if (entry.method === 'initialize') {
      this.options.counters.cancelSuppressed('initialize');
      return false;
    }
    entry.state = 'cancellationRequested';
    this.options.counters.cancelSent();
    entry.timer = setTimeout(() => this.forget(entry), this.options.ttlMs);
    entry.timer.unref();
    return true;
  }

  /** Cancels one of our requests if the gate lets it through. True if the notification was sent. */
  sendCancel(id: RequestId, reason?: string): boolean {
    if (!this.mayCancel(id)) return false;
    this.options.toPeer(cancelledNotification(id, reason)).catch(this.options.onError);
    this.options.toLocal(cancelledLocally(id, reason));
    return true;
  }

  /** A response from the peer: true if it answers a request we cancelled, and must be absorbed. */
  absorbResponse(id: RequestId): boolean {
    const entry = this.get(id);
    if (!entry) return false;
    this.forget(entry);
    if (entry.state !== 'cancellationRequested') return false;
    this.options.counters.lateResponse();
    return true;
  }

  /** True if a progress token belongs to a request we cancelled. */
  cancelledProgress(token: unknown): boolean {
    return (
      (typeof token === 'string' || typeof token === 'number') &&
      this.byProgressToken.get(token)?.state === 'cancellationRequested'
    );
  }

  /** Drops an entry (answered, never sent, or its TTL ran out). */
  forget(entry: OutboundRequest): void {
    clearTimeout(entry.timer);
    this.options.registry.remove(entry);
    if (entry.progressToken !== undefined && this.byProgressToken.get(entry.progressToken) === entry)
      this.byProgressToken.delete(entry.progressToken);
  }

  /** The connection closed: nothing is pending any more, and no cancellation can leave. */
  close(): void {
    this.closed = true;
    for (const entry of this.options.registry.inSession('outbound', this.options.session))
      if (entry instanceof OutboundRequest) this.forget(entry);
  }

  /** A snapshot of this ledger's live entries, pending or waiting out their TTL. */
  entries(): OutboundRequest[] {
    return this.options.registry
      .inSession('outbound', this.options.session)
      .filter((e): e is OutboundRequest => e instanceof OutboundRequest);
  }

  /** Entries in each state. */
  counts(): { pending: number; cancelling: number } {
    let pending = 0;
    let cancelling = 0;
    for (const e of this.options.registry.inSession('outbound', this.options.session)) {
      if (!(e instanceof OutboundRequest)) continue;
      if (e.state === 'pending') pending++;
      else cancelling++;
    }
    return { pending, cancelling };
  }
}
