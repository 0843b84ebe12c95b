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
 * An opening session counts against the limit from its initialize POST on,
 * so concurrent initializes cannot overshoot it; only a live one has an id a
 * client knows (it is found by {@link SessionTable.get}).
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

  constructor(private readonly table: SessionTable<S>) {}

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

  constructor(
    /** Sessions allowed at once, opening ones included. */
    readonly max: number,
  ) {}

  /** A slot in `opening` for a new initialize, or undefined if the limit is reached. */
  open(): SessionSlot<S> | undefined {
    if (this.live.size + this.opening >= this.max) return undefined;
    this.opening++;
    return new SessionSlot(this);
  }

  /** The live session with this id. */
  get(id: string): S | undefined {
    return this.live.get(id)?.session;
  }

  /** Live sessions now. */
  get size(): number {
    return this.live.size;
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
  }
}
