/**
 * The main pool's wait list: Piscina's own task queue (its `taskQueue`
 * policy), in the order of p-queue and the {@link FairQueue}.
 *
 * Why in Piscina and not in front of it: Piscina's result handler gives the
 * freed thread its next task from this queue before it settles the finished
 * task, and then sweeps every worker's port, often finding that next task's
 * result already there. A job started from outside, after the handler, costs
 * the main thread an event per result and starts each job on a worker whose
 * caches the last response's work has cooled (BENCHMARKS.md, twelfth pass on
 * issue 24: about a sixth of the CPU of a zero-work call at 32 in flight).
 *
 * Piscina takes a task in two steps: `shift()`, then its balancer, which may
 * find no free thread and give the task back. So `shift()` only offers the
 * head, and a job leaves the list (and starts) only in {@link handedOut},
 * which the balancer calls when it gives the task a thread.
 */
import PQueue from 'p-queue';
import { Piscina, type PiscinaTask, type TaskQueue } from 'piscina';
import { FairQueue, type FairQueueOptions } from './fair-queue.js';

/** A task as Piscina queues it. */
export type PoolTask = Parameters<TaskQueue['push']>[0];

/** A job as the wait list sees it: Piscina carries it on the task's payload under `Piscina.queueOptionsSymbol`. */
export interface Waiting {
  /** Unique among the jobs waiting at once. */
  readonly waitId: string;
  readonly session: string;
  /** Its lane in the fair queue, if not its session's. */
  readonly turn?: string;
  readonly priority: number;
  /** It leaves the list for a thread: queued → running, now, before its task is posted. */
  handOut(): void;
}

/** Marks `task` as carrying `job`, under a symbol key that is not cloned to the worker. */
export function carrying<T extends object>(task: T, job: Waiting): T {
  (task as Record<symbol, unknown>)[Piscina.queueOptionsSymbol] = job;
  return task;
}

/** The job a task carries, if any (the pool's warm-up tasks carry none). */
export function waitingOf<J extends Waiting>(task: PoolTask | PiscinaTask): J | undefined {
  return (task as unknown as Record<symbol, J | null | undefined>)[Piscina.queueOptionsSymbol] ?? undefined;
}

/** p-queue never runs an item here: Piscina starts the jobs. */
const NOT_RUN = (): void => undefined;

export class WaitList<J extends Waiting> implements TaskQueue {
  /** p-queue, paused, is the door: its `add` files a job by priority and session in its queue class. */
  readonly #door: PQueue<FairQueue, FairQueueOptions>;
  readonly #fair: FairQueue;
  /** Tasks without a job (the pool's warm-up), first come first served, ahead of the jobs. */
  readonly #others: PoolTask[] = [];
  /** What `shift()` last offered, until the balancer hands it out or Piscina gives it back. */
  #offered: PoolTask | undefined;
  #closed = false;

  constructor() {
    let fair: FairQueue | undefined;
    // p-queue builds its queue itself; this is that instance, to peek at and take from directly.
    this.#door = new PQueue<FairQueue, FairQueueOptions>({
      concurrency: Number.POSITIVE_INFINITY,
      autoStart: false,
      queueClass: class extends FairQueue {
        constructor() {
          super();
          // eslint-disable-next-line @typescript-eslint/no-this-alias -- p-queue builds its queue class itself; this is how we get the instance
          fair = this;
        }
      },
    });
    this.#fair = fair!;
  }

  /** Tasks waiting; 0 once closed, so Piscina starts none of them. */
  get size(): number {
    return this.#closed ? 0 : this.#others.length + this.#fair.size;
  }

  /** Piscina queues a task (no thread free), or gives back the one it was offered. */
  push(task: PoolTask): void {
    if (task === this.#offered) {
      this.#offered = undefined; // given back: it never left its place
      return;
    }
    const job = waitingOf<J>(task);
    if (!job) {
      this.#others.push(task);
      return;
    }
    void this.#door.add(NOT_RUN, {
      id: job.waitId,
      session: job.turn ?? job.session,
      priority: job.priority,
      payload: task,
    });
  }

  unshift(task: PoolTask): void {
    this.push(task);
  }

  /** Jobs waiting in lane `turn` (see {@link Waiting.turn}). */
  waitingIn(turn: string): number {
    return this.#closed ? 0 : this.#fair.sizeOf(turn);
  }

  /** Offers the next task to Piscina, leaving it queued (see the module comment). */
  shift(): PoolTask | null {
    if (this.#closed) return null;
    this.#offered = this.#others[0] ?? (this.#fair.peek()?.payload as PoolTask | undefined);
    return this.#offered ?? null;
  }

  remove(task: PoolTask): void {
    if (task === this.#offered) this.#offered = undefined;
    const job = waitingOf<J>(task);
    if (job) this.#fair.remove(job.waitId);
    else {
      const at = this.#others.indexOf(task);
      if (at !== -1) this.#others.splice(at, 1);
    }
  }

  /**
   * The main pool's balancer gives `task` a thread. The offered task leaves
   * the list; a task Piscina posts without queueing it was never in it. Its
   * job, if it has one, starts.
   */
  handedOut(task: PiscinaTask): void {
    const job = waitingOf<J>(task);
    const offered = this.#offered;
    if (offered !== undefined && waitingOf<J>(offered) === job) {
      this.#offered = undefined;
      if (job) this.#fair.dequeue();
      else this.#others.shift();
    }
    job?.handOut();
  }

  /**
   * Takes a waiting job out (it was cancelled): false if it was not waiting
   * here. Its Piscina task is dropped unsettled, as Piscina drops a queued
   * task whose AbortSignal fired; Piscina keeps no other reference to it.
   */
  withdraw(job: J): boolean {
    if (this.#offered !== undefined && waitingOf<J>(this.#offered) === job) this.#offered = undefined;
    return this.#fair.remove(job.waitId);
  }

  /** Takes the job that would go next out of the list, for another pool (a standby loan); its task here is dropped, as in {@link withdraw}. */
  takeNext(): J | undefined {
    if (this.#closed) return undefined;
    const task = this.#fair.peek()?.payload as PoolTask | undefined;
    if (!task) return undefined;
    this.#fair.dequeue();
    return waitingOf<J>(task);
  }

  /** Nothing waiting starts any more. */
  close(): void {
    this.#closed = true;
  }
}
