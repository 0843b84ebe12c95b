/**
 * Deciding a `tasks/cancel`. One winner, as for plain calls: the backend
 * decides on the job's state word. If cancellation wins, the task is made
 * `cancelled` in the store before `tasks/cancel` is answered, and the job's
 * later outcome cannot change it. If completion (or the deadline) won, the
 * task takes the job's outcome and the cancel is refused as for a terminal
 * task.
 */
import type { Task } from '@modelcontextprotocol/server';
import type { CancelResult } from '../backend/backend.js';
import { cancelledAnswer } from './answer.js';
import { TaskNotFoundError, TaskTerminalError } from './errors.js';
import { isTerminal } from './store.js';
import { CANCELLED_BY_REQUEST, type TaskJobs } from './task-jobs.js';

/**
 * Resolves with the `cancelled` task once the cancellation won and the store
 * says `cancelled`. Throws {@link TaskNotFoundError} for a task the owner
 * does not have, {@link TaskTerminalError} for a terminal one, including when
 * completion won the race (the task then keeps its own terminal status).
 */
export async function cancelTask(jobs: TaskJobs, owner: string, taskId: string): Promise<Task> {
  const { store } = jobs;
  const record = await store.get(owner, taskId);
  if (!record) throw new TaskNotFoundError(taskId);
  if (isTerminal(record.task.status)) throw new TaskTerminalError(record.task.status);
  const live = jobs.live.get(taskId);
  // No live job here: another front end started it (a shared store decides on the job's state), or it just ended.
  let result: CancelResult = 'unknown';
  if (live?.owner === owner) {
    live.cancelRequested = true;
    result = await jobs.requestCancel(owner, taskId, 'tasks/cancel', 'tasks_cancel');
  } else if (store.cancelJob)
    result = await store.cancelJob(owner, taskId, cancelledAnswer(taskId), CANCELLED_BY_REQUEST);
  const won = result === 'cancelled-queued' || result === 'cancelled-running';
  if (won) {
    // Here the settle is this process's; a shared store's cancelJob settled it already (then this only counts it).
    const task = await jobs.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), CANCELLED_BY_REQUEST);
    if (task) return task;
  }
  const final = await store.waitForTerminal(owner, taskId);
  if (!final) throw new TaskNotFoundError(taskId);
  if (won && final.task.status === 'cancelled') return final.task;
  throw new TaskTerminalError(final.task.status);
}
