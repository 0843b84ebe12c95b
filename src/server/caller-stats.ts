/**
 * The caller's part of `executor://stats` (issue 64): a caller sees its own
 * counts beside the totals, every caller's only an operator sees (over HTTP
 * with OAuth, a token carrying `--auth-operator-scope`). The counts are the
 * ones its per-caller limits judge, so a caller can see how near it is to
 * them; nothing in them names another caller's subject or token.
 */

/** One caller's counts: what its per-caller limits count. */
export interface CallerCounts {
  /** Its tool calls waiting for a worker now (the per-caller queue share, `--queue-limit-per-caller`). */
  readonly queued: number;
  /**
   * Its working tasks (the per-caller task limit: its 2026 tasks and, under OAuth, its 2025 sessions'). Absent when
   * the task store cannot tell (the Redis store).
   */
  readonly tasksWorking?: number;
  /** Its live 2025 sessions, opening ones included (the per-caller session limit, `--max-sessions-per-caller`). */
  readonly sessions: number;
}

/** A caller as the stats show it: the server's key for it (a hash under OAuth, `anonymous` without), and its counts. */
export interface CallerEntry extends CallerCounts {
  readonly id: string;
}

/** What `executor://stats` adds for the caller that reads it. */
export interface CallerSection {
  /** The reader's own counts. */
  readonly caller: CallerEntry;
  /** Every caller holding a queued call, a working task or a session now: for an operator only. */
  readonly callers?: readonly CallerEntry[];
}

/** Where one caller's counts come from (the backend's lanes, the task store, the session table). */
export type CallerCountsOf = (caller: string) => CallerCounts;

/** Callers remembered for an operator's listing, at most: the oldest seen is forgotten first. */
const MAX_KNOWN = 10_000;

/**
 * The callers a server has seen, so an operator's read can list them; a
 * caller is remembered from its last request, and one holding nothing is
 * dropped when an operator's read finds it so.
 */
export class CallerBook {
  /** Insertion order is the order last seen (a Map keeps insertion order). */
  private readonly seen = new Map<string, true>();

  constructor(
    private readonly countsOf: CallerCountsOf,
    /** The id a caller is shown as (the key itself under OAuth; the one anonymous caller otherwise). */
    private readonly shownAs: (caller: string) => string = (caller) => caller,
  ) {}

  /** A request of `caller` came in. */
  saw(caller: string): void {
    if (this.seen.delete(caller) || this.seen.size < MAX_KNOWN) {
      this.seen.set(caller, true);
      return;
    }
    this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(caller, true);
  }

  /** The section `caller` reads: its own counts, and everyone's if it is an operator. */
  section(caller: string, operator: boolean): CallerSection {
    const own = this.entry(caller);
    if (!operator) return { caller: own };
    const callers: CallerEntry[] = [];
    for (const known of [...this.seen.keys()]) {
      const entry = this.entry(known);
      if (entry.queued === 0 && !entry.tasksWorking && entry.sessions === 0) this.seen.delete(known);
      else callers.push(entry);
    }
    return { caller: own, callers };
  }

  private entry(caller: string): CallerEntry {
    return { id: this.shownAs(caller), ...this.countsOf(caller) };
  }
}
