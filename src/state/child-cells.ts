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
 *       ├──────spawn failed (worker)──────────┘                                      │
 *       ├──group gone (worker, CAS pid→0) · taken over (main, CAS pid→0)─────────────┘
 *       └──its worker died before the pid landed (main, CAS RESERVED→0; the child is found by CELL_ENV)
 * ```
 *
 * Each child leads its own process group (the runtime forces `detached: true`), so a cell's pid is also the group
 * to signal. Who stops a group: the main thread, on every stop of the call and when it settles (it reads the row
 * after the CAS that stopped the call; the worker checks the state word after writing the pid, so one of the two
 * always sees the other). Three counter words follow the rows: children started, children the worker stopped
 * itself (`ctx.spawn`'s `timeoutMs` and output bound), and synchronous spawns in a call (`execSync` and its kin,
 * which nothing here can stop); the main thread counts the kills it makes.
 */

/** How many children one call may run at once; one more is refused before it starts. */
export const CHILDREN_PER_JOB = 16;

/** A cell whose spawn is under way: never a process group to signal (pid 1 is init). */
export const RESERVED = 1;

/**
 * The environment entry each child carries from its spawn on, `<this process's pid>.<cell>`: a worker terminated
 * between the spawn and the write of its pid leaves the cell RESERVED, and the main thread finds that child by it.
 */
export const CELL_ENV = 'MCP_CANCEL_POOL_CHILD_CELL';

/**
 * Signals the process group led by `pid`; false when it has no member left. EPERM means a member exists that we
 * may not signal (a setuid program): it is alive. Both sides use it: the worker's guard and the main thread.
 */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  if (!(pid > 1)) return false; // never 0, -1 or init: those mean "every process"
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The shared cells of a slab of `capacity` slots: allocate once on the main thread, hand the buffer to workers. */
export class ChildCells {
  readonly cells: Int32Array;
  private readonly counters: number;

  constructor(
    readonly capacity: number,
    buffer: SharedArrayBuffer = new SharedArrayBuffer((capacity * CHILDREN_PER_JOB + 3) * 4),
  ) {
    this.cells = new Int32Array(buffer);
    this.counters = capacity * CHILDREN_PER_JOB;
  }

  get buffer(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  /** The index of the started counter, which a worker notifies as it counts a child (the main thread waits on it). */
  get startedWord(): number {
    return this.counters;
  }

  /** Children started, by every worker. */
  get started(): number {
    return Atomics.load(this.cells, this.counters);
  }

  /** Children the workers stopped themselves (not counting the main thread's kills). */
  get killedByWorkers(): number {
    return Atomics.load(this.cells, this.counters + 1);
  }

  /** Synchronous spawns (`execSync`, `execFileSync`, `spawnSync`) made in a call, by every worker. */
  get syncSpawns(): number {
    return Atomics.load(this.cells, this.counters + 2);
  }

  // ---- main side ----

  /** The groups in slot `index`'s row (reserved cells excluded). */
  groups(index: number): number[] {
    const out: number[] = [];
    const base = index * CHILDREN_PER_JOB;
    for (let i = base; i < base + CHILDREN_PER_JOB; i++) {
      const pid = Atomics.load(this.cells, i);
      if (pid > RESERVED) out.push(pid);
    }
    return out;
  }

  /** Empties slot `index`'s row and returns the groups it held: the main thread owns them from now on. */
  takeAll(index: number): number[] {
    const out: number[] = [];
    const base = index * CHILDREN_PER_JOB;
    for (let i = base; i < base + CHILDREN_PER_JOB; i++) {
      const pid = Atomics.load(this.cells, i);
      if (pid > RESERVED && Atomics.compareExchange(this.cells, i, pid, 0) === pid) out.push(pid);
    }
    return out;
  }

  /**
   * Empties the reserved cells of slot `index`'s row (of every row without one) and returns them: their workers are
   * gone, so no spawn of theirs will fill them, and a child they started is found by {@link CELL_ENV}.
   */
  takeReserved(index?: number): number[] {
    const out: number[] = [];
    const [from, to] =
      index === undefined ? [0, this.counters] : [index * CHILDREN_PER_JOB, (index + 1) * CHILDREN_PER_JOB];
    for (let i = from; i < to; i++) if (Atomics.compareExchange(this.cells, i, RESERVED, 0) === RESERVED) out.push(i);
    return out;
  }

  /** The reserved cells of every row, left as they are (the process is ending). */
  reserved(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.counters; i++) if (Atomics.load(this.cells, i) === RESERVED) out.push(i);
    return out;
  }

  /** Every group in every row. */
  all(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.counters; i++) {
      const pid = Atomics.load(this.cells, i);
      if (pid > RESERVED) out.push(pid);
    }
    return out;
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
    Atomics.add(this.cells, this.counters, 1);
    Atomics.notify(this.cells, this.counters); // the main thread tells the reaper of it
  }

  /** The group of `pid` is gone: empties its cell, if it still holds it (the main thread may have taken it). */
  clear(cell: number, pid: number): void {
    Atomics.compareExchange(this.cells, cell, pid, 0);
  }

  /** A child started outside any call: counted, never kept. */
  countStarted(): void {
    Atomics.add(this.cells, this.counters, 1);
  }

  /** The worker stopped a child itself. */
  countWorkerKill(): void {
    Atomics.add(this.cells, this.counters + 1, 1);
  }

  /** A call made a synchronous spawn. */
  countSyncSpawn(): void {
    Atomics.add(this.cells, this.counters + 2, 1);
  }
}
