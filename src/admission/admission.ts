/**
 * Admission: at most `concurrency` jobs on threads at once.
 *
 * A job that finds a slot free and nobody waiting starts at once, in the
 * caller's stack. The others wait in p-queue (its `queueClass` is the
 * {@link FairQueue}, fair between sessions); p-queue is kept paused and used
 * only as that wait list, because its own hand-off starts the next task
 * several promise hops after the last one's promise settled, and a job's
 * promise settles only after its response is built. Here a freed slot starts
 * the next waiting job in the stack that freed it: a worker's next job is
 * posted as soon as its last result is seen, before that result's response.
 */
import PQueue from 'p-queue';
import { FairQueue, type FairQueueOptions } from './fair-queue.js';

/** A job as admission sees it: started exactly once, either at once or when its turn comes. */
export interface Admittable {
  dispatch(): void;
}

export class Admission {
  readonly #waiting: PQueue<FairQueue, FairQueueOptions>;
  /** p-queue builds its queue itself; this is that instance, so a job can be taken out of it or started from it directly. */
  readonly #fair: FairQueue;
  #active = 0;
  #concurrency: number;
  #closed = false;

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
    let fair: FairQueue | undefined;
    class OwnQueue extends FairQueue {
      constructor() {
        super();
        fair = this;
      }
    }
    this.#waiting = new PQueue<FairQueue, FairQueueOptions>({ concurrency: Number.POSITIVE_INFINITY, autoStart: false, queueClass: OwnQueue });
    this.#fair = fair!;
  }

  /** Slots: jobs admitted at once. Raising it starts waiting jobs at once. */
  get concurrency(): number {
    return this.#concurrency;
  }

  set concurrency(n: number) {
    this.#concurrency = n;
    this.#pull();
  }

  /** Jobs waiting for a slot. */
  get size(): number {
    return this.#fair.size;
  }

  /** Starts `job` now if a slot is free and nobody waits; otherwise it waits under `id` until a slot frees. */
  admit(job: Admittable, id: number, session: string, priority: number): void {
    if (!this.#closed && this.#active < this.#concurrency && this.#fair.size === 0) {
      this.#active++;
      job.dispatch();
      return;
    }
    // Its promise settles once dispatch() returned; a job taken out with remove() never settles it.
    this.#waiting.add(() => job.dispatch(), { id: String(id), session, priority }).catch(() => undefined);
  }

  /** Takes a waiting job out (it was cancelled); it never starts. */
  remove(id: number): void {
    this.#fair.remove(String(id));
  }

  /** A started job's thread is free again: the next waiting job starts now, in this stack. */
  release(): void {
    this.#active--;
    this.#pull();
  }

  /** Nothing waiting starts any more. */
  close(): void {
    this.#closed = true;
  }

  #pull(): void {
    while (!this.#closed && this.#active < this.#concurrency && this.#fair.size > 0) {
      this.#active++;
      // p-queue's own wrapper around the job: it calls dispatch() synchronously.
      void this.#fair.dequeue()!();
    }
  }
}
