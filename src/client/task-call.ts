/**
 * `callToolAsTask`: the `tools/call` that creates a task, in the era's way
 * (2025: the `task` param; 2026: the tasks extension declared in the
 * request's envelope, the server deciding), and the handle it resolves with
 * (./task-handle.ts).
 */
import type { CallToolRequest, CallToolResult, Progress, Task } from '@modelcontextprotocol/client';
import type { RequestId } from '../wire/registry.js';
import { CallAbortedError } from '../errors.js';
import { reasonText } from './reason.js';
import { ClientTask, type TaskCallOptions, type TaskContext, type TaskHandle } from './task-handle.js';
import type { TaskRoutes } from './task-routes.js';
import { fromModern, isTerminal, TASKS_EXTENSION } from './task-shape.js';

/** @internal What {@link callToolAsTask} needs of the client. */
export interface TaskClient extends TaskContext {
  /** Cancels one of our pending requests the era's way (the guard's gate); true if a cancellation left. */
  readonly sendCancel: (id: RequestId, reason?: string) => boolean;
  /** Tasks not yet known to be terminal, by id (the client routes `notifications/tasks/status` through it). */
  readonly tasks: TaskRoutes;
}

/** @internal The body of {@link CancelAwareClient.callToolAsTask}. */
export async function callToolAsTask(
  client: TaskClient,
  params: CallToolRequest['params'],
  options: TaskCallOptions,
): Promise<TaskHandle> {
  const { own, modern } = client;
  const { signal } = options;
  if (signal?.aborted) throw new CallAbortedError('AbortError', signal.reason, undefined, false);
  let handle: ClientTask | undefined;
  const early: Progress[] = [];
  // 2025 asks with the task param; 2026 declares the extension and lets the server decide.
  const request = modern ? { ...params } : { ...params, task: options.ttl === undefined ? {} : { ttl: options.ttl } };
  // Never notifications/cancelled for it: a task is cancelled with tasks/cancel.
  const sent = own.request('tools/call', request, {
    ...(modern && { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } }),
    ...(options.onprogress && { onprogress: (p: Progress) => (handle ? handle.progress(p) : early.push(p)) }),
  });
  // 2026: the server may run the call without a task and answer it when done; until it said, it is a plain request,
  // cancelled as one. (2025 answers with the task at once; an abort meanwhile becomes tasks/cancel on the handle.)
  let cancelSent: boolean | undefined;
  const onAbort = () => (cancelSent = client.sendCancel(sent.id, reasonText(signal?.reason)));
  if (modern) signal?.addEventListener('abort', onAbort, { once: true });
  let answer: Record<string, unknown>;
  try {
    answer = await sent.result;
  } catch (error) {
    own.endProgress(sent.id);
    if (cancelSent !== undefined) throw new CallAbortedError('AbortError', signal?.reason, sent.id, cancelSent);
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  const release = (taskId: string) => () => {
    client.tasks.release(taskId);
    own.endProgress(sent.id);
  };
  if (modern && answer.resultType !== 'task') {
    // Answered directly: a task that completed as it was created.
    const now = new Date().toISOString();
    const done: Task = {
      taskId: `direct:${String(sent.id)}`,
      status: 'completed',
      ttl: null,
      createdAt: now,
      lastUpdatedAt: now,
    };
    const { resultType: _, ...result } = answer;
    own.endProgress(sent.id);
    handle = new ClientTask(client, done, sent.id, options, () => undefined);
    handle.answered(result as CallToolResult);
    for (const p of early) handle.progress(p);
    handle.observe({ ...done, ttlMs: null, result });
    return handle;
  }
  const created = modern ? answer : (answer.task as Record<string, unknown>);
  const task = (modern ? fromModern(created) : created) as Task;
  handle = new ClientTask(client, task, sent.id, options, release(task.taskId));
  if (!isTerminal(task.status)) client.tasks.register(task.taskId, handle);
  for (const p of early) handle.progress(p);
  handle.observe(created); // the first status learned: reported, and a terminal one ends the handle
  // Statuses the server sent right behind the CreateTaskResult, handled before this function resumed.
  for (const status of client.tasks.takeEarly(task.taskId)) handle.observe(status);
  return handle;
}
