/**
 * A 2026 call that may become a task (--task-after-ms): the task runner
 * begins its job under the id its task would have and decides once whether
 * it is answered directly or as a task (src/tasks/window.ts). Here the
 * request's side of that, on its call object (./tool-call.ts): which job the
 * request leads to while the decision is open, and a cancel that came before
 * the handler began the job.
 */
import type { Task } from '@modelcontextprotocol/server';
import type { CallHandle, JobOutcome, StartOptions } from '../backend/backend.js';
import type { WindowedCall, WindowHooks } from '../tasks/runner.js';
import type { EarlyCancel, ToolCall } from './tool-call.js';

/**
 * How a call that may become a task runs (2026, a task tool, the tasks
 * extension declared): its job is begun by the task runner, which decides
 * once whether the call is answered directly or as a task (TaskRunner.begin).
 */
export interface TaskWindow {
  begin(options: StartOptions, hooks: WindowHooks): WindowedCall;
  /** The call's answer once it became this task. */
  answer(task: Task): Record<string, unknown>;
}

/** How a windowed call ended for its request: the job's outcome (answered directly), or its task. */
export type WindowAnswer = JobOutcome | { readonly kind: 'task'; readonly task: Task };

/**
 * Begins `call` through `window`: from the moment it is a task, its reports
 * no longer go out and its request leads to no job (its cancels no longer
 * reach the job). A cancel kept while it waited to begin is handed to `cancel`.
 */
export function beginWindowed(
  call: ToolCall,
  window: TaskWindow,
  options: StartOptions,
  cancel: (early: EarlyCancel) => void,
): { readonly job: CallHandle; readonly outcome: Promise<WindowAnswer> } {
  let asTask = false;
  const { onProgress, onLog } = options;
  const begun = window.begin(
    {
      ...options,
      ...(onProgress && { onProgress: (r) => asTask || onProgress(r) }),
      ...(onLog && { onLog: (e) => asTask || onLog(e) }),
    },
    {
      becomingTask: () => {
        asTask = true;
        call.detach(begun.job);
      },
      stayingDirect: () => {
        asTask = false;
        call.reattach(begun.job);
      },
    },
  );
  const early = call.begin(begun.job);
  if (early) cancel(early);
  return { job: begun.job, outcome: begun.decision.then((d) => (d.kind === 'task' ? d : d.outcome)) };
}
