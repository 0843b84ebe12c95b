/**
 * An owner's session is gone (stdio connection closed, HTTP session deleted
 * or expired): nobody can ask for its tasks any more. Its working tasks are
 * cancelled, those whose completion won are waited for, and all are removed.
 */
import type { CancelResult } from '../backend/backend.js';
import { cancelledAnswer } from './answer.js';
import type { TaskJobs } from './task-jobs.js';

/**
 * Closes an owner. `undecided` are the ids of its calls still in their task
 * window (TaskWindows): not tasks yet, and none will become one. `told`
 * hears how many working tasks the close cancelled, before any await (a
 * stdio server exits right after its connection closes). Resolves with that count.
 */
export async function closeOwner(
  jobs: TaskJobs,
  owner: string,
  undecided: readonly string[],
  told?: (owner: string, cancelled: number) => void,
): Promise<number> {
  const ids: string[] = [];
  const decisions: Promise<CancelResult>[] = [];
  for (const [taskId, live] of jobs.live) {
    if (live.owner !== owner || live.terminal) continue;
    ids.push(taskId);
    decisions.push(jobs.requestCancel(owner, taskId, 'session closed', 'session_close'));
  }
  for (const taskId of undecided) void jobs.requestCancel(owner, taskId, 'session closed', 'session_close');
  // The local pool decides each at once; the queue backend when Redis has: all asked before any wait.
  const results = await Promise.all(decisions.map((d) => d.catch((): CancelResult => 'unknown')));
  let cancelled = 0;
  const pending = results.map((result, i) => {
    const taskId = ids[i]!;
    if (result !== 'cancelled-queued' && result !== 'cancelled-running')
      return jobs.store.waitForTerminal(owner, taskId);
    cancelled++;
    return jobs.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), 'The session closed.');
  });
  told?.(owner, cancelled);
  // A shared store that is unreachable (Redis down): its records expire with their ttl; the close itself must not fail,
  // or a stdio server would exit on an unhandled rejection instead of its one shutdown line.
  await Promise.all(pending.map((p) => p.catch(() => undefined)));
  const dropped = await jobs.store.dropOwner(owner).catch(() => []);
  jobs.forget(dropped, 'tasksCancelled');
  return cancelled;
}
