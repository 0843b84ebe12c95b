/**
 * The in-flight registry: every request that is still being worked on, keyed
 * by direction, session and id. A peer's cancellation is only ever looked up
 * among the inbound entries of its own session, so it cannot reach a request
 * we issued, nor one from another session that happens to share the id.
 */

import type { CancelSource } from '../state/cancel-source.js';

/** A JSON-RPC request id. `7` and `"7"` are different ids. */
export type RequestId = string | number;

/** Inbound: the peer asked us. Outbound: we asked the peer. */
export type Direction = 'inbound' | 'outbound';

/** What every registry entry carries. */
export interface InFlightEntry {
  readonly direction: Direction;
  /** The session or connection the request belongs to. */
  readonly session: string;
  readonly id: RequestId;
  /** A human-readable state, for stats and debugging. */
  readonly state: string;
  /**
   * Asks the underlying operation to stop. Returns true if this call won the
   * right to stop it (the request will get no response from us), false if it
   * was already past the point of cancelling. `source` says who asked (an
   * inbound call's metrics and span name it; other entries ignore it).
   */
  stop(reason?: string, source?: CancelSource): boolean;
}

/** A map of in-flight requests with direction and session in every key. */
export class InFlightRegistry {
  private readonly bySession: Record<Direction, Map<string, Map<RequestId, InFlightEntry>>> = {
    inbound: new Map(),
    outbound: new Map(),
  };
  private count = 0;

  /** Adds an entry. False if a live entry already has the same direction, session and id. */
  add(entry: InFlightEntry): boolean {
    let ids = this.bySession[entry.direction].get(entry.session);
    if (!ids) {
      ids = new Map();
      this.bySession[entry.direction].set(entry.session, ids);
    }
    if (ids.has(entry.id)) return false;
    ids.set(entry.id, entry);
    this.count++;
    return true;
  }

  /** The live entry for this exact key, if any. */
  get(direction: Direction, session: string, id: RequestId): InFlightEntry | undefined {
    return this.bySession[direction].get(session)?.get(id);
  }

  /** Removes this entry (and not another that reused its key). */
  remove(entry: InFlightEntry): void {
    const ids = this.bySession[entry.direction].get(entry.session);
    if (ids?.get(entry.id) !== entry) return;
    ids.delete(entry.id);
    this.count--;
    if (ids.size === 0) this.bySession[entry.direction].delete(entry.session);
  }

  /** A snapshot of one session's entries in one direction. */
  inSession(direction: Direction, session: string): InFlightEntry[] {
    return [...(this.bySession[direction].get(session)?.values() ?? [])];
  }

  /** A snapshot of every live entry. */
  all(): InFlightEntry[] {
    const out: InFlightEntry[] = [];
    for (const byId of [...this.bySession.inbound.values(), ...this.bySession.outbound.values()])
      out.push(...byId.values());
    return out;
  }

  /** How many entries are live, both directions. */
  get size(): number {
    return this.count;
  }
}
