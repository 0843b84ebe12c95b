/**
 * The 2026 calls of one connection that may become tasks (--task-after-ms):
 * the task runner begins each one's job under the id its task would have and
 * decides once whether it is answered directly or as a task
 * (src/tasks/window.ts). Here the connection's side of that: which request
 * leads to which job while the decision is open, and a cancel that came
 * before the handler began the job.
 */
import type { Task } from '@modelcontextprotocol/server';
import type { CallHandle, JobOutcome, StartOptions } from '../backend/backend.js';
import type { WindowedCall, WindowHooks } from '../tasks/runner.js';
import type { RequestId } from '../wire/registry.js';
import { NOT_A_CALL, type CallTable } from './call-lifecycle.js';
import type { CancelSource } from '../state/cancel-source.js';

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

/** A cancel that came before the call's job began: applied, with its own source, as it begins. */
interface EarlyCancel {
  readonly reason: string | undefined;
  readonly source: CancelSource;
}

export class WindowedCalls {
  /** Calls begun through a {@link TaskWindow} and not yet decided as tasks: their job's key is not the request's. */
  private readonly windowed = new Set<RequestId>();
  /** Calls admitted for a {@link TaskWindow} whose handler has not begun them yet, with the cancel that came for one. */
  private readonly awaitingBegin = new Map<RequestId, EarlyCancel | undefined>();

  constructor(
    private readonly requests: CallTable,
    /** Cancels the call of request `id` (the connection's own cancel path). */
    private readonly cancel: (id: RequestId, reason: string | undefined, source: CancelSource) => void,
  ) {}

  /** Admits a call that may become a task: its job does not exist until its handler begins it. */
  admit(id: RequestId): void {
    this.requests.set(id, NOT_A_CALL);
    this.awaitingBegin.set(id, undefined);
  }

  /** Whether request `id` leads to a job begun in its window (cancel it under the job's own key). */
  has(id: RequestId): boolean {
    return this.windowed.has(id);
  }

  /** A cancel for a call not begun yet: remembered, and applied as it begins. False if `id` is not waiting to begin. */
  cancelBeforeBegin(id: RequestId, reason: string | undefined, source: CancelSource): boolean {
    if (!this.awaitingBegin.has(id)) return false;
    if (this.awaitingBegin.get(id) === undefined) this.awaitingBegin.set(id, { reason, source });
    return true;
  }

  /** Begins the call of request `id` through `window`; from the moment it is a task, its reports no longer go out. */
  begin(
    id: RequestId,
    window: TaskWindow,
    options: StartOptions,
  ): { readonly call: CallHandle; readonly outcome: Promise<WindowAnswer> } {
    let asTask = false;
    const { onProgress, onLog } = options;
    const begun = window.begin(
      {
        ...options,
        ...(onProgress && { onProgress: (r) => asTask || onProgress(r) }),
        ...(onLog && { onLog: (e) => asTask || onLog(e) }),
      },
      {
        // From the moment it is a task, the request is answered: its reports and its cancels no longer reach the job.
        becomingTask: () => {
          asTask = true;
          this.windowed.delete(id);
          if (this.requests.get(id) === begun.job) this.requests.set(id, NOT_A_CALL);
        },
        stayingDirect: () => {
          asTask = false;
          if (this.requests.get(id) === NOT_A_CALL) this.requests.set(id, begun.job);
          this.windowed.add(id);
        },
      },
    );
    this.requests.set(id, begun.job);
    this.windowed.add(id);
    const early = this.awaitingBegin.get(id);
    if (early) this.cancel(id, early.reason, early.source);
    this.awaitingBegin.delete(id);
    return { call: begun.job, outcome: begun.decision.then((d) => (d.kind === 'task' ? d : d.outcome)) };
  }

  /** Request `id` is done with: forgets it; true if it led to a windowed job. */
  forget(id: RequestId): boolean {
    this.awaitingBegin.delete(id);
    return this.windowed.delete(id);
  }

  /** Request `id` will not begin its call (answered before its handler ran, or released). */
  forgetBegin(id: RequestId): void {
    this.awaitingBegin.delete(id);
  }
}
