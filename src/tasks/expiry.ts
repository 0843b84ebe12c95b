/**
 * Task expiry: on a timer, the store removes the tasks whose ttl passed; a
 * working one's job is cancelled (nobody can ask for it any more). The timer
 * runs only while this process holds tasks: an idle server is not woken
 * every interval to find nothing.
 */
import { isTerminal } from './store.js';
import type { TaskJobs } from './task-jobs.js';

/** Sweeps expired tasks every `intervalMs` while any task of this process is held, until closed. */
export class TaskExpiry {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly jobs: TaskJobs,
    private readonly intervalMs: number,
  ) {}

  /** A task was stored here: sweeps run from now until none is left. */
  arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  /** Removes the tasks expired at `now`, stopping the jobs of working ones. */
  async sweep(now = Date.now()): Promise<void> {
    const gone = await this.jobs.store.sweep(now);
    for (const task of gone) {
      const live = this.jobs.live.get(task.taskId);
      if (live && !isTerminal(task.status)) {
        live.terminal = true;
        void this.jobs.requestCancel(live.owner, task.taskId, 'task expired', 'task_expired');
      }
    }
    this.jobs.forget(gone, 'tasksExpired');
    // Every task stored here is in `live` from its creation until the store removes it, so none is left to expire.
    if (this.jobs.live.size === 0) this.disarm();
  }

  close(): void {
    this.closed = true;
    this.disarm();
  }

  private disarm(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
