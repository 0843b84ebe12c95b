/**
 * The bridge between a task and its job. A task's job goes through the same
 * backend path as a plain call (registry → admission → pool), reserved under
 * the key (`<owner>/tasks`, taskId): a key space of its own, so a request id
 * can never name a task's job, and `notifications/cancelled` never reaches
 * one. The job's outcome, whoever won its race, settles the task once (a
 * store settles a task once); its progress stops at the terminal status.
 */
import type { Task } from '@modelcontextprotocol/server';
import type {
  CallBackend,
  CancelResult,
  ClientRequestHandler,
  JobOutcome,
  ProgressReport,
  StartOptions,
} from '../backend/backend.js';
import { cancelledAnswer, settlementOf } from './answer.js';
import type { RemovedWorking, TaskCounters } from './counters.js';
import { isTerminal, type TaskAnswer, type TaskStore, type TerminalStatus } from './store.js';

/** What tasks need of the call backend (the local pool, or a queue shared by hosts): reserve, start, cancel. */
export type TaskBackend = Pick<CallBackend, 'tools' | 'reserve' | 'requestCancel'>;

/** One task-augmented `tools/call`. */
export interface TaskCall {
  readonly tool: string;
  readonly args: unknown;
  /** The requested ttl; the store caps it. */
  readonly ttlMs?: number;
  /** Progress while the task works; never after its terminal status. */
  readonly onProgress?: (report: ProgressReport) => void;
  /** For tools declared with `usesClient` (2025: sent to the client as requests). */
  readonly onClientRequest?: ClientRequestHandler;
  /**
   * 2026: the capabilities the creating request declared. Given, the job's
   * requests to the client become the task's `inputRequests`, answered by
   * `tasks/update` (./task-inputs.ts), instead of {@link TaskCall.onClientRequest}.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /** Each status change after creation (the terminal one), never before the caller had the task. */
  readonly onStatus?: (task: Task) => void;
}

/** A task whose job this process runs. */
export interface LiveTask {
  readonly owner: string;
  readonly tool: string;
  terminal: boolean;
  /** tasks/cancel asked for it (its cancelled outcome may settle the task before tasks/cancel does). */
  cancelRequested: boolean;
  /** The server cancelled it (its lease passed): the status message its cancelled outcome settles it with. */
  cancelMessage?: string;
  /** Its terminal status is counted (once, here, by the process that created it, whoever settled it). */
  counted: boolean;
  readonly onStatus: ((task: Task) => void) | undefined;
  /** Resolves a macrotask after creation, when the CreateTaskResult has left: status notifications wait for it. */
  readonly announced: Promise<void>;
}

/** The spec's statusMessage for a task cancelled by tasks/cancel. */
export const CANCELLED_BY_REQUEST = 'The task was cancelled by request.';

/** The backend session under which an owner's task jobs are reserved. */
export function taskSession(owner: string): string {
  return `${owner}/tasks`;
}

/** Every task whose job runs here, from its creation until the store forgets it. */
export class TaskJobs {
  readonly live = new Map<string, LiveTask>();

  constructor(
    readonly backend: TaskBackend,
    readonly store: TaskStore,
    private readonly counters: TaskCounters,
    /** Hears each task tracked (the expiry's sweep starts with the first). */
    private readonly onTrack: () => void,
  ) {}

  /** A task was just stored: from now on its job's outcome settles it. */
  track(owner: string, task: Task, tool: string, onStatus: ((task: Task) => void) | undefined): LiveTask {
    this.counters.created(owner);
    const live: LiveTask = {
      owner,
      tool,
      terminal: false,
      cancelRequested: false,
      counted: false,
      onStatus,
      announced: new Promise((resolve) => setImmediate(resolve)),
    };
    this.live.set(task.taskId, live);
    this.onTrack();
    return live;
  }

  /** Reserves and queues the job of a task just tracked; resolves with its outcome (the task follows it already). */
  start(task: Task, live: LiveTask, call: TaskCall): Promise<JobOutcome> {
    const { onProgress } = call;
    const job = this.backend.reserve(taskSession(live.owner), task.taskId);
    const options: StartOptions = {
      tool: call.tool,
      args: call.args,
      ...(onProgress && { onProgress: (report: ProgressReport) => live.terminal || onProgress(report) }),
      ...(call.onClientRequest && { onClientRequest: call.onClientRequest }),
      taskId: task.taskId,
    };
    const outcome = job.start(options);
    this.follow(task.taskId, live, outcome);
    return outcome;
  }

  /** The task takes this outcome when it comes. */
  follow(taskId: string, live: LiveTask, outcome: Promise<JobOutcome>): void {
    // A store that cannot be written (Redis closed by the shutdown, or down) must not crash the process: the task
    // stays `working` there until its TTL removes it, and the store's own reachability line has said why.
    void outcome.then((o) => this.finish(taskId, live, o)).catch(() => undefined);
  }

  /** Asks the backend to cancel a task's job; resolves with its decision. */
  requestCancel(owner: string, taskId: string, reason: string): Promise<CancelResult> {
    return this.backend.requestCancel(taskSession(owner), taskId, reason);
  }

  /** Makes the task terminal unless it is already (or gone); no progress from here on either way. */
  async settle(
    owner: string,
    taskId: string,
    status: TerminalStatus,
    answer: TaskAnswer,
    statusMessage?: string,
  ): Promise<Task | undefined> {
    const live = this.live.get(taskId);
    if (live) live.terminal = true;
    const task = await this.store.settle(owner, taskId, status, answer, statusMessage);
    if (!task) {
      // A store shared by front ends: another one may have settled our task first; it is still ours to count.
      if (live && !live.counted) {
        const final = (await this.store.get(owner, taskId))?.task.status;
        if (final !== undefined && isTerminal(final) && !live.counted) {
          live.counted = true;
          this.counters.settled(final);
        }
      }
      return undefined;
    }
    // Counted by the process that created the task: a cancel of another front end's task settles it, uncounted here.
    if (live && !live.counted) {
      live.counted = true;
      this.counters.settled(status);
    }
    if (live?.onStatus) {
      const notify = live.onStatus;
      void live.announced.then(() => notify(task));
    }
    return task;
  }

  /** The store removed these tasks: forget them (one still working counts as `working`). */
  forget(tasks: Task[], working: RemovedWorking): void {
    for (const task of tasks) {
      const live = this.live.get(task.taskId);
      this.live.delete(task.taskId);
      this.counters.removed(live?.owner, task.status, working);
    }
  }

  /** The job's outcome, whoever won: settles the task unless it is terminal already (or gone). */
  private async finish(taskId: string, live: LiveTask, outcome: JobOutcome): Promise<void> {
    if (outcome.kind === 'cancelled')
      await this.settle(
        live.owner,
        taskId,
        'cancelled',
        cancelledAnswer(taskId),
        live.cancelRequested ? CANCELLED_BY_REQUEST : (live.cancelMessage ?? 'The task was cancelled.'),
      );
    else {
      const { status, answer, statusMessage } = settlementOf(outcome, live.tool);
      await this.settle(live.owner, taskId, status, answer, statusMessage);
    }
    // Held in `live` until forgotten, so an expiry or session close finds the owner; the job itself is done.
  }
}
