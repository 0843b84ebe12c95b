/**
 * Runs task-augmented tool calls. A task's job goes through the same backend
 * path as a plain call (registry → admission → pool), reserved under the key
 * (`<session>/tasks`, taskId): a key space of its own, so a request id can
 * never name a task's job, and `notifications/cancelled` never reaches one.
 *
 * One winner, as for plain calls: `tasks/cancel` asks the backend to cancel
 * the job, which decides on the job's state word. If cancellation wins, the
 * task is made `cancelled` in the store before `tasks/cancel` is answered,
 * and the job's later outcome cannot change it (a store settles a task once).
 * If completion (or the deadline) won, the task takes the job's outcome and
 * `tasks/cancel` gets the spec's error for a terminal task.
 */
import { randomUUID } from 'node:crypto';
import type { Task } from '@modelcontextprotocol/server';
import { invalidParams } from '../server/wire-errors.js';
import type { CallBackend, CallHandle, CancelResult, ClientRequestHandler, JobOutcome, ProgressReport, StartOptions } from '../backend/backend.js';
import { DEFAULTS } from '../defaults.js';
import { cancelledAnswer, settlementOf } from './answer.js';
import { isTerminal, type TaskAnswer, type TaskPage, type TaskRecord, type TaskStore, type TerminalStatus } from './store.js';

/** What the runner needs of the call backend (the local pool, or a queue shared by hosts): reserve, start, cancel. */
export type TaskBackend = Pick<CallBackend, 'tools' | 'reserve' | 'requestCancel'>;

/** One task-augmented `tools/call`. */
export interface TaskCall {
  readonly tool: string;
  readonly args: unknown;
  /** The requested ttl; the store caps it. */
  readonly ttlMs?: number;
  /** Progress while the task works; never after its terminal status. */
  readonly onProgress?: (report: ProgressReport) => void;
  /** For tools declared with `usesClient`. */
  readonly onClientRequest?: ClientRequestHandler;
  /** Each status change after creation (the terminal one), never before the caller had the task. */
  readonly onStatus?: (task: Task) => void;
}

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
}

/** What {@link TaskRunner.begin} decided for a call, exactly once. */
export type WindowDecision =
  /** The job ended within the window (or cancellation won first): the call is answered with this outcome, as a plain call. */
  | { readonly kind: 'direct'; readonly outcome: JobOutcome }
  /** The window passed with the job still queued or running: it is this task now, and the task takes its outcome. */
  | { readonly kind: 'task'; readonly task: Task };

/** What the caller of {@link TaskRunner.begin} hears as the decision is taken. */
export interface WindowHooks {
  /** The call becomes a task: called synchronously as that is decided, before the task is stored. From here the request's own cancels must not reach the job. */
  readonly becomingTask: () => void;
  /** The task store refused the task (a limit): the call stays a plain call after all, and is answered directly. */
  readonly stayingDirect: () => void;
}

/** A call started by {@link TaskRunner.begin}. */
export interface WindowedCall {
  /** The job, reserved under (`<owner>/tasks`, the id its task will have): cancel it under that key. */
  readonly job: CallHandle;
  readonly decision: Promise<WindowDecision>;
}

/** Options for {@link TaskRunner}. */
export interface TaskRunnerOptions {
  /**
   * How often expired tasks are removed.
   * @default 1000
   */
  readonly sweepIntervalMs?: number;
  /**
   * Told, as an owner's session closes, how many of its working tasks that
   * cancelled (the command line logs it). Called before the cancelled jobs
   * have stopped: each stops at its next checkpoint.
   */
  readonly onOwnerClosed?: (owner: string, cancelled: number) => void;
  /**
   * How long a call that may become a task ({@link TaskRunner.begin}) may
   * run before it does; 0 makes it a task at once.
   * @default 1000
   */
  readonly taskAfterMs?: number;
}

interface LiveTask {
  readonly owner: string;
  readonly tool: string;
  terminal: boolean;
  /** tasks/cancel asked for it (its cancelled outcome may settle the task before tasks/cancel does). */
  cancelRequested: boolean;
  readonly onStatus: ((task: Task) => void) | undefined;
  /** Resolves a macrotask after creation, when the CreateTaskResult has left: status notifications wait for it. */
  readonly announced: Promise<void>;
}

/** The spec's statusMessage for a task cancelled by tasks/cancel. */
const CANCELLED_BY_REQUEST = 'The task was cancelled by request.';

/** The backend session under which an owner's task jobs are reserved. */
export function taskSession(owner: string): string {
  return `${owner}/tasks`;
}

/** Creates, cancels, reads and expires the tasks of every session of one backend (see the module comment). */
export class TaskRunner {
  private readonly live = new Map<string, LiveTask>();
  /** Tasks held per owner, for {@link TaskRunner.holdsTasks}. */
  private readonly held = new Map<string, number>();
  /** Calls begun and not decided yet: task id → owner (a closing owner cancels them too). */
  private readonly undecided = new Map<string, string>();
  private readonly counters: TaskStats = { tasksCreated: 0, tasksWorking: 0, tasksCompleted: 0, tasksFailed: 0, tasksCancelled: 0, tasksExpired: 0, tasksStored: 0, tasksAnsweredDirectly: 0 };
  /** {@link TaskRunnerOptions.taskAfterMs}, resolved. */
  readonly taskAfterMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly backend: TaskBackend,
    readonly store: TaskStore,
    private readonly options: TaskRunnerOptions = {},
  ) {
    this.sweeper = setInterval(() => void this.sweep(), options.sweepIntervalMs ?? DEFAULTS.taskSweepMs);
    this.sweeper.unref();
    this.taskAfterMs = options.taskAfterMs ?? DEFAULTS.taskAfterMs;
  }

  /**
   * Starts a call that becomes a task only if it has not ended within
   * `windowMs`. One decision, taken once, whichever comes first: the job's
   * outcome (answered directly) or the window's end (a task). At the
   * window's end the job's state word has the last say: a job whose
   * completion (or cancellation) already won is past `running`, its outcome
   * is on its way, and it is answered directly, never also as a task. The job
   * is reserved under its future task id from the start, so turning it into
   * a task moves nothing, and `notifications/cancelled` never reaches it once
   * it is one.
   */
  begin(owner: string, options: StartOptions, ttlMs: number | undefined, hooks: WindowHooks, windowMs = this.taskAfterMs): WindowedCall {
    const taskId = randomUUID();
    const job = this.backend.reserve(taskSession(owner), taskId);
    this.undecided.set(taskId, owner);
    const outcome = job.start(options);
    const decision = new Promise<WindowDecision>((resolve) => {
      let decided = false;
      const claim = (): boolean => !decided && (decided = true);
      const direct = (o: JobOutcome) => {
        this.undecided.delete(taskId);
        if (o.kind !== 'cancelled') this.counters.tasksAnsweredDirectly++;
        resolve({ kind: 'direct', outcome: o });
      };
      const timer = setTimeout(() => {
        if (job.state !== 'queued' && job.state !== 'running') return; // decided on the word: the outcome answers the call
        if (!claim()) return;
        hooks.becomingTask();
        this.adopt(owner, taskId, options.tool, ttlMs, outcome).then(
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

  /** Creates the task and queues its job; the task is `working` when returned. Throws the store's TaskLimitError. */
  async create(owner: string, call: TaskCall): Promise<Task> {
    const task = await this.store.create(owner, call.ttlMs);
    const live = this.track(owner, task, call.tool, call.onStatus);
    const { onProgress } = call;
    const job = this.backend.reserve(taskSession(owner), task.taskId);
    void job
      .start({
        tool: call.tool,
        args: call.args,
        ...(onProgress && { onProgress: (report: ProgressReport) => live.terminal || onProgress(report) }),
        ...(call.onClientRequest && { onClientRequest: call.onClientRequest }),
      })
      .then((outcome) => this.finish(task.taskId, live, outcome));
    return task;
  }

  /** Stores the task for a begun job whose window passed; the task takes the job's outcome. Throws the store's TaskLimitError. */
  private async adopt(owner: string, taskId: string, tool: string, ttlMs: number | undefined, outcome: Promise<JobOutcome>): Promise<Task> {
    const task = await this.store.create(owner, ttlMs, taskId);
    this.undecided.delete(taskId);
    const live = this.track(owner, task, tool, undefined);
    void outcome.then((o) => this.finish(task.taskId, live, o));
    return task;
  }

  private track(owner: string, task: Task, tool: string, onStatus: ((task: Task) => void) | undefined): LiveTask {
    this.counters.tasksCreated++;
    this.counters.tasksWorking++;
    this.counters.tasksStored++;
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    const live: LiveTask = { owner, tool, terminal: false, cancelRequested: false, onStatus, announced: new Promise((resolve) => setImmediate(resolve)) };
    this.live.set(task.taskId, live);
    return live;
  }

  /** The owner's task; -32602 if unknown, expired or another session's. */
  async get(owner: string, taskId: string): Promise<Task> {
    const record = await this.store.get(owner, taskId);
    if (!record) throw notFound(taskId);
    return record.task;
  }

  /** The owner's task and, once terminal, its answer; -32602 if unknown, expired or another owner's. */
  async record(owner: string, taskId: string): Promise<TaskRecord> {
    const record = await this.store.get(owner, taskId);
    if (!record) throw notFound(taskId);
    return record;
  }

  /**
   * 2026 `tasks/update`: input for a task waiting for it. No task of ours
   * waits for input yet, so the responses match no outstanding key and are
   * ignored, as the extension says; an unknown task is still -32602.
   */
  async update(owner: string, taskId: string, _responses: Record<string, unknown>): Promise<void> {
    await this.record(owner, taskId);
  }

  /** Waits until the task is terminal, then gives its answer; -32602 if it is not (or no longer) there. */
  async result(owner: string, taskId: string, signal?: AbortSignal): Promise<TaskRecord & { answer: TaskAnswer }> {
    const record = await this.store.waitForTerminal(owner, taskId, signal);
    if (!record?.answer) throw notFound(taskId);
    return record as TaskRecord & { answer: TaskAnswer };
  }

  /** A page of the owner's tasks. */
  list(owner: string, cursor?: string): Promise<TaskPage> {
    return this.store.list(owner, cursor);
  }

  /**
   * `tasks/cancel`. Resolves with the `cancelled` task once the cancellation
   * won on the job's state word and the store says `cancelled`; rejects with
   * -32602 if the task is unknown or terminal, including when completion won
   * the race (the task then keeps its own terminal status).
   */
  async cancel(owner: string, taskId: string): Promise<Task> {
    const record = await this.store.get(owner, taskId);
    if (!record) throw notFound(taskId);
    if (isTerminal(record.task.status)) throw alreadyTerminal(record.task.status);
    const live = this.live.get(taskId);
    // No live job here: another process runs it, or it just ended; either way its outcome settles the task.
    let result: CancelResult = 'unknown';
    if (live?.owner === owner) {
      live.cancelRequested = true;
      result = await this.backend.requestCancel(taskSession(owner), taskId, 'tasks/cancel');
    }
    const won = result === 'cancelled-queued' || result === 'cancelled-running';
    if (won) {
      const task = await this.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), CANCELLED_BY_REQUEST);
      if (task) return task;
    }
    const final = await this.store.waitForTerminal(owner, taskId);
    if (!final) throw notFound(taskId);
    if (won && final.task.status === 'cancelled') return final.task;
    throw alreadyTerminal(final.task.status);
  }

  /**
   * The owner's session is gone (stdio connection closed, HTTP session
   * deleted or expired): nobody can ask for its tasks any more. Cancels the
   * working ones, waits for those whose completion won, and removes them all.
   */
  async closeOwner(owner: string): Promise<void> {
    const pending: Promise<unknown>[] = [];
    let cancelled = 0;
    const decisions: Promise<CancelResult>[] = [];
    const ids: string[] = [];
    for (const [taskId, live] of this.live) {
      if (live.owner !== owner || live.terminal) continue;
      ids.push(taskId);
      decisions.push(this.backend.requestCancel(taskSession(owner), taskId, 'session closed'));
    }
    // Calls still in their window: not tasks yet, and none will become one (their outcome is cancelled).
    for (const [taskId, of] of this.undecided) if (of === owner) void this.backend.requestCancel(taskSession(owner), taskId, 'session closed');
    // The local pool decides each at once; the queue backend when Redis has: all asked before any wait.
    const results = await Promise.all(decisions);
    results.forEach((result, i) => {
      const taskId = ids[i]!;
      if (result === 'cancelled-queued' || result === 'cancelled-running') {
        cancelled++;
        pending.push(this.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), 'The session closed.'));
      } else pending.push(this.store.waitForTerminal(owner, taskId));
    });
    // Before any await: a stdio server exits right after its connection closes.
    this.options.onOwnerClosed?.(owner, cancelled);
    await Promise.all(pending);
    this.removed(await this.store.dropOwner(owner), 'tasksCancelled');
  }

  /** Whether the owner still holds tasks (its session must then stay open for them to be read). */
  holdsTasks(owner: string): boolean {
    return (this.held.get(owner) ?? 0) > 0;
  }

  /** A snapshot of the counters. */
  stats(): TaskStats {
    return { ...this.counters };
  }

  /** Stops the sweeper and forgets every task (the backend stops their jobs when it closes). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.store.close();
  }

  /** Removes expired tasks; a working one's job is cancelled (nobody can ask for it any more). */
  async sweep(now = Date.now()): Promise<void> {
    const gone = await this.store.sweep(now);
    for (const task of gone) {
      const live = this.live.get(task.taskId);
      if (live && !isTerminal(task.status)) {
        live.terminal = true;
        void this.backend.requestCancel(taskSession(live.owner), task.taskId, 'task expired');
      }
    }
    this.removed(gone, 'tasksExpired');
  }

  private removed(tasks: Task[], stillWorkingCountsAs: 'tasksExpired' | 'tasksCancelled'): void {
    for (const task of tasks) {
      const live = this.live.get(task.taskId);
      this.live.delete(task.taskId);
      this.counters.tasksStored--;
      const owner = live?.owner;
      if (owner !== undefined) {
        const n = (this.held.get(owner) ?? 1) - 1;
        if (n > 0) this.held.set(owner, n);
        else this.held.delete(owner);
      }
      if (!isTerminal(task.status)) {
        this.counters.tasksWorking--;
        this.counters[stillWorkingCountsAs]++;
      }
    }
  }

  /** The job's outcome, whoever won: settles the task unless it is terminal already (or gone). */
  private async finish(taskId: string, live: LiveTask, outcome: JobOutcome): Promise<void> {
    if (outcome.kind === 'cancelled') await this.settle(live.owner, taskId, 'cancelled', cancelledAnswer(taskId), live.cancelRequested ? CANCELLED_BY_REQUEST : 'The task was cancelled.');
    else {
      const { status, answer, statusMessage } = settlementOf(outcome, live.tool);
      await this.settle(live.owner, taskId, status, answer, statusMessage);
    }
    // Held in `live` until removed, so an expiry or session close finds the owner; the job itself is done.
  }

  private async settle(owner: string, taskId: string, status: TerminalStatus, answer: TaskAnswer, statusMessage?: string): Promise<Task | undefined> {
    const live = this.live.get(taskId);
    if (live) live.terminal = true; // no progress from here on, whatever the store says
    const task = await this.store.settle(owner, taskId, status, answer, statusMessage);
    if (!task) return undefined;
    this.counters.tasksWorking--;
    this.counters[status === 'completed' ? 'tasksCompleted' : status === 'failed' ? 'tasksFailed' : 'tasksCancelled']++;
    if (live?.onStatus) {
      const notify = live.onStatus;
      void live.announced.then(() => notify(task));
    }
    return task;
  }
}

function notFound(taskId: string): Error {
  return invalidParams(`Failed to retrieve task: Task not found (${JSON.stringify(taskId)}: unknown, expired or another session's)`);
}

function alreadyTerminal(status: string): Error {
  return invalidParams(`Cannot cancel task: already in terminal status '${status}'`);
}
