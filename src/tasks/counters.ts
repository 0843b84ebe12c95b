/**
 * The task counters of `executor://stats` and each owner's held-task gauge,
 * moved only here: created = working + completed + failed + cancelled +
 * expired, at every moment.
 */
import type { Task } from '@modelcontextprotocol/server';
import { isTerminal, type TerminalStatus } from './store.js';

/** Task counters in `executor://stats`: created = working + completed + failed + cancelled + expired. */
export interface TaskStats {
  tasksCreated: number;
  /** Gauge: tasks not yet terminal. */
  tasksWorking: number;
  tasksCompleted: number;
  /** Tool errors, deadlines, failures to run. */
  tasksFailed: number;
  tasksCancelled: number;
  /** Tasks whose ttl passed while they were still working: stopped and removed. */
  tasksExpired: number;
  /** Gauge: tasks held (working or terminal), until their ttl. */
  tasksStored: number;
  /** Calls that could have become tasks (2026, an `optional` tool, the extension declared) and were answered directly, within --task-after-ms. */
  tasksAnsweredDirectly: number;
  /** Finished tasks removed before their ttl to keep their results within maxFinishedTaskBytes (oldest finished first). */
  tasksEvicted: number;
  /** Gauge: 2026 tasks in `input_required` now (their job asked the client; tasks/update answers). */
  tasksInputRequired: number;
  /** `tasks/update` requests that fed a waiting task. */
  taskUpdates: number;
  /** Tasks cancelled because their input did not come within --input-wait-ms. */
  taskInputWaitsExpired: number;
  /** Tasks cancelled because nobody asked for them for their lease (--task-lease-ms). Counted in tasksCancelled too. */
  tasksLeaseExpired: number;
}

/** How a task removed while still working is counted. */
export type RemovedWorking = 'tasksExpired' | 'tasksCancelled';

/** The counters, and the tasks each owner holds (its session must stay open while it holds any). */
export class TaskCounters {
  private readonly counts: TaskStats = {
    tasksCreated: 0,
    tasksWorking: 0,
    tasksCompleted: 0,
    tasksFailed: 0,
    tasksCancelled: 0,
    tasksExpired: 0,
    tasksStored: 0,
    tasksAnsweredDirectly: 0,
    tasksEvicted: 0,
    tasksInputRequired: 0,
    taskUpdates: 0,
    taskInputWaitsExpired: 0,
    tasksLeaseExpired: 0,
  };
  private readonly held = new Map<string, number>();

  /** Finished tasks the store removed early to bound their bytes. */
  evicted(n: number): void {
    this.counts.tasksEvicted += n;
  }

  /** A task was stored, `working`. */
  created(owner: string): void {
    this.counts.tasksCreated++;
    this.counts.tasksWorking++;
    this.counts.tasksStored++;
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
  }

  /** A task took its terminal status (the store settled it, once). */
  settled(status: TerminalStatus): void {
    this.counts.tasksWorking--;
    this.counts[status === 'completed' ? 'tasksCompleted' : status === 'failed' ? 'tasksFailed' : 'tasksCancelled']++;
  }

  /** A task left the store (its ttl passed, or its owner closed); one still working is counted as `working`. */
  removed(owner: string | undefined, status: Task['status'], working: RemovedWorking): void {
    this.counts.tasksStored--;
    if (owner !== undefined) {
      const n = (this.held.get(owner) ?? 1) - 1;
      if (n > 0) this.held.set(owner, n);
      else this.held.delete(owner);
    }
    if (!isTerminal(status)) {
      this.counts.tasksWorking--;
      this.counts[working]++;
    }
  }

  /** A call that could have become a task was answered directly. */
  answeredDirectly(): void {
    this.counts.tasksAnsweredDirectly++;
  }

  /** A task entered (+1) or left (-1) `input_required`. */
  inputRequired(delta: 1 | -1): void {
    this.counts.tasksInputRequired += delta;
  }

  /** A tasks/update fed a waiting task. */
  updated(): void {
    this.counts.taskUpdates++;
  }

  /** A task waiting for input was cancelled by --input-wait-ms (its cancel won). */
  inputWaitExpired(): void {
    this.counts.taskInputWaitsExpired++;
  }

  /** A task's lease passed and its cancel won. */
  leaseExpired(): void {
    this.counts.tasksLeaseExpired++;
  }

  holdsTasks(owner: string): boolean {
    return (this.held.get(owner) ?? 0) > 0;
  }

  snapshot(): TaskStats {
    return { ...this.counts };
  }
}
