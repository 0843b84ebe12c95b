/**
 * A p-queue `queueClass` that is fair between sessions: higher priority runs
 * first; among equal priorities the sessions take turns, so one client that
 * floods the queue cannot starve the others. FIFO within a session.
 */
import type { QueueAddOptions } from 'p-queue';

type RunFunction = () => Promise<unknown>;

/** Options p-queue passes through from `add(fn, options)`, plus the session and what the item stands for. */
export type FairQueueOptions = QueueAddOptions & {
  /** Whose task this is; sessions take turns. */
  readonly session?: string;
  /** What the item stands for, returned by {@link FairQueue.peek}: the queue only keeps it. */
  readonly payload?: unknown;
};

interface Item {
  readonly run: RunFunction;
  readonly id: string | undefined;
  readonly session: string;
  readonly payload: unknown;
  priority: number;
}

export class FairQueue {
  /** Per-session FIFO lists, in the order sessions take turns. */
  private readonly sessions = new Map<string, Item[]>();
  private total = 0;

  get size(): number {
    return this.total;
  }

  /** Items waiting in one session's lane (a per-caller queue share counts them). */
  sizeOf(session: string): number {
    return this.sessions.get(session)?.length ?? 0;
  }

  enqueue(run: RunFunction, options?: Partial<FairQueueOptions>): void {
    const session = options?.session ?? '';
    let list = this.sessions.get(session);
    if (!list) {
      list = [];
      this.sessions.set(session, list);
    }
    const item: Item = { run, id: options?.id, session, payload: options?.payload, priority: options?.priority ?? 0 };
    // Insert after every item of the same or higher priority: FIFO among equals.
    let at = list.length;
    while (at > 0 && list[at - 1]!.priority < item.priority) at--;
    list.splice(at, 0, item);
    this.total++;
  }

  /** The payload of the item {@link dequeue} would take next, leaving it in place; undefined when empty. */
  peek(): { readonly payload: unknown } | undefined {
    return this.nextList()?.[0];
  }

  dequeue(): RunFunction | undefined {
    const best = this.nextList();
    if (!best) return undefined;
    const item = best.shift()!;
    this.total--;
    // The session that just ran goes to the back of the rotation (with one session left, it already is).
    if (best.length === 0) this.sessions.delete(item.session);
    else if (this.sessions.size > 1) {
      this.sessions.delete(item.session);
      this.sessions.set(item.session, best);
    }
    return item.run;
  }

  /** The list whose head goes next: the highest priority, the earliest session in the rotation among equals. */
  private nextList(): Item[] | undefined {
    // Over the lists only (no [key, value] pair per session): this runs for every call that waited.
    let best: Item[] | undefined;
    for (const list of this.sessions.values()) {
      if (!best || list[0]!.priority > best[0]!.priority) best = list;
    }
    return best;
  }

  filter(options: Readonly<Partial<FairQueueOptions>>): RunFunction[] {
    const out: RunFunction[] = [];
    for (const list of this.sessions.values())
      for (const item of list) if (item.priority === options.priority) out.push(item.run);
    return out;
  }

  setPriority(id: string, priority: number): void {
    for (const [session, list] of this.sessions) {
      const index = list.findIndex((item) => item.id === id);
      if (index === -1) continue;
      const [item] = list.splice(index, 1);
      this.total--;
      this.enqueue(item!.run, { id, priority, session });
      return;
    }
    throw new ReferenceError(`No queued task with the id "${id}".`);
  }

  /** Takes the item queued under `id` out; false if there is none. */
  remove(id: string): boolean {
    for (const [session, list] of this.sessions) {
      const index = list.findIndex((item) => item.id === id);
      if (index === -1) continue;
      list.splice(index, 1);
      this.total--;
      if (list.length === 0) this.sessions.delete(session);
      return true;
    }
    return false;
  }
}
