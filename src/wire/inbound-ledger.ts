/**
 * The requests a peer sent us that we answer ourselves (the client's side:
 * sampling, elicitation, roots from the server). A peer's cancellation is
 * only ever looked up here, so it cannot touch one of our own requests that
 * shares the id; once it wins, our answer is never sent, and the entry waits
 * out a TTL so a late message for it is recognised.
 *
 * (The server's inbound side is its tool calls: see `server/tool-calls.ts`,
 * where a backend decides each cancellation.)
 */
import type { InFlightEntry, InFlightRegistry, RequestId } from './registry.js';

/** State of a request the peer sent us. */
export type InboundState = 'running' | 'cancelled';

/** A request the peer sent us, from arrival until our answer left (or was dropped). */
export class InboundRequest implements InFlightEntry {
  readonly direction = 'inbound' as const;
  state: InboundState = 'running';
  private readonly controller = new AbortController();

  constructor(
    readonly session: string,
    readonly id: RequestId,
    readonly method: string,
  ) {}

  /** Fires when the peer cancels this request (or the connection closes). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Marks the request cancelled and fires its signal. True if it was still running. */
  stop(reason?: string): boolean {
    if (this.state !== 'running') return false;
    this.state = 'cancelled';
    this.controller.abort(reason ?? 'cancelled by the server');
    return true;
  }
}

/** Options for {@link InboundLedger}. */
export interface InboundLedgerOptions {
  readonly registry: InFlightRegistry;
  readonly session: string;
  /** How long a cancelled entry is kept to recognise a late message for it. */
  readonly ttlMs: number;
}

export class InboundLedger {
  private readonly timers = new Map<InboundRequest, NodeJS.Timeout>();

  constructor(private readonly options: InboundLedgerOptions) {}

  /** The peer's request with this id, while we work on it (or it waits out its TTL after cancellation). */
  get(id: RequestId): InboundRequest | undefined {
    const entry = this.options.registry.get('inbound', this.options.session, id);
    return entry instanceof InboundRequest ? entry : undefined;
  }

  /** A request arrived. A cancelled entry waiting out its TTL must not capture the answer to a new request that reuses its id. */
  arrived(id: RequestId, method: string): void {
    const old = this.get(id);
    if (old?.state === 'cancelled') this.forget(old);
    this.options.registry.add(new InboundRequest(this.options.session, id, method));
  }

  /** The peer cancelled `id`: true if it was ours to stop and still running. */
  onPeerCancel(id: RequestId | undefined, reason: string | undefined): boolean {
    const entry = id === undefined ? undefined : this.get(id);
    if (!entry?.stop(reason)) return false;
    const timer = setTimeout(() => this.forget(entry), this.options.ttlMs);
    timer.unref();
    this.timers.set(entry, timer);
    return true;
  }

  /** Our answer to `id` is leaving: false if it must be dropped (the peer cancelled the request). */
  leaving(id: RequestId | undefined): boolean {
    const entry = id === undefined ? undefined : this.get(id);
    if (!entry) return true;
    this.forget(entry);
    return entry.state !== 'cancelled';
  }

  /** The connection closed: stop everything the peer asked of us. */
  close(reason: string): void {
    for (const entry of this.options.registry.inSession('inbound', this.options.session)) {
      if (!(entry instanceof InboundRequest)) continue;
      entry.stop(reason);
      this.forget(entry);
    }
  }

  private forget(entry: InboundRequest): void {
    clearTimeout(this.timers.get(entry));
    this.timers.delete(entry);
    this.options.registry.remove(entry);
  }
}
