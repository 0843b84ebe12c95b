/**
 * The tasks of every session of one backend, in both eras: one store, one
 * runner, handed to every server of that backend (HTTP sessions of one
 * process share the pool, so they share the tasks too). The pieces, one
 * concept each: the bridge from a task to its job (./task-jobs.ts),
 * deciding a cancel (./cancel.ts), closing an owner (./close-owner.ts),
 * expiry (./expiry.ts), the task window (./window.ts), 2026 tasks that ask
 * the client (./task-inputs.ts; ./shared-task-inputs.ts with a shared store) and the counters
 * (./counters.ts). The runner refuses with its own errors (./errors.ts);
 * the tasks/* handlers put them on the wire.
 */
import type { Task } from '@modelcontextprotocol/server';
import type { StartOptions } from '../backend/backend.js';
import { DEFAULTS } from '../defaults.js';
import { cancelTask } from './cancel.js';
import { closeOwner } from './close-owner.js';
import { TaskCounters, type TaskStats } from './counters.js';
import { TaskNotFoundError } from './errors.js';
import { TaskExpiry } from './expiry.js';
import { TaskLeases } from './leases.js';
import { TaskInputs } from './task-inputs.js';
import { SharedInputs, type SharedTaskInputs } from './shared-task-inputs.js';
import { MemoryTaskStore } from './memory-store.js';
import type { TaskAnswer, TaskLimits, TaskPage, TaskRecord, TaskStore } from './store.js';
import { TaskJobs, type TaskBackend, type TaskCall } from './task-jobs.js';
import { TaskWindows, type WindowedCall, type WindowHooks } from './window.js';
import { activeTraceparent } from '../otel/carrier.js';

export type { TaskStats } from './counters.js';
export { taskSession, type TaskBackend, type TaskCall } from './task-jobs.js';
export type { WindowDecision, WindowedCall, WindowHooks } from './window.js';

/** Options for {@link TaskRunner}: the store's limits apply to the default store only. */
export interface TaskRunnerOptions extends TaskLimits {
  /**
   * Where tasks are kept.
   * @default a {@link MemoryTaskStore} with these limits
   */
  readonly store?: TaskStore;
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
  /**
   * How long a 2026 task stays `input_required` (its job asked the client)
   * before it is cancelled, if `tasks/update` has not answered it.
   * @default 60000
   */
  readonly inputWaitMs?: number;
  /**
   * Where 2026 tasks' questions to the client are kept when the store is
   * shared by several front ends (./shared-task-inputs.ts): any of them shows
   * and answers them. In this process's memory when absent. Needs a backend
   * that hands each ask its worker host's id (`relayId`: the QueueBackend);
   * an ask without one is rejected in the stage.
   */
  readonly sharedInputs?: SharedTaskInputs;
  /**
   * A task the server made out of a plain call ({@link TaskRunner.begin})
   * is cancelled when no request has named it for this long (./leases.ts);
   * 0 turns leases off.
   * @default max(60 s, 20 × pollIntervalMs)
   */
  readonly taskLeaseMs?: number;
  /**
   * Lease the tasks clients asked for too (they are otherwise governed by their ttl alone).
   * @default false
   */
  readonly leaseClientTasks?: boolean;
}

/** The default task lease: max(60 s, 20 × the pollInterval the server advertises). */
export function defaultTaskLeaseMs(pollIntervalMs: number = DEFAULTS.taskPollIntervalMs): number {
  return Math.max(60_000, 20 * pollIntervalMs);
}

/** Creates, cancels, reads and expires the tasks of every session of one backend. */
export class TaskRunner {
  readonly store: TaskStore;
  /** {@link TaskRunnerOptions.taskAfterMs}, resolved. */
  readonly taskAfterMs: number;
  private readonly counters = new TaskCounters();
  private readonly jobs: TaskJobs;
  private readonly windows: TaskWindows;
  private readonly expiry: TaskExpiry;
  private readonly inputs: TaskInputs | SharedInputs;
  private readonly leases: TaskLeases;

  constructor(
    backend: TaskBackend,
    private readonly options: TaskRunnerOptions = {},
  ) {
    this.store = options.store ?? new MemoryTaskStore(options);
    this.taskAfterMs = options.taskAfterMs ?? DEFAULTS.taskAfterMs;
    this.jobs = new TaskJobs(backend, this.store, this.counters, () => this.expiry.arm());
    this.leases = new TaskLeases(
      this.jobs,
      this.counters,
      options.taskLeaseMs ?? defaultTaskLeaseMs(options.pollIntervalMs),
      options.leaseClientTasks ?? false,
    );
    this.windows = new TaskWindows(this.jobs, this.counters, (owner, taskId) => this.leases.hold(owner, taskId, true));
    this.expiry = new TaskExpiry(this.jobs, options.sweepIntervalMs ?? DEFAULTS.taskSweepMs);
    const waitMs = options.inputWaitMs ?? DEFAULTS.inputWaitMs;
    this.inputs = options.sharedInputs
      ? new SharedInputs(this.jobs, this.counters, waitMs, options.sharedInputs)
      : new TaskInputs(this.jobs, this.counters, waitMs);
    this.store.onEvicted?.((tasks) => {
      this.counters.evicted(tasks.length);
      this.jobs.forget(tasks, 'tasksExpired'); // finished, so never counted as expired
    });
  }

  /** Creates the task and queues its job; the task is `working` when returned. Throws the store's TaskLimitError. */
  async create(owner: string, call: TaskCall): Promise<Task> {
    // Called in the tools/call handler, inside its server span: the task keeps it for its tasks/* requests.
    const task = await this.store.create(owner, call.ttlMs, undefined, call.tool, activeTraceparent());
    const { clientCapabilities } = call;
    const onClientRequest = clientCapabilities
      ? this.inputs.requester(owner, task.taskId, clientCapabilities)
      : call.onClientRequest;
    const outcome = this.jobs.start(task, this.jobs.track(owner, task, call.tool, call.onStatus), {
      ...call,
      ...(onClientRequest && { onClientRequest }),
    });
    void outcome.then(() => this.inputs.ended(task.taskId));
    this.leases.hold(owner, task.taskId, false);
    return task;
  }

  /** Starts a call that becomes a task only if it has not ended within `windowMs` (./window.ts). */
  begin(
    owner: string,
    options: StartOptions,
    ttlMs: number | undefined,
    hooks: WindowHooks,
    windowMs = this.taskAfterMs,
  ): WindowedCall {
    return this.windows.begin(owner, options, ttlMs, hooks, windowMs);
  }

  /** The owner's task; {@link TaskNotFoundError} if unknown, expired or another owner's. */
  async get(owner: string, taskId: string): Promise<Task> {
    return (await this.record(owner, taskId)).task;
  }

  /** The owner's task and, once terminal, its answer; {@link TaskNotFoundError} if unknown, expired or another owner's. */
  async record(owner: string, taskId: string): Promise<TaskRecord> {
    this.leases.renew(taskId); // before the read: a lease about to pass is held by this request
    const record = await this.store.get(owner, taskId);
    if (!record) throw new TaskNotFoundError(taskId);
    return record;
  }

  /**
   * The creating call's traceparent of the owner's task, for a tasks/* request's
   * server span; undefined if it has none or the owner has no such task. A
   * plain read: it renews no lease (the request's handler does that).
   */
  async traceOf(owner: string, taskId: string): Promise<string | undefined> {
    return (await this.store.get(owner, taskId))?.trace;
  }

  /**
   * 2026 `tasks/update`: answers for a task in `input_required`; its job
   * resumes (./task-inputs.ts). {@link TaskNotFoundError} if the owner has no
   * such task, TaskInputError if it waits for nothing these answer.
   */
  async update(owner: string, taskId: string, responses: Record<string, unknown>): Promise<void> {
    const { task } = await this.record(owner, taskId);
    await this.inputs.answer(owner, taskId, task.status, responses);
  }

  /** The 2026 task's outstanding questions to the client (`inputRequests` of `tasks/get`), if it has any; ask only for a task the caller owns. */
  async inputRequests(taskId: string): Promise<Record<string, unknown> | undefined> {
    return this.inputs.inputRequests(taskId);
  }

  /** Waits until the task is terminal, then gives its answer; {@link TaskNotFoundError} if it is not (or no longer) there. */
  async result(owner: string, taskId: string, signal?: AbortSignal): Promise<TaskRecord & { answer: TaskAnswer }> {
    const unwatch = this.leases.watch(taskId); // a client waiting for the result is interested for as long as it waits
    let record: TaskRecord | undefined;
    try {
      record = await this.store.waitForTerminal(owner, taskId, signal);
    } finally {
      unwatch();
    }
    if (!record?.answer) throw new TaskNotFoundError(taskId);
    // The terminal notifications/tasks/status waits for the task's announcement (a setImmediate queued when the
    // task was made); one turn later it has left, so on stdio it arrives before this answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return record as TaskRecord & { answer: TaskAnswer };
  }

  /** A page of the owner's tasks. */
  list(owner: string, cursor?: string): Promise<TaskPage> {
    return this.store.list(owner, cursor);
  }

  /** `tasks/cancel`, acknowledged only once decided (./cancel.ts). */
  cancelTask(owner: string, taskId: string): Promise<Task> {
    this.leases.renew(taskId);
    return cancelTask(this.jobs, owner, taskId);
  }

  /** The owner's session is gone: its tasks are cancelled and removed (./close-owner.ts); resolves with how many working ones it cancelled. */
  closeOwner(owner: string): Promise<number> {
    return closeOwner(this.jobs, owner, this.windows.undecidedOf(owner), this.options.onOwnerClosed);
  }

  /** Whether the owner still holds tasks (its session must then stay open for them to be read). */
  holdsTasks(owner: string): boolean {
    return this.counters.holdsTasks(owner);
  }

  /** A snapshot of the counters. */
  stats(): TaskStats {
    return this.counters.snapshot();
  }

  /** Removes expired tasks; a working one's job is cancelled (./expiry.ts). */
  sweep(now = Date.now()): Promise<void> {
    return this.expiry.sweep(now);
  }

  /** Stops the sweeper and forgets every task (the backend stops their jobs when it closes). */
  async close(): Promise<void> {
    this.expiry.close();
    this.leases.close();
    this.inputs.close();
    await this.store.close();
  }
}
