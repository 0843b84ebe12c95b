/**
 * Admission: at most `threads` jobs on the main pool's threads, and as many
 * more on the standby as the standby policy lends slots.
 *
 * A job that finds no main thread free waits in the main pool's
 * {@link WaitList}, which is Piscina's own task queue: Piscina gives the next
 * waiting job to a freed thread inside its result handler, before the last
 * job's response is built. A lent slot takes the next waiting job out of that
 * list and starts it on the standby pool.
 */
import type { PoolCallback, PoolOutcome } from '../pool/pool.js';
import type { WorkerTask } from '../pool/protocol.js';
import type { Waiting, WaitList } from './wait-list.js';

/** A job as admission sees it. */
export interface Admittable extends Waiting, PoolCallback {
  /** What goes to the worker; it carries the job itself under `Piscina.queueOptionsSymbol`. */
  readonly task: WorkerTask;
}

/** The two pools, as admission uses them. */
export interface AdmissionPools {
  /** Starts the task on a free main thread now, or queues it in the wait list. */
  run(task: WorkerTask, done: PoolCallback): void;
  /** Starts the task on the standby pool. */
  runOnStandby(task: WorkerTask, done: PoolCallback): void;
}

export class Admission<J extends Admittable> {
  /** Slots the standby policy lends beyond `threads`. */
  #lent = 0;
  /** Jobs started on the standby and not back. */
  #onStandby = 0;
  #closed = false;

  /**
   * @param onThreads jobs on any thread now (running or stopping), the
   *   standby's included.
   */
  constructor(
    private readonly threads: number,
    private readonly waitList: WaitList<J>,
    private readonly pools: AdmissionPools,
    private readonly onThreads: () => number,
  ) {}

  /** Slots: jobs on threads at once. Raising it starts waiting jobs on the standby at once. */
  get concurrency(): number {
    return this.threads + this.#lent;
  }

  set concurrency(n: number) {
    this.#lent = Math.max(0, n - this.threads);
    this.#fill();
  }

  /** Jobs waiting for a thread. */
  get size(): number {
    return this.waitList.size;
  }

  /** Jobs of lane `turn` waiting for a thread. */
  waitingIn(turn: string): number {
    return this.waitList.waitingIn(turn);
  }

  /** Starts `job` on a free thread now, or it waits in the wait list; once closed, nothing starts. */
  admit(job: J): void {
    if (this.#closed) return;
    if (this.#onStandby < this.#lent && this.#mainFull()) this.#toStandby(job);
    else this.pools.run(job.task, job);
  }

  /** Takes a waiting job out (it was cancelled); it never starts. */
  remove(job: J): void {
    this.waitList.withdraw(job);
  }

  /** Nothing waiting starts any more. */
  close(): void {
    this.#closed = true;
    this.waitList.close();
  }

  /** Every main thread has a job, or jobs already wait for one. */
  #mainFull(): boolean {
    return this.waitList.size > 0 || this.onThreads() - this.#onStandby >= this.threads;
  }

  /** Lent slots not in use take waiting jobs, in the wait list's order. */
  #fill(): void {
    while (!this.#closed && this.#onStandby < this.#lent) {
      const job = this.waitList.takeNext();
      if (!job) return;
      this.#toStandby(job);
    }
  }

  #toStandby(job: J): void {
    this.#onStandby++;
    job.handOut();
    // One closure per standby run (rare: only while a stopped job winds down). The slot frees before the job's response is built.
    this.pools.runOnStandby(job.task, {
      poolDone: (outcome: PoolOutcome) => {
        this.#onStandby--;
        this.#fill();
        job.poolDone(outcome);
      },
    });
  }
}
