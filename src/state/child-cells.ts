/**
 * The child processes of each job, beside its state word: a row of pid cells per slot in a SharedArrayBuffer,
 * written by the worker as soon as `spawn` returns and read by the main thread on every stop, so the main thread
 * knows every live process group of every job even when the worker cannot run (a hard stop, a busy stage).
 *
 * A cell goes through three values, each move one atomic operation:
 *
 * ```
 *   EMPTY (0) ──reserve (worker, CAS)──▶ RESERVED (1) ──spawn returned (worker)──▶ pid (>1)
 *       ▲                                     │                                      │
 *       └──────spawn failed (worker)──────────┘                                      │
 *       └──group gone (worker, CAS pid→0) · taken over (main, CAS pid→0)─────────────┘
 * ```
 *
 * Each child leads its own process group (the runtime forces `detached: true`), so a cell's pid is also the group
 * to signal. Two counter words follow the rows: children started, and children the worker killed itself (its own
 * `timeoutMs` and output bounds); the main thread counts the kills it makes.
 */

/** How many children one call may run at once; one more is refused before it starts. */
export const CHILDREN_PER_JOB = 16;

/** A cell whose spawn is under way: never a process group to signal (pid 1 is init). */
export const RESERVED = 1;

/** The shared cells of a slab of `capacity` slots: allocate once on the main thread, hand the buffer to workers. */
export class ChildCells {
  readonly cells: Int32Array;
  private readonly startedAt: number;

  constructor(
    readonly capacity: number,
    buffer: SharedArrayBuffer = new SharedArrayBuffer((capacity * CHILDREN_PER_JOB + 2) * 4),
  ) {
    this.cells = new Int32Array(buffer);
    this.startedAt = capacity * CHILDREN_PER_JOB;
  }

  get buffer(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  /** Children started, by every worker. */
  get started(): number {
    return Atomics.load(this.cells, this.startedAt);
  }

  /** Children the workers killed themselves (not counting the main thread's kills). */
  get killedByWorkers(): number {
    return Atomics.load(this.cells, this.startedAt + 1);
  }

  /** The live groups in slot `index`'s row (reserved cells excluded). */
  groups(index: number): number[] {
    const out: number[] = [];
    const base = index * CHILDREN_PER_JOB;
    for (let i = base; i < base + CHILDREN_PER_JOB; i++) {
      const pid = Atomics.load(this.cells, i);
      if (pid > RESERVED) out.push(pid);
    }
    return out;
  }

  /** Empties slot `index`'s row of `pid` (the main thread took the group over); false if it was not there. */
  take(index: number, pid: number): boolean {
    const base = index * CHILDREN_PER_JOB;
    for (let i = base; i < base + CHILDREN_PER_JOB; i++)
      if (Atomics.compareExchange(this.cells, i, pid, 0) === pid) return true;
    return false;
  }

  /** How many cells of every row hold a live group. */
  alive(): number {
    let n = 0;
    for (let i = 0; i < this.startedAt; i++) if (Atomics.load(this.cells, i) > RESERVED) n++;
    return n;
  }

  // ---- worker side ----

  /** Reserves a cell in `index`'s row before a spawn; -1 when the row is full. */
  reserve(index: number): number {
    const base = index * CHILDREN_PER_JOB;
    for (let i = base; i < base + CHILDREN_PER_JOB; i++)
      if (Atomics.compareExchange(this.cells, i, 0, RESERVED) === 0) return i;
    return -1;
  }

  /** The spawn returned: the cell holds its pid (or is emptied again if there is none) and the child is counted. */
  fill(cell: number, pid: number | undefined): void {
    if (pid === undefined || pid <= RESERVED) {
      Atomics.store(this.cells, cell, 0);
      return;
    }
    Atomics.store(this.cells, cell, pid);
    Atomics.add(this.cells, this.startedAt, 1);
  }

  /** The group of `pid` is gone: empties its cell, if it still holds it. */
  clear(cell: number, pid: number): void {
    Atomics.compareExchange(this.cells, cell, pid, 0);
  }

  /** The worker killed a child itself. */
  countWorkerKill(): void {
    Atomics.add(this.cells, this.startedAt + 1, 1);
  }
}
