/**
 * The default task store: in this process's memory, so a task cannot outlive
 * the process whose workers run it. Bounded by {@link TaskLimits}: working
 * tasks by count (a task-augmented call past it is refused), finished tasks
 * by the bytes of what they keep (the oldest finished go first: a finished
 * task has already been answered, so dropping it costs a client a re-read,
 * never lost work). Expired tasks are removed by {@link MemoryTaskStore.sweep}
 * (the runner calls it on a timer).
 */
import { randomUUID } from 'node:crypto';
import type { Task } from '@modelcontextprotocol/server';
import { DEFAULTS } from '../defaults.js';
import {
  InvalidCursorError,
  canMove,
  isTerminal,
  type TaskAnswer,
  type TaskLimits,
  type TaskPage,
  type TaskRecord,
  type TaskStore,
  type TerminalStatus,
} from './store.js';
import { perOwnerTaskLimit, totalTaskLimit } from '../errors.js';

interface Entry {
  readonly owner: string;
  /** Whose count of working tasks it is in: its owner, or the caller an owner counts as ({@link MemoryTaskStore.countAs}). */
  readonly countedAs: string;
  /** Creation order, for pagination cursors. */
  readonly seq: number;
  readonly expiresAt: number;
  task: Task;
  answer?: TaskAnswer;
  /** The creating call's traceparent (TaskRecord.trace). */
  readonly trace: string | undefined;
  /** Once finished: what it keeps, as counted against maxFinishedTaskBytes. */
  bytes: number;
  /** Waiting for the terminal status: resolved with the entry, or undefined when it is removed. */
  waiters: ((entry: Entry | undefined) => void)[];
}

/** Resolved limits, every default applied. */
export interface ResolvedTaskLimits {
  readonly maxWorkingTasksPerSession: number;
  readonly maxWorkingTasks: number;
  readonly maxFinishedTaskBytes: number;
  readonly maxTtlMs: number;
  readonly defaultTtlMs: number;
  readonly pollIntervalMs: number;
  readonly pageSize: number;
}

/** {@link TaskLimits} with the defaults filled in. */
export function resolveLimits(limits: TaskLimits = {}): ResolvedTaskLimits {
  return {
    maxWorkingTasksPerSession: limits.maxWorkingTasksPerSession ?? DEFAULTS.maxWorkingTasksPerSession,
    maxWorkingTasks: limits.maxWorkingTasks ?? DEFAULTS.maxWorkingTasks,
    maxFinishedTaskBytes: limits.maxFinishedTaskBytes ?? DEFAULTS.maxFinishedTaskBytes,
    maxTtlMs: limits.maxTtlMs ?? DEFAULTS.maxTaskTtlMs,
    defaultTtlMs: Math.min(limits.defaultTtlMs ?? DEFAULTS.taskTtlMs, limits.maxTtlMs ?? DEFAULTS.maxTaskTtlMs),
    pollIntervalMs: limits.pollIntervalMs ?? DEFAULTS.taskPollIntervalMs,
    pageSize: limits.pageSize ?? DEFAULTS.taskPageSize,
  };
}

/** The in-memory {@link TaskStore}: tasks by id and by owner, bounded by {@link TaskLimits}. */
export class MemoryTaskStore implements TaskStore {
  readonly limits: ResolvedTaskLimits;
  private readonly byId = new Map<string, Entry>();
  /** Each owner's tasks in creation order (a Map keeps insertion order). */
  private readonly byOwner = new Map<string, Map<string, Entry>>();
  /** Working tasks per owner, and in all. */
  private readonly workingByOwner = new Map<string, number>();
  private working = 0;
  /** Owners (2025 sessions of an OAuth caller) whose tasks count as another's: its caller. */
  private readonly countedAs = new Map<string, string>();
  /** Finished tasks in the order they finished (a Map keeps insertion order): the eviction order. */
  private readonly finished = new Map<string, Entry>();
  private finishedBytes = 0;
  private evictionListener: ((tasks: Task[]) => void) | undefined;
  private seq = 0;

  constructor(limits: TaskLimits = {}) {
    this.limits = resolveLimits(limits);
  }

  async create(
    owner: string,
    requestedTtlMs: number | undefined,
    taskId: string = randomUUID(),
    _tool?: string,
    trace?: string,
  ): Promise<Task> {
    const mine = this.byOwner.get(owner);
    const countedAs = this.countedAs.get(owner) ?? owner;
    const workingHere = this.workingByOwner.get(countedAs) ?? 0;
    // The owner's limit first, so one caller cannot take every task.
    if (workingHere >= this.limits.maxWorkingTasksPerSession) throw perOwnerTaskLimit(this.limits);
    if (this.working >= this.limits.maxWorkingTasks) throw totalTaskLimit(this.limits, 'in all sessions');
    const ttl = Math.min(requestedTtlMs ?? this.limits.defaultTtlMs, this.limits.maxTtlMs);
    const now = Date.now();
    const createdAt = new Date(now).toISOString();
    const task: Task = {
      taskId,
      status: 'working',
      createdAt,
      lastUpdatedAt: createdAt,
      ttl,
      pollInterval: this.limits.pollIntervalMs,
    };
    const entry: Entry = {
      owner,
      countedAs,
      seq: ++this.seq,
      expiresAt: now + ttl,
      task,
      trace,
      bytes: 0,
      waiters: [],
    };
    this.byId.set(task.taskId, entry);
    this.workingByOwner.set(countedAs, workingHere + 1);
    this.working++;
    if (mine) mine.set(task.taskId, entry);
    else this.byOwner.set(owner, new Map([[task.taskId, entry]]));
    return { ...task };
  }

  /**
   * Working tasks counted as `owner`'s now: what the per-caller task limit counts (`executor://stats` shows a caller
   * its own), its 2025 sessions' included once they {@link countAs} it.
   */
  workingOf(owner: string): number {
    return this.workingByOwner.get(owner) ?? 0;
  }

  /**
   * The tasks `owner` (a 2025 session) creates from now on count as `caller`'s against the per-caller limit, so an
   * OAuth caller's sessions share its limit with its 2026 tasks (issue 64); until {@link uncount}.
   */
  countAs(owner: string, caller: string): void {
    this.countedAs.set(owner, caller);
  }

  /** `owner` is gone (its session closed); its tasks still working are counted where they were. */
  uncount(owner: string): void {
    this.countedAs.delete(owner);
  }

  async get(owner: string, taskId: string): Promise<TaskRecord | undefined> {
    const entry = this.lookup(owner, taskId);
    return entry && record(entry);
  }

  async settle(
    owner: string,
    taskId: string,
    status: TerminalStatus,
    answer: TaskAnswer,
    statusMessage?: string,
  ): Promise<Task | undefined> {
    const entry = this.lookup(owner, taskId);
    if (!entry || !canMove(entry.task.status, status)) return undefined; // a terminal status is set once
    const { statusMessage: _previous, ...rest } = entry.task;
    entry.task = {
      ...rest,
      status,
      lastUpdatedAt: new Date().toISOString(),
      ...(statusMessage !== undefined && { statusMessage }),
    };
    entry.answer = answer;
    this.leftWorking(entry);
    for (const wake of entry.waiters.splice(0)) wake(entry);
    const settled = { ...entry.task };
    this.keep(entry);
    return settled;
  }

  async mark(
    owner: string,
    taskId: string,
    status: 'working' | 'input_required',
    statusMessage?: string,
  ): Promise<Task | undefined> {
    const entry = this.lookup(owner, taskId);
    // Staying (a new message) or an edge of the table; never out of a terminal status.
    if (!entry || (entry.task.status !== status && !canMove(entry.task.status, status))) return undefined;
    const { statusMessage: _previous, ...rest } = entry.task;
    entry.task = {
      ...rest,
      status,
      lastUpdatedAt: new Date().toISOString(),
      ...(statusMessage !== undefined && { statusMessage }),
    };
    return { ...entry.task };
  }

  onEvicted(listener: (tasks: Task[]) => void): void {
    this.evictionListener = listener;
  }

  /** Counts a finished entry against the byte bound, then removes the oldest finished ones past it. */
  private keep(entry: Entry): void {
    // The JSON is what a client is sent for it; the Map and object overhead is small beside a result worth bounding.
    entry.bytes = Buffer.byteLength(JSON.stringify(entry.task)) + Buffer.byteLength(JSON.stringify(entry.answer));
    // Larger than the whole bound: not kept, and nothing else is removed for it.
    if (entry.bytes > this.limits.maxFinishedTaskBytes) return this.evictionListener?.([this.remove(entry)]);
    this.finished.set(entry.task.taskId, entry);
    this.finishedBytes += entry.bytes;
    if (this.finishedBytes <= this.limits.maxFinishedTaskBytes) return;
    const evicted: Task[] = [];
    for (const oldest of this.finished.values()) {
      if (this.finishedBytes <= this.limits.maxFinishedTaskBytes) break;
      evicted.push(this.remove(oldest));
    }
    this.evictionListener?.(evicted);
  }

  private leftWorking(entry: Entry): void {
    const n = (this.workingByOwner.get(entry.countedAs) ?? 1) - 1;
    if (n > 0) this.workingByOwner.set(entry.countedAs, n);
    else this.workingByOwner.delete(entry.countedAs);
    this.working--;
  }

  async list(owner: string, cursor?: string): Promise<TaskPage> {
    let after = 0;
    if (cursor !== undefined) {
      const seq = /^c(\d{1,15})$/.exec(cursor);
      if (!seq) throw new InvalidCursorError(cursor);
      after = Number(seq[1]);
    }
    const tasks: Task[] = [];
    let more = false;
    for (const entry of this.byOwner.get(owner)?.values() ?? []) {
      if (entry.seq <= after || this.expired(entry)) continue;
      if (tasks.length === this.limits.pageSize) {
        more = true;
        break;
      }
      tasks.push({ ...entry.task });
    }
    const last = tasks.at(-1);
    // The cursor is the last task's creation number, so it stays valid when that task expires.
    return more && last ? { tasks, nextCursor: `c${this.byId.get(last.taskId)!.seq}` } : { tasks };
  }

  async waitForTerminal(owner: string, taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    const entry = this.lookup(owner, taskId);
    if (!entry) return undefined;
    if (isTerminal(entry.task.status)) return record(entry);
    if (signal?.aborted) return undefined;
    return new Promise((resolve) => {
      const onAbort = () => {
        entry.waiters = entry.waiters.filter((w) => w !== wake);
        resolve(undefined);
      };
      const wake = (settled: Entry | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(settled && record(settled));
      };
      entry.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async count(owner: string): Promise<number> {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  async sweep(now = Date.now()): Promise<Task[]> {
    const gone: Task[] = [];
    for (const entry of this.byId.values()) if (this.expired(entry, now)) gone.push(this.remove(entry));
    return gone;
  }

  async dropOwner(owner: string): Promise<Task[]> {
    return [...(this.byOwner.get(owner)?.values() ?? [])].map((entry) => this.remove(entry));
  }

  async close(): Promise<void> {
    for (const entry of [...this.byId.values()]) this.remove(entry);
  }

  /** The owner's live entry; another owner's task is as absent as an unknown one. */
  private lookup(owner: string, taskId: string): Entry | undefined {
    const entry = this.byId.get(taskId);
    if (!entry || entry.owner !== owner || this.expired(entry)) return undefined;
    return entry;
  }

  private expired(entry: Entry, now = Date.now()): boolean {
    return now >= entry.expiresAt;
  }

  private remove(entry: Entry): Task {
    this.byId.delete(entry.task.taskId);
    if (this.finished.delete(entry.task.taskId)) this.finishedBytes -= entry.bytes;
    if (!isTerminal(entry.task.status)) this.leftWorking(entry); // a terminal one left at its settle
    const mine = this.byOwner.get(entry.owner);
    mine?.delete(entry.task.taskId);
    if (mine?.size === 0) this.byOwner.delete(entry.owner);
    for (const wake of entry.waiters.splice(0)) wake(undefined);
    return { ...entry.task };
  }
}

function record(entry: Entry): TaskRecord {
  const traced = entry.trace !== undefined ? { trace: entry.trace } : undefined;
  return entry.answer
    ? { task: { ...entry.task }, answer: entry.answer, ...traced }
    : { task: { ...entry.task }, ...traced };
}
