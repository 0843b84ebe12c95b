/**
 * Task leases (issue 56). A task the server made itself out of a plain call
 * (the --task-after-ms window) has no client that asked for a task: a client
 * that went away leaves it burning CPU until its end, or its ttl. So it holds
 * a lease: when nobody has shown interest in it for the lease, it is
 * cancelled through the backend's compare-exchange, as `tasks/cancel` would
 * be (completion may still win: then the task keeps its result), and reads
 * `cancelled` with a status message that says why. A request that names the
 * task renews it: `tasks/get`, `tasks/update`, `tasks/cancel`, and a
 * `tasks/result` for as long as it waits. A task a client asked for is
 * governed by its ttl, unless the operator leases those too.
 *
 * With a store shared by front ends (Redis), the request may reach another
 * front end than the one whose job it is: that one renews the lease in the
 * task's record (atomically, a later end never shortened), and the front
 * end holding the job reads the record before it cancels.
 */
import type { TaskCounters } from './counters.js';
import { cancelledAnswer } from './answer.js';
import type { LiveTask, TaskJobs } from './task-jobs.js';

/** The reason a lease's cancel is asked with (its source is `task_lease`). */
export const LEASE_EXPIRED = 'task lease expired';

/** A held lease: whose task, until when, and how many `tasks/result` wait for it now. */
interface Lease {
  readonly owner: string;
  until: number;
  waiting: number;
}

/** The leases of the tasks this process runs; see the module comment. */
export class TaskLeases {
  private readonly leases = new Map<string, Lease>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private closed = false;

  constructor(
    private readonly jobs: TaskJobs,
    private readonly counters: TaskCounters,
    /** The lease; 0 turns leases off. */
    readonly leaseMs: number,
    /** Lease the tasks clients asked for too. */
    private readonly clientTasks: boolean,
  ) {
    if (!Number.isInteger(leaseMs) || leaseMs < 0)
      throw new RangeError(`task lease must be a non-negative integer of ms (got ${leaseMs})`);
  }

  /** A task was made here: it holds a lease if the server made it (or client tasks are leased too). */
  hold(owner: string, taskId: string, serverMade: boolean): void {
    if (this.leaseMs === 0 || this.closed || (!serverMade && !this.clientTasks)) return;
    const until = Date.now() + this.leaseMs;
    this.leases.set(taskId, { owner, until, waiting: 0 });
    // In a shared store the record carries the lease, so a request at another front end can renew it.
    void this.jobs.store.renewLease?.(taskId, until, true).catch(() => undefined);
    this.arm();
  }

  /** A request named the task. */
  renew(taskId: string): void {
    if (this.leaseMs === 0) return;
    const until = Date.now() + this.leaseMs;
    const lease = this.leases.get(taskId);
    if (lease) lease.until = Math.max(lease.until, until);
    // Another front end's task, maybe: renewed in its record (a record without a lease is left as it is).
    else void this.jobs.store.renewLease?.(taskId, until, false).catch(() => undefined);
  }

  /** A `tasks/result` waits for the task: its lease holds until the returned function is called. */
  watch(taskId: string): () => void {
    this.renew(taskId);
    const lease = this.leases.get(taskId);
    if (lease) {
      lease.waiting++;
      return () => {
        lease.waiting--;
        this.renew(taskId);
      };
    }
    if (this.leaseMs === 0 || !this.jobs.store.renewLease) return () => undefined;
    // Another front end's task: its record is renewed while the wait lasts.
    const every = setInterval(() => this.renew(taskId), Math.max(10, Math.floor(this.leaseMs / 3)));
    every.unref();
    return () => clearInterval(every);
  }

  /** Cancels the tasks whose lease passed at `now` (through the job's compare-exchange). */
  async check(now = Date.now()): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [taskId, lease] of [...this.leases]) {
        const live = this.jobs.live.get(taskId);
        if (!live || live.terminal) {
          this.leases.delete(taskId);
          continue;
        }
        if (lease.waiting > 0 || lease.until > now) continue;
        const shared = await this.jobs.store.leaseUntil?.(taskId).catch(() => undefined);
        if (shared !== undefined && shared > now) {
          lease.until = shared;
          continue;
        }
        if (this.leases.get(taskId) !== lease || lease.waiting > 0 || lease.until > now) continue; // renewed meanwhile
        this.leases.delete(taskId);
        this.expire(lease.owner, taskId, live);
      }
    } finally {
      this.checking = false;
      if (this.leases.size === 0) this.disarm();
    }
  }

  close(): void {
    this.closed = true;
    this.leases.clear();
    this.disarm();
  }

  private expire(owner: string, taskId: string, live: LiveTask): void {
    const message = `The task was cancelled: nobody asked for it (tasks/get, tasks/result, tasks/update or tasks/cancel) for ${this.leaseMs / 1000} s, its lease (--task-lease-ms).`;
    live.cancelMessage = message; // whichever settles first, the job's cancelled outcome or the decision below, says why
    void this.jobs.requestCancel(owner, taskId, LEASE_EXPIRED, 'task_lease').then(async (result) => {
      if (result !== 'cancelled-queued' && result !== 'cancelled-running') return; // completion won: the task keeps its result
      this.counters.leaseExpired();
      // As tasks/cancel does: the task reads cancelled from the moment the cancel won, not once the worker returned.
      await this.jobs.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), message);
    });
  }

  private arm(): void {
    if (this.timer) return;
    // Checked a few times per lease, at most once a second: an expired lease is acted on within a quarter of it.
    this.timer = setInterval(() => void this.check(), Math.max(10, Math.min(1000, Math.floor(this.leaseMs / 4))));
    this.timer.unref();
  }

  private disarm(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
