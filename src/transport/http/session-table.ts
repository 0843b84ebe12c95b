/**
 * The 2025 HTTP sessions of one server and their states, in one table:
 *
 * ```
 *   (initialize POST) ──under --max-sessions──▶ opening ──the transport issued its id──▶ live ──closed──▶ gone
 *                                                  │                                     (DELETE, the sweeper: idle
 *                                                  └──the transport refused the initialize──▶ gone     with no call or
 *                                                     (the client never learnt an id)                   task, shutdown)
 * ```
 *
 * An opening session counts against the limits (the server's, and its
 * owner's) from its initialize POST on, so concurrent initializes cannot
 * overshoot them; only a live one has an id a client knows (it is found by
 * {@link SessionTable.get}).
 */

/** A session's state. */
export type SessionState = 'opening' | 'live' | 'gone';

/** The edges of the drawing above. */
export const SESSION_EDGES: { readonly [S in SessionState]: readonly SessionState[] } = {
  opening: ['live', 'gone'],
  live: ['gone'],
  gone: [],
};

/** One session's place in the table, from its initialize POST on. */
export class SessionSlot<S> {
  private current: SessionState = 'opening';
  private id: string | undefined;

  constructor(
    private readonly table: SessionTable<S>,
    /** The caller that opened it: its per-caller limit counts it. */
    readonly owner: string,
  ) {}

  get state(): SessionState {
    return this.current;
  }

  /** opening → live: the transport accepted the initialize and issued `id`; the session is found by it from now on. */
  accept(id: string, session: S): boolean {
    if (!this.move('live')) return false;
    this.id = id;
    this.table.accepted(this, id, session);
    return true;
  }

  /** opening → gone (refused: its slot is freed) or live → gone (closed: it is no longer found). */
  close(): boolean {
    const was = this.current;
    if (!this.move('gone')) return false;
    this.table.gone(this, was, this.id);
    return true;
  }

  private move(to: SessionState): boolean {
    if (!SESSION_EDGES[this.current].includes(to)) return false;
    this.current = to;
    return true;
  }
}

/** The sessions of one server; see the module comment. */
export class SessionTable<S> {
  private readonly live = new Map<string, { readonly slot: SessionSlot<S>; readonly session: S }>();
  private opening = 0;
  /** Sessions opening or live, per owner (only owners with one or more). */
  private readonly byOwner = new Map<string, number>();

  constructor(
    /** Sessions allowed at once, opening ones included. */
    readonly max: number,
    /** Sessions one owner may have at once, opening ones included. */
    readonly maxPerOwner: number = max,
  ) {}

  /** A slot in `opening` for `owner`'s new initialize, or which limit refuses it. */
  open(owner: string): SessionSlot<S> | 'server-limit' | 'owner-limit' {
    if (this.maxPerOwner < this.max && (this.byOwner.get(owner) ?? 0) >= this.maxPerOwner) return 'owner-limit';
    if (this.live.size + this.opening >= this.max) return 'server-limit';
    this.opening++;
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? 0) + 1);
    return new SessionSlot(this, owner);
  }

  /** The live session with this id. */
  get(id: string): S | undefined {
    return this.live.get(id)?.session;
  }

  /** Live sessions now. */
  get size(): number {
    return this.live.size;
  }

  /** Sessions `owner` holds now, opening ones included: what the per-caller session limit counts. */
  heldBy(owner: string): number {
    return this.byOwner.get(owner) ?? 0;
  }

  /** Sessions opening now (their initialize is being handled). */
  get openingNow(): number {
    return this.opening;
  }

  /** The live sessions by id. */
  entries(): [string, S][] {
    return [...this.live].map(([id, e]) => [id, e.session]);
  }

  /** @internal {@link SessionSlot.accept}. */
  accepted(slot: SessionSlot<S>, id: string, session: S): void {
    this.opening--;
    this.live.set(id, { slot, session });
  }

  /** @internal {@link SessionSlot.close}. */
  gone(slot: SessionSlot<S>, was: SessionState, id: string | undefined): void {
    if (was === 'opening') this.opening--;
    else if (id !== undefined && this.live.get(id)?.slot === slot) this.live.delete(id);
    const n = (this.byOwner.get(slot.owner) ?? 1) - 1;
    if (n > 0) this.byOwner.set(slot.owner, n);
    else this.byOwner.delete(slot.owner);
  }
}
