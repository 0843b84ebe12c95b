/**
 * The standby policy: the one place that decides when a stopped job's
 * admission slot passes to the next queued job.
 *
 * The pool runs `threads + spareThreads` workers, but admission starts only
 * `threads` jobs at once. A job cancelled (or timed out) while running still
 * holds its thread until it reaches a checkpoint; meanwhile it may lend its
 * slot, so admission runs one more job on a standby thread. It lends at once
 * while a core is free, otherwise after `handoffDelayMs` (waiting for a job
 * that is about to stop is cheaper than splitting busy cores with its last
 * partial stage). At most `spareThreads` slots are lent at a time; a loan
 * ends when the stopped job's worker returns.
 */

/** The policy's settings (see `ExecutorOptions`). */
export interface StandbySettings {
  readonly threads: number;
  readonly spareThreads: number;
  readonly cores: number;
  readonly handoffDelayMs: number;
}

/** The timers the policy uses; a fake one in unit tests. */
export interface StandbyClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: StandbyClock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What the policy steers: the admission queue's concurrency. */
export interface Admission {
  concurrency: number;
}

/** One stopped job's claim on a standby slot; {@link StandbyLoan.end} when its worker has returned. */
export interface StandbyLoan {
  end(): void;
}

export class Standby {
  /** Worker threads to start and warm up: the admitted ones plus the standby. */
  readonly poolThreads: number;
  private lent = 0;

  constructor(
    private readonly settings: StandbySettings,
    private readonly admission: Admission,
    private readonly clock: StandbyClock = realClock,
  ) {
    this.poolThreads = settings.threads + settings.spareThreads;
    admission.concurrency = settings.threads;
  }

  /**
   * State words needed: every job holding one is queued or on a thread, and
   * admission lets the queue overshoot its limit by at most the threads about
   * to free up (see {@link freeThreads}).
   */
  slabCapacity(queueLimit: number): number {
    return queueLimit + 2 * this.poolThreads + 1;
  }

  /**
   * Admission slots not taken by jobs on threads. Piscina gives a freed
   * thread its next waiting job a microtask before the last job on it is
   * counted off, so this can be one short for that moment.
   */
  freeThreads(onThreads: number): number {
    return this.admission.concurrency - onThreads;
  }

  /**
   * A running job was stopped; `onThreads` counts it (it holds its core until
   * its next checkpoint). Lends its slot now if a core is free, else after
   * the hand-off delay, unless the loan ends first.
   */
  stopped(onThreads: number): StandbyLoan {
    let lent = false;
    let timer: unknown;
    const lend = () => {
      lent = true;
      this.adjust(1);
    };
    if (this.settings.handoffDelayMs === 0 || onThreads < this.settings.cores) lend();
    else timer = this.clock.setTimeout(lend, this.settings.handoffDelayMs);
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        if (lent) this.adjust(-1);
      },
    };
  }

  /**
   * The order to stop many jobs in (a session closing, shutdown): those that
   * have not reached a thread first, so none starts only to be stopped a
   * moment later on a slot lent by another.
   */
  stopOrder<E>(entries: readonly E[], waiting: (entry: E) => boolean): E[] {
    return [...entries.filter(waiting), ...entries.filter((e) => !waiting(e))];
  }

  private adjust(delta: 1 | -1): void {
    this.lent += delta;
    this.admission.concurrency = this.settings.threads + Math.min(this.lent, this.settings.spareThreads);
  }
}
