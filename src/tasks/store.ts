/**
 * Where tasks live between their `tools/call` and their expiry. The server
 * code talks only to this interface: the default store is in memory
 * ({@link MemoryTaskStore}); a store shared by several hosts (Redis, for the
 * multi-host mode) implements the same methods, with `settle` as its
 * compare-and-set.
 *
 * Not the SDK's `TaskStore`: that one lets a caller without a session see
 * every task, stores only successful results, and has no first-writer-wins
 * transition; here every call names the owning session, a terminal status is
 * set exactly once (the one-winner rule of the job's state word, carried to
 * the task), and a task's answer may be a JSON-RPC error. The task objects
 * themselves are the SDK's `Task` type, checked against its `TaskSchema` in
 * the tests.
 */
import type { CallToolResult, Task } from '@modelcontextprotocol/server';
import type { CancelResult } from '../backend/backend.js';
import type { TerminalStatus } from '../state/task-state.js';

// The task states and their table live in src/state/task-state.ts, shared with the client; re-exported for the stores.
export { isTerminal, canMove } from '../state/task-state.js';
export type { TerminalStatus } from '../state/task-state.js';

/** What `tasks/result` answers for a terminal task: exactly what the plain call would have answered. */
export type TaskAnswer =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };

/** A stored task and, once it is terminal, its answer. */
export interface TaskRecord {
  readonly task: Task;
  /** Present exactly when `task.status` is terminal. */
  readonly answer?: TaskAnswer;
  /** The server span of the `tools/call` that created the task, as a W3C traceparent, when it was traced (tasks/* requests join its trace). */
  readonly trace?: string;
}

/** One page of {@link TaskStore.list}. */
export interface TaskPage {
  readonly tasks: Task[];
  /** Absent on the last page. */
  readonly nextCursor?: string;
}

/** Limits every store enforces (the server's flags). */
export interface TaskLimits {
  /**
   * Working tasks (not yet terminal) one session may have at once. Finished
   * tasks do not count: they are bounded by {@link TaskLimits.maxFinishedTaskBytes}.
   * @default 256
   */
  readonly maxWorkingTasksPerSession?: number;
  /**
   * Working tasks all sessions together may have at once.
   * @default 4096
   */
  readonly maxWorkingTasks?: number;
  /**
   * Bytes (the JSON of task and answer) the finished tasks of all sessions
   * may keep until their ttl. Past it the oldest finished tasks (by the time
   * they finished) are removed first; a result larger than the whole bound
   * is not kept at all. A removed task reads as an expired one.
   * @default 67_108_864 (64 MiB)
   */
  readonly maxFinishedTaskBytes?: number;
  /**
   * Longest ttl granted (ms from creation); a longer request is cut to it.
   * @default 3_600_000 (1 hour)
   */
  readonly maxTtlMs?: number;
  /**
   * ttl of a task whose request names none.
   * @default 600_000 (10 minutes)
   */
  readonly defaultTtlMs?: number;
  /**
   * `pollInterval` suggested to clients, in ms.
   * @default 500
   */
  readonly pollIntervalMs?: number;
  /**
   * Tasks per `tasks/list` page.
   * @default 50
   */
  readonly pageSize?: number;
}

// The store's refusals live in errors.ts, so a store outside tasks/ (the Redis one, src/remote/) throws the same classes.
export { InvalidCursorError, TaskLimitError } from '../errors.js';

/**
 * The task store. Every method takes the owner, the session that created the
 * task (the MCP session over HTTP, the connection over stdio): a task of
 * another owner, an expired task and an unknown id all look the same, absent.
 */
export interface TaskStore {
  /**
   * Creates a `working` task with the granted ttl; throws {@link TaskLimitError} past a limit.
   * `taskId` is the id to give it (a call that began before it became a task has its job
   * reserved under that id already); a fresh one when absent. `tool` names
   * what it runs (a store shared by front ends settles a task from its job's
   * outcome wherever it is read, and needs it for the answer). `trace` is
   * kept as the record's {@link TaskRecord.trace}.
   */
  create(
    owner: string,
    requestedTtlMs: number | undefined,
    taskId?: string,
    tool?: string,
    trace?: string,
  ): Promise<Task>;
  /** The task, or undefined if unknown, expired or another owner's. */
  get(owner: string, taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Makes the task terminal with its answer, only if it is not terminal yet.
   * Returns the updated task if this call did it, undefined if the task was
   * already terminal (the first status stays) or is gone.
   */
  settle(
    owner: string,
    taskId: string,
    status: TerminalStatus,
    answer: TaskAnswer,
    statusMessage?: string,
  ): Promise<Task | undefined>;
  /**
   * A store shared by several front ends (Redis): decides `tasks/cancel` of
   * a task whose job this process does not hold, on the job's own state, as
   * the backend decides a plain call's cancel; if the cancel won, the task
   * is settled `cancelled` with `answer` and `statusMessage` in the same step,
   * so the front end holding the job cannot settle it first with its own
   * words. Absent in a store of one process.
   */
  cancelJob?(owner: string, taskId: string, answer: TaskAnswer, statusMessage: string): Promise<CancelResult>;
  /**
   * The tasks `owner` (a 2025 session) creates from now on count as
   * `caller`'s against the per-caller limit, so an OAuth caller's sessions
   * share its limit with its 2026 tasks; until {@link TaskStore.uncount}.
   */
  countAs?(owner: string, caller: string): void;
  /** `owner` (a session) is gone; its tasks still working stay counted where they were. */
  uncount?(owner: string): void;
  /**
   * Moves a task that is not terminal between `working` and `input_required`
   * (2026: its job asked the client, or got every answer). Returns the task,
   * or undefined if it is terminal or gone.
   */
  mark(
    owner: string,
    taskId: string,
    status: 'working' | 'input_required',
    statusMessage?: string,
  ): Promise<Task | undefined>;
  /** The owner's tasks, oldest first, one page at a time; throws {@link InvalidCursorError}. */
  list(owner: string, cursor?: string): Promise<TaskPage>;
  /** Resolves once the task is terminal (at once if it is), or undefined if it is gone or `signal` aborts. */
  waitForTerminal(owner: string, taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined>;
  /** How many tasks the owner holds (working or finished, not expired). */
  count(owner: string): Promise<number>;
  /**
   * Tells `listener` of finished tasks removed before their ttl to stay within
   * a bound ({@link TaskLimits.maxFinishedTaskBytes}). A store without such a
   * bound need not have it.
   */
  onEvicted?(listener: (tasks: Task[]) => void): void;
  /**
   * A store shared by front ends: moves the task's lease end (epoch ms) to
   * `until` if that is later, atomically; `start` gives a task its lease,
   * otherwise a task without one is left as it is. Absent in a store of one
   * process (the leases are then the runner's alone).
   */
  renewLease?(taskId: string, until: number, start: boolean): Promise<void>;
  /** A store shared by front ends: the task's lease end as renewed by any of them, if it has one. */
  leaseUntil?(taskId: string): Promise<number | undefined>;
  /** Removes the tasks whose ttl has passed; returns them as they were (a working one must be stopped by the caller). */
  sweep(now?: number): Promise<Task[]>;
  /** Removes every task of an owner (its session is gone); returns them as they were. */
  dropOwner(owner: string): Promise<Task[]>;
  /** Stops timers and forgets everything. */
  close(): Promise<void>;
}
