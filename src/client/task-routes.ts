/**
 * Routes `notifications/tasks/status` to the task handles of one client.
 *
 * A status can arrive before its handle exists: the server may write the
 * `CreateTaskResult` and the first status notifications back to back, and
 * when both reach the client in one read the notification is handled in the
 * same turn, before `callToolAsTask` resumes from its `await` and registers
 * the handle. Such statuses wait here (a few per task, for a bounded number
 * of task ids, oldest dropped first) and are replayed when the handle
 * registers, so a task that completed at once is still seen as completed.
 */
import type { ClientTask } from './task-handle.js';

/** Task ids whose early statuses are kept; a status for an id nobody ever registers is dropped with its oldest peers. */
const MAX_PENDING_TASKS = 64;
/** Statuses kept per pending task id (the latest ones; a terminal status is the last a task sends). */
const MAX_PENDING_STATUSES = 4;

/** @internal Live task handles by id, and statuses that came before their handle. */
export class TaskRoutes {
  private readonly live = new Map<string, ClientTask>();
  private readonly early = new Map<string, Record<string, unknown>[]>();

  /** A status notification: to its handle, or kept until the handle registers. */
  status(params: Record<string, unknown>): void {
    const taskId = params.taskId;
    if (typeof taskId !== 'string') return;
    const handle = this.live.get(taskId);
    if (handle) return handle.observe(params);
    let kept = this.early.get(taskId);
    if (!kept) {
      if (this.early.size >= MAX_PENDING_TASKS) this.early.delete(this.early.keys().next().value!);
      this.early.set(taskId, (kept = []));
    }
    if (kept.length >= MAX_PENDING_STATUSES) kept.shift();
    kept.push(params);
  }

  /**
   * Statuses that came before the handle existed, forgotten here. The caller
   * replays them after the handle observed the task it was created with.
   */
  takeEarly(taskId: string): Record<string, unknown>[] {
    const kept = this.early.get(taskId) ?? [];
    this.early.delete(taskId);
    return kept;
  }

  /** Routes later statuses of a task not yet known to be terminal to its handle. */
  register(taskId: string, handle: ClientTask): void {
    this.live.set(taskId, handle);
  }

  /** The task is terminal (or the connection is gone): its statuses no longer matter. */
  release(taskId: string): void {
    this.live.delete(taskId);
    this.early.delete(taskId);
  }
}
