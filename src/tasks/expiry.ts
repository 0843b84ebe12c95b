/**
 * Task expiry: on a timer, the store removes the tasks whose ttl passed; a
 * working one's job is cancelled (nobody can ask for it any more).
 */
import { isTerminal } from './store.js';
import type { TaskJobs } from './task-jobs.js';

/** Sweeps expired tasks every `intervalMs` until closed. */
export class TaskExpiry {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly jobs: TaskJobs,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** Removes the tasks expired at `now`, stopping the jobs of working ones. */
  async sweep(now = Date.now()): Promise<void> {
    const gone = await this.jobs.store.sweep(now);
    for (const task of gone) {
      const live = this.jobs.live.get(task.taskId);
      if (live && !isTerminal(task.status)) {
        live.terminal = true;
        void this.jobs.requestCancel(live.owner, task.taskId, 'task expired');
      }
    }
    this.jobs.forget(gone, 'tasksExpired');
  }

  close(): void {
    clearInterval(this.timer);
  }
}
