/**
 * The task window (--task-after-ms): a 2026 call of an `optional` task tool,
 * from a client that declared the tasks extension, becomes a task only if it
 * has not ended within the window; else it is answered directly.
 *
 * One decision per call, taken once, whichever comes first: the job's
 * outcome (answered directly) or the window's end (a task). At the window's
 * end the job's state word has the last say: a job whose completion (or
 * cancellation) already won is past `running`, its outcome is on its way,
 * and it is answered directly, never also as a task. The job is reserved
 * under its future task id from the start, so becoming a task moves nothing,
 * and `notifications/cancelled` never reaches it once it is one.
 */
import { randomUUID } from 'node:crypto';
import type { Task } from '@modelcontextprotocol/server';
import type { CallHandle, JobOutcome, StartOptions } from '../backend/backend.js';
import type { TaskCounters } from './counters.js';
import { taskSession, type TaskJobs } from './task-jobs.js';
import { activeTraceparent } from '../otel/carrier.js';

/** What {@link TaskWindows.begin} decided for a call, exactly once. */
export type WindowDecision =
  /** The job ended within the window (or cancellation won first): the call is answered with this outcome, as a plain call. */
  | { readonly kind: 'direct'; readonly outcome: JobOutcome }
  /** The window passed with the job still queued or running: it is this task now, and the task takes its outcome. */
  | { readonly kind: 'task'; readonly task: Task };

/** What the caller of {@link TaskWindows.begin} hears as the decision is taken. */
export interface WindowHooks {
  /** The call becomes a task: called synchronously as that is decided, before the task is stored. From here the request's own cancels must not reach the job. */
  readonly becomingTask: () => void;
  /** The task store refused the task (a limit): the call stays a plain call after all, and is answered directly. */
  readonly stayingDirect: () => void;
}

/** A call started by {@link TaskWindows.begin}. */
export interface WindowedCall {
  /** The job, reserved under (`<owner>/tasks`, the id its task will have): cancel it under that key. */
  readonly job: CallHandle;
  readonly decision: Promise<WindowDecision>;
}

/** The calls in their window, and the decision for each. */
export class TaskWindows {
  /** Calls begun and not decided yet: task id → owner (a closing owner cancels them too). */
  private readonly undecided = new Map<string, string>();

  constructor(
    private readonly jobs: TaskJobs,
    private readonly counters: TaskCounters,
    /** Hears each call that became a task here (a task the server made: it holds a lease, ./leases.ts). */
    private readonly adopted: (owner: string, taskId: string) => void = () => undefined,
  ) {}

  /** Starts the call; `decision` settles once, as the module comment says. */
  begin(
    owner: string,
    options: StartOptions,
    ttlMs: number | undefined,
    hooks: WindowHooks,
    windowMs: number,
  ): WindowedCall {
    const taskId = randomUUID();
    // Taken now, in the tools/call's server span: the task is stored from a timer later.
    const trace = activeTraceparent();
    const job = this.jobs.backend.reserve(taskSession(owner), taskId);
    this.undecided.set(taskId, owner);
    const outcome = job.start({ ...options, taskId });
    const decision = new Promise<WindowDecision>((resolve) => {
      let decided = false;
      const claim = (): boolean => !decided && (decided = true);
      const direct = (o: JobOutcome) => {
        this.undecided.delete(taskId);
        if (o.kind !== 'cancelled') this.counters.answeredDirectly();
        resolve({ kind: 'direct', outcome: o });
      };
      const timer = setTimeout(() => {
        if (job.state !== 'queued' && job.state !== 'running') return; // decided on the word: the outcome answers the call
        if (!claim()) return;
        hooks.becomingTask();
        this.adopt(owner, taskId, options.tool, ttlMs, outcome, trace).then(
          (task) => resolve({ kind: 'task', task }),
          () => {
            // The store refused it (a task limit, or a store that failed): the call is answered as a plain one.
            hooks.stayingDirect();
            void outcome.then(direct);
          },
        );
      }, windowMs);
      void outcome.then((o) => {
        clearTimeout(timer);
        if (claim()) direct(o);
      });
    });
    return { job, decision };
  }

  /** The owner's calls still in their window. */
  undecidedOf(owner: string): string[] {
    return [...this.undecided].filter(([, of]) => of === owner).map(([taskId]) => taskId);
  }

  /** Stores the task of a begun job whose window passed; the task takes the job's outcome. Throws the store's TaskLimitError. */
  private async adopt(
    owner: string,
    taskId: string,
    tool: string,
    ttlMs: number | undefined,
    outcome: Promise<JobOutcome>,
    trace: string | undefined,
  ): Promise<Task> {
    const task = await this.jobs.store.create(owner, ttlMs, taskId, tool, trace);
    this.undecided.delete(taskId);
    this.jobs.follow(taskId, this.jobs.track(owner, task, tool, undefined), outcome);
    this.adopted(owner, taskId);
    return task;
  }
}
